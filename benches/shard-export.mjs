// A sharded tenant's export (issue 21), under `wrangler dev` on this
// machine: the same records (EXPORT_RECORDS, default 16,000, over 2,000
// users) loaded into a tenant of EXPORT_SHARDS shards (default 4) and into
// one unsharded object, then `GET /v1/export?vectors=f32` of each, read as
// a stream. At the default the file is past 32 MiB, which a sharded
// tenant's export could not pass before it streamed (the front merged
// every shard's whole export in its memory).
//
// Reported for each: the file's bytes and lines, time to the first byte
// and to the last, MB/s, and the check that every record is in it once
// with the end line counting the lines before it; then the file imported
// back into an empty namespace of the same deployment (past 32 MiB, one
// object refuses it: its import is read whole). The ratio is the sharded
// export's time over one object's. Then `POST /v1/snapshots/publish`: a
// sharded tenant's replica is its export written to KV as it streams (one
// object publishes a snapshot), and once wrangler has stopped, its KV (on
// disk) is opened in Miniflare and the replica read by the npm package's
// `Memory.openPublished`: time, wasm memory after, every record in it.
//
//   make build && node benches/shard-export.mjs
//   EXPORT_RECORDS=40000 EXPORT_SHARDS=8 node benches/shard-export.mjs
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { execFileSync } from "node:child_process";
import { startWranglerDev } from "../tests/e2e/wrangler-dev.mjs";
import { next, sentence } from "./shard-corpus.mjs";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const RECORDS = Number(process.env.EXPORT_RECORDS ?? 16_000);
const SHARDS = Number(process.env.EXPORT_SHARDS ?? 4);
const USERS = 2000;
const NS = "exportbench";

/** The records, the same for both deployments. */
const records = Array.from({ length: RECORDS }, (_, j) => ({ id: `r${j}`, user_id: `user-${next(USERS)}`, text: `${sentence(6 + next(6))} ${j}` }));

