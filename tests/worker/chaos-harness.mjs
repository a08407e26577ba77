// Process control and client helpers for the reliability battery (issue 12):
// a `wrangler dev` spawner that can SIGKILL the workerd runtime under it, a
// seeded PRNG, an HTTP client that never throws, and percentiles.
//
// The spawner uses the same flags as tests/e2e/wrangler-dev.mjs (which stops
// politely with SIGTERM); this one adds a hard kill: every workerd process
// below wrangler is sent SIGKILL, then the whole process group, and the kill
// only returns once no process of that group is left.
import { spawn } from "node:child_process";
import { freePort } from "../e2e/wrangler-dev.mjs";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createHash } from "node:crypto";
import http from "node:http";

const STARTUP_TIMEOUT_MS = 60_000;

/** `{pid, ppid, pgrp, comm}` of every process, read from /proc. */
export function processTable() {
  const out = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let stat;
    try {
      stat = readFileSync(`/proc/${name}/stat`, "utf8");
    } catch {
      continue; // gone meanwhile
    }
    // `pid (comm) state ppid pgrp ...`; comm may hold spaces or parentheses.
    const close = stat.lastIndexOf(")");
    const comm = stat.slice(stat.indexOf("(") + 1, close);
    const [state, ppid, pgrp] = stat.slice(close + 2).split(" ");
    out.push({ pid: Number(name), ppid: Number(ppid), pgrp: Number(pgrp), comm, state });
  }
  return out;
}

/** Every live descendant of `root` (by the ppid walk), not `root` itself. */
export function descendants(root, table = processTable()) {
  const kids = new Map();
  for (const p of table) {
    if (!kids.has(p.ppid)) kids.set(p.ppid, []);
    kids.get(p.ppid).push(p);
  }
  const found = [];
  const stack = [root];
  while (stack.length) {
    for (const p of kids.get(stack.pop()) ?? []) {
      found.push(p);
      stack.push(p.pid);
    }
  }
  return found;
}

const alive = (p) => p.state !== "Z";

/**
 * Starts `wrangler dev --local` on free loopback ports with its state in
 * `persistDir` (kept: the caller owns it). `vars` become `--var K:V`.
 * Returns `{url, pid, kill(), stop(), workerdPids(), log}`.
 */
export async function spawnWrangler(root, { persistDir, vars = {}, args = [] }) {
  const [port, inspectorPort] = [await freePort(), await freePort()];
  const log = [];
  const child = spawn(
    join(root, "node_modules/.bin/wrangler"),
    ["dev", "--local", "--ip", "127.0.0.1", "--port", String(port), "--inspector-port", String(inspectorPort),
      "--persist-to", persistDir, "--show-interactive-dev-session=false",
      ...Object.entries(vars).flatMap(([k, v]) => ["--var", `${k}:${v}`]), ...args],
    {
      cwd: root,
      detached: true, // its own process group, so the whole tree can be killed
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", XDG_CONFIG_HOME: join(root, ".edgemem-dev", "xdg"), CI: "true" },
    },
  );
  child.stdout.on("data", (d) => log.push(String(d)));
  child.stderr.on("data", (d) => log.push(String(d)));
  const exited = new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r() : child.once("exit", r)));
  live.add(child.pid);
  const pgid = child.pid;
  const url = `http://127.0.0.1:${port}/`;

  const workerdPids = () => descendants(child.pid).filter((p) => p.comm === "workerd" && alive(p)).map((p) => p.pid);

  /** Waits until no live process is left in the group (or throws). */
  const reapGroup = async (seen) => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const table = processTable();
      const left = table.filter((p) => alive(p) && (p.pgrp === pgid || seen.has(p.pid)));
      if (left.length === 0) break;
      if (Date.now() > deadline) throw new Error(`processes of wrangler group ${pgid} survived: ${left.map((p) => `${p.pid}:${p.comm}`).join(", ")}`);
      for (const p of left) {
        try {
          process.kill(p.pid, "SIGKILL");
        } catch {}
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    await exited;
    live.delete(pgid);
  };

  /**
   * The crash: SIGKILL to every workerd under wrangler first (in flight
   * requests die with it), then SIGKILL to the whole process group.
   * Returns the workerd pids that were killed.
   */
  const kill = async () => {
    const tree = descendants(child.pid);
    const seen = new Set(tree.map((p) => p.pid));
    const workerd = tree.filter((p) => p.comm === "workerd" && alive(p)).map((p) => p.pid);
    for (const pid of workerd) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {}
    }
    try {
      process.kill(-pgid, "SIGKILL");
    } catch {}
    await reapGroup(seen);
    return workerd;
  };

  /** A polite stop (SIGTERM to the group), SIGKILL after 5 s. */
  const stop = async () => {
    if (!live.has(pgid)) return;
    const seen = new Set(descendants(child.pid).map((p) => p.pid));
    try {
      process.kill(-pgid, "SIGTERM");
    } catch {}
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
    await reapGroup(seen);
  };

  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    try {
      const r = await fetch(`${url}v1/health`, { signal: AbortSignal.timeout(2_000) });
      if (r.ok) return { url, pid: child.pid, kill, stop, workerdPids, log };
    } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  await kill();
  throw new Error(`wrangler dev did not come up on ${url}:\n${log.join("")}`);
}

