// Agent operations through the npm package (issue 13): `memory.decisions`,
// `memory.consent`, `memory.privacy`, anonymization with `privacyKey`,
// secrets on every write path, guardrails, and `memory.request`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { DECISION_KINDS, EdgememError, LIMITS, Memory, MemoryStore, Tokenizer } from "edgemem";

const KEY = "npm-test-privacy-secret-0123456789";
const OPENAI = "sk-proj-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8Ba7";

/** Every stored value as text, for "is it gone from storage" checks. */
async function storage(store) {
  const keys = await store.list("");
  const out = [];
  for (const k of keys) {
    const v = await store.get(typeof k === "string" ? k : k.key);
    if (v) out.push(Buffer.from(v).toString("latin1"));
  }
  return out.join("\n");
}

test("decisions: append, list with filters, export as JSONL, follow live", async () => {
  const memory = await Memory.open();
  await memory.putSession("deal", { messages: [] });
  assert.deepEqual([...DECISION_KINDS], ["observation", "reasoning", "decision", "action", "offer", "error"]);
  const followed = [];
  const follower = (async () => {
    for await (const e of memory.decisions.follow("deal")) {
      followed.push(e.seq);
      if (followed.length === 3) return;
    }
  })();
  const first = await memory.decisions.append("deal", { kind: "observation", text: "floor is 40.00", data: { floor: "40.00" } });
  assert.equal(first.seq, 1);
  await memory.decisions.append("deal", { kind: "offer", text: "offered 42.00", refs: { transfer_id: "t-1", memory_ids: ["m-1"] } });
  await memory.decisions.append("deal", { kind: "action", text: "sent the invoice" });
  await follower;
  assert.deepEqual(followed, [1, 2, 3]);
  const offers = await memory.decisions.list("deal", { kinds: ["offer"] });
  assert.deepEqual(offers.entries.map((e) => e.refs.transfer_id), ["t-1"]);
  // `kind`, the route's own spelling, filters too (it was silently ignored).
  assert.deepEqual((await memory.decisions.list("deal", { kind: "offer" })).entries.map((e) => e.seq), [2]);
  assert.deepEqual((await memory.decisions.list("deal", { kind: ["offer", "action"] })).entries.map((e) => e.seq), [2, 3]);
  await assert.rejects(memory.decisions.list("deal", { kind: "offer", kinds: ["action"] }), { code: "invalid_input" });
  assert.equal((await memory.decisions.list("deal", { since: 2 })).entries.length, 1);
  const jsonl = await memory.decisions.export("deal");
  assert.deepEqual(jsonl.trim().split("\n").map((l) => JSON.parse(l).kind), ["observation", "offer", "action"]);
  await assert.rejects(memory.decisions.append("deal", { kind: "hunch", text: "x" }), (e) => e instanceof EdgememError && e.code === "unknown_kind");
  await assert.rejects(memory.decisions.append("deal", { kind: "action", text: "x".repeat(LIMITS.DECISION_TEXT_BYTES_MAX + 1) }), { code: "payload_too_large" });
  await assert.rejects(memory.decisions.append("nope", { kind: "action", text: "x" }), { code: "not_found" });
  await assert.rejects(memory.decisions.append("deal", null), { code: "invalid_input" });
  await memory.deleteSession("deal");
  await assert.rejects(memory.decisions.list("deal"), { code: "not_found" });
});

test("consent and the right to be forgotten, through the package", async () => {
  const store = new MemoryStore();
  const memory = await Memory.open({ store, privacyKey: KEY });
  assert.deepEqual(await memory.privacy.policy(), { require_consent: false, anonymize: true, secrets: "redact", pseudonyms: true });
  await memory.privacy.setPolicy({ require_consent: true });
  await assert.rejects(memory.longTerm.create([{ text: "Marmalade-Otter-3310 likes jazz", user_id: "ana" }]), { code: "consent_required" });
  assert.equal(await memory.consent.get("ana"), null);
  const granted = await memory.consent.grant("ana");
  assert.equal(granted.granted_by, "local");
  const created = await memory.longTerm.create([{ text: "Marmalade-Otter-3310 likes jazz; mail ana@example.org", user_id: "ana" }]);
  assert.deepEqual(created.anonymized, { email: 1 });
  const rec = await memory.longTerm.get(created.created[0]);
  assert.equal(rec.user_id, "ana", "read back as written");
  assert.match(rec.text, /\[EMAIL:[0-9a-f]{10}\]/);
  let raw = await storage(store);
  assert.ok(raw.includes("Marmalade-Otter-3310"));
  assert.ok(!raw.includes("ana@example.org"), "no raw email in storage");
  const revoked = await memory.consent.revoke("ana");
  assert.deepEqual(revoked.erased, { memories: 1, episodes: 0 });
  raw = await storage(store);
  assert.ok(!raw.includes("Marmalade-Otter-3310"), "erased from storage, not hidden");
  const reopened = await Memory.open({ store, privacyKey: KEY });
  assert.equal((await reopened.longTerm.search({ text: "jazz", mode: "keyword" })).memories.length, 0);
});

