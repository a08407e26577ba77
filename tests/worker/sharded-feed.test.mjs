// The change feed of a sharded tenant (issue 21), in Miniflare with
// `EDGEMEM_SHARDS_INITIAL=4`: one sequence at home, whatever shard a write
// went to. Pages pull every shard's new events first (a page read after a
// write holds it); live subscribers get them pushed. Checked against an
// unsharded tenant given the same writes: the same events, seqs
// contiguous, nothing twice.
import { test } from "node:test";
import assert from "node:assert/strict";
import { follow } from "./feed-follow.mjs";
import { workerPool } from "./miniflare.mjs";

const start = workerPool();
const range = (from, to) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** Writes that land in every shard: sessions, users' memories, a consent (every shard alike), a ledger asset (home). */
async function writes(call, ns, from, to) {
  for (let i = from; i < to; i++) {
    let r = await call("PUT", `/v1/working-memory/s${i}?namespace=${ns}`, { messages: [{ role: "user", content: `turn ${i}` }] });
    assert.equal(r.status, 200, r.text);
    r = await call("POST", `/v1/long-term-memory/?namespace=${ns}`, { memories: [{ id: `m${i}`, text: `fact ${i}`, user_id: `u${i}` }] });
    assert.equal(r.status, 200, r.text);
  }
}

/** What an event says, without its seq: for comparing two feeds as multisets. */
const said = (e) => JSON.stringify([e.kind, e.key, e.count ?? null, [...(e.ids ?? [])].sort()]);

async function page(call, ns, since) {
  const r = await call("GET", `/v1/events?namespace=${ns}&since=${since}&limit=1000`);
  assert.equal(r.status, 200, r.text);
  return r.json;
}

test("a sharded tenant's feed pages hold every write once, in one sequence, as one object's do", async () => {
  const sharded = await start({ EDGEMEM_SHARDS_INITIAL: "4" });
  const single = await start({});
  const ns = "feed1";
  for (const w of [sharded, single]) {
    await writes(w.call, ns, 0, 12);
    const consent = await w.call("PUT", `/v1/consent/u3?namespace=${ns}`, { long_term: true });
    assert.equal(consent.status, 200, consent.text);
    const asset = await w.call("POST", `/v1/ledger/assets?namespace=${ns}`, { code: "USD", scale: 2 });
    assert.equal(asset.status, 200, asset.text);
  }
  // The writes really went to several shards.
  const stats = await sharded.call("GET", `/v1/stats?namespace=${ns}`);
  assert.ok(stats.json.shards.filter((s) => s.stats.sessions > 0).length >= 3, stats.text);

  const [a, b] = [await page(sharded.call, ns, 0), await page(single.call, ns, 0)];
  assert.deepEqual(a.events.map((e) => e.seq), range(1, a.last_seq), "contiguous from 1");
  assert.equal(a.events.length, b.events.length, "as many events as one object's");
  assert.deepEqual(a.events.map(said).sort(), b.events.map(said).sort(), "the same events");
  assert.equal(a.events.filter((e) => e.kind === "consent.granted").length, 1, "a setting written to every shard is one event");
  // A session's events come in its own order: created, then nothing else.
  for (const e of a.events) assert.ok(typeof e.ts === "number" && e.ts > 0);

  // Read again (every shard asked again): nothing twice, nothing new.
  const again = await page(sharded.call, ns, 0);
  assert.deepEqual(again.events, a.events);
  assert.deepEqual((await page(sharded.call, ns, a.last_seq)).events, []);

  // More writes: a page from the last seq holds exactly them.
  await writes(sharded.call, ns, 12, 16);
  const next = await page(sharded.call, ns, a.last_seq);
  assert.deepEqual(next.events.map((e) => e.seq), range(a.last_seq + 1, a.last_seq + 8));
  assert.deepEqual(next.events.map((e) => e.key).filter((k) => k.startsWith("s")).sort(), ["s12", "s13", "s14", "s15"]);
  assert.deepEqual(next.events.flatMap((e) => e.ids ?? []).sort(), ["m12", "m13", "m14", "m15"]);

  // Bad input is refused as by one object.
  for (const since of [String(next.last_seq + 1), "-1", "x"]) {
    const r = await sharded.call("GET", `/v1/events?namespace=${ns}&since=${since}`);
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.code, "invalid_query");
  }
});

