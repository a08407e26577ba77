// The change feed in the npm package (issue 11), in one process: commit-to-
// delivery latency to 1, 10 and 100 subscribers, and the bytes an event
// takes against a whole-state broadcast of the same session (what the
// Cloudflare Agents SDK's setState sends on every change).
//
//   make pkg && node benches/feed.mjs
//   FEED_WRITES=2000 node benches/feed.mjs
//
// "Commit to delivery": from just before `appendMessages` is called to the
// moment the last subscriber's handler runs; the append resolves after its
// log record is durable (the in-memory store here), so this includes the
// write itself. Through the Worker (WebSocket) is not measured: that
// transport is not built yet.
import { performance } from "node:perf_hooks";
import { Memory } from "edgemem";

const WRITES = Number(process.env.FEED_WRITES ?? 1_000);

function pct(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];
}

async function run(subscribers) {
  const m = await Memory.open();
  await m.putSession("chat", { messages: [] });
  let pending = null;
  let heard = 0;
  const latencies = [];
  let eventBytes = 0;
  let stateBytes = 0;
  for (let s = 0; s < subscribers; s++) {
    m.subscribe({ kinds: ["working_memory.appended"] }, (e) => {
      if (s === 0) eventBytes += JSON.stringify(e).length;
      if (++heard === subscribers && pending) {
        latencies.push(performance.now() - pending);
        pending = null;
      }
    });
  }
  for (let i = 0; i < WRITES; i++) {
    heard = 0;
    const t0 = performance.now();
    pending = t0;
    await m.appendMessages("chat", [{ role: i % 2 ? "assistant" : "user", content: `turn ${i}: ${"word ".repeat(20 + (i % 40))}` }]);
    // Let the microtask that delivers run.
    await new Promise((resolve) => setImmediate(resolve));
    if (i % 10 === 0) stateBytes += JSON.stringify(await m.getSession("chat")).length * 10;
  }
  latencies.sort((a, b) => a - b);
  return {
    subscribers,
    delivered: latencies.length,
    p50_ms: +pct(latencies, 50).toFixed(3),
    p99_ms: +pct(latencies, 99).toFixed(3),
    event_bytes: Math.round(eventBytes / WRITES),
    whole_state_bytes: Math.round(stateBytes / WRITES),
  };
}

const rows = [];
for (const n of [1, 10, 100]) rows.push(await run(n));
console.log(`change feed, npm in-process: node ${process.version}, ${WRITES} appends to one session per row\n`);
console.log("| subscribers | delivered | commit→delivery p50 (ms) | p99 (ms) | bytes per event | whole-state broadcast (bytes, mean over the run) | ratio |");
console.log("|---:|---:|---:|---:|---:|---:|---:|");
for (const r of rows) {
  console.log(`| ${r.subscribers} | ${r.delivered} | ${r.p50_ms} | ${r.p99_ms} | ${r.event_bytes} | ${r.whole_state_bytes} | ${(r.whole_state_bytes / r.event_bytes).toFixed(0)}× |`);
}
