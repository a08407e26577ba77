// The edgemem side of retrieval.mjs. The long-term API is still being built:
// each call into it is one small function in `api`, so a renamed method,
// option or result field is a one-line change here.
import * as C from "./common.mjs";

const { DIM, log, now } = C;
const INGEST_BATCH = 500;

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
  const out = [];
  const modes = [
    ["keyword", (q) => api.keyword(memory, q.text, K)],
    ["semantic", (q) => api.semantic(memory, q.text, vectors.query(q.row), K)],
    ["hybrid", (q) => api.hybrid(memory, q.text, vectors.query(q.row), K)],
    ["hybrid-rrf", (q) => api.hybridRrf(memory, q.text, vectors.query(q.row), K)],
  ];
  for (const [mode, search] of modes) {
    try {
      const r = await evaluate(`edgemem ${mode}`, async (q) => rows(await search(q)));
      out.push({ name: `edgemem (${mode})`, mode, index_s, ...r });
    } catch (err) {
      log(`edgemem ${mode} failed: ${err.stack ?? err}`);
      out.push({ name: `edgemem (${mode})`, error: String(err.message ?? err) });
    }
  }
  memory.free?.();
  return out;
}
