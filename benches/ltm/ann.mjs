// ANN benchmark: edgemem's VectorIndex against hnswlib-wasm 0.8.2, edgevec
// 0.9.0, voy-search 0.6.3, @orama/orama 3.1.18, vectra 0.15.0 and the native
// hnswlib-node 3.0.0, plus plain-JS brute force, on the rustdocs set (12,748
// passages × 384, 3,209 queries), in one single-threaded Node process.
//
//   (cd benches/ltm && npm ci) && make pkg && node benches/ltm/ann.mjs
//
// Environment: LTM_ONLY=name,name (substring match) runs a subset;
// LTM_EXACT_QUERIES (default 500) is the fixed query subset for exact scans;
// LTM_EDGEVEC_EFS (default 24,128: each is a 12,748-row build); EDGEMEM_PKG points at another build;
// LTM_CLOCK=wall times with the wall clock instead of CPU time (see common.mjs).
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";
import * as C from "./common.mjs";
import { edgememAnn } from "./ann-edgemem.mjs";

const require = createRequire(import.meta.url);
const { DIM, log, now } = C;
const K = 10;
const M = 16;
const EF_CONSTRUCTION = 200;
const EF_SWEEP = [10, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768];
const EF_INSERT_QUERY = 64;
const EXACT_QUERIES = Number(process.env.LTM_EXACT_QUERIES ?? 500);
const EDGEVEC_EFS = (process.env.LTM_EDGEVEC_EFS ?? "24,128").split(",").map(Number);
const ONLY = (process.env.LTM_ONLY ?? "").split(",").filter(Boolean);
const INSERTS = 200;
const TARGETS = [0.95, 0.99];
const PASSES_MAX = 3;
// Past both targets, higher ef only costs time.
const SWEEP_STOP_RECALL = 0.995;
const PASS_SECONDS = 3;

const data = C.loadVectors();
const { n, nq, gtScores } = data;
const BYTES_PER_SCAN = n * DIM * 4;

// ---------------------------------------------------------------- measuring

function trueCos(qi, r) {
  const q = data.query(qi);
  const x = data.row(r);
  let s = 0;
  for (let j = 0; j < DIM; j++) s += q[j] * x[j];
  return s;
}

/** README's tie rule: a hit is any row at least as similar as the true rank-10 row. */
function recallOf(qi, rows, count) {
  const threshold = gtScores[qi * 100 + K - 1] - 1e-6;
  let hits = 0;
  for (let i = 0; i < Math.min(count, K); i++) {
    const r = rows[i];
    if (r < n && trueCos(qi, r) >= threshold) hits++;
  }
  return hits / K;
}

/**
 * Runs `search(qi) -> rows` over `queries`, timing only the searches. The
 * machine is shared, so a fast pass is repeated (up to PASSES_MAX while under
 * PASS_SECONDS in all) and the best pass counts, as ann-benchmarks does.
 */
function runQueries(search, queries) {
  const out = new Uint32Array(queries * K).fill(0xffffffff);
  const counts = new Uint8Array(queries);
  for (let qi = 0; qi < Math.min(50, queries); qi++) search(qi); // warm-up
  let best = Infinity;
  let spent = 0;
  for (let pass = 0; pass < PASSES_MAX && (pass === 0 || spent < PASS_SECONDS); pass++) {
    const t0 = now();
    for (let qi = 0; qi < queries; qi++) {
      const rows = search(qi);
      const c = Math.min(K, rows.length);
      for (let i = 0; i < c; i++) out[qi * K + i] = rows[i];
      counts[qi] = c;
    }
    const seconds = (now() - t0) / 1000;
    best = Math.min(best, seconds);
    spent += seconds;
  }
  let recall = 0;
  for (let qi = 0; qi < queries; qi++) recall += recallOf(qi, out.subarray(qi * K, qi * K + K), counts[qi]);
  return { queries, qps: queries / best, recall: recall / queries };
}

