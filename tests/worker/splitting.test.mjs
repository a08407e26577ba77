// Splitting a shard (issue 21), in Miniflare:
// - under a load of creates, deletes and session appends, an admin split
//   moves half a shard's buckets to a new shard: afterwards every
//   acknowledged record is in exactly one shard, the one its bucket's new
//   owner names, every acknowledged delete stayed deleted, every
//   acknowledged turn is in its session, and nothing is in two shards;
// - a split stopped after each of its logged steps (a dev-mode fault, as a
//   crash would stop it) is finished by the directory's alarm, with the
//   same guarantees, and writes held by its fence go through after it;
// - a split stuck under its fence (a dev-mode fault that stops every run,
//   the alarm's too) is aborted: the new shard drops its copy, the fence
//   lifts, writes go through, and a later split (to the same shard id)
//   places every record exactly once;
// - a shard past `EDGEMEM_SHARD_SPLIT_RECORDS` asks for a split by itself;
// - a sealed tenant splits with its key (by request, by threshold), and a
//   directory restarted mid-split without the key waits for a write that
//   brings it;
// - bad requests are typed errors, and the routes are 501 with sharding off.
// Real kills of workerd during splits are in chaos-split.test.mjs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startWorker, workerPool } from "./miniflare.mjs";
import { bucketOf, evenOwner, ownerIn, checkPlacement, shardPost } from "./split-check.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const start = workerPool();

/** A write load on tenant `ns` until `stop()`: creates, deletes, appends. */
function load(call, ns, stop) {
  const live = new Set();
  const deleted = new Set();
  const users = new Map();
  const turns = new Map();
  const errors = [];
  let n = 0;
  const run = async (worker) => {
    while (!stop()) {
      const i = n++;
      const kind = i % 5;
      if (kind < 3) {
        const id = `w${worker}-${i}`;
        const user = i % 4 === 0 ? undefined : `u${i % 23}`;
        const r = await call("POST", `/v1/long-term-memory/?namespace=${ns}`, { memories: [{ id, text: `load note ${i} about ${user ?? "nobody"}`, ...(user ? { user_id: user } : {}) }] });
        if (r.status === 200) {
          live.add(id);
          if (user) users.set(id, user);
        } else if (r.status !== 409) errors.push(`create ${r.status} ${r.text}`);
      } else if (kind === 3 && live.size > 10) {
        const id = [...live][i % live.size];
        const r = await call("DELETE", `/v1/long-term-memory?namespace=${ns}&memory_ids=${id}`);
        if (r.status === 200) {
          live.delete(id);
          deleted.add(id);
        } else if (r.status !== 409) errors.push(`delete ${r.status} ${r.text}`);
      } else {
        const sid = `sess-${i % 7}`;
        const content = `turn ${i}`;
        const r = await call("POST", `/v1/working-memory/${sid}/messages?namespace=${ns}`, { messages: [{ role: "user", content }] });
        if (r.status === 200) turns.set(sid, [...(turns.get(sid) ?? []), content]);
        else if (r.status !== 409) errors.push(`append ${r.status} ${r.text}`);
      }
    }
  };
  return { live, deleted, users, turns, errors, run };
}

async function seed(call, ns, n) {
  const memories = Array.from({ length: n }, (_, i) => ({ id: `seed-${i}`, text: `seed memory ${i} likes ${["tea", "rain", "jazz", "maps"][i % 4]}`, ...(i % 5 ? { user_id: `u${i % 23}` } : {}) }));
  const r = await call("POST", `/v1/long-term-memory/?namespace=${ns}`, { memories });
  assert.equal(r.status, 200, r.text);
  for (let s = 0; s < 7; s++) assert.equal((await call("PUT", `/v1/working-memory/sess-${s}?namespace=${ns}`, { messages: [] })).status, 200);
  return memories;
}

async function checkSessions(call, ns, turns) {
  for (const [sid, want] of turns) {
    const r = await call("GET", `/v1/working-memory/${sid}?namespace=${ns}`);
    assert.equal(r.status, 200, r.text);
    const got = r.json.messages.map((m) => m.content);
    assert.deepEqual(got, want, `session ${sid} lost or doubled a turn`);
  }
}

