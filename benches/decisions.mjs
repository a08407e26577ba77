// Cost of one `memory.decisions.append` against the length of the session's
// decision log (issue 13: an append is O(1), so it must stay flat from the
// first entry to the 10,000th). In-process in Node, on the built package,
// with a MemoryStore (the op-log write included; snapshots at the default
// interval of 1,000 ops, so the snapshot cost shows in p99, not p50).
//
//   make pkg && node benches/decisions.mjs
//   DECISIONS=20000 node benches/decisions.mjs
import { performance } from "node:perf_hooks";
import { Memory, MemoryStore } from "edgemem";

const TOTAL = Number(process.env.DECISIONS ?? 10_000);
const BUCKET = 1_000;
const KINDS = ["observation", "reasoning", "decision", "action", "offer", "error"];

function quantile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

const memory = await Memory.open({ store: new MemoryStore() });
await memory.putSession("deal", { messages: [] });
const rows = [];
let times = [];
for (let i = 0; i < TOTAL; i++) {
  const entry = { kind: KINDS[i % KINDS.length], text: `step ${i}: countered at ${90 + (i % 10)}.00 USDC, floor 95.00`, refs: { tool_call_id: `call_${i}` } };
  const t0 = performance.now();
  await memory.decisions.append("deal", entry);
  times.push(performance.now() - t0);
  if ((i + 1) % BUCKET === 0) {
    times.sort((a, b) => a - b);
    rows.push({ entries: i + 1, p50_us: Math.round(quantile(times, 0.5) * 1000), p99_us: Math.round(quantile(times, 0.99) * 1000) });
    times = [];
  }
}
const page = await memory.decisions.list("deal", { since: TOTAL - 10 });
if (page.entries.length !== 10 || page.last_seq !== TOTAL) throw new Error("the log does not hold what was appended");
console.log(`decision log append, one session, ${TOTAL} entries (node ${process.version})`);
console.table(rows);
const first = rows[0].p50_us;
const last = rows[rows.length - 1].p50_us;
console.log(`p50 at the last ${BUCKET} / p50 at the first ${BUCKET}: ${(last / first).toFixed(2)}×`);
