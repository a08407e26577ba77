// Validates memories.jsonl and queries.jsonl in this directory.
// Usage: node tests/data/convmem/check.mjs
// Prints counts per kind/type; exits 1 on any problem. No dependencies.

import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const problems = [];
const problem = (msg) => problems.push(msg);

const KINDS = new Set(['preference', 'fact', 'event']);
const TYPES = new Set(['paraphrase', 'keyword', 'temporal', 'multi']);
const MIN_COUNT = 320;
const MAX_TEXT = 300;

function readJsonl(name) {
  let raw;
  try {
    raw = readFileSync(join(here, name), 'utf8');
  } catch (e) {
    problem(`${name}: cannot read (${e.message})`);
    return [];
  }
  if (raw.length && !raw.endsWith('\n')) problem(`${name}: no trailing newline`);
  const rows = [];
  const lines = raw.split('\n');
  lines.forEach((line, i) => {
    if (i === lines.length - 1 && line === '') return; // after final newline
    if (line.trim() === '') {
      problem(`${name}:${i + 1}: empty line`);
      return;
    }
    try {
      const v = JSON.parse(line);
      if (v === null || typeof v !== 'object' || Array.isArray(v)) {
        problem(`${name}:${i + 1}: not a JSON object`);
      } else {
        rows.push({ line: i + 1, v });
      }
    } catch (e) {
      problem(`${name}:${i + 1}: invalid JSON (${e.message})`);
    }
  });
  return rows;
}

const isNonEmptyString = (s) => typeof s === 'string' && s.trim().length > 0;
const normText = (s) => s.toLowerCase().replace(/\s+/g, ' ').replace(/[.?!]+$/, '').trim();

function validDate(s) {
  if (typeof s !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(s)) return false;
  const [y, m, d] = s.split('-').map(Number);
  const dt = new Date(Date.UTC(y, m - 1, d));
  return dt.getUTCFullYear() === y && dt.getUTCMonth() === m - 1 && dt.getUTCDate() === d;
}

// ---- memories ----
const mems = readJsonl('memories.jsonl');
const memIds = new Set();
const memTexts = new Map();
const kindCounts = Object.fromEntries([...KINDS].map((k) => [k, 0]));
const MEM_KEYS = new Set(['id', 'text', 'kind', 'topics', 'event_date']);

for (const { line, v } of mems) {
  const at = `memories.jsonl:${line}`;
  for (const k of Object.keys(v)) if (!MEM_KEYS.has(k)) problem(`${at}: unknown field "${k}"`);
  if (typeof v.id !== 'string' || !/^m\d{4}$/.test(v.id)) problem(`${at}: bad id ${JSON.stringify(v.id)}`);
  else if (memIds.has(v.id)) problem(`${at}: duplicate id ${v.id}`);
  else memIds.add(v.id);

  if (!isNonEmptyString(v.text)) problem(`${at}: missing text`);
  else {
    if (v.text.length > MAX_TEXT) problem(`${at}: text longer than ${MAX_TEXT} chars (${v.text.length})`);
    if (v.text !== v.text.trim()) problem(`${at}: text has leading/trailing whitespace`);
    const n = normText(v.text);
    if (memTexts.has(n)) problem(`${at}: duplicate text (same as ${memTexts.get(n)})`);
    else memTexts.set(n, v.id);
  }

  if (!KINDS.has(v.kind)) problem(`${at}: bad kind ${JSON.stringify(v.kind)}`);
  else kindCounts[v.kind]++;

  if (!Array.isArray(v.topics) || v.topics.length === 0 || !v.topics.every(isNonEmptyString)) {
    problem(`${at}: topics must be a non-empty array of strings`);
  }

  if (v.kind === 'event') {
    if (!validDate(v.event_date)) problem(`${at}: event needs event_date YYYY-MM-DD, got ${JSON.stringify(v.event_date)}`);
  } else if ('event_date' in v) {
    problem(`${at}: event_date only allowed on events`);
  }
}