async function runQueriesAsync(search, queries) {
  const results = [];
  for (let qi = 0; qi < Math.min(20, queries); qi++) await search(qi);
  const t0 = now();
  for (let qi = 0; qi < queries; qi++) results.push(await search(qi));
  const seconds = (now() - t0) / 1000;
  let recall = 0;
  for (let qi = 0; qi < queries; qi++) recall += recallOf(qi, results[qi], results[qi].length);
  return { queries, qps: queries / seconds, recall: recall / queries };
}

/** Linear interpolation of q/s at a recall target between two adjacent sweep points. */
function qpsAt(points, target) {
  const sorted = [...points].sort((a, b) => a.ef - b.ef);
  for (let i = 0; i < sorted.length; i++) {
    const p = sorted[i];
    if (p.recall >= target) {
      if (i === 0) return { qps: p.qps, note: `lowest ef (${p.ef}) already ≥ target` };
      const a = sorted[i - 1];
      if (p.recall === a.recall) return { qps: p.qps };
      return { qps: a.qps + ((target - a.recall) / (p.recall - a.recall)) * (p.qps - a.qps) };
    }
  }
  return { qps: null, note: "target not reached" };
}

async function sweep(name, setEfAndSearch, efs = EF_SWEEP) {
  const points = [];
  for (const ef of efs) {
    const r = runQueries((qi) => setEfAndSearch(qi, ef), nq);
    points.push({ ef, ...r });
    log(`${name} ef=${ef}: recall ${r.recall.toFixed(4)} at ${C.fmt(r.qps)} q/s`);
    if (r.recall >= SWEEP_STOP_RECALL) break;
  }
  return points;
}

/**
 * Inserts query vectors as new rows one at a time into the built index and
 * searches for each right after: per-insert time and insert-to-searchable.
 */
async function insertProbe(name, insert, searchVec, count = INSERTS) {
  const insertMs = [];
  const visibleMs = [];
  let found = 0;
  for (let i = 0; i < count; i++) {
    const v = data.query(i);
    const label = n + i;
    const t0 = now();
    await insert(v, label);
    const t1 = now();
    const rows = await searchVec(v);
    const t2 = now();
    insertMs.push(t1 - t0);
    visibleMs.push(t2 - t0);
    if (Array.from(rows).includes(label)) found++;
  }
  log(`${name}: ${count} inserts, ${found} found right after`);
  return { count, found, insert: C.stats(insertMs), insert_to_searchable: C.stats(visibleMs) };
}

function gzipBytes(path) {
  try {
    return gzipSync(readFileSync(path), { level: 9 }).length;
  } catch {
    return null;
  }
}

const modulePath = (spec) => require.resolve(spec);

// ---------------------------------------------------------------- libraries

function topK(scores, k) {
  // Partial selection that keeps the k best (score, row) pairs in order.
  const best = new Float64Array(k).fill(-Infinity);
  const rows = new Uint32Array(k);
  for (let r = 0; r < scores.length; r++) {
    const s = scores[r];
    if (s <= best[k - 1]) continue;
    let i = k - 1;
    while (i > 0 && best[i - 1] < s) {
      best[i] = best[i - 1];
      rows[i] = rows[i - 1];
      i--;
    }
    best[i] = s;
    rows[i] = r;
  }
  return rows;
}

async function bruteForce() {
  const cap = n + INSERTS;
  const before = C.memory();
  const t0 = now();
  const store = new Float32Array(cap * DIM);
  store.set(data.X);
  let count = n;
  const build_s = (now() - t0) / 1000;
  const mem = C.memoryDelta(before, C.memory());
  const scores = new Float32Array(cap);
  const search = (q) => {
    for (let r = 0, o = 0; r < count; r++, o += DIM) {
      let s = 0;
      for (let j = 0; j < DIM; j++) s += q[j] * store[o + j];
      scores[r] = s;
    }
    return topK(scores.subarray(0, count), K);
  };
  const exact = runQueries((qi) => search(data.query(qi)), Math.min(EXACT_QUERIES, nq));
  const inserts = await insertProbe(
    "brute force",
    (v) => {
      store.set(v, count * DIM);
      count++;
    },
    search,
  );
  return { name: "plain JS brute force", kind: "exact", build_s, memory: mem, exact, inserts };
}