async function status(call, ns) {
  const r = await call("GET", `/v1/admin/shards?namespace=${ns}&ids=true`);
  assert.equal(r.status, 200, r.text);
  return r.json;
}

/** The shard status once no split is in progress and one has finished. */
async function splitDone(call, ns, tries = 60) {
  let st;
  for (let i = 0; i < tries; i++) {
    st = await status(call, ns);
    if (!st.moving && st.last_split) break;
    await sleep(250);
  }
  return st;
}

/**
 * `n` records of distinct users that shard 1 of a new 2-shard tenant
 * owns, so one create of them is one request, to that shard.
 */
function shardOneRecords(n, text) {
  const users = Array.from({ length: 200 }, (_, i) => `v${i}`).filter((u) => evenOwner(bucketOf(u), 2) === 1).slice(0, n);
  return users.map((u, i) => ({ id: `slow-${i}`, text: `${text} ${i}`, user_id: u }));
}

test("an admin split under a write load loses and duplicates nothing", async () => {
  const { call } = await start({ EDGEMEM_SHARDS_INITIAL: "2" });
  const ns = "split1";
  const memories = await seed(call, ns, 150);
  let done = false;
  const l = load(call, ns, () => done);
  memories.forEach((m) => {
    l.live.add(m.id);
    if (m.user_id) l.users.set(m.id, m.user_id);
  });
  const writers = [l.run(0), l.run(1), l.run(2)];
  await sleep(300);
  const split = await call("POST", `/v1/admin/shards/split?namespace=${ns}`, { shard: 0 });
  assert.equal(split.status, 200, split.text);
  await sleep(300);
  done = true;
  await Promise.all(writers);
  assert.deepEqual(l.errors, []);
  const r = split.json;
  assert.equal(r.from, 0);
  assert.equal(r.to, 2, "a new shard id");
  assert.equal(r.buckets_moved, 1024, "half of shard 0's 2,048 buckets");
  assert.ok(r.rounds >= 2, "a copy round and a fenced one");
  assert.equal(typeof r.fence_ms, "number");
  assert.equal(typeof r.release_ms, "number");
  assert.ok(r.fence_ms + r.release_ms <= r.split_ms, "the fence and the release are parts of the split");
  for (const k of ["source_digest", "new_digest", "items", "import", "fence", "flip", "release"]) assert.equal(typeof r.spent_ms[k], "number", k);
  assert.ok(r.spent_ms.source_digest + r.spent_ms.items + r.spent_ms.import <= r.split_ms);
  assert.ok(r.items_copied > 0);

  const st = await status(call, ns);
  assert.deepEqual(st.shards.map((s) => s.shard), [0, 1, 2]);
  assert.equal(st.map.epoch, 2);
  assert.equal(st.moving, null);
  assert.equal(st.last_split.move_id, r.move_id);
  assert.ok(st.shards.every((s) => !s.fenced), "every fence lifted");
  const where = checkPlacement(st, l.live, l.deleted, l.users);
  assert.ok([...where.values()].includes(2), "records moved to the new shard");
  assert.ok(l.live.size > memories.length, "the load wrote during the split");
  await checkSessions(call, ns, l.turns);

  // The tenant answers as a whole: a listing finds every live record once,
  // and a write to a moved bucket lands in the new shard.
  const list = await call("POST", `/v1/long-term-memory/search?namespace=${ns}`, { text: "", limit: 100, offset: 0, recency_boost: false });
  assert.equal(list.status, 200, list.text);
  assert.equal(list.json.total, l.live.size);
  assert.equal(list.json.partial, false);
  const moved = Array.from({ length: 200 }, (_, i) => `late-${i}`).find((u) => ownerIn(st.map, bucketOf(u)) === 2);
  const late = await call("POST", `/v1/long-term-memory/?namespace=${ns}`, { memories: [{ id: "late-1", text: "after the split", user_id: moved }] });
  assert.equal(late.status, 200, late.text);
  const after = await status(call, ns);
  assert.ok(after.shards.find((s) => s.shard === 2).ids.includes("late-1"));

  // A second split of the new shard, then of shard 1: ids are never reused.
  const again = await call("POST", `/v1/admin/shards/split?namespace=${ns}`, {});
  assert.equal(again.status, 200, again.text);
  assert.equal(again.json.from, 1, "the shard with the most buckets");
  assert.equal(again.json.to, 3);
  l.live.add("late-1");
  l.users.set("late-1", moved);
  checkPlacement(await status(call, ns), l.live, l.deleted, l.users);
});

