// Routes of a sharded tenant (issue 21) that need every shard or two
// objects, against one unsharded tenant holding the same data, in
// Miniflare with `EDGEMEM_SHARDS_INITIAL=4`:
// - a forget without a user: its budget and limit are the tenant's, so the
//   shards' parts are chosen from once; dry runs and real runs choose
//   exactly what one object would;
// - `/v1/prompt` with an agent at home and a session in another shard;
// - encryption: status and rotation in every shard (each is sealed on its
//   own), refusals typed as in one object;
// - export and import: a sharded tenant's export is one file that imports
//   into one object and back, each record landing in its shard; a second
//   import is a no-op; a non-empty tenant or a cut file is refused and
//   nothing is written.
import { test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { Memory, KVStore } from "edgemem";
import { workerPool } from "./miniflare.mjs";
import { bucketOf, evenOwner, held } from "./split-check.mjs";

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
  const { call, mf } = await start({ EDGEMEM_SHARDS_INITIAL: String(SHARDS) });
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
  // The replica is sealed under the tenant's key: no plaintext in KV, and
  // the npm package opens it with the key only.
  assert.equal((await call("POST", `/v1/snapshots/publish${ns}`)).json.code, "key_required");
  const pub = await call("POST", `/v1/snapshots/publish${ns}`, undefined, { [KEY_HEADER]: k2 });
  assert.equal(pub.status, 200, pub.text);
  assert.equal(pub.json.form, "export");
  const kv = await mf.getKVNamespace("SNAPSHOTS");
  const stored = await Promise.all((await kv.list({ prefix: "vault1/" })).keys.map(async (k) => Buffer.from(await kv.get(k.name, "arrayBuffer")).toString("latin1")));
  assert.ok(stored.length > 2 && stored.every((v) => !v.includes("vault note")), "no record text in KV");
  const cryptoKey = await crypto.subtle.importKey("raw", Buffer.from(k2, "base64url"), "AES-GCM", false, ["encrypt", "decrypt"]);
  const replica = await Memory.openPublished(new KVStore(kv), { keyPrefix: "vault1/", encryptionKey: cryptoKey, keyId: now.json.key_id });
  assert.equal((await replica.longTerm.search({ text: "vault", limit: 50, mode: "keyword" })).memories.length, 24);
  await assert.rejects(Memory.openPublished(new KVStore(kv), { keyPrefix: "vault1/" }), { code: "key_required" });
});

/** JSON text with every object's members in name order. */
const canonical = (v) => JSON.stringify(v, (_, x) => (x && typeof x === "object" && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : x));

/** An export's lines as a sorted set: records' keys are a store's own. */
function normal(text) {
  return text
    .split("\n")
    .filter((l) => l.trim())
    .slice(1)
    .map((l) => JSON.parse(l))
    .filter((v) => v.type !== "longterm" && v.type !== "end")
    .map((v) => {
      delete v.key;
      return canonical(v);
    })
    .sort();
}