async function hnswlibNode() {
  const { HierarchicalNSW } = require("hnswlib-node");
  const before = C.memory();
  const t0 = now();
  const index = new HierarchicalNSW("cosine", DIM);
  index.initIndex(n + INSERTS, M, EF_CONSTRUCTION, 100);
  for (let i = 0; i < n; i++) index.addPoint(Array.from(data.row(i)), i);
  const build_s = (now() - t0) / 1000;
  const mem = C.memoryDelta(before, C.memory());
  log(`hnswlib-node: built in ${build_s.toFixed(1)} s`);
  // The addon takes plain arrays only; converting is done once, outside the timing.
  const queries = Array.from({ length: nq }, (_, qi) => Array.from(data.query(qi)));
  const sweepPoints = await sweep("hnswlib-node", (qi, ef) => {
    index.setEf(ef);
    return index.searchKnn(queries[qi], K).neighbors;
  });
  const dir = mkdtempSync(join(tmpdir(), "ltm-hnswlib-"));
  let restore = null;
  try {
    const file = join(dir, "index.bin");
    index.writeIndexSync(file);
    const t = now();
    const again = new HierarchicalNSW("cosine", DIM);
    again.readIndexSync(file);
    restore = { ms: now() - t, bytes: statSync(file).size, note: "readIndexSync from a file" };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  index.setEf(EF_INSERT_QUERY);
  const inserts = await insertProbe(
    "hnswlib-node",
    (v, label) => index.addPoint(Array.from(v), label),
    (v) => index.searchKnn(Array.from(v), K).neighbors,
  );
  return { name: "hnswlib-node 3.0.0 (native)", kind: "hnsw", build_s, memory: mem, sweep: sweepPoints, restore, inserts };
}

async function hnswlibWasm() {
  // The package is built for the web only (it checks for `window`), and its
  // loader insists on IndexedDB; the emscripten factory itself runs in Node.
  globalThis.window ??= globalThis;
  const file = join(modulePath("hnswlib-wasm/package.json"), "../dist/hnswlib-317962d7.js");
  const lib = await (await import(pathToFileURL(file).href)).default();
  const wasmBefore = lib.HEAP8.length;
  const before = C.memory();
  const t0 = now();
  const index = new lib.HierarchicalNSW("cosine", DIM, "");
  index.initIndex(n + INSERTS, M, EF_CONSTRUCTION, 100);
  for (let i = 0; i < n; i++) index.addPoint(data.row(i), i, false);
  const build_s = (now() - t0) / 1000;
  const mem = { ...C.memoryDelta(before, C.memory()), wasm_memory_mb: lib.HEAP8.length / 2 ** 20, wasm_growth_mb: (lib.HEAP8.length - wasmBefore) / 2 ** 20 };
  log(`hnswlib-wasm: built in ${build_s.toFixed(1)} s`);
  const sweepPoints = await sweep("hnswlib-wasm", (qi, ef) => {
    index.setEfSearch(ef);
    return index.searchKnn(data.query(qi), K, undefined).neighbors;
  });
  index.setEfSearch(EF_INSERT_QUERY);
  const inserts = await insertProbe(
    "hnswlib-wasm",
    (v, label) => index.addPoint(v, label, false),
    (v) => index.searchKnn(v, K, undefined).neighbors,
  );
  return {
    name: "hnswlib-wasm 0.8.2",
    kind: "hnsw",
    build_s,
    memory: mem,
    sweep: sweepPoints,
    restore: { ms: null, note: "persistence only through IDBFS (IndexedDB), not measured in Node" },
    inserts,
    gzip_bytes: gzipBytes(file),
  };
}

async function loadEdgevec() {
  const ev = await import("edgevec/edgevec.js");
  const wasmPath = join(modulePath("edgevec/package.json"), "../edgevec_bg.wasm");
  ev.initSync({ module: readFileSync(wasmPath) });
  return { ev, wasmPath };
}

function edgevecIndex(ev, metric, efSearch) {
  const cfg = new ev.EdgeVecConfig(DIM);
  cfg.metric = metric;
  cfg.m = M;
  cfg.ef_construction = EF_CONSTRUCTION;
  cfg.ef_search = efSearch;
  return new ev.EdgeVec(cfg);
}

/**
 * The issue suspected edgevec of misreading subarray views. Checked on a
 * 1,000-row sample: views vs copies on insert and query, cosine vs l2, each
 * against brute force over the same rows (the tie rule does not apply).
 */
function edgevecProbe(ev) {
  const sample = 1000;
  const probeQueries = 100;
  const exact = (q) => {
    const s = new Float32Array(sample);
    for (let r = 0; r < sample; r++) s[r] = trueCosVec(q, data.row(r));
    return new Set(topK(s, K));
  };
  const truths = Array.from({ length: probeQueries }, (_, qi) => exact(data.query(qi)));
  const results = [];
  for (const metric of ["cosine", "l2"]) {
    for (const insertMode of ["subarray", "copy"]) {
      const index = edgevecIndex(ev, metric, 100);
      const ids = [];
      for (let i = 0; i < sample; i++) ids.push(index.insert(insertMode === "copy" ? data.row(i).slice() : data.row(i)));
      const rowOf = new Map(ids.map((id, r) => [id, r]));
      for (const queryMode of ["subarray", "copy"]) {
        let hits = 0;
        for (let qi = 0; qi < probeQueries; qi++) {
          const q = queryMode === "copy" ? data.query(qi).slice() : data.query(qi);
          for (const hit of index.search(q, K)) if (truths[qi].has(rowOf.get(hit.id))) hits++;
        }
        results.push({ metric, insert: insertMode, query: queryMode, recall: hits / (probeQueries * K) });
      }
      index.free();
    }
  }
  // One batch insert from a view that does not start at byte 0 of its buffer.
  const offset = 7;
  const index = edgevecIndex(ev, "l2", 100);
  const ids = index.insertBatchFlat(data.X.subarray(offset * DIM, (offset + sample) * DIM), sample);
  let hits = 0;
  for (let qi = 0; qi < probeQueries; qi++) {
    const q = data.query(qi);
    const s = new Float32Array(sample);
    for (let r = 0; r < sample; r++) s[r] = trueCosVec(q, data.row(offset + r));
    const truth = new Set(topK(s, K));
    for (const hit of index.search(q, K)) if (truth.has(hit.id - ids[0])) hits++;
  }
  index.free();
  results.push({ metric: "l2", insert: "insertBatchFlat(view at offset 7 rows)", query: "subarray", recall: hits / (probeQueries * K) });
  for (const r of results) log(`edgevec probe: ${r.metric}, insert ${r.insert}, query ${r.query}: recall ${r.recall}`);
  return results;
}

function trueCosVec(a, b) {
  let s = 0;
  for (let j = 0; j < DIM; j++) s += a[j] * b[j];
  return s;
}

async function edgevec() {
  const { ev, wasmPath } = await loadEdgevec();
  const probe = edgevecProbe(ev);
  // ef_search is fixed at construction (searchFiltered ignores an efSearch
  // option), so each sweep point is its own build; the first one is timed.
  const points = [];
  let build_s = null;
  let mem = null;
  let inserts = null;
  for (const ef of EDGEVEC_EFS) {
    const before = C.memory();
    const t0 = now();
    const index = edgevecIndex(ev, "l2", ef);
    const ids = new Uint32Array(n);
    for (let i = 0; i < n; i++) ids[i] = index.insert(data.row(i));
    const seconds = (now() - t0) / 1000;
    if (build_s === null) {
      build_s = seconds;
      mem = { ...C.memoryDelta(before, C.memory()), memoryUsage_mb: index.memoryUsage() / 2 ** 20 };
    }
    log(`edgevec ef_search=${ef}: built in ${seconds.toFixed(1)} s`);
    const rowOf = (id) => (id >= ids[0] && id - ids[0] < n ? id - ids[0] : 0xfffffffe);
    const r = runQueries((qi) => index.search(data.query(qi), K).map((h) => rowOf(h.id)), nq);
    points.push({ ef, ...r });
    log(`edgevec ef=${ef}: recall ${r.recall.toFixed(4)} at ${C.fmt(r.qps)} q/s`);
    if (ef === EDGEVEC_EFS[EDGEVEC_EFS.length - 1]) {
      // edgevec numbers rows itself, consecutively: the i-th new row is label n + i.
      inserts = await insertProbe(
        "edgevec",
        (v) => index.insert(v),
        (v) => index.search(v, K).map((h) => h.id - ids[0]),
      );
      inserts.note = `searches at ef_search=${ef}`;
    }
    index.free();
  }
  return {
    name: "edgevec 0.9.0 (metric l2)",
    kind: "hnsw",
    build_s,
    memory: mem,
    sweep: points,
    probe,
    simd: ev.getSimdBackend(),
    inserts,
    restore: { ms: null, note: "persistence only through IndexedDB, not measured in Node" },
    gzip_bytes: gzipBytes(wasmPath),
  };
}

async function voy() {
  const bg = await import("voy-search/voy_search_bg.js");
  const wasmPath = join(modulePath("voy-search/package.json"), "../voy_search_bg.wasm");
  // Built for bundlers: instantiate the module with its own JS glue as imports.
  const { instance } = await WebAssembly.instantiate(readFileSync(wasmPath), { "./voy_search_bg.js": bg });
  bg.__wbg_set_wasm(instance.exports);
  const resource = (v, i) => ({ id: String(i), title: "", url: "", embeddings: Array.from(v) });
  const before = C.memory();
  const t0 = now();
  let index = new bg.Voy({ embeddings: Array.from({ length: n }, (_, i) => resource(data.row(i), i)) });
  const build_s = (now() - t0) / 1000;
  const mem = { ...C.memoryDelta(before, C.memory()), wasm_memory_mb: instance.exports.memory.buffer.byteLength / 2 ** 20 };
  log(`voy: built in ${build_s.toFixed(1)} s`);
  const search = (q) => index.search(q, K).neighbors.map((h) => Number(h.id));
  const exact = runQueries((qi) => search(data.query(qi)), Math.min(EXACT_QUERIES, nq));
  const text = index.serialize();
  const t = now();
  const again = bg.Voy.deserialize(text);
  const restore = { ms: now() - t, bytes: Buffer.byteLength(text), note: "Voy.deserialize of its JSON string" };
  again.free();
  const inserts = await insertProbe("voy", (v, label) => index.add({ embeddings: [resource(v, label)] }), search, 20);
  index.free();
  index = null;
  return { name: "voy-search 0.6.3", kind: "exact", build_s, memory: mem, exact, restore, inserts, gzip_bytes: gzipBytes(wasmPath) };
}

async function orama() {
  const { create, insert, insertMultiple, search, save, load } = await import("@orama/orama");
  const schema = { v: `vector[${DIM}]` };
  // Orama wants plain arrays (Array.isArray) and keeps Float32Array copies.
  // It drops hits below `similarity` (default 0.8); 0 keeps every top-10
  // row here (the smallest true rank-10 cosine is printed below).
  const similarity = 0;
  const before = C.memory();
  const t0 = now();
  const db = create({ schema });
  await insertMultiple(db, Array.from({ length: n }, (_, i) => ({ id: String(i), v: Array.from(data.row(i)) })), 1000);
  const build_s = (now() - t0) / 1000;
  const mem = C.memoryDelta(before, C.memory());
  log(`orama: built in ${build_s.toFixed(1)} s`);
  const run = async (q) => {
    const r = await search(db, { mode: "vector", vector: { value: q, property: "v" }, similarity, limit: K });
    return r.hits.map((h) => Number(h.id));
  };
  const exact = await runQueriesAsync((qi) => run(data.query(qi)), Math.min(EXACT_QUERIES, nq));
  const raw = JSON.stringify(save(db));
  const t = now();
  const again = create({ schema });
  load(again, JSON.parse(raw));
  const restore = { ms: now() - t, bytes: Buffer.byteLength(raw), note: "load(JSON.parse(JSON of save()))" };
  const inserts = await insertProbe("orama", (v, label) => insert(db, { id: String(label), v: Array.from(v) }), run, 50);
  return { name: "@orama/orama 3.1.18", kind: "exact", build_s, memory: mem, exact, restore, inserts, similarity };
}

async function vectra() {
  const { LocalIndex, VirtualFileStorage } = await import("vectra");
  const storage = new VirtualFileStorage();
  const before = C.memory();
  const t0 = now();
  const index = new LocalIndex("/ltm", undefined, storage);
  await index.createIndex({ version: 1 });
  await index.batchInsertItems(Array.from({ length: n }, (_, i) => ({ id: String(i), vector: Array.from(data.row(i)) })));
  const build_s = (now() - t0) / 1000;
  const mem = C.memoryDelta(before, C.memory());
  log(`vectra: built in ${build_s.toFixed(1)} s (in-memory VirtualFileStorage)`);
  const queries = Array.from({ length: Math.min(EXACT_QUERIES, nq) }, (_, qi) => Array.from(data.query(qi)));
  const run = async (q) => (await index.queryItems(q, "", K)).map((h) => Number(h.item.id));
  const exact = await runQueriesAsync((qi) => run(queries[qi]), queries.length);
  const t = now();
  const again = new LocalIndex("/ltm", undefined, storage);
  await again.listItems();
  const restore = { ms: now() - t, note: "LocalIndex load of its JSON index from in-memory storage" };
  // Each insertItem outside beginUpdate() rewrites the whole JSON index.
  const inserts = await insertProbe("vectra", (v, label) => index.insertItem({ id: String(label), vector: Array.from(v) }), (v) => run(Array.from(v)), 5);
  return { name: "vectra 0.15.0", kind: "exact", build_s, memory: mem, exact, restore, inserts };
}

// ---------------------------------------------------------------- main

const libraries = [
  ["plain JS brute force", bruteForce],
  ["hnswlib-node", hnswlibNode],
  ["hnswlib-wasm", hnswlibWasm],
  ["edgevec", edgevec],
  ["voy", voy],
  ["orama", orama],
  ["vectra", vectra],
  ["edgemem", () => edgememAnn({ data, K, M, EF_CONSTRUCTION, EF_SWEEP, EF_INSERT_QUERY, EXACT_QUERIES, INSERTS, sweep, runQueries, insertProbe, gzipBytes })],
];

const minRank10 = Math.min(...Array.from({ length: nq }, (_, qi) => gtScores[qi * 100 + K - 1]));
log(`${n} passages, ${nq} queries; smallest true rank-10 cosine ${minRank10.toFixed(4)}`);
const results = [];
for (const [name, run] of libraries) {
  if (ONLY.length && !ONLY.some((o) => name.includes(o))) continue;
  log(`--- ${name}`);
  try {
    const r = await run();
    results.push(...[r].flat().filter(Boolean));
  } catch (err) {
    log(`${name} failed: ${err.stack ?? err}`);
    results.push({ name, error: String(err.message ?? err) });
  }
  C.gc();
}

for (const r of results) {
  if (r.sweep) for (const t of TARGETS) (r.at ??= {})[t] = qpsAt(r.sweep, t);
  if (r.exact) r.exact.gb_per_s = (r.exact.qps * BYTES_PER_SCAN) / 1e9;
}

/** RSS / heap / external deltas, plus what the library itself reports. */
function memoryCell(m) {
  if (!m) return "n/a";
  const own = [
    ["wasm memory", m.wasm_memory_mb],
    ["memoryUsage()", m.memoryUsage_mb],
    ["memoryBytes()", m.memoryBytes_mb],
  ].filter(([, v]) => Number.isFinite(v));
  return `${C.fmt(m.rss_mb)} / ${C.fmt(m.heap_mb)} / ${C.fmt(m.external_mb)}${own.map(([k, v]) => `; ${k} ${C.fmt(v, 1)}`).join("")}`;
}
const ms = (x, d = 2) => (x === null || x === undefined ? "n/a" : C.fmt(x, d));
console.log(`\n### ANN: recall@10 vs queries/s (rustdocs, ${n} × ${DIM}, ${nq} queries, M=${M}, efConstruction=${EF_CONSTRUCTION}, Node ${process.version}, one thread, ${C.CLOCK === "cpu" ? "CPU-time clock" : "wall clock"})\n`);
console.log(
  C.table(
    ["library", "q/s @ recall ≥ 0.95", "q/s @ ≥ 0.99", "max recall (ef)", "build s", "insert ms (mean)", "insert→searchable p50 / p99 ms", "restore ms", "memory Δ MB (rss / heap / ext)"],
    results
      .filter((r) => r.sweep)
      .map((r) => {
        const best = r.sweep.reduce((a, b) => (b.recall > a.recall ? b : a));
        return [
          r.name,
          r.at[0.95].qps === null ? "not reached" : C.fmt(r.at[0.95].qps),
          r.at[0.99].qps === null ? "not reached" : C.fmt(r.at[0.99].qps),
          `${best.recall.toFixed(4)} (${best.ef})`,
          C.fmt(r.build_s, 1),
          ms(r.inserts?.insert.mean_ms, 3),
          r.inserts ? `${ms(r.inserts.insert_to_searchable.p50_ms, 3)} / ${ms(r.inserts.insert_to_searchable.p99_ms, 3)}` : "n/a",
          ms(r.restore?.ms, 1),
          memoryCell(r.memory),
        ];
      }),
  ),
);
console.log(`\n### Exact scans (first ${Math.min(EXACT_QUERIES, nq)} queries; ${C.fmt(BYTES_PER_SCAN / 1e6, 1)} MB of f32 per query)\n`);
console.log(
  C.table(
    ["library", "q/s", "GB/s", "recall@10", "build s", "insert ms (mean)", "insert→searchable p50 / p99 ms", "restore ms", "memory Δ MB (rss / heap / ext)"],
    results
      .filter((r) => r.exact)
      .map((r) => [
        r.name,
        C.fmt(r.exact.qps, 1),
        C.fmt(r.exact.gb_per_s, 2),
        r.exact.recall.toFixed(4),
        C.fmt(r.build_s, 2),
        ms(r.inserts?.insert.mean_ms, 3),
        r.inserts ? `${ms(r.inserts.insert_to_searchable.p50_ms, 3)} / ${ms(r.inserts.insert_to_searchable.p99_ms, 3)}` : "n/a",
        ms(r.restore?.ms, 1),
        memoryCell(r.memory),
      ]),
  ),
);
console.log("\nSweeps (ef: recall@10 @ q/s):\n");
for (const r of results.filter((x) => x.sweep)) console.log(`- ${r.name}: ${r.sweep.map((p) => `${p.ef}: ${p.recall.toFixed(3)} @ ${C.fmt(p.qps)}`).join(", ")}`);
const gz = results.filter((r) => r.gzip_bytes);
if (gz.length) console.log(`\ngzip -9 wasm bytes: ${gz.map((r) => `${r.name} ${C.fmt(r.gzip_bytes)}`).join(", ")}`);
for (const r of results.filter((x) => x.probe)) {
  console.log(`\n${r.name} correctness probe (1,000 rows, 100 queries, recall@10 vs brute force; SIMD backend: ${r.simd}):\n`);
  console.log(C.table(["metric", "insert", "query", "recall@10"], r.probe.map((p) => [p.metric, p.insert, p.query, p.recall.toFixed(3)])));
}
for (const r of results.filter((x) => x.error || x.unavailable)) console.log(`\n${r.name}: ${r.error ?? r.unavailable}`);
const path = C.writeJson("ann.json", { environment: C.environment(), dataset: { n, nq, dim: DIM, k: K, m: M, ef_construction: EF_CONSTRUCTION, exact_queries: Math.min(EXACT_QUERIES, nq) }, results });
log(`wrote ${path}`);
