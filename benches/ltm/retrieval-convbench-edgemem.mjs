// The edgemem side of `node benches/ltm/retrieval.mjs --set convbench`
// (runner: retrieval-convbench.mjs). Every turn becomes an ordinary long-term
// record (no memory_type) in ONE Memory, namespace = dialog id; each question
// searches with a namespace filter on its own dialog.
//
// Two Memories hold the same records: "offline" embeds with the package's
// offline embedder (its default), "minilm" is given the committed MiniLM
// vectors at ingest (the offline Memory refuses 384-d caller vectors: its
// vectors are 576-d), as retrieval-edgemem.mjs does for rustdocs.
//
// Every search is a one-line function in MODES. To add an option (`expand`,
// `mode: "auto"`, `referenceTime`, ...), add a row; `needs` lists the
// options it uses ([name] or [name, value]). A row whose option the package's
// index.d.ts does not declare in SearchQueryFields prints "n/a" (the runtime
// passes unknown options through as filters and ignores them, so it cannot
// tell), as does a row whose first search throws invalid_input.
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import * as C from "./common.mjs";

const { log, now } = C;
const INGEST_BATCH = 500;

const api = {
  open: (em) => em.index.Memory.open({}),
  record: (t) => ({
    id: t.turn_id,
    text: t.text,
    namespace: t.dialog_id,
    session_id: t.session_id,
    created_at: t.created_at,
    metadata: { speaker: t.speaker, turn: t.turn_index },
  }),
  /** `vectors`: a flat Float32Array of 384-d rows, or undefined for the Memory's embedder. */
  ingest: (memory, records, vectors) => memory.longTerm.create(records, { vectors, deduplicate: false }),
  hits: (result) => (Array.isArray(result) ? result : result.memories ?? result.results ?? []),
  hitId: (hit) => hit.id ?? hit.memory?.id,
};

// One search each: (longTerm, question, its MiniLM vector) -> promise of the answer.
const ns = (q) => ({ eq: q.dialog_id });
export function modes(K) {
  const off = { limit: K, recencyBoost: false };
  // [label, memory, mode column, needs, search]
  return [
    ["edgemem default", "offline", "default", [], (lt, q) => lt.search({ text: q.question, namespace: ns(q) })],
    ["edgemem keyword", "offline", "keyword", [], (lt, q) => lt.search({ text: q.question, namespace: ns(q), mode: "keyword", ...off })],
    ["edgemem semantic (offline)", "offline", "semantic", [], (lt, q) => lt.search({ text: q.question, namespace: ns(q), mode: "semantic", ...off })],
    ["edgemem hybrid alpha (offline)", "offline", "hybrid", [], (lt, q) => lt.search({ text: q.question, namespace: ns(q), mode: "hybrid", ...off })],
    ["edgemem hybrid rrf (offline)", "offline", "hybrid-rrf", [], (lt, q) => lt.search({ text: q.question, namespace: ns(q), mode: "hybrid", fusion: "rrf", ...off })],
    ["edgemem semantic (MiniLM)", "minilm", "semantic", [], (lt, q, v) => lt.search({ text: q.question, vector: v, namespace: ns(q), mode: "semantic", ...off })],
    ["edgemem hybrid alpha (MiniLM)", "minilm", "hybrid", [], (lt, q, v) => lt.search({ text: q.question, vector: v, namespace: ns(q), mode: "hybrid", ...off })],
    ["edgemem hybrid rrf (MiniLM)", "minilm", "hybrid-rrf", [], (lt, q, v) => lt.search({ text: q.question, vector: v, namespace: ns(q), mode: "hybrid", fusion: "rrf", ...off })],
    // Issue 19: n/a with a package whose index.d.ts does not declare them.
    ["edgemem auto (offline)", "offline", "auto", [["mode", "auto"]], (lt, q) => lt.search({ text: q.question, namespace: ns(q), mode: "auto", ...off })],
    ["edgemem auto (MiniLM)", "minilm", "auto", [["mode", "auto"]], (lt, q, v) => lt.search({ text: q.question, vector: v, namespace: ns(q), mode: "auto", ...off })],
    ["edgemem auto + referenceTime (offline)", "offline", "auto", [["mode", "auto"], ["referenceTime"]], (lt, q) => lt.search({ text: q.question, namespace: ns(q), mode: "auto", referenceTime: q.reference_time, ...off })],
    // Expansion at an equal budget of turns shown: 4 hits, each with one
    // turn either side, read in order (hit, its context), cut at K turns.
    ["edgemem auto + expand 1, 4 hits (offline)", "offline", "auto", [["mode", "auto"], ["expand"]], (lt, q) => lt.search({ text: q.question, namespace: ns(q), mode: "auto", expand: 1, ...off, limit: Math.ceil(K / 3) })],
  ];
}

