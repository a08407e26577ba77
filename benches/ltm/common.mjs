// Shared plumbing of the long-term-memory benchmarks: the rustdocs data set,
// timing, memory probes, edgemem loading, Markdown and JSON output.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const DATA = join(ROOT, "../shared/data/rustdocs");
export const DIM = 384;

// A real GC before each memory reading, so a delta is what the index keeps
// and not garbage left over from building it.
setFlagsFromString("--expose-gc");
const gcFn = runInNewContext("gc");
export function gc() {
  gcFn();
  gcFn();
}

export function log(...args) {
  console.error(`[${(process.uptime()).toFixed(1)}s]`, ...args);
}

// Copies, so every view starts at byte 0 of its own buffer; peers that take
// subarrays get views into these.
function readTyped(file, Type) {
  const b = readFileSync(join(DATA, file));
  return new Type(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
}

export function loadVectors() {
  const X = readTyped("passages.f32", Float32Array);
  const Q = readTyped("queries.f32", Float32Array);
  const gt = readTyped("gt_top100.u32", Uint32Array);
  const gtScores = readTyped("gt_top100_scores.f32", Float32Array);
  const n = X.length / DIM;
  const nq = Q.length / DIM;
  if (!Number.isInteger(n) || !Number.isInteger(nq) || gt.length !== nq * 100 || gtScores.length !== nq * 100) {
    throw new Error("rustdocs files have unexpected sizes");
  }
  return {
    X,
    Q,
    gt,
    gtScores,
    n,
    nq,
    row: (i) => X.subarray(i * DIM, (i + 1) * DIM),
    query: (i) => Q.subarray(i * DIM, (i + 1) * DIM),
  };
}

export function loadJsonl(file) {
  return readFileSync(join(DATA, file), "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));
}

/**
 * The benchmark clock in milliseconds. The machine's 2 cores are shared with
 * other builds, so by default it is this process's CPU time (user + system,
 * all its threads), which contention barely moves; LTM_CLOCK=wall uses
 * wall-clock time. On an idle machine the two agree for single-threaded code.
 */
export const CLOCK = process.env.LTM_CLOCK === "wall" ? "wall" : "cpu";
export const now =
  CLOCK === "wall"
    ? () => performance.now()
    : () => {
        const u = process.cpuUsage();
        return (u.user + u.system) / 1000;
      };

export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

export function stats(samplesMs) {
  const s = Float64Array.from(samplesMs).sort();
  const mean = s.reduce((a, b) => a + b, 0) / (s.length || 1);
  return { n: s.length, mean_ms: mean, p50_ms: percentile(s, 50), p99_ms: percentile(s, 99), max_ms: s[s.length - 1] };
}

/** Heap, external (ArrayBuffers, wasm memories) and RSS, after a GC. */
export function memory() {
  gc();
  const m = process.memoryUsage();
  return { rss: m.rss, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers };
}

export function memoryDelta(before, after) {
  return {
    rss_mb: (after.rss - before.rss) / 2 ** 20,
    heap_mb: (after.heapUsed - before.heapUsed) / 2 ** 20,
    external_mb: (after.external - before.external) / 2 ** 20,
  };
}

/**
 * The built edgemem package, or null with the reason. EDGEMEM_PKG may point
 * at another build's node entry. The raw wasm-bindgen module is returned too,
 * since new classes may be exported there before the index re-exports them.
 */
export async function loadEdgemem() {
  const entry = process.env.EDGEMEM_PKG ? pathToFileURL(process.env.EDGEMEM_PKG).href : new URL("../../pkg/node.js", import.meta.url).href;
  try {
    const index = await import(entry);
    let raw = {};
    try {
      raw = await import(new URL("./edgemem_wasm.js", entry).href);
    } catch {
      // A test double may have no raw module; the index is enough then.
    }
    return { index, raw, entry };
  } catch (err) {
    return { error: `${entry}: ${err.message}` };
  }
}

/**
 * wink-bm25-text-search's preparation tasks, the pipeline of the package's
 * own example, shared by every set's wink run: `nlp` is wink-nlp-utils.
 */
export function winkPrepTasks(nlp) {
  return [
    nlp.string.lowerCase,
    nlp.string.removeExtraSpaces,
    nlp.string.tokenize0,
    nlp.tokens.propagateNegations,
    nlp.tokens.removeWords,
    nlp.tokens.stem,
  ];
}

export const fmt = (x, digits = 0) =>
  x === undefined || x === null || Number.isNaN(x)
    ? "n/a"
    : Number(x).toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });

export function table(headers, rows) {
  const lines = [`| ${headers.join(" | ")} |`, `|${headers.map(() => "---").join("|")}|`];
  for (const r of rows) lines.push(`| ${r.join(" | ")} |`);
  return lines.join("\n");
}

export function writeJson(name, value) {
  const dir = join(ROOT, "target/bench");
  mkdirSync(dir, { recursive: true });
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(value, null, 2) + "\n");
  return path;
}

export function environment() {
  return { clock: CLOCK, node: process.version, platform: `${process.platform}-${process.arch}`, cpus: cpus().length, loadavg: loadavg(), date: new Date().toISOString() };
}

/** The lines of a JSONL file at `path` (any folder, unlike loadJsonl), parsed. */
export function readJsonlFile(path) {
  return readFileSync(path, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));
}

/** A headerless little-endian float32 file of `rows` × `dim` values, checked against that size; a copy starting at byte 0. */
export function readF32Rows(path, rows, dim = DIM) {
  const b = readFileSync(path);
  if (b.length !== rows * dim * 4) throw new Error(`${path}: ${b.length} bytes, expected ${rows} x ${dim} x 4 (see the README beside it)`);
  return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
}
