// Validates facts.jsonl and questions.jsonl in this directory, checks that
// gen.mjs regenerates them byte for byte (twice, in two fresh processes),
// checks the MiniLM vector files (facts.minilm.f32, questions.minilm.f32:
// one 384-d unit-norm float32 row per line; sizes and norms only, they are
// not regenerated here, see README) and prints summary counts.
// Usage: node tests/data/kubench/check.mjs. Exits 1 on any problem. No dependencies.
import { existsSync, readFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const problems = [];
const problem = (m) => problems.push(m);
const MIN = { facts: 200, current: 400, as_of: 200 };
const UPDATES = [1, 5];
// The harness (benches/ltm/knowledge-update.mjs) ingests in file order in
// batches of this size; a back-dated version that arrives in a later batch
// than a newer one is the case that proves ordering by valid_from.
const INGEST_BATCH = 100;
const RFC3339_UTC = /^2025-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const sha = (s) => createHash("sha256").update(s).digest("hex");

const raw = {};
function read(name) {
  raw[name] = readFileSync(join(here, name), "utf8");
  if (!raw[name].endsWith("\n")) problem(`${name}: no trailing newline`);
  return raw[name].slice(0, -1).split("\n").map((l, i) => {
    try { return JSON.parse(l); } catch { problem(`${name}:${i + 1}: bad JSON`); return {}; }
  });
}
const records = read("facts.jsonl");
const questions = read("questions.jsonl");
const ms = (s) => Date.parse(s);

// Things edgemem's scrubber could redact, which would change a text under
// the benchmark's feet: emails, phone-like digit runs, long hex, key-like tokens.
const RISKY = [/@/, /\d[\d ().-]{6,}\d/, /[0-9a-f]{32,}/i, /\b(sk|pk|ghp|xox[a-z])[-_][A-Za-z0-9]/, /(password|secret|token|api[_ ]?key)\s*[:=]/i];

// records
const byId = new Map();
const chains = new Map(); // "user|fact_key" -> [{rec, line}]
const users = new Map(); // user_id -> {versions, distractors, texts:Set}
records.forEach((r, line) => {
  for (const f of ["id", "user_id", "namespace", "text"]) if (typeof r[f] !== "string" || !r[f]) problem(`line ${line + 1}: missing ${f}`);
  if (r.namespace !== "kubench") problem(`${r.id}: namespace ${r.namespace}`);
  if (byId.has(r.id)) problem(`duplicate id ${r.id}`);
  byId.set(r.id, r);
  const u = users.get(r.user_id) ?? { versions: 0, distractors: 0, texts: new Set() };
  if (u.texts.has(r.text)) problem(`${r.id}: text repeated within ${r.user_id}`);
  u.texts.add(r.text);
  for (const re of RISKY) if (re.test(r.text)) problem(`${r.id}: text may be scrubbed (${re}): ${r.text}`);
  if ("fact_key" in r) {
    u.versions++;
    if (!/^[a-z]+\.[a-z_]+$/.test(r.fact_key)) problem(`${r.id}: fact_key ${r.fact_key}`);
    if (!RFC3339_UTC.test(r.valid_from ?? "")) problem(`${r.id}: valid_from ${r.valid_from}`);
    if ("created_at" in r) problem(`${r.id}: a version carries created_at (the harness derives it)`);
    const k = `${r.user_id}|${r.fact_key}`;
    if (!chains.has(k)) chains.set(k, []);
    chains.get(k).push({ rec: r, line });
  } else {
    u.distractors++;
    if (!RFC3339_UTC.test(r.created_at ?? "")) problem(`${r.id}: created_at ${r.created_at}`);
    if ("valid_from" in r) problem(`${r.id}: valid_from without fact_key`);
  }
  users.set(r.user_id, u);
});

// chains: 2..6 versions, distinct valid_from; how many arrive out of order
const updates = new Map(); // updates per fact -> facts
let outOfOrder = 0;
let acrossBatches = 0;
const ordered = new Map(); // chain key -> ids by valid_from
for (const [k, list] of chains) {
  const n = list.length - 1;
  if (n < UPDATES[0] || n > UPDATES[1]) problem(`${k}: ${n} updates`);
  updates.set(n, (updates.get(n) ?? 0) + 1);
  const byTime = [...list].sort((a, b) => ms(a.rec.valid_from) - ms(b.rec.valid_from));
  for (let i = 1; i < byTime.length; i++) if (byTime[i].rec.valid_from === byTime[i - 1].rec.valid_from) problem(`${k}: two versions share valid_from`);
  ordered.set(k, byTime.map((x) => x.rec.id));
  // out of order: some version arrives after a version that is newer than it
  let late = false;
  let lateBatch = false;
  for (let i = 0; i < byTime.length; i++) for (let j = i + 1; j < byTime.length; j++) {
    if (byTime[i].line > byTime[j].line) {
      late = true;
      if (Math.floor(byTime[i].line / INGEST_BATCH) > Math.floor(byTime[j].line / INGEST_BATCH)) lateBatch = true;
    }
  }
  outOfOrder += late;
  acrossBatches += lateBatch;
}
if (chains.size < MIN.facts) problem(`only ${chains.size} facts`);
if (acrossBatches === 0) problem("no chain has a back-dated version arriving in a later batch");

// questions
const qids = new Set();
const count = { current: 0, as_of: 0 };
const asOfOnSuperseded = { yes: 0, no: 0 };
const asked = new Set();
for (const q of questions) {
  if (qids.has(q.qid)) problem(`duplicate qid ${q.qid}`);
  qids.add(q.qid);
  if (!(q.kind in count)) { problem(`${q.qid}: kind ${q.kind}`); continue; }
  count[q.kind]++;
  for (const f of ["user_id", "fact_key", "question", "answer_id"]) if (typeof q[f] !== "string" || !q[f]) problem(`${q.qid}: missing ${f}`);
  const k = `${q.user_id}|${q.fact_key}`;
  const chain = ordered.get(k);
  if (!chain) { problem(`${q.qid}: no chain ${k}`); continue; }
  asked.add(k);
  if (JSON.stringify(q.version_ids) !== JSON.stringify(chain)) problem(`${q.qid}: version_ids are not the chain in valid_from order`);
  const at = chain.indexOf(q.answer_id);
  if (at < 0) { problem(`${q.qid}: answer_id not in the chain`); continue; }
  if (q.kind === "current") {
    if (at !== chain.length - 1) problem(`${q.qid}: current answer is not the newest version`);
    if ("as_of" in q) problem(`${q.qid}: current question with as_of`);
  } else {
    if (!RFC3339_UTC.test(q.as_of ?? "")) { problem(`${q.qid}: as_of ${q.as_of}`); continue; }
    const t = ms(q.as_of);
    const from = ms(byId.get(chain[at]).valid_from);
    const to = at + 1 < chain.length ? ms(byId.get(chain[at + 1]).valid_from) : Infinity;
    if (!(from < t && t < to)) problem(`${q.qid}: as_of ${q.as_of} not strictly inside the answer's validity`);
    if (at < chain.length - 1) asOfOnSuperseded.yes++; else asOfOnSuperseded.no++;
  }
}
for (const k of chains.keys()) if (!asked.has(k)) problem(`${k}: no question`);
for (const [kind, n] of Object.entries(count)) if (n < MIN[kind]) problem(`only ${n} ${kind} questions`);

// determinism: two fresh processes must produce the bytes on disk
const genUrl = pathToFileURL(join(here, "gen.mjs")).href;
const script = `import(${JSON.stringify(genUrl)}).then(({generate})=>{const f=generate();const h=require("crypto");` +
  `for(const[n,t]of Object.entries(f))console.log(n,h.createHash("sha256").update(t).digest("hex"))})`;
const runs = [0, 1].map(() => spawnSync(process.execPath, ["-e", script], { encoding: "utf8" }));
const onDisk = Object.keys(raw).map((n) => `${n} ${sha(raw[n])}`).join("\n") + "\n";
for (const r of runs) {
  if (r.status !== 0) problem(`gen.mjs failed: ${r.stderr}`);
  else if (r.stdout !== onDisk) problem(`gen.mjs output differs from the files on disk:\n${r.stdout}vs\n${onDisk}`);
}

// MiniLM vectors: one 384-d normalised little-endian float32 row per line
const DIM = 384;
const vectorRows = {};
for (const [file, lines] of [["facts.minilm.f32", records.length], ["questions.minilm.f32", questions.length]]) {
  const path = join(here, file);
  if (!existsSync(path)) { problem(`${file}: missing`); continue; }
  const b = readFileSync(path);
  if (b.length !== lines * DIM * 4) { problem(`${file}: ${b.length} bytes, expected ${lines} x ${DIM} x 4 = ${lines * DIM * 4}`); continue; }
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  for (let r = 0; r < lines; r++) {
    let s = 0;
    for (let j = 0; j < DIM; j++) s += dv.getFloat32((r * DIM + j) * 4, true) ** 2;
    if (!(Math.abs(s - 1) < 1e-3)) { problem(`${file}: row ${r} has squared norm ${s}`); break; }
  }
  vectorRows[file] = `${lines} x ${DIM}, sha256 ${sha(b)}`;
}

// summary
const versions = [...chains.values()].reduce((n, l) => n + l.length, 0);
const distractors = records.length - versions;
const perUser = [...users.values()].map((u) => u.versions + u.distractors);
const keys = new Map();
for (const k of chains.keys()) { const f = k.split("|")[1]; keys.set(f, (keys.get(f) ?? 0) + 1); }
console.log("| users | facts | versions | distractors | records | current questions | as_of questions |");
console.log("|---:|---:|---:|---:|---:|---:|---:|");
console.log(`| ${users.size} | ${chains.size} | ${versions} | ${distractors} | ${records.length} | ${count.current} | ${count.as_of} |`);
console.log(`updates per fact: ${[...updates].sort((a, b) => a[0] - b[0]).map(([n, f]) => `${n}: ${f}`).join(", ")}`);
console.log(`facts per fact_key: ${[...keys].sort().map(([k, n]) => `${k} ${n}`).join(", ")}`);
console.log(`records per user: ${Math.min(...perUser)}-${Math.max(...perUser)}`);
console.log(`chains arriving out of valid_from order: ${outOfOrder} of ${chains.size}; across ingest batches of ${INGEST_BATCH}: ${acrossBatches}`);
console.log(`as_of questions on a superseded version: ${asOfOnSuperseded.yes}, on the current one: ${asOfOnSuperseded.no}`);
console.log(`MiniLM vectors: ${Object.entries(vectorRows).map(([f, s]) => `${f} ${s}`).join("; ") || "none"}`);
if (problems.length) {
  console.error(`${problems.length} problem(s):\n${problems.slice(0, 50).join("\n")}`);
  process.exit(1);
}
console.log("ok");
