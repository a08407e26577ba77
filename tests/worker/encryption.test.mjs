// Encryption at rest through `wrangler dev` (issue 20): the tenant's key
// comes per request in X-Edgemem-Encryption-Key and is held only in memory;
// a plaintext tenant given a key is encrypted; no key is 401 key_required, a
// wrong one 403 decryption_failed; rotation; API keys bound to an
// encryption key; and no plaintext sentinel in any persisted byte (the
// Durable Object's SQLite and WAL files, the KV replica), also after a
// restart.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createHmac, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { filesHolding, startWranglerDev } from "../e2e/wrangler-dev.mjs";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SENTINEL = "Pangolin-Sentinel-2291";
const HEADER = "x-edgemem-encryption-key";

let dev;
let persistDir;

before(async () => {
  persistDir = mkdtempSync(join(tmpdir(), "edgemem-crypt-"));
  dev = await startWranglerDev(ROOT, { persistDir });
});

after(async () => {
  await dev?.stop();
  rmSync(persistDir, { recursive: true, force: true });
});

const newKey = () => randomBytes(32).toString("base64url");
const keyId = (key) => "k" + createHmac("sha256", Buffer.from(key, "base64url")).update("edgemem encryption key v1").digest("hex").slice(0, 16);

async function call(method, path, body, { namespace = "vault", key, headers = {} } = {}) {
  const sep = path.includes("?") ? "&" : "?";
  const h = { ...headers };
  if (key) h[HEADER] = key;
  if (body !== undefined) h["content-type"] = "application/json";
  const r = await fetch(`${dev.url}${path.replace(/^\//, "")}${sep}namespace=${namespace}`, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: r.status, json, text };
}

const stored = (text) => filesHolding(persistDir, text);

async function restart() {
  await dev.stop();
  dev = await startWranglerDev(ROOT, { persistDir });
}

test("a tenant encrypted under its key: typed refusals, nothing readable on disk, the key held only in memory", async () => {
  const k1 = newKey();
  // A plaintext tenant first.
  assert.equal((await call("PUT", "/v1/working-memory/before", { context: `${SENTINEL} written in plaintext` })).status, 200);
  assert.deepEqual((await call("GET", "/v1/encryption")).json, { encrypted: false, key_id: null, algorithm: null });
  assert.ok(stored(SENTINEL).length > 0, "plaintext before encryption");
  // The first request with a key encrypts what the tenant holds.
  const status = await call("GET", "/v1/encryption", undefined, { key: k1 });
  assert.deepEqual(status.json, { encrypted: true, key_id: keyId(k1), algorithm: "AES-256-GCM" });
  assert.equal((await call("PUT", "/v1/working-memory/s1", { context: `${SENTINEL} session`, messages: [{ role: "user", content: `${SENTINEL} turn` }] }, { key: k1 })).status, 200);
  const created = await call("POST", "/v1/long-term-memory/", { memories: [{ id: "m1", text: `${SENTINEL} keeps a metric notebook`, user_id: "ana" }] }, { key: k1 });
  assert.equal(created.status, 200, created.text);
  assert.equal((await call("POST", "/v1/working-memory/s1/decisions", { kind: "decision", text: `${SENTINEL} decided` }, { key: k1 })).status, 200);
  assert.equal((await call("POST", "/v1/snapshots/publish", {}, { key: k1 })).status, 200, "the KV replica is sealed too");
  // Refusals.
  const missing = await call("GET", "/v1/working-memory/s1");
  assert.equal(missing.status, 401, missing.text);
  assert.equal(missing.json.code, "key_required");
  const wrong = await call("GET", "/v1/working-memory/s1", undefined, { key: newKey() });
  assert.equal(wrong.status, 403, wrong.text);
  assert.equal(wrong.json.code, "decryption_failed");
  const malformed = await call("GET", "/v1/working-memory/s1", undefined, { key: "not-a-key" });
  assert.equal(malformed.status, 422, malformed.text);
  assert.equal(malformed.json.code, "invalid_input");
  assert.ok(!malformed.text.includes("not-a-key"), "the header's value is not echoed");
  const read = await call("GET", "/v1/working-memory/s1", undefined, { key: k1 });
  assert.ok(read.json.context.includes(SENTINEL));
  // On disk: no sentinel in any SQLite page, WAL or KV blob.
  await restart();
  assert.deepEqual(stored(SENTINEL), []);
  assert.deepEqual(stored(k1), [], "the key itself is never stored");
  // After the restart no key is in memory: a request must carry it.
  assert.equal((await call("GET", "/v1/working-memory/before")).json.code, "key_required");
  const back = await call("GET", "/v1/working-memory/before", undefined, { key: k1 });
  assert.equal(back.status, 200, back.text);
  assert.ok(back.json.context.includes(SENTINEL));
  const memory = await call("GET", "/v1/long-term-memory/m1", undefined, { key: k1 });
  assert.ok(memory.json.text.includes(SENTINEL), memory.text);
});

