// End-to-end tests of the Worker and its Durable Object, in Miniflare (workerd)
// on 127.0.0.1, with on-disk persistence.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Memory, KVStore } from "edgemem";
import { startWorker } from "./miniflare.mjs";

const persistDir = mkdtempSync(join(tmpdir(), "edgemem-worker-"));
test.after(() => rmSync(persistDir, { recursive: true, force: true }));

function expectError(r, status, code) {
  assert.equal(r.status, status, r.text);
  assert.equal(r.json?.code, code, r.text);
  assert.equal(typeof r.json?.detail, "string");
}

test("a session written through the Worker survives a runtime restart", async () => {
  let { mf, call } = await startWorker({ persistDir });
  try {
    const health = await call("GET", "/v1/health");
    assert.equal(health.status, 200);
    assert.ok(Math.abs(health.json.now - Date.now()) < 60_000, "health.now is epoch milliseconds");
    const put = await call("PUT", "/v1/working-memory/trip?namespace=acme", {
      messages: [{ role: "user", content: "Book Lisbon, budget 1,250.00 EUR" }],
      data: { budget: "1250.00" },
      context: "planning a trip",
    });
    assert.equal(put.status, 200, put.text);
    assert.equal(put.json.namespace, "acme");
    const appended = await call("POST", "/v1/working-memory/trip/messages?namespace=acme", {
      messages: [{ role: "assistant", content: "Found 3 flights" }],
    });
    assert.equal(appended.json.message_count, 2);
    assert.deepEqual(appended.json.appended.map((m) => m.content), ["Found 3 flights"], "only what was added");
  } finally {
    await mf.dispose();
  }

  ({ mf, call } = await startWorker({ persistDir }));
  try {
    const got = await call("GET", "/v1/working-memory/trip?namespace=acme");
    assert.equal(got.status, 200, got.text);
    assert.deepEqual(got.json.messages.map((m) => m.content), ["Book Lisbon, budget 1,250.00 EUR", "Found 3 flights"]);
    assert.equal(got.json.data.budget, "1250.00");
    assert.equal(got.json.context, "planning a trip");
    const list = await call("GET", "/v1/working-memory/?namespace=acme");
    assert.deepEqual(list.json, { sessions: ["trip"], total: 1 });
  } finally {
    await mf.dispose();
  }
});

test("tenants are isolated by namespace, and a PUT is routed by its body's namespace", async () => {
  const { mf, call } = await startWorker();
  try {
    await call("PUT", "/v1/working-memory/s1?namespace=a", { context: "tenant a" });
    assert.equal((await call("GET", "/v1/working-memory/s1?namespace=b")).status, 404);
    assert.equal((await call("GET", "/v1/working-memory/s1")).status, 404, "default namespace is separate");
    // The AMS client sends the namespace only in the PUT body.
    const put = await call("PUT", "/v1/working-memory/s2", { namespace: "b", context: "tenant b" });
    assert.equal(put.status, 200, put.text);
    assert.equal((await call("GET", "/v1/working-memory/s2?namespace=b")).json.context, "tenant b");
    expectError(await call("PUT", "/v1/working-memory/s3?namespace=a", { namespace: "b" }), 422, "invalid_input");
    expectError(await call("GET", "/v1/working-memory/?namespace=" + "x".repeat(300)), 413, "payload_too_large");
  } finally {
    await mf.dispose();
  }
});

test("bad input gets typed errors with honest statuses and leaves state untouched", async () => {
  const { mf, call } = await startWorker();
  try {
    await call("PUT", "/v1/working-memory/keep", { context: "original" });
    expectError(await call("PUT", "/v1/working-memory/keep", "{not json"), 400, "invalid_json");
    expectError(await call("PUT", "/v1/working-memory/keep", { messages: "nope" }), 422, "invalid_input");
    expectError(await call("PUT", "/v1/working-memory/keep", { ttl_seconds: 2.5 }), 422, "invalid_input");
    expectError(await call("PUT", "/v1/working-memory/keep", { context: "x".repeat(1024 * 1024 + 1) }), 413, "payload_too_large");
    expectError(await call("GET", "/v1/working-memory/missing"), 404, "not_found");
    expectError(await call("POST", "/v1/working-memory/missing/messages", { messages: [{ role: "user", content: "x" }] }), 404, "not_found");
    expectError(await call("PATCH", "/v1/working-memory/keep", {}), 405, "method_not_allowed");
    expectError(await call("GET", "/v1/working-memory/?limit=1000"), 422, "invalid_input");
    expectError(await call("GET", "/v1/nowhere"), 404, "not_found");
    const got = await call("GET", "/v1/working-memory/keep");
    assert.equal(got.json.context, "original");
    assert.equal((await call("DELETE", "/v1/working-memory/keep")).json.status, "ok");
    assert.equal((await call("DELETE", "/v1/working-memory/keep")).status, 200, "AMS: delete is idempotent");
  } finally {
    await mf.dispose();
  }
});

