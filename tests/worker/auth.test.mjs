// Tenancy and trust through the built Worker in Miniflare (issue 12):
// per-tenant keys (create, list, rotate, revoke, expire), the key deciding
// the tenant, scopes, rate limits, quotas, secure-by-default, input
// hardening, CORS, and the by-id directory written before the tenant.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startWorker } from "./miniflare.mjs";

const ADMIN = "admin-" + "x".repeat(40);

function expectError(res, status, code) {
  assert.equal(res.status, status, `${res.status} ${res.text}`);
  assert.equal(res.json?.code, code, res.text);
  assert.equal(typeof res.json?.detail, "string");
}

const bearer = (token) => ({ authorization: `Bearer ${token}` });

async function withWorker(bindings, fn, opts = {}) {
  const w = await startWorker({ bindings, ...opts });
  try {
    await fn(w);
  } finally {
    await w.mf.dispose();
  }
}

async function mintKey(call, body) {
  const r = await call("POST", "/v1/admin/keys", body, bearer(ADMIN));
  assert.equal(r.status, 200, r.text);
  return r.json;
}

test("secure by default: no admin token and no dev mode is 503 auth_not_configured; dev mode is loopback only", async () => {
  await withWorker({ EDGEMEM_DEV_MODE: "0" }, async ({ call }) => {
    assert.equal((await call("GET", "/v1/health")).status, 200);
    expectError(await call("GET", "/v1/working-memory/"), 503, "auth_not_configured");
    expectError(await call("PUT", "/v1/working-memory/s", {}, bearer("anything")), 401, "unauthorized");
  });
  await withWorker({ EDGEMEM_DEV_MODE: "1" }, async ({ mf, call }) => {
    assert.equal((await call("GET", "/v1/working-memory/")).status, 200);
    // The same dev flag on a real hostname opens nothing.
    const res = await mf.dispatchFetch("https://edgemem.example.com/v1/working-memory/");
    assert.equal(res.status, 503);
    assert.equal((await res.json()).code, "auth_not_configured");
  });
});

