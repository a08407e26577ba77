// The knowledge-update benchmark of issue 20 on tests/data/kubench: does
// search return the right version of a fact that changed over time?
//
//   node benches/ltm/knowledge-update.mjs [--pkg /work/main/pkg]
//
// Each configuration ingests the same 1,279 records (in file order, batches
// of INGEST_BATCH, with the committed MiniLM vectors) into its own Memory:
// - "fact_key": versions carry fact_key and valid_from, so the store chains
//   them; current questions search with the defaults (latest only), as_of
//   questions pass `asOf`.
// - "no fact_key (today)": the same texts with neither field; a plain search.
// In both, created_at = valid_from (distractors: their created_at), so the
// configurations differ only by the two fields and time is known to both.
// - "oracle" is today's top-10 ranking with every version of the asked fact
//   except the right one removed: what a perfect version filter applied to
//   today's answer would give, the yardstick of the issue's top-1 goal.
//   A filter inside search (latest_only, asOf) works before the top-10 cut,
//   so a right version that today's search ranks 11th behind its own older
//   versions can still be found by fact_key but never by this oracle; the
//   JSON therefore also holds "oracle (deep)", which filters a ranking
//   K + (longest chain - 1) deep and then cuts it to K. The two need not
//   agree even on top-1: the package's time boost ("in August 2025" favours
//   records created then) re-ranks a candidate pool whose size follows the
//   limit, so a deeper search can reorder the first ten.
//   Under asOf the package also hides records created after the date
//   (valid_from defaults to created_at), which the oracle does not, so
//   fact_key can beat the oracle on as_of questions.
// Every question is searched in keyword, semantic and hybrid mode (MiniLM
// query vector), within its user and the kubench namespace, top 10, no
// recency boost (it would favour the newest version and blur the comparison).
//
// Scores, per question kind (current, as_of):
// - version@1: among the hits that are versions of the asked fact, the first
//   is the right one (no version among the hits is a miss);
// - stale top hits: the top hit is a version of the asked fact, but not the
//   right one;
// - top-1: the top hit is the right version;
// - fact@10: some version of the fact is among the hits (what the mode's
//   recall allows the other scores to reach).
//
// A package without the feature accepts fact_key and asOf and silently
// ignores them, so an invalid_input throw is not the only sign: the fact_key
// configuration is "n/a" when a created record reads back without fact_key,
// and its as_of column when an asOf before every valid_from still returns
// versions. Results go to target/bench/knowledge-update.json.
import { join, resolve } from "node:path";
import * as C from "./common.mjs";

const { log, now, fmt } = C;
const DIR = join(C.ROOT, "tests/data/kubench");
const NAMESPACE = "kubench";
const K = 10;
const INGEST_BATCH = 100; // check.mjs counts the chains that arrive out of order across batches of this size
// An ingest of the set takes a fraction of a second, which a busy machine
// easily doubles: the configurations ingest this many times each, taking
// turns, into fresh Memories, and report the median (the last Memory of
// each is the one searched). Taking turns keeps the order out of the figure.
const INGEST_REPEATS = 3;
const MODES = ["keyword", "semantic", "hybrid"];
const KINDS = ["current", "as_of"];
const GOAL = { versionAt1: 0.99, oracleGap: 0.02, top1: 0.95 };
const ORACLE = "oracle";
const ORACLE_DEEP = "oracle (deep)"; // JSON only, see the head comment

function loadSet() {
  const records = C.readJsonlFile(join(DIR, "facts.jsonl"));
  const questions = C.readJsonlFile(join(DIR, "questions.jsonl"));
  const F = C.readF32Rows(join(DIR, "facts.minilm.f32"), records.length);
  const Q = C.readF32Rows(join(DIR, "questions.minilm.f32"), questions.length);
  questions.forEach((q, row) => {
    q.vector = Q.subarray(row * C.DIM, (row + 1) * C.DIM);
    q.versions = new Set(q.version_ids);
  });
  return { records, questions, F };
}

