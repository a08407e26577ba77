// Issue 11 through `wrangler dev` (the Worker as `make demo` serves it), in
// one run, with the in-process comparisons beside it:
//   1. write-to-delivery latency p50/p99 to 1, 10 and 100 WebSocket subscribers;
//   2. bytes on the wire per change, against a whole-state broadcast of the
//      same session (what the Agents SDK's setState sends on every change);
//   3. 1,000 concurrent gets of one cold service key: upstream calls made;
//   4. a cached get in-process (npm `memory.services.get`) beside
//      `lru-cache` with a TTL in plain JS;
//   5. a portfolio snapshot of 6 services, one slow (500 ms), one failing.
//
//   make build && node benches/live.mjs
//   LIVE_WRITES=500 node benches/live.mjs
//
// "Write to delivery": from just before the PUT is sent to the moment the
// last subscriber has the event. The event leaves the Durable Object once
// the write is durable, before the HTTP answer, so this bounds the
// commit-to-delivery latency from above; the PUT's own round trip is shown
// beside it.
import { createServer } from "node:http";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import WebSocket from "ws";
import { LRUCache } from "lru-cache";
import { Memory } from "edgemem";
import { startWranglerDev } from "../tests/e2e/wrangler-dev.mjs";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const WRITES = Number(process.env.LIVE_WRITES ?? 200);
const CACHED_GETS = Number(process.env.LIVE_CACHED_GETS ?? 20_000);

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];
const ms = (x) => x.toFixed(2);

