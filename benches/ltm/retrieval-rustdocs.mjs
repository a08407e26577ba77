// Retrieval benchmark: keyword, semantic and hybrid search quality and speed
// on the labelled rustdocs queries (nDCG@10 with binary relevance, recall@10,
// MRR@10; overall and per query kind), edgemem against minisearch 7.2.0,
// wink-bm25-text-search 3.1.2, flexsearch 0.8.212, @orama/orama 3.1.18, exact
// MiniLM vector search and an RRF of minisearch + vectors. Only passage
// `text` is indexed (README "Fair use": titles and headings hold answers).
// edgemem's keyword, semantic and hybrid modes run twice: with whole records
// per hit and with `fields: ["id", "score"]` (lean answers, issue 16); the
// last lines compare edgemem keyword q/s with minisearch's (goal: ≥ 150× at
// equal nDCG@10).
//
//   (cd benches/ltm && npm ci) && make pkg && node benches/ltm/retrieval.mjs
//
// This is the rustdocs runner of retrieval.mjs (the default `--set rustdocs`);
// data from sets.mjs. `--set convbench` runs retrieval-convbench.mjs instead.
//
// Environment: LTM_QUERY_STRIDE (default 8) evaluates every Nth query (rows
// 0, N, 2N, …: all three kinds in proportion), since minisearch answers under
// 10 queries/s here; LTM_QUERY_STRIDE=1 runs all 3,209. Orama's full-text and
// hybrid modes answer about 2 queries/s, so they run on every LTM_SLOW_STRIDE-th
// row (default 32, a subset of the main set), and a second table compares
// every method on that subset.
// LTM_ONLY=name,name (substring match) runs a subset; EDGEMEM_PKG and LTM_CLOCK as in ann.mjs.
import { createRequire } from "node:module";
import * as C from "./common.mjs";
import { edgememRetrieval } from "./retrieval-edgemem.mjs";
import { loadSet } from "./sets.mjs";

const require = createRequire(import.meta.url);
const { DIM, log, now } = C;
const K = 10;
const RRF_K = 60;
const RRF_DEPTH = 100;
const STRIDE = Math.max(1, Number(process.env.LTM_QUERY_STRIDE ?? 8));
const SLOW_STRIDE = Math.max(1, Number(process.env.LTM_SLOW_STRIDE ?? 32));
const ONLY = (process.env.LTM_ONLY ?? "").split(",").filter(Boolean);
const KINDS = ["error_code", "std_item", "heading"];

const { passages, allQueries, vectors } = loadSet("rustdocs");
const queries = allQueries.filter((q) => q.row % STRIDE === 0);
const inSlowSet = (row) => row % SLOW_STRIDE === 0;
const slowQueries = queries.filter((q) => inSlowSet(q.row));
const n = passages.length;

// ---------------------------------------------------------------- metrics

function score(rows, relevant) {
  const rel = new Set(relevant);
  let dcg = 0;
  let hits = 0;
  let rr = 0;
  const seen = new Set();
  for (let i = 0, rank = 0; i < rows.length && rank < K; i++) {
    const r = rows[i];
    if (seen.has(r)) continue; // a duplicate in a result list earns nothing
    seen.add(r);
    if (rel.has(r)) {
      dcg += 1 / Math.log2(rank + 2);
      hits++;
      if (rr === 0) rr = 1 / (rank + 1);
    }
    rank++;
  }
  let ideal = 0;
  for (let i = 0; i < Math.min(K, rel.size); i++) ideal += 1 / Math.log2(i + 2);
  return { ndcg: dcg / ideal, recall: hits / rel.size, mrr: rr };
}

function summarize(perQuery) {
  const mean = (list, key) => list.reduce((a, x) => a + x[key], 0) / (list.length || 1);
  const out = { all: { n: perQuery.length, ndcg: mean(perQuery, "ndcg"), recall: mean(perQuery, "recall"), mrr: mean(perQuery, "mrr") } };
  for (const kind of KINDS) {
    const list = perQuery.filter((x) => x.kind === kind);
    out[kind] = { n: list.length, ndcg: mean(list, "ndcg"), recall: mean(list, "recall"), mrr: mean(list, "mrr") };
  }
  return out;
}

/**
 * Runs `search(q) -> rows` (may be async) over the evaluation queries, or the
 * slow subset; times only the searches.
 */
