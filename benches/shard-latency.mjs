// Search latency of one tenant spread over shards (issue 21), under
// `wrangler dev` on this machine: the same records in a tenant of an
// unsharded deployment and of deployments with EDGEMEM_SHARDS_INITIAL = 1,
// 4, 16 and 64; p50 and p99 of a user-scoped search and of a tenant-wide
// one (keyword and hybrid), then the tenant-wide search with one shard made
// slow (`EDGEMEM_TEST_SLOW_SHARD`, dev mode) under a
// deadline shorter than its delay, which must answer partial by then.
// Requests are sequential; every object runs in the one local workerd on
// this machine's cores, so a fan-out's calls queue for them: these are
// local figures, not Cloudflare's.
//
//   make build && node benches/shard-latency.mjs
//   SHARD_RECORDS=2000 SHARD_SEARCHES=100 SHARD_COUNTS=1,4 node benches/shard-latency.mjs
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startWranglerDev } from "../tests/e2e/wrangler-dev.mjs";
import { WORDS, next, sentence, pct } from "./shard-corpus.mjs";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const RECORDS = Number(process.env.SHARD_RECORDS ?? 4000);
const SEARCHES = Number(process.env.SHARD_SEARCHES ?? 200);
const COUNTS = (process.env.SHARD_COUNTS ?? "unsharded,1,4,16,64").split(",");
const USERS = 200;
const SLOW_MS = 600;
const DEADLINE_MS = 300;
const records = Array.from({ length: RECORDS }, (_, i) => ({ id: `r${i}`, user_id: `user-${next(USERS)}`, text: `${sentence(6 + next(6))} ${i}`, topics: [WORDS[next(5)]] }));
const queries = Array.from({ length: SEARCHES }, () => sentence(2));

async function post(url, body, { allow = [] } = {}) {
  const t = performance.now();
  const r = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const text = await r.text();
  const ms = performance.now() - t;
  if (!r.ok && !allow.includes(r.status)) throw new Error(`${url}: ${r.status} ${text}`);
  return { ms, status: r.status, json: JSON.parse(text) };
}

async function measure(label, vars) {
  const dir = mkdtempSync(join(tmpdir(), "edgemem-shard-bench-"));
  const dev = await startWranglerDev(ROOT, { persistDir: dir, vars });
  const base = `${dev.url}v1/long-term-memory`;
  const row = { label };
  try {
    const loadStart = performance.now();
    for (let i = 0; i < records.length; i += 100) await post(`${base}/?namespace=bench`, { memories: records.slice(i, i + 100) });
    row.load_s = (performance.now() - loadStart) / 1000;
    // Warm every object once.
    await post(`${base}/search?namespace=bench`, { text: "otter", search_mode: "keyword" });
    const run = async (body) => {
      const ms = [];
      let partial = 0;
      let missing = new Set();
      for (const q of queries) {
        const r = await post(`${base}/search?namespace=bench`, { text: q, limit: 10, ...body(q) });
        ms.push(r.ms);
        if (r.json.partial) {
          partial++;
          (r.json.missing_shards ?? []).forEach((s) => missing.add(s));
        }
      }
      return { p50: pct(ms, 50), p99: pct(ms, 99), partial, missing: [...missing] };
    };
    row.scoped = await run(() => ({ search_mode: "keyword", user_id: { eq: `user-${next(USERS)}` } }));
    row.wide_keyword = await run(() => ({ search_mode: "keyword" }));
    row.wide_hybrid = await run(() => ({ search_mode: "hybrid" }));
  } finally {
    await dev.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return row;
}

async function measureSlow(label, vars) {
  const dir = mkdtempSync(join(tmpdir(), "edgemem-shard-bench-"));
  const dev = await startWranglerDev(ROOT, { persistDir: dir, vars: { ...vars, EDGEMEM_TEST_SLOW_SHARD: `1:${SLOW_MS}` } });
  const base = `${dev.url}v1/long-term-memory`;
  try {
    for (let i = 0; i < records.length; i += 100) await post(`${base}/?namespace=bench`, { memories: records.slice(i, i + 100) });
    const ms = [];
    let partial = 0;
    let others = 0;
    let timeouts = 0;
    for (const q of queries.slice(0, Math.min(60, queries.length))) {
      const r = await post(`${base}/search?namespace=bench`, { text: q, limit: 10, search_mode: "keyword", deadline_ms: DEADLINE_MS }, { allow: [504] });
      ms.push(r.ms);
      if (r.status === 504) {
        timeouts++;
        continue;
      }
      if (r.json.partial) {
        partial++;
        if (!r.json.missing_shards.includes(1)) throw new Error(`missing ${JSON.stringify(r.json.missing_shards)}, without the slow shard 1`);
        others += r.json.missing_shards.length - 1;
      }
    }
    return { label, p50: pct(ms, 50), p99: pct(ms, 99), partial, others, timeouts, asked: ms.length };
  } finally {
    await dev.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

// Each row is printed as soon as it is measured.
const f = (x) => x.toFixed(1);
console.log(`${RECORDS} records of ${USERS} users, ${SEARCHES} searches per kind, sequential, wrangler dev on this machine (ms)\n`);
console.log("| deployment | load (s) | user-scoped p50 / p99 | tenant-wide keyword p50 / p99 | tenant-wide hybrid p50 / p99 |");
console.log("|---|---:|---:|---:|---:|");
for (const c of COUNTS) {
  const vars = c === "unsharded" ? {} : { EDGEMEM_SHARDS_INITIAL: c };
  const r = await measure(c === "unsharded" ? "unsharded (today)" : `${c} shard${c === "1" ? "" : "s"}`, vars);
  console.log(`| ${r.label} | ${f(r.load_s)} | ${f(r.scoped.p50)} / ${f(r.scoped.p99)} | ${f(r.wide_keyword.p50)} / ${f(r.wide_keyword.p99)} | ${f(r.wide_hybrid.p50)} / ${f(r.wide_hybrid.p99)} |`);
}
const slowCounts = COUNTS.filter((c) => Number(c) >= 4);
if (slowCounts.length) {
  console.log("\n| with a slow shard | p50 / p99 | partial answers | other shards late | 504 (root too late) |");
  console.log("|---|---:|---:|---:|---:|");
}
for (const c of slowCounts) {
  const s = await measureSlow(`${c} shards, shard 1 slow by ${SLOW_MS} ms, deadline ${DEADLINE_MS} ms`, { EDGEMEM_SHARDS_INITIAL: c });
  console.log(`| ${s.label} | ${f(s.p50)} / ${f(s.p99)} | ${s.partial} of ${s.asked} | ${s.others} | ${s.timeouts} |`);
}
