// An edit that gives a long-term record a user of another shard (issue 21),
// in Miniflare with `EDGEMEM_SHARDS_INITIAL=4`, against one unsharded
// tenant given the same writes: the record moves to its new user's shard
// whole (its text, vector and history), is held by that shard alone, and
// answers reads, searches, versions and restores as in one object; a
// restore of a version with the old user moves it back; an edit sent
// twice, and a copy an interrupted hand-over left behind, leave one copy.
import { test } from "node:test";
import assert from "node:assert/strict";
import { workerPool } from "./miniflare.mjs";
import { bucketOf, evenOwner, held, shardPost } from "./split-check.mjs";

const SHARDS = 4;
const start = workerPool();
const owner = (user) => evenOwner(bucketOf(user), SHARDS);

/** Three users of three different shards. */
function users() {
  const picked = [];
  for (let i = 0; picked.length < 3; i++) {
    const u = `user-${i}`;
    if (!picked.some((p) => owner(p) === owner(u))) picked.push(u);
  }
  return picked;
}

/** The shards of `tenant` holding record `id`. */
async function holders(w, tenant, id) {
  const out = [];
  for (let s = 0; s < SHARDS; s++) if ((await held(w, tenant, s)).includes(id)) out.push(s);
  return out;
}

/** What a record's answer says, without the clock's fields. */
const fields = (m) => ({ id: m.id, text: m.text, user_id: m.user_id, topics: m.topics, memory_type: m.memory_type, pinned: m.pinned });
const history = (v) => v.versions.map((x) => ({ version: x.version, op: x.op, text_hash: x.text_hash }));

test("an edit that changes a record's user moves it to that user's shard, whole", async () => {
  const sharded = await start({ EDGEMEM_SHARDS_INITIAL: String(SHARDS) });
  const single = await start({});
  const tenant = "edit1";
  const ns = `?namespace=${tenant}`;
  const [from, to, third] = users();
  const memories = [
    { id: "k1", text: "the red kettle is in the attic", user_id: from, topics: ["home"] },
    { id: "k2", text: "the blue kettle is in the kitchen", user_id: from },
    { id: "k3", text: "the green kettle is at the office", user_id: to },
    { id: "k4", text: "a kettle of no one's", topics: ["misc"] },
  ];
  const edits = [
    ["PATCH", "/v1/long-term-memory/k1", { text: "the red kettle is in the garage" }],
    ["PATCH", "/v1/long-term-memory/k1", { user_id: to, topics: ["garage"] }],
    // The same edit again (a client's retry): nothing more moves.
    ["PATCH", "/v1/long-term-memory/k1", { user_id: to, topics: ["garage"] }],
    // A record of no user given one.
    ["PATCH", "/v1/long-term-memory/k4", { user_id: third }],
  ];
  for (const w of [sharded, single]) {
    const r = await w.call("POST", `/v1/long-term-memory/${ns}`, { memories });
    assert.equal(r.status, 200, r.text);
    for (const [method, path, body] of edits) {
      const e = await w.call(method, `${path}${ns}`, body);
      assert.equal(e.status, 200, `${path} ${JSON.stringify(body)}: ${e.text}`);
    }
  }
  assert.deepEqual(await holders(sharded, tenant, "k1"), [owner(to)], "k1 is in its new user's shard alone");
  assert.deepEqual(await holders(sharded, tenant, "k4"), [owner(third)], "k4 is in its new user's shard alone");
  assert.deepEqual(await holders(sharded, tenant, "k2"), [owner(from)]);

  for (const id of ["k1", "k2", "k3", "k4"]) {
    const [a, b] = await Promise.all([sharded.call("GET", `/v1/long-term-memory/${id}${ns}`), single.call("GET", `/v1/long-term-memory/${id}${ns}`)]);
    assert.equal(a.status, 200, a.text);
    assert.deepEqual(fields(a.json), fields(b.json), id);
    const [va, vb] = await Promise.all([sharded.call("GET", `/v1/long-term-memory/${id}/versions${ns}`), single.call("GET", `/v1/long-term-memory/${id}/versions${ns}`)]);
    assert.equal(va.status, 200, va.text);
    assert.deepEqual(history(va.json), history(vb.json), `${id}: its history moved with it`);
  }
  assert.ok(history((await sharded.call("GET", `/v1/long-term-memory/k1/versions${ns}`)).json).length >= 3, "created, edited, moved");

  // Searches pinned to a user go to that user's shard alone: the moved
  // record is found under its new user, not its old one; tenant-wide and
  // semantic searches rank as one object does (the vector moved too).
  const searches = [
    { text: "kettle", user_id: { eq: to }, limit: 10 },
    { text: "kettle", user_id: { eq: from }, limit: 10 },
    { text: "kettle", user_id: { eq: third }, limit: 10 },
    { text: "garage kettle", limit: 10, search_mode: "keyword" },
    { text: "where is the red kettle kept", limit: 10, search_mode: "semantic" },
  ];
  for (const body of searches) {
    const [a, b] = await Promise.all([sharded.call("POST", `/v1/long-term-memory/search${ns}`, body), single.call("POST", `/v1/long-term-memory/search${ns}`, body)]);
    assert.equal(a.status, 200, a.text);
    assert.deepEqual(a.json.memories.map((m) => m.id), b.json.memories.map((m) => m.id), JSON.stringify(body));
  }
  const mine = await sharded.call("POST", `/v1/long-term-memory/search${ns}`, searches[0]);
  assert.ok(mine.json.memories.some((m) => m.id === "k1"), "found under its new user");

  // A restore of the version before the move gives the record its old
  // user back: it moves back to that user's shard.
  for (const w of [sharded, single]) {
    const r = await w.call("POST", `/v1/long-term-memory/k1/restore${ns}`, { version: 2 });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.user_id, from);
    assert.equal(r.json.text, "the red kettle is in the garage");
  }
  assert.deepEqual(await holders(sharded, tenant, "k1"), [owner(from)], "restored into its old user's shard");
  const [a, b] = await Promise.all([sharded.call("GET", `/v1/long-term-memory/k1/versions${ns}`), single.call("GET", `/v1/long-term-memory/k1/versions${ns}`)]);
  assert.deepEqual(history(a.json), history(b.json));

  // An edit that keeps the record in its shard stays one call's work; a
  // delete after the moves leaves it nowhere.
  const keep = await sharded.call("PATCH", `/v1/long-term-memory/k1${ns}`, { topics: ["back"] });
  assert.equal(keep.status, 200, keep.text);
  assert.deepEqual(await holders(sharded, tenant, "k1"), [owner(from)]);
  const del = await sharded.call("DELETE", `/v1/long-term-memory/${ns}&memory_ids=k1`);
  assert.equal(del.status, 200, del.text);
  assert.deepEqual(await holders(sharded, tenant, "k1"), []);
  assert.equal((await sharded.call("GET", `/v1/long-term-memory/k1${ns}`)).status, 404);
});

