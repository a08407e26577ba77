// Wasm memory while a vector index grows to 100,000 × 384 points in the npm
// package (issue 16, point 6): `VectorIndex` with int8 codes (and f32 for
// contrast), points added in batches of 500 with bounded compaction after
// each, as the long-term store drives it, and a background pass (the
// Worker's alarm) every 10,000 points. Wasm memory never shrinks, so
// `wasmMemoryBytes()` after the build is the peak the isolate had to hold.
// Then recall@10 of the built index against exact f32 search in JS.
//
//   make pkg && node benches/vector-memory.mjs            # int8, the store's bound
//   VM_PASS=0 node benches/vector-memory.mjs               # writes only
//   VM_QUANT=none VM_WORK=65536 VM_PASS=0 node benches/vector-memory.mjs
//
// One process per configuration: a second index would start from the first
// one's high-water mark.
import { performance } from "node:perf_hooks";
import { LIMITS, VectorIndex, wasmMemoryBytes } from "edgemem";

const N = Number(process.env.VM_POINTS ?? 100_000);
const DIM = Number(process.env.VM_DIM ?? 384);
const QUANT = process.env.VM_QUANT ?? "int8";
const WORK = Number(process.env.VM_WORK ?? LIMITS.LTM_COMPACT_WORK_POINTS_PER_WRITE);
// A background pass (the Worker's alarm) after every PASS_EVERY points; 0: none.
const PASS = Number(process.env.VM_PASS ?? LIMITS.LTM_COMPACT_WORK_POINTS_PER_PASS);
const PASS_EVERY = Number(process.env.VM_PASS_EVERY ?? 10_000);
const QUERIES = Number(process.env.VM_QUERIES ?? 200);
const BATCH = 500;
const MB = 1024 * 1024;

// Clustered vectors from xorshift (64 centres plus noise), the same family
// as examples/vector_memory.rs, so graphs look like embedding graphs.
let s = 0x9e3779b9n;
function rand() {
  s ^= (s << 13n) & 0xffffffffn;
  s ^= s >> 17n;
  s ^= (s << 5n) & 0xffffffffn;
  return Number(s & 0xffffffn) / 0x1000000 - 0.5;
}
const centres = Float32Array.from({ length: 64 * DIM }, rand);
function vector(out, at) {
  const c = Math.floor((rand() + 0.5) * 64) % 64;
  let norm = 0;
  for (let j = 0; j < DIM; j++) {
    const x = centres[c * DIM + j] + 0.35 * rand();
    out[at + j] = x;
    norm += x * x;
  }
  norm = Math.sqrt(norm);
  for (let j = 0; j < DIM; j++) out[at + j] /= norm;
}

const start = wasmMemoryBytes();
const index = new VectorIndex({ dim: DIM, metric: "cosine", quantization: QUANT });
// The originals stay in JS only for the recall check (a Worker would keep
// them in storage); they are not in wasm memory.
const all = new Float32Array(N * DIM);
const t0 = performance.now();
let slowest = 0;
let slowestPass = 0;
for (let at = 0; at < N; at += BATCH) {
  const n = Math.min(BATCH, N - at);
  for (let i = 0; i < n; i++) vector(all, (at + i) * DIM);
  index.addBatch(Uint32Array.from({ length: n }, (_, i) => at + i), all.subarray(at * DIM, (at + n) * DIM));
  const c = performance.now();
  index.compact(WORK);
  slowest = Math.max(slowest, performance.now() - c);
  if (PASS > 0 && (at + n) % PASS_EVERY === 0) {
    const p = performance.now();
    index.compact(PASS);
    slowestPass = Math.max(slowestPass, performance.now() - p);
  }
}
const buildSeconds = (performance.now() - t0) / 1000;
const stats = index.stats();
const afterBuild = wasmMemoryBytes();

const q = new Float32Array(DIM);
let recall = 0;
const times = [];
for (let qi = 0; qi < QUERIES; qi++) {
  vector(q, 0);
  const t = performance.now();
  const hits = index.search(q, 10);
  times.push(performance.now() - t);
  const exact = [];
  for (let i = 0; i < N; i++) {
    let d = 0;
    for (let j = 0; j < DIM; j++) d += q[j] * all[i * DIM + j];
    exact.push([d, i]);
  }
  exact.sort((a, b) => b[0] - a[0]);
  const top = new Set(exact.slice(0, 10).map((e) => e[1]));
  recall += [...hits.keys].filter((k) => top.has(k)).length / 10;
}
times.sort((a, b) => a - b);
const row = {
  points: N,
  dim: DIM,
  quantization: QUANT,
  work_points_per_compact: WORK,
  segments: stats.segments.length,
  index_mb: +(index.memoryBytes() / MB).toFixed(1),
  wasm_memory_before_mb: +(start / MB).toFixed(1),
  wasm_memory_peak_mb: +(afterBuild / MB).toFixed(1),
  wasm_memory_after_search_mb: +(wasmMemoryBytes() / MB).toFixed(1),
  build_s: +buildSeconds.toFixed(1),
  slowest_compact_ms: Math.round(slowest),
  pass_points: PASS,
  slowest_pass_ms: Math.round(slowestPass),
  search_p50_ms: +times[Math.floor(times.length / 2)].toFixed(3),
  recall_at_10: +(recall / QUERIES).toFixed(3),
};
console.log(JSON.stringify(row));
