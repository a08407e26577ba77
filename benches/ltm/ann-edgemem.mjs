// The edgemem side of ann.mjs. The long-term API is still being built: every
// call into it goes through one of the small functions in `api` below, so a
// renamed method or option is a one-line change here.
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import * as C from "./common.mjs";

const { DIM, log, now } = C;
// One bound large enough for a single graph over the whole set (the core's
// segment cap is 65,536 points): the sweep measures fully built HNSW.
const COMPACT_WORK_POINTS = 65_536;
const COMPACT_CALLS_MAX = 10_000;
const ADD_BATCH_ROWS = 1024;

const api = {
  VectorIndex: (em) => em.index.VectorIndex ?? em.raw.VectorIndex,
  create: (VectorIndex, options) => new VectorIndex({ dim: DIM, metric: "cosine", ...options }),
  add: (index, keys, vectors) => index.addBatch(keys, vectors),
  /** One bounded compaction step: its report `{workPoints, pending, ...}`. */
  compact: (index) => index.compact(COMPACT_WORK_POINTS),
  search: (index, query, k, ef) => index.search(query, k, ef).keys,
  serialize: (index) => index.serialize(),
  deserialize: (VectorIndex, bytes) => VectorIndex.deserialize(bytes),
  memoryBytes: (index) => (typeof index.memoryBytes === "function" ? index.memoryBytes() : null),
  segments: (index) => (typeof index.stats === "function" ? index.stats().segments : null),
  free: (index) => index.free?.(),
  /** Size of the module's wasm memory (it only grows: a high-water mark). */
  wasmMemoryBytes: (em) => {
    try {
      return em.raw.initSync?.()?.memory?.buffer.byteLength ?? null;
    } catch {
      return null;
    }
  },
};

/** Done when the report says nothing is pending, or when a call could do nothing (work above the bound). */
function compactDone(r) {
  if (r === undefined || r === null || r === false || r === 0) return { done: true };
  if (typeof r !== "object") return { done: false };
  if (Number(r.workPoints) === 0 && r.pending) return { done: true, stalled: true };
  if ("pending" in r) return { done: !r.pending };
  if ("done" in r) return { done: Boolean(r.done) };
  return { done: Number(r.workPoints) === 0 };
}

function addAll(index, data, count) {
  for (let start = 0; start < count; start += ADD_BATCH_ROWS) {
    const end = Math.min(count, start + ADD_BATCH_ROWS);
    const keys = Uint32Array.from({ length: end - start }, (_, i) => start + i);
    api.add(index, keys, data.X.subarray(start * DIM, end * DIM));
  }
}

function compactAll(index) {
  const callMs = [];
  for (let calls = 0; calls < COMPACT_CALLS_MAX; calls++) {
    const t = now();
    const { done, stalled } = compactDone(api.compact(index));
    callMs.push(now() - t);
    if (stalled) log(`edgemem: compaction left work above the ${COMPACT_WORK_POINTS}-point bound`);
    if (done) return C.stats(callMs);
  }
  throw new Error(`compact() still had work after ${COMPACT_CALLS_MAX} calls`);
}

