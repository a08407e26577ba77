// Drives the built npm package (pkg/) through its public API, in Node.
import { test } from "node:test";
import assert from "node:assert/strict";
import "fake-indexeddb/auto";
import { Memory, MemoryStore, IndexedDBStore, KVStore, EdgememError, version } from "edgemem";
import { crc32, plainStore, dump } from "./helpers.mjs";

async function rejectsWith(promise, code) {
  await assert.rejects(promise, (err) => {
    assert.ok(err instanceof EdgememError, `expected EdgememError, got ${err}`);
    assert.equal(err.code, code, err.message);
    return true;
  });
}

test("version is the crate version", () => {
  assert.match(version(), /^\d+\.\d+\.\d+/);
});

test("sessions survive a restart on the same store, across snapshots", async () => {
  const store = new MemoryStore();
  const a = await Memory.open({ store, snapshotEveryOps: 4, chunkBytes: 64 });
  const { created } = await a.getOrCreateSession("chat", { data: { budget: "12.50" }, context: "so far" });
  assert.equal(created, true);
  assert.equal((await a.getOrCreateSession("chat")).created, false);
  for (let i = 0; i < 10; i++) await a.appendMessages("chat", [{ role: i % 2 ? "assistant" : "user", content: `turn ${i} — ünïcode ✓` }]);
  await a.putSession("other", { user_id: "u2" });
  const stats = await a.stats();
  assert.ok(stats.snapshot_gen >= 2, "snapshots were taken");
  assert.ok([...store.map.keys()].filter((k) => k.startsWith("snap/")).length > 1, "multi-chunk snapshot");
  a.free();

  const b = await Memory.open({ store });
  const s = await b.getSession("chat");
  assert.equal(s.messages.length, 10);
  assert.equal(s.messages[9].content, "turn 9 — ünïcode ✓");
  assert.equal(s.data.budget, "12.50");
  assert.equal(s.context, "so far");
  assert.deepEqual(await b.listSessions(), { sessions: ["chat", "other"], total: 2 });
  assert.deepEqual(await b.listSessions({ userId: "u2" }), { sessions: ["other"], total: 1 });
  assert.equal((await b.getSession("chat", { recentMessagesLimit: 3 })).messages.length, 3);
  assert.equal(await b.deleteSession("chat"), true);
  assert.equal(await b.deleteSession("chat"), false);
  assert.equal(await b.getSession("chat"), null);
});

test("a user-supplied plain object works as a store", async () => {
  const store = plainStore();
  const a = await Memory.open({ store, keyPrefix: "tenant-1/" });
  await a.putSession("s", { messages: [{ role: "user", content: "hi" }] });
  assert.ok([...store.map.keys()].every((k) => k.startsWith("tenant-1/")));
  const b = await Memory.open({ store, keyPrefix: "tenant-1/" });
  assert.equal((await b.getSession("s")).messages[0].content, "hi");
  const other = await Memory.open({ store, keyPrefix: "tenant-2/" });
  assert.equal(await other.getSession("s"), null, "prefixes isolate tenants");
});

test("IndexedDB store persists across close and reopen (fake-indexeddb)", async () => {
  const db1 = await IndexedDBStore.open("edgemem-test");
  const a = await Memory.open({ store: db1, snapshotEveryOps: 3 });
  await a.putSession("idb", { ttl_seconds: 3600 });
  await a.appendMessages("idb", [{ role: "user", content: "stored in IndexedDB" }]);
  for (let i = 0; i < 5; i++) await a.putSession(`x${i}`, {});
  db1.close();
  const db2 = await IndexedDBStore.open("edgemem-test");
  const b = await Memory.open({ store: db2 });
  assert.equal((await b.getSession("idb")).messages[0].content, "stored in IndexedDB");
  assert.equal((await b.listSessions()).total, 6);
  db2.close();
});

test("IndexedDBStore where there is no IndexedDB is a typed storage_error, not a plain Error", async () => {
  await rejectsWith(IndexedDBStore.open("nowhere", { indexedDB: null }), "storage_error");
});

