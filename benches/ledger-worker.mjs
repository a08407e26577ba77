// Transfers per second through the local Worker to one tenant's Durable
// Object (Miniflare/workerd on 127.0.0.1, SQLite storage on disk): every
// acknowledged request has its op-log record written.
//
//   node benches/ledger-worker.mjs      (after `make worker`)
import { performance } from "node:perf_hooks";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startWorker } from "../tests/worker/miniflare.mjs";

const SINGLE_N = Number(process.env.WORKER_SINGLE_N ?? 2_000);
const CONCURRENCY = Number(process.env.WORKER_CONCURRENCY ?? 16);
const BATCH = 100;
const BATCHES = Number(process.env.WORKER_BATCHES ?? 50);
const NS = "?namespace=bench";

const dir = mkdtempSync(join(tmpdir(), "edgemem-bench-"));
const { mf, call } = await startWorker({ persistDir: dir });
try {
  await call("POST", `/v1/ledger/assets${NS}`, { code: "USDC", scale: 6 });
  for (const id of ["a", "b"]) await call("POST", `/v1/ledger/accounts${NS}`, { id, asset: "USDC" });
  const send = async (transfers) => {
    const r = await call("POST", `/v1/ledger/transfers${NS}`, { transfers });
    if (r.status !== 200 || r.json.results.some((x) => x.result !== "created")) throw new Error(r.text);
  };
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < SINGLE_N) {
        const i = next++;
        await send([{ id: `s${i}`, debit_account: "a", credit_account: "b", amount: "1.000001" }]);
      }
    }),
  );
  const singleS = (performance.now() - t0) / 1000;
  const t1 = performance.now();
  for (let k = 0; k < BATCHES; k++) {
    await send(Array.from({ length: BATCH }, (_, j) => ({ id: `b${k}-${j}`, debit_account: "a", credit_account: "b", amount: "0.5" })));
  }
  const batchS = (performance.now() - t1) / 1000;
  const rec = (await call("POST", `/v1/ledger/reconcile${NS}`, {})).json;
  if (!rec.ok) throw new Error("books do not balance");
  console.log(`worker ledger benchmark: node ${process.version}, miniflare (workerd) on 127.0.0.1, SQLite-backed Durable Object on disk\n`);
  console.log("| workload | transfers | seconds | transfers/s |");
  console.log("|---|---:|---:|---:|");
  console.log(`| 1 transfer per request, ${CONCURRENCY} in flight | ${SINGLE_N} | ${singleS.toFixed(2)} | ${Math.round(SINGLE_N / singleS).toLocaleString("en")} |`);
  console.log(`| ${BATCH} transfers per request, sequential | ${BATCH * BATCHES} | ${batchS.toFixed(2)} | ${Math.round((BATCH * BATCHES) / batchS).toLocaleString("en")} |`);
} finally {
  await mf.dispose();
  rmSync(dir, { recursive: true, force: true });
}
