// The ledger's typed-array entry point through the built package: the same
// books as the JSON path, results as an Int32Array, and every bad batch
// refused whole with a typed error and nothing applied.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Memory, MemoryStore, EdgememError, TRANSFER_RESULT_CODES } from "edgemem";

async function rejectsWith(promise, code, field) {
  await assert.rejects(promise, (err) => {
    assert.ok(err instanceof EdgememError, `expected EdgememError, got ${err}`);
    assert.equal(err.code, code, err.message);
    if (field) assert.match(err.message, new RegExp(field.replace(/[[\]]/g, "\\$&")), err.message);
    return true;
  });
}

async function setup(store = new MemoryStore()) {
  // One fixed clock: two ledgers fed the same transfers hash the same journal.
  const m = await Memory.open({ store, snapshotEveryOps: 3, clock: () => 1_780_000_000_000 });
  await m.ledger.createAsset("USDC", 6);
  await m.ledger.createAsset("EUR", 2);
  for (const id of ["bank", "casino"]) await m.ledger.createAccount({ id, asset: "USDC" });
  await m.ledger.createAccount({ id: "agent", asset: "USDC", flags: ["debits_must_not_exceed_credits"] });
  await m.ledger.createAccount({ id: "eur", asset: "EUR" });
  return m;
}

/** [low, high] words of each 128-bit id. */
const ids = (...xs) => {
  const w = new BigUint64Array(xs.length * 2);
  xs.forEach((x, i) => {
    w[2 * i] = BigInt.asUintN(64, x);
    w[2 * i + 1] = x >> 64n;
  });
  return w;
};

test("a typed batch books exactly what the JSON batch books", async () => {
  const [a, b] = [await setup(), await setup()];
  const [bank, casino, agent] = await a.ledger.accountIndices(["bank", "casino", "agent"]);
  assert.deepEqual([bank, casino, agent], [0, 1, 2], "indices follow creation order");
  assert.equal((await a.ledger.account("agent")).index, 2);
  const out = await a.ledger.createTransferBatch({
    ids: ids(1n, 2n, 3n, (1n << 128n) - 1n),
    debit: Uint32Array.of(bank, agent, agent, bank),
    credit: Uint32Array.of(agent, casino, casino, casino),
    amounts: BigInt64Array.of(10_000_000n, 2_500_000n, 9_000_000n, 1n),
  });
  assert.ok(out.results instanceof Int32Array);
  assert.deepEqual([...out.results].map((r) => TRANSFER_RESULT_CODES[r]), ["created", "created", "exceeds_credits", "created"]);
  assert.deepEqual(out.errors, [{ index: 2, code: "exceeds_credits" }]);
  await b.ledger.createTransfers([
    { id: "1", debit_account: "bank", credit_account: "agent", amount: "10" },
    { id: "2", debit_account: "agent", credit_account: "casino", amount: "2.5" },
    { id: "3", debit_account: "agent", credit_account: "casino", amount: "9" },
    { id: "340282366920938463463374607431768211455", debit_account: "bank", credit_account: "casino", amount: "0.000001" },
  ]);
  for (const id of ["bank", "casino", "agent"]) assert.deepEqual(await a.ledger.account(id), await b.ledger.account(id));
  const [ra, rb] = [await a.ledger.reconcile(), await b.ledger.reconcile()];
  assert.equal(ra.journal_head, rb.journal_head, "the same journal, hash for hash");
  assert.equal((await a.ledger.transfer("2")).amount, "2.500000", "a numeric id is named by its decimal digits");
  // Retrying is idempotent; bigint ids and decimal strings are accepted too.
  const again = await a.ledger.createTransferBatch({ ids: [1n, 2n], debit: [bank, agent], credit: [agent, casino], amounts: ["10", "2.5"] });
  assert.deepEqual([...again.results].map((r) => TRANSFER_RESULT_CODES[r]), ["exists", "exists"]);
  assert.deepEqual(again.errors, []);
});

