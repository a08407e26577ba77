// Summary views of a tenant spread over four shards (issue 21), in
// Miniflare with `EDGEMEM_SHARDS_INITIAL=4`, beside an unsharded Worker
// holding the same records:
// - a run (and a one-partition run) stores exactly what the unsharded
//   tenant stores: every shard's records gathered at home;
// - more groups across the shards than a run allows fail the task, as in
//   one object;
// - a continuous view refreshes after a change in another shard than home,
//   also when that shard was told before that the tenant had none.
import { test } from "node:test";
import assert from "node:assert/strict";
import { workerPool } from "./miniflare.mjs";
import { bucketOf, evenOwner } from "./split-check.mjs";

const SHARDS = 4;
const start = workerPool();

const owner = (bucket) => evenOwner(bucket, SHARDS);

const WORDS = ["tofu", "puppy", "lisbon", "marathon", "coffee", "invoice", "rent", "garden", "piano", "train", "sister", "allergy"];
const USERS = Array.from({ length: 8 }, (_, i) => `user${i}`);

/** `n` records of eight users (spread over the four shards), two types, some old. */
function records(n) {
  const now = Date.now();
  return Array.from({ length: n }, (_, i) => ({
    id: `r${String(i).padStart(3, "0")}`,
    text: `Note ${i}: ${WORDS[i % WORDS.length]} and ${WORDS[(i * 5) % WORDS.length]}.`,
    user_id: USERS[i % USERS.length],
    memory_type: i % 3 === 0 ? "episodic" : "semantic",
    created_at: new Date(now - ((i * 7) % 50) * 86_400_000 - (i % 4) * 1000).toISOString(),
  }));
}

const ok = (r, what) => {
  assert.equal(r.status, 200, `${what}: ${r.text}`);
  return r.json;
};
/** A view's partitions as compared across deployments. */
const shape = (parts) => parts.map(({ group, summary, memory_count }) => ({ group, summary, memory_count })).sort((a, b) => JSON.stringify(a.group).localeCompare(JSON.stringify(b.group)));

test("a sharded run stores what one unsharded tenant stores, and too many groups fail it alike", async () => {
  const sharded = await start({ EDGEMEM_SHARDS_INITIAL: String(SHARDS) });
  const single = await start({});
  const ns = "?namespace=views1";
  const recs = records(96);
  assert.ok(new Set(USERS.map((u) => owner(bucketOf(u)))).size > 2, "the users spread over the shards");
  for (const w of [sharded, single]) ok(await w.call("POST", `/v1/long-term-memory/${ns}`, { memories: recs, deduplicate: false }), "create");
  const views = [
    { source: "long_term", group_by: ["user_id"] },
    { source: "long_term", group_by: ["user_id", "memory_type"], time_window_days: 30 },
    { source: "long_term", group_by: ["memory_type"], filters: { user_id: "user3" } },
    { source: "long_term", group_by: [] },
  ];
  for (const view of views) {
    const got = [];
    for (const w of [sharded, single]) {
      const v = ok(await w.call("POST", `/v1/summary-views${ns}`, view), "create view");
      const task = ok(await w.call("POST", `/v1/summary-views/${v.id}/run${ns}`, {}), "run");
      assert.equal(task.status, "success", JSON.stringify(task));
      assert.equal(ok(await w.call("GET", `/v1/tasks/${task.id}${ns}`), "task").status, "success");
      got.push(shape(ok(await w.call("GET", `/v1/summary-views/${v.id}/partitions${ns}`), "partitions")));
    }
    assert.ok(got[1].length > 0, JSON.stringify(view));
    assert.deepEqual(got[0], got[1], JSON.stringify(view));
  }
  // One partition on demand: the same memories, wherever they are held.
  const group = { user_id: "user5", memory_type: "semantic" };
  const one = [];
  for (const w of [sharded, single]) {
    const v = ok(await w.call("POST", `/v1/summary-views${ns}`, { source: "long_term", group_by: ["user_id", "memory_type"] }), "create view");
    const p = ok(await w.call("POST", `/v1/summary-views/${v.id}/partitions/run${ns}`, { group }), "partition run");
    one.push({ group: p.group, summary: p.summary, memory_count: p.memory_count });
  }
  assert.deepEqual(one[0], one[1]);
  assert.equal(one[0].memory_count, recs.filter((m) => m.user_id === "user5" && m.memory_type === "semantic").length);

  // 40 more users: more groups than a run summarizes (32), though no
  // shard alone holds that many.
  const crowd = Array.from({ length: 40 }, (_, i) => ({ id: `c${i}`, text: "Likes tea.", user_id: `crowd${i}` }));
  const perShard = new Map();
  for (const m of crowd) perShard.set(owner(bucketOf(m.user_id)), (perShard.get(owner(bucketOf(m.user_id))) ?? 0) + 1);
  assert.ok(Math.max(...perShard.values()) + USERS.length <= 32, `no shard alone has too many: ${[...perShard]}`);
  ok(await sharded.call("POST", `/v1/long-term-memory/${ns}`, { memories: crowd }), "crowd");
  const v = ok(await sharded.call("POST", `/v1/summary-views${ns}`, { source: "long_term", group_by: ["user_id"] }), "create view");
  const failed = ok(await sharded.call("POST", `/v1/summary-views/${v.id}/run${ns}`, {}), "run");
  assert.equal(failed.status, "failed", JSON.stringify(failed));
  assert.match(failed.error_message, /partitions/);
  assert.deepEqual(ok(await sharded.call("GET", `/v1/summary-views/${v.id}/partitions${ns}`), "partitions"), [], "nothing stored");
});

test("a continuous view refreshes after a change in another shard, also one told before that there was none", async () => {
  const w = await start({ EDGEMEM_SHARDS_INITIAL: String(SHARDS) });
  const ns = "?namespace=views2";
  const user = USERS.find((u) => owner(bucketOf(u)) !== 0);
  // A change before any continuous view: the user's shard tells home, and
  // home answers that it has none.
  ok(await w.call("POST", `/v1/long-term-memory/${ns}`, { memories: [{ id: "k1", text: "The user rows a blue canoe.", user_id: user }] }), "create");
  const v = ok(await w.call("POST", `/v1/summary-views${ns}`, { source: "long_term", group_by: ["user_id"], continuous: true }), "create view");
  ok(await w.call("POST", `/v1/long-term-memory/${ns}`, { memories: [{ id: "k2", text: "The user paddles a green kayak.", user_id: user }] }), "create");
  const deadline = Date.now() + 20_000;
  let parts = [];
  while (Date.now() < deadline) {
    parts = ok(await w.call("GET", `/v1/summary-views/${v.id}/partitions${ns}&user_id=${user}`), "partitions");
    if (parts[0]?.memory_count === 2) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  assert.equal(parts[0]?.memory_count, 2, `not refreshed: ${JSON.stringify(parts)}`);
  assert.match(parts[0].summary, /kayak/);
});