for (const step of ["copy", "fenced", "flipped"]) {
  test(`a split stopped after its ${step} step is finished by the directory's alarm`, async () => {
    const { call } = await start({ EDGEMEM_SHARDS_INITIAL: "2", EDGEMEM_TEST_FAULT: `split_stop_${step}` });
    const ns = `stop-${step}`;
    const memories = await seed(call, ns, 80);
    const live = new Set(memories.map((m) => m.id));
    const users = new Map(memories.filter((m) => m.user_id).map((m) => [m.id, m.user_id]));
    const stopped = await call("POST", `/v1/admin/shards/split?namespace=${ns}`, { shard: 1 });
    // The fault's detail stays in the Worker's log, as any internal error's.
    assert.equal(stopped.status, 500, stopped.text);
    assert.equal(stopped.json.code, "internal");
    // Meanwhile: a write to a moving bucket waits for the fence (a 409
    // the client may retry) or lands before it; either way it is counted.
    const st0 = await status(call, ns);
    assert.equal(st0.moving.step, step === "copy" ? "copy" : step === "fenced" ? "fenced" : "flipped");
    const w = await call("POST", `/v1/long-term-memory/?namespace=${ns}`, { memories: [{ id: "during", text: "written while stopped", user_id: "u1" }] });
    assert.ok([200, 409].includes(w.status), w.text);
    if (w.status === 409) assert.equal(w.json.code, "shard_moved");
    else {
      live.add("during");
      users.set("during", "u1");
    }
    // The alarm finishes the move.
    const st = await splitDone(call, ns);
    assert.equal(st.moving, null, "the alarm did not finish the split");
    assert.equal(st.last_split.from, 1);
    assert.equal(st.map.epoch, 2);
    checkPlacement(st, live, new Set(), users);
    const retry = await call("POST", `/v1/long-term-memory/?namespace=${ns}`, { memories: [{ id: "during", text: "written while stopped", user_id: "u1" }] });
    assert.equal(retry.status, 200, retry.text);
    live.add("during");
    users.set("during", "u1");
    checkPlacement(await status(call, ns), live, new Set(), users);
    await checkSessions(call, ns, new Map(Array.from({ length: 7 }, (_, s) => [`sess-${s}`, []])));
  });
}

// A write the source admitted just before its fence, still on its way to
// the state (a dev-mode pause after the fence check, as a remote embedder
// makes it), must be in the last round's digest: the fence waits for it.
// Without that wait the write is acknowledged after the last round and
// collected with the old copy at the release: lost. The split stops after
// its flip (as a crash would), so the late write lands before the
// directory's alarm releases the source.
test("a write admitted before the fence and slow to apply is not lost", async () => {
  const { call } = await start({ EDGEMEM_SHARDS_INITIAL: "2", EDGEMEM_TEST_FAULT: "split_stop_flipped", EDGEMEM_TEST_WRITE_PAUSE_MS: "1500" });
  const ns = "fence-drain";
  const memories = Array.from({ length: 40 }, (_, i) => ({ id: `seed-${i}`, text: `seed memory ${i}`, user_id: `u${i % 23}` }));
  assert.equal((await call("POST", `/v1/long-term-memory/?namespace=${ns}`, { memories })).status, 200);
  const slow = shardOneRecords(30, "written as the fence came");
  const sent = performance.now();
  const write = call("POST", `/v1/long-term-memory/?namespace=${ns}`, { memories: slow });
  await sleep(300);
  const split = await call("POST", `/v1/admin/shards/split?namespace=${ns}`, { shard: 1 });
  const splitAnswered = performance.now();
  assert.equal(split.status, 500, split.text);
  const w = await write;
  assert.equal(w.status, 200, w.text);
  // The fence waited for the write: the split answered after it did.
  assert.ok(splitAnswered - sent >= 1400, `the split answered ${Math.round(splitAnswered - sent)} ms after the write was sent`);
  const st = await splitDone(call, ns);
  assert.equal(st.moving, null, "the alarm did not finish the split");
  const all = [...memories, ...slow];
  const moved = slow.filter((m) => ownerIn(st.map, bucketOf(m.user_id)) === st.last_split.to);
  assert.ok(moved.length > 0, "some of the slow write's records are in moved buckets");
  checkPlacement(st, new Set(all.map((m) => m.id)), new Set(), new Map(all.map((m) => [m.id, m.user_id])));
});