test("flags link transfers and hold funds; the batch survives a restart", async () => {
  const store = new MemoryStore();
  const m = await setup(store);
  const [bank, casino, agent] = await m.ledger.accountIndices(["bank", "casino", "agent"]);
  await m.ledger.createTransferBatch({ ids: [10n], debit: [bank], credit: [agent], amounts: [5_000_000n] });
  const out = await m.ledger.createTransferBatch({
    ids: [11n, 12n, 13n],
    debit: [bank, agent, agent],
    credit: [agent, casino, casino],
    amounts: [1n, 50_000_000n, 1_000_000n],
    flags: [2, 0, 1],
    timeoutSeconds: [0, 0, 60],
  });
  assert.deepEqual([...out.results].map((r) => TRANSFER_RESULT_CODES[r]), ["linked_event_failed", "exceeds_credits", "created"]);
  const again = await Memory.open({ store, clock: () => 1_780_000_000_000 });
  assert.equal(await again.ledger.transfer("11"), null, "the failed chain left nothing");
  const hold = await again.ledger.transfer("13");
  assert.deepEqual([hold.pending, hold.amount, hold.state], [true, "1.000000", "pending"]);
  assert.equal((await again.ledger.account("agent")).debits_pending, "1.000000");
  assert.equal((await again.ledger.reconcile()).ok, true);
});

test("bad batches are refused whole with a typed error and nothing applied", async () => {
  const m = await setup();
  const [bank, casino] = await m.ledger.accountIndices(["bank", "casino"]);
  const good = () => ({ ids: ids(1n, 2n), debit: Uint32Array.of(bank, bank), credit: Uint32Array.of(casino, casino), amounts: BigInt64Array.of(1n, 2n) });
  const cases = [
    ["mismatched lengths", { ...good(), debit: Uint32Array.of(bank) }, "debit"],
    ["mismatched amounts", { ...good(), amounts: BigInt64Array.of(1n) }, "amounts"],
    ["an unknown account index", { ...good(), credit: Uint32Array.of(casino, 99) }, "credit[1]"],
    ["an amount over the asset's scale", { ...good(), amounts: ["1", "0.0000001"] }, "amounts[1]"],
    ["a zero amount", { ...good(), amounts: BigInt64Array.of(0n, 2n) }, "amounts[0]"],
    ["a negative amount", { ...good(), amounts: [-1n, 2n] }, "amounts[0]"],
    ["a float where an integer belongs (index)", { ...good(), debit: [bank, 1.5] }, "debit[1]"],
    ["NaN where an integer belongs", { ...good(), credit: [NaN, casino] }, "credit[0]"],
    ["a Float64Array for indices", { ...good(), debit: Float64Array.of(0, 0) }, "debit"],
    ["a number where a bigint amount belongs", { ...good(), amounts: [1n, 2] }, "amounts[1]"],
    ["a float amount", { ...good(), amounts: [1.5, 2.5] }, "amounts[0]"],
    ["a Float64Array of amounts", { ...good(), amounts: Float64Array.of(1, 2) }, "amounts"],
    ["duplicate ids within the batch", { ...good(), ids: ids(7n, 7n) }, "ids[1]"],
    ["a zero id", { ...good(), ids: ids(0n, 7n) }, "ids[0]"],
    ["an id past 128 bits", { ...good(), ids: [1n, 1n << 128n] }, "ids[1]"],
    ["a number id", { ...good(), ids: [1, 2] }, "ids[0]"],
    ["odd id words", { ...good(), ids: BigUint64Array.of(1n, 0n, 2n) }, "ids"],
    ["an unknown flag bit", { ...good(), flags: [0, 8] }, "flags[1]"],
    ["a timeout past the limit", { ...good(), timeoutSeconds: [0, 2 ** 32 - 1] }, "timeout_seconds[1]"],
    ["an empty batch", { ids: [], debit: [], credit: [], amounts: [] }, "ids"],
    ["nothing at all", undefined, "amounts"],
  ];
  const before = await m.ledger.reconcile();
  for (const [what, batch, field] of cases) {
    await rejectsWith(m.ledger.createTransferBatch(batch), "invalid_input", field).catch((e) => {
      throw new Error(`${what}: ${e.message}`);
    });
  }
  const after = await m.ledger.reconcile();
  assert.deepEqual([after.transfers, after.journal_head], [before.transfers, before.journal_head], "nothing applied");
  await rejectsWith(m.ledger.accountIndices(["bank", "ghost"]), "not_found");
  await rejectsWith(m.ledger.accountIndices("bank"), "invalid_input");
});