test("keys: created by the admin, shown once, the key decides the tenant, listed without secrets", async () => {
  await withWorker({ EDGEMEM_ADMIN_TOKEN: ADMIN }, async ({ call }) => {
    expectError(await call("POST", "/v1/admin/keys", { namespace: "acme", scopes: ["read"] }), 401, "unauthorized");
    expectError(await call("POST", "/v1/admin/keys", { namespace: "acme", scopes: ["read"] }, bearer(ADMIN + "y")), 401, "unauthorized");
    const acme = await mintKey(call, { namespace: "acme", scopes: ["read", "write"] });
    assert.match(acme.key, /^emk_[0-9a-f]{16}_[0-9a-f]{64}$/);
    assert.equal(acme.namespace, "acme");
    assert.deepEqual(acme.scopes, ["read", "write"]);
    assert.ok(acme.key.includes(acme.id));

    // No namespace named: the key's own.
    assert.equal((await call("PUT", "/v1/working-memory/s1", { context: "acme's" }, bearer(acme.key))).status, 200);
    const viaAdmin = await call("GET", "/v1/working-memory/s1?namespace=acme", undefined, bearer(ADMIN));
    assert.equal(viaAdmin.json.context, "acme's");
    expectError(await call("GET", "/v1/working-memory/s1", undefined, bearer(ADMIN)), 404, "not_found");
    // Naming another tenant anywhere is 403.
    expectError(await call("GET", "/v1/working-memory/s1?namespace=globex", undefined, bearer(acme.key)), 403, "namespace_forbidden");
    expectError(await call("PUT", "/v1/working-memory/s2", { namespace: "globex" }, bearer(acme.key)), 403, "namespace_forbidden");
    expectError(await call("POST", "/v1/long-term-memory/search", { text: "x", namespace: { eq: "globex" } }, bearer(acme.key)), 403, "namespace_forbidden");
    // A bulk create naming two tenants is refused whole: nothing lands in either.
    const mixed = { memories: [{ id: "mx-1", text: "one", namespace: "acme" }, { id: "mx-2", text: "two", namespace: "globex" }] };
    const r = await call("POST", "/v1/long-term-memory/", mixed, bearer(ADMIN));
    assert.equal(r.status, 422, r.text);
    for (const ns of ["acme", "globex"]) {
      expectError(await call("GET", `/v1/long-term-memory/mx-1?namespace=${ns}`, undefined, bearer(ADMIN)), 404, "not_found");
      expectError(await call("GET", `/v1/long-term-memory/mx-2?namespace=${ns}`, undefined, bearer(ADMIN)), 404, "not_found");
    }

    // An id of another tenant is 404, exactly like an id that never existed.
    const g = await call("POST", "/v1/long-term-memory/", { memories: [{ id: "g-secret-1", text: "globex plans", namespace: "globex" }] }, bearer(ADMIN));
    assert.equal(g.status, 200, g.text);
    const probe = await call("GET", "/v1/long-term-memory/g-secret-1", undefined, bearer(acme.key));
    const never = await call("GET", "/v1/long-term-memory/never-existed", undefined, bearer(acme.key));
    expectError(probe, 404, "not_found");
    expectError(never, 404, "not_found");
    assert.ok(!probe.text.includes("globex"), probe.text);
    assert.equal(probe.text.replace("g-secret-1", "ID"), never.text.replace("never-existed", "ID"), "a foreign id reads exactly like a missing one");
    // The admin finds it by id alone, through the directory.
    assert.equal((await call("GET", "/v1/long-term-memory/g-secret-1", undefined, bearer(ADMIN))).json.text, "globex plans");

    // Listing shows no secret and no hash.
    const list = await call("GET", "/v1/admin/keys", undefined, bearer(ADMIN));
    assert.equal(list.status, 200);
    const mine = list.json.keys.find((k) => k.id === acme.id);
    assert.equal(mine.namespace, "acme");
    assert.equal(mine.key, undefined);
    assert.ok(!list.text.includes(acme.key.slice(21)), "the secret is never listed");
    assert.ok(!list.text.includes("hash"));
    // A tenant key cannot administer keys without the admin scope.
    expectError(await call("GET", "/v1/admin/keys", undefined, bearer(acme.key)), 403, "scope_forbidden");
  });
});

