// One tenant of 1,000,000 long-term records over shards (issue 21): how
// many shards keep each under a 64 MB wasm budget, and each shard's
// memory high-water, under `wrangler dev` on this machine.
//
// A local workerd runs every Durable Object of the class in one isolate,
// whose memory is capped near 128 MB: the whole million cannot be held at
// once here (on Cloudflare each object has an isolate of its own). So the
// harness does what it can measure:
// 1. It generates the million records (ids `r0`…, 20,000 users, two-to-
//    six-word sentences) and places each exactly as a sharded tenant does
//    (its user's bucket, `ShardMap::even(n)`), for n = 16, 32 and 64:
//    records per shard, smallest and largest.
// 2. For each n it loads the records of the largest shard into one object
//    (a fresh `wrangler dev`, `EDGEMEM_VECTOR_QUANTIZATION=int8`), searches
//    it, and reads the isolate's wasm memory from `X-Edgemem-Meter`
//    (`wasm_memory_bytes`: wasm memory never shrinks, so it is the high-
//    water mark). The same for the smallest shard.
//
//   make build && node benches/shard-scale.mjs
//   SCALE_RECORDS=200000 SCALE_SHARDS=4,8 node benches/shard-scale.mjs
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startWranglerDev } from "../tests/e2e/wrangler-dev.mjs";
import { WORDS, next, sentence } from "./shard-corpus.mjs";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const RECORDS = Number(process.env.SCALE_RECORDS ?? 1_000_000);
const USERS = Number(process.env.SCALE_USERS ?? 20_000);
const COUNTS = (process.env.SCALE_SHARDS ?? "16,32,64").split(",").map(Number);
const BUDGET = 64 * 1024 * 1024;
const BUCKETS = 4096;
const QUANT = process.env.SCALE_QUANTIZATION ?? "int8";

/** `core::shard::bucket_of`. */
function bucketOf(key) {
  const d = createHash("sha256").update("edgemem bucket v1\0").update(key).digest();
  return ((d[0] << 8) | d[1]) % BUCKETS;
}
/** The owner of a bucket under `ShardMap::even(n)`. */
function owner(bucket, n) {
  let o = 0;
  for (let i = 0; i < n; i++) if (Math.floor((i * BUCKETS) / n) <= bucket) o = i;
  return o;
}

// Users' buckets once (the records of one user share theirs).
const userBucket = Array.from({ length: USERS }, (_, u) => bucketOf(`user-${u}`));
const userOf = new Uint32Array(RECORDS);
for (let i = 0; i < RECORDS; i++) userOf[i] = next(USERS);
const record = (i) => ({ id: `r${i}`, user_id: `user-${userOf[i]}`, text: `${sentence(2 + (i % 5))} ${i}`, topics: [WORDS[i % 5]] });

async function post(url, body) {
  const r = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const text = await r.text();
  if (!r.ok) throw new Error(`${url}: ${r.status} ${text.slice(0, 300)}`);
  return { json: JSON.parse(text), meter: Object.fromEntries((r.headers.get("x-edgemem-meter") ?? "").split(";").filter(Boolean).map((kv) => kv.trim().split("="))) };
}

/** Loads `ids` into one object and answers its wasm memory high-water. */
async function highWater(ids) {
  const dir = mkdtempSync(join(tmpdir(), "edgemem-shard-scale-"));
  // The storage quota at its ceiling (SNAPSHOT_BYTES_MAX, 96 MiB; the
  // default is 64 MiB), so a large shard stops at the ceiling, not before.
  const dev = await startWranglerDev(ROOT, { persistDir: dir, vars: { EDGEMEM_VECTOR_QUANTIZATION: QUANT, EDGEMEM_QUOTA_BYTES: String(96 * 1024 * 1024) } });
  const base = `${dev.url}v1/long-term-memory`;
  let peak = 0;
  let loaded = 0;
  let failed = null;
  const t0 = performance.now();
  try {
    for (let i = 0; i < ids.length; i += 200) {
      const r = await post(`${base}/?namespace=scale`, { memories: ids.slice(i, i + 200).map(record), deduplicate: false });
      peak = Math.max(peak, Number(r.meter.wasm_memory_bytes ?? 0));
      loaded = Math.min(ids.length, i + 200);
    }
    for (let q = 0; q < 50; q++) {
      const r = await post(`${base}/search?namespace=scale`, { text: sentence(2), search_mode: "hybrid", limit: 10 });
      peak = Math.max(peak, Number(r.meter.wasm_memory_bytes ?? 0));
    }
    const stats = await (await fetch(`${dev.url}v1/stats?namespace=scale`)).json();
    if (stats.long_term_memories !== ids.length) throw new Error(`held ${stats.long_term_memories} of ${ids.length}`);
  } catch (e) {
    // The local runtime restarts an isolate past its memory limit: say so.
    failed = `${e.message.slice(0, 160)} (after ${loaded} records)`;
  } finally {
    await dev.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return { peak, loadS: (performance.now() - t0) / 1000, failed };
}

const rows = [];
for (const n of COUNTS) {
  const per = Array.from({ length: n }, () => []);
  for (let i = 0; i < RECORDS; i++) per[owner(userBucket[userOf[i]], n)].push(i);
  const sizes = per.map((p) => p.length);
  const largest = sizes.indexOf(Math.max(...sizes));
  const smallest = sizes.indexOf(Math.min(...sizes));
  const big = await highWater(per[largest]);
  const small = await highWater(per[smallest]);
  const row = { shards: n, min: sizes[smallest], mean: RECORDS / n, max: sizes[largest], peakMax: big.peak, peakMin: small.peak, loadS: big.loadS, failed: big.failed ?? small.failed };
  rows.push(row);
  console.error(JSON.stringify(row));
}
// The isolate with one record: the Worker, its embedder and an empty-ish store.
const baseline = await highWater([0]);
const mb = (b) => (b / 1024 / 1024).toFixed(1);
console.log(`${RECORDS.toLocaleString("en")} records of ${USERS.toLocaleString("en")} users, 384-d ${QUANT} vectors; an object holding one record: ${mb(baseline.peak)} MB`);
console.log("| shards | records per shard (min / mean / max) | high-water, smallest shard | high-water, largest shard | under 64 MB | load of the largest (s) |");
console.log("|---:|---:|---:|---:|:---:|---:|");
for (const r of rows) console.log(`| ${r.shards} | ${r.min.toLocaleString("en")} / ${Math.round(r.mean).toLocaleString("en")} / ${r.max.toLocaleString("en")} | ${mb(r.peakMin)} MB | ${mb(r.peakMax)} MB | ${r.failed ? `no: ${r.failed}` : r.peakMax <= BUDGET ? "yes" : "no"} | ${r.loadS.toFixed(0)} |`);
