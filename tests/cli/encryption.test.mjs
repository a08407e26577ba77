// The CLI on encrypted memory (issue 20): `--encryption-key-file` or
// EDGEMEM_ENCRYPTION_KEY is a local store's passphrase, or a Worker
// tenant's key (sent as X-Edgemem-Encryption-Key). Without it the CLI exits
// 3 with key_required; with a wrong one 3 with decryption_failed.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startWranglerDev } from "../e2e/wrangler-dev.mjs";
import { FileStore, Memory } from "../../pkg/node.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CLI = join(ROOT, "pkg/cli.js");
const SENTINEL = "Tapir-Sentinel-3370";
const ENV = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("EDGEMEM_")));
const tmp = mkdtempSync(join(tmpdir(), "edgemem-cli-crypt-"));
let dev;

before(async () => {
  dev = await startWranglerDev(ROOT);
});

after(async () => {
  await dev?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

function run(args, env = {}) {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env: { ...ENV, ...env }, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === "number" ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

function errorCode(r) {
  return JSON.parse(r.stderr.trim().split("\n").at(-1)).error.code;
}

test("a local store under a passphrase: the key from a file or the environment, typed exits without it", async () => {
  const dir = join(tmp, "store");
  const passphrase = "the cli's passphrase";
  const memory = await Memory.open({ store: new FileStore(dir), encryptionKey: { passphrase } });
  await memory.putSession("sealed", { context: `${SENTINEL} on disk` });
  const keyFile = join(tmp, "passphrase.txt");
  writeFileSync(keyFile, `${passphrase}\n`);
  const listed = await run(["sessions", "ls", "--store", dir, "--encryption-key-file", keyFile, "--json"]);
  assert.equal(listed.code, 0, listed.stderr);
  assert.ok(JSON.parse(listed.stdout).sessions.includes("sealed"));
  const added = await run(["decisions", "add", "--store", dir, "--session", "sealed", "--kind", "decision", "--text", `${SENTINEL} chose`], { EDGEMEM_ENCRYPTION_KEY: passphrase });
  assert.equal(added.code, 0, added.stderr);
  const missing = await run(["sessions", "ls", "--store", dir, "--json"]);
  assert.equal(missing.code, 3, missing.stderr);
  assert.equal(errorCode(missing), "key_required");
  const wrong = await run(["sessions", "ls", "--store", dir, "--json"], { EDGEMEM_ENCRYPTION_KEY: "not the passphrase" });
  assert.equal(wrong.code, 3, wrong.stderr);
  assert.equal(errorCode(wrong), "decryption_failed");
  for (const name of readdirSync(dir, { recursive: true })) {
    const path = join(dir, String(name));
    try {
      assert.ok(!readFileSync(path).includes(Buffer.from(SENTINEL)), `${name} holds plaintext`);
    } catch (e) {
      if (e.code !== "EISDIR") throw e;
    }
  }
});

test("a Worker tenant's key goes with every request", async () => {
  const key = randomBytes(32).toString("base64url");
  const put = await fetch(`${dev.url}v1/working-memory/sealed?namespace=clicrypt`, {
    method: "PUT",
    headers: { "content-type": "application/json", "x-edgemem-encryption-key": key },
    body: JSON.stringify({ context: `${SENTINEL} in the Worker` }),
  });
  assert.equal(put.status, 200);
  const args = ["sessions", "ls", "--url", dev.url, "--namespace", "clicrypt", "--json"];
  const listed = await run(args, { EDGEMEM_ENCRYPTION_KEY: key });
  assert.equal(listed.code, 0, listed.stderr);
  assert.ok(JSON.parse(listed.stdout).sessions.includes("sealed"));
  const missing = await run(args);
  assert.equal(missing.code, 3, missing.stderr);
  assert.equal(errorCode(missing), "key_required");
  const malformed = await run(args, { EDGEMEM_ENCRYPTION_KEY: "short" });
  assert.equal(malformed.code, 1, malformed.stderr);
  assert.equal(errorCode(malformed), "invalid_input");
});