test("prefix keys, scopes, admin keys that delegate within their coverage", async () => {
  await withWorker({ EDGEMEM_ADMIN_TOKEN: ADMIN }, async ({ call }) => {
    const tenants = await mintKey(call, { namespace_prefix: "t-", scopes: ["read", "write", "admin"] });
    assert.equal(tenants.namespace, null);
    assert.equal(tenants.namespace_prefix, "t-");
    assert.equal((await call("PUT", "/v1/working-memory/s?namespace=t-1", {}, bearer(tenants.key))).status, 200);
    expectError(await call("PUT", "/v1/working-memory/s?namespace=u-1", {}, bearer(tenants.key)), 403, "namespace_forbidden");
    // No namespace and a prefix key: the default tenant is not covered.
    expectError(await call("GET", "/v1/working-memory/"), 401, "unauthorized");
    expectError(await call("GET", "/v1/working-memory/", undefined, bearer(tenants.key)), 403, "namespace_forbidden");
    // By id through the directory, inside the coverage only.
    await call("POST", "/v1/long-term-memory/", { memories: [{ id: "in-t", text: "inside", namespace: "t-2" }, { text: "no id given", namespace: "t-2" }] }, bearer(tenants.key));
    await call("POST", "/v1/long-term-memory/", { memories: [{ id: "in-u", text: "outside", namespace: "u-2" }] }, bearer(ADMIN));
    assert.equal((await call("GET", "/v1/long-term-memory/in-t", undefined, bearer(tenants.key))).json.text, "inside");
    expectError(await call("GET", "/v1/long-term-memory/in-u", undefined, bearer(tenants.key)), 404, "not_found");
    expectError(await call("PATCH", "/v1/long-term-memory/in-u", { text: "mine now" }, bearer(tenants.key)), 404, "not_found");
    assert.equal((await call("GET", "/v1/long-term-memory/in-u", undefined, bearer(ADMIN))).json.text, "outside");
    // A memory created without an id got one the directory knows.
    const found = await call("POST", "/v1/long-term-memory/search", { text: "no id given", namespace: { eq: "t-2" } }, bearer(tenants.key));
    const generated = found.json.memories.find((m) => m.text === "no id given");
    assert.ok(generated, found.text);
    assert.equal((await call("GET", `/v1/long-term-memory/${generated.id}`, undefined, bearer(tenants.key))).status, 200);

    // The admin key delegates inside its own coverage and scopes only.
    const sub = await call("POST", "/v1/admin/keys", { namespace: "t-9", scopes: ["read"] }, bearer(tenants.key));
    assert.equal(sub.status, 200, sub.text);
    expectError(await call("POST", "/v1/admin/keys", { namespace: "u-9", scopes: ["read"] }, bearer(tenants.key)), 403, "namespace_forbidden");
    expectError(await call("POST", "/v1/admin/keys", { namespace_prefix: "t", scopes: ["read"] }, bearer(tenants.key)), 403, "namespace_forbidden");
    const reader = sub.json;
    assert.equal((await call("GET", "/v1/working-memory/", undefined, bearer(reader.key))).status, 200);
    expectError(await call("PUT", "/v1/working-memory/s", {}, bearer(reader.key)), 403, "scope_forbidden");
    expectError(await call("POST", "/v1/admin/keys", { namespace: "t-9", scopes: ["read", "write"] }, bearer(reader.key)), 403, "scope_forbidden");
    // The sub-key is listed for its creator; a key outside is not.
    const listed = (await call("GET", "/v1/admin/keys", undefined, bearer(tenants.key))).json.keys.map((k) => k.id);
    assert.ok(listed.includes(reader.id) && listed.includes(tenants.id));
    const outside = await mintKey(call, { namespace: "u-1", scopes: ["read"] });
    assert.ok(!(await call("GET", "/v1/admin/keys", undefined, bearer(tenants.key))).json.keys.some((k) => k.id === outside.id));
    expectError(await call("DELETE", `/v1/admin/keys/${outside.id}`, undefined, bearer(tenants.key)), 404, "not_found");

    // Bad requests.
    for (const body of [{ scopes: ["read"] }, { namespace: "a", namespace_prefix: "b", scopes: ["read"] }, { namespace: "a", scopes: [] }, { namespace: "a", scopes: ["root"] }, { namespace: "__keys", scopes: ["read"] }, { namespace_prefix: "", scopes: ["read"] }]) {
      expectError(await call("POST", "/v1/admin/keys", body, bearer(ADMIN)), 422, "invalid_input");
    }
  });
});

