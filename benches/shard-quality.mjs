// Retrieval quality of a tenant spread over shards (issue 21), under
// `wrangler dev` on this machine: the same records in a tenant of an
// unsharded deployment (one index) and of deployments with
// EDGEMEM_SHARDS_INITIAL = 2 and 4 (an index per shard, merged by the
// fan-out), searched tenant-wide with the same queries.
//
// Two sets: documentation (../shared/data/rustdocs: 12,748 passages, the
// labelled queries, every QUALITY_EVERY-th) and chat (tests/data/convbench:
// 3,286 dialog turns, its 528 questions with their evidence turns). For
// each deployment and mode (semantic, hybrid):
// - recall@10 and nDCG@10 against the labels, and the ratio of each
//   sharded deployment's to the unsharded one's;
// - the ANN's recall@10 against an exact scan of every vector (`exact:
//   true`) in the same deployment;
// - whether the exact-mode lists are identical to the unsharded tenant's.
//
//   make build && node benches/shard-quality.mjs
//   QUALITY_SHARDS=2 QUALITY_EVERY=16 node benches/shard-quality.mjs
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startWranglerDev } from "../tests/e2e/wrangler-dev.mjs";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const SHARDS = (process.env.QUALITY_SHARDS ?? "2,4").split(",").map(Number);
const EVERY = Number(process.env.QUALITY_EVERY ?? 8);
const K = 10;
const MODES = ["semantic", "hybrid"];

const jsonl = (path) => readFileSync(path, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));

function sets() {
  const passages = jsonl(join(ROOT, "../shared/data/rustdocs/passages.jsonl"));
  const docsQueries = jsonl(join(ROOT, "../shared/data/rustdocs/queries.jsonl")).filter((_, i) => i % EVERY === 0);
  const turns = jsonl(join(ROOT, "tests/data/convbench/dialogs.jsonl"));
  const questions = jsonl(join(ROOT, "tests/data/convbench/questions.jsonl"));
  return [
    {
      name: "docs",
      records: passages.map((p) => ({ id: `d${p.row}`, text: `${p.title}\n${p.text}` })),
      queries: docsQueries.map((q) => ({ text: q.text, relevant: new Set(q.relevant_rows.map((r) => `d${r}`)) })),
    },
    {
      name: "chat",
      records: turns.map((t) => ({ id: t.turn_id, text: `${t.speaker}: ${t.text}`, session_id: t.session_id, created_at: `${t.session_date}T12:00:00Z` })),
      queries: questions.map((q) => ({ text: q.question, relevant: new Set(q.evidence) })),
    },
  ];
}

async function post(url, body) {
  const r = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const text = await r.text();
  if (!r.ok) throw new Error(`${url}: ${r.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

function recallAt(ids, relevant) {
  return ids.slice(0, K).filter((id) => relevant.has(id)).length / relevant.size;
}
function ndcgAt(ids, relevant) {
  const dcg = ids.slice(0, K).reduce((s, id, i) => s + (relevant.has(id) ? 1 / Math.log2(i + 2) : 0), 0);
  const ideal = Array.from({ length: Math.min(K, relevant.size) }, (_, i) => 1 / Math.log2(i + 2)).reduce((a, b) => a + b, 0);
  return ideal ? dcg / ideal : 0;
}
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

/** Every set loaded into one deployment, and each query's lists. */
async function run(label, vars) {
  const dir = mkdtempSync(join(tmpdir(), "edgemem-shard-quality-"));
  const dev = await startWranglerDev(ROOT, { persistDir: dir, vars });
  const out = { label, sets: {} };
  try {
    for (const set of sets()) {
      const base = `${dev.url}v1/long-term-memory`;
      const ns = `?namespace=quality-${set.name}`;
      const t0 = performance.now();
      for (let i = 0; i < set.records.length; i += 100) await post(`${base}/${ns}`, { memories: set.records.slice(i, i + 100), deduplicate: false });
      const loadS = (performance.now() - t0) / 1000;
      const lists = {};
      for (const mode of MODES) {
        for (const exact of [false, true]) {
          const key = `${mode}${exact ? "-exact" : ""}`;
          lists[key] = [];
          for (const q of set.queries) {
            const r = await post(`${base}/search${ns}`, { text: q.text, search_mode: mode, limit: K, recency_boost: false, exact, fields: ["id"] });
            if (r.partial) throw new Error(`${label}: a partial answer (${r.missing_shards}) for ${JSON.stringify(q.text)}`);
            lists[key].push(r.memories.map((m) => m.id));
          }
        }
      }
      out.sets[set.name] = { loadS, lists, queries: set.queries };
      console.error(`${label} ${set.name}: ${set.records.length} records in ${loadS.toFixed(1)} s, ${set.queries.length} queries`);
    }
  } finally {
    await dev.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

const runs = [await run("unsharded", {})];
for (const n of SHARDS) runs.push(await run(`${n} shards`, { EDGEMEM_SHARDS_INITIAL: String(n) }));

const one = runs[0];
console.log(`| set | deployment | mode | recall@10 | nDCG@10 | ratio to one index (recall / nDCG) | ANN recall@10 vs exact scan | exact lists identical to one index's |`);
console.log(`|---|---|---|---:|---:|---:|---:|---:|`);
for (const setName of Object.keys(one.sets)) {
  for (const r of runs) {
    const s = r.sets[setName];
    for (const mode of MODES) {
      const ann = s.lists[mode];
      const exact = s.lists[`${mode}-exact`];
      const recall = mean(ann.map((ids, i) => recallAt(ids, s.queries[i].relevant)));
      const ndcg = mean(ann.map((ids, i) => ndcgAt(ids, s.queries[i].relevant)));
      const base = one.sets[setName];
      const baseRecall = mean(base.lists[mode].map((ids, i) => recallAt(ids, base.queries[i].relevant)));
      const baseNdcg = mean(base.lists[mode].map((ids, i) => ndcgAt(ids, base.queries[i].relevant)));
      const annVsExact = mean(ann.map((ids, i) => ids.filter((id) => exact[i].includes(id)).length / Math.max(1, exact[i].length)));
      const identical = exact.filter((ids, i) => JSON.stringify(ids) === JSON.stringify(base.lists[`${mode}-exact`][i])).length;
      const ratio = r === one ? "" : `${(recall / baseRecall).toFixed(4)} / ${(ndcg / baseNdcg).toFixed(4)}`;
      console.log(`| ${setName} (${s.queries.length} queries) | ${r.label} | ${mode} | ${recall.toFixed(4)} | ${ndcg.toFixed(4)} | ${ratio} | ${annVsExact.toFixed(4)} | ${identical} of ${exact.length} |`);
    }
  }
}
