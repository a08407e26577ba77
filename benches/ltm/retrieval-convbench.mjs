// Retrieval benchmark on convbench (tests/data/convbench): turn-level search
// quality and speed on chat, edgemem against minisearch 7.2.0 (defaults),
// wink-bm25-text-search 3.1.2 (+ wink-nlp-utils 2.1.0, the rustdocs
// pipeline), exact MiniLM cosine and an RRF of minisearch + MiniLM. Each
// question searches only its own dialog: one peer index per dialog, and
// edgemem's namespace filter (retrieval-convbench-edgemem.mjs).
//
//   (cd benches/ltm && npm ci) && node benches/ltm/retrieval.mjs --set convbench
//   EDGEMEM_PKG=/path/to/pkg/node.js node benches/ltm/retrieval.mjs --set convbench
//
// Metrics at 10 (binary relevance, evidence turns): nDCG@10, recall@5,
// recall@10, hit@10 and queries/s, overall and per kind, for the test split
// (d08-d24, the headline) and for all 528 questions. One run times every
// question once; a split's q/s is its questions over their summed search
// time. Before the timed pass each method answers every question LTM_WARMUP
// times untimed (default 1): a 528-question pass is short enough that wasm
// and JIT tier-up would otherwise dominate (edgemem's first pass runs at
// roughly half its later speed). edgemem's search does not touch access
// counts, so the warm-up changes no ranking. LTM_CLOCK as in common.mjs;
// LTM_ONLY=name,name (substring) runs a subset.
// Results: target/bench/retrieval-convbench.json.
import { createRequire } from "node:module";
import * as C from "./common.mjs";
import { loadSet } from "./sets.mjs";
import { edgememConvbench } from "./retrieval-convbench-edgemem.mjs";

const require = createRequire(import.meta.url);
const { log, now } = C;
const K = 10;
const RRF_K = 60;
const DEPTH = 100;
const KINDS = ["single_hop", "multi_hop", "temporal", "adversarial"];
const SPLITS = ["test", "all", "dev"];
const ONLY = (process.env.LTM_ONLY ?? "").split(",").filter(Boolean);
const WARMUP = Math.max(0, Number(process.env.LTM_WARMUP ?? 1));

const set = loadSet("convbench");
const { turns, questions, dialogs, vectors } = set;
const inSplit = (split) => (x) => split === "all" || x.split === split;

// ---------------------------------------------------------------- metrics

function score(ids, evidence) {
  const rel = new Set(evidence);
  let dcg = 0;
  let at5 = 0;
  let at10 = 0;
  const seen = new Set();
  for (let i = 0, rank = 0; i < ids.length && rank < K; i++) {
    if (seen.has(ids[i])) continue; // a duplicate earns nothing
    seen.add(ids[i]);
    if (rel.has(ids[i])) {
      dcg += 1 / Math.log2(rank + 2);
      at10++;
      if (rank < 5) at5++;
    }
    rank++;
  }
  let ideal = 0;
  for (let i = 0; i < Math.min(K, rel.size); i++) ideal += 1 / Math.log2(i + 2);
  return { ndcg: dcg / ideal, recall5: at5 / rel.size, recall10: at10 / rel.size, hit10: at10 > 0 ? 1 : 0 };
}

const METRICS = ["ndcg", "recall5", "recall10", "hit10"];
function aggregate(list) {
  const out = { n: list.length };
  for (const m of METRICS) out[m] = list.reduce((a, x) => a + x[m], 0) / (list.length || 1);
  const seconds = list.reduce((a, x) => a + x.seconds, 0);
  out.qps = list.length / seconds;
  return out;
}

function summarize(perQuery) {
  const out = {};
  for (const split of SPLITS) {
    const list = perQuery.filter(inSplit(split));
    out[split] = { all: aggregate(list) };
    for (const kind of KINDS) out[split][kind] = aggregate(list.filter((x) => x.kind === kind));
  }
  return out;
}

/** Runs `search(q) -> ids` (may be async) over every question, timing only the searches. */
async function evaluate(name, search) {
  for (let pass = 0; pass < WARMUP; pass++) {
    for (const q of questions) {
      const ids = search(q);
      if (ids && typeof ids.then === "function") await ids;
    }
  }
  const perQuery = [];
  const rankings = [];
  for (let i = 0; i < questions.length; i++) {
    const q = questions[i];
    const t0 = now();
    let ids = search(q);
    if (ids && typeof ids.then === "function") ids = await ids;
    const seconds = (now() - t0) / 1000;
    ids = Array.from(ids);
    rankings.push(ids);
    perQuery.push({ qid: q.qid, kind: q.kind, split: q.split, seconds, ...score(ids, q.evidence) });
    if ((i + 1) % 200 === 0) log(`${name}: ${i + 1}/${questions.length} questions`);
  }
  return { quality: summarize(perQuery), rankings, perQuery };
}

