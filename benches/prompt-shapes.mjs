// What `memory.prompt()` costs in each answer shape (issue 16, point 3):
// `as: "object"` (messages built, crossed as JSON and parsed), `"bytes"`
// (the same JSON as UTF-8, never parsed in JS) and `"plan"` (no messages:
// the kept turns' ids, the summary, the report). In Node on the built
// package, over a 500-turn session whose whole history fits a 128K window
// (gpt-4o, exact o200k counts) and a 200K window (the estimator).
//
//   make pkg && node benches/prompt-shapes.mjs      # SHAPES_CALLS=500
import { performance } from "node:perf_hooks";
import { Memory, MemoryStore } from "edgemem";

const CALLS = Number(process.env.SHAPES_CALLS ?? 300);
const TURNS = 500;
const WORDS = "the parcel ships from Denver to Lisbon on Friday and the customer asked whether express delivery is possible within budget".split(" ");

/** Deterministic prose of `n` words. */
function prose(seed, n) {
  const out = [];
  for (let i = 0; i < n; i++) out.push(WORDS[(seed * 31 + i * 7) % WORDS.length]);
  return out.join(" ");
}

const memory = await Memory.open({ store: new MemoryStore() });
await memory.getOrCreateSession("s");
const turns = Array.from({ length: TURNS }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: `${i}: ${prose(i, 40 + (i % 5) * 40)}` }));
for (let i = 0; i < TURNS; i += 100) await memory.appendMessages("s", turns.slice(i, i + 100));

async function time(request) {
  const t = [];
  for (let i = 0; i < CALLS; i++) {
    const t0 = performance.now();
    await memory.prompt(request);
    t.push(performance.now() - t0);
  }
  t.sort((a, b) => a - b);
  return t[Math.floor(t.length / 2)];
}

const rows = [];
for (const [label, base] of [
  ["gpt-4o, 128K, exact", { model: "gpt-4o", sessionId: "s", query: "Where is the parcel?" }],
  ["200K window, estimator", { model: "claude-sonnet-4", sessionId: "s", query: "Where is the parcel?" }],
]) {
  await memory.prompt(base); // loads the encoding, warms up
  const kept = (await memory.prompt({ ...base, as: "plan" })).turns_kept;
  const answer = (await memory.prompt({ ...base, as: "bytes" })).length;
  rows.push({ label, kept, answer, object: await time(base), bytes: await time({ ...base, as: "bytes" }), plan: await time({ ...base, as: "plan" }) });
}
console.log(`prompt() over ${TURNS} turns, ${CALLS} calls per cell, Node ${process.version}`);
console.log("| window | turns kept | answer bytes | object p50 ms | bytes p50 ms | plan p50 ms | object / plan |");
console.log("|---|---:|---:|---:|---:|---:|---:|");
for (const r of rows) {
  console.log(`| ${r.label} | ${r.kept} | ${r.answer} | ${r.object.toFixed(3)} | ${r.bytes.toFixed(3)} | ${r.plan.toFixed(3)} | ${(r.object / r.plan).toFixed(2)} |`);
}