test("a mutating call resolves only after the store's put resolved", async () => {
  const inner = plainStore();
  let release;
  const gate = new Promise((r) => (release = r));
  const slow = { ...inner, put: async (k, v) => { await gate; return inner.put(k, v); } };
  const m = await Memory.open({ store: slow });
  let done = false;
  const p = m.putSession("s", {}).then(() => (done = true));
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(done, false, "resolved before the write was durable");
  release();
  await p;
  assert.equal(done, true);
  assert.ok([...inner.map.keys()].some((k) => k.startsWith("log/")));
});

test("a failed write is reported and nothing half-written is served", async () => {
  const inner = plainStore();
  let fail = false;
  const flaky = { ...inner, put: async (k, v) => { if (fail) throw new Error("disk full"); return inner.put(k, v); } };
  const m = await Memory.open({ store: flaky });
  await m.putSession("s", { context: "v1" });
  fail = true;
  await rejectsWith(m.putSession("s", { context: "v2" }), "storage_error");
  fail = false;
  assert.equal((await m.getSession("s")).context, "v1", "the failed write is not visible");
  await m.putSession("s", { context: "v3" });
  assert.equal((await (await Memory.open({ store: inner })).getSession("s")).context, "v3");
});

test("concurrent calls are serialized: none is lost", async () => {
  const store = new MemoryStore();
  const m = await Memory.open({ store, snapshotEveryOps: 7 });
  await m.putSession("c", {});
  await Promise.all(Array.from({ length: 100 }, (_, i) => m.appendMessages("c", [{ role: "user", content: `m${i}` }])));
  const again = await Memory.open({ store });
  const contents = (await again.getSession("c")).messages.map((x) => x.content).sort();
  assert.equal(contents.length, 100);
  assert.equal(new Set(contents).size, 100);
});

test("TTL hides and expire() sweeps, driven by an injected clock", async () => {
  let now = Date.UTC(2026, 10, 22);
  const store = new MemoryStore();
  const m = await Memory.open({ store, clock: () => now });
  await m.putSession("short", { ttl_seconds: 10 });
  await m.putSession("durable", {});
  assert.equal(await m.expire(), now + 10_000);
  now += 10_000;
  assert.equal(await m.getSession("short"), null);
  assert.equal(await m.expire(), null);
  assert.deepEqual((await m.listSessions()).sessions, ["durable"]);
  const reopened = await Memory.open({ store, clock: () => now });
  assert.equal(await reopened.getSession("short"), null);
});

test("bad input gets typed errors and changes nothing", async () => {
  const store = new MemoryStore();
  const m = await Memory.open({ store });
  await m.putSession("keep", { context: "original" });
  const before = dump(store.map);
  await rejectsWith(m.putSession("keep", { ttl_seconds: NaN }), "invalid_input");
  await rejectsWith(m.putSession("keep", { data: { price: Infinity } }), "invalid_input");
  // A bigint is no longer refused: it is written as its exact digits (numbers.test.mjs).
  await rejectsWith(m.putSession("keep", { ttl_seconds: "soon" }), "invalid_input");
  await rejectsWith(m.putSession("keep", { ttl_seconds: 1.5 }), "invalid_input");
  await rejectsWith(m.putSession("keep", { data: [1, 2] }), "invalid_input");
  await rejectsWith(m.putSession("keep", { messages: [{ role: "user", content: "" }] }), "invalid_input");
  await rejectsWith(m.putSession("keep", "not an object"), "invalid_input");
  await rejectsWith(m.putSession("", {}), "invalid_input");
  await rejectsWith(m.putSession(42, {}), "invalid_input");
  await rejectsWith(m.putSession("keep", { context: "x".repeat(2_000_000) }), "payload_too_large");
  await rejectsWith(m.putSession("keep", { context: "x".repeat(300_000) }), "payload_too_large");
  await rejectsWith(m.appendMessages("missing", [{ role: "user", content: "x" }]), "not_found");
  await rejectsWith(m.appendMessages("keep", "not an array"), "invalid_input");
  await rejectsWith(m.listSessions({ limit: 0 }), "invalid_input");
  await rejectsWith(m.listSessions({ limit: 1.5 }), "invalid_input");
  assert.deepEqual(dump(store.map), before);
  assert.equal((await m.getSession("keep")).context, "original");
});