test("rotation, revocation and expiry take effect on the next request; bad keys never echo", async () => {
  await withWorker({ EDGEMEM_ADMIN_TOKEN: ADMIN }, async ({ call }) => {
    const k = await mintKey(call, { namespace: "r", scopes: ["read"] });
    assert.equal((await call("GET", "/v1/working-memory/", undefined, bearer(k.key))).status, 200);
    const rotated = await call("POST", `/v1/admin/keys/${k.id}/rotate`, {}, bearer(ADMIN));
    assert.equal(rotated.status, 200, rotated.text);
    assert.equal(rotated.json.id, k.id);
    assert.notEqual(rotated.json.key, k.key);
    expectError(await call("GET", "/v1/working-memory/", undefined, bearer(k.key)), 401, "unauthorized");
    assert.equal((await call("GET", "/v1/working-memory/", undefined, bearer(rotated.json.key))).status, 200);
    // With a grace period the old secret keeps working for it.
    const graced = await call("POST", `/v1/admin/keys/${k.id}/rotate`, { grace_seconds: 60 }, bearer(ADMIN));
    assert.equal((await call("GET", "/v1/working-memory/", undefined, bearer(rotated.json.key))).status, 200);
    assert.equal((await call("GET", "/v1/working-memory/", undefined, bearer(graced.json.key))).status, 200);

    const revoked = await call("POST", `/v1/admin/keys/${k.id}/revoke`, undefined, bearer(ADMIN));
    assert.deepEqual(revoked.json, { id: k.id, revoked: true });
    const after = await call("GET", "/v1/working-memory/", undefined, bearer(graced.json.key));
    expectError(after, 401, "unauthorized");
    assert.ok(!after.text.includes(graced.json.key.slice(21)), "a key never appears in an error");
    expectError(await call("GET", `/v1/admin/keys/${k.id}`, undefined, bearer(ADMIN)), 404, "not_found");

    const brief = await mintKey(call, { namespace: "r", scopes: ["read"], expires_at: new Date(Date.now() + 1500).toISOString() });
    assert.equal((await call("GET", "/v1/working-memory/", undefined, bearer(brief.key))).status, 200);
    await new Promise((r) => setTimeout(r, 1700));
    expectError(await call("GET", "/v1/working-memory/", undefined, bearer(brief.key)), 401, "unauthorized");
    // Malformed and oversized bearer tokens are 401, never echoed.
    for (const bad of ["emk_zz", "x".repeat(5000), `${brief.key}0`]) {
      const res = await call("GET", "/v1/working-memory/", undefined, bearer(bad));
      expectError(res, 401, "unauthorized");
      assert.ok(!res.text.includes(bad.slice(0, 40)) || bad.length < 10);
    }
  });
});

test("rate limits: a token bucket per key answers 429 with Retry-After", async () => {
  await withWorker({ EDGEMEM_ADMIN_TOKEN: ADMIN }, async ({ call }) => {
    const slow = await mintKey(call, { namespace: "rl", scopes: ["read"], rate: { per_second: 1, burst: 3 } });
    const other = await mintKey(call, { namespace: "rl", scopes: ["read"] });
    const statuses = [];
    let limited;
    for (let i = 0; i < 5; i++) {
      const r = await call("GET", "/v1/working-memory/", undefined, bearer(slow.key));
      statuses.push(r.status);
      if (r.status === 429) limited = r;
    }
    assert.deepEqual(statuses.slice(0, 3), [200, 200, 200]);
    assert.ok(limited, `no 429 in ${statuses}`);
    expectError(limited, 429, "rate_limited");
    assert.ok(Number(limited.headers.get("retry-after")) >= 1);
    // Another key is unaffected.
    assert.equal((await call("GET", "/v1/working-memory/", undefined, bearer(other.key))).status, 200);
    await new Promise((r) => setTimeout(r, 1100));
    assert.equal((await call("GET", "/v1/working-memory/", undefined, bearer(slow.key))).status, 200);
    expectError(await call("POST", "/v1/admin/keys", { namespace: "rl", scopes: ["read"], rate: { per_second: 1e9, burst: 1 } }, bearer(ADMIN)), 422, "invalid_input");
  });
});