test("a sharded tenant exports one file that imports into one object, and imports one back shard by shard", async () => {
  const sharded = await start({ EDGEMEM_SHARDS_INITIAL: String(SHARDS) });
  const single = await start({});
  const recs = records().slice(0, 60);
  const fill = async (w, ns) => {
    assert.equal((await w.call("POST", `/v1/long-term-memory/?namespace=${ns}`, { memories: recs })).status, 200);
    for (let i = 0; i < 10; i++) {
      const put = await w.call("PUT", `/v1/working-memory/leg-${i}?namespace=${ns}`, { user_id: `u${i % 4}`, messages: [{ role: "user", content: `leg ${i} to Porto` }] });
      assert.equal(put.status, 200, put.text);
      assert.equal((await w.call("POST", `/v1/working-memory/leg-${i}/decisions?namespace=${ns}`, { kind: "decision", text: `booked leg ${i}` })).status, 200);
    }
    assert.equal((await w.call("PUT", `/v1/agents/planner/prompt?namespace=${ns}`, { text: "Plan carefully." })).status, 200);
    assert.equal((await w.call("POST", `/v1/ledger/assets?namespace=${ns}`, { code: "EUR", scale: 2 })).status, 200);
  };
  await fill(sharded, "bk1");
  const out = await sharded.call("GET", "/v1/export?namespace=bk1&vectors=f32");
  assert.equal(out.status, 200, out.text);
  assert.match(out.headers.get("content-type"), /ndjson/);
  const lines = out.text.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
  assert.equal(lines.filter((l) => l.type === "memory").length, recs.length, "each record once");
  assert.equal(lines.filter((l) => l.type === "session").length, 10);
  assert.equal(new Set(lines.filter((l) => l.type === "memory").map((l) => l.key)).size, recs.length, "distinct keys");
  assert.ok(lines.find((l) => l.type === "decisions").decisions && Object.keys(lines.find((l) => l.type === "decisions").decisions).length === 10, "every shard's decision logs");

  // Into one object, and out again: the same lines.
  const into = await single.call("POST", "/v1/import?namespace=bk2", out.text, { "content-type": "application/x-ndjson" });
  assert.equal(into.status, 200, into.text);
  assert.deepEqual([into.json.imported, into.json.sessions, into.json.memories], [true, 10, recs.length]);
  // (Another namespace's key cannot open the file's sealed user ids: they
  // stay opaque there, as in any export imported under another name.)
  const again = await single.call("GET", "/v1/export?namespace=bk2&vectors=f32");
  assert.deepEqual(normal(again.text), normal(out.text));

  // One object's export into a sharded tenant: each record in its shard.
  // Under the same namespace name (another deployment), so its privacy key
  // opens the sealed user ids and a record's bucket is its raw user's.
  const other = await start({ EDGEMEM_SHARDS_INITIAL: String(SHARDS) });
  const back = await other.call("POST", "/v1/import?namespace=bk1", again.text, { "content-type": "application/x-ndjson" });
  assert.equal(back.status, 200, back.text);
  assert.deepEqual([back.json.imported, back.json.sessions, back.json.memories, back.json.shards.length], [true, 10, recs.length, SHARDS]);
  const where = new Map();
  for (let s = 0; s < SHARDS; s++) for (const id of await held(other, "bk1", s)) {
    assert.ok(!where.has(id), `${id} in two shards`);
    where.set(id, s);
  }
  for (const m of recs) assert.equal(where.get(m.id), evenOwner(bucketOf(m.user_id ?? m.id), SHARDS), m.id);
  const one = recs.find((m) => m.user_id);
  const got = await other.call("GET", `/v1/long-term-memory/${one.id}?namespace=bk1`);
  assert.equal(got.status, 200, got.text);
  assert.equal(got.json.text, one.text);
  assert.equal(Number(/do_calls=(\d+)/.exec(got.headers.get("x-edgemem-meter"))[1]), 2, "the directory names the imported record's bucket");
  const bk3 = await other.call("GET", "/v1/export?namespace=bk1&vectors=f32");
  assert.deepEqual(normal(bk3.text), normal(out.text));
  // By user, as the first tenant answered.
  const mine = { text: "", limit: 100, user_id: { eq: one.user_id } };
  const [x, y] = [await sharded.call("POST", "/v1/long-term-memory/search?namespace=bk1", mine), await other.call("POST", "/v1/long-term-memory/search?namespace=bk1", mine)];
  assert.deepEqual(y.json.memories.map((m) => m.id).sort(), x.json.memories.map((m) => m.id).sort());
  assert.ok(x.json.memories.length > 0);
  // The same file again: a no-op in every shard.
  const twice = await other.call("POST", "/v1/import?namespace=bk1", again.text, { "content-type": "application/x-ndjson" });
  assert.equal(twice.status, 200, twice.text);
  assert.equal(twice.json.imported, false);

  // Refused whole: a tenant holding other state, a cut file.
  const busy = await sharded.call("POST", "/v1/import?namespace=bk1", again.text.replace(/Plan carefully\./, "Plan boldly."), { "content-type": "application/x-ndjson" });
  assert.equal(busy.status, 409, busy.text);
  assert.equal(busy.json.code, "import_target_not_empty");
  const cut = again.text.split("\n").slice(0, 20).join("\n");
  const refused = await sharded.call("POST", "/v1/import?namespace=bk4", cut, { "content-type": "application/x-ndjson" });
  assert.equal(refused.status, 422, refused.text);
  const empty = await sharded.call("GET", "/v1/stats?namespace=bk4");
  assert.deepEqual([empty.json.long_term_memories, empty.json.sessions], [0, 0], "nothing written");
  // A part that conflicts in one shard only: refused before any shard imports.
  const partly = await sharded.call("PUT", "/v1/working-memory/leg-0?namespace=bk5", { messages: [] });
  assert.equal(partly.status, 200);
  const mixed = await sharded.call("POST", "/v1/import?namespace=bk5", again.text, { "content-type": "application/x-ndjson" });
  assert.equal(mixed.status, 409, mixed.text);
  assert.equal((await sharded.call("GET", "/v1/stats?namespace=bk5")).json.long_term_memories, 0, "no shard imported");
});