test("bad stores and options are refused with typed errors", async () => {
  await rejectsWith(Memory.open({ store: { get() {} } }), "invalid_input");
  await rejectsWith(Memory.open({ store: 42 }), "invalid_input");
  await rejectsWith(Memory.open({ snapshotEveryOps: 0 }), "invalid_input");
  await rejectsWith(Memory.open({ chunkBytes: 3_000_000 }), "invalid_input");
  await rejectsWith(Memory.open({ clock: "noon" }), "invalid_input");
  const bad = { ...plainStore(), get: async () => "not bytes", list: async () => ["log/0000000000000001"] };
  await rejectsWith(Memory.open({ store: bad }), "storage_error");
  const kv = new KVStore(fakeKv());
  await rejectsWith(Memory.open({ store: kv }), "store_unsuitable");
});

test("corrupt and future-version snapshots are refused and left untouched", async () => {
  const store = new MemoryStore();
  const m = await Memory.open({ store });
  await m.putSession("s", { context: "precious" });
  await m.snapshot();
  const key = [...store.map.keys()].find((k) => k.startsWith("snap/"));
  const good = store.map.get(key).slice();

  const flipped = good.slice();
  flipped[good.length - 3] ^= 0x01;
  store.map.set(key, flipped);
  let before = dump(store.map);
  await rejectsWith(Memory.open({ store }), "snapshot_corrupt");
  assert.deepEqual(dump(store.map), before);

  // Rewrite the schema version to 99 with a valid header checksum, as a newer edgemem would.
  const future = good.slice();
  const view = new DataView(future.buffer);
  view.setUint32(8, 99, true);
  view.setUint32(28, crc32(future.subarray(0, 28)), true);
  store.map.set(key, future);
  before = dump(store.map);
  await rejectsWith(Memory.open({ store }), "schema_version_unsupported");
  assert.deepEqual(dump(store.map), before);

  store.map.set(key, good);
  assert.equal((await (await Memory.open({ store })).getSession("s")).context, "precious");
});

function fakeKv() {
  const map = new Map();
  return {
    map,
    async get(k, type) {
      assert.equal(type, "arrayBuffer");
      const v = map.get(k);
      return v === undefined ? null : v.slice().buffer;
    },
    async put(k, v) {
      map.set(k, new Uint8Array(v));
    },
    async delete(k) {
      map.delete(k);
    },
    async list({ prefix, cursor }) {
      // Two-key pages, to walk the cursor loop.
      const keys = [...map.keys()].filter((k) => k.startsWith(prefix)).sort();
      const start = cursor ? Number(cursor) : 0;
      const page = keys.slice(start, start + 2).map((name) => ({ name }));
      const done = start + 2 >= keys.length;
      return { keys: page, list_complete: done, cursor: done ? undefined : String(start + 2) };
    },
  };
}

test("snapshots publish to KV and open as a replica", async () => {
  const m = await Memory.open({ store: new MemoryStore() });
  for (let i = 0; i < 20; i++) await m.putSession(`s${i}`, { context: "c".repeat(200) });
  const kv = fakeKv();
  const kvStore = new KVStore(kv);
  await m.publishSnapshot(kvStore, { keyPrefix: "pub/" });
  await m.putSession("later", {});
  const stats = await m.publishSnapshot(kvStore, { keyPrefix: "pub/" });
  assert.equal(stats.snapshot_gen, 2);
  const replica = await Memory.openPublished(kvStore, { keyPrefix: "pub/" });
  assert.equal((await replica.listSessions({ limit: 100 })).total, 21);
  assert.ok(await replica.getSession("later"));
});
