// Background extraction through the package (issue 14): the debounced
// queue after working-memory writes, `flushExtraction`, the extractor hook,
// retries of a failing hook, and the offline default.
import { test } from "node:test";
import assert from "node:assert/strict";
import { LIMITS, Memory, MemoryStore } from "edgemem";

const STRATEGY = { strategy: "discrete", config: {} };

/** Every extracted memory: each says "User ...". */
async function all(memory) {
  return (await memory.longTerm.search({ text: "user", mode: "keyword", limit: 100 })).memories;
}

test("a working-memory write is extracted in the background, after the debounce", async () => {
  const seen = [];
  const memory = await Memory.open({
    extractor: async (request) => {
      seen.push(request);
      return [{ text: "User prefers metric units.", kind: "preference", topics: ["units"], subject: "units" }];
    },
  });
  await memory.putSession("s1", { user_id: "ana", long_term_memory_strategy: STRATEGY, messages: [{ id: "m1", role: "user", content: "I prefer metric units." }] });
  assert.equal((await all(memory)).length, 0, "the write itself did not wait for the extractor");
  await new Promise((r) => setTimeout(r, LIMITS.EXTRACT_DEBOUNCE_MS + 1_000));
  const got = await all(memory);
  assert.deepEqual(got.map((m) => [m.text, m.user_id, m.session_id, m.extraction_strategy]), [["User prefers metric units.", "ana", "s1", "discrete"]]);
  assert.deepEqual(seen.map((r) => [r.strategy, r.turns.map((t) => t.id)]), [["discrete", ["m1"]]]);
  assert.deepEqual(got[0].extracted_from, ["m1"]);
  memory.free();
});

test("flushExtraction runs what waits now, exactly once, and survives a reopen", async () => {
  const store = new MemoryStore();
  let calls = 0;
  const extractor = async ({ turns }) => {
    calls++;
    return turns.filter((t) => t.role === "user").map((t) => ({ text: `User said: ${t.content}`, extracted_from: [t.id] }));
  };
  const memory = await Memory.open({ store, extractor });
  await memory.putSession("s1", { long_term_memory_strategy: STRATEGY, messages: [{ id: "a", role: "user", content: "my seat is 12A" }, { id: "b", role: "assistant", content: "ok" }] });
  assert.deepEqual(await memory.flushExtraction(), { sessions: 1, created: 1, duplicates: 0, superseded: 0, failed: 0, without_consent: 0 });
  assert.deepEqual(await memory.flushExtraction(), { sessions: 0, created: 0, duplicates: 0, superseded: 0, failed: 0, without_consent: 0 }, "nothing twice");
  memory.free();
  const again = await Memory.open({ store, extractor });
  assert.deepEqual((await again.flushExtraction()).sessions, 0, "the watermark is durable");
  await again.appendMessages("s1", [{ id: "c", role: "user", content: "my meal is vegan" }]);
  assert.equal((await again.flushExtraction()).created, 1);
  assert.deepEqual((await all(again)).map((m) => m.text).sort(), ["User said: my meal is vegan", "User said: my seat is 12A"]);
  assert.equal(calls, 2);
  again.free();
});

test("a failing extractor stores nothing, is retried, and surfaces as an episode", async () => {
  let fail = true;
  const memory = await Memory.open({
    extractor: async () => {
      if (fail) throw new Error("model overloaded");
      return [{ text: "User prefers aisle seats.", kind: "preference" }];
    },
  });
  await memory.putSession("s1", { long_term_memory_strategy: STRATEGY, messages: [{ id: "m1", role: "user", content: "aisle please" }] });
  for (let i = 0; i < LIMITS.EXTRACT_ATTEMPTS_MAX; i++) assert.equal((await memory.flushExtraction()).failed, 1);
  assert.equal((await all(memory)).length, 0);
  assert.equal((await memory.flushExtraction()).failed, 0, "given up until the session is written again");
  const episodes = await memory.episodes.recent(10, { agentId: "edgemem", kind: "extraction_failed" });
  assert.equal(episodes.length, 1);
  assert.equal(episodes[0].payload.session_id, "s1");
  assert.match(episodes[0].payload.error, /model overloaded/);
  fail = false;
  await memory.appendMessages("s1", [{ id: "m2", role: "user", content: "aisle, really" }]);
  assert.equal((await memory.flushExtraction()).created, 1);
  assert.deepEqual((await all(memory))[0].extracted_from, ["m1", "m2"], "no gap: the failed turns are in the pass");
  memory.free();
});

test("a bad answer from the extractor is a failed pass, not a half-stored one", async () => {
  const memory = await Memory.open({ extractor: async () => [{ text: "ok" }, { nope: 1 }] });
  await memory.putSession("s1", { long_term_memory_strategy: STRATEGY, messages: [{ id: "m1", role: "user", content: "hi" }] });
  assert.equal((await memory.flushExtraction()).failed, 1);
  assert.equal((await all(memory)).length, 0);
  await assert.rejects(Memory.open({ extractor: "not a function" }), { code: "invalid_input" });
  await assert.rejects(memory.putSession("s2", { long_term_memory_strategy: { strategy: "telepathy" } }), { code: "invalid_input" });
  memory.free();
});

test("with no hook the offline rules extract first-person statements", async () => {
  const memory = await Memory.open();
  await memory.putSession("s1", {
    user_id: "ana",
    long_term_memory_strategy: STRATEGY,
    messages: [
      { id: "m1", role: "user", content: "Hi there!" },
      { id: "m2", role: "user", content: "I prefer metric units." },
      { id: "m3", role: "assistant", content: "Sure, I will use metric units." },
    ],
  });
  await memory.flushExtraction();
  const got = await all(memory);
  assert.ok(got.some((m) => /metric units/i.test(m.text) && m.extracted_from.includes("m2")), JSON.stringify(got));
  assert.ok(!got.some((m) => /hi there/i.test(m.text)), "chatter makes no memory");
  memory.free();
});

test("a contradicting preference supersedes the old one, which stays readable by id", async () => {
  const memory = await Memory.open();
  await memory.putSession("s1", { user_id: "ana", long_term_memory_strategy: { strategy: "preferences" }, messages: [{ id: "m1", role: "user", content: "I prefer window seats." }] });
  await memory.flushExtraction();
  const [old] = await all(memory);
  assert.equal(old.metadata.subject, "seat", JSON.stringify(old));
  await memory.appendMessages("s1", [{ id: "m2", role: "user", content: "On second thought, I prefer aisle seats." }]);
  const r = await memory.flushExtraction();
  assert.equal(r.superseded, 1, JSON.stringify(r));
  assert.deepEqual((await all(memory)).map((m) => m.extracted_from), [["m2"]], "search finds only the current preference");
  assert.equal((await memory.longTerm.get(old.id)).metadata.superseded_by, (await all(memory))[0].id);
  memory.free();
});