test("a tenant of one shard exports, imports and forgets as one object does, in one call", async () => {
  const one = await start({ EDGEMEM_SHARDS_INITIAL: "1" });
  const ns = "?namespace=solo";
  const recs = records().slice(0, 20);
  assert.equal((await one.call("POST", `/v1/long-term-memory/${ns}`, { memories: recs })).status, 200);
  const calls = (r) => Number(/do_calls=(\d+)/.exec(r.headers.get("x-edgemem-meter"))[1]);
  const out = await one.call("GET", `/v1/export${ns}&vectors=f32`);
  assert.equal(out.status, 200, out.text);
  assert.equal(calls(out), 1, "the shard's export, passed on");
  // Passed on as written: the exporter's own line order (sessions, then the
  // key counter, then records by key), which a merge would not keep byte for byte.
  const kinds = out.text.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l).type ?? "header");
  assert.deepEqual(kinds.slice(0, 3), ["header", "longterm", "memory"]);
  const forget = await one.call("POST", `/v1/long-term-memory/forget${ns}&dry_run=true`, { policy: { budget: 5 } });
  assert.equal(forget.status, 200, forget.text);
  assert.equal(calls(forget), 1);
  // Pinned records are spared; of the rest, all but the budget's 5 go.
  assert.equal(forget.json.deleted, recs.filter((m) => !m.pinned).length - 5);
  const into = await one.call("POST", "/v1/import?namespace=solo2", out.text, { "content-type": "application/x-ndjson" });
  assert.equal(into.status, 200, into.text);
  assert.equal(into.json.shards, undefined, "one object's answer");
  assert.equal(into.json.memories, recs.length);
});