test("secrets: redacted by default on each tier, refused under reject", async () => {
  const memory = await Memory.open();
  const put = await memory.putSession("s", { messages: [{ role: "user", content: `key ${OPENAI}` }] });
  assert.equal(put.redactions.openai_key, 1);
  assert.match((await memory.getSession("s")).messages[0].content, /\[REDACTED:openai_key\]/);
  await memory.episodes.record({ agent_id: "a", kind: "k", payload: { t: `xoxb-${"123456789012"}-${"abcdefghijklmnopqrstuvwx"}` } });
  assert.ok(!JSON.stringify(await memory.episodes.recent(20, { agentId: "a" })).includes("xoxb-123456789012"));
  await memory.privacy.setPolicy({ secrets: "reject" });
  await assert.rejects(memory.appendMessages("s", [{ role: "user", content: `again ${OPENAI}` }]), { code: "secret_detected" });
  assert.equal((await memory.getSession("s")).messages.length, 1);
});

test("guardrails bind setPrompt in the package too", async () => {
  const memory = await Memory.open();
  const agent = memory.agent("seller");
  await agent.setPrompt("Be brief. Never go below floor price.");
  await agent.setGuardrails({ required: ["Never go below floor price"], forbidden: ["*discount code*"], tokensMax: 100 });
  await assert.rejects(agent.setPrompt("Be brief."), (e) => e.code === "guardrail_violated" && /Never go below floor price/.test(e.message));
  await assert.rejects(agent.appendPatch("Use DISCOUNT CODE 50OFF"), { code: "guardrail_violated" });
  assert.equal((await agent.get()).active_version, 1);
  assert.deepEqual((await agent.get()).guardrails, { required: ["Never go below floor price"], forbidden: ["*discount code*"], tokens_max: 100 });
});

test("a token ceiling counts in cl100k_base, as the Worker does, not with the estimator", async () => {
  // 247 tokens exactly in cl100k_base; the estimator makes it fewer, so
  // before the package loaded the encoding a ceiling of 246 let it through.
  const text = "Never go below floor price. " + "点心和茶 ".repeat(40);
  const memory = await Memory.open();
  const agent = memory.agent("ceiling");
  await agent.setPrompt("Never go below floor price.");
  await agent.setGuardrails({ tokensMax: 246 });
  await assert.rejects(agent.setPrompt(text), (e) => e.code === "guardrail_violated" && /247 tokens, over the ceiling of 246/.test(e.message));
  await assert.rejects(agent.appendPatch("点心和茶 ".repeat(100)), { code: "guardrail_violated" });
  await agent.setGuardrails({ tokensMax: 247 });
  assert.equal((await agent.setPrompt(text)).active_version, 2);
  assert.equal((await Tokenizer.load("cl100k_base")).count(text), 247);
});

test("memory.request runs any route in process", async () => {
  const memory = await Memory.open();
  await memory.request("PUT", "/v1/working-memory/r1", { body: { messages: [] } });
  await memory.request("POST", "/v1/working-memory/r1/decisions", { body: { kind: "decision", text: "go" } });
  const page = await memory.request("GET", "/v1/working-memory/r1/decisions", { query: { kinds: "decision" } });
  assert.equal(page.entries[0].text, "go");
  const jsonl = await memory.request("GET", "/v1/working-memory/r1/decisions", { query: "format=jsonl" });
  assert.equal(typeof jsonl, "string");
  await assert.rejects(memory.request("GET", "/v1/nope"), { code: "not_found" });
  await assert.rejects(memory.request("GET", "nope"), { code: "invalid_input" });
});

test("a detector hook adds detectors (person names) before anything is stored", async () => {
  const store = new MemoryStore();
  const names = ["Dana Whitfield", "Ravi Menon"];
  const detector = async (text) => names.flatMap((n) => (text.includes(n) ? [{ start: text.indexOf(n), end: text.indexOf(n) + n.length, kind: "person" }] : []));
  const memory = await Memory.open({ store, detector });
  const r = await memory.longTerm.create([{ text: "Dana Whitfield prefers aisle seats; write to dana@example.com" }]);
  assert.deepEqual(r.anonymized, { email: 1, person: 1 });
  const rec = await memory.longTerm.get(r.created[0]);
  assert.equal(rec.text, "[PERSON] prefers aisle seats; write to [EMAIL]");
  const edited = await memory.longTerm.edit(r.created[0], { text: "Ravi Menon took over the account" });
  assert.equal(edited.text, "[PERSON] took over the account");
  assert.ok(!(await storage(store)).includes("Whitfield"));
  const broken = await Memory.open({ detector: async () => [{ start: 5, end: 2, kind: "person" }] });
  await assert.rejects(broken.longTerm.create([{ text: "hello there" }]), { code: "hook_failed" });
  const throwing = await Memory.open({ detector: async () => { throw new Error("model down"); } });
  await assert.rejects(throwing.longTerm.create([{ text: "hello there" }]), (e) => e.code === "hook_failed" && /model down/.test(e.message));
  assert.equal((await throwing.longTerm.search({ text: "hello", mode: "keyword" })).memories.length, 0, "nothing was stored");
  await assert.rejects(Memory.open({ detector: "names" }), { code: "invalid_input" });
});
