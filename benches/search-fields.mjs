// What a keyword query costs with the whole record per hit against only the
// fields asked for (issue 16, point 4), on the rustdocs passages, in Node on
// the built package: `memory.longTerm.search({ text, mode: "keyword", limit })`
// with and without `fields: ["id", "score"]`, same queries, one run.
//
//   make pkg && node benches/search-fields.mjs
//   SEARCH_PASSAGES=12748 SEARCH_QUERIES=1000 node benches/search-fields.mjs
import { performance } from "node:perf_hooks";
import { Memory, MemoryStore } from "edgemem";
import { loadJsonl } from "./ltm/common.mjs";

const PASSAGES = Number(process.env.SEARCH_PASSAGES ?? 5_000);
const QUERIES = Number(process.env.SEARCH_QUERIES ?? 500);

const passages = loadJsonl("passages.jsonl").slice(0, PASSAGES);
const queries = loadJsonl("queries.jsonl").slice(0, QUERIES).map((q) => q.text ?? q.query);
const memory = await Memory.open({ store: new MemoryStore() });
// Unit vectors keep the build cheap: only keyword search is timed.
const unit = new Float32Array(384).fill(1 / Math.sqrt(384));
for (let i = 0; i < passages.length; i += 500) {
  const batch = passages.slice(i, i + 500);
  await memory.longTerm.create(batch.map((p) => ({ id: `p${p.row}`, text: p.text })), { vectors: batch.map(() => unit), deduplicate: false });
}

async function time(limit, fields) {
  const t = [];
  for (const text of queries) {
    const t0 = performance.now();
    await memory.longTerm.search({ text, mode: "keyword", limit, recencyBoost: false, ...(fields ? { fields } : {}) });
    t.push(performance.now() - t0);
  }
  t.sort((a, b) => a - b);
  return { p50: t[Math.floor(t.length / 2)], mean: t.reduce((a, b) => a + b, 0) / t.length };
}

// Warm-up, then the measured runs.
await time(10);
const rows = [];
for (const limit of [1, 10, 100]) {
  const full = await time(limit);
  const lean = await time(limit, ["id", "score"]);
  rows.push({ limit, full, lean });
}
console.log(`keyword search over ${passages.length} rustdocs passages, ${queries.length} queries, Node ${process.version}`);
console.log("| limit | whole records p50 ms | `fields: [\"id\", \"score\"]` p50 ms | whole / lean |");
console.log("|---:|---:|---:|---:|");
for (const r of rows) console.log(`| ${r.limit} | ${r.full.p50.toFixed(3)} | ${r.lean.p50.toFixed(3)} | ${(r.full.p50 / r.lean.p50).toFixed(2)} |`);