test("a sharded tenant's export streams page by page (each record and history once, a copy a stopped split left behind not twice) and imports back staged a chunk at a time", async () => {
  // Pages of 3 items walked: a few records make many pages, and a split
  // stopped after its flip leaves shard 1's moved records in two shards.
  const sharded = await start({ EDGEMEM_SHARDS_INITIAL: "2", EDGEMEM_TEST_EXPORT_PAGE_ITEMS: "3", EDGEMEM_TEST_IMPORT_CHUNK_BYTES: "4096", EDGEMEM_TEST_FAULT: "split_stop_flipped" });
  const single = await start({});
  const ns = "?namespace=pages1";
  const recs = records().slice(0, 40);
  assert.equal((await sharded.call("POST", `/v1/long-term-memory/${ns}`, { memories: recs })).status, 200);
  for (let i = 0; i < 6; i++) {
    const put = await sharded.call("PUT", `/v1/working-memory/p-${i}${ns}`, { user_id: `u${i}`, messages: [{ role: "user", content: `page ${i}` }] });
    assert.equal(put.status, 200, put.text);
  }
  // Histories: five records edited, five deleted (a deleted record's
  // history stays where it was deleted; a split does not move it).
  for (const m of recs.slice(0, 5)) assert.equal((await sharded.call("PATCH", `/v1/long-term-memory/${m.id}${ns}`, { text: `${m.text}, edited` })).status, 200);
  const gone = recs.slice(5, 10).map((m) => m.id);
  assert.equal((await sharded.call("DELETE", `/v1/long-term-memory${ns}&${gone.map((id) => `memory_ids=${id}`).join("&")}`)).status, 200);
  const stopped = await sharded.call("POST", `/v1/admin/shards/split${ns}`, { shard: 1 });
  assert.equal(stopped.status, 500, stopped.text);

  const out = await sharded.call("GET", `/v1/export${ns}&vectors=f32`);
  assert.equal(out.status, 200, out.text);
  assert.match(out.headers.get("content-type"), /ndjson/);
  assert.equal(out.headers.get("content-length"), null, "streamed, not one body");
  const lines = out.text.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
  assert.equal(lines.at(-1).type, "end");
  assert.equal(lines.at(-1).lines, lines.length - 1);
  const ids = (type, id) => lines.filter((l) => l.type === type).map(id).sort();
  const live = recs.map((m) => m.id).filter((id) => !gone.includes(id)).sort();
  assert.deepEqual(ids("memory", (l) => l.record.id), live, "each live record once");
  assert.deepEqual(ids("versions", (l) => l.id), recs.map((m) => m.id).sort(), "each history once, the deleted records' among them");
  assert.equal(ids("session", (l) => l.session.session_id).length, 6);
  assert.equal(new Set(lines.filter((l) => l.type === "memory").map((l) => l.key)).size, live.length, "distinct keys");
  assert.ok(lines.filter((l) => l.type === "memory").every((l) => l.key < lines.find((x) => x.type === "longterm").next_key));
  // It imports into one object, which exports the same lines.
  const into = await single.call("POST", "/v1/import?namespace=pages2", out.text, { "content-type": "application/x-ndjson" });
  assert.equal(into.status, 200, into.text);
  assert.deepEqual([into.json.sessions, into.json.memories], [6, live.length]);
  const again = await single.call("GET", "/v1/export?namespace=pages2&vectors=f32");
  assert.deepEqual(normal(again.text), normal(out.text));
  // And into another sharded tenant, streamed in and staged in each shard
  // a few KB at a time: each record in its owner's shard only, and the
  // same lines out again.
  const back = await sharded.call("POST", "/v1/import?namespace=pages3", out.text, { "content-type": "application/x-ndjson" });
  assert.equal(back.status, 200, back.text);
  assert.deepEqual([back.json.imported, back.json.sessions, back.json.memories, back.json.shards.length], [true, 6, live.length, 2]);
  const where = new Map();
  for (let s = 0; s < 2; s++) for (const id of await held(sharded, "pages3", s)) {
    assert.ok(!where.has(id), `${id} in two shards`);
    where.set(id, s);
  }
  // (Another namespace's key cannot open the file's sealed user ids: a
  // record's bucket there is its user id's as the file holds it.)
  for (const l of lines.filter((l) => l.type === "memory")) assert.equal(where.get(l.record.id), evenOwner(bucketOf(l.record.user_id ?? l.record.id), 2), l.record.id);
  assert.equal(where.size, live.length);
  const one = lines.find((l) => l.type === "memory" && l.record.user_id);
  const got = await sharded.call("GET", `/v1/long-term-memory/${one.record.id}?namespace=pages3`);
  assert.equal(got.status, 200, got.text);
  assert.equal(Number(/do_calls=(\d+)/.exec(got.headers.get("x-edgemem-meter"))[1]), 2, "the directory names the imported record's bucket");
  const out3 = await sharded.call("GET", "/v1/export?namespace=pages3&vectors=f32");
  assert.deepEqual(normal(out3.text), normal(out.text));
  assert.equal((await sharded.call("POST", "/v1/import?namespace=pages3", out.text, { "content-type": "application/x-ndjson" })).json.imported, false, "again: a no-op");
  // A bad line far into the file is named by its number, and nothing is written.
  const fileLines = out.text.split("\n");
  const at = fileLines.length - 10;
  fileLines[at] = "{not json";
  const broken = await sharded.call("POST", "/v1/import?namespace=pages4", fileLines.join("\n"), { "content-type": "application/x-ndjson" });
  assert.equal(broken.status, 422, broken.text);
  assert.match(broken.json.detail, new RegExp(`line ${at + 1}\\b`));
  assert.deepEqual([(await sharded.call("GET", "/v1/stats?namespace=pages4")).json.long_term_memories], [0]);
  // A part another import replaced meanwhile (or never staged) is refused,
  // retryable, and so is a chunk out of its import's order.
  const objects = await sharded.mf.getDurableObjectNamespace("MEMORY");
  const home = objects.get(objects.idFromName("pages3"));
  const headers = { "x-edgemem-shard": JSON.stringify({ tenant: "pages3", shard: 0, epoch: 1, write: false }), "x-edgemem-namespace": "pages3", "x-edgemem-dev": "1" };
  const replaced = await home.fetch("http://127.0.0.1/_shard/import-check", { method: "POST", headers: { ...headers, "x-edgemem-import-staged": "gone:3" } });
  assert.equal(replaced.status, 503, await replaced.clone().text());
  assert.equal((await replaced.json()).code, "overloaded");
  const late = await home.fetch("http://127.0.0.1/_shard/import-stage?import=other&seq=1", { method: "POST", headers, body: "{}\n" });
  assert.equal(late.status, 503, await late.clone().text());
  // A bad query is refused before anything is written.
  const bad = await sharded.call("GET", `/v1/export${ns}&vectors=f16`);
  assert.equal(bad.status, 400, bad.text);
  assert.equal(bad.json.code, "invalid_query");
});