// Process groups still running, killed if the test process exits early.
const live = new Set();
const killLive = () => {
  for (const pgid of live) {
    try {
      process.kill(-pgid, "SIGKILL");
    } catch {}
  }
};
process.on("exit", killLive);
for (const [sig, n] of [["SIGINT", 2], ["SIGTERM", 15]]) {
  process.once(sig, () => {
    killLive();
    process.exit(128 + n);
  });
}

/** A seeded PRNG (mulberry32): `rng()` in [0, 1), plus helpers. */
export function prng(seed) {
  let a = seed >>> 0;
  const rng = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  rng.int = (lo, hi) => lo + Math.floor(rng() * (hi - lo + 1)); // inclusive
  rng.pick = (xs) => xs[Math.floor(rng() * xs.length)];
  rng.chance = (p) => rng() < p;
  return rng;
}

/**
 * One HTTP call that never throws: `{status, json, text, ms}`, status 0 with
 * `error` when no response came (connection refused or reset, timeout).
 */
export async function call(base, method, path, body, { timeoutMs = 20_000 } = {}) {
  const t0 = performance.now();
  try {
    const r = await fetch(base + path.replace(/^\//, ""), {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await r.text();
    let json = null;
    try {
      json = JSON.parse(text);
    } catch {}
    return { status: r.status, json, text, ms: performance.now() - t0 };
  } catch (err) {
    return { status: 0, error: String(err?.cause?.code ?? err?.name ?? err), text: "", json: null, ms: performance.now() - t0 };
  }
}

/** Runs `fn` over `items` with at most `width` calls at once. */
export async function pool(items, width, fn) {
  const out = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i], i);
      }
    }),
  );
  return out;
}

/** The p-th percentile (nearest rank) of `xs`. */
export function percentile(xs, p) {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

/** The intent key the server derives: hex SHA-256 of `{"op","params"}` as canonical JSON. */
export function intentKey(op, params) {
  return createHash("sha256").update(JSON.stringify({ op, params })).digest("hex");
}

/** A decimal string with `scale` digits from integer minor units. */
export function fmtUnits(units, scale) {
  const neg = units < 0n;
  const s = (neg ? -units : units).toString().padStart(scale + 1, "0");
  return `${neg ? "-" : ""}${s.slice(0, s.length - scale)}.${s.slice(s.length - scale)}`;
}

/** Integer minor units from a decimal string at `scale`. */
export function parseUnits(s, scale) {
  const neg = s.startsWith("-");
  const [int, frac = ""] = (neg ? s.slice(1) : s).split(".");
  const v = BigInt(int) * 10n ** BigInt(scale) + BigInt((frac + "0".repeat(scale)).slice(0, scale) || "0");
  return neg ? -v : v;
}

/**
 * `call` over node:http with a given `http.Agent` (so the number of TCP
 * connections can be capped while every request is issued at once).
 */
export function httpCall(agent, base, method, path, body, { timeoutMs = 120_000 } = {}) {
  const t0 = performance.now();
  const data = body === undefined ? null : Buffer.from(JSON.stringify(body));
  return new Promise((resolve) => {
    const done = (r) => resolve({ ...r, ms: performance.now() - t0 });
    const req = http.request(
      new URL(path.replace(/^\//, ""), base),
      { method, agent, headers: data ? { "content-type": "application/json", "content-length": data.length } : {}, timeout: timeoutMs },
      (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let json = null;
          try {
            json = JSON.parse(text);
          } catch {}
          done({ status: res.statusCode, json, text });
        });
        res.on("error", (err) => done({ status: 0, error: String(err.code ?? err), json: null, text: "" }));
      },
    );
    req.on("timeout", () => req.destroy(Object.assign(new Error("timeout"), { code: "TIMEOUT" })));
    req.on("error", (err) => done({ status: 0, error: String(err.code ?? err), json: null, text: "" }));
    req.end(data ?? undefined);
  });
}