// ---------------------------------------------------------------- peers

async function minisearch() {
  const { default: MiniSearch } = await import("minisearch");
  const t0 = now();
  const index = new Map();
  for (const [id, list] of dialogs) {
    const ms = new MiniSearch({ fields: ["text"], idField: "turn_id" });
    ms.addAll(list.map((t) => ({ turn_id: t.turn_id, text: t.text })));
    index.set(id, ms);
  }
  const index_s = (now() - t0) / 1000;
  // Default search options (OR of the terms, BM25+); RRF below reuses the ranking.
  const r = await evaluate("minisearch", (q) => index.get(q.dialog_id).search(q.question).slice(0, DEPTH).map((h) => h.id));
  return { name: "minisearch 7.2.0", mode: "keyword", index_s, ...r };
}

async function wink() {
  const bm25 = require("wink-bm25-text-search");
  const nlp = require("wink-nlp-utils");
  const t0 = now();
  const index = new Map();
  for (const [id, list] of dialogs) {
    const engine = bm25();
    engine.defineConfig({ fldWeights: { text: 1 } });
    engine.definePrepTasks(C.winkPrepTasks(nlp));
    for (const t of list) engine.addDoc({ text: t.text }, t.turn_id);
    engine.consolidate();
    index.set(id, engine);
  }
  const index_s = (now() - t0) / 1000;
  const r = await evaluate("wink-bm25", (q) => index.get(q.dialog_id).search(q.question, K).map(([id]) => id));
  return { name: "wink-bm25-text-search 3.1.2 (+ wink-nlp-utils 2.1.0)", mode: "keyword", index_s, ...r };
}

function exactMiniLM() {
  const { T } = vectors;
  const D = C.DIM;
  const top = (q) => {
    const list = dialogs.get(q.dialog_id);
    const v = vectors.question(q.row);
    const scored = list.map((t) => {
      let s = 0;
      for (let j = 0, o = t.row * D; j < D; j++) s += v[j] * T[o + j];
      return [t.turn_id, s];
    });
    return scored.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, DEPTH).map(([id]) => id);
  };
  return evaluate("exact MiniLM", top).then((r) => ({ name: "exact MiniLM cosine (plain JS)", mode: "semantic", index_s: 0, ...r }));
}

/** Reciprocal-rank fusion of two stored rankings, k = 60, depth 100 each; its time is the sum of theirs. */
function rrf(name, a, b) {
  const perQuery = [];
  const rankings = [];
  questions.forEach((q, i) => {
    const fused = new Map();
    for (const list of [a.rankings[i], b.rankings[i]]) list.slice(0, DEPTH).forEach((id, rank) => fused.set(id, (fused.get(id) ?? 0) + 1 / (RRF_K + rank + 1)));
    const ids = [...fused.entries()].sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1)).map(([id]) => id);
    rankings.push(ids);
    perQuery.push({ qid: q.qid, kind: q.kind, split: q.split, seconds: a.perQuery[i].seconds + b.perQuery[i].seconds, ...score(ids, q.evidence) });
  });
  return { name, mode: "hybrid", index_s: a.index_s + b.index_s, quality: summarize(perQuery), rankings, perQuery };
}

// ---------------------------------------------------------------- main

const started = performance.now();
log(`convbench: ${questions.length} questions, ${turns.length} turns in ${dialogs.size} dialogs; test split ${questions.filter(inSplit("test")).length} questions`);
const results = [];
const want = (name) => !ONLY.length || ONLY.some((o) => name.includes(o));
let mini = null;
let vec = null;
for (const [name, run] of [
  ["minisearch", minisearch],
  ["exact MiniLM", exactMiniLM],
  ["wink", wink],
  ["edgemem", () => edgememConvbench({ set, K, evaluate })],
]) {
  if (!want(name) && !(["minisearch", "exact MiniLM"].includes(name) && want("rrf"))) continue;
  log(`--- ${name}`);
  try {
    const r = [await run()].flat().filter(Boolean);
    if (name === "minisearch") mini = r[0];
    if (name === "exact MiniLM") vec = r[0];
    results.push(...r);
  } catch (err) {
    log(`${name} failed: ${err.stack ?? err}`);
    results.push({ name, error: String(err.message ?? err) });
  }
  C.gc();
}
if (mini && vec) results.push(rrf("RRF of minisearch + exact MiniLM (k=60)", mini, vec));