// ---- queries ----
const qs = readJsonl('queries.jsonl');
const qids = new Set();
const qTexts = new Map();
const typeCounts = Object.fromEntries([...TYPES].map((t) => [t, 0]));
const Q_KEYS = new Set(['qid', 'text', 'relevant', 'type']);
const referenced = new Set();
let relTotal = 0;

for (const { line, v } of qs) {
  const at = `queries.jsonl:${line}`;
  for (const k of Object.keys(v)) if (!Q_KEYS.has(k)) problem(`${at}: unknown field "${k}"`);
  if (typeof v.qid !== 'string' || !/^q\d{4}$/.test(v.qid)) problem(`${at}: bad qid ${JSON.stringify(v.qid)}`);
  else if (qids.has(v.qid)) problem(`${at}: duplicate qid ${v.qid}`);
  else qids.add(v.qid);

  if (!isNonEmptyString(v.text)) problem(`${at}: missing text`);
  else {
    const n = normText(v.text);
    if (qTexts.has(n)) problem(`${at}: duplicate query text (same as ${qTexts.get(n)})`);
    else qTexts.set(n, v.qid);
  }

  if (!TYPES.has(v.type)) problem(`${at}: bad type ${JSON.stringify(v.type)}`);
  else typeCounts[v.type]++;

  if (!Array.isArray(v.relevant) || v.relevant.length === 0) {
    problem(`${at}: relevant must be a non-empty array`);
    continue;
  }
  if (new Set(v.relevant).size !== v.relevant.length) problem(`${at}: repeated id in relevant`);
  for (const id of v.relevant) {
    if (!memIds.has(id)) problem(`${at}: relevant id ${JSON.stringify(id)} is not a memory`);
    referenced.add(id);
  }
  relTotal += v.relevant.length;
  if (v.type === 'multi' && (v.relevant.length < 2 || v.relevant.length > 4)) {
    problem(`${at}: multi query must list 2-4 memories (has ${v.relevant.length})`);
  }
}

// The anchor query the brief requires.
const anchor = qs.find(({ v }) => v.text === 'what units does the user like?');
const metric = mems.find(({ v }) => v.text === 'User prefers metric units for all measurements.');
if (!anchor) problem('missing query "what units does the user like?"');
if (!metric) problem('missing memory "User prefers metric units for all measurements."');
if (anchor && metric) {
  const r = anchor.v.relevant;
  if (!(Array.isArray(r) && r.length === 1 && r[0] === metric.v.id)) {
    problem(`"what units does the user like?" must have exactly [${metric.v.id}] as relevant`);
  }
}

if (mems.length < MIN_COUNT) problem(`only ${mems.length} memories (need >= ${MIN_COUNT})`);
if (qs.length < MIN_COUNT) problem(`only ${qs.length} queries (need >= ${MIN_COUNT})`);

// ---- report ----
const pct = (n, d) => (d ? ((100 * n) / d).toFixed(1) : '0.0');
console.log(`memories: ${mems.length}`);
for (const k of KINDS) console.log(`  ${k.padEnd(10)} ${String(kindCounts[k]).padStart(4)}  (${pct(kindCounts[k], mems.length)}%)`);
console.log(`queries: ${qs.length}`);
for (const t of TYPES) console.log(`  ${t.padEnd(10)} ${String(typeCounts[t]).padStart(4)}  (${pct(typeCounts[t], qs.length)}%)`);
console.log(`relevance labels: ${relTotal} (${(relTotal / (qs.length || 1)).toFixed(2)} per query)`);
console.log(`memories referenced by at least one query: ${referenced.size}/${memIds.size}`);

if (problems.length) {
  console.error(`\n${problems.length} problem(s):`);
  for (const p of problems) console.error(`  - ${p}`);
  process.exit(1);
}
console.log('\nOK');