test("quotas per tenant: records, bytes, ledger accounts, each typed; deletes still pass", async () => {
  await withWorker({ EDGEMEM_QUOTA_RECORDS: "2", EDGEMEM_QUOTA_LEDGER_ACCOUNTS: "1", EDGEMEM_QUOTA_BYTES: "200000" }, async ({ call }) => {
    assert.equal((await call("POST", "/v1/long-term-memory/?namespace=q", { memories: [{ id: "a", text: "a" }, { id: "b", text: "b" }] })).status, 200);
    expectError(await call("POST", "/v1/long-term-memory/?namespace=q", { memories: [{ id: "c", text: "c" }] }), 403, "records_quota_exceeded");
    expectError(await call("GET", "/v1/long-term-memory/c?namespace=q"), 404, "not_found");
    assert.equal((await call("DELETE", "/v1/long-term-memory?namespace=q&memory_ids=a")).status, 200);
    assert.equal((await call("POST", "/v1/long-term-memory/?namespace=q", { memories: [{ id: "c", text: "c" }] })).status, 200);
    // Another tenant has its own quota.
    assert.equal((await call("POST", "/v1/long-term-memory/?namespace=q2", { memories: [{ id: "a", text: "a" }, { id: "b", text: "b" }] })).status, 200);

    assert.equal((await call("POST", "/v1/ledger/assets?namespace=q", { code: "USD", scale: 2 })).status, 200);
    assert.equal((await call("POST", "/v1/ledger/accounts?namespace=q", { id: "one", asset: "USD" })).status, 200);
    assert.equal((await call("POST", "/v1/ledger/accounts?namespace=q", { id: "one", asset: "USD" })).status, 200);
    expectError(await call("POST", "/v1/ledger/accounts?namespace=q", { id: "two", asset: "USD" }), 403, "ledger_accounts_quota_exceeded");

    const big = "z".repeat(150_000);
    assert.equal((await call("PUT", "/v1/working-memory/big?namespace=q", { context: big })).status, 200);
    expectError(await call("PUT", "/v1/working-memory/big2?namespace=q", { context: big }), 403, "bytes_quota_exceeded");
    expectError(await call("GET", "/v1/working-memory/big2?namespace=q"), 404, "not_found");
  });
});

test("input hardening: 404, 405 with Allow, 415, depth, ids, reserved namespaces, CORS allow-list, no internals in errors", async () => {
  await withWorker({ EDGEMEM_CORS_ORIGINS: "https://app.example" }, async ({ mf, call }) => {
    expectError(await call("GET", "/v1/no-such-route"), 404, "not_found");
    const wrong = await call("PUT", "/v1/long-term-memory/search", {});
    expectError(wrong, 405, "method_not_allowed");
    assert.equal(wrong.headers.get("allow"), "POST, OPTIONS");
    const wm = await call("PATCH", "/v1/working-memory/s1");
    expectError(wm, 405, "method_not_allowed");
    assert.equal(wm.headers.get("allow"), "GET, PUT, DELETE, OPTIONS");

    const plain = await mf.dispatchFetch("http://127.0.0.1/v1/working-memory/s", { method: "PUT", body: "{}", headers: { "content-type": "text/plain;charset=UTF-8" } });
    assert.equal(plain.status, 415);
    assert.equal((await plain.json()).code, "unsupported_media_type");
    const form = await mf.dispatchFetch("http://127.0.0.1/v1/working-memory/s", { method: "PUT", body: "a=1", headers: { "content-type": "application/x-www-form-urlencoded" } });
    assert.equal(form.status, 415);
    expectError(await call("GET", "/v1/working-memory/s"), 404, "not_found");

    const deep = `{"data":${"[".repeat(60)}${"]".repeat(60)}}`;
    expectError(await call("PUT", "/v1/working-memory/s", deep), 422, "invalid_input");
    for (const id of ["a%00b", "a%0Ab", "..", "a..b", "x".repeat(300)]) {
      const r = await call("PUT", `/v1/working-memory/${id}`, {});
      // (`..` alone is resolved away by the URL parser: another route.)
      assert.ok([404, 413, 422].includes(r.status), `${id}: ${r.status} ${r.text}`);
      if (id !== "..") assert.notEqual(r.status, 404);
    }
    expectError(await call("GET", "/v1/working-memory/?namespace=__keys"), 422, "invalid_input");
    expectError(await call("GET", "/v1/working-memory/?namespace=__directory"), 422, "invalid_input");
    expectError(await call("GET", "/v1/working-memory/?limit=100000"), 422, "invalid_input");

    // CORS: the allow-listed origin gets the headers, any other none.
    const pre = await mf.dispatchFetch("http://127.0.0.1/v1/working-memory/s", { method: "OPTIONS", headers: { origin: "https://app.example", "access-control-request-method": "PUT" } });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers.get("access-control-allow-origin"), "https://app.example");
    assert.match(pre.headers.get("access-control-allow-methods"), /PUT/);
    const ok = await mf.dispatchFetch("http://127.0.0.1/v1/working-memory/", { headers: { origin: "https://app.example" } });
    assert.equal(ok.headers.get("access-control-allow-origin"), "https://app.example");
    const evil = await mf.dispatchFetch("http://127.0.0.1/v1/working-memory/", { headers: { origin: "https://evil.example" } });
    assert.equal(evil.headers.get("access-control-allow-origin"), null);
  });
});

