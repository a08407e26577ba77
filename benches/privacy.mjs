// The privacy scrub side by side with a JS peer (@redactpii/node 1.0.17,
// zero-dependency regex redaction, "the modern fork" of redact-pii) in one
// Node process, on the same texts:
//   1. throughput in MB/s over the shared token corpus (prose, code, man
//      pages, i18n: 2.8 MB) and over the labelled set's agent sentences;
//   2. on the labelled set (tests/data/privacy/labelled.jsonl): how many
//      labelled spans each removes (recall) and how many look-alikes each
//      destroys (order ids, prices, dates, versions, hashes, tracking numbers);
//   3. secret-detector hits on the token corpus (the goal is 0).
//
//   make pkg && node benches/privacy.mjs
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { scrubText } from "edgemem";
import { Redactor } from "@redactpii/node";

const CORPUS = new URL("../../shared/data/tokens/", import.meta.url);
const manifest = JSON.parse(readFileSync(new URL("manifest.json", CORPUS), "utf8"));
const corpus = manifest.files.map((f) => readFileSync(new URL(f.path, CORPUS), "utf8"));
const labelled = readFileSync(new URL("../tests/data/privacy/labelled.jsonl", import.meta.url), "utf8").trim().split("\n").map((l) => JSON.parse(l));
const KEY = "bench-privacy-secret-0123456789abcdef";
const redactor = new Redactor();

const systems = {
  "edgemem scrubText (placeholders)": (t) => scrubText(t).text,
  "edgemem scrubText (keyed pseudonyms)": (t) => scrubText(t, { privacyKey: KEY }).text,
  "@redactpii/node Redactor.redact": (t) => redactor.redact(t),
};

function throughput(fn, texts, minMs = 1500) {
  const bytes = texts.reduce((n, t) => n + Buffer.byteLength(t), 0);
  for (const t of texts.slice(0, 20)) fn(t);
  let rounds = 0;
  const t0 = performance.now();
  do {
    for (const t of texts) fn(t);
    rounds++;
  } while (performance.now() - t0 < minMs);
  return (bytes * rounds) / 1e6 / ((performance.now() - t0) / 1000);
}

const labelledTexts = labelled.map((l) => l.text);
const rows = [];
for (const [name, fn] of Object.entries(systems)) {
  let spans = 0;
  let removed = 0;
  let lookalikes = 0;
  let destroyed = 0;
  for (const l of labelled) {
    const out = fn(l.text);
    for (const s of l.spans) {
      spans++;
      if (!out.includes(s.value)) removed++;
    }
    for (const v of l.lookalikes) {
      lookalikes++;
      if (!out.includes(v)) destroyed++;
    }
  }
  rows.push({
    system: name,
    "corpus MB/s": throughput(fn, corpus).toFixed(1),
    "agent text MB/s": throughput(fn, labelledTexts).toFixed(1),
    "spans removed": `${removed}/${spans}`,
    "look-alikes destroyed": `${destroyed}/${lookalikes}`,
  });
}
const base = Number(rows[0]["corpus MB/s"]);
for (const r of rows) r["corpus ratio"] = `${(Number(r["corpus MB/s"]) / base).toFixed(2)}×`;
console.log(`privacy scrub, ${labelled.length} labelled texts, ${corpus.length} corpus files (${(corpus.reduce((n, t) => n + Buffer.byteLength(t), 0) / 1e6).toFixed(2)} MB), node ${process.version}`);
console.table(rows);
let secretHits = 0;
const hitFiles = [];
for (const [i, t] of corpus.entries()) {
  const n = Object.values(scrubText(t, { anonymize: false }).redactions).reduce((a, b) => a + b, 0);
  if (n) hitFiles.push(`${manifest.files[i].path}: ${n}`);
  secretHits += n;
}
console.log(`secret detector on the token corpus: ${secretHits} hits${hitFiles.length ? ` (${hitFiles.join(", ")})` : ""}`);
