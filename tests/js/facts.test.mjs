// Facts over time through the package (issue 20): fact_key chains with
// per-record create results, latestOnly / asOf / includeSuperseded,
// idempotent batch retries, writers racing on one key that agree after a
// replay, and `explain` on search hits.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Memory, MemoryStore } from "edgemem";

const VERSIONS = [
  { id: "u-mar", text: "Ana switched to imperial units for the US office.", valid_from: "2025-03-01T00:00:00Z" },
  { id: "u-jan", text: "Ana prefers metric units.", valid_from: "2025-01-10T00:00:00Z" },
  { id: "u-jun", text: "Ana is back on metric units after the move.", valid_from: "2025-06-01T00:00:00Z" },
].map((v) => ({ ...v, user_id: "ana", fact_key: "user.units", memory_type: "semantic" }));

const ids = (r) => r.memories.map((m) => m.id).sort();
const units = (lt, extra = {}) => lt.search({ text: "Ana units", mode: "keyword", recencyBoost: false, fact_key: { eq: "user.units" }, ...extra });

test("a chain: results per record, the current fact by default, asOf, every version", async () => {
  const memory = await Memory.open();
  const r = await memory.longTerm.create(VERSIONS);
  assert.deepEqual(r.results, [
    { id: "u-mar", status: "created" },
    { id: "u-jan", status: "created", superseded_by: "u-mar" },
    { id: "u-jun", status: "superseded", superseded: ["u-mar"] },
  ]);
  assert.deepEqual(ids(await units(memory.longTerm)), ["u-jun"]);
  assert.deepEqual(ids(await units(memory.longTerm, { latestOnly: true })), ["u-jun"]);
  const april = await units(memory.longTerm, { asOf: "2025-04-01T00:00:00Z" });
  assert.deepEqual(ids(april), ["u-mar"]);
  assert.equal(april.memories[0].valid_to, "2025-06-01T00:00:00.000Z");
  assert.equal(april.memories[0].superseded_by, "u-jun");
  assert.deepEqual(ids(await units(memory.longTerm, { includeSuperseded: true })), ["u-jan", "u-jun", "u-mar"]);
  assert.deepEqual(ids(await units(memory.longTerm, { latestOnly: false })), ["u-jan", "u-jun", "u-mar"]);
  await assert.rejects(units(memory.longTerm, { asOf: "2025-04-01T00:00:00Z", includeSuperseded: true }), { code: "invalid_input" });
  await assert.rejects(units(memory.longTerm, { asOf: "April" }), { code: "invalid_input" });
  await assert.rejects(memory.longTerm.create([{ text: "x", valid_from: "2025-01-01T00:00:00Z" }]), { code: "invalid_input" });
  // Deleting the current fact makes its predecessor current again.
  await memory.longTerm.delete(["u-jun"]);
  assert.deepEqual(ids(await units(memory.longTerm)), ["u-mar"]);
  assert.equal((await memory.longTerm.get("u-mar")).superseded_by, null);
  // A record without a fact key reads as AMS's record.
  const plain = await memory.longTerm.create([{ id: "p", text: "Ana hikes on Sundays." }]);
  assert.equal(plain.results[0].status, "created");
  assert.equal("fact_key" in (await memory.longTerm.get("p")), false);
  memory.free();
});

test("a batch retried after a timeout creates nothing twice", async () => {
  const store = new MemoryStore();
  const memory = await Memory.open({ store });
  const batch = [...VERSIONS, { text: "Ana's city is Porto.", user_id: "ana", fact_key: "user.city" }];
  const first = await memory.longTerm.create(batch);
  assert.equal(first.created.length, 4);
  const retry = await memory.longTerm.create(batch);
  assert.deepEqual(retry.created, []);
  assert.deepEqual(
    retry.results.map((x) => x.status),
    ["duplicate_of", "duplicate_of", "duplicate_of", "duplicate_of"],
  );
  // The record without an id got a fresh one on retry, and was matched to the stored one by content.
  assert.equal(retry.results[3].duplicate_of, first.created[3]);
  const all = await memory.longTerm.search({ text: "", user_id: { eq: "ana" }, includeSuperseded: true, limit: 50 });
  assert.equal(all.total, 4);
  memory.free();
});

test("writers racing on one key agree, and a replay from storage agrees with them", async () => {
  const store = new MemoryStore();
  const a = await Memory.open({ store });
  const wallet = (id, day) => ({ id, text: `Ana's primary wallet is wal-${id}.`, user_id: "ana", fact_key: "wallet.primary_address", valid_from: `2025-0${day}-01T00:00:00Z` });
  // Two writers at once: the later valid_from wins whatever order the log gives them.
  await Promise.all([a.longTerm.create([wallet("w5", 5)]), a.longTerm.create([wallet("w3", 3)]), a.longTerm.create([wallet("w4", 4)])]);
  const current = async (m) => ids(await m.longTerm.search({ text: "wallet", mode: "keyword", fact_key: { eq: "wallet.primary_address" } }));
  assert.deepEqual(await current(a), ["w5"]);
  assert.equal((await a.longTerm.get("w3")).superseded_by, "w4");
  // Same valid_from: the later write wins.
  await a.longTerm.create([{ ...wallet("w6", 5), text: "Ana's primary wallet is now wal-w6." }]);
  assert.deepEqual(await current(a), ["w6"]);
  const chain = async (m) => Promise.all(["w3", "w4", "w5", "w6"].map(async (id) => [id, (await m.longTerm.get(id)).superseded_by]));
  const before = await chain(a);
  a.free();
  const b = await Memory.open({ store });
  assert.deepEqual(await chain(b), before, "replayed from the log, the chain is the same");
  assert.deepEqual(await current(b), ["w6"]);
  b.free();
});

test("explain: each hit's signals, numbers and names only", async () => {
  const memory = await Memory.open();
  await memory.longTerm.create(VERSIONS);
  const r = await memory.longTerm.search({ text: "metric units", mode: "hybrid", explain: true, user_id: { eq: "ana" } });
  assert.ok(r.memories.length > 0);
  for (const [i, hit] of r.memories.entries()) {
    const x = hit.explain;
    assert.equal(x.rank, i + 1);
    assert.equal(x.search_mode, "hybrid");
    assert.equal(x.fusion.kind, "alpha");
    assert.ok(typeof x.fusion.vector_weight === "number" && typeof x.vector.score === "number", JSON.stringify(x));
    assert.deepEqual(x.filters, ["user_id"]);
    assert.equal(x.versions, "latest_only");
    for (const v of VERSIONS) assert.ok(!JSON.stringify(x).includes(v.text));
  }
  const plain = await memory.longTerm.search({ text: "metric units" });
  assert.equal(plain.memories[0].explain, undefined);
  await assert.rejects(memory.longTerm.search({ text: "x", explain: "yes" }), { code: "invalid_input" });
  memory.free();
});