// A write slower than the fence's wait (EDGEMEM_TEST_WRITE_PAUSE_MS past
// SHARD_FENCE_DRAIN_MS, 5 s) does not hold the moving buckets' writes back
// for its whole length: the fence lifts, the split answers `overloaded`,
// and the directory's alarm splits again once the write is done.
test("a fence lifts again when a write in flight outlasts its wait", async () => {
  const { call } = await start({ EDGEMEM_SHARDS_INITIAL: "2", EDGEMEM_TEST_WRITE_PAUSE_MS: "6500" });
  const ns = "fence-wait";
  const slow = shardOneRecords(20, "a long write");
  const write = call("POST", `/v1/long-term-memory/?namespace=${ns}`, { memories: slow });
  await sleep(300);
  const split = await call("POST", `/v1/admin/shards/split?namespace=${ns}`, { shard: 1 });
  assert.equal(split.status, 503, split.text);
  assert.equal(split.json.code, "overloaded");
  // (The directory's alarm, due 2 s after the plan, may already be
  // fencing again, and waiting again: the write is still in flight.)
  assert.equal((await write).status, 200);
  const st = await splitDone(call, ns, 80);
  assert.equal(st.moving, null, "the alarm did not split again");
  assert.equal(st.last_split.from, 1);
  checkPlacement(st, new Set(slow.map((m) => m.id)), new Set(), new Map(slow.map((m) => [m.id, m.user_id])));
});

/** What shard `shard` of `tenant` holds, asked directly (it may be in no map). */
const heldBy = (mf, tenant, shard) => shardPost(mf, tenant, shard, "/_shard/move/held", {});

