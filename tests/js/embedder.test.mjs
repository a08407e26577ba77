// The offline embedders and embedder identity through the package (issue
// 14, point 7): the distilled static embedder is the default and finds a
// paraphrase; vectors of two embedders never mix (embedder_mismatch); the
// re-embed path moves a namespace; caller vectors keep working.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Memory, MemoryStore } from "edgemem";

// The five memories of the first-run trial.
const MEMORIES = [
  { id: "paris", text: "User visited Paris in March 2024 for a conference." },
  { id: "peanuts", text: "User is allergic to peanuts." },
  { id: "units", text: "User prefers metric units for all measurements." },
  { id: "cello", text: "User's daughter Maya plays the cello." },
  { id: "job", text: "User works as a backend engineer at a logistics startup." },
];
const QUERY = "what units does the user like?";

const ids = (r) => r.memories.map((m) => m.id);

test("with no option, semantic search ranks the paraphrased answer first", async () => {
  const memory = await Memory.open();
  await memory.longTerm.create(MEMORIES);
  const r = await memory.longTerm.search({ text: QUERY, limit: 5 });
  assert.equal(r.memories[0].id, "units", JSON.stringify(ids(r)));
  const stats = await memory.request("GET", "/v1/stats");
  // The mixed default: the static model and the hashed embedder, with the weight.
  assert.match(stats.embedder, /^edgemem-minilm-static-v\d+-192d\+edgemem-hash-v1\/384@0\.\d+$/);
  memory.free();
});

test("the hashed embedder, asked for, is the one the issue measured: it misses the paraphrase", async () => {
  const memory = await Memory.open({ offlineEmbedder: "hash" });
  await memory.longTerm.create(MEMORIES);
  const r = await memory.longTerm.search({ text: QUERY, limit: 5, mode: "semantic" });
  assert.notEqual(r.memories[0].id, "units", "if the hashed embedder now finds it, the test no longer shows the difference");
  // Which is why the default (auto) runs keyword search over hashed vectors.
  const auto = await memory.longTerm.search({ text: QUERY, limit: 5 });
  assert.equal(auto.search_mode, "keyword");
  assert.equal((await memory.request("GET", "/v1/stats")).embedder, "edgemem-hash-v1/384");
  memory.free();
  await assert.rejects(Memory.open({ offlineEmbedder: "bert" }), (e) => e.code === "invalid_input");
});

test("another embedder's vectors are refused with embedder_mismatch, and reembed moves the namespace", async () => {
  const store = new MemoryStore();
  const hashed = await Memory.open({ store, offlineEmbedder: "hash" });
  await hashed.longTerm.create(MEMORIES);
  hashed.free();

  const memory = await Memory.open({ store });
  for (const attempt of [
    () => memory.longTerm.search({ text: QUERY, mode: "semantic" }),
    () => memory.longTerm.search({ text: QUERY, mode: "hybrid" }),
    () => memory.longTerm.create([{ id: "tea", text: "User drinks green tea." }]),
    () => memory.longTerm.edit("paris", { text: "User visited Paris twice." }),
  ]) {
    await assert.rejects(attempt(), (e) => e.code === "embedder_mismatch" && /reembed/.test(e.message));
  }
  // Keyword search needs no vectors and still works; auto falls back to it.
  assert.equal(ids(await memory.longTerm.search({ text: "peanuts", mode: "keyword" }))[0], "peanuts");
  const auto = await memory.longTerm.search({ text: "peanuts" });
  assert.equal(ids(auto)[0], "peanuts");
  assert.equal(auto.search_mode, "keyword");
  const moved = await memory.longTerm.reembed();
  assert.match(moved.embedder, /^edgemem-minilm-static-v\d+-192d\+edgemem-hash-v1\/384@/);
  assert.deepEqual({ ...moved, embedder: "" }, { embedder: "", previous: "edgemem-hash-v1/384", reembedded: 5, remaining: 0, done: true });
  assert.equal((await memory.longTerm.search({ text: QUERY, limit: 5 })).memories[0].id, "units");
  // Nothing left to move: a second call is a no-op.
  assert.equal((await memory.longTerm.reembed()).reembedded, 0);
  memory.free();
});

test("a named hook's vectors do not mix with another hook's", async () => {
  const store = new MemoryStore();
  const oneHot = (i) => async (texts) => texts.map(() => Float32Array.from({ length: 8 }, (_, j) => (j === i ? 1 : 0.1)));
  const a = await Memory.open({ store, embedder: oneHot(1), embedderName: "model-a" });
  await a.longTerm.create([{ id: "x", text: "anything" }]);
  a.free();
  const b = await Memory.open({ store, embedder: oneHot(2), embedderName: "model-b" });
  await assert.rejects(b.longTerm.create([{ id: "y", text: "else" }]), (e) => e.code === "embedder_mismatch" && e.message.includes("model-a"));
  const moved = await b.longTerm.reembed();
  assert.deepEqual([moved.embedder, moved.previous, moved.done], ["model-b", "model-a", true]);
  await b.longTerm.create([{ id: "y", text: "else" }]);
  b.free();
  await assert.rejects(Memory.open({ embedder: oneHot(1), embedderName: "has space" }), (e) => e.code === "invalid_input");
});

test("caller vectors are held to the width only, and search with them keeps working", async () => {
  const memory = await Memory.open();
  const v = (i) => Float32Array.from({ length: 16 }, (_, j) => (j === i ? 1 : 0.05));
  await memory.longTerm.create([{ id: "a", text: "alpha" }, { id: "b", text: "beta" }], { vectors: [v(1), v(2)] });
  assert.deepEqual(ids(await memory.longTerm.search({ text: "x", vector: v(2), limit: 1 })), ["b"]);
  memory.free();
});