async function evaluate(name, search, { slow = false } = {}) {
  const list = slow ? slowQueries : queries;
  const perQuery = [];
  const rankings = [];
  let seconds = 0;
  for (let i = 0; i < list.length; i++) {
    const q = list[i];
    const t0 = now();
    let rows = search(q);
    if (rows && typeof rows.then === "function") rows = await rows;
    seconds += (now() - t0) / 1000;
    rows = Array.from(rows);
    rankings.push(rows);
    perQuery.push({ row: q.row, kind: q.kind, ...score(rows, q.relevant_rows) });
    if ((i + 1) % 100 === 0) log(`${name}: ${i + 1}/${list.length} queries, ${((seconds / (i + 1)) * 1000).toFixed(1)} ms each`);
  }
  return { slow, quality: summarize(perQuery), qps: list.length / seconds, seconds, rankings, perQuery };
}

// ---------------------------------------------------------------- methods

async function minisearch() {
  const { default: MiniSearch } = await import("minisearch");
  const t0 = now();
  const index = new MiniSearch({ fields: ["text"], idField: "row" });
  index.addAll(passages.map((p) => ({ row: p.row, text: p.text })));
  const index_s = (now() - t0) / 1000;
  log(`minisearch: indexed in ${index_s.toFixed(1)} s`);
  // Default options (OR of the terms, BM25+); RRF below reuses this ranking.
  const r = await evaluate("minisearch", (q) => index.search(q.text).slice(0, RRF_DEPTH).map((h) => h.id));
  return { name: "minisearch 7.2.0", mode: "keyword", index_s, ...r };
}

async function wink() {
  const bm25 = require("wink-bm25-text-search");
  const nlp = require("wink-nlp-utils");
  const t0 = now();
  const engine = bm25();
  engine.defineConfig({ fldWeights: { text: 1 } });
  engine.definePrepTasks(C.winkPrepTasks(nlp));
  for (const p of passages) engine.addDoc({ text: p.text }, p.row);
  engine.consolidate();
  const index_s = (now() - t0) / 1000;
  log(`wink-bm25: indexed in ${index_s.toFixed(1)} s`);
  const r = await evaluate("wink-bm25", (q) => engine.search(q.text, K).map(([id]) => Number(id)));
  return { name: "wink-bm25-text-search 3.1.2 (+ wink-nlp-utils 2.1.0)", mode: "keyword", index_s, ...r };
}

async function flexsearch() {
  const { Index } = await import("flexsearch");
  const t0 = now();
  const index = new Index();
  for (const p of passages) index.add(p.row, p.text);
  const index_s = (now() - t0) / 1000;
  log(`flexsearch: indexed in ${index_s.toFixed(1)} s`);
  // Without `suggest`, every query term must match: long queries find nothing.
  const strict = await evaluate("flexsearch", (q) => index.search(q.text, { limit: K }));
  const suggest = await evaluate("flexsearch suggest", (q) => index.search(q.text, { limit: K, suggest: true }));
  return [
    { name: "flexsearch 0.8.212 (suggest)", mode: "keyword", index_s, ...suggest },
    { name: "flexsearch 0.8.212 (default: all terms)", mode: "keyword", index_s, ...strict },
  ];
}

async function orama() {
  const { create, insertMultiple, search } = await import("@orama/orama");
  const t0 = now();
  const db = create({ schema: { text: "string", v: `vector[${DIM}]` } });
  await insertMultiple(db, passages.map((p) => ({ id: String(p.row), text: p.text, v: Array.from(vectors.row(p.row)) })), 1000);
  const index_s = (now() - t0) / 1000;
  log(`orama: indexed in ${index_s.toFixed(1)} s`);
  const ids = (res) => res.hits.map((h) => Number(h.id));
  // similarity 0: the default 0.8 would drop most true neighbours here.
  const vec = (q) => ({ value: vectors.query(q.row), property: "v" });
  const out = [];
  // Defaults: each query token also matches every indexed word it prefixes
  // (radix-tree find with exact: false), which is why it is slow; `exact:
  // true` would instead keep only documents holding the whole query string.
  const fulltext = await evaluate("orama bm25", async (q) => ids(await search(db, { term: q.text, properties: ["text"], limit: K })), { slow: true });
  out.push({ name: "@orama/orama 3.1.18 (BM25)", mode: "keyword", index_s, ...fulltext });
  const vector = await evaluate("orama vector", async (q) => ids(await search(db, { mode: "vector", vector: vec(q), similarity: 0, limit: K })));
  out.push({ name: "@orama/orama 3.1.18 (vector)", mode: "semantic", index_s, ...vector });
  const hybrid = await evaluate("orama hybrid", async (q) =>
    ids(await search(db, { mode: "hybrid", term: q.text, properties: ["text"], vector: vec(q), similarity: 0, limit: K })),
    { slow: true },
  );
  out.push({ name: "@orama/orama 3.1.18 (hybrid, default weights)", mode: "hybrid", index_s, ...hybrid });
  return out;
}