test("a split stuck under its fence is aborted, and a later split places everything once", async () => {
  const dir = mkdtempSync(join(tmpdir(), "edgemem-abort-"));
  const ns = "abort1";
  const stuck = await startWorker({ persistDir: dir, bindings: { EDGEMEM_SHARDS_INITIAL: "2", EDGEMEM_TEST_FAULT: "split_stuck" } });
  try {
    const { call } = stuck;
    const memories = await seed(call, ns, 80);
    const live = new Set(memories.map((m) => m.id));
    const users = new Map(memories.filter((m) => m.user_id).map((m) => [m.id, m.user_id]));
    const nothing = await call("POST", `/v1/admin/shards/abort?namespace=${ns}`);
    assert.equal(nothing.status, 404, nothing.text);
    const split = await call("POST", `/v1/admin/shards/split?namespace=${ns}`, { shard: 1 });
    assert.equal(split.status, 500, split.text);
    // The alarm runs it again, and it stays stuck under the fence.
    await sleep(2_500);
    const st = await status(call, ns);
    assert.equal(st.moving?.step, "fenced", JSON.stringify(st.moving));
    const target = st.moving.to;
    assert.ok((await heldBy(stuck.mf, ns, target)).records > 0, "the new shard holds its copy");
    const moving = ["u1", "u2", "u3", "u4", "u5", "u6", "u7", "u8"].find((u) => ownerIn(st.map, bucketOf(u)) === 1 && bucketOf(u) >= 3072);
    assert.ok(moving, "a user in the moving half");
    const held = await call("POST", `/v1/long-term-memory/?namespace=${ns}`, { memories: [{ id: "held", text: "written under the fence", user_id: moving }] });
    assert.equal(held.status, 409, held.text);
    assert.equal(held.json.code, "shard_moved");

    const aborted = await call("POST", `/v1/admin/shards/abort?namespace=${ns}`);
    assert.equal(aborted.status, 200, aborted.text);
    assert.deepEqual([aborted.json.aborted, aborted.json.from, aborted.json.to, aborted.json.step], [true, 1, target, "fenced"]);
    assert.ok(aborted.json.dropped > 0, aborted.text);
    const after = await status(call, ns);
    assert.equal(after.moving, null);
    assert.equal(after.last_abort.move_id, aborted.json.move_id);
    assert.equal(after.map.epoch, st.map.epoch, "the map never flipped");
    assert.deepEqual(await heldBy(stuck.mf, ns, target).then((h) => [h.records, h.sessions]), [0, 0], "the new shard dropped its copy");
    assert.equal((await call("POST", `/v1/admin/shards/abort?namespace=${ns}`)).status, 404, "nothing left to abort");
    const through = await call("POST", `/v1/long-term-memory/?namespace=${ns}`, { memories: [{ id: "held", text: "written under the fence", user_id: moving }] });
    assert.equal(through.status, 200, "the fence lifted: " + through.text);
    live.add("held");
    users.set("held", moving);
    checkPlacement(await status(call, ns), live, new Set(), users);
  } finally {
    await stuck.mf.dispose();
  }
  // Without the fault, a split of the same shard (to the same new id) succeeds.
  const fine = await startWorker({ persistDir: dir, bindings: { EDGEMEM_SHARDS_INITIAL: "2" } });
  try {
    const again = await fine.call("POST", `/v1/admin/shards/split?namespace=${ns}`, { shard: 1 });
    assert.equal(again.status, 200, again.text);
    const st = await status(fine.call, ns);
    const ids = st.shards.flatMap((s) => s.ids);
    assert.equal(ids.length, 81, "every record once");
    assert.equal(new Set(ids).size, 81);
    await checkSessions(fine.call, ns, new Map(Array.from({ length: 7 }, (_, s) => [`sess-${s}`, []])));
  } finally {
    await fine.mf.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a sealed tenant splits with its key, by request and by threshold; a directory restarted without the key waits for a write that brings it", async () => {
  const k1 = randomBytes(32).toString("base64url");
  const KEY = { "x-edgemem-encryption-key": k1 };
  const dir = mkdtempSync(join(tmpdir(), "edgemem-sealed-split-"));
  const ns = "sealed1";
  const first = await startWorker({ persistDir: dir, bindings: { EDGEMEM_SHARDS_INITIAL: "2", EDGEMEM_TEST_FAULT: "split_stop_fenced" } });
  let live, users;
  try {
    const kcall = (m, p, b) => first.call(m, p, b, KEY);
    const memories = await seed(kcall, ns, 60);
    live = new Set(memories.map((m) => m.id));
    users = new Map(memories.filter((m) => m.user_id).map((m) => [m.id, m.user_id]));
    // Without its key: typed refusals, nothing planned.
    for (const [m, p] of [["POST", `/v1/admin/shards/split?namespace=${ns}`], ["GET", `/v1/admin/shards?namespace=${ns}`]]) {
      const r = await first.call(m, p, m === "POST" ? { shard: 1 } : undefined);
      assert.equal(r.status, 401, r.text);
      assert.equal(r.json.code, "key_required");
    }
    assert.equal((await first.call("GET", `/v1/admin/shards?namespace=${ns}`, undefined, KEY)).json.moving, null, "nothing planned without the key");
    // With it: the split runs, and stops after its fence (as a crash would).
    const split = await first.call("POST", `/v1/admin/shards/split?namespace=${ns}`, { shard: 1 }, KEY);
    assert.equal(split.status, 500, split.text);
  } finally {
    // The directory goes with its memory before its alarm runs again.
    await first.mf.dispose();
  }
  const second = await startWorker({ persistDir: dir, bindings: { EDGEMEM_SHARDS_INITIAL: "2" } });
  try {
    const kcall = (m, p, b) => second.call(m, p, b, KEY);
    // Its alarm finds no key: the split waits under its fence.
    await sleep(3_000);
    const waiting = await status(kcall, ns);
    assert.equal(waiting.moving?.step, "fenced", JSON.stringify(waiting.moving));
    // Shard 1 owns the upper half of the buckets; its upper half moves.
    const moving = Array.from({ length: 60 }, (_, i) => `u${i}`).find((u) => ownerIn(waiting.map, bucketOf(u)) === 1 && bucketOf(u) >= 3072);
    assert.ok(moving, "a user in the moving half");
    // A write to a moving bucket that carries the key hands it on: the
    // split finishes, and the write goes through (now or on its retry).
    let through;
    for (let i = 0; i < 20 && through?.status !== 200; i++) {
      through = await kcall("POST", `/v1/long-term-memory/?namespace=${ns}`, { memories: [{ id: "fenced-write", text: "written under the fence", user_id: moving }] });
      if (through.status !== 200) await sleep(250);
    }
    assert.equal(through.status, 200, through.text);
    live.add("fenced-write");
    users.set("fenced-write", moving);
    const st = await splitDone(kcall, ns);
    assert.equal(st.moving, null);
    assert.equal(st.shards.length, 3);
    checkPlacement(st, live, new Set(), users);
    // Every shard, the new one too, is sealed under the tenant's key.
    const enc = await kcall("GET", `/v1/encryption?namespace=${ns}`);
    assert.equal(enc.status, 200, enc.text);
    assert.equal(enc.json.shards.length, 3);
    assert.ok(enc.json.shards.every((s) => s.status.encrypted && s.status.key_id === enc.json.key_id), enc.text);
    const found = await kcall("POST", `/v1/long-term-memory/search?namespace=${ns}`, { text: "memory", search_mode: "keyword", limit: 100 });
    assert.equal(found.status, 200, found.text);
    assert.equal(found.json.memories.filter((m) => m.id.startsWith("seed-")).length, 60);
  } finally {
    await second.mf.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
  // A sealed shard past its threshold asks with the key its write carried.
  const auto = await start({ EDGEMEM_SHARDS_INITIAL: "1", EDGEMEM_SHARD_SPLIT_RECORDS: "50" });
  const acall = (m, p, b) => auto.call(m, p, b, KEY);
  const memories = await seed(acall, "sealed2", 80);
  let st;
  for (let i = 0; i < 60; i++) {
    st = await status(acall, "sealed2");
    if (st.shards.length === 2 && !st.moving) break;
    await sleep(250);
  }
  assert.equal(st.shards.length, 2, "no split happened");
  assert.equal(st.last_split.reason, "records");
  checkPlacement(st, new Set(memories.map((m) => m.id)), new Set(), new Map(memories.filter((m) => m.user_id).map((m) => [m.id, m.user_id])));
});

test("a shard past its record threshold asks for a split", async () => {
  const { call } = await start({ EDGEMEM_SHARDS_INITIAL: "1", EDGEMEM_SHARD_SPLIT_RECORDS: "50" });
  const ns = "auto";
  const memories = await seed(call, ns, 80);
  let st;
  for (let i = 0; i < 60; i++) {
    st = await status(call, ns);
    if (st.shards.length === 2 && !st.moving) break;
    await sleep(250);
  }
  assert.equal(st.shards.length, 2, "no split happened");
  assert.equal(st.last_split.reason, "records");
  checkPlacement(st, new Set(memories.map((m) => m.id)), new Set(), new Map(memories.filter((m) => m.user_id).map((m) => [m.id, m.user_id])));
});

test("split requests are checked, and the routes are 501 without sharding", async () => {
  const { call } = await start({ EDGEMEM_SHARDS_INITIAL: "2" });
  const none = await call("POST", "/v1/admin/shards/split?namespace=checks", { shard: 9 });
  assert.equal(none.status, 422, none.text);
  const bad = await call("POST", "/v1/admin/shards/split?namespace=checks", { shard: "zero" });
  assert.equal(bad.status, 422, bad.text);
  const ids = await call("GET", "/v1/admin/shards?namespace=checks&ids=maybe");
  assert.equal(ids.status, 400, ids.text);
  const off = await start({});
  const r = await off.call("POST", "/v1/admin/shards/split?namespace=checks", {});
  assert.equal(r.status, 501, r.text);
  assert.equal(r.json.code, "not_sharded");
});