// ---------- the two configurations ----------
const base = (r) => ({ id: r.id, text: r.text, user_id: r.user_id, namespace: r.namespace, created_at: r.valid_from ?? r.created_at });
const scope = (q) => ({ user_id: { eq: q.user_id }, namespace: { eq: NAMESPACE } });
const CONFIGS = [
  {
    name: "fact_key",
    feedsOracle: false,
    record: (r) => (r.fact_key ? { ...base(r), fact_key: r.fact_key, valid_from: r.valid_from } : base(r)),
    extra: (q) => (q.kind === "as_of" ? { asOf: q.as_of } : {}),
  },
  { name: "no fact_key (today)", feedsOracle: true, record: base, extra: () => ({}) },
];

const hitIds = (answer) => (answer.memories ?? []).map((h) => h.id);
const isInvalidInput = (err) => err?.code === "invalid_input";

/** Ingests every record in file order; `{seconds, created, duplicates, statuses}`. Throws what create throws. */
async function ingest(memory, config, records, F) {
  const out = { seconds: 0, created: 0, duplicates: 0, statuses: {} };
  for (let start = 0; start < records.length; start += INGEST_BATCH) {
    const batch = records.slice(start, start + INGEST_BATCH);
    const vectors = F.subarray(start * C.DIM, (start + batch.length) * C.DIM);
    const t0 = now();
    const r = await memory.longTerm.create(batch.map(config.record), { vectors, deduplicate: false });
    out.seconds += (now() - t0) / 1000;
    out.created += r.created?.length ?? 0;
    out.duplicates += r.duplicates?.length ?? 0;
    // per-record statuses, once the package reports them (issue 20, item 3)
    for (const x of r.results ?? []) out.statuses[x.status] = (out.statuses[x.status] ?? 0) + 1;
  }
  return out;
}

/**
 * Why the fact_key configuration cannot be measured on this package, or
 * null: a version must read back with its fact_key, and (for as_of) an asOf
 * before every valid_from must return no version at all.
 */
async function featureGaps(memory, set) {
  const gaps = {};
  const version = set.records.find((r) => r.fact_key);
  const back = await memory.longTerm.get(version.id);
  if (back?.fact_key !== version.fact_key) gaps.current = gaps.as_of = "the package does not keep fact_key";
  if (!gaps.as_of) {
    const q = set.questions.find((x) => x.kind === "as_of");
    try {
      const answer = await memory.longTerm.search({ text: q.question, vector: q.vector, mode: "hybrid", limit: K, recencyBoost: false, asOf: "2024-06-01T00:00:00Z", ...scope(q) });
      if (hitIds(answer).some((id) => q.versions.has(id))) gaps.as_of = "asOf is ignored (a version valid from 2025 is returned as of 2024)";
    } catch (err) {
      if (!isInvalidInput(err)) throw err;
      gaps.as_of = `asOf refused: ${err.message}`;
    }
  }
  return gaps;
}

/** The ranked ids (top `limit`) of each of `questions` in `mode`, and the search time; throws what search throws. */
async function rank(memory, config, mode, questions, limit = K) {
  const rankings = [];
  let seconds = 0;
  for (const q of questions) {
    const t0 = now();
    const answer = await memory.longTerm.search({
      text: q.question,
      vector: q.vector,
      mode,
      limit,
      recencyBoost: false,
      ...scope(q),
      ...config.extra(q),
    });
    seconds += (now() - t0) / 1000;
    rankings.push(hitIds(answer));
  }
  return { rankings, seconds };
}

/** A ranking with the asked fact's other versions removed, cut to K. */
const oracle = (q, ids) => ids.filter((id) => id === q.answer_id || !q.versions.has(id)).slice(0, K);

function score(questions, rankings) {
  const n = questions.length;
  const s = { n, version_at_1: 0, stale_top: 0, top1: 0, fact_at_10: 0 };
  questions.forEach((q, i) => {
    const ids = rankings[i];
    const firstVersion = ids.find((id) => q.versions.has(id));
    if (firstVersion !== undefined) s.fact_at_10++;
    if (firstVersion === q.answer_id) s.version_at_1++;
    if (ids[0] === q.answer_id) s.top1++;
    else if (q.versions.has(ids[0])) s.stale_top++;
  });
  for (const k of ["version_at_1", "stale_top", "top1", "fact_at_10"]) s[k] /= n || 1;
  return s;
}

