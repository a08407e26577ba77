// Routes of a sharded tenant (issue 21) that need every shard or two
// objects, against one unsharded tenant holding the same data, in
// Miniflare with `EDGEMEM_SHARDS_INITIAL=4`:
// - a forget without a user: its budget and limit are the tenant's, so the
//   shards' parts are chosen from once; dry runs and real runs choose
//   exactly what one object would;
// - `/v1/prompt` with an agent at home and a session in another shard;
// - encryption: status and rotation in every shard (each is sealed on its
//   own), refusals typed as in one object.
import { test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { workerPool } from "./miniflare.mjs";
import { bucketOf, evenOwner } from "./split-check.mjs";

const SHARDS = 4;
const start = workerPool();
const KEY_HEADER = "x-edgemem-encryption-key";
const NEW_KEY_HEADER = "x-edgemem-new-encryption-key";

/** 90 records over 12 users and none, created and last used on many days. */
function records() {
  let seed = 0x2f6b_1d3a;
  const next = (k) => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) % k;
  };
  const day = (d) => new Date(Date.UTC(2026, 0, 1) + d * 86_400_000).toISOString();
  return Array.from({ length: 90 }, (_, i) => {
    const created = next(200);
    const m = { id: `f${String(i).padStart(3, "0")}`, text: `note ${i} about item ${next(1000)}`, created_at: day(created), last_accessed: day(created + next(100)) };
    if (next(6) > 0) m.user_id = `u${next(12)}`;
    if (next(10) === 0) m.memory_type = "episodic";
    if (next(15) === 0) m.pinned = true;
    return m;
  });
}

test("a forget without a user chooses across the shards exactly what one object chooses", async () => {
  const sharded = await start({ EDGEMEM_SHARDS_INITIAL: String(SHARDS) });
  const single = await start({});
  const ns = "?namespace=forget1";
  const recs = records();
  for (const w of [sharded, single]) {
    const r = await w.call("POST", `/v1/long-term-memory/${ns}`, { memories: recs });
    assert.equal(r.status, 200, r.text);
  }
  // The records really are spread: every shard holds some.
  const stats = await sharded.call("GET", `/v1/stats${ns}`);
  assert.ok(stats.json.shards.every((s) => s.stats.long_term_memories > 0), stats.text);

  const asks = [
    [{ policy: { max_age_days: 250 } }, "&limit=1000"],
    [{ policy: { budget: 30 } }, ""],
    [{ policy: { budget: 10, max_inactive_days: 150 } }, "&limit=7"],
    [{ policy: { max_age_days: 60, memory_type_allowlist: ["episodic"] }, pinned_ids: ["f001", "f002"] }, "&limit=25"],
    [{ policy: { budget: 0 } }, "&limit=3"],
  ];
  for (const [body, query] of asks) {
    const path = `/v1/long-term-memory/forget${ns}&dry_run=true${query}`;
    const [a, b] = await Promise.all([sharded.call("POST", path, body), single.call("POST", path, body)]);
    assert.equal(a.status, 200, a.text);
    assert.deepEqual(a.json, b.json, `${JSON.stringify(body)} ${query}`);
    assert.ok(a.json.deleted_ids.length > 0, `${JSON.stringify(body)} chooses some`);
  }
  // Real runs, twice each: the same ids go, and the second run chooses
  // from what is left as one object would.
  for (let round = 0; round < 2; round++) {
    const path = `/v1/long-term-memory/forget${ns}&dry_run=false&limit=9`;
    const body = { policy: { budget: 40 } };
    const [a, b] = await Promise.all([sharded.call("POST", path, body), single.call("POST", path, body)]);
    assert.equal(a.status, 200, a.text);
    assert.deepEqual(a.json, b.json, `round ${round}`);
    assert.equal(a.json.deleted, 9);
    for (const id of a.json.deleted_ids) assert.equal((await sharded.call("GET", `/v1/long-term-memory/${id}${ns}`)).status, 404, id);
  }
  const after = await sharded.call("GET", `/v1/stats${ns}`);
  assert.equal(after.json.long_term_memories, recs.length - 18);
  // Checked at the front before any shard is asked: typed, nothing done.
  const bad = await sharded.call("POST", `/v1/long-term-memory/forget${ns}&dry_run=false`, { policy: { budget: -1 } });
  assert.equal(bad.status, 422, bad.text);
  assert.equal((await sharded.call("GET", `/v1/stats${ns}`)).json.long_term_memories, recs.length - 18);
});