function exactVector() {
  const { X } = vectors;
  const scores = new Float32Array(n);
  const top = (q, depth) => {
    for (let r = 0, o = 0; r < n; r++, o += DIM) {
      let s = 0;
      for (let j = 0; j < DIM; j++) s += q[j] * X[o + j];
      scores[r] = s;
    }
    const order = Array.from({ length: n }, (_, i) => i);
    // A full sort keeps the code obvious; depth 100 is needed for RRF.
    return order.sort((a, b) => scores[b] - scores[a] || a - b).slice(0, depth);
  };
  return evaluate("exact vector", (q) => top(vectors.query(q.row), RRF_DEPTH)).then((r) => ({
    name: "exact vector search (MiniLM-L6, plain JS)",
    mode: "semantic",
    index_s: 0,
    ...r,
  }));
}

/** Reciprocal-rank fusion of two stored rankings, k = 60, depth 100 each. */
function rrf(name, a, b) {
  const perQuery = [];
  const rankings = [];
  for (let i = 0; i < queries.length; i++) {
    const fused = new Map();
    for (const list of [a.rankings[i], b.rankings[i]]) {
      list.slice(0, RRF_DEPTH).forEach((row, rank) => fused.set(row, (fused.get(row) ?? 0) + 1 / (RRF_K + rank + 1)));
    }
    const rows = [...fused.entries()].sort((x, y) => y[1] - x[1] || x[0] - y[0]).map(([row]) => row);
    rankings.push(rows);
    perQuery.push({ row: queries[i].row, kind: queries[i].kind, ...score(rows, queries[i].relevant_rows) });
  }
  const seconds = a.seconds + b.seconds;
  return { name, mode: "hybrid", index_s: a.index_s + b.index_s, quality: summarize(perQuery), qps: queries.length / seconds, seconds, rankings, perQuery };
}

// ---------------------------------------------------------------- main

log(`${queries.length} of ${allQueries.length} labelled queries (every ${STRIDE}th row; slow modes ${slowQueries.length}), ${n} passages`);
const results = [];
const want = (name) => !ONLY.length || ONLY.some((o) => name.includes(o));
let mini = null;
let vec = null;
for (const [name, run] of [
  ["minisearch", minisearch],
  ["exact vector", exactVector],
  ["wink", wink],
  ["flexsearch", flexsearch],
  ["orama", orama],
  ["edgemem", () => edgememRetrieval({ passages, vectors, queries, K, evaluate })],
]) {
  if (!want(name) && !(name === "minisearch" && want("rrf")) && !(name === "exact vector" && want("rrf"))) continue;
  log(`--- ${name}`);
  try {
    const r = [await run()].flat().filter(Boolean);
    if (name === "minisearch") mini = r[0];
    if (name === "exact vector") vec = r[0];
    results.push(...r);
  } catch (err) {
    log(`${name} failed: ${err.stack ?? err}`);
    results.push({ name, error: String(err.message ?? err) });
  }
  C.gc();
}
if (mini && vec) results.push(rrf("RRF of minisearch + exact vector (k=60)", mini, vec));

for (const r of results) if (r.perQuery) r.quality_slow_subset = summarize(r.perQuery.filter((x) => inSlowSet(x.row)));

