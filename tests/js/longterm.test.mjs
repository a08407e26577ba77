// Long-term memory through the built package: typed-array vectors, the
// offline embedder, an embed hook, search modes and filters, bad vectors,
// persistence of the index across a reopen, and the raw VectorIndex.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Memory, MemoryStore, EdgememError, VectorIndex } from "edgemem";

async function rejectsWith(promise, code) {
  await assert.rejects(promise, (err) => {
    assert.equal(err.code, code, err.message);
    return true;
  });
}

function unit(dim, seed) {
  const v = new Float32Array(dim);
  let x = seed * 2654435761 + 1;
  for (let i = 0; i < dim; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    v[i] = (x / 2 ** 32) - 0.5 + (i % 8 === seed % 8 ? 2 : 0);
  }
  return v;
}

test("records with caller vectors: search, filters, reopen without loss", async () => {
  const store = new MemoryStore();
  const memory = await Memory.open({ store, snapshotEveryOps: 3 });
  const n = 60;
  const memories = Array.from({ length: n }, (_, i) => ({ id: `r${i}`, text: `record ${i} about subject ${i % 6}`, user_id: `u${i % 2}`, topics: [`t${i % 3}`] }));
  const vectors = memories.map((_, i) => unit(32, i));
  const r = await memory.longTerm.create(memories, { vectors });
  assert.equal(r.created.length, n);
  const hits = await memory.longTerm.search({ vector: unit(32, 7), limit: 5 });
  assert.equal(hits.memories[0].id, "r7");
  assert.ok(hits.memories[0].dist < 1e-5);
  const filtered = await memory.longTerm.search({ vector: unit(32, 7), limit: 10, user_id: { eq: "u0" }, topics: { any: ["t0"] } });
  assert.ok(filtered.memories.length > 0 && filtered.memories.every((m) => m.user_id === "u0" && m.topics.includes("t0")));
  assert.equal(filtered.exact_filter, true);
  await rejectsWith(memory.longTerm.create([{ text: "x" }], { vectors: [new Float32Array(31).fill(1)] }), "dimension_mismatch");
  await rejectsWith(memory.longTerm.create([{ text: "x" }], { vectors: [Float32Array.of(...new Array(31).fill(1), NaN)] }), "non_finite");
  await rejectsWith(memory.longTerm.create([{ text: "x" }], { vectors: [new Float32Array(32)] }), "zero_vector");
  await rejectsWith(memory.longTerm.search({ vector: new Float32Array(8).fill(1) }), "dimension_mismatch");
  await rejectsWith(memory.longTerm.search({ text: "x", vector: [1, 2, 3] }), "invalid_input");
  assert.equal(await memory.longTerm.delete(["r7", "nope"]), 1);
  const again = await Memory.open({ store });
  const after = await again.longTerm.search({ vector: unit(32, 7), limit: 5 });
  assert.ok(!after.memories.some((m) => m.id === "r7"), "a deleted record stays deleted after a reopen");
  assert.equal((await again.longTerm.get("r8")).text, "record 8 about subject 2");
});

test("the offline embedder recalls by meaning and keyword; an embed hook that fails changes nothing", async () => {
  const memory = await Memory.open();
  await memory.longTerm.create([
    { id: "kitchen", text: "The user painted the kitchen teal last spring.", topics: ["home"] },
    { id: "peanuts", text: "The user is allergic to peanuts and avoids satay.", topics: ["health"] },
    { id: "lisbon", text: "The user flew to Lisbon for a databases conference.", topics: ["travel"], memory_type: "episodic" },
  ]);
  assert.equal((await memory.longTerm.search({ text: "what colour is the kitchen", limit: 1 })).memories[0].id, "kitchen");
  const kw = await memory.longTerm.search({ text: "satay", mode: "keyword" });
  assert.deepEqual(kw.memories.map((m) => m.id), ["peanuts"]);
  const hy = await memory.longTerm.search({ text: "Lisbon trip", mode: "hybrid", fusion: "rrf" });
  assert.equal(hy.memories[0].id, "lisbon");
  const bad = async () => {
    throw new Error("embedding service down");
  };
  await rejectsWith(memory.longTerm.create([{ id: "x", text: "new" }], { embedder: bad }), "hook_failed");
  await rejectsWith(memory.longTerm.create([{ id: "x", text: "new" }], { embedder: async () => [] }), "hook_failed");
  assert.equal(await memory.longTerm.get("x"), null, "nothing half-written");
  const edited = await memory.longTerm.edit("kitchen", { text: "The user repainted the kitchen sage green." });
  assert.equal(edited.text, "The user repainted the kitchen sage green.");
  assert.equal((await memory.longTerm.search({ text: "sage green", mode: "keyword" })).memories[0].id, "kitchen");
  const dry = await memory.longTerm.forget({ budget: 1 });
  assert.equal(dry.dry_run, true);
  assert.equal(dry.deleted, 2);
  assert.equal((await memory.longTerm.search({ text: "user", mode: "keyword", limit: 10 })).memories.length, 3);
});

