// Facts over time through the Worker (issue 20): writers racing on one
// fact_key over HTTP agree on the current fact, and so does the object
// replayed from storage after a restart; as_of and include_superseded; an
// idempotent batch retry; explain on hits.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startWorker } from "./miniflare.mjs";

const Q = "?namespace=facts";
const WRITERS = 12;

/** Version i of the address, valid from day i of 2025 (shuffled arrival). */
function version(i) {
  const day = String(i + 1).padStart(2, "0");
  return { id: `w${i}`, text: `Ana's primary wallet is wal-${i}.`, user_id: "ana", fact_key: "wallet.primary_address", valid_from: `2025-01-${day}T00:00:00Z`, memory_type: "semantic" };
}

const search = (call, extra = {}) => call("POST", `/v1/long-term-memory/search${Q}`, { text: "Ana primary wallet", search_mode: "keyword", recency_boost: false, limit: 50, ...extra });
const ids = (r) => r.json.memories.map((m) => m.id).sort();

test("racing writers on one fact key agree, before and after a restart", async () => {
  const dir = mkdtempSync(join(tmpdir(), "edgemem-facts-"));
  try {
    let { mf, call } = await startWorker({ persistDir: dir });
    // Every version at once, each its own request, in a scrambled order.
    const order = Array.from({ length: WRITERS }, (_, i) => (i * 7) % WRITERS);
    const answers = await Promise.all(order.map((i) => call("POST", `/v1/long-term-memory/${Q}`, { memories: [version(i)] })));
    for (const a of answers) assert.equal(a.status, 200, JSON.stringify(a.json));
    const latest = await search(call);
    assert.deepEqual(ids(latest), [`w${WRITERS - 1}`], JSON.stringify(latest.json));
    const links = async () => Promise.all(order.map(async (i) => (await call("GET", `/v1/long-term-memory/w${i}${Q}`)).json.superseded_by));
    const before = await links();
    for (const [k, i] of order.entries()) assert.equal(before[k], i === WRITERS - 1 ? null : `w${i + 1}`);
    const jan5 = await search(call, { as_of: "2025-01-05T12:00:00Z" });
    assert.deepEqual(ids(jan5), ["w4"]);
    assert.equal((await search(call, { include_superseded: true })).json.memories.length, WRITERS);
    assert.equal((await search(call, { as_of: "2025-01-05", include_superseded: true })).status, 422);
    await mf.dispose();
    ({ mf, call } = await startWorker({ persistDir: dir }));
    assert.deepEqual(await links(), before, "the object replayed from storage has the same chain");
    assert.deepEqual(ids(await search(call)), [`w${WRITERS - 1}`]);
    await mf.dispose();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a batch retried after a timeout creates nothing twice; explain on hits", async () => {
  const { mf, call } = await startWorker();
  try {
    const batch = { memories: [version(0), version(1), { text: "Ana likes hiking.", user_id: "ana" }] };
    const first = await call("POST", `/v1/long-term-memory/${Q}`, batch);
    assert.deepEqual(first.json.results.map((r) => r.status), ["created", "superseded", "created"]);
    const retry = await call("POST", `/v1/long-term-memory/${Q}`, batch);
    assert.deepEqual(retry.json.created, []);
    assert.deepEqual(retry.json.results.map((r) => r.duplicate_of), ["w0", "w1", first.json.created[2]]);
    assert.equal((await search(call, { text: "", include_superseded: true, user_id: { eq: "ana" } })).json.total, 3);
    const x = await search(call, { explain: true, text: "wallet" });
    const e = x.json.memories[0].explain;
    assert.equal(e.rank, 1);
    assert.equal(e.bm25.rank, 1);
    assert.equal(e.versions, "latest_only");
    assert.equal(JSON.stringify(e).includes("wal-"), false, "no record's text in an explanation");
  } finally {
    await mf.dispose();
  }
});