/** A fake upstream: per service `{delayMs, status}`; counts calls. */
async function upstream(plan) {
  const calls = {};
  const server = createServer((req, res) => {
    const service = new URL(req.url, "http://x").pathname.split("/")[1];
    calls[service] = (calls[service] ?? 0) + 1;
    const p = plan[service] ?? { status: 404 };
    setTimeout(() => {
      res.writeHead(p.status ?? 200, { "content-type": "application/json" });
      res.end(JSON.stringify({ balances: { USDC: "1.000001" }, service }));
    }, p.delayMs ?? 0);
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return { base: `http://127.0.0.1:${server.address().port}`, calls, close: () => new Promise((r) => server.close(r)) };
}

function subscribe(base, namespace) {
  const ws = new WebSocket(`${base.replace(/^http/, "ws")}v1/events?namespace=${namespace}`);
  const sub = { ws, onEvent: null, bytes: 0, events: 0 };
  ws.on("message", (data) => {
    const text = String(data);
    const e = JSON.parse(text);
    sub.bytes += Buffer.byteLength(text);
    sub.events++;
    ws.send(JSON.stringify({ ack: e.seq }));
    sub.onEvent?.(e);
  });
  return new Promise((resolve, reject) => {
    ws.once("open", () => resolve(sub));
    ws.once("error", reject);
  });
}

/** A session the size an agent's is after a short conversation. */
function session(i) {
  const messages = Array.from({ length: 20 }, (_, k) => ({ role: k % 2 ? "assistant" : "user", content: `turn ${k}: ${"the agent and the user talk about the plan ".repeat(3)}` }));
  return JSON.stringify({ messages, data: { step: i, budget: "125.50", cart: ["a", "b", "c"] } });
}

async function fanOut(base, n) {
  const namespace = `bench-live-${n}-${Date.now()}`;
  const subs = await Promise.all(Array.from({ length: n }, () => subscribe(base, namespace)));
  const latencies = [];
  const rtts = [];
  let stateBytes = 0;
  for (let i = 0; i < WRITES; i++) {
    let waiting = n;
    let done;
    const delivered = new Promise((r) => (done = r));
    for (const s of subs) s.onEvent = () => --waiting === 0 && done();
    const t0 = performance.now();
    const res = await fetch(`${base}v1/working-memory/chat?namespace=${namespace}`, { method: "PUT", headers: { "content-type": "application/json" }, body: session(i) });
    const body = await res.text();
    rtts.push(performance.now() - t0);
    stateBytes += Buffer.byteLength(body);
    await delivered;
    latencies.push(performance.now() - t0);
  }
  for (const s of subs) s.ws.close();
  latencies.sort((a, b) => a - b);
  rtts.sort((a, b) => a - b);
  return { n, p50: pct(latencies, 50), p99: pct(latencies, 99), rtt50: pct(rtts, 50), eventBytes: subs[0].bytes / subs[0].events, stateBytes: stateBytes / WRITES };
}

async function main() {
  const up = await upstream({
    wallet: { delayMs: 50 },
    casino: { delayMs: 20 },
    trading: { delayMs: 20 },
    domains: { delayMs: 20 },
    faucet: { status: 503 },
    escrow: { delayMs: 500 },
  });
  const server = await startWranglerDev(ROOT, { vars: { EDGEMEM_SERVICES_URL: up.base, EDGEMEM_SERVICES_TIMEOUT_MS: "5000" } });
  try {
    const base = server.url;
    console.log(`wrangler dev at ${base}; ${WRITES} writes per row\n`);
    console.log("| subscribers | write→delivery p50 | p99 | PUT round trip p50 | bytes per event | whole-state broadcast | ratio |");
    console.log("|---:|---:|---:|---:|---:|---:|---:|");
    for (const n of [1, 10, 100]) {
      const r = await fanOut(base, n);
      console.log(`| ${n} | ${ms(r.p50)} ms | ${ms(r.p99)} ms | ${ms(r.rtt50)} ms | ${r.eventBytes.toFixed(0)} B | ${r.stateBytes.toFixed(0)} B | ${(r.stateBytes / r.eventBytes).toFixed(0)}× smaller |`);
    }

    const cold = await Promise.all(Array.from({ length: 1_000 }, () => fetch(`${base}v1/services/wallet/state?agent_id=bench&namespace=bench-cache`).then((r) => r.status)));
    console.log(`\n1,000 concurrent gets of one cold key: ${cold.filter((s) => s === 200).length} answered 200, ${up.calls.wallet} upstream call(s)`);

    // Each run a new agent, so every service is a cold read through the upstream.
    const times = [];
    let snap;
    for (let k = 0; k < 5; k++) {
      const t0 = performance.now();
      snap = await (await fetch(`${base}v1/services/snapshot?agent_id=bench-snap-${k}&namespace=bench-snap`)).json();
      times.push(performance.now() - t0);
    }
    console.log(`snapshot of 6 cold services (wallet 50 ms, three at 20 ms, escrow 500 ms, faucet 503), 5 runs: ${times.map(ms).join(", ")} ms; ${snap.ok} states, ${snap.failed} error (${Object.entries(snap.services).filter(([, v]) => v.error).map(([k, v]) => `${k}: ${v.error.code}`).join(", ")}), totals ${JSON.stringify(snap.totals)}`);
  } finally {
    await server.stop();
    await up.close();
  }

  // In process: a cached (fresh) get through the npm package beside lru-cache.
  const memory = await Memory.open({ serviceFetcher: async () => ({ balances: { USDC: "1.000001" } }) });
  await memory.services.get("agent", "wallet");
  const lru = new LRUCache({ max: 10_000, ttl: 60_000 });
  lru.set("agent/wallet", { balances: { USDC: "1.000001" } });
  const timeIt = async (fn) => {
    for (let i = 0; i < 1_000; i++) await fn();
    const t = performance.now();
    for (let i = 0; i < CACHED_GETS; i++) await fn();
    return (performance.now() - t) / CACHED_GETS;
  };
  const ours = await timeIt(() => memory.services.get("agent", "wallet"));
  const theirs = await timeIt(() => lru.get("agent/wallet"));
  console.log(`\ncached get, in process (${CACHED_GETS} gets): edgemem ${(ours * 1000).toFixed(2)} µs, lru-cache ${(theirs * 1000).toFixed(3)} µs: edgemem takes ${(ours / theirs).toFixed(0)}× as long`);
  memory.free();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