test("a copy an interrupted hand-over left behind is dropped by the next request for the record; a record edited meanwhile is kept", async () => {
  const w = await start({ EDGEMEM_SHARDS_INITIAL: String(SHARDS) });
  // The default namespace: no id directory, so a by-id request asks every
  // shard and sees both copies.
  const tenant = "default";
  const ns = "";
  const [from, to] = users();
  const r = await w.call("POST", `/v1/long-term-memory/`, { memories: [{ id: "j1", text: "the jar of buttons", user_id: from }] });
  assert.equal(r.status, 200, r.text);
  const moved = await w.call("PATCH", `/v1/long-term-memory/j1${ns}`, { user_id: to });
  assert.equal(moved.status, 200, moved.text);
  // A crash between the adoption and the drop, re-enacted: the new
  // shard's item adopted again by the old one (a no-op hand-over there).
  const item = await shardPost(w.mf, tenant, owner(to), "/_shard/move/items", { move_id: 0, keys: ["m/j1"] });
  assert.equal(item.items.length, 1);
  const adopted = await shardPost(w.mf, tenant, owner(from), "/_shard/move/hand-over", { item: item.items[0], embedder: item.embedder });
  assert.equal(adopted.applied, true);
  assert.deepEqual(await holders(w, tenant, "j1"), [owner(from), owner(to)].sort((x, y) => x - y), "the leftover is there");
  const got = await w.call("GET", `/v1/long-term-memory/j1${ns}`);
  assert.equal(got.status, 200, got.text);
  assert.equal(got.json.user_id, to);
  assert.deepEqual(await holders(w, tenant, "j1"), [owner(to)], "the leftover copy is dropped, the owner's kept");
  // A hand-over's drop names the version adopted: a copy at another
  // version (an edit made meanwhile) is kept.
  const drop = await shardPost(w.mf, tenant, owner(to), "/_shard/move/hand-over", { id: "j1", version: 12345 });
  assert.equal(drop.applied, false);
  assert.deepEqual(await holders(w, tenant, "j1"), [owner(to)]);
  // A bad hand-over is a typed refusal.
  const bad = await shardPost(w.mf, tenant, owner(to), "/_shard/move/hand-over", {}).catch((e) => e);
  assert.ok(bad instanceof Error && /item|422|400/.test(bad.message), String(bad));
});