test("VectorIndex: typed arrays in and out, serialize and restore, typed errors", () => {
  const index = new VectorIndex({ dim: 16, metric: "cosine" });
  const keys = Uint32Array.from({ length: 200 }, (_, i) => i);
  const vectors = new Float32Array(200 * 16);
  for (let i = 0; i < 200; i++) vectors.set(unit(16, i), i * 16);
  index.addBatch(keys, vectors);
  const r = index.search(unit(16, 42), 3);
  assert.equal(r.keys[0], 42);
  const back = VectorIndex.deserialize(index.serialize());
  assert.deepEqual([...back.search(unit(16, 42), 3).keys], [...r.keys]);
  assert.throws(() => index.addBatch(Uint32Array.of(1), new Float32Array(15)), (e) => e.code === "dimension_mismatch");
  assert.throws(() => VectorIndex.deserialize(new Uint8Array(10)), (e) => e.code === "snapshot_corrupt");
  index.free();
  back.free();
});

test("episodic log: record, recent by kind, window summary, cap", async () => {
  let now = Date.parse("2026-11-22T10:00:00Z");
  const memory = await Memory.open({ clock: () => now });
  await memory.episodes.configure({ per_agent_max: 2 });
  for (const kind of ["trade", "trade", "deposit"]) {
    await memory.episodes.record({ agent_id: "bot", kind, payload: { at: now }, outcome: "ok" });
    now += 1000;
  }
  const recent = await memory.episodes.recent(10, { agentId: "bot" });
  assert.deepEqual(recent.map((e) => e.kind), ["deposit", "trade"], "newest first, capped at 2");
  const s = await memory.episodes.summarizeWindow(new Date(now - 60_000), { agentId: "bot" });
  assert.equal(s.total, 2);
  assert.equal(s.by_kind.trade, 1);
  await rejectsWith(memory.episodes.record({ agent_id: "bot" }), "invalid_input");
});

test("search with fields answers only those fields, for the same hits; bad field lists are typed errors", async () => {
  const memory = await Memory.open({ store: new MemoryStore() });
  await memory.longTerm.create([
    { id: "a", text: "The user is allergic to peanuts." },
    { id: "b", text: "The user flew to Lisbon in March." },
    { id: "c", text: "Peanut butter is on the shopping list." },
  ]);
  for (const mode of ["keyword", "semantic", "hybrid"]) {
    const full = await memory.longTerm.search({ text: "peanuts", mode, limit: 3 });
    const lean = await memory.longTerm.search({ text: "peanuts", mode, limit: 3, fields: ["id", "score"] });
    assert.deepEqual(lean.memories, full.memories.map((m) => ({ id: m.id, score: m.score })), mode);
    assert.equal(lean.total, full.total);
  }
  await rejectsWith(memory.longTerm.search({ text: "peanuts", fields: ["id", "embedding"] }), "invalid_input");
  await rejectsWith(memory.longTerm.search({ text: "peanuts", fields: [] }), "invalid_input");
  await rejectsWith(memory.longTerm.search({ text: "peanuts", fields: ["id", "id"] }), "invalid_input");
});