async function load(base) {
  const t = performance.now();
  for (let i = 0; i < RECORDS; i += 500) {
    const r = await fetch(`${base}/v1/long-term-memory/?namespace=${NS}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ memories: records.slice(i, i + 500) }) });
    if (r.status !== 200) throw new Error(`load at ${i}: ${r.status} ${await r.text()}`);
  }
  return (performance.now() - t) / 1000;
}

/** The export read as a stream: bytes, lines, first byte, last byte, checks. */
async function exportOnce(base) {
  const t = performance.now();
  const r = await fetch(`${base}/v1/export?namespace=${NS}&vectors=f32`);
  if (r.status !== 200) throw new Error(`export: ${r.status} ${await r.text()}`);
  const reader = r.body.getReader();
  const decoder = new TextDecoder();
  const chunks = [];
  let first = null;
  let bytes = 0;
  let rest = "";
  let lines = 0;
  let last = null;
  const ids = new Set();
  let twice = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    first ??= performance.now() - t;
    bytes += value.length;
    chunks.push(value);
    const text = rest + decoder.decode(value, { stream: true });
    const parts = text.split("\n");
    rest = parts.pop();
    for (const l of parts) {
      if (!l.trim()) continue;
      lines++;
      if (l.startsWith('{"type":"memory"')) {
        const id = /"record":\{"id":"([^"]+)"/.exec(l)[1];
        if (ids.has(id)) twice++;
        ids.add(id);
      }
      last = l;
    }
  }
  const ms = performance.now() - t;
  const end = JSON.parse(last);
  const whole = end.type === "end" && end.lines === lines - 1;
  return { bytes, lines, first_ms: first, ms, records: ids.size, twice, whole, body: new Blob(chunks) };
}

/** The file imported into namespace `ns` of the same deployment. */
async function importOnce(base, ns, body) {
  const t = performance.now();
  const r = await fetch(`${base}/v1/import?namespace=${ns}`, { method: "POST", headers: { "content-type": "application/x-ndjson" }, body });
  const text = await r.text();
  const ms = performance.now() - t;
  if (r.status !== 200) return { ms, status: r.status, text: text.slice(0, 300) };
  const json = JSON.parse(text);
  return { ms, status: r.status, memories: json.memories };
}

/** `POST /v1/snapshots/publish` of the tenant. */
async function publishOnce(base) {
  const t = performance.now();
  const r = await fetch(`${base}/v1/snapshots/publish?namespace=${NS}`, { method: "POST" });
  const text = await r.text();
  const ms = performance.now() - t;
  return r.status === 200 ? { ms, status: 200, ...JSON.parse(text) } : { ms, status: r.status, text: text.slice(0, 200) };
}

/** The replica wrangler left in `dir`'s KV, read by the npm package in a
 * process of its own (benches/replica-read.mjs). */
function readReplica(dir) {
  const out = execFileSync(process.execPath, [join(ROOT, "benches", "replica-read.mjs"), join(dir, "v3", "kv"), `${NS}/`], { encoding: "utf8", maxBuffer: 1 << 20 });
  return JSON.parse(out.trim().split("\n").at(-1));
}

const results = [];
const published = [];
// One object may hold at most SNAPSHOT_BYTES_MAX (96 MiB): its quota is
// raised to it, so the figure is the object's, not the default quota's.
const quota = { EDGEMEM_QUOTA_BYTES: String(96 * 1024 * 1024) };
const imports = [];
for (const [label, vars] of [[`${SHARDS} shards`, { EDGEMEM_SHARDS_INITIAL: String(SHARDS), EDGEMEM_SHARD_SPLIT_RECORDS: "1000000", ...quota }], ["one object", quota]]) {
  const dir = mkdtempSync(join(tmpdir(), "edgemem-export-bench-"));
  const dev = await startWranglerDev(ROOT, { persistDir: dir, vars: { EDGEMEM_DEV_MODE: "1", ...vars } });
  const base = dev.url.replace(/\/$/, "");
  try {
    let loadS;
    try {
      loadS = await load(base);
    } catch (e) {
      process.stderr.write(`${label}: ${e.message.slice(0, 300)}\n`);
      results.push({ label, failed: e.message.slice(0, 200) });
      continue;
    }
    process.stderr.write(`${label}: loaded ${RECORDS} records in ${loadS.toFixed(1)} s\n`);
    const runs = [];
    for (let i = 0; i < 3; i++) runs.push(await exportOnce(base));
    results.push({ label, runs });
    // The file back into an empty namespace of the same deployment.
    const back = await importOnce(base, `${NS}-back`, runs.at(-1).body);
    imports.push({ label, bytes: runs.at(-1).bytes, ...back });
    process.stderr.write(`${label}: import ${JSON.stringify(back).slice(0, 300)}\n`);
    const pubs = [];
    for (let i = 0; i < 2; i++) pubs.push(await publishOnce(base));
    process.stderr.write(`${label}: publish ${JSON.stringify(pubs).slice(0, 300)}\n`);
    await dev.stop();
    const read = pubs.at(-1).status === 200 ? readReplica(dir) : null;
    published.push({ label, pubs, read });
  } finally {
    await dev.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const mb = (b) => (b / 1024 / 1024).toFixed(1);
console.log(`\n${RECORDS} records × 384 f32, exported with their vectors (3 runs each)\n`);
console.log("| deployment | MiB | lines | first byte | whole file | MiB/s | records once | end line |");
console.log("|---|---:|---:|---:|---:|---:|---|---|");
for (const { label, runs, failed } of results) {
  if (failed) console.log(`| ${label} | — | — | — | — | — | could not load: ${failed} | — |`);
  for (const r of runs ?? []) console.log(`| ${label} | ${mb(r.bytes)} | ${r.lines} | ${r.first_ms.toFixed(0)} ms | ${r.ms.toFixed(0)} ms | ${(r.bytes / 1024 / 1024 / (r.ms / 1000)).toFixed(1)} | ${r.records === RECORDS && r.twice === 0 ? "yes" : `no (${r.records}, ${r.twice} twice)`} | ${r.whole ? "yes" : "no"} |`);
}
console.log("\n| imported into | MiB | status | records | time | MiB/s |");
console.log("|---|---:|---|---:|---:|---:|");
for (const i of imports) console.log(`| ${i.label} | ${mb(i.bytes)} | ${i.status}${i.text ? ` ${i.text.slice(0, 120)}` : ""} | ${i.memories ?? "—"} | ${i.ms.toFixed(0)} ms | ${i.status === 200 ? (i.bytes / 1024 / 1024 / (i.ms / 1000)).toFixed(1) : "—"} |`);
const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const done = results.filter((r) => r.runs);
if (done.length === 2) {
  const [sharded, one] = done.map((r) => median(r.runs.map((x) => x.ms)));
  console.log(`\nmedian whole-file time, sharded / one object: ${(sharded / one).toFixed(2)}`);
}
console.log("\n| published | form | MiB | publish (2 runs) | openPublished in node | wasm memory after | records in the replica |");
console.log("|---|---|---:|---|---:|---:|---:|");
for (const { label, pubs, read } of published) {
  const ok = pubs.filter((p) => p.status === 200);
  const last = pubs.at(-1);
  console.log(`| ${label} | ${last.form ?? (last.status === 200 ? "snapshot" : "—")} | ${last.snapshot_bytes ? mb(last.snapshot_bytes) : "—"} | ${pubs.map((p) => `${p.ms.toFixed(0)} ms${p.status === 200 ? "" : ` (${p.status} ${p.text})`}`).join(", ")} | ${read ? `${read.ms.toFixed(0)} ms` : "—"} | ${read ? `${mb(read.wasm_after)} MiB` : "—"} | ${read ? read.records : "—"}${ok.length ? "" : " (not published)"} |`);
}