/** The SearchQueryFields block of the package's index.d.ts, or null if there is none. */
function searchFieldsDts(entry) {
  const path = fileURLToPath(new URL("./index.d.ts", entry));
  if (!existsSync(path)) return null;
  const m = /interface SearchQueryFields\s*\{([\s\S]*?)\n\}/.exec(readFileSync(path, "utf8"));
  return m ? m[1] : null;
}

/** Why the package cannot run `needs`, or null when index.d.ts declares them all (or there is no d.ts to ask). */
function missing(dts, needs) {
  if (dts === null) return null;
  for (const [name, value] of needs) {
    const line = new RegExp(`^\\s*${name}\\?:(.*)$`, "m").exec(dts);
    if (!line) return `option ${name} not in index.d.ts`;
    if (value !== undefined && !line[1].includes(JSON.stringify(value))) return `${name}: ${JSON.stringify(value)} not in index.d.ts`;
  }
  return null;
}

async function fill(memory, turns, vectors) {
  let created = 0;
  let duplicates = 0;
  for (let start = 0; start < turns.length; start += INGEST_BATCH) {
    const batch = turns.slice(start, start + INGEST_BATCH);
    const rows = vectors ? vectors.T.subarray(batch[0].row * C.DIM, (batch[batch.length - 1].row + 1) * C.DIM) : undefined;
    const r = await api.ingest(memory, batch.map(api.record), rows);
    created += r.created?.length ?? 0;
    duplicates += r.duplicates?.length ?? 0;
  }
  if (created !== turns.length) log(`edgemem: only ${created} of ${turns.length} turns created (${duplicates} duplicates)`);
  return { created, duplicates };
}

/**
 * Runs every row of `modes(K)`; `evaluate(name, search)` times and scores
 * (retrieval-convbench.mjs). A missing API or option is a row with
 * `unavailable`, never a throw.
 */
export async function edgememConvbench({ set, K, evaluate }) {
  const em = await C.loadEdgemem();
  if (em.error || typeof em.index.Memory?.open !== "function") {
    return [{ name: "edgemem", unavailable: `not available (${em.error ?? "no Memory class"})` }];
  }
  let version = null;
  try {
    version = JSON.parse(readFileSync(fileURLToPath(new URL("./package.json", em.entry)), "utf8")).version;
  } catch {}
  log(`edgemem ${version ?? "?"} from ${em.entry}`);
  const dts = searchFieldsDts(em.entry);
  const memories = {};
  const ingest = {};
  for (const [key, vectors] of [["offline", null], ["minilm", set.vectors]]) {
    const memory = await api.open(em);
    const t0 = now();
    const counts = await fill(memory, set.turns, vectors);
    ingest[key] = { index_s: (now() - t0) / 1000, ...counts };
    log(`edgemem (${key}): ${counts.created} turns created in ${ingest[key].index_s.toFixed(1)} s`);
    memories[key] = memory;
  }
  const out = [];
  for (const [label, key, mode, needs, search] of modes(K)) {
    const base = { name: label, mode, memory: key, needs: needs.map((n) => n.join("=")), edgemem_version: version, index_s: ingest[key].index_s };
    const why = missing(dts, needs);
    if (why) {
      log(`${label}: n/a (${why})`);
      out.push({ ...base, unavailable: why });
      continue;
    }
    const lt = memories[key].longTerm;
    let stray = 0;
    let inexact = 0;
    try {
      const r = await evaluate(label, async (q) => {
        const answer = await search(lt, q, set.vectors.question(q.row));
        if (answer.exact_filter === false) inexact++;
        // A hit's context turns (expand) follow it, once each.
        const ids = [...new Set(api.hits(answer).flatMap((h) => [api.hitId(h), ...(h.context ?? []).map(api.hitId)]))];
        stray += ids.filter((id) => !String(id).startsWith(`${q.dialog_id}-`)).length;
        return ids;
      });
      if (stray) log(`${label}: ${stray} hits outside the question's dialog`);
      const row = { ...base, ...r, hits_outside_dialog: stray, inexact_filter_answers: inexact };
      // The default row against its explicit twin: does recency (on by default) reorder anything?
      const twin = label === "edgemem semantic (offline)" && out.find((x) => x.name === "edgemem default" && x.rankings);
      if (twin) {
        row.rankings_differ_from_default = r.rankings.filter((list, i) => list.join() !== twin.rankings[i].join()).length;
        log(`${label}: ${row.rankings_differ_from_default} of ${r.rankings.length} rankings differ from "edgemem default"`);
      }
      out.push(row);
    } catch (err) {
      log(`${label} failed: ${err.stack ?? err}`);
      const na = err?.code === "invalid_input";
      out.push({ ...base, [na ? "unavailable" : "error"]: `${err.code ? `${err.code}: ` : ""}${err.message ?? err}` });
    }
  }
  for (const m of Object.values(memories)) m.free?.();
  return out;
}