const f3 = (x) => (x === undefined || Number.isNaN(x) ? "n/a" : x.toFixed(3));
const every = (stride) => (stride === 1 ? "all rows" : `rows divisible by ${stride}`);
const kindCounts = (list) => KINDS.map((k) => `${k} ${list.filter((q) => q.kind === k).length}`).join(", ");
const main = results.filter((r) => r.quality && !r.slow).sort((a, b) => b.quality.all.ndcg - a.quality.all.ndcg);
const everyone = results.filter((r) => r.quality_slow_subset).sort((a, b) => b.quality_slow_subset.all.ndcg - a.quality_slow_subset.all.ndcg);
console.log(`\n### Retrieval quality: ${queries.length} labelled rustdocs queries (${every(STRIDE)} of ${allQueries.length}: ${kindCounts(queries)}), top ${K}, passage text only, ${C.CLOCK === "cpu" ? "CPU-time clock" : "wall clock"}\n`);
console.log(
  C.table(
    ["method", "mode", "nDCG@10", "recall@10", "MRR@10", ...KINDS.map((k) => `nDCG ${k}`), "queries/s", "index s"],
    main.map((r) => [
      r.name,
      r.mode,
      f3(r.quality.all.ndcg),
      f3(r.quality.all.recall),
      f3(r.quality.all.mrr),
      ...KINDS.map((k) => f3(r.quality[k].ndcg)),
      C.fmt(r.qps, r.qps < 100 ? 1 : 0),
      C.fmt(r.index_s, 1),
    ]),
  ),
);
console.log("\nRecall@10 and MRR@10 per kind:\n");
console.log(C.table(["method", ...KINDS.flatMap((k) => [`recall ${k}`, `MRR ${k}`])], main.map((r) => [r.name, ...KINDS.flatMap((k) => [f3(r.quality[k].recall), f3(r.quality[k].mrr)])])));
console.log(`\n### Every method on the ${slowQueries.length}-query subset (${every(SLOW_STRIDE)}${STRIDE > 1 ? ` and ${every(STRIDE)}` : ""}: ${kindCounts(slowQueries)}), for the slow modes\n`);
console.log(
  C.table(
    ["method", "mode", "nDCG@10", "recall@10", "MRR@10", ...KINDS.map((k) => `nDCG ${k}`), "queries/s"],
    everyone.map((r) => {
      const q = r.quality_slow_subset;
      return [r.name, r.mode, f3(q.all.ndcg), f3(q.all.recall), f3(q.all.mrr), ...KINDS.map((k) => f3(q[k].ndcg)), C.fmt(r.qps, r.qps < 100 ? 1 : 0)];
    }),
  ),
);
for (const r of results.filter((x) => x.error || x.unavailable)) console.log(`\n${r.name}: ${r.error ?? r.unavailable}`);

// Issue 16's goal: keyword search at limit 10 answering at least 150× minisearch's
// queries/s at equal (or better) nDCG@10, both measured above in this run.
const GOAL_RATIO = 150;
const edgeKeyword = (lean) => results.find((r) => r.quality && r.name.startsWith("edgemem") && r.mode === "keyword" && !!r.lean === lean);
const summary = {};
if (mini?.quality) {
  console.log(`\n### edgemem keyword search against minisearch (same ${queries.length} queries, limit ${K}, ${C.CLOCK === "cpu" ? "CPU-time clock" : "wall clock"})\n`);
  for (const [key, r] of [["lean", edgeKeyword(true)], ["whole", edgeKeyword(false)]]) {
    if (!r) continue;
    const ratio = r.qps / mini.qps;
    const equalNdcg = r.quality.all.ndcg >= mini.quality.all.ndcg;
    summary[key] = { name: r.name, qps: r.qps, ndcg: r.quality.all.ndcg, minisearch_qps: mini.qps, minisearch_ndcg: mini.quality.all.ndcg, ratio, goal_ratio: GOAL_RATIO, goal_met: ratio >= GOAL_RATIO && equalNdcg };
    console.log(
      `${r.name}: ${C.fmt(r.qps, 0)} q/s ÷ minisearch ${C.fmt(mini.qps, 1)} q/s = ${ratio.toFixed(1)}×; ` +
        `nDCG@10 ${f3(r.quality.all.ndcg)} vs ${f3(mini.quality.all.ndcg)}` +
        (key === "lean" ? `; goal ≥ ${GOAL_RATIO}× at equal nDCG: ${summary[key].goal_met ? "met" : "not met"}` : "") +
        (r.rankings_differ !== undefined ? `; ${r.rankings_differ} of ${queries.length} rankings differ from the whole-record run` : ""),
    );
  }
}
for (const r of results) {
  delete r.rankings;
  delete r.perQuery;
}
const path = C.writeJson("retrieval.json", { environment: C.environment(), queries: queries.length, stride: STRIDE, slow_stride: SLOW_STRIDE, slow_queries: slowQueries.length, k: K, keyword_vs_minisearch: summary, results });
log(`wrote ${path}`);