test("publishing a sharded tenant writes one replica (its export, a chunk at a time) the npm package opens, holding every shard's state; an erasure publishes it again", async () => {
  const sharded = await start({ EDGEMEM_SHARDS_INITIAL: String(SHARDS) });
  const single = await start({});
  const ns = "pub1";
  const recs = records();
  const replicas = [];
  for (const w of [sharded, single]) {
    assert.equal((await w.call("POST", `/v1/long-term-memory/?namespace=${ns}`, { memories: recs })).status, 200);
    for (let i = 0; i < 8; i++) assert.equal((await w.call("PUT", `/v1/working-memory/s${i}?namespace=${ns}`, { context: `c${i}`, messages: [] })).status, 200);
    const r = await w.call("POST", `/v1/snapshots/publish?namespace=${ns}`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.key_prefix, `${ns}/`);
    assert.equal(r.json.form, w === sharded ? "export" : undefined, "one object publishes a snapshot");
    replicas.push(await Memory.openPublished(new KVStore(await w.mf.getKVNamespace("SNAPSHOTS")), { keyPrefix: `${ns}/` }));
  }
  const stats = await sharded.call("GET", `/v1/stats?namespace=${ns}`);
  assert.ok(stats.json.shards.every((s) => s.stats.long_term_memories > 0), "the records are spread");
  const [fromShards, fromOne] = replicas;
  assert.equal((await fromShards.listSessions()).total, 8);
  assert.equal((await fromShards.getSession("s5")).context, "c5");
  for (const m of recs) {
    const [a, b] = [await fromShards.longTerm.get(m.id), await fromOne.longTerm.get(m.id)];
    assert.ok(a, `${m.id} is in the sharded replica`);
    assert.deepEqual([a.text, a.user_id, a.memory_type], [b.text, b.user_id, b.memory_type], m.id);
  }
  const search = async (r) => (await r.longTerm.search({ text: "note item", limit: 100, mode: "keyword" })).memories.map((h) => h.id);
  assert.deepEqual(await search(fromShards), await search(fromOne), "the replicas rank alike");

  // A consent revoke erases in every shard, then the replica is published again.
  const gone = recs.filter((m) => m.user_id === "u3").map((m) => m.id);
  assert.ok(gone.length > 0);
  const revoke = await sharded.call("DELETE", `/v1/consent/u3?namespace=${ns}`);
  assert.equal(revoke.status, 200, revoke.text);
  const after = await Memory.openPublished(new KVStore(await sharded.mf.getKVNamespace("SNAPSHOTS")), { keyPrefix: `${ns}/` });
  for (const id of gone) assert.equal(await after.longTerm.get(id), null, `${id} left the replica`);
  assert.ok(await after.longTerm.get(recs.find((m) => m.user_id && m.user_id !== "u3").id), "the others stay");
});