test("rotation re-seals the tenant and API keys bound to the old key follow", async () => {
  const ns = "rotating";
  const [k1, k2, k3] = [newKey(), newKey(), newKey()];
  assert.equal((await call("PUT", "/v1/working-memory/s", { context: `${SENTINEL} rotate me` }, { namespace: ns, key: k1 })).status, 200);
  // An API key bound to the tenant's key.
  const minted = await call("POST", "/v1/admin/keys", { namespace: ns, scopes: ["read", "write"] });
  assert.equal(minted.status, 200, minted.text);
  const bearer = { authorization: `Bearer ${minted.json.key}` };
  const bound = await call("PUT", `/v1/admin/keys/${minted.json.id}/encryption`, undefined, { namespace: ns, key: k1 });
  assert.equal(bound.status, 200, bound.text);
  assert.equal(bound.json.encryption_key_id, keyId(k1));
  assert.equal((await call("GET", "/v1/working-memory/s", undefined, { namespace: ns, headers: bearer })).json.code, "key_required");
  assert.equal((await call("GET", "/v1/working-memory/s", undefined, { namespace: ns, headers: bearer, key: k2 })).json.code, "decryption_failed");
  assert.equal((await call("GET", "/v1/working-memory/s", undefined, { namespace: ns, headers: bearer, key: k1 })).status, 200);
  // A rotation needs the new key, and the current one.
  assert.equal((await call("POST", "/v1/encryption/rotate", undefined, { namespace: ns, key: k1 })).json.code, "invalid_input");
  assert.equal((await call("POST", "/v1/encryption/rotate", undefined, { namespace: ns, headers: { "x-edgemem-new-encryption-key": k2 } })).json.code, "key_required");
  const rotated = await call("POST", "/v1/encryption/rotate", undefined, { namespace: ns, key: k1, headers: { "x-edgemem-new-encryption-key": k2 } });
  assert.equal(rotated.status, 200, rotated.text);
  assert.deepEqual(rotated.json, { key_id: keyId(k2), previous_key_id: keyId(k1), leftovers: false });
  // The same request again (a retry after a timeout) is a no-op.
  const again = await call("POST", "/v1/encryption/rotate", undefined, { namespace: ns, key: k1, headers: { "x-edgemem-new-encryption-key": k2 } });
  assert.equal(again.status, 200, again.text);
  assert.equal(again.json.key_id, keyId(k2));
  assert.equal((await call("GET", "/v1/working-memory/s", undefined, { namespace: ns, key: k1 })).json.code, "decryption_failed");
  assert.equal((await call("GET", "/v1/working-memory/s", undefined, { namespace: ns, headers: bearer, key: k2 })).status, 200, "the binding followed");
  assert.equal((await call("GET", "/v1/admin/keys/" + minted.json.id, undefined, { namespace: ns })).json.encryption_key_id, keyId(k2));
  // Through the old key's restart window too: only the new key opens.
  await restart();
  assert.equal((await call("GET", "/v1/working-memory/s", undefined, { namespace: ns, key: k1 })).json.code, "decryption_failed");
  const read = await call("GET", "/v1/working-memory/s", undefined, { namespace: ns, key: k2 });
  assert.ok(read.json.context.includes(SENTINEL), read.text);
  assert.equal((await call("POST", "/v1/encryption/rotate", undefined, { namespace: ns, key: k2, headers: { "x-edgemem-new-encryption-key": k3 } })).status, 200);
  assert.deepEqual(stored(SENTINEL), []);
  // Unbinding lets the API key through without a key header (the tenant still needs one).
  const unbound = await call("DELETE", `/v1/admin/keys/${minted.json.id}/encryption`, undefined, { namespace: ns });
  assert.equal(unbound.json.encryption_key_id, undefined, unbound.text);
  assert.equal((await call("GET", "/v1/working-memory/s", undefined, { namespace: ns, headers: bearer })).json.code, "key_required");
});