test("the id directory is written before the tenant: a crash between the two steps loses nothing and serves nothing false", async () => {
  const dir = mkdtempSync(join(tmpdir(), "edgemem-dir-"));
  try {
    // Killed after the directory entry, before the tenant's write.
    await withWorker({ EDGEMEM_TEST_FAULT: "after_directory_register" }, async ({ call }) => {
      const r = await call("POST", "/v1/long-term-memory/", { memories: [{ id: "m1", text: "first", namespace: "crash" }] });
      expectError(r, 500, "internal");
      assert.ok(!r.text.includes("injected") && !r.text.includes("dir/"), `no internals in ${r.text}`);
      // The entry routes to a tenant without the record: a clean 404.
      expectError(await call("GET", "/v1/long-term-memory/m1"), 404, "not_found");
    }, { persistDir: dir });
    // Killed after the tenant's write, before the client heard back.
    await withWorker({ EDGEMEM_TEST_FAULT: "after_tenant_write" }, async ({ call }) => {
      expectError(await call("POST", "/v1/long-term-memory/", { memories: [{ id: "m2", text: "second", namespace: "crash" }] }), 500, "internal");
    }, { persistDir: dir });
    await withWorker({}, async ({ call }) => {
      // The written record is found by id alone.
      const m2 = await call("GET", "/v1/long-term-memory/m2");
      assert.equal(m2.status, 200, m2.text);
      assert.equal(m2.json.namespace, "crash");
      // The retried create lands and is found.
      assert.equal((await call("POST", "/v1/long-term-memory/", { memories: [{ id: "m1", text: "first", namespace: "crash" }] })).status, 200);
      assert.equal((await call("GET", "/v1/long-term-memory/m1")).json.text, "first");
      const all = await call("POST", "/v1/long-term-memory/search", { text: "first second", namespace: { eq: "crash" }, search_mode: "keyword" });
      assert.deepEqual(all.json.memories.map((m) => m.id).sort(), ["m1", "m2"]);
    }, { persistDir: dir });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a browser WebSocket authenticates with its key as a subprotocol, and the Worker answers edgemem", async () => {
  await withWorker({ EDGEMEM_ADMIN_TOKEN: ADMIN }, async ({ mf, call }) => {
    const k = await mintKey(call, { namespace: "live", scopes: ["read", "write"] });
    assert.equal((await call("PUT", "/v1/working-memory/s", { context: "x" }, bearer(k.key))).status, 200);
    const refused = await mf.dispatchFetch("http://127.0.0.1/v1/events?since=0", { headers: { upgrade: "websocket", "sec-websocket-protocol": "edgemem" } });
    assert.equal(refused.status, 401);
    const other = await mintKey(call, { namespace: "elsewhere", scopes: ["read"] });
    const forbidden = await mf.dispatchFetch("http://127.0.0.1/v1/events?since=0&namespace=live", { headers: { upgrade: "websocket", "sec-websocket-protocol": `edgemem, bearer.${other.key}` } });
    assert.equal(forbidden.status, 403);
    const res = await mf.dispatchFetch("http://127.0.0.1/v1/events?since=0", { headers: { upgrade: "websocket", "sec-websocket-protocol": `edgemem, bearer.${k.key}` } });
    assert.equal(res.status, 101);
    assert.equal(res.headers.get("sec-websocket-protocol"), "edgemem");
    const ws = res.webSocket;
    const first = new Promise((resolve) => ws.addEventListener("message", (m) => resolve(JSON.parse(m.data)), { once: true }));
    ws.accept();
    const e = await first;
    assert.match(e.kind, /^working_memory\./);
    assert.equal(e.key, "s");
    ws.close(1000, "done");
  });
});

test("keys live in the key directory's objects by id; a key of the single directory of earlier releases still works and moves", async () => {
  await withWorker({ EDGEMEM_ADMIN_TOKEN: ADMIN }, async ({ mf, call }) => {
    const ns = await mf.getDurableObjectNamespace("MEMORY");
    const keysCall = async (name, op, body) => {
      const r = await ns.get(ns.idFromName(name)).fetch(`https://keys.local/_keys/${op}`, { method: "POST", body: JSON.stringify(body) });
      assert.equal(r.status, 200, await r.clone().text());
      return r.json();
    };
    // Minted keys: each in one object of the sixteen, none in the legacy one.
    const minted = [];
    for (let i = 0; i < 6; i++) minted.push(await mintKey(call, { namespace: `spread${i}`, scopes: ["read", "write"] }));
    const holders = new Map();
    for (let n = 0; n < 16; n++) for (const r of (await keysCall(`__keys/${n}`, "list", {})).records) holders.set(r.id, [...(holders.get(r.id) ?? []), n]);
    for (const k of minted) assert.equal(holders.get(k.id)?.length, 1, `${k.id}: ${holders.get(k.id)}`);
    assert.deepEqual((await keysCall("__keys", "list", {})).records, []);
    assert.ok(new Set([...holders.values()].flat()).size > 1, "the keys spread over several objects");
    // A record written by an earlier release, in the single `__keys`.
    const { createHash } = await import("node:crypto");
    const id = "0123456789abcdef";
    const secret = "ab".repeat(32);
    const record = { id, hash: createHash("sha256").update(secret).digest("hex"), coverage: { namespace: "legacy" }, scopes: ["read", "write"], created_at: Date.now() };
    await keysCall("__keys", "create", { record });
    const key = `emk_${id}_${secret}`;
    assert.equal((await call("PUT", "/v1/working-memory/s1", { messages: [] }, bearer(key))).status, 200, "the legacy key authenticates");
    const listed = await call("GET", "/v1/admin/keys", undefined, bearer(ADMIN));
    assert.equal(listed.status, 200, listed.text);
    assert.equal(listed.json.keys.filter((k) => k.id === id).length, 1, "listed once");
    assert.deepEqual((await keysCall("__keys", "list", {})).records, [], "moved out of the legacy object");
    assert.equal((await call("GET", "/v1/working-memory/s1", undefined, bearer(key))).status, 200, "and still works from its own object");
    assert.equal((await call("DELETE", `/v1/admin/keys/${id}`, undefined, bearer(ADMIN))).status, 200);
    expectError(await call("GET", "/v1/working-memory/s1", undefined, bearer(key)), 401, "unauthorized");
    // A bad secret for a known id is refused, for an unknown id too.
    const wrong = minted[0].key.slice(0, -1) + (minted[0].key.endsWith("0") ? "1" : "0");
    expectError(await call("GET", "/v1/working-memory/s1", undefined, bearer(wrong)), 401, "unauthorized");
    expectError(await call("GET", "/v1/working-memory/s1", undefined, bearer(`emk_${"f".repeat(16)}_${secret}`)), 401, "unauthorized");
  });
});
