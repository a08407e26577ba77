// What a request costs a sharded tenant (issue 21), from the meter: every
// figure is read from the `X-Edgemem-Meter` header of real requests under
// `wrangler dev` (the Durable Object calls the front made, `do_calls`; the
// calls a fan-out tree made below it, `tree_calls`; the SQL rows the
// answering object read and wrote), then priced at Cloudflare's list
// prices beyond the Paid plan's included usage: a Worker request $0.30/M,
// a Durable Object request $0.15/M, a row written $1.00/M, a row read
// $0.001/M. Duration and storage are not in it (not measurable locally),
// nor the rows a fan-out's other shards read (a warm object reads none).
//
//   make build && node benches/shard-cost.mjs
//   COST_SHARDS=unsharded,4 COST_SAMPLES=10 node benches/shard-cost.mjs
//   COST_OPS=export,publish node benches/shard-cost.mjs   (operations whose name holds one)
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startWranglerDev } from "../tests/e2e/wrangler-dev.mjs";
import { WORDS, next, sentence } from "./shard-corpus.mjs";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const COUNTS = (process.env.COST_SHARDS ?? "unsharded,1,4,16,64").split(",");
const SAMPLES = Number(process.env.COST_SAMPLES ?? 30);
const OPS = process.env.COST_OPS?.split(",");
const RECORDS = 2000;
const USERS = 200;
const PRICE = { worker: 0.3, request: 0.15, written: 1.0, read: 0.001 };
const records = Array.from({ length: RECORDS }, (_, i) => ({ id: `r${i}`, user_id: `user-${next(USERS)}`, text: `${sentence(6 + next(6))} ${i}`, topics: [WORDS[next(5)]] }));

const meterOf = (h) => Object.fromEntries((h ?? "").split(";").filter(Boolean).map((kv) => kv.trim().split("=")).map(([k, v]) => [k, Number(v)]));

async function call(method, url, body) {
  const r = await fetch(url, { method, headers: body ? { "content-type": "application/json" } : {}, body: body ? JSON.stringify(body) : undefined });
  const text = await r.text();
  if (!r.ok) throw new Error(`${method} ${url}: ${r.status} ${text.slice(0, 300)}`);
  // An export is NDJSON.
  const json = (r.headers.get("content-type") ?? "").includes("ndjson") ? null : JSON.parse(text);
  return { json, meter: meterOf(r.headers.get("x-edgemem-meter")) };
}

async function measure(label, vars) {
  const dir = mkdtempSync(join(tmpdir(), "edgemem-shard-cost-"));
  const dev = await startWranglerDev(ROOT, { persistDir: dir, vars });
  const base = `${dev.url}v1/long-term-memory`;
  const ns = "?namespace=cost";
  const out = { label, ops: {} };
  try {
    for (let i = 0; i < records.length; i += 100) await call("POST", `${base}/${ns}`, { memories: records.slice(i, i + 100) });
    await call("POST", `${base}/search${ns}`, { text: "otter", search_mode: "keyword" });
    // The load's events relayed to home before anything is measured: the
    // feed's pages below then relay only the creates measured before them.
    await call("GET", `${dev.url}v1/events${ns}`);
    const ops = {
      "scoped search (one user)": () => call("POST", `${base}/search${ns}`, { text: sentence(2), search_mode: "keyword", limit: 10, user_id: { eq: `user-${next(USERS)}` } }),
      "tenant-wide keyword search": () => call("POST", `${base}/search${ns}`, { text: sentence(2), search_mode: "keyword", limit: 10 }),
      "tenant-wide semantic search": () => call("POST", `${base}/search${ns}`, { text: sentence(2), search_mode: "semantic", limit: 10 }),
      "tenant-wide hybrid search": () => call("POST", `${base}/search${ns}`, { text: sentence(2), search_mode: "hybrid", limit: 10 }),
      "get a record by id": () => call("GET", `${base}/r${next(RECORDS)}${ns}`),
      "create one record": (i) => call("POST", `${base}/${ns}`, { memories: [{ id: `w${label}-${i}`, user_id: `user-${next(USERS)}`, text: `${sentence(5)} written ${i}` }] }),
      // A tenant-wide budget: every shard's part, one choice (a dry run).
      "forget without a user (dry run)": () => call("POST", `${base}/forget${ns}&dry_run=true&limit=100`, { policy: { budget: RECORDS / 2 } }),
      [`export (${RECORDS} records)`]: () => call("GET", `${dev.url}v1/export${ns}`),
      // Home asks every other shard for events it has not relayed. Locally
      // every object runs in the front's isolate, whose call count then
      // holds home's pulls too: `do_calls` is the front's call and home's.
      "change feed page": () => call("GET", `${dev.url}v1/events${ns}`),
      [`publish (${RECORDS} records)`]: () => call("POST", `${dev.url}v1/snapshots/publish${ns}`),
    };
    for (const [name, op] of Object.entries(ops).filter(([name]) => !OPS || OPS.some((o) => name.includes(o)))) {
      const sum = { do_calls: 0, tree_calls: 0, rows_read: 0, rows_written: 0, ms: 0 };
      for (let i = 0; i < SAMPLES; i++) {
        const t0 = performance.now();
        const { meter } = await op(i);
        sum.ms += performance.now() - t0;
        for (const k of Object.keys(sum).filter((k) => k !== "ms")) sum[k] += meter[k] ?? 0;
      }
      const mean = Object.fromEntries(Object.entries(sum).map(([k, v]) => [k, v / SAMPLES]));
      mean.dollars = PRICE.worker + PRICE.request * (mean.do_calls + mean.tree_calls) + PRICE.written * mean.rows_written + PRICE.read * mean.rows_read;
      out.ops[name] = mean;
    }
  } finally {
    await dev.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  console.error(`${label}: done`);
  return out;
}

const rows = [];
for (const c of COUNTS) rows.push(await measure(c === "unsharded" ? "unsharded" : `${c} shards`, c === "unsharded" ? {} : { EDGEMEM_SHARDS_INITIAL: c }));
console.log(`${RECORDS} records of ${USERS} users; ${SAMPLES} requests each; mean per request`);
console.log("| operation | deployment | DO calls (front + tree) | rows read | rows written | $ per million | mean ms (local) |");
console.log("|---|---|---:|---:|---:|---:|---:|");
for (const name of Object.keys(rows[0].ops)) {
  for (const r of rows) {
    const m = r.ops[name];
    console.log(`| ${name} | ${r.label} | ${m.do_calls.toFixed(2)} + ${m.tree_calls.toFixed(2)} | ${m.rows_read.toFixed(2)} | ${m.rows_written.toFixed(2)} | ${m.dollars.toFixed(2)} | ${m.ms.toFixed(1)} |`);
  }
}
