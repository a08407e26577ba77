// The edgemem side of ann.mjs. The long-term API is still being built: every
// call into it goes through one of the small functions in `api` below, so a
// renamed method or option is a one-line change here.
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import * as C from "./common.mjs";

const { DIM, log, now } = C;
const COMPACT_WORK_POINTS = 2048;
const COMPACT_CALLS_MAX = 100_000;
const ADD_BATCH_ROWS = 1024;

const api = {
  VectorIndex: (em) => em.index.VectorIndex ?? em.raw.VectorIndex,
  create: (VectorIndex, options) => new VectorIndex({ dim: DIM, metric: "cosine", ...options }),
  add: (index, keys, vectors) => index.addBatch(keys, vectors),
  /** One bounded compaction step; true when it reported that nothing is left to do. */
  compactStep: (index) => compactDone(index.compact(COMPACT_WORK_POINTS)),
  search: (index, query, k, ef) => index.search(query, k, ef).keys,
  serialize: (index) => index.serialize(),
  deserialize: (VectorIndex, bytes) => VectorIndex.deserialize(bytes),
  memoryBytes: (index) => (typeof index.memoryBytes === "function" ? index.memoryBytes() : null),
  free: (index) => index.free?.(),
};

// compact() may answer with a count of work done, a flag, or a status
// object; all of these mean "done": 0, false, null/undefined, {done: true},
// {remaining: 0} / {pending: 0}, {more: false}.
function compactDone(r) {
  if (r === undefined || r === null || r === false || r === 0) return true;
  if (typeof r === "object") {
    if ("done" in r) return Boolean(r.done);
    if ("remaining" in r) return Number(r.remaining) === 0;
    if ("pending" in r) return Number(r.pending) === 0;
    if ("more" in r) return !r.more;
    if ("workDone" in r) return Number(r.workDone) === 0;
  }
  return false;
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
    const done = api.compactStep(index);
    callMs.push(now() - t);
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
  const mem = { ...C.memoryDelta(before, C.memory()), memoryBytes_mb: (api.memoryBytes(index) ?? NaN) / 2 ** 20 };
  log(`${name}: added in ${add_s.toFixed(2)} s, built (compacted, ${compact.n} calls) in ${build_s.toFixed(1)} s`);
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
  return { name, kind: "hnsw", options, build_s, add_s, compact_calls: compact, memory: mem, sweep: sweepPoints, restore, inserts };
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
