// The service-state cache through the Worker (issue 11, point 3), against a
// fake upstream on 127.0.0.1 that counts calls, delays and fails on demand.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startWorker } from "./miniflare.mjs";

const API_KEY = "sk-upstream-SENTINEL-4f1c9a7e";

/** A fake upstream: `plan[service]` is `{status, body, delayMs}`. Stops when the test ends. */
async function fakeUpstream(plan) {
  const seen = { calls: {}, inFlight: 0, maxInFlight: 0, auth: new Set() };
  const server = createServer((req, res) => {
    const url = new URL(req.url, "http://x");
    const [, service, leaf] = url.pathname.split("/");
    seen.calls[service] = (seen.calls[service] ?? 0) + 1;
    seen.auth.add(req.headers.authorization);
    seen.inFlight++;
    seen.maxInFlight = Math.max(seen.maxInFlight, seen.inFlight);
    const p = plan[service] ?? { status: 404, body: "{}" };
    setTimeout(() => {
      seen.inFlight--;
      res.writeHead(leaf === "state" && url.searchParams.get("agent_id") ? p.status ?? 200 : 400, { "content-type": "application/json" });
      // A careless upstream that echoes the credential in its error body.
      res.end(p.status >= 400 ? `{"error":"bad","auth":"${req.headers.authorization}"}` : p.body);
    }, p.delayMs ?? 0);
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const base = `http://127.0.0.1:${server.address().port}`;
  return { base, seen, plan, close: () => new Promise((r) => server.close(r)) };
}

function filesUnder(dir) {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

test("read-through, single-flight, TTL, force refresh, invalidate, write-through, typed upstream errors that are never cached", async () => {
  const up = await fakeUpstream({
    wallet: { body: '{"balances":{"USDC":0.1}}', delayMs: 200 },
    trading: { body: '{"portfolio":[{"asset":"USDC","amount":0.2}]}' },
    casino: { status: 500 },
    escrow: { body: "{}", delayMs: 9_000 },
  });
  const dir = mkdtempSync(join(tmpdir(), "edgemem-services-"));
  const { mf, call } = await startWorker({
    persistDir: dir,
    bindings: { EDGEMEM_SERVICES_URL: up.base, EDGEMEM_SERVICES_API_KEY: API_KEY, EDGEMEM_SERVICES_TIMEOUT_MS: "6000" },
  });
  const texts = [];
  const get = async (path, method = "GET", body) => {
    const r = await call(method, path, body);
    texts.push(r.text);
    return r;
  };
  try {
    // 1,000 concurrent gets of one cold key: one upstream call.
    const many = await Promise.all(Array.from({ length: 1_000 }, () => get("/v1/services/wallet/state?agent_id=a1&namespace=svc")));
    assert.ok(many.every((r) => r.status === 200), many.find((r) => r.status !== 200)?.text);
    assert.equal(up.seen.calls.wallet, 1, "single-flight");
    assert.deepEqual([...up.seen.auth], [`Bearer ${API_KEY}`], "the key went to the upstream");
    assert.equal(many[0].json.state.balances.USDC, 0.1);
    // Fresh until the TTL: served from the cache.
    const cached = await get("/v1/services/wallet/state?agent_id=a1&namespace=svc");
    assert.equal(cached.json.source, "cache");
    assert.equal(up.seen.calls.wallet, 1);
    // force_refresh and invalidate each make one more call.
    assert.equal((await get("/v1/services/wallet/state?agent_id=a1&namespace=svc&force_refresh=true")).json.source, "upstream");
    assert.equal(up.seen.calls.wallet, 2);
    assert.equal((await get("/v1/services/wallet/state?agent_id=a1&namespace=svc", "DELETE")).json.invalidated, 1);
    await get("/v1/services/wallet/state?agent_id=a1&namespace=svc");
    assert.equal(up.seen.calls.wallet, 3);
    // Write-through: the agent's own view, no upstream call.
    const put = await get("/v1/services/trading/state?agent_id=a1&namespace=svc", "PUT", '{"state":{"portfolio":[{"asset":"USDC","amount":0.2}]}}');
    assert.equal(put.status, 200, put.text);
    assert.equal((await get("/v1/services/trading/state?agent_id=a1&namespace=svc")).json.source, "written");
    assert.equal(up.seen.calls.trading, undefined);
    // An error status: typed, names the service, is never cached.
    for (let i = 1; i <= 2; i++) {
      const failed = await get("/v1/services/casino/state?agent_id=a1&namespace=svc");
      assert.equal(failed.status, 502);
      assert.equal(failed.json.code, "upstream_error");
      assert.match(failed.json.detail, /casino.*500/);
      assert.equal(up.seen.calls.casino, i, "each get asks again");
    }
    // A timeout.
    const slow = await get("/v1/services/escrow/state?agent_id=a1&namespace=svc");
    assert.equal(slow.status, 504);
    assert.equal(slow.json.code, "upstream_timeout");
    // TTL expiry: a 1 s service is read again after a second, and the alarm drops it.
    assert.equal((await get("/v1/services/fast?namespace=svc", "PUT", { ttl_seconds: 1 })).status, 200);
    up.plan.fast = { body: '{"n":1}' };
    await get("/v1/services/fast/state?agent_id=a1&namespace=svc");
    await get("/v1/services/fast/state?agent_id=a1&namespace=svc");
    assert.equal(up.seen.calls.fast, 1);
    await new Promise((r) => setTimeout(r, 1_500));
    const stale = await get("/v1/services/fast/state?agent_id=a1&namespace=svc&allow_stale=true");
    assert.equal(up.seen.calls.fast, 2, "past its TTL the entry is not served");
    assert.equal(stale.json.source, "upstream");
    const events = (await get("/v1/events?namespace=svc&since=0&kinds=service_cache.*&limit=1000")).json.events.map((e) => e.kind);
    assert.ok(events.includes("service_cache.expired"), `the alarm expired the entry: ${events}`);
    assert.equal(events.filter((k) => k === "service_cache.refreshed").length, up.seen.calls.wallet + up.seen.calls.fast, "one event per stored read, none for errors");
  } finally {
    await mf.dispose();
    await up.close();
  }
  // The key is in no answer and nowhere in storage.
  for (const t of texts) assert.ok(!t.includes(API_KEY) && !t.includes("SENTINEL"), t);
  for (const f of filesUnder(dir)) assert.ok(!readFileSync(f).includes(Buffer.from("SENTINEL")), `the key is in ${f}`);
  rmSync(dir, { recursive: true, force: true });
});

test("a portfolio snapshot of six services, one slow and one failing: five states, one error, exact totals, fetched concurrently", async () => {
  const up = await fakeUpstream({
    wallet: { body: '{"balances":{"USDC":0.1,"ETH":"1.000000000000000001"}}', delayMs: 100 },
    trading: { body: '{"portfolio":[{"asset":"USDC","amount":0.2}]}', delayMs: 100 },
    casino: { body: '{"balance":"12345678901234567890.12345678","currency":"USDC"}', delayMs: 100 },
    domains: { body: '{"names":["a.agent"]}', delayMs: 100 },
    faucet: { status: 503, delayMs: 100 },
    escrow: { body: '{"balances":{"USDC":"0.000001"}}', delayMs: 500 },
  });
  const { mf, call } = await startWorker({ bindings: { EDGEMEM_SERVICES_URL: up.base, EDGEMEM_SERVICES_API_KEY: API_KEY, EDGEMEM_SERVICES_TIMEOUT_MS: "5000" } });
  try {
    const r = await call("GET", "/v1/services/snapshot?agent_id=agent-7&namespace=snap");
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.ok, 5);
    assert.equal(r.json.failed, 1);
    assert.equal(r.json.services.faucet.error.code, "upstream_error");
    assert.ok(!r.text.includes(API_KEY), "not even from the upstream's echo");
    assert.equal(r.json.totals.USDC, "12345678901234567890.42345778", "0.1 + 0.2 + the casino balance + 0.000001, exactly");
    assert.equal(r.json.totals.ETH, "1.000000000000000001");
    assert.equal(up.seen.maxInFlight, 6, "all six asked at once");
    const again = await call("GET", "/v1/services/snapshot?agent_id=agent-7&namespace=snap");
    assert.equal(again.json.services.wallet.source, "cache");
    assert.equal(up.seen.calls.faucet, 2, "the failure was not cached");
  } finally {
    await mf.dispose();
    await up.close();
  }
});