test("the body cap is configurable and checked before parsing", async () => {
  const { mf, call } = await startWorker({ bindings: { EDGEMEM_BODY_BYTES_MAX: "100" } });
  try {
    expectError(await call("PUT", "/v1/working-memory/s", { context: "y".repeat(200) }), 413, "payload_too_large");
    // Over the cap and not even JSON: 413 wins, proving the body was never parsed.
    expectError(await call("PUT", "/v1/working-memory/s", "{".repeat(500)), 413, "payload_too_large");
    assert.equal((await call("PUT", "/v1/working-memory/s", { context: "ok" })).status, 200);
  } finally {
    await mf.dispose();
  }
});

test("bearer auth guards every route but health", async () => {
  const { mf, call } = await startWorker({ bindings: { EDGEMEM_AUTH_TOKEN: "s3cret" } });
  try {
    assert.equal((await call("GET", "/v1/health")).status, 200);
    expectError(await call("GET", "/v1/working-memory/"), 401, "unauthorized");
    expectError(await call("GET", "/v1/working-memory/", undefined, { authorization: "Bearer wrong" }), 401, "unauthorized");
    assert.equal((await call("GET", "/v1/working-memory/", undefined, { authorization: "Bearer s3cret" })).status, 200);
  } finally {
    await mf.dispose();
  }
});

test("TTL: an expired session is gone, and the alarm sweeps it", async () => {
  const { mf, call } = await startWorker();
  try {
    await call("PUT", "/v1/working-memory/brief?namespace=ttl", { ttl_seconds: 1 });
    await call("PUT", "/v1/working-memory/durable?namespace=ttl", {});
    assert.equal((await call("GET", "/v1/working-memory/brief?namespace=ttl")).status, 200);
    const before = (await call("GET", "/v1/stats?namespace=ttl")).json;
    assert.equal(before.sessions, 2);
    assert.ok(before.next_expiry > Date.now() - 5_000);
    await new Promise((r) => setTimeout(r, 2500));
    expectError(await call("GET", "/v1/working-memory/brief?namespace=ttl"), 404, "not_found");
    assert.deepEqual((await call("GET", "/v1/working-memory/?namespace=ttl")).json.sessions, ["durable"]);
    // Only the alarm removes the record itself: no request swept it.
    const after = (await call("GET", "/v1/stats?namespace=ttl")).json;
    assert.equal(after.sessions, 1, JSON.stringify(after));
    assert.equal(after.next_expiry, null);
  } finally {
    await mf.dispose();
  }
});

test("the Durable Object publishes snapshots to KV that the npm package can open", async () => {
  const { mf, call } = await startWorker();
  try {
    for (let i = 0; i < 5; i++) await call("PUT", `/v1/working-memory/s${i}?namespace=pub`, { context: `n${i}` });
    const r = await call("POST", "/v1/snapshots/publish?namespace=pub");
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.key_prefix, "pub/");
    const kv = await mf.getKVNamespace("SNAPSHOTS");
    const replica = await Memory.openPublished(new KVStore(kv), { keyPrefix: "pub/" });
    assert.equal((await replica.listSessions()).total, 5);
    assert.equal((await replica.getSession("s3")).context, "n3");
  } finally {
    await mf.dispose();
  }
});

