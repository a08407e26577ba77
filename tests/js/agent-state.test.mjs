// The agent's own state through the npm package (issue 11, point 5): the
// seed's v1 → v2 migration (flat `balance` into a `portfolio` map), by a
// declarative chain and by JS functions; profiles with exact increments;
// and two tabs on one IndexedDB database hearing each other's writes.
import { test } from "node:test";
import assert from "node:assert/strict";
import "fake-indexeddb/auto";
import { IDBFactory } from "fake-indexeddb";
import { IndexedDBStore, Memory, MemoryStore } from "edgemem";

const SEED_CHAIN = { version: 2, migrations: [{ from: 1, steps: [{ move: { from: ["balance"], to: ["portfolio", "USD"] } }] }] };

test("the seed's v1 → v2 example, declarative: runs on read, written back once, survives a reopen", async () => {
  const store = new MemoryStore();
  const memory = await Memory.open({ store });
  await memory.putSession("s", { data: { balance: "1234.567890123456789", name: "ada" } });
  await memory.profiles.set("agent-1", { balance: "10" });
  await memory.schemas.set("session_data", SEED_CHAIN);
  await memory.schemas.set("profile", SEED_CHAIN);
  const seen = [];
  const off = memory.subscribe({ kinds: ["working_memory.migrated", "profile.migrated"] }, (e) => seen.push(e.kind));
  const s = await memory.getSession("s");
  assert.deepEqual(s.data, { portfolio: { USD: "1234.567890123456789" }, name: "ada" });
  assert.equal(s.data_schema_version, 2);
  assert.deepEqual((await memory.profiles.get("agent-1")).fields, { portfolio: { USD: "10" } });
  await memory.getSession("s");
  await memory.profiles.get("agent-1");
  await new Promise((r) => setTimeout(r, 5));
  off();
  assert.deepEqual(seen, ["working_memory.migrated", "profile.migrated"], "written back once each");
  // New writes are in the newest version; newer ones are refused.
  assert.equal((await memory.putSession("t", { data: { portfolio: {} } })).data_schema_version, 2);
  await assert.rejects(memory.putSession("u", { data: {}, data_schema_version: 3 }), (e) => e.code === "schema_version_too_new");
  memory.free();
  const reopened = await Memory.open({ store });
  assert.equal((await reopened.getSession("s")).data.portfolio.USD, "1234.567890123456789");
  assert.equal((await reopened.schemas.get("profile")).version, 2);
  reopened.free();
});

test("JS migration functions: chain on read, a throwing one leaves the stored state untouched", async () => {
  const memory = await Memory.open();
  await memory.putSession("s", { data: { balance: 12.5 } });
  await memory.putSession("bad", { data: { balance: "boom" } });
  memory.schemas.register("session_data", {
    version: 3,
    migrations: {
      1: (d) => {
        if (d.balance === "boom") throw new Error("cannot read the balance");
        const { balance, ...rest } = d;
        return { ...rest, portfolio: { USD: balance } };
      },
      2: async (d) => ({ ...d, risk: d.risk ?? "low" }),
    },
  });
  const s = await memory.getSession("s");
  assert.deepEqual(s.data, { portfolio: { USD: 12.5 }, risk: "low" });
  assert.equal(s.data_schema_version, 3);
  await assert.rejects(memory.getSession("bad"), (e) => e.code === "migration_failed" && /cannot read the balance/.test(e.message));
  memory.schemas.register("session_data", { version: 1 });
  const untouched = await memory.getSession("bad");
  assert.deepEqual(untouched.data, { balance: "boom" }, "the stored state is as it was");
  assert.equal(untouched.data_schema_version, null);
  assert.throws(() => memory.schemas.register("session_data", { version: 2, migrations: {} }), (e) => e.code === "invalid_input");
  assert.throws(() => memory.schemas.register("nope", { version: 1 }), (e) => e.code === "not_found");
  memory.free();
});

test("profiles: fields, exact atomic increments, snapshots", async () => {
  const memory = await Memory.open();
  assert.equal(await memory.profiles.get("a"), null);
  await memory.profiles.set("a", { name: "ada", spent: "0.1" });
  const incs = await Promise.all(Array.from({ length: 50 }, () => memory.profiles.increment("a", "session_count")));
  assert.deepEqual(incs.sort((x, y) => x - y), Array.from({ length: 50 }, (_, i) => i + 1), "atomic: every increment counted once");
  assert.equal(await memory.profiles.increment("a", "spent", "0.2"), "0.3");
  assert.equal(await memory.profiles.increment("a", "big", 9007199254740993n), 9007199254740993);
  await assert.rejects(memory.profiles.increment("a", "spent", 0.2), (e) => e.code === "invalid_input");
  await memory.profiles.set("a", { name: null });
  const snap = await memory.profiles.snapshot("a");
  assert.ok(Object.isFrozen(snap) && Object.isFrozen(snap.fields));
  assert.deepEqual(Object.keys(snap.fields).sort(), ["big", "session_count", "spent"]);
  assert.equal(await memory.profiles.delete("a"), true);
  assert.equal(await memory.profiles.delete("a"), false);
  memory.free();
});

test("two memories on one IndexedDB database (two tabs) hear each other's writes and see the state", async () => {
  const indexedDB = new IDBFactory();
  const a = await Memory.open({ store: await IndexedDBStore.open("tabs", { indexedDB }) });
  const b = await Memory.open({ store: await IndexedDBStore.open("tabs", { indexedDB }) });
  const heard = [];
  const off = b.subscribe({}, (e) => heard.push([e.seq, e.kind, e.key]));
  await a.putSession("from-a", { data: { n: 1 } });
  await a.appendMessages("from-a", [{ role: "user", content: "hi" }]);
  const deadline = Date.now() + 5_000;
  while (heard.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(heard, [
    [1, "working_memory.updated", "from-a"],
    [2, "working_memory.appended", "from-a"],
  ]);
  assert.equal((await b.getSession("from-a")).messages.length, 1, "b caught up with storage");
  off();
  a.free();
  b.free();
});
