// The service-state cache through the npm package (issue 11, point 3).
import { test } from "node:test";
import assert from "node:assert/strict";
import { Memory, MemoryStore } from "edgemem";

function upstream(plan) {
  const calls = {};
  const fetcher = async (agentId, service) => {
    calls[service] = (calls[service] ?? 0) + 1;
    const p = plan[service];
    if (!p) throw Object.assign(new Error(`no such service ${service}`), { status: 404 });
    if (p.delayMs) await new Promise((r) => setTimeout(r, p.delayMs));
    if (p.fail) throw Object.assign(new Error("upstream said no"), { status: p.fail });
    return typeof p.state === "function" ? p.state(agentId) : p.state;
  };
  return { fetcher, calls };
}

test("read-through once for 1,000 concurrent gets, fresh until the TTL, then read again", async () => {
  let now = 1_800_000_000_000;
  const up = upstream({ wallet: { state: { balances: { USDC: "1.50" } }, delayMs: 20 } });
  const memory = await Memory.open({ clock: () => now, serviceFetcher: up.fetcher });
  const answers = await Promise.all(Array.from({ length: 1_000 }, () => memory.services.get("agent-1", "wallet")));
  assert.equal(up.calls.wallet, 1);
  assert.ok(answers.every((a) => a.state.balances.USDC === "1.50"));
  now += 59_999;
  assert.equal((await memory.services.get("agent-1", "wallet")).source, "cache");
  now += 1;
  const again = await memory.services.get("agent-1", "wallet");
  assert.equal(again.source, "upstream");
  assert.equal(again.age_ms, 0);
  assert.equal(up.calls.wallet, 2);
  memory.free();
});

test("errors are typed, name the service and are never cached; stale state only when asked; timeouts", async () => {
  let now = 1_800_000_000_000;
  const plan = { casino: { state: { balance: 5, currency: "USDC" } }, escrow: { state: {}, delayMs: 200 } };
  const up = upstream(plan);
  const memory = await Memory.open({ clock: () => now });
  memory.services.setFetcher(up.fetcher, { timeoutMs: 50 });
  await memory.services.get("a", "casino");
  now += 10_000;
  plan.casino.fail = 503;
  for (let i = 0; i < 2; i++) {
    await assert.rejects(memory.services.get("a", "casino"), (e) => e.code === "upstream_error" && /casino/.test(e.message) && /503/.test(e.message));
  }
  assert.equal(up.calls.casino, 3, "the error was not cached");
  const stale = await memory.services.get("a", "casino", { allowStale: true });
  assert.equal(stale.stale, true);
  assert.equal(stale.age_ms, 10_000);
  assert.equal(stale.upstream_error.code, "upstream_error");
  await assert.rejects(memory.services.get("a", "escrow"), (e) => e.code === "upstream_timeout" && /escrow/.test(e.message));
  await assert.rejects(memory.services.get("a", "nope"), (e) => e.code === "not_found");
  assert.throws(() => memory.services.setFetcher("no"), (e) => e.code === "invalid_input");
  memory.free();
});

test("write-through, invalidate, force refresh, registration, persistence, and the feed", async () => {
  let now = 1_800_000_000_000;
  const store = new MemoryStore();
  const up = upstream({ trading: { state: { portfolio: { USDC: 1 } } }, oracle: { state: { price: "1.0001" } } });
  const memory = await Memory.open({ store, clock: () => now, serviceFetcher: up.fetcher });
  const seen = [];
  const off = memory.subscribe({ kinds: ["service_cache.*"] }, (e) => seen.push(e.kind));
  await memory.services.put("a", "trading", { portfolio: { USDC: 2 } });
  assert.equal((await memory.services.get("a", "trading")).source, "written");
  assert.equal(up.calls.trading, undefined);
  assert.equal((await memory.services.forceRefresh("a", "trading")).state.portfolio.USDC, 1);
  assert.equal(await memory.services.invalidate("a", "trading"), 1);
  assert.equal(await memory.services.invalidate("a"), 0);
  await memory.services.register("oracle", 5);
  assert.deepEqual((await memory.services.list()).find((s) => s.service === "oracle"), { service: "oracle", ttl_seconds: 5 });
  await memory.services.get("a", "oracle");
  await new Promise((r) => setTimeout(r, 10));
  off();
  assert.deepEqual(seen, ["service_cache.written", "service_cache.refreshed", "service_cache.invalidated", "service_cache.invalidated", "service_cache.registered", "service_cache.refreshed"]);
  memory.free();
  // Entries and registrations persist: a reopened memory serves the fresh entry without a call.
  const reopened = await Memory.open({ store, clock: () => now, serviceFetcher: up.fetcher });
  assert.equal((await reopened.services.get("a", "oracle")).source, "cache");
  assert.equal(up.calls.oracle, 1);
  now += 5_000;
  assert.equal((await reopened.services.get("a", "oracle")).source, "upstream", "the 5 s TTL survived the reopen");
  reopened.free();
});

test("a portfolio snapshot of six services, one slow and one failing: five states, one error, exact totals", async () => {
  const up = upstream({
    wallet: { state: { balances: { USDC: 0.1 } } },
    trading: { state: { portfolio: [{ asset: "USDC", amount: 0.2 }] } },
    casino: { state: { balance: "0.1234567890123456789012345678", currency: "BTC" }, delayMs: 50 },
    domains: { state: { names: ["x.agent"] } },
    faucet: { fail: 500 },
    escrow: { state: { balances: { USDC: "7" } } },
  });
  const memory = await Memory.open({ serviceFetcher: up.fetcher });
  const snap = await memory.services.portfolioSnapshot("agent-9");
  assert.equal(snap.ok, 5);
  assert.equal(snap.failed, 1);
  assert.equal(snap.services.faucet.error.code, "upstream_error");
  assert.equal(snap.totals.USDC, "7.3", "0.1 + 0.2 + 7, not 7.300000000000001");
  assert.equal(snap.totals.BTC, "0.1234567890123456789012345678");
  const two = await memory.services.portfolioSnapshot("agent-9", ["wallet", "faucet"]);
  assert.deepEqual(Object.keys(two.services).sort(), ["faucet", "wallet"]);
  assert.equal(two.services.wallet.source, "cache");
  memory.free();
});
