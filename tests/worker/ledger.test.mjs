// The ledger through the Worker: one tenant's Durable Object under 200
// concurrent transfers, a third of them retries of an id already sent.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startWorker } from "./miniflare.mjs";

const persistDir = mkdtempSync(join(tmpdir(), "edgemem-ledger-"));
test.after(() => rmSync(persistDir, { recursive: true, force: true }));

const NS = "?namespace=bets";

test("200 concurrent transfers with duplicate-id retries: one effect per id, balances reconcile, survive a restart", async () => {
  let { mf, call } = await startWorker({ persistDir });
  const ids = Array.from({ length: 134 }, (_, i) => `t${i}`);
  // 134 distinct transfers plus 66 retries of some of them: 200 requests.
  const sends = [...ids, ...ids.filter((_, i) => i % 2 === 0).slice(0, 66)];
  assert.equal(sends.length, 200);
  const amountOf = (id) => `${Number(id.slice(1)) % 7}.${String(Number(id.slice(1)) * 37 % 1000).padStart(3, "0")}001`;
  let expectedMinor = 0n;
  for (const id of ids) {
    const [int, frac] = amountOf(id).split(".");
    expectedMinor += BigInt(int) * 1_000_000n + BigInt(frac);
  }
  try {
    assert.equal((await call("POST", `/v1/ledger/assets${NS}`, { code: "USDC", scale: 6 })).status, 200);
    for (const id of ["house", "player"]) {
      assert.equal((await call("POST", `/v1/ledger/accounts${NS}`, { id, asset: "USDC" })).status, 200);
    }
    const responses = await Promise.all(
      sends.map((id) =>
        call("POST", `/v1/ledger/transfers${NS}`, { transfers: [{ id, debit_account: "house", credit_account: "player", amount: amountOf(id) }] }),
      ),
    );
    const created = new Map();
    for (const r of responses) {
      assert.equal(r.status, 200, r.text);
      const { id, result } = r.json.results[0];
      assert.ok(result === "created" || result === "exists", result);
      if (result === "created") created.set(id, (created.get(id) ?? 0) + 1);
    }
    assert.equal(created.size, ids.length, "every id took effect");
    assert.ok([...created.values()].every((n) => n === 1), "and exactly once");
    const player = (await call("GET", `/v1/ledger/accounts/player${NS}`)).json;
    const [int, frac] = player.balance.split(".");
    assert.equal(BigInt(int) * 1_000_000n + BigInt(frac), expectedMinor, "the exact sum, no float drift");
    const rec = (await call("POST", `/v1/ledger/reconcile${NS}`, { statement: [{ account: "player", balance: player.balance }] })).json;
    assert.equal(rec.ok, true, JSON.stringify(rec));
    assert.equal(rec.transfers, 134);
  } finally {
    await mf.dispose();
  }

  ({ mf, call } = await startWorker({ persistDir }));
  try {
    const rec = (await call("POST", `/v1/ledger/reconcile${NS}`, {})).json;
    assert.equal(rec.ok, true);
    assert.equal(rec.transfers, 134);
    const retry = await call("POST", `/v1/ledger/transfers${NS}`, { transfers: [{ id: "t5", debit_account: "house", credit_account: "player", amount: amountOf("t5") }] });
    assert.equal(retry.json.results[0].result, "exists", "idempotency survives the restart");
  } finally {
    await mf.dispose();
  }
});

test("escrow holds expire through the Durable Object alarm", async () => {
  const { mf, call } = await startWorker();
  try {
    await call("POST", "/v1/ledger/assets?namespace=escrow", { code: "EUR", scale: 2 });
    await call("POST", "/v1/ledger/accounts?namespace=escrow", { id: "buyer", asset: "EUR" });
    await call("POST", "/v1/ledger/accounts?namespace=escrow", { id: "seller", asset: "EUR" });
    const r = await call("POST", "/v1/ledger/transfers?namespace=escrow", {
      transfers: [{ id: "hold", debit_account: "buyer", credit_account: "seller", amount: "99.99", pending: true, timeout_seconds: 1 }],
    });
    assert.equal(r.json.results[0].result, "created");
    assert.equal((await call("GET", "/v1/ledger/accounts/buyer?namespace=escrow")).json.debits_pending, "99.99");
    await new Promise((res) => setTimeout(res, 2500));
    const t = (await call("GET", "/v1/ledger/transfers/hold?namespace=escrow")).json;
    assert.equal(t.state, "pending_expired", "the alarm expired the hold without any request touching it");
    assert.equal((await call("GET", "/v1/ledger/accounts/buyer?namespace=escrow")).json.debits_pending, "0.00");
    const post = await call("POST", "/v1/ledger/transfers/hold/post?namespace=escrow", {});
    assert.equal(post.status, 422);
    assert.equal(post.json.code, "pending_transfer_expired");
  } finally {
    await mf.dispose();
  }
});