// ---------- output ----------
const f3 = (x) => fmt(x, 3);
const statusText = (statuses) => Object.entries(statuses).map(([k, n]) => `${k} ${n}`).join(", ") || "-";

function resultTable(rows, kind) {
  const headers = ["mode", "configuration", "version@1", "stale top hits", "top-1", "fact@10", "queries/s"];
  const lines = [];
  for (const mode of MODES) {
    for (const r of rows.filter((x) => x.mode === mode && x.config !== ORACLE_DEEP)) {
      const s = r.kinds[kind];
      const qps = s?.seconds ? s.n / s.seconds : undefined;
      lines.push([mode, r.config, ...(s?.score ? [f3(s.score.version_at_1), f3(s.score.stale_top), f3(s.score.top1), f3(s.score.fact_at_10)] : ["n/a", "n/a", "n/a", "n/a"]), fmt(qps)]);
    }
  }
  return C.table(headers, lines);
}

function goalLines(rows) {
  const out = [];
  for (const mode of MODES) {
    const get = (config, kind) => rows.find((r) => r.mode === mode && r.config === config)?.kinds[kind]?.score;
    const parts = [];
    for (const kind of KINDS) {
      const fk = get("fact_key", kind);
      const or = get(ORACLE, kind);
      if (!fk) {
        parts.push(`${kind}: fact_key n/a (oracle top-1 ${f3(or?.top1)}, ${f3(GOAL.top1 - (or?.top1 ?? NaN))} short of ${GOAL.top1})`);
        continue;
      }
      const v = fk.version_at_1 >= GOAL.versionAt1 ? "met" : "missed";
      const gap = or ? or.top1 - fk.top1 : NaN;
      const g = gap <= GOAL.oracleGap ? "met" : "missed";
      const stale = kind === "current" ? `, stale top ${f3(fk.stale_top)} (goal 0: ${fk.stale_top === 0 ? "met" : "missed"})` : "";
      parts.push(`${kind}: version@1 ${f3(fk.version_at_1)} (goal ${GOAL.versionAt1}: ${v})${stale}, top-1 ${f3(fk.top1)} vs oracle ${f3(or?.top1)} (gap ${f3(gap)}, goal ${GOAL.oracleGap}: ${g}), ${f3(GOAL.top1 - fk.top1)} short of ${GOAL.top1}`);
    }
    out.push(`- ${mode}: ${parts.join("; ")}`);
  }
  return out.join("\n");
}

// ---------- main ----------
function pkgFromArgv(argv) {
  const i = argv.findIndex((a) => a === "--pkg" || a.startsWith("--pkg="));
  if (i < 0) return null;
  return argv[i].includes("=") ? argv[i].slice("--pkg=".length) : argv[i + 1];
}

/**
 * Warms the package up on throwaway Memories (untimed ingests of the whole
 * set and a search per mode), so the first configuration's ingest figure
 * does not alone pay for the JIT: the first two or three ingests of a
 * process measure up to 4x slower than the later ones.
 */
async function warmUp(em, set) {
  for (let i = 0; i < INGEST_REPEATS; i++) {
    const memory = await em.index.Memory.open({});
    await ingest(memory, { record: base }, set.records, set.F);
    const q = set.questions[0];
    for (const mode of MODES) await memory.longTerm.search({ text: q.question, vector: q.vector, mode, limit: K, recencyBoost: false, ...scope(q) });
    memory.free?.();
  }
}

/**
 * Issue 20's costs on the fact_key records: export and import throughput
 * (with vectors), and the snapshot bytes each version adds (every record
 * edited EDITS times: EDITS + 1 versions per record, past bodies kept).
 */
