// Where a user-scoped search's p99 goes at one shard (issue 21's goal: p50
// and p99 at most 15 ms locally), under `wrangler dev` on this machine:
// 4,000 records of 200 users loaded, SETTLE_MS of quiet (default 12,000),
// then TAIL_REQUESTS (default 1,000) sequential requests of each kind:
// `GET /v1/health` (the front Worker alone, no object), a by-id GET of a
// record (the id directory, then the shard) and a user-scoped keyword
// search (one shard), each with its p50, p90, p99 and its slowest
// requests (when in the run, and the meter's header: rows read, calls).
//
//   make build && node benches/shard-tail.mjs
//   TAIL_UNSHARDED=1 node benches/shard-tail.mjs    (one unsharded object)
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startWranglerDev } from "../tests/e2e/wrangler-dev.mjs";
import { WORDS, next, sentence, pct } from "./shard-corpus.mjs";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const N = Number(process.env.TAIL_REQUESTS ?? 1000);
const SETTLE_MS = Number(process.env.SETTLE_MS ?? 12_000);
const USERS = 200;
const records = Array.from({ length: 4000 }, (_, i) => ({ id: `r${i}`, user_id: `user-${next(USERS)}`, text: `${sentence(6 + next(6))} ${i}`, topics: [WORDS[next(5)]] }));
const vars = process.env.TAIL_UNSHARDED ? {} : { EDGEMEM_SHARDS_INITIAL: "1" };
const dir = mkdtempSync(join(tmpdir(), "edgemem-tail-"));
const dev = await startWranglerDev(ROOT, { persistDir: dir, vars });
const base = `${dev.url}v1/long-term-memory`;

async function send(url, body) {
  const t = performance.now();
  const r = await fetch(url, { method: body ? "POST" : "GET", headers: { "content-type": "application/json" }, body: body ? JSON.stringify(body) : undefined });
  await r.text();
  if (!r.ok) throw new Error(`${url}: ${r.status}`);
  return { ms: performance.now() - t, meter: r.headers.get("x-edgemem-meter") ?? "" };
}

const kinds = {
  "front alone (GET /v1/health)": () => send(`${dev.url}v1/health`),
  "by-id GET": (i) => send(`${base}/r${i % records.length}?namespace=bench`),
  "user-scoped keyword search": () => send(`${base}/search?namespace=bench`, { text: sentence(2), limit: 10, search_mode: "keyword", user_id: { eq: `user-${next(USERS)}` } }),
};
try {
  for (let i = 0; i < records.length; i += 100) await send(`${base}/?namespace=bench`, { memories: records.slice(i, i + 100) });
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  // The store opened again after the quiet: not counted.
  await send(`${base}/r0?namespace=bench`);
  console.log(`${process.env.TAIL_UNSHARDED ? "one unsharded object" : "1 shard"}, ${N} sequential requests of each kind, wrangler dev on this machine (ms)\n`);
  console.log("| request | p50 | p90 | p99 | max | slowest (request number: ms) |");
  console.log("|---|---:|---:|---:|---:|---|");
  for (const [label, run] of Object.entries(kinds)) {
    const rows = [];
    for (let i = 0; i < N; i++) rows.push({ i, ...(await run(i)) });
    const ms = rows.map((r) => r.ms);
    const slowest = rows.slice().sort((a, b) => b.ms - a.ms).slice(0, 5);
    console.log(`| ${label} | ${pct(ms, 50).toFixed(1)} | ${pct(ms, 90).toFixed(1)} | ${pct(ms, 99).toFixed(1)} | ${Math.max(...ms).toFixed(1)} | ${slowest.map((r) => `#${r.i}: ${r.ms.toFixed(0)}`).join(", ")} |`);
    const sql = slowest.filter((r) => /rows_read=[1-9]/.test(r.meter)).length;
    if (sql) console.log(`|  | | | | | ${sql} of the 5 slowest read rows |`);
  }
} finally {
  await dev.stop();
  rmSync(dir, { recursive: true, force: true });
}
