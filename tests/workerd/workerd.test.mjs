// The npm package inside workerd: a consumer Worker imports "edgemem", wrangler
// bundles it (the `workerd` export condition, the .wasm as a compiled module),
// and Miniflare runs it with a Durable Object as the store, across a restart.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";

const root = fileURLToPath(new URL("../../", import.meta.url));
const outdir = join(root, "target", "workerd-consumer");
const persist = mkdtempSync(join(tmpdir(), "edgemem-workerd-"));
test.after(() => rmSync(persist, { recursive: true, force: true }));

function bundle() {
  rmSync(outdir, { recursive: true, force: true });
  execFileSync(join(root, "node_modules/.bin/wrangler"), ["deploy", "--dry-run", "--config", "tests/workerd/wrangler.toml", "--outdir", outdir], {
    cwd: root,
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", XDG_CONFIG_HOME: join(root, ".edgemem-dev", "xdg") },
  });
  assert.ok(readdirSync(outdir).some((f) => f.endsWith(".wasm")), "the wasm is a separate module, not inlined");
}

async function start() {
  const mf = new Miniflare({
    modules: true,
    scriptPath: join(outdir, "worker.js"),
    modulesRules: [
      { type: "CompiledWasm", include: ["**/*.wasm"], fallthrough: true },
      { type: "Data", include: ["**/*.bin"], fallthrough: true },
    ],
    compatibilityDate: "2026-04-01",
    durableObjects: { AGENT: { className: "Agent", useSQLite: true } },
    durableObjectsPersist: persist,
    host: "127.0.0.1",
  });
  await mf.ready;
  return mf;
}

test("import { Memory } from 'edgemem' works in workerd and persists in a Durable Object", async () => {
  bundle();
  let mf = await start();
  try {
    for (const content of ["one", "two", "three", "four", "five", "six"]) {
      const r = await mf.dispatchFetch("http://127.0.0.1/", { method: "POST", body: JSON.stringify({ content }) });
      assert.equal(r.status, 200, await r.text());
    }
    const bad = await mf.dispatchFetch("http://127.0.0.1/bad");
    assert.equal(bad.status, 422);
    assert.deepEqual(await bad.json(), { code: "invalid_input" });
  } finally {
    await mf.dispose();
  }
  mf = await start();
  try {
    const body = await (await mf.dispatchFetch("http://127.0.0.1/")).json();
    assert.match(body.version, /^\d+\.\d+\.\d+/);
    assert.deepEqual(body.messages, ["one", "two", "three", "four", "five", "six"]);
    assert.equal(body.tokens, 6, "cl100k_base: one token per word");
  } finally {
    await mf.dispose();
  }
});
