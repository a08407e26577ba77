// The edgemem side of retrieval.mjs. The long-term API is still being built:
// each call into it is one small function in `api`, so a renamed method,
// option or result field is a one-line change here.
import * as C from "./common.mjs";

const { DIM, log, now } = C;
const INGEST_BATCH = 500;
const LEAN_FIELDS = ["id", "score"];

const api = {
  open: (em) => em.index.Memory.open({}),
  available: (memory) => typeof memory?.longTerm?.create === "function" && typeof memory.longTerm.search === "function",
  /** Stores passages as memory records; `vectors` holds one 384-d row per record. */
  ingest: (memory, records, vectors) => memory.longTerm.create(records, { vectors, deduplicate: false }),
  // Every record is created at the same moment, so recency could not reorder
  // anything; it is switched off to measure retrieval alone.
  keyword: (memory, text, limit) => memory.longTerm.search({ text, mode: "keyword", limit, recencyBoost: false }),
  semantic: (memory, text, vector, limit) => memory.longTerm.search({ text, mode: "semantic", limit, vector, recencyBoost: false }),
  hybrid: (memory, text, vector, limit) => memory.longTerm.search({ text, mode: "hybrid", limit, vector, recencyBoost: false }),
  hybridRrf: (memory, text, vector, limit) => memory.longTerm.search({ text, mode: "hybrid", fusion: "rrf", limit, vector, recencyBoost: false }),
  // Lean answers (issue 16): the same searches, each hit built with only the
  // fields asked for, so less JSON crosses from wasm per query.
  keywordLean: (memory, text, limit) => memory.longTerm.search({ text, mode: "keyword", limit, recencyBoost: false, fields: LEAN_FIELDS }),
  semanticLean: (memory, text, vector, limit) => memory.longTerm.search({ text, mode: "semantic", limit, vector, recencyBoost: false, fields: LEAN_FIELDS }),
  hybridLean: (memory, text, vector, limit) => memory.longTerm.search({ text, mode: "hybrid", limit, vector, recencyBoost: false, fields: LEAN_FIELDS }),
  /** The hit list of a search answer: an array, or AMS's `{memories: [...]}`. */
  hits: (result) => (Array.isArray(result) ? result : result.memories ?? result.results ?? []),
  hitId: (hit) => hit.id ?? hit.memory?.id,
};

const recordId = (row) => `rustdocs-${row}`;
const rowOf = (id) => {
  const m = /(\d+)$/.exec(String(id));
  return m ? Number(m[1]) : -1;
};

/** Runs keyword, semantic and hybrid search; a missing API is reported, not thrown. */
export async function edgememRetrieval({ passages, vectors, K, evaluate }) {
  const em = await C.loadEdgemem();
  if (em.error || typeof em.index.Memory?.open !== "function") {
    return { name: "edgemem", unavailable: `not available yet (${em.error ?? "no Memory class"})` };
  }
  const memory = await api.open(em);
  if (!api.available(memory)) {
    memory.free?.();
    return { name: "edgemem", unavailable: "not available yet (no memory.longTerm.createMemories/search)" };
  }
  const t0 = now();
  for (let start = 0; start < passages.length; start += INGEST_BATCH) {
    const batch = passages.slice(start, start + INGEST_BATCH);
    const records = batch.map((p) => ({ id: recordId(p.row), text: p.text }));
    const rows = vectors.X.subarray(batch[0].row * DIM, (batch[batch.length - 1].row + 1) * DIM);
    await api.ingest(memory, records, rows);
  }
  const index_s = (now() - t0) / 1000;
  log(`edgemem: ${passages.length} memories created in ${index_s.toFixed(1)} s`);
  const rows = (result) => api.hits(result).map((h) => rowOf(api.hitId(h)));
  // A lean hit must hold exactly the fields asked for; otherwise the package
  // ignored `fields` and the lean row would silently time whole records.
  const leanRows = (result) => {
    const hits = api.hits(result);
    for (const h of hits) {
      const keys = Object.keys(h).sort().join(",");
      if (keys !== "id,score") throw new Error(`fields: ["id", "score"] answered a hit with keys ${keys}`);
    }
    return hits.map((h) => rowOf(h.id));
  };
  const out = [];
  // [mode, label, search, lean]: each lean mode runs right after its
  // whole-record twin, on the same queries and the same clock.
  const modes = [
    ["keyword", "keyword", (q) => api.keyword(memory, q.text, K), false],
    ["keyword", "keyword, fields id+score", (q) => api.keywordLean(memory, q.text, K), true],
    ["semantic", "semantic", (q) => api.semantic(memory, q.text, vectors.query(q.row), K), false],
    ["semantic", "semantic, fields id+score", (q) => api.semanticLean(memory, q.text, vectors.query(q.row), K), true],
    ["hybrid", "hybrid", (q) => api.hybrid(memory, q.text, vectors.query(q.row), K), false],
    ["hybrid", "hybrid, fields id+score", (q) => api.hybridLean(memory, q.text, vectors.query(q.row), K), true],
    ["hybrid-rrf", "hybrid-rrf", (q) => api.hybridRrf(memory, q.text, vectors.query(q.row), K), false],
  ];
  const whole = new Map();
  for (const [mode, label, search, lean] of modes) {
    try {
      const r = await evaluate(`edgemem ${label}`, async (q) => (lean ? leanRows : rows)(await search(q)));
      const row = { name: `edgemem (${label})`, mode, lean, index_s, ...r };
      if (lean && whole.has(mode)) {
        // Same ranking as the whole-record twin, query by query?
        const twin = whole.get(mode).rankings;
        row.rankings_differ = r.rankings.filter((list, i) => list.join() !== twin[i].join()).length;
        log(`edgemem ${label}: ${row.rankings_differ} of ${r.rankings.length} rankings differ from the whole-record run`);
      } else if (!lean && !whole.has(mode)) {
        whole.set(mode, r);
      }
      out.push(row);
    } catch (err) {
      log(`edgemem ${label} failed: ${err.stack ?? err}`);
      out.push({ name: `edgemem (${label})`, mode, lean, error: String(err.message ?? err) });
    }
  }
  memory.free?.();
  return out;
}
