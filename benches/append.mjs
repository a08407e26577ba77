// Cost of `memory.appendMessages` of one turn against the session's length
// (issue 16: an append answers only what it added, so its cost stays flat as
// the conversation grows). In-process in Node, on the built package, with a
// MemoryStore (the op-log write included; snapshots at the default interval).
//
//   make pkg && node benches/append.mjs
//   APPEND_CALLS=2000 node benches/append.mjs
import { performance } from "node:perf_hooks";
import { Memory, MemoryStore } from "edgemem";

const CALLS = Number(process.env.APPEND_CALLS ?? 1_000);
const LENGTHS = [50, 500, 2_000, 5_000];

function quantile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** A turn of about 60 words, different each call. */
function turn(i) {
  const words = [];
  for (let w = 0; w < 60; w++) words.push(["route", "Lisbon", "fare", "window", "seat", "budget", "1,250.00", "EUR", "Friday"][(i * 7 + w) % 9]);
  return { role: i % 2 ? "assistant" : "user", content: `turn ${i}: ${words.join(" ")}` };
}

const rows = [];
for (const length of LENGTHS) {
  const memory = await Memory.open({ store: new MemoryStore() });
  const history = Array.from({ length }, (_, i) => turn(i));
  // Built in appends of 500 turns: a whole 5,000-turn session is over the
  // 1 MiB body cap of one put.
  const fill = async () => {
    await memory.deleteSession("s");
    await memory.getOrCreateSession("s");
    for (let i = 0; i < history.length; i += 500) await memory.appendMessages("s", history.slice(i, i + 500));
  };
  await fill();
  // The session grows by CALLS turns while it is timed; it is reset (untimed)
  // so that it stays within 10 % of its nominal length.
  const resetEvery = Math.max(1, Math.floor(length / 10));
  const times = [];
  for (let i = 0; i < CALLS; i++) {
    if (i > 0 && i % resetEvery === 0) await fill();
    const t0 = performance.now();
    await memory.appendMessages("s", [turn(length + i)]);
    times.push(performance.now() - t0);
  }
  // What every append cost its caller before it answered only what it
  // added: the whole session built, crossed and parsed (as getSession does).
  await fill();
  const whole = [];
  for (let i = 0; i < Math.min(CALLS, 200); i++) {
    const t0 = performance.now();
    await memory.getSession("s");
    whole.push(performance.now() - t0);
  }
  memory.free();
  times.sort((a, b) => a - b);
  whole.sort((a, b) => a - b);
  rows.push({ length, p50: quantile(times, 0.5), p90: quantile(times, 0.9), p99: quantile(times, 0.99), whole: quantile(whole, 0.5) });
}

console.log(`appendMessages of one turn, ${CALLS} calls per length, Node ${process.version}`);
console.log("| session length (turns) | p50 ms | p90 ms | p99 ms | p50 / p50 at 50 turns | whole session as an answer (getSession p50 ms) |");
console.log("|---:|---:|---:|---:|---:|---:|");
for (const r of rows) {
  console.log(`| ${r.length} | ${r.p50.toFixed(3)} | ${r.p90.toFixed(3)} | ${r.p99.toFixed(3)} | ${(r.p50 / rows[0].p50).toFixed(2)} | ${r.whole.toFixed(3)} |`);
}