async function hnswVariant(em, name, options, ctx) {
  const VectorIndex = api.VectorIndex(em);
  const { data, K, EF_SWEEP, EF_INSERT_QUERY, INSERTS } = ctx;
  const n = data.n;
  const before = C.memory();
  const t0 = now();
  const index = api.create(VectorIndex, options);
  addAll(index, data, n);
  const add_s = (now() - t0) / 1000;
  const compact = compactAll(index);
  const build_s = (now() - t0) / 1000;
  const mem = {
    ...C.memoryDelta(before, C.memory()),
    memoryBytes_mb: (api.memoryBytes(index) ?? NaN) / 2 ** 20,
    wasm_memory_mb: (api.wasmMemoryBytes(em) ?? NaN) / 2 ** 20,
  };
  const segments = api.segments(index);
  log(`${name}: added in ${add_s.toFixed(2)} s, built (compacted, ${compact.n} calls) in ${build_s.toFixed(1)} s; segments ${JSON.stringify(segments?.map((g) => `${g.kind}:${g.rows}`))}`);
  const sweepPoints = await ctx.sweep(name, (qi, ef) => api.search(index, data.query(qi), K, ef), EF_SWEEP);
  const bytes = api.serialize(index);
  const t = now();
  const restored = api.deserialize(VectorIndex, bytes);
  const restore = { ms: now() - t, bytes: bytes.length };
  const same = ctx.runQueries((qi) => api.search(restored, data.query(qi), K, EF_INSERT_QUERY), 200);
  restore.recall_after_restore = same.recall;
  api.free(restored);
  const inserts = await ctx.insertProbe(
    name,
    (v, label) => api.add(index, Uint32Array.of(label), v),
    (v) => api.search(index, v, K, EF_INSERT_QUERY),
    INSERTS,
  );
  api.free(index);
  return { name, kind: "hnsw", options, build_s, add_s, compact_calls: compact, segments, memory: mem, sweep: sweepPoints, restore, inserts };
}

/** The mutable flat segment alone: nothing compacted, so every search is an exact scan. */
async function flatVariant(em, ctx) {
  const VectorIndex = api.VectorIndex(em);
  const { data, K, EXACT_QUERIES, INSERTS } = ctx;
  const n = data.n;
  const before = C.memory();
  const t0 = now();
  let index;
  try {
    index = api.create(VectorIndex, { sealPoints: n + INSERTS + 1 });
  } catch (err) {
    log(`edgemem flat: sealPoints ${n + INSERTS + 1} refused (${err.message}); using the default`);
    index = api.create(VectorIndex, {});
  }
  addAll(index, data, n);
  const build_s = (now() - t0) / 1000;
  const mem = { ...C.memoryDelta(before, C.memory()), memoryBytes_mb: (api.memoryBytes(index) ?? NaN) / 2 ** 20 };
  const exact = ctx.runQueries((qi) => api.search(index, data.query(qi), K, undefined), Math.min(EXACT_QUERIES, data.nq));
  log(`edgemem flat: ${C.fmt(exact.qps)} q/s, recall ${exact.recall.toFixed(4)}`);
  const inserts = await ctx.insertProbe(
    "edgemem flat",
    (v, label) => api.add(index, Uint32Array.of(label), v),
    (v) => api.search(index, v, K, undefined),
    INSERTS,
  );
  api.free(index);
  return { name: "edgemem (flat segment, exact)", kind: "exact", build_s, memory: mem, exact, inserts };
}

/** Runs edgemem's variants; a missing package or class is reported, not thrown. */
export async function edgememAnn(ctx) {
  const em = await C.loadEdgemem();
  if (em.error) {
    log(`edgemem: ${em.error}`);
    return { name: "edgemem", unavailable: `not available yet (${em.error})` };
  }
  if (typeof api.VectorIndex(em) !== "function") {
    return { name: "edgemem", unavailable: "not available yet (no VectorIndex export in the package index or edgemem_wasm.js)" };
  }
  const wasm = join(fileURLToPath(em.entry), "../edgemem_bg.wasm");
  const out = [];
  const variants = [
    ["edgemem (HNSW)", { efConstruction: ctx.EF_CONSTRUCTION }],
    ["edgemem (HNSW, int8 + re-rank)", { efConstruction: ctx.EF_CONSTRUCTION, quantization: "int8" }],
  ];
  for (const [name, options] of variants) {
    try {
      out.push(await hnswVariant(em, name, options, ctx));
    } catch (err) {
      log(`${name} failed: ${err.stack ?? err}`);
      out.push({ name, error: String(err.message ?? err) });
    }
  }
  try {
    out.push(await flatVariant(em, ctx));
  } catch (err) {
    log(`edgemem flat failed: ${err.stack ?? err}`);
    out.push({ name: "edgemem (flat segment, exact)", error: String(err.message ?? err) });
  }
  out[0].gzip_bytes = ctx.gzipBytes(wasm);
  return out;
}