test("a prompt reads the agent at home and the session in its own shard", async () => {
  const sharded = await start({ EDGEMEM_SHARDS_INITIAL: String(SHARDS) });
  const single = await start({});
  const ns = "?namespace=prompt1";
  const sid = ["trip-a", "trip-b", "trip-c", "trip-d", "trip-e", "trip-f"].find((s) => evenOwner(bucketOf(s), SHARDS) !== 0);
  const home = ["h-a", "h-b", "h-c", "h-d", "h-e", "h-f", "h-g", "h-h"].find((s) => evenOwner(bucketOf(s), SHARDS) === 0);
  for (const w of [sharded, single]) {
    assert.equal((await w.call("PUT", `/v1/agents/planner/prompt${ns}`, { text: "You are a careful travel planner." })).status, 200);
    assert.equal((await w.call("POST", `/v1/agents/planner/patches${ns}`, { text: "Always name the airport." })).status, 200);
    for (const id of [sid, home]) {
      // Ids given, so both tenants' plans name the same turns.
      const put = await w.call("PUT", `/v1/working-memory/${id}${ns}`, { messages: [{ id: `${id}-1`, role: "user", content: `I fly to Lisbon on Friday (${id}).` }, { id: `${id}-2`, role: "assistant", content: "Noted." }] });
      assert.equal(put.status, 200, put.text);
    }
  }
  const bodies = [
    { model: "gpt-4o", session_id: sid, agent_id: "planner", query: "Which airport?" },
    { window_tokens: 4096, session_id: sid, agent_id: "planner", query: "Which airport?", format: "anthropic" },
    { window_tokens: 4096, session_id: sid, agent_id: "planner", as: "plan" },
    { window_tokens: 4096, session_id: home, agent_id: "planner", query: "Which airport?" },
    { window_tokens: 4096, session_id: sid, query: "no agent" },
    { window_tokens: 4096, agent_id: "planner", query: "no session" },
    { window_tokens: 4096, session_id: sid, agent_id: "nobody", query: "an unknown agent adds no system text" },
  ];
  for (const body of bodies) {
    const [a, b] = await Promise.all([sharded.call("POST", `/v1/prompt${ns}`, body), single.call("POST", `/v1/prompt${ns}`, body)]);
    assert.equal(a.status, 200, `${JSON.stringify(body)}: ${a.text}`);
    assert.deepEqual(a.json, b.json, JSON.stringify(body));
  }
  const first = await sharded.call("POST", `/v1/prompt${ns}`, bodies[0]);
  const text = JSON.stringify(first.json.messages);
  assert.ok(text.includes("careful travel planner") && text.includes("Always name the airport.") && text.includes(`Lisbon on Friday (${sid})`), text);
  // Errors as one object's.
  for (const body of [{ window_tokens: 4096, session_id: "nope", agent_id: "planner" }, { window_tokens: 4096, session_id: sid, agent_id: "planner", surprise: 1 }, { session_id: sid, agent_id: "planner" }]) {
    const [a, b] = await Promise.all([sharded.call("POST", `/v1/prompt${ns}`, body), single.call("POST", `/v1/prompt${ns}`, body)]);
    assert.equal(a.status, b.status, `${JSON.stringify(body)}: ${a.text} / ${b.text}`);
    assert.equal(a.json.code, b.json.code, JSON.stringify(body));
  }
});

test("encryption status and rotation span every shard", async () => {
  const { call } = await start({ EDGEMEM_SHARDS_INITIAL: String(SHARDS) });
  const ns = "?namespace=vault1";
  const k1 = randomBytes(32).toString("base64url");
  const k2 = randomBytes(32).toString("base64url");
  const plain = await call("GET", `/v1/encryption${ns}`);
  assert.equal(plain.status, 200, plain.text);
  assert.equal(plain.json.encrypted, false);
  assert.equal(plain.json.shards.length, SHARDS);
  // A key given to the tenant seals each shard it reaches; status reaches all.
  const created = await call("POST", `/v1/long-term-memory/${ns}`, { memories: Array.from({ length: 24 }, (_, i) => ({ id: `v${i}`, text: `vault note ${i}`, user_id: `u${i % 8}` })) }, { [KEY_HEADER]: k1 });
  assert.equal(created.status, 200, created.text);
  const sealed = await call("GET", `/v1/encryption${ns}`, undefined, { [KEY_HEADER]: k1 });
  assert.equal(sealed.status, 200, sealed.text);
  assert.equal(sealed.json.encrypted, true, sealed.text);
  assert.ok(sealed.json.key_id, sealed.text);
  assert.ok(sealed.json.shards.every((s) => s.status.encrypted && s.status.key_id === sealed.json.key_id), sealed.text);
  // Every shard refuses a request without the key, or with another.
  const none = await call("POST", `/v1/long-term-memory/search${ns}`, { text: "vault", search_mode: "keyword" });
  assert.equal(none.status, 401, none.text);
  assert.equal(none.json.code, "key_required");
  const wrong = await call("POST", `/v1/long-term-memory/search${ns}`, { text: "vault", search_mode: "keyword" }, { [KEY_HEADER]: k2 });
  assert.equal(wrong.status, 403, wrong.text);
  assert.equal(wrong.json.code, "decryption_failed");
  // Rotation in every shard; the same request again is a no-op that answers alike.
  for (let i = 0; i < 2; i++) {
    const rot = await call("POST", `/v1/encryption/rotate${ns}`, undefined, { [KEY_HEADER]: k1, [NEW_KEY_HEADER]: k2 });
    assert.equal(rot.status, 200, rot.text);
    assert.equal(rot.json.shards.length, SHARDS);
    assert.ok(rot.json.key_id && rot.json.key_id !== sealed.json.key_id, rot.text);
  }
  const now = await call("GET", `/v1/encryption${ns}`, undefined, { [KEY_HEADER]: k2 });
  assert.equal(now.json.encrypted, true);
  assert.ok(now.json.shards.every((s) => s.status.key_id === now.json.key_id && now.json.key_id !== sealed.json.key_id), now.text);
  const old = await call("POST", `/v1/long-term-memory/search${ns}`, { text: "vault", search_mode: "keyword" }, { [KEY_HEADER]: k1 });
  assert.equal(old.status, 403, old.text);
  const found = await call("POST", `/v1/long-term-memory/search${ns}`, { text: "vault", search_mode: "keyword", limit: 50 }, { [KEY_HEADER]: k2 });
  assert.equal(found.status, 200, found.text);
  assert.equal(found.json.memories.length, 24, "every shard's records, read under the new key");
});
