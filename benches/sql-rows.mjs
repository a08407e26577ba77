// Rows read and written per operation on the Durable Object's SQLite
// storage (issue 21, item 1), and what they cost at Cloudflare's list
// prices. Every figure comes from the `x-edgemem-meter` header of a real
// request to `wrangler dev` (workerd's cursor meters `rowsRead` and
// `rowsWritten`, summed over the statements the tenant object ran, and the
// front's Durable Object calls and the tenant object's own). Requests are
// sent one at a time, so each header holds that request's rows alone. Rows
// of other objects (the id directory a create in a named namespace writes
// to, the stash of an erasure) are theirs and not in these counts.
//
//   make build && node benches/sql-rows.mjs
//   ROWS_APPENDS=3000 node benches/sql-rows.mjs
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startWranglerDev } from "../tests/e2e/wrangler-dev.mjs";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const APPENDS = Number(process.env.ROWS_APPENDS ?? 1500);
// List prices beyond the Workers Paid plan's included usage, USD
// (developers.cloudflare.com: Workers and Durable Objects pricing).
const PRICE = { workerRequest: 0.3e-6, objectRequest: 0.15e-6, rowWritten: 1.0e-6, rowRead: 0.001e-6 };

const meter = (h) => Object.fromEntries((h ?? "").split(";").filter(Boolean).map((kv) => kv.trim().split("=")).map(([k, v]) => [k, Number(v)]));

function client(dev, namespace) {
  return async (method, path, body) => {
    const headers = body === undefined ? {} : { "content-type": "application/json" };
    const r = await fetch(`${dev.url}${path.slice(1)}${path.includes("?") ? "&" : "?"}namespace=${namespace}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await r.text();
    if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${text}`);
    return meter(r.headers.get("x-edgemem-meter"));
  };
}

const rows = [];
// Durable Object calls: the front's, and the tenant object's own (its stash).
const calls = (m) => (m.do_calls ?? 0) + (m.object_calls ?? 0);
const record = (op, m, note = "") => rows.push({ op, read: m.rows_read ?? 0, written: m.rows_written ?? 0, calls: m.calls ?? calls(m), note });
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const dir = mkdtempSync(join(tmpdir(), "edgemem-rows-"));
let dev = await startWranglerDev(ROOT, { persistDir: dir });
try {
  const call = client(dev, "rows");
  record("first request to a new tenant (tables, stash probe, marks)", await call("PUT", "/v1/working-memory/s", { context: "c" }));
  const appends = [];
  let snapshot = null;
  for (let i = 0; i < APPENDS; i++) {
    const m = await call("POST", "/v1/working-memory/s/messages", { messages: [{ role: "user", content: `turn ${i}: the otters met by the granite quay to talk about tea` }] });
    appends.push(m);
    if (m.rows_written > 1 && !snapshot) snapshot = { at: i, m };
  }
  const plain = appends.filter((m) => m.rows_written === 1);
  record("append one message (one logged op)", { rows_read: median(plain.map((m) => m.rows_read)), rows_written: median(plain.map((m) => m.rows_written)), calls: median(plain.map(calls)) }, `median of ${plain.length}`);
  if (snapshot) record("the append that took a snapshot (chunks, head, retirement)", snapshot.m, `op ${snapshot.at + 1}`);
  const written = appends.reduce((n, m) => n + m.rows_written, 0);
  record("append, amortized over the run", { rows_read: appends.reduce((n, m) => n + m.rows_read, 0) / APPENDS, rows_written: written / APPENDS, calls: appends.reduce((n, m) => n + calls(m), 0) / APPENDS }, `${APPENDS} appends, ${written} rows`);
  record("create 1 long-term record", await call("POST", "/v1/long-term-memory", { memories: [{ id: "one", text: "a note about otters" }] }));
  const batch = Array.from({ length: 100 }, (_, i) => ({ id: `b${i}`, text: `record ${i} about ${["otters", "granite", "tea"][i % 3]}`, user_id: `u${i % 7}` }));
  record("create 100 long-term records (one batch)", await call("POST", "/v1/long-term-memory", { memories: batch }));
  record("keyword search", await call("POST", "/v1/long-term-memory/search", { text: "otters granite", limit: 10 }));
  record("get a record by id", await call("GET", "/v1/long-term-memory/b7"));
  record("get a session", await call("GET", "/v1/working-memory/s"));
  await call("PUT", "/v1/consent/u3", { long_term: true });
  record("consent erasure (snapshot, stash, deleteAll, rewrite)", await call("DELETE", "/v1/consent/u3"));
  await dev.stop();
  dev = await startWranglerDev(ROOT, { persistDir: dir });
  record("first request after a restart (recovery)", await client(dev, "rows")("GET", "/v1/working-memory/s"));
  await dev.stop();
  // The one-time upgrade of an object written by the key-value release.
  cpSync(join(ROOT, "tests/fixtures/kv-release/state"), dir, { recursive: true, force: true });
  const expected = JSON.parse(readFileSync(join(ROOT, "tests/fixtures/kv-release/expected.json"), "utf8"));
  dev = await startWranglerDev(ROOT, { persistDir: dir });
  const legacy = expected.tenants.legacy;
  record("first request after the upgrade (copy from _cf_KV)", await client(dev, "legacy")("GET", "/v1/working-memory/s1"), `${Object.keys(legacy.records).length} records, 1 snapshot chunk and a log tail`);
} finally {
  await dev.stop();
  rmSync(dir, { recursive: true, force: true });
}

const cost = (r) => 1e6 * (PRICE.workerRequest + r.calls * PRICE.objectRequest + r.written * PRICE.rowWritten + r.read * PRICE.rowRead);
const fmt = (x) => (Number.isInteger(x) ? String(x) : x.toFixed(3));
console.log("| operation | rows read | rows written | DO calls | $ per million | note |");
console.log("|---|---:|---:|---:|---:|---|");
for (const r of rows) console.log(`| ${r.op} | ${fmt(r.read)} | ${fmt(r.written)} | ${fmt(r.calls)} | ${cost(r).toFixed(2)} | ${r.note} |`);
