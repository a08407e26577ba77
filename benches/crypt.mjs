// The cost of encryption at rest (issue 20): the same workload with and
// without `encryptionKey` (AES-256-GCM through WebCrypto), side by side in
// one run, on each store the package ships for Node: MemoryStore (volatile),
// FileStore (durable: a write and an fsync per put) and IndexedDBStore over
// fake-indexeddb (the browser's store, in process). Reports p50 per op and
// the ratio encrypted / plaintext for:
//
// * appends: `appendMessages` of one ~60-word turn, to a 200-turn session;
// * ledger transfers: one transfer per call;
// * snapshots: `memory.snapshot()` of a state of several MB, and the
//   reopen (recovery) that reads it back;
// * the Worker under `wrangler dev` (workerd, whose WebCrypto runs
//   synchronously): `POST .../messages` of one turn over loopback HTTP, with
//   and without `X-Edgemem-Encryption-Key` (needs `make build`; skipped
//   with CRYPT_WORKER=0).
//
//   make pkg && node benches/crypt.mjs
//   CRYPT_CALLS=2000 node benches/crypt.mjs
import { performance } from "node:perf_hooks";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import "fake-indexeddb/auto";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { FileStore, IndexedDBStore, Memory, MemoryStore } from "edgemem";
import { startWranglerDev } from "../tests/e2e/wrangler-dev.mjs";

const CALLS = Number(process.env.CRYPT_CALLS ?? 600);
const SNAPSHOT_SESSIONS = Number(process.env.CRYPT_SNAPSHOT_SESSIONS ?? 400);
const KEY = await crypto.subtle.generateKey({ name: "AES-GCM", length: 256 }, false, ["encrypt", "decrypt"]);
const dirs = [];
let dbs = 0;

const STORES = {
  MemoryStore: async () => new MemoryStore(),
  FileStore: async () => {
    const dir = mkdtempSync(join(tmpdir(), "edgemem-crypt-bench-"));
    dirs.push(dir);
    return new FileStore(dir);
  },
  "IndexedDBStore (fake-indexeddb)": async () => IndexedDBStore.open(`crypt-bench-${dbs++}`),
};

function p50(times) {
  const s = [...times].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function turn(i) {
  const words = [];
  for (let w = 0; w < 60; w++) words.push(["route", "Lisbon", "fare", "window", "seat", "budget", "1,250.00", "EUR", "Friday"][(i * 7 + w) % 9]);
  return { role: i % 2 ? "assistant" : "user", content: `turn ${i}: ${words.join(" ")}` };
}

async function timed(n, f) {
  const times = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await f(i);
    times.push(performance.now() - t0);
  }
  return p50(times);
}

/** p50 ms of each op, plaintext or encrypted, on a fresh store. */
async function ops(makeStore, encrypted) {
  const store = await makeStore();
  const memory = await Memory.open({ store, ...(encrypted ? { encryptionKey: KEY, keyId: "bench" } : {}) });
  await memory.getOrCreateSession("s");
  for (let i = 0; i < 200; i += 50) await memory.appendMessages("s", Array.from({ length: 50 }, (_, j) => turn(i + j)));
  const append = await timed(CALLS, (i) => memory.appendMessages("s", [turn(200 + i)]));
  await memory.ledger.createAsset("USD", 2);
  await memory.ledger.createAccount({ id: "a", asset: "USD" });
  await memory.ledger.createAccount({ id: "b", asset: "USD" });
  const transfer = await timed(CALLS, (i) => memory.ledger.createTransfers([{ id: `t${i}`, debit_account: "a", credit_account: "b", amount: "1.25" }]));
  // A state of about 4 MB: sessions of 40 turns each.
  for (let i = 0; i < SNAPSHOT_SESSIONS; i++) {
    await memory.putSession(`big-${i}`, { messages: Array.from({ length: 40 }, (_, j) => turn(i * 40 + j)) });
  }
  const snapshot = await timed(5, () => memory.snapshot());
  const bytes = (await memory.stats()).snapshot_bytes;
  const reopen = await timed(5, () => Memory.open({ store, ...(encrypted ? { encryptionKey: KEY, keyId: "bench" } : {}) }));
  memory.free?.();
  return { append, transfer, snapshot, reopen, bytes };
}

const REPEATS = Number(process.env.CRYPT_REPEATS ?? 3);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
/** Per op, the median over the repeats of each run's p50. */
function combine(runs) {
  return Object.fromEntries(Object.keys(runs[0]).map((k) => [k, median(runs.map((r) => r[k]))]));
}

const rows = [];
for (const [name, make] of Object.entries(STORES)) {
  // Plaintext and encrypted runs alternate, in both orders, so neither side
  // always runs on a warmer (or busier) process.
  const plain = [];
  const sealed = [];
  // Untimed warm-up of both paths (the JIT, the wasm tiers, the threadpool).
  await ops(make, false);
  await ops(make, true);
  for (let r = 0; r < REPEATS; r++) {
    if (r % 2 === 0) {
      plain.push(await ops(make, false));
      sealed.push(await ops(make, true));
    } else {
      sealed.push(await ops(make, true));
      plain.push(await ops(make, false));
    }
  }
  rows.push({ name, plain: combine(plain), sealed: combine(sealed) });
}
for (const dir of dirs) rmSync(dir, { recursive: true, force: true });

/** p50 ms of one-turn appends through the Worker, plaintext and encrypted tenants. */
async function worker() {
  const dev = await startWranglerDev(fileURLToPath(new URL("../", import.meta.url)));
  try {
    const out = { plain: [], sealed: [] };
    const sealedKey = randomBytes(32).toString("base64url");
    for (const [name, key] of [["plain", undefined], ["sealed", sealedKey], ["sealed", sealedKey], ["plain", undefined]]) {
      const headers = { "content-type": "application/json", ...(key ? { "x-edgemem-encryption-key": key } : {}) };
      const url = (p) => `${dev.url}v1/working-memory/s${p}?namespace=bench-${name}`;
      await fetch(url(""), { method: "PUT", headers, body: JSON.stringify({ messages: Array.from({ length: 200 }, (_, i) => turn(i)) }) });
      out[name].push(await timed(CALLS, async (i) => {
        const r = await fetch(url("/messages"), { method: "POST", headers, body: JSON.stringify({ messages: [turn(200 + i)] }) });
        if (r.status !== 200) throw new Error(`append: ${r.status} ${await r.text()}`);
        await r.arrayBuffer();
      }));
    }
    return { plain: Math.min(...out.plain), sealed: Math.min(...out.sealed) };
  } finally {
    await dev.stop();
  }
}
const http = process.env.CRYPT_WORKER === "0" ? null : await worker();

const f = (ms) => (ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(2)} ms`);
console.log(`encryption at rest: p50 per op, ${CALLS} calls each, median of ${REPEATS} alternating runs (snapshot: ${(rows[0].plain.bytes / 1e6).toFixed(1)} MB state, 5 per run; Worker: the better of 2 runs each)\n`);
console.log("| store | op | plaintext | encrypted | ratio |");
console.log("|---|---|---:|---:|---:|");
for (const { name, plain, sealed } of rows) {
  for (const op of ["append", "transfer", "snapshot", "reopen"]) {
    console.log(`| ${name} | ${op} | ${f(plain[op])} | ${f(sealed[op])} | ${(sealed[op] / plain[op]).toFixed(2)}× |`);
  }
}
if (http) console.log(`| Worker (wrangler dev, HTTP) | append | ${f(http.plain)} | ${f(http.sealed)} | ${(http.sealed / http.plain).toFixed(2)}× |`);
