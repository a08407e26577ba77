// The cost of auth and rate limiting per request (issue 12): the same
// requests against the built Worker in Miniflare (workerd), once in local
// dev mode (no auth) and once with a tenant key (verified and rate-limited
// by the key directory object on every request), side by side in one run.
//
//   node benches/auth.mjs [requests]       (after `make worker`)
import { startWorker } from "../tests/worker/miniflare.mjs";

const N = Number(process.argv[2] ?? 2000);
const ADMIN = "bench-admin-" + "a".repeat(32);

function quantile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

async function measure(call, headers, label) {
  const ns = "?namespace=bench";
  await call("PUT", `/v1/working-memory/s${ns}`, { context: "warm" }, headers);
  const kinds = [
    ["GET session", () => call("GET", `/v1/working-memory/s${ns}`, undefined, headers)],
    ["PUT session", () => call("PUT", `/v1/working-memory/s${ns}`, { context: "x" }, headers)],
  ];
  const out = {};
  for (const [name, run] of kinds) {
    for (let i = 0; i < 200; i++) await run(); // warm-up
    const times = [];
    for (let i = 0; i < N; i++) {
      const t = performance.now();
      const r = await run();
      times.push(performance.now() - t);
      if (r.status !== 200) throw new Error(`${label} ${name}: ${r.status} ${r.text}`);
    }
    times.sort((a, b) => a - b);
    out[name] = { p50: quantile(times, 0.5), p99: quantile(times, 0.99), mean: times.reduce((a, b) => a + b, 0) / N };
  }
  return out;
}

const open = await startWorker();
const secured = await startWorker({ bindings: { EDGEMEM_ADMIN_TOKEN: ADMIN, EDGEMEM_RATE_PER_SECOND: "10000", EDGEMEM_RATE_BURST: "20000" } });
try {
  const k = await secured.call("POST", "/v1/admin/keys", { namespace: "bench", scopes: ["read", "write"] }, { authorization: `Bearer ${ADMIN}` });
  if (k.status !== 200) throw new Error(k.text);
  const keyed = { authorization: `Bearer ${k.json.key}` };
  // Alternate the two so drift in the machine's load hits both alike.
  const a1 = await measure(open.call, {}, "dev");
  const b1 = await measure(secured.call, keyed, "key");
  const a2 = await measure(open.call, {}, "dev");
  const b2 = await measure(secured.call, keyed, "key");
  console.log(`auth overhead, ${N} sequential requests each, Miniflare (workerd), node ${process.version}`);
  console.log("| request | no auth p50 / mean ms | key + rate limit p50 / mean ms | overhead (mean) |");
  console.log("|---|---:|---:|---:|");
  for (const name of Object.keys(a1)) {
    const a = { p50: (a1[name].p50 + a2[name].p50) / 2, mean: (a1[name].mean + a2[name].mean) / 2 };
    const b = { p50: (b1[name].p50 + b2[name].p50) / 2, mean: (b1[name].mean + b2[name].mean) / 2 };
    console.log(`| ${name} | ${a.p50.toFixed(3)} / ${a.mean.toFixed(3)} | ${b.p50.toFixed(3)} / ${b.mean.toFixed(3)} | +${(b.mean - a.mean).toFixed(3)} ms (${(b.mean / a.mean).toFixed(2)}×) |`);
  }
} finally {
  await open.mf.dispose();
  await secured.mf.dispose();
}
