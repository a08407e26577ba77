// Ledger benchmark: edgemem (wasm, in Node) against plain-JS ledgers on
// decimal.js and big.js, same workload, one process run, ratios reported.
//
//   node benches/ledger.mjs            (after `make pkg`)
//   LEDGER_RECONCILE_ENTRIES=1000000 node benches/ledger.mjs
import { performance } from "node:perf_hooks";
import Decimal from "decimal.js";
import Big from "big.js";
import { Memory } from "edgemem";

const SINGLE_N = Number(process.env.LEDGER_SINGLE_N ?? 20_000);
const BATCH = 1_000;
const BATCHES = Number(process.env.LEDGER_BATCHES ?? 200);
const RECONCILE_ENTRIES = Number(process.env.LEDGER_RECONCILE_ENTRIES ?? 1_000_000);
const ACCOUNTS = 100;

// Deterministic amounts with 6 decimals, as strings: what an agent sends.
const amount = (i) => `${(i * 7919) % 100 + 1}.${String((i * 104729) % 1_000_000).padStart(6, "0")}`;
const transfer = (i) => ({ id: `t${i}`, debit_account: `a${i % ACCOUNTS}`, credit_account: `a${(i * 31 + 1) % ACCOUNTS}`, amount: amount(i) });
// Skip self-transfers so every peer does the same work.
const transfers = (from, n) => {
  const out = [];
  for (let i = from; out.length < n; i++) {
    const t = transfer(i);
    if (t.debit_account !== t.credit_account) out.push(t);
  }
  return out;
};

/** A plain-JS ledger with the same checks: idempotent ids, same asset, scale, checked amounts. */
class JsLedger {
  constructor(D, name) {
    this.D = D;
    this.name = name;
    this.accounts = new Map();
    this.ids = new Map();
    this.log = [];
  }
  createAccount(id) {
    this.accounts.set(id, { dp: new this.D(0), cp: new this.D(0) });
  }
  createTransfers(batch) {
    const results = [];
    for (const t of batch) {
      const prev = this.ids.get(t.id);
      if (prev) {
        results.push({ id: t.id, result: prev.amount === t.amount && prev.debit_account === t.debit_account ? "exists" : "exists_with_different_fields" });
        continue;
      }
      if (!/^\d+(\.\d{1,6})?$/.test(t.amount)) throw new Error("bad amount");
      const a = new this.D(t.amount);
      const dr = this.accounts.get(t.debit_account);
      const cr = this.accounts.get(t.credit_account);
      if (!dr || !cr) {
        results.push({ id: t.id, result: "account_not_found" });
        continue;
      }
      dr.dp = dr.dp.plus(a);
      cr.cp = cr.cp.plus(a);
      this.ids.set(t.id, t);
      this.log.push(t);
      results.push({ id: t.id, result: "created" });
    }
    return results;
  }
  reconcile() {
    const sums = new Map();
    for (const id of this.accounts.keys()) sums.set(id, { dp: new this.D(0), cp: new this.D(0) });
    for (const t of this.log) {
      const a = new this.D(t.amount);
      sums.get(t.debit_account).dp = sums.get(t.debit_account).dp.plus(a);
      sums.get(t.credit_account).cp = sums.get(t.credit_account).cp.plus(a);
    }
    let diffs = 0;
    for (const [id, s] of sums) {
      const acc = this.accounts.get(id);
      if (!acc.dp.eq(s.dp) || !acc.cp.eq(s.cp)) diffs++;
    }
    return diffs;
  }
}

async function edgemem() {
  const m = await Memory.open({ snapshotEveryOps: Number(process.env.LEDGER_SNAPSHOT_EVERY ?? 1000) }); // volatile store: the op log still encodes every op
  await m.ledger.createAsset("USDC", 6);
  for (let i = 0; i < ACCOUNTS; i++) await m.ledger.createAccount({ id: `a${i}`, asset: "USDC" });
  return {
    name: "edgemem (wasm)",
    dispose: () => m.free(),
    single: (t) => m.ledger.createTransfers([t]),
    batch: (b) => m.ledger.createTransfers(b),
    reconcile: async () => (await m.ledger.reconcile()).differences.length,
  };
}