const EDITS = 4;
async function costs(em, set) {
  const memory = await em.index.Memory.open({ store: new em.index.MemoryStore() });
  await ingest(memory, CONFIGS.find((c) => c.name === "fact_key"), set.records, set.F);
  const t0 = now();
  const lines = [];
  for await (const l of memory.export({ vectors: true })) lines.push(l);
  const exportS = (now() - t0) / 1000;
  const bytes = lines.reduce((n, l) => n + l.length + 1, 0);
  const target = await em.index.Memory.open({ store: new em.index.MemoryStore() });
  const t1 = now();
  const imported = await target.import(lines);
  const importS = (now() - t1) / 1000;
  target.free?.();
  const before = (await memory.snapshot()).snapshot_bytes;
  for (let e = 0; e < EDITS; e++) {
    for (const r of set.records) await memory.longTerm.edit(r.id, { topics: [`edit-${e}`] });
  }
  const after = (await memory.snapshot()).snapshot_bytes;
  const versions = (await memory.longTerm.versions(set.records[0].id)).versions.length;
  memory.free?.();
  return {
    records: set.records.length,
    export_s: exportS,
    export_records_per_s: set.records.length / exportS,
    export_bytes: bytes,
    import_s: importS,
    import_records_per_s: imported.memories / importS,
    versions_per_record: versions,
    snapshot_bytes_before: before,
    snapshot_bytes_after: after,
    bytes_per_version: (after - before) / (EDITS * set.records.length),
  };
}