test("10,000 hard doubles PUT into session data come back bit for bit on GET", async () => {
  const { hardDoubles, doublesJson, changedDoubles } = await import("../js/helpers.mjs");
  const values = hardDoubles(10_000);
  const { mf, call } = await startWorker();
  try {
    // Session data is capped at 256 KiB: four sessions of 2,500.
    for (let i = 0; i < values.length; i += 2_500) {
      const part = values.slice(i, i + 2_500);
      const body = `{"data":{"values":${doublesJson(part)},"neg_zero":-0}}`;
      const put = await call("PUT", `/v1/working-memory/floats-${i}?namespace=numbers`, body);
      assert.equal(put.status, 200, put.text.slice(0, 300));
      assert.deepEqual(changedDoubles(part, put.json.data.values), [], "the PUT answer");
      const got = await call("GET", `/v1/working-memory/floats-${i}?namespace=numbers`);
      assert.deepEqual(changedDoubles(part, got.json.data.values), [], "the GET answer");
      assert.ok(Object.is(got.json.data.neg_zero, -0), "-0 keeps its sign");
    }
  } finally {
    await mf.dispose();
  }
});

test("numbers a double cannot hold come back as sent: session data, tool results, episodes, across a restart", async () => {
  const dir = mkdtempSync(join(tmpdir(), "edgemem-exact-"));
  const exact = ["1234.567890123456789", "0.1234567890123456789012345678", "123456789012345678901234567890", "-0.000000000000000000000000001"];
  let { mf, call } = await startWorker({ persistDir: dir });
  try {
    const put = await call("PUT", "/v1/working-memory/exact?namespace=numbers", `{"data":{"price":${exact[0]},"list":[${exact.join(",")}]}}`);
    assert.equal(put.status, 200, put.text);
    assert.ok(put.text.includes(`"price":${exact[0]}`), put.text);
    const ep = await call("POST", "/v1/episodes?namespace=numbers", `{"agent_id":"a","kind":"quote","payload":{"amount":${exact[0]}}}`);
    assert.equal(ep.status, 200, ep.text);
  } finally {
    await mf.dispose();
  }
  ({ mf, call } = await startWorker({ persistDir: dir }));
  try {
    const got = await call("GET", "/v1/working-memory/exact?namespace=numbers");
    assert.ok(got.text.includes(`"price":${exact[0]}`), got.text);
    assert.ok(got.text.includes(`"list":[${exact.join(",")}]`), got.text);
    const eps = await call("GET", "/v1/episodes?namespace=numbers&agent_id=a");
    assert.ok(eps.text.includes(`"amount":${exact[0]}`), eps.text);
  } finally {
    await mf.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the change feed page: contiguous per namespace, never crossing tenants, resumable across a restart", async () => {
  const dir = mkdtempSync(join(tmpdir(), "edgemem-feed-"));
  let { mf, call } = await startWorker({ persistDir: dir });
  try {
    for (const ns of ["a", "b"]) {
      await call("PUT", `/v1/working-memory/s?namespace=${ns}`, { messages: [] });
    }
    await call("POST", "/v1/working-memory/s/messages?namespace=a", { messages: [{ role: "user", content: "private to a" }] });
    expectError(await call("POST", "/v1/working-memory/missing/messages?namespace=a", { messages: [{ role: "user", content: "x" }] }), 404, "not_found");
    const a = await call("GET", "/v1/events?namespace=a&since=0");
    assert.equal(a.status, 200, a.text);
    assert.deepEqual(a.json.events.map((e) => [e.seq, e.kind, e.key]), [
      [1, "working_memory.updated", "s"],
      [2, "working_memory.appended", "s"],
    ]);
    assert.ok(!a.text.includes("private to a"));
    const b = await call("GET", "/v1/events?namespace=b&since=0");
    assert.deepEqual(b.json.events.map((e) => e.seq), [1], "tenant b sees only its own write");
    for (const q of ["since=-1", "since=x", "since=99", "kinds=nope"]) {
      expectError(await call("GET", `/v1/events?namespace=a&${q}`), 400, "invalid_query");
    }
  } finally {
    await mf.dispose();
  }
  ({ mf, call } = await startWorker({ persistDir: dir }));
  try {
    await call("DELETE", "/v1/working-memory/s?namespace=a");
    const resumed = await call("GET", "/v1/events?namespace=a&since=2");
    assert.deepEqual(resumed.json.events.map((e) => [e.seq, e.kind]), [[3, "working_memory.deleted"]]);
    assert.equal(resumed.json.resync_required, false);
  } finally {
    await mf.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
});
