// The change feed across a restart of `wrangler dev` itself (issue 11):
// follow over a WebSocket, write, stop the runtime mid-stream, start it
// again on the same persisted state, write more, resume with `since`:
// nothing missing, nothing twice.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import WebSocket from "ws";
import { startWranglerDev } from "../e2e/wrangler-dev.mjs";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

function follow(base, query) {
  const ws = new WebSocket(`${base.replace(/^http/, "ws")}v1/events?${query}`);
  const seqs = [];
  ws.on("message", (d) => {
    const e = JSON.parse(String(d));
    seqs.push(e.seq);
    ws.send(JSON.stringify({ ack: e.seq }));
  });
  const closed = new Promise((r) => ws.once("close", r));
  return new Promise((resolve, reject) => {
    ws.once("open", () => resolve({ ws, seqs, closed }));
    ws.once("error", reject);
  });
}

async function until(pred, what) {
  const deadline = Date.now() + 15_000;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const put = (base, i) => fetch(`${base}v1/working-memory/w${i % 3}?namespace=restart`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ data: { i } }) }).then((r) => assert.equal(r.status, 200));

test("a restart of wrangler dev in the middle, then a resume with since", { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "edgemem-restart-"));
  let server = await startWranglerDev(ROOT, { persistDir: dir });
  try {
    const first = await follow(server.url, "namespace=restart&since=0");
    for (let i = 0; i < 8; i++) await put(server.url, i);
    await until(() => first.seqs.length >= 8, "8 events");
    await server.stop();
    await first.closed;
    server = await startWranglerDev(ROOT, { persistDir: dir });
    for (let i = 8; i < 12; i++) await put(server.url, i);
    const second = await follow(server.url, `namespace=restart&since=${first.seqs.at(-1)}`);
    await put(server.url, 12);
    await until(() => second.seqs.length >= 5, "the writes after the restart");
    assert.deepEqual([...first.seqs, ...second.seqs], Array.from({ length: 13 }, (_, i) => i + 1));
    second.ws.close();
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