const f3 = (x) => (x === undefined || Number.isNaN(x) ? "n/a" : x.toFixed(3));
const qps = (x) => (x === undefined || !Number.isFinite(x) ? "n/a" : C.fmt(x, x < 100 ? 1 : 0));
const clock = C.CLOCK === "cpu" ? "CPU-time clock" : "wall clock";
const shortKind = { single_hop: "single", multi_hop: "multi", temporal: "temporal", adversarial: "advers." };
const rows = results.filter((r) => r.quality || r.unavailable);
const splitLabel = { test: "test split (d08-d24, the headline)", all: "all questions (dev + test)" };
for (const split of ["test", "all"]) {
  const nq = questions.filter(inSplit(split)).length;
  const counts = KINDS.map((k) => `${k} ${questions.filter(inSplit(split)).filter((q) => q.kind === k).length}`).join(", ");
  const sorted = [...rows].sort((a, b) => (b.quality?.[split].all.ndcg ?? -1) - (a.quality?.[split].all.ndcg ?? -1));
  console.log(`\n### convbench retrieval, ${splitLabel[split]}: ${nq} questions (${counts}), each within its own dialog, top ${K}, ${clock}, ${WARMUP} untimed warm-up pass${WARMUP === 1 ? "" : "es"}\n`);
  console.log(
    C.table(
      ["method", "mode", "nDCG@10", "recall@5", "recall@10", "hit@10", ...KINDS.map((k) => `nDCG ${shortKind[k]}`), "queries/s", "index s"],
      sorted.map((r) => {
        const q = r.quality?.[split];
        return [r.name, r.mode ?? "", f3(q?.all.ndcg), f3(q?.all.recall5), f3(q?.all.recall10), f3(q?.all.hit10), ...KINDS.map((k) => f3(q?.[k].ndcg)), qps(q?.all.qps), r.index_s === undefined || !q ? "n/a" : C.fmt(r.index_s, 2)];
      }),
    ),
  );
  console.log(`\nPer kind, ${split === "test" ? "test split" : "all questions"}: recall@5 / recall@10 / hit@10 (queries/s)\n`);
  console.log(
    C.table(
      ["method", ...KINDS],
      sorted.map((r) => [r.name, ...KINDS.map((k) => {
        const q = r.quality?.[split][k];
        return q ? `${f3(q.recall5)} / ${f3(q.recall10)} / ${f3(q.hit10)} (${qps(q.qps)})` : "n/a";
      })]),
    ),
  );
}
console.log(`\nAll edgemem rows but "edgemem default" pass limit ${K} and recencyBoost: false; "edgemem default" is search({text, namespace}) alone (the package's default limit is 10, recency boost on). (offline) = the package's default offline embedder; (MiniLM) = a second Memory given the committed MiniLM vectors at ingest and per query.`);
const twin = results.find((r) => r.rankings_differ_from_default !== undefined);
if (twin) console.log(`"edgemem default" and "${twin.name}" rank ${twin.rankings_differ_from_default} of ${questions.length} questions differently.`);
for (const r of results.filter((x) => x.error || x.unavailable)) console.log(`- ${r.name}: ${r.unavailable ? `n/a (${r.unavailable})` : `error: ${r.error}`}`);

const summary = {};
const edgeKeyword = results.find((r) => r.quality && r.name === "edgemem keyword");
if (mini?.quality && edgeKeyword) {
  console.log(`\n### edgemem keyword q/s ÷ minisearch q/s (same questions, limit ${K}, ${clock})\n`);
  for (const split of ["test", "all"]) {
    const e = edgeKeyword.quality[split].all;
    const m = mini.quality[split].all;
    summary[split] = { edgemem_qps: e.qps, minisearch_qps: m.qps, ratio: e.qps / m.qps, edgemem_ndcg: e.ndcg, minisearch_ndcg: m.ndcg };
    console.log(`${split}: ${C.fmt(e.qps, 0)} ÷ ${C.fmt(m.qps, 0)} = ${(e.qps / m.qps).toFixed(2)}×; nDCG@10 ${f3(e.ndcg)} vs ${f3(m.ndcg)}`);
  }
}
const run_s = (performance.now() - started) / 1000;
console.log(`\nRun time ${run_s.toFixed(0)} s (wall, after loading the data).`);
for (const r of results) {
  delete r.rankings;
  delete r.perQuery;
}
const path = C.writeJson("retrieval-convbench.json", { set: "convbench", environment: C.environment(), warmup_passes: WARMUP, questions: questions.length, turns: turns.length, dialogs: dialogs.size, k: K, run_s, keyword_vs_minisearch: summary, results });
log(`wrote ${path}`);