async function main() {
  const pkg = pkgFromArgv(process.argv.slice(2));
  // common.loadEdgemem reads the node entry from EDGEMEM_PKG
  if (pkg) process.env.EDGEMEM_PKG = resolve(pkg, "node.js");
  const em = await C.loadEdgemem();
  if (em.error || typeof em.index.Memory?.open !== "function") throw new Error(`edgemem not available: ${em.error ?? "no Memory class"}`);
  log(`edgemem from ${em.entry}`);
  const set = loadSet();
  const byKind = Object.fromEntries(KINDS.map((k) => [k, set.questions.filter((q) => q.kind === k)]));
  log(`kubench: ${set.records.length} records, ${KINDS.map((k) => `${byKind[k].length} ${k}`).join(", ")} questions`);

  // how deep the oracle's ranking must be for K hits to survive its filter
  const oracleDepth = K + Math.max(...set.questions.map((q) => q.version_ids.length)) - 1;
  await warmUp(em, set);
  const ingests = [];
  const rows = []; // {mode, config, kinds: {current: {score, seconds, n} | {unavailable}}}
  const todays = {}; // mode -> kind -> {top10, deep}: rankings of the no-fact_key run, for the oracle
  // Ingest: {memory, runs} per configuration, or {refused} when create throws invalid_input.
  const stores = new Map(CONFIGS.map((c) => [c, { memory: null, runs: [] }]));
  for (let i = 0; i < INGEST_REPEATS; i++) {
    for (const [config, st] of stores) {
      if (st.refused) continue;
      st.memory?.free?.();
      st.memory = await em.index.Memory.open({});
      try {
        st.runs.push(await ingest(st.memory, config, set.records, set.F));
      } catch (err) {
        if (!isInvalidInput(err)) throw err;
        st.refused = `create refused: ${err.message}`;
      }
    }
  }
  for (const [config, st] of stores) {
    if (st.refused) {
      ingests.push({ config: config.name, unavailable: st.refused });
      continue;
    }
    const runs_s = st.runs.map((r) => r.seconds);
    const ing = { ...st.runs[st.runs.length - 1], seconds: C.percentile([...runs_s].sort((a, b) => a - b), 50), runs_s };
    ingests.push({ config: config.name, records: set.records.length, ...ing, records_per_s: set.records.length / ing.seconds });
    log(`${config.name}: ${ing.created} created, ${ing.duplicates} duplicates in ${runs_s.map((x) => x.toFixed(2)).join(", ")} s`);
    if (ing.created < set.records.length) log(`${config.name}: only ${ing.created} of ${set.records.length} records reported created (statuses ${JSON.stringify(ing.statuses)})`);
  }

  // Search
  for (const [config, { memory, refused }] of stores) {
    let gaps = refused ? { current: refused, as_of: refused } : {};
    if (config.name === "fact_key" && !refused) gaps = await featureGaps(memory, set);
    for (const [kind, why] of Object.entries(gaps)) log(`${config.name} ${kind}: n/a (${why})`);
    for (const mode of MODES) {
      const row = { mode, config: config.name, kinds: {} };
      for (const kind of KINDS) {
        if (gaps[kind]) { row.kinds[kind] = { unavailable: gaps[kind] }; continue; }
        try {
          const { rankings, seconds } = await rank(memory, config, mode, byKind[kind]);
          row.kinds[kind] = { n: rankings.length, seconds, score: score(byKind[kind], rankings) };
          if (config.feedsOracle) {
            const deep = (await rank(memory, config, mode, byKind[kind], oracleDepth)).rankings;
            (todays[mode] ??= {})[kind] = { top10: rankings, deep };
          }
        } catch (err) {
          if (!isInvalidInput(err)) throw err;
          row.kinds[kind] = { unavailable: `${err.code}: ${err.message}` };
          log(`${config.name} ${mode} ${kind}: n/a (${err.message})`);
        }
      }
      rows.push(row);
    }
    memory?.free?.();
  }
  for (const [name, depth] of [[ORACLE, "top10"], [ORACLE_DEEP, "deep"]]) {
    for (const mode of MODES) {
      const row = { mode, config: name, kinds: {} };
      for (const kind of KINDS) {
        const today = todays[mode]?.[kind]?.[depth];
        row.kinds[kind] = today ? { n: today.length, score: score(byKind[kind], today.map((ids, i) => oracle(byKind[kind][i], ids))) } : { unavailable: "no run without fact_key" };
      }
      rows.push(row);
    }
  }

  let cost = null;
  try {
    cost = await costs(em, set);
  } catch (err) {
    if (!isInvalidInput(err) && typeof err?.code !== "string") throw err;
    log(`costs: n/a (${err.message})`);
  }
  const out = [
    `## Knowledge update (kubench: ${set.records.length} records, ${KINDS.map((k) => `${byKind[k].length} ${k}`).join(", ")} questions; top ${K}, user and namespace filter, MiniLM vectors, no recency boost; ${C.CLOCK} clock)`,
    "",
    "### Current value (fact_key: latest only, the default)",
    "",
    resultTable(rows, "current"),
    "",
    "### Value as of a date (fact_key: `asOf`)",
    "",
    resultTable(rows, "as_of"),
    "",
    "### Ingest",
    "",
    C.table(
      ["configuration", "records", "created", "duplicates", "per-record statuses", `seconds (median of ${INGEST_REPEATS})`, "records/s"],
      ingests.map((x) => (x.unavailable ? [x.config, "n/a", "n/a", "n/a", "n/a", "n/a", "n/a"] : [x.config, x.records, x.created, x.duplicates, statusText(x.statuses), fmt(x.seconds, 2), fmt(x.records_per_s)])),
    ),
    "",
    "### Costs (fact_key records, MiniLM vectors)",
    "",
    cost
      ? C.table(
          ["export records/s (with vectors)", "export bytes", "import records/s (with vectors)", "versions per record", "snapshot bytes before", `after ${EDITS} edits of each`, "bytes per version"],
          [[fmt(cost.export_records_per_s), cost.export_bytes, fmt(cost.import_records_per_s), cost.versions_per_record, cost.snapshot_bytes_before, cost.snapshot_bytes_after, fmt(cost.bytes_per_version)]],
        )
      : "n/a: the package has no export, import or versions",
    "",
    "### Goals (issue 20)",
    "",
    goalLines(rows),
  ].join("\n");
  console.log(out);
  const path = C.writeJson("knowledge-update.json", { environment: C.environment(), entry: em.entry, k: K, ingest_batch: INGEST_BATCH, oracle_depth: oracleDepth, ingests, rows, costs: cost });
  log(`wrote ${path}`);
}

await main();
