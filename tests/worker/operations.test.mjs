// Agent operations through `wrangler dev` (issue 13): the decision log,
// consent and the right to be forgotten (checked in the Durable Object's
// SQLite files and the KV directory on disk), anonymization, secrets on
// every write path, and prompt guardrails.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { filesHolding, startWranglerDev } from "../e2e/wrangler-dev.mjs";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const PRIVACY_KEY = "a-test-privacy-secret-of-32-bytes!!";

let dev;
let persistDir;

before(async () => {
  persistDir = mkdtempSync(join(tmpdir(), "edgemem-ops-"));
  dev = await startWranglerDev(ROOT, { persistDir, vars: { EDGEMEM_PRIVACY_KEY: PRIVACY_KEY } });
});

after(async () => {
  await dev?.stop();
  rmSync(persistDir, { recursive: true, force: true });
});

async function call(method, path, body, { namespace = "ops", headers = {} } = {}) {
  const sep = path.includes("?") ? "&" : "?";
  const r = await fetch(`${dev.url}${path.replace(/^\//, "")}${sep}namespace=${namespace}`, {
    method,
    headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await r.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: r.status, json, text, type: r.headers.get("content-type") };
}

function stored(sentinel) {
  return filesHolding(persistDir, sentinel);
}

test("the decision log: append, filter, page, export as JSONL, and follow live", async () => {
  assert.equal((await call("PUT", "/v1/working-memory/deal-1", { messages: [] })).status, 200);
  // Follow through the change feed (server-sent events) before writing.
  const ctl = new AbortController();
  const seen = [];
  const feed = fetch(`${dev.url}v1/events?namespace=ops&kinds=decision.appended&keys=deal-1`, { headers: { accept: "text/event-stream" }, signal: ctl.signal }).then(async (r) => {
    const reader = r.body.getReader();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += Buffer.from(value).toString();
      for (const m of buf.matchAll(/data: (.*)\n/g)) seen.push(JSON.parse(m[1]));
      buf = buf.slice(buf.lastIndexOf("\n") + 1);
    }
  }).catch(() => {});
  await new Promise((r) => setTimeout(r, 300));
  const kinds = ["observation", "reasoning", "decision", "action", "offer", "error"];
  for (const [i, kind] of kinds.entries()) {
    const r = await call("POST", "/v1/working-memory/deal-1/decisions", { kind, text: `step ${i}`, refs: { transfer_id: "t-9" }, data: { price: "42.10" } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.seq, i + 1);
  }
  const page = await call("GET", "/v1/working-memory/deal-1/decisions?kinds=offer,decision&since=1&limit=10");
  assert.deepEqual(page.json.entries.map((e) => e.kind), ["decision", "offer"]);
  assert.equal(page.json.last_seq, 6);
  const jsonl = await call("GET", "/v1/working-memory/deal-1/decisions?format=jsonl");
  assert.match(jsonl.type, /application\/x-ndjson/);
  const lines = jsonl.text.trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(lines.length, 6);
  assert.equal(lines[0].refs.transfer_id, "t-9");
  const deadline = Date.now() + 10_000;
  while (seen.length < 6 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  ctl.abort();
  await feed;
  assert.equal(seen.filter((e) => e.kind === "decision.appended" && e.key === "deal-1").length, 6, "every append reached the live feed");
});

test("the decision log refuses bad input with typed errors and stores nothing", async () => {
  await call("PUT", "/v1/working-memory/deal-2", { messages: [] });
  const badKind = await call("POST", "/v1/working-memory/deal-2/decisions", { kind: "hunch", text: "x" });
  assert.equal(badKind.status, 400);
  assert.equal(badKind.json.code, "unknown_kind");
  const huge = await call("POST", "/v1/working-memory/deal-2/decisions", { kind: "action", text: "x".repeat(70_000) });
  assert.equal(huge.status, 413);
  assert.equal(huge.json.code, "payload_too_large");
  const missing = await call("POST", "/v1/working-memory/nope/decisions", { kind: "action", text: "x" });
  assert.equal(missing.status, 404);
  const notJson = await call("POST", "/v1/working-memory/deal-2/decisions", "{kind:");
  assert.equal(notJson.status, 400);
  const log = await call("GET", "/v1/working-memory/deal-2/decisions");
  assert.deepEqual(log.json.entries, []);
  // Deleting the session deletes its log.
  await call("POST", "/v1/working-memory/deal-2/decisions", { kind: "action", text: "kept until the session goes" });
  await call("DELETE", "/v1/working-memory/deal-2");
  assert.equal((await call("GET", "/v1/working-memory/deal-2/decisions")).status, 404);
});

test("secrets are redacted on every write path, or refused under reject", async () => {
  const key = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0";
  const put = await call("PUT", "/v1/working-memory/sec-1", { messages: [{ role: "user", content: `my key is ${key}` }], data: { note: `token ${key}` } });
  assert.equal(put.status, 200, put.text);
  assert.equal(put.json.redactions.openai_key, 2);
  const got = await call("GET", "/v1/working-memory/sec-1");
  assert.match(got.json.messages[0].content, /\[REDACTED:openai_key\]/);
  assert.ok(!got.text.includes(key));
  const d = await call("POST", "/v1/working-memory/sec-1/decisions", { kind: "action", text: `used AKIAIOSFODNN7EXAMPLE to upload` });
  assert.equal(d.json.redactions.aws_access_key, 1, d.text);
  const ltm = await call("POST", "/v1/long-term-memory", { memories: [{ text: `The Stripe key is sk_live_${"4eC39HqLyjWDarjtT1zdp7dc"}` }] });
  assert.equal(ltm.json.redactions.stripe_key, 1, ltm.text);
  const ep = await call("POST", "/v1/episodes", { agent_id: "a1", kind: "note", payload: { said: `ghp_${"a".repeat(10)}${"B1c2D3e4F5g6H7i8J9k0L1m2N3"}` } });
  assert.equal(ep.status, 200, ep.text);
  const eps = await call("GET", "/v1/episodes?agent_id=a1");
  assert.ok(!eps.text.includes("ghp_aaaaaaaaaa"), eps.text);
  const prompt = await call("PUT", "/v1/agents/sec-agent/prompt", { text: `Use password=Hunter2Hunter2! to log in.` });
  assert.equal(prompt.status, 200, prompt.text);
  assert.ok(!prompt.json.prompt.includes("Hunter2Hunter2!"), prompt.text);
  assert.equal(stored(key).length, 0, "no tier holds the key");

  assert.equal((await call("PUT", "/v1/privacy/policy", { secrets: "reject" })).status, 200);
  const refused = await call("POST", "/v1/working-memory/sec-1/messages", { messages: [{ role: "user", content: `again ${key}` }] });
  assert.equal(refused.status, 422);
  assert.equal(refused.json.code, "secret_detected");
  assert.ok(!refused.text.includes(key), "the error never repeats the secret");
  assert.equal((await call("GET", "/v1/working-memory/sec-1")).json.messages.length, 1, "nothing was stored");
  await call("PUT", "/v1/privacy/policy", { secrets: "redact" });
});

test("structured secrets, ledger metadata, working-memory memories and bad kinds through the Worker", async () => {
  const ns = "ops-more";
  const o = { namespace: ns };
  const put = await call("PUT", "/v1/working-memory/cfg-1", { messages: [], data: { password: "Sentinel-Pass-4410", token: "USDC" } }, o);
  assert.equal(put.status, 200, put.text);
  assert.equal(put.json.redactions.password, 1, put.text);
  const cfg = await call("GET", "/v1/working-memory/cfg-1", undefined, o);
  assert.deepEqual(cfg.json.data, { password: "[REDACTED:password]", token: "USDC" });
  assert.equal((await call("POST", "/v1/ledger/assets", { code: "USDC", scale: 6 }, o)).status, 200);
  for (const id of ["bank", "agent"]) assert.equal((await call("POST", "/v1/ledger/accounts", { id, asset: "USDC" }, o)).status, 200);
  const key = "sk_live_" + "Sentinel0Ledger0Key0ab12";
  const t = await call("POST", "/v1/ledger/transfers", { transfers: [{ id: "t-1", debit_account: "bank", credit_account: "agent", amount: "5.25", metadata: { memo: `paid with ${key}` } }] }, o);
  assert.equal(t.json.results[0].result, "created", t.text);
  assert.deepEqual(t.json.redactions, { stripe_key: 1 });
  const got = await call("GET", "/v1/ledger/transfers/t-1", undefined, o);
  assert.equal(got.json.metadata.memo, "paid with [REDACTED:stripe_key]");
  assert.equal(stored(key).length, 0, "the key is on no disk");
  assert.equal(stored("Sentinel-Pass-4410").length, 0);
  // A memory held in working memory is bound for long-term memory: anonymized, and consent-gated.
  const wm = await call("PUT", "/v1/working-memory/wm-1", { user_id: "eve-1", messages: [], memories: [{ id: "m-1", text: "Eve is at eve@example.net" }] }, o);
  assert.equal(wm.status, 200, wm.text);
  assert.deepEqual(wm.json.anonymized, { email: 1 });
  assert.equal((await call("PUT", "/v1/privacy/policy", { require_consent: true }, o)).status, 200);
  const refused = await call("PUT", "/v1/working-memory/wm-2", { user_id: "eve-2", messages: [], memories: [{ id: "m-2", text: "x" }] }, o);
  assert.deepEqual([refused.status, refused.json.code], [403, "consent_required"]);
  const none = await call("GET", "/v1/consent/eve-2", undefined, o);
  assert.deepEqual([none.status, none.json.long_term], [200, false]);
  await call("PUT", "/v1/privacy/policy", { require_consent: false }, o);
  await call("PUT", "/v1/working-memory/deal-3", { messages: [] }, o);
  for (const body of [{ text: "no kind" }, { kind: 7, text: "x" }]) {
    const r = await call("POST", "/v1/working-memory/deal-3/decisions", body, o);
    assert.deepEqual([r.status, r.json.code], [400, "unknown_kind"], r.text);
  }
  for (let i = 0; i < 120; i++) await call("POST", "/v1/working-memory/deal-3/decisions", { kind: "observation", text: `o${i}` }, o);
  const jsonl = await call("GET", "/v1/working-memory/deal-3/decisions?format=jsonl", undefined, o);
  assert.equal(jsonl.text.trim().split("\n").length, 120, "an export is the whole log, not a page");
});

test("long-term memory is anonymized before it is stored; user ids are sealed but filter and read back as written", async () => {
  const r = await call("POST", "/v1/long-term-memory", {
    memories: [{ text: "Reach Dana at dana.k@example.com or +44 20 7946 0958; order ORD-2024-118734 ships 2024-03-15.", user_id: "dana-4417" }],
  }, { namespace: "anon" });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.json.anonymized, { email: 1, phone: 1 });
  const id = r.json.created[0];
  const got = await call("GET", `/v1/long-term-memory/${id}`, undefined, { namespace: "anon" });
  assert.equal(got.json.user_id, "dana-4417");
  assert.ok(!got.json.text.includes("dana.k@example.com"));
  assert.match(got.json.text, /\[EMAIL:[0-9a-f]{10}\]/);
  assert.ok(got.json.text.includes("ORD-2024-118734") && got.json.text.includes("2024-03-15"), "look-alikes survive");
  const found = await call("POST", "/v1/long-term-memory/search", { text: "order ships", search_mode: "keyword", user_id: { eq: "dana-4417" } }, { namespace: "anon" });
  assert.deepEqual(found.json.memories.map((m) => m.id), [id]);
  assert.equal(stored("dana-4417").length, 0, "no raw user id on disk");
  assert.equal(stored("dana.k@example.com").length, 0, "no raw email on disk");
});

test("consent: refused without it, and revoking erases the user's text from the SQLite files and the KV replica", async () => {
  const ns = "consent";
  const sentinel = "Zebra-Quince-5519";
  assert.equal((await call("PUT", "/v1/privacy/policy", { require_consent: true }, { namespace: ns })).json.require_consent, true);
  const refused = await call("POST", "/v1/long-term-memory", { memories: [{ text: `${sentinel} likes oolong`, user_id: "u-77" }] }, { namespace: ns });
  assert.equal(refused.status, 403);
  assert.equal(refused.json.code, "consent_required");
  assert.equal(stored(sentinel).length, 0);
  const granted = await call("PUT", "/v1/consent/u-77", { long_term: true }, { namespace: ns });
  assert.equal(granted.status, 200, granted.text);
  assert.equal(granted.json.granted_by, "operator");
  assert.equal((await call("GET", "/v1/consent/u-77", undefined, { namespace: ns })).json.long_term, true);
  for (let i = 0; i < 3; i++) {
    assert.equal((await call("POST", "/v1/long-term-memory", { memories: [{ text: `${sentinel} fact ${i}`, user_id: "u-77" }] }, { namespace: ns })).status, 200);
  }
  await call("POST", "/v1/long-term-memory", { memories: [{ text: "someone else's fact", user_id: "u-78" }] }, { namespace: ns }).then((r) => assert.equal(r.status, 403));
  await call("PUT", "/v1/consent/u-79", { long_term: true }, { namespace: ns });
  const kept = await call("POST", "/v1/long-term-memory", { memories: [{ text: "u-79 keeps this", user_id: "u-79" }] }, { namespace: ns });
  assert.equal(kept.status, 200, kept.text);
  await call("POST", "/v1/episodes", { agent_id: "a1", kind: "note", payload: { user_id: "u-77", said: `${sentinel} episode` } }, { namespace: ns });
  assert.equal((await call("POST", "/v1/snapshots/publish", {}, { namespace: ns })).status, 200);
  assert.ok(stored(sentinel).length > 0, "the text is on disk before revoking");
  const revoked = await call("DELETE", "/v1/consent/u-77", undefined, { namespace: ns });
  assert.equal(revoked.status, 200, revoked.text);
  assert.deepEqual(revoked.json.erased, { memories: 3, episodes: 1 });
  // workerd writes SQLite pages lazily; give it a moment to checkpoint.
  await new Promise((r) => setTimeout(r, 500));
  assert.deepEqual(stored(sentinel), [], "no file under the persisted state (DO SQLite, WAL, KV) holds the text");
  const after = await call("GET", "/v1/consent/u-77", undefined, { namespace: ns });
  assert.deepEqual([after.status, after.json.long_term], [200, false], "after a revoke the status reads long_term: false");
  const other = await call("GET", `/v1/long-term-memory/${kept.json.created[0]}`, undefined, { namespace: ns });
  assert.equal(other.json.text, "u-79 keeps this", "the rewrite kept every other user's memory");
  assert.equal((await call("GET", "/v1/consent/u-79", undefined, { namespace: ns })).status, 200);
  const bad = await call("PUT", "/v1/consent/u-77", { long_term: "yes" }, { namespace: ns });
  assert.equal(bad.status, 422);
});

test("redaction (issue 20): a record's texts leave the SQLite files and the KV replica; restore undoes a poisoned edit", async () => {
  const ns = "redact";
  const sentinel = "Walrus-Persimmon-8086";
  const put = await call("POST", "/v1/long-term-memory", { memories: [{ id: "r1", text: `${sentinel} is the vault phrase`, user_id: "u-1" }, { id: "r2", text: "the vault is in the cellar", user_id: "u-1" }] }, { namespace: ns });
  assert.equal(put.status, 200, put.text);
  const poisoned = await call("PATCH", "/v1/long-term-memory/r2", { text: `${sentinel}: the vault is open to all` }, { namespace: ns });
  assert.equal(poisoned.status, 200, poisoned.text);
  const listed = await call("GET", "/v1/long-term-memory/r2/versions", undefined, { namespace: ns });
  assert.deepEqual(listed.json.versions.map((v) => [v.version, v.op, v.actor]), [[1, "create", "operator"], [2, "edit", "operator"]]);
  const restored = await call("POST", "/v1/long-term-memory/r2/restore", { version: 1 }, { namespace: ns });
  assert.deepEqual([restored.status, restored.json.text, restored.json.version], [200, "the vault is in the cellar", 3]);
  assert.equal((await call("POST", "/v1/snapshots/publish", {}, { namespace: ns })).status, 200);
  assert.ok(stored(sentinel).length > 0, "the text is on disk before redacting");
  for (const id of ["r1", "r2"]) {
    const r = await call("POST", `/v1/long-term-memory/${id}/redact`, undefined, { namespace: ns });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.redacted_by, "operator");
  }
  await new Promise((r) => setTimeout(r, 500));
  assert.deepEqual(stored(sentinel), [], "no file under the persisted state (DO SQLite, WAL, KV) holds the text");
  const receipt = await call("GET", "/v1/long-term-memory/r2/versions", undefined, { namespace: ns });
  assert.deepEqual(receipt.json.versions.map((v) => v.op), ["create", "edit", "restore", "redact"]);
  assert.ok(receipt.json.versions.every((v) => v.text === null && v.text_hash.length === 64));
  assert.equal((await call("GET", "/v1/long-term-memory/r2", undefined, { namespace: ns })).status, 404);
});

test("guardrails refuse a prompt that breaks a rule, naming it", async () => {
  const agent = "/v1/agents/seller";
  assert.equal((await call("PUT", `${agent}/prompt`, { text: "Negotiate. Never go below floor price." })).status, 200);
  const g = await call("PUT", `${agent}/guardrails`, { required: ["Never go below floor price"], forbidden: ["*ignore*instructions*"], tokens_max: 200 });
  assert.equal(g.status, 200, g.text);
  const r = await call("PUT", `${agent}/prompt`, { text: "Negotiate freely." });
  assert.equal(r.status, 422);
  assert.equal(r.json.code, "guardrail_violated");
  assert.match(r.json.detail, /Never go below floor price/);
  const config = await call("GET", `${agent}/config`);
  assert.equal(config.json.active_version, 1);
  assert.deepEqual(config.json.guardrails.required, ["Never go below floor price"]);
});

test("after the runtime shuts down (its SQLite files checkpointed and closed), no file holds the erased text", async () => {
  await dev.stop();
  assert.deepEqual(stored("Zebra-Quince-5519"), []);
  assert.deepEqual(stored("Walrus-Persimmon-8086"), []);
  assert.deepEqual(stored("dana-4417"), []);
});
