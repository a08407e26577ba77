// Validates dialogs.jsonl and questions.jsonl in this directory, checks that
// gen.mjs regenerates them byte for byte (twice, in two fresh processes), and
// prints a summary table. It also checks that the MiniLM vector files
// (turns.minilm.f32, questions.minilm.f32) hold one 384-d unit-norm float32
// row per line of dialogs.jsonl / questions.jsonl (sizes and norms only: they
// are not regenerated here, see README). Usage: node tests/data/convbench/check.mjs
// Exits 1 on any problem. No dependencies.
import { existsSync, readFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const problems = [];
const problem = (m) => problems.push(m);
const KINDS = ["single_hop", "multi_hop", "temporal", "adversarial"];
const MIN = { dialogs: 24, turnsPerDialog: 100, sessionsPerDialog: 3, questions: 480 };
const sha = (s) => createHash("sha256").update(s).digest("hex");

const raw = {};
function read(name) {
  raw[name] = readFileSync(join(here, name), "utf8");
  if (!raw[name].endsWith("\n")) problem(`${name}: no trailing newline`);
  return raw[name].slice(0, -1).split("\n").map((l, i) => {
    try { return JSON.parse(l); } catch { problem(`${name}:${i + 1}: bad JSON`); return {}; }
  });
}
const turns = read("dialogs.jsonl");
const questions = read("questions.jsonl");

// turns
const byId = new Map();
const dialogs = new Map(); // id -> {turns, sessions:Set, dates:Set, speaker}
const ISO = /^\d{4}-\d{2}-\d{2}$/;
for (const t of turns) {
  for (const f of ["dialog_id", "session_id", "session_date", "turn_id", "speaker", "role", "text"])
    if (typeof t[f] !== "string" || !t[f]) problem(`turn ${t.turn_id}: missing ${f}`);
  if (!ISO.test(t.session_date)) problem(`turn ${t.turn_id}: bad session_date`);
  if (byId.has(t.turn_id)) problem(`duplicate turn_id ${t.turn_id}`);
  byId.set(t.turn_id, t);
  const d = dialogs.get(t.dialog_id) ?? { turns: 0, sessions: new Map(), users: new Set() };
  d.turns++;
  const prev = d.sessions.get(t.session_id);
  if (prev && prev !== t.session_date) problem(`${t.session_id}: two dates`);
  d.sessions.set(t.session_id, t.session_date);
  if (t.role === "user") d.users.add(t.speaker);
  dialogs.set(t.dialog_id, d);
}
if (dialogs.size < MIN.dialogs) problem(`only ${dialogs.size} dialogs`);
for (const [id, d] of dialogs) {
  if (d.turns < MIN.turnsPerDialog) problem(`${id}: ${d.turns} turns`);
  if (d.sessions.size < MIN.sessionsPerDialog) problem(`${id}: ${d.sessions.size} sessions`);
  if (d.users.size !== 1) problem(`${id}: ${d.users.size} user names`);
  const ds = [...d.sessions.values()];
  for (let i = 1; i < ds.length; i++) if (ds[i] <= ds[i - 1]) problem(`${id}: session dates not increasing`);
}

// questions
const STOP = new Set("a an the and or of to in on at for with my i me you your we our did do does what when where which who whom how is was were be been it its that this there their they he she her his than then from by as about before after".split(" "));
const words = (s) => s.toLowerCase().match(/[a-z0-9]+/g)?.filter((w) => !STOP.has(w)) ?? [];
const DAY = 86_400_000;
const qids = new Set();
const splitOf = new Map();
let noOverlap = 0;
const count = {};
for (const q of questions) {
  if (qids.has(q.qid)) problem(`duplicate qid ${q.qid}`);
  qids.add(q.qid);
  if (!KINDS.includes(q.kind)) problem(`${q.qid}: kind ${q.kind}`);
  if (!["dev", "test"].includes(q.split)) problem(`${q.qid}: split ${q.split}`);
  if (splitOf.has(q.dialog_id) && splitOf.get(q.dialog_id) !== q.split) problem(`${q.dialog_id}: in two splits`);
  splitOf.set(q.dialog_id, q.split);
  count[q.split] ??= {};
  count[q.split][q.kind] = (count[q.split][q.kind] ?? 0) + 1;
  if (!Array.isArray(q.evidence) || q.evidence.length === 0) { problem(`${q.qid}: no evidence`); continue; }
  const ev = q.evidence.map((id) => byId.get(id));
  if (ev.some((t) => !t)) { problem(`${q.qid}: evidence turn missing`); continue; }
  if (ev.some((t) => t.dialog_id !== q.dialog_id)) problem(`${q.qid}: evidence in another dialog`);
  if (q.kind === "multi_hop" && q.evidence.length < 2) problem(`${q.qid}: multi_hop with one evidence turn`);
  // derivable: a date answer lies within 14 days before an evidence session,
  // or is written in an evidence turn (as 7 May 2023) or is 6 days after the
  // next session (the trip); otherwise some content word of the answer (or
  // of its first clause for adversarial answers) occurs in the evidence.
  const evText = ev.map((t) => t.text).join(" ");
  const m = q.answer.match(/(\d{4}-\d{2}-\d{2})/);
  if (q.kind === "temporal" && m && /^(around )?\d{4}-\d{2}-\d{2}$|^[a-z]/.test(q.answer)) {
    const a = Date.parse(m[1]);
    const sess = ev.map((t) => Date.parse(t.session_date));
    const x = new Date(a);
    const longForm = `${x.getUTCDate()} ${x.toLocaleString("en-GB", { month: "long", timeZone: "UTC" })} ${x.getUTCFullYear()}`;
    const ok = sess.some((s) => s - a >= 0 && s - a <= 14 * DAY) || evText.includes(longForm);
    if (!ok) problem(`${q.qid}: date ${m[1]} not derivable from evidence`);
  } else if (!/^(before|after)$/.test(q.answer)) {
    const aw = words(q.answer.replace(/\(.*?\)/g, ""));
    const ew = new Set(words(evText));
    if (!aw.some((w) => ew.has(w))) problem(`${q.qid}: answer shares no word with evidence`);
  }
  if (!words(q.question).some((w) => new Set(words(evText)).has(w))) noOverlap++;
}
for (const id of dialogs.keys()) if (!splitOf.has(id)) problem(`${id}: no questions`);
if (questions.length < MIN.questions) problem(`only ${questions.length} questions`);

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
for (const [file, lines] of [["turns.minilm.f32", turns.length], ["questions.minilm.f32", questions.length]]) {
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
  vectorRows[file] = lines;
}

// summary
const dialogsBySplit = { dev: 0, test: 0 };
const turnsBySplit = { dev: 0, test: 0 };
for (const [id, s] of splitOf) { dialogsBySplit[s]++; turnsBySplit[s] += dialogs.get(id).turns; }
const pad = (s, n) => String(s).padStart(n);
console.log(`| split | dialogs | turns | ${KINDS.join(" | ")} | total |`);
console.log(`|---|---:|---:|${KINDS.map(() => "---:").join("|")}|---:|`);
for (const s of ["dev", "test"]) {
  const c = count[s] ?? {};
  const tot = KINDS.reduce((n, k) => n + (c[k] ?? 0), 0);
  console.log(`| ${s} | ${dialogsBySplit[s]} | ${turnsBySplit[s]} | ${KINDS.map((k) => pad(c[k] ?? 0, 3)).join(" | ")} | ${tot} |`);
}
const all = KINDS.map((k) => (count.dev?.[k] ?? 0) + (count.test?.[k] ?? 0));
console.log(`| all | ${dialogs.size} | ${turns.length} | ${all.map((n) => pad(n, 3)).join(" | ")} | ${questions.length} |`);
const per = [...dialogs.values()].map((d) => d.turns);
const ses = [...dialogs.values()].map((d) => d.sessions.size);
console.log(`turns per dialog ${Math.min(...per)}-${Math.max(...per)}, sessions per dialog ${Math.min(...ses)}-${Math.max(...ses)}`);
console.log(`questions sharing no content word with their evidence: ${noOverlap} (${((100 * noOverlap) / questions.length).toFixed(1)}%)`);
console.log(`MiniLM vectors: ${Object.entries(vectorRows).map(([f, n]) => `${f} ${n} x ${DIM}`).join(", ") || "none"}`);
console.log(`regenerated twice: ${runs.every((r) => r.status === 0 && r.stdout === onDisk) ? "identical to the files" : "DIFFERENT"}`);
if (problems.length) {
  console.error(`${problems.length} problem(s):\n` + problems.slice(0, 50).join("\n"));
  process.exit(1);
}
console.log("ok");
