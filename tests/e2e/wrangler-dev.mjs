// Starts `wrangler dev` exactly as `make demo` does (same wrangler.toml, local
// persistence), on free loopback ports, and stops it (whole process group).
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

const STARTUP_TIMEOUT_MS = 60_000;

/** A free loopback port. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/**
 * `vars`: extra Worker variables (`--var NAME:VALUE`), for benchmarks and
 * tests. Without `EDGEMEM_ADMIN_TOKEN` among them it runs in local dev mode
 * (auth off), as `make demo` does. `persistDir`: keep state there (and leave
 * it) across a restart; default a fresh directory removed on stop.
 */
export async function startWranglerDev(root, { vars: given = {}, persistDir: keep } = {}) {
  const vars = "EDGEMEM_ADMIN_TOKEN" in given ? given : { EDGEMEM_DEV_MODE: "1", ...given };
  const [port, inspectorPort] = [await freePort(), await freePort()];
  const persistDir = keep ?? (await mkdtemp(join(tmpdir(), "edgemem-wrangler-")));
  const log = [];
  const child = spawn(
    join(root, "node_modules/.bin/wrangler"),
    ["dev", "--local", "--ip", "127.0.0.1", "--port", String(port), "--inspector-port", String(inspectorPort),
      "--persist-to", persistDir, "--show-interactive-dev-session=false",
      ...Object.entries(vars).flatMap(([k, v]) => ["--var", `${k}:${v}`])],
    {
      cwd: root,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", XDG_CONFIG_HOME: join(root, ".edgemem-dev", "xdg"), CI: "true" },
    },
  );
  child.stdout.on("data", (d) => log.push(String(d)));
  child.stderr.on("data", (d) => log.push(String(d)));
  const url = `http://127.0.0.1:${port}/`;
  const stop = async () => {
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {}
    await new Promise((r) => (child.exitCode !== null ? r() : child.once("exit", r)));
    if (!keep) await rm(persistDir, { recursive: true, force: true });
  };
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    try {
      const r = await fetch(`${url}v1/health`);
      if (r.ok) return { url, stop };
    } catch {}
    await new Promise((r) => setTimeout(r, 250));
  }
  await stop();
  throw new Error(`wrangler dev did not come up on ${url}:\n${log.join("")}`);
}

/** Every file under `dir` (a persisted state: SQLite databases, WAL files, KV blobs) whose bytes hold `text`. */
export function filesHolding(dir, text) {
  const needle = Buffer.from(text);
  const walk = (d) => readdirSync(d).flatMap((name) => {
    const p = join(d, name);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
  return walk(dir).filter((f) => readFileSync(f).includes(needle));
}
