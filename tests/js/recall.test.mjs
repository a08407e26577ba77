// Recall on conversations through the package (issue 19): dialog turns
// stored as ordinary records with no option set get the new defaults (auto
// mode, the natural analyzer), time expressions are read and shown,
// neighbouring turns come back with `expand`, speaker is a filter, and a date
// written in a turn becomes its event_date.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Memory } from "edgemem";

const TURNS = [
  ["s1", "2023-03-02T12:00:00Z", "Ana", "I adopted a puppy called Tofu last week."],
  ["s1", "2023-03-02T12:00:00Z", "assistant", "Congratulations! How is the little one settling in?"],
  ["s1", "2023-03-02T12:00:00Z", "Ana", "Yes, really well, though he chews my shoes."],
  ["s2", "2023-05-20T12:00:00Z", "Ana", "We moved to Lisbon on 7 May 2023."],
  ["s2", "2023-05-20T12:00:00Z", "assistant", "That is a big change. How are the trams?"],
  ["s2", "2023-05-20T12:00:00Z", "Ben", "Ana's brother Ben here: I'm running the Porto marathon."],
];

async function dialog() {
  const memory = await Memory.open();
  const records = TURNS.map(([session_id, created_at, speaker, text], i) => ({ id: `t${i}`, text, session_id, created_at, metadata: { speaker, turn: i } }));
  const r = await memory.longTerm.create(records);
  assert.equal(r.created.length, TURNS.length);
  return memory;
}
const ids = (r) => r.memories.map((m) => m.id);

test("a search with no option runs auto (hybrid over the offline embedder) and says so", async () => {
  const memory = await dialog();
  const r = await memory.longTerm.search({ text: "Who is running a marathon?" });
  assert.equal(r.search_mode, "hybrid");
  assert.equal(r.memories[0].id, "t5", JSON.stringify(ids(r)));
  assert.equal(r.memories[0].score_type, "hybrid");
  assert.deepEqual(r.time_query, []);
  // The analyzer stems English: "moving" finds "moved".
  const k = await memory.longTerm.search({ text: "moving", mode: "keyword" });
  assert.equal(k.memories[0].id, "t3");
  // An explicit mode is still exactly that mode.
  assert.equal((await memory.longTerm.search({ text: "Lisbon", mode: "semantic" })).search_mode, "semantic");
  await assert.rejects(memory.longTerm.search({ text: "x", mode: "fuzzy" }), (e) => e.code === "invalid_input");
  memory.free();
});

test("a time expression is read against referenceTime, shown, and favours its window", async () => {
  const memory = await dialog();
  const r = await memory.longTerm.search({ text: "what happened in May 2023", mode: "keyword", referenceTime: "2024-01-10T09:00:00Z" });
  assert.equal(r.time_query.length, 1);
  assert.deepEqual({ ...r.time_query[0] }, { text: "in May 2023", from: "2023-05-01T00:00:00.000Z", to: "2023-06-01T00:00:00.000Z", grain: "month", reference_time: "2024-01-10T09:00:00.000Z", tz_offset_minutes: 0 });
  // "yesterday" against a reference in UTC+13 just after local midnight.
  const y = await memory.longTerm.search({ text: "yesterday", mode: "keyword", referenceTime: "2024-01-10T11:30:00Z", tz: "+13:00" });
  assert.deepEqual([y.time_query[0].from, y.time_query[0].to], ["2024-01-09T11:00:00.000Z", "2024-01-10T11:00:00.000Z"]);
  // Unreadable: ignored, not an error.
  assert.deepEqual((await memory.longTerm.search({ text: "before the trip", mode: "keyword" })).time_query, []);
  await assert.rejects(memory.longTerm.search({ text: "x", tz: "Europe/Lisbon" }), (e) => e.code === "invalid_input" && /tz/.test(e.message));
  memory.free();
});

test("expand brings each hit's neighbouring turns, speaker filters, dates in text become event_date", async () => {
  const memory = await dialog();
  const r = await memory.longTerm.search({ text: "puppy Tofu", mode: "keyword", limit: 1, expand: 1 });
  assert.deepEqual(ids(r), ["t0"]);
  assert.deepEqual(r.memories[0].context.map((m) => m.id), ["t1"]);
  const b = await memory.longTerm.search({ text: "Lisbon marathon", mode: "keyword", speaker: { eq: "Ben" } });
  assert.deepEqual(ids(b), ["t5"]);
  assert.equal((await memory.longTerm.get("t3")).event_date, "2023-05-07T00:00:00.000Z");
  assert.equal((await memory.longTerm.get("t0")).event_date, null);
  await assert.rejects(memory.longTerm.search({ text: "x", expand: 9 }), (e) => e.code === "invalid_input");
  memory.free();
});
