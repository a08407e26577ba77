// The ledger through the built package: exact decimals, idempotency, holds,
// execute-once, and persistence across a restart.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Memory, MemoryStore, EdgememError } from "edgemem";

async function rejectsWith(promise, code) {
  await assert.rejects(promise, (err) => {
    assert.ok(err instanceof EdgememError, `expected EdgememError, got ${err}`);
    assert.equal(err.code, code, err.message);
    return true;
  });
}

async function setup(store = new MemoryStore()) {
  const m = await Memory.open({ store, snapshotEveryOps: 5 });
  await m.ledger.createAsset("USDC", 6);
  await m.ledger.createAccount({ id: "bank", asset: "USDC" });
  await m.ledger.createAccount({ id: "agent", asset: "USDC", flags: ["debits_must_not_exceed_credits"], max_transfer: "50" });
  await m.ledger.createAccount({ id: "casino", asset: "USDC" });
  return m;
}

test("decimal-exact transfers, idempotent retries, typed rejections", async () => {
  const m = await setup();
  // 0.1 + 0.2 is exactly 0.3 here.
  const r = await m.ledger.createTransfers([
    { id: "f1", debit_account: "bank", credit_account: "agent", amount: "0.1" },
    { id: "f2", debit_account: "bank", credit_account: "agent", amount: "0.2" },
    { id: "big", debit_account: "agent", credit_account: "casino", amount: "50.000001" },
    { id: "over", debit_account: "agent", credit_account: "casino", amount: "0.300001" },
  ]);
  assert.deepEqual(r.map((x) => x.result), ["created", "created", "exceeds_max_transfer", "exceeds_credits"]);
  assert.equal((await m.ledger.account("agent")).balance, "0.300000");
  const retry = await m.ledger.createTransfers([{ id: "f1", debit_account: "bank", credit_account: "agent", amount: "0.1" }]);
  assert.equal(retry[0].result, "exists");
  const changed = await m.ledger.createTransfers([{ id: "f1", debit_account: "bank", credit_account: "agent", amount: "0.10001" }]);
  assert.equal(changed[0].result, "exists_with_different_amount");
  assert.equal((await m.ledger.account("agent")).balance, "0.300000");
  await rejectsWith(m.ledger.createTransfers([{ id: "n", debit_account: "bank", credit_account: "agent", amount: 0.1 }]), "invalid_input");
  await rejectsWith(m.ledger.createTransfers([{ id: "n", debit_account: "bank", credit_account: "agent", amount: "1e2" }]), "invalid_input");
  await rejectsWith(m.ledger.createTransfers([{ id: "n", debit_account: "bank", credit_account: "agent", amount: "0.0000001" }]), "invalid_input");
  await rejectsWith(m.ledger.createAccount({ id: "x", asset: "USDC", max_transfer: 5 }), "invalid_input");
  await rejectsWith(m.ledger.createAsset("USDC", 2), "asset_exists_with_different_scale");
  assert.equal(await m.ledger.account("nobody"), null);
});

test("holds: post for less, void, typed errors, and everything survives a restart", async () => {
  const store = new MemoryStore();
  const m = await setup(store);
  await m.ledger.createTransfers([{ id: "fund", debit_account: "bank", credit_account: "agent", amount: "40" }]);
  await m.ledger.createTransfers([
    { id: "hold", debit_account: "agent", credit_account: "casino", amount: "30", pending: true, timeout_seconds: 3600 },
    { id: "hold2", debit_account: "agent", credit_account: "casino", amount: "5", pending: true },
  ]);
  assert.equal((await m.ledger.account("agent")).debits_pending, "35.000000");
  const posted = await m.ledger.post("hold", { amount: "12.5" });
  assert.equal(posted.transfer.state, "pending_posted");
  await rejectsWith(m.ledger.post("hold"), "pending_transfer_already_posted");
  await m.ledger.void("hold2");
  await rejectsWith(m.ledger.void("hold2"), "pending_transfer_already_voided");
  await rejectsWith(m.ledger.void("missing"), "not_found");

  const again = await Memory.open({ store });
  const agent = await again.ledger.account("agent");
  assert.deepEqual([agent.balance, agent.debits_pending], ["27.500000", "0.000000"]);
  assert.equal((await again.ledger.transfer("hold")).posted_amount, "12.500000");
  const rec = await again.ledger.reconcile({ statement: [{ account: "agent", balance: "27.5" }] });
  assert.equal(rec.ok, true, JSON.stringify(rec));
  const h = await again.ledger.history("agent", { limit: 2 });
  assert.equal(h.entries.length, 2);
  const rest = await again.ledger.history("agent", { cursor: h.next_cursor });
  assert.deepEqual(rest.entries.map((e) => e.kind), ["created", "posted", "voided"]);
});

test("executeOnce runs a side effect once, and an interrupted one is never re-run silently", async () => {
  const store = new MemoryStore();
  const m = await setup(store);
  let calls = 0;
  const placeBet = async ({ stake }) => {
    calls += 1;
    return { bet_id: `b-${calls}`, stake };
  };
  const first = await m.ledger.executeOnce("place_bet", { market: "m1", stake: "5.00" }, placeBet);
  const second = await m.ledger.executeOnce("place_bet", { stake: "5.00", market: "m1" }, placeBet);
  assert.deepEqual(first, { bet_id: "b-1", stake: "5.00" });
  assert.deepEqual(second, first, "the stored outcome, without a second call");
  assert.equal(calls, 1);

  // The process "dies" during the external call: the intent stays open.
  await assert.rejects(m.ledger.executeOnce("withdraw", { amount: "10" }, async () => { throw new Error("connection reset"); }), /connection reset/);
  const restarted = await Memory.open({ store });
  const open = await restarted.ledger.openIntents();
  assert.deepEqual(open.map((i) => i.op), ["withdraw"]);
  await rejectsWith(restarted.ledger.executeOnce("withdraw", { amount: "10" }, placeBet), "intent_open");
  assert.equal(calls, 1, "never re-run silently");
  await restarted.ledger.completeIntent(open[0].key, { verified: "not sent" });
  assert.deepEqual(await restarted.ledger.openIntents(), []);
});
