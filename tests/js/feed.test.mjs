// The change feed through the built package: subscribers see every durable
// write once, in seq order, nothing for a refused write, resume with `since`
// across a reopen without a gap or a duplicate, and bad options are typed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Memory, MemoryStore, EdgememError } from "edgemem";

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

async function writes(m, n, from = 0) {
  for (let i = from; i < from + n; i++) {
    await m.putSession(`s${i % 3}`, { messages: [] });
    await m.appendMessages(`s${i % 3}`, [{ role: "user", content: `turn ${i}` }]);
  }
}

test("two subscribers and a writer see contiguous seqs; a refused write sends nothing", async () => {
  const m = await Memory.open();
  const a = [];
  const b = [];
  const offA = m.subscribe({}, (e) => a.push(e));
  const offB = m.subscribe({ kinds: ["working_memory.appended"] }, (e) => b.push(e));
  await writes(m, 5);
  await assert.rejects(m.appendMessages("nope", [{ role: "user", content: "x" }]), (e) => e.code === "not_found");
  await m.ledger.createAsset("USDC", 2);
  await tick();
  assert.deepEqual(a.map((e) => e.seq), Array.from({ length: 11 }, (_, i) => i + 1));
  assert.equal(a.at(-1).kind, "ledger.asset_created");
  assert.equal(a.at(-1).key, "USDC");
  assert.deepEqual(b.map((e) => e.seq), [2, 4, 6, 8, 10]);
  assert.ok(b.every((e) => e.kind === "working_memory.appended" && e.count === 1 && e.ids.length === 1));
  assert.ok(!JSON.stringify(a).includes("turn "), "events carry ids, not message bodies");
  offA();
  await writes(m, 1, 5);
  await tick();
  assert.equal(a.length, 11, "unsubscribed");
  assert.equal(b.length, 6);
  offB();
});

test("a resume with since after a reopen misses nothing and repeats nothing", async () => {
  const store = new MemoryStore();
  let m = await Memory.open({ store });
  const seen = [];
  const off = m.subscribe({}, (e) => seen.push(e.seq));
  await writes(m, 3);
  await tick();
  off();
  const last = seen.at(-1);
  // Disconnected: more writes happen, then the process restarts.
  await writes(m, 2, 3);
  m = await Memory.open({ store });
  await writes(m, 1, 5);
  const resumed = [];
  m.subscribe({ since: last }, (e) => resumed.push(e.seq));
  await writes(m, 1, 6);
  for (let i = 0; i < 20 && resumed.length < 8; i++) await tick();
  assert.deepEqual([...seen, ...resumed], Array.from({ length: 14 }, (_, i) => i + 1));
});

test("since older than what is kept is one resync_required event, then live events", async () => {
  const store = new MemoryStore();
  let m = await Memory.open({ store });
  await writes(m, 3);
  await m.snapshot();
  m = await Memory.open({ store });
  const got = [];
  m.subscribe({ since: 1 }, (e) => got.push(e));
  await tick();
  await writes(m, 1, 3);
  await tick();
  assert.equal(got[0].kind, "resync_required");
  assert.equal(got[0].last_seq, 6);
  assert.deepEqual(got.slice(1).map((e) => e.seq), [7, 8]);
});

test("events() is an async iterator, and leaving the loop unsubscribes", async () => {
  const m = await Memory.open();
  const producer = (async () => {
    await tick();
    await writes(m, 2);
  })();
  const kinds = [];
  for await (const e of m.events({ keys: ["s1"] })) {
    kinds.push(`${e.seq}:${e.kind}`);
    if (kinds.length === 2) break;
  }
  await producer;
  assert.deepEqual(kinds, ["3:working_memory.updated", "4:working_memory.appended"]);
});

test("bad feed options are typed errors", async () => {
  const m = await Memory.open();
  for (const options of [{ kinds: ["working_memory.apended"] }, { kinds: ["nope.*"] }, { since: -1 }, { since: 1.5 }, { since: "3" }, { keys: [3] }]) {
    assert.throws(() => m.subscribe(options, () => {}), (e) => e instanceof EdgememError && e.code === "invalid_query", JSON.stringify(options));
  }
  assert.throws(() => m.subscribe({}, "not a function"), TypeError);
  // A since past the present is refused by the store: one error event.
  const got = [];
  m.subscribe({ since: 5 }, (e) => got.push(e));
  for (let i = 0; i < 10 && got.length === 0; i++) await tick();
  assert.equal(got[0].kind, "error");
  assert.equal(got[0].code, "invalid_query");
});