test("a live subscriber of a sharded tenant gets every shard's writes in one contiguous sequence, and resumes with since", async () => {
  const w = await start({ EDGEMEM_SHARDS_INITIAL: "4" });
  const base = String(await w.mf.ready);
  const ns = "feed2";
  // Writes before anyone follows: relayed when the subscriber opens.
  await writes(w.call, ns, 0, 3);
  const first = await follow(base, `namespace=${ns}&since=0`);
  await writes(w.call, ns, 3, 10);
  await first.until((s) => s.seqs().length >= 20, "20 events");
  assert.deepEqual(first.seqs(), range(1, 20), "contiguous, nothing twice");
  assert.deepEqual(first.events.map((e) => e.kind).sort(), [...Array(10).fill("long_term_memory.created"), ...Array(10).fill("working_memory.updated")]);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(first.seqs().length, 20, "and nothing after");
  await first.close();

  // Written while nobody follows; then a resume from the last seq seen.
  await writes(w.call, ns, 10, 13);
  const second = await follow(base, `namespace=${ns}&since=20`);
  await writes(w.call, ns, 13, 15);
  await second.until((s) => s.seqs().length >= 10, "the 6 missed and 4 new");
  assert.deepEqual(second.seqs(), range(21, 30));
  const keys = second.events.map((e) => e.key).filter((k) => k.startsWith("s"));
  assert.deepEqual(keys.sort(), ["s10", "s11", "s12", "s13", "s14"]);
  await second.close();

  // A page agrees with what the subscribers saw.
  const all = await page(w.call, ns, 0);
  assert.deepEqual(all.events.map((e) => e.seq), range(1, 30));
  assert.deepEqual(all.events.map(said), [...first.events, ...second.events].map(said));
});

test("the feed stays one sequence across a split: a live subscriber gets every write before, during and after it once", async () => {
  const w = await start({ EDGEMEM_SHARDS_INITIAL: "2" });
  const base = String(await w.mf.ready);
  const ns = "feed3";
  const sub = await follow(base, `namespace=${ns}&since=0`);
  await writes(w.call, ns, 0, 10);
  const splitting = w.call("POST", `/v1/admin/shards/split?namespace=${ns}`, { shard: 0 });
  await writes(w.call, ns, 10, 14);
  const split = await splitting;
  assert.equal(split.status, 200, split.text);
  assert.equal(split.json.to, 2, "a third shard");
  await writes(w.call, ns, 14, 20);
  const isWrite = (e) => e.kind === "working_memory.updated" || e.kind === "long_term_memory.created";
  await sub.until((s) => s.events.filter(isWrite).length >= 40, "the 40 writes' events");
  // A page pulls what a shard has not pushed yet (the new shard's copy
  // batches); the subscriber gets those too.
  const all = await page(w.call, ns, 0);
  await sub.until((s) => s.seqs().length >= all.last_seq, "everything the page holds");
  assert.deepEqual(sub.seqs(), range(1, all.last_seq), "one contiguous sequence, nothing twice");
  assert.deepEqual(all.events.map(said), sub.events.map(said), "the page and the subscriber agree");
  const writesSeen = sub.events.filter(isWrite);
  assert.deepEqual(writesSeen.filter((e) => e.kind === "working_memory.updated").map((e) => e.key).sort(), range(0, 19).map((i) => `s${i}`).sort());
  assert.deepEqual(writesSeen.flatMap((e) => e.ids ?? []).sort(), range(0, 19).map((i) => `m${i}`).sort());
  const others = sub.events.filter((e) => !isWrite(e)).map((e) => e.kind);
  assert.ok(others.every((k) => k === "shard.moved_in" || k === "shard.moved_out"), others.join(","));
  assert.ok(others.includes("shard.moved_out"), "the source's collection is in the feed");
  await sub.close();
});
