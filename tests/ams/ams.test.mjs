// Redis Agent Memory Server's own Python client (agent-memory-client 0.14.0)
// against edgemem's Worker: tests/ams/client_test.py does the talking; this
// file prepares its virtualenv, serves the Worker and reports each check.
//
//   node --test tests/ams/                      # needs `make build`
//   AMS_PART=working node --test tests/ams/     # working | long-term | summary-views | all
//   EDGEMEM_AMS_URL=http://127.0.0.1:8787/ node --test tests/ams/   # a running `make demo`
//   AMS_MODES=sharded node --test tests/ams/    # unsharded | sharded | both (default)
//
// Sharded: the same client against a deployment with
// `EDGEMEM_SHARDS_INITIAL=4` (each tenant spread over four Durable Objects),
// parts AMS_SHARDED_PART (default: AMS_PART's).
//
// Without EDGEMEM_AMS_URL it starts `wrangler dev` as `make demo` does, on a
// free loopback port with a throwaway persistence directory, and stops it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { startWranglerDev } from "../e2e/wrangler-dev.mjs";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const VENV = join(ROOT, "target", "ams-venv");
const VENV_PYTHON = join(VENV, "bin", "python");
const CLIENT = "agent-memory-client";
const CLIENT_VERSION = "0.14.0";
// Written once the pinned client is installed, so a warm run skips pip.
const MARKER = join(VENV, `.edgemem-${CLIENT}-${CLIENT_VERSION}`);
const SCRIPT = join(ROOT, "tests", "ams", "client_test.py");
const PART = process.env.AMS_PART ?? "all";
const GIVEN_URL = process.env.EDGEMEM_AMS_URL;

const PIP_TIMEOUT_MS = 300_000;
const SCRIPT_TIMEOUT_MS = 180_000;
const TEST_TIMEOUT_MS = PIP_TIMEOUT_MS + SCRIPT_TIMEOUT_MS + 90_000;

/** The first interpreter that can make a virtualenv (Debian's needs python3-venv). */
async function basePython() {
  for (const py of ["python3", "/usr/bin/python3"]) {
    try {
      await run(py, ["-c", "import ensurepip, venv"]);
      return py;
    } catch {}
  }
  throw new Error("no python3 with venv and ensurepip; run `make setup` (it installs python3-venv)");
}

/** Creates target/ams-venv with the pinned client unless it is already there. */
async function ensureVenv() {
  if (existsSync(MARKER) && existsSync(VENV_PYTHON)) return "warm";
  if (!existsSync(VENV_PYTHON)) {
    // A half-made venv (interrupted run) is rebuilt from scratch.
    await rm(VENV, { recursive: true, force: true });
    await run(await basePython(), ["-m", "venv", VENV], { timeout: PIP_TIMEOUT_MS });
  }
  await run(
    VENV_PYTHON,
    ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", `${CLIENT}==${CLIENT_VERSION}`],
    { timeout: PIP_TIMEOUT_MS, maxBuffer: 16 << 20 },
  );
  await run(VENV_PYTHON, ["-c", `import agent_memory_client as c; assert c.__version__ == "${CLIENT_VERSION}", c.__version__`]);
  await writeFile(MARKER, "");
  return "cold";
}

const MODES = (process.env.AMS_MODES ?? "unsharded,sharded").split(",");
const SHARDED_PART = process.env.AMS_SHARDED_PART ?? PART;

/** Runs the Python checks; resolves with their output and exit code. */
function runScript(url, key, part) {
  return new Promise((resolve, reject) => {
    const child = spawn(VENV_PYTHON, [SCRIPT, "--url", url, "--part", part, ...(key ? ["--bearer-token", key] : [])], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1", PYTHONUNBUFFERED: "1" },
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), SCRIPT_TIMEOUT_MS);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ out, err, code, signal });
    });
  });
}

/** `ok <name>` / `FAIL <name>: <reason>` lines, each with its indented detail lines. */
function parseChecks(out) {
  const checks = [];
  for (const line of out.split("\n")) {
    const ok = /^ok (.+)$/.exec(line);
    const fail = /^FAIL (.+?): (.*)$/.exec(line);
    if (ok) checks.push({ name: ok[1], ok: true, detail: [] });
    else if (fail) checks.push({ name: fail[1], ok: false, reason: fail[2], detail: [] });
    else if (line.startsWith("    ") && checks.length) checks.at(-1).detail.push(line.slice(4));
  }
  return checks;
}

for (const mode of GIVEN_URL ? ["given"] : MODES) {
  const sharded = mode === "sharded";
  const part = sharded ? SHARDED_PART : PART;
  const vars = sharded ? { EDGEMEM_SHARDS_INITIAL: "4" } : {};
  test(`agent-memory-client ${CLIENT_VERSION} against the Worker (${mode}: ${part})`, { timeout: TEST_TIMEOUT_MS }, (t) => runMode(t, vars, part));
}

async function runMode(t, extraVars, part) {
  const started = performance.now();
  if (!GIVEN_URL) {
    for (const built of [join(ROOT, "target", "site", "index.html"), join(ROOT, "build", "index.js")]) {
      if (!existsSync(built)) throw new Error(`${built} does not exist; run \`make build\` first`);
    }
  }
  const venvStart = performance.now();
  const venvState = await ensureVenv();
  t.diagnostic(`virtualenv ${venvState}: ${((performance.now() - venvStart) / 1000).toFixed(1)} s`);

  // Auth enforced as deployed: the client works with a tenant key covering
  // the namespaces it uses (`ams-*`), made by the admin.
  const admin = `admin-${randomUUID()}`;
  const server = GIVEN_URL ? null : await startWranglerDev(ROOT, { vars: { EDGEMEM_ADMIN_TOKEN: admin, ...extraVars } });
  let result;
  try {
    let key = process.env.EDGEMEM_KEY;
    if (server) {
      const res = await fetch(`${server.url}v1/admin/keys`, {
        method: "POST",
        headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
        body: JSON.stringify({ namespace_prefix: "ams-", scopes: ["read", "write"], rate: { per_second: 1000, burst: 2000 } }),
      });
      assert.equal(res.status, 200, await res.clone().text());
      key = (await res.json()).key;
      const refused = await fetch(`${server.url}v1/working-memory/`);
      assert.equal(refused.status, 401, "without the key the Worker refuses the client");
    }
    result = await runScript(GIVEN_URL ?? server.url, key, part);
  } finally {
    await server?.stop();
  }
  t.diagnostic(`total: ${((performance.now() - started) / 1000).toFixed(1)} s`);

  const checks = parseChecks(result.out);
  for (const c of checks) {
    await t.test(c.name, () => {
      if (!c.ok) assert.fail([c.reason, ...c.detail].join("\n"));
    });
  }
  const failed = checks.filter((c) => !c.ok).length;
  assert.ok(checks.length > 0, `client_test.py reported no checks (exit ${result.code}):\n${result.out}\n${result.err}`);
  assert.equal(
    result.code === 0,
    failed === 0,
    `exit ${result.code ?? result.signal} disagrees with ${failed} failed checks:\n${result.err}`,
  );
}