/** The typed-array form of transfers `t<i>`/`a<k>`: numeric ids i + 1, account indices k, minor units. */
function columns(ts) {
  const n = ts.length;
  const c = { ids: new BigUint64Array(2 * n), debit: new Uint32Array(n), credit: new Uint32Array(n), amounts: new BigInt64Array(n) };
  ts.forEach((t, i) => {
    c.ids[2 * i] = BigInt(Number(t.id.slice(1)) + 1);
    c.debit[i] = Number(t.debit_account.slice(1));
    c.credit[i] = Number(t.credit_account.slice(1));
    const [int, frac] = t.amount.split(".");
    c.amounts[i] = BigInt(int) * 1_000_000n + BigInt(frac.padEnd(6, "0"));
  });
  return c;
}

async function edgememTyped() {
  const m = await Memory.open({ snapshotEveryOps: Number(process.env.LEDGER_SNAPSHOT_EVERY ?? 1000) });
  await m.ledger.createAsset("USDC", 6);
  for (let i = 0; i < ACCOUNTS; i++) await m.ledger.createAccount({ id: `a${i}`, asset: "USDC" });
  const check = (out) => {
    if (out.errors.length) throw new Error(`typed batch: ${JSON.stringify(out.errors.slice(0, 3))}`);
  };
  return {
    name: "edgemem (wasm, typed batch)",
    // Frees the tenant's state, so the next edgemem row starts on a clean heap.
    dispose: () => m.free(),
    // Columns are built before the clock starts, as the peers' objects are.
    prepare: columns,
    single: async (c) => check(await m.ledger.createTransferBatch(c)),
    batch: async (c) => check(await m.ledger.createTransferBatch(c)),
    reconcile: async () => (await m.ledger.reconcile()).differences.length,
  };
}

function js(D, name) {
  const l = new JsLedger(D, name);
  for (let i = 0; i < ACCOUNTS; i++) l.createAccount(`a${i}`);
  return { name, single: async (t) => l.createTransfers([t]), batch: async (b) => l.createTransfers(b), reconcile: async () => l.reconcile() };
}

async function time(fn) {
  const t0 = performance.now();
  await fn();
  return (performance.now() - t0) / 1000;
}

const rows = [];
for (const make of [edgememTyped, edgemem, () => js(Decimal, "decimal.js 10.6.0"), () => js(Big, "big.js 7.0.1")]) {
  const peer = await make();
  const prepare = peer.prepare ?? ((x) => x);
  const single = transfers(0, SINGLE_N).map((t) => prepare([t])).map((x) => (peer.prepare ? x : x[0]));
  const singleS = await time(async () => {
    for (const t of single) await peer.single(t);
  });
  let offset = 10_000_000;
  const batches = Array.from({ length: BATCHES }, (_, k) => prepare(transfers(offset + k * BATCH * 2, BATCH)));
  const batchS = await time(async () => {
    for (const b of batches) await peer.batch(b);
  });
  // Fill to the reconcile size, then time reconcile alone.
  let have = SINGLE_N + BATCHES * BATCH;
  offset = 20_000_000;
  while (have < RECONCILE_ENTRIES) {
    const n = Math.min(BATCH * 5, RECONCILE_ENTRIES - have);
    await peer.batch(prepare(transfers(offset, n)));
    offset += n * 2;
    have += n;
  }
  const diffs = [];
  const recS = await time(async () => diffs.push(await peer.reconcile()));
  if (diffs[0] !== 0) throw new Error(`${peer.name}: reconcile found ${diffs[0]} differences`);
  rows.push({ name: peer.name, single: SINGLE_N / singleS, batch: (BATCHES * BATCH) / batchS, reconcileMs: recS * 1000, entries: have });
  peer.dispose?.();
}

const typed = rows[0];
const base = rows[1];
console.log(`ledger benchmark: node ${process.version}, ${SINGLE_N} single calls, ${BATCHES} batches of ${BATCH}, reconcile over ${rows[0].entries} transfers\n`);
console.log("| ledger | single calls (transfers/s) | batches of 1,000 (transfers/s) | reconcile (ms) |");
console.log("|---|---:|---:|---:|");
for (const r of rows) {
  console.log(`| ${r.name} | ${Math.round(r.single).toLocaleString("en")} | ${Math.round(r.batch).toLocaleString("en")} | ${r.reconcileMs.toFixed(0)} |`);
}
for (const [label, e] of [["edgemem typed batch", typed], ["edgemem JSON objects", base]]) {
  console.log(`\n| ${label} vs | single | batched | reconcile |`);
  console.log("|---|---:|---:|---:|");
  for (const r of rows.slice(2)) {
    console.log(`| ${r.name} | ${(e.single / r.single).toFixed(2)}× | ${(e.batch / r.batch).toFixed(2)}× | ${(r.reconcileMs / e.reconcileMs).toFixed(2)}× |`);
  }
}
