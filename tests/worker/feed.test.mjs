// The change feed followed live (issue 11, point 2): GET /v1/events upgraded
// to a WebSocket on the tenant's Durable Object, or served as
// text/event-stream. Every test checks seqs: contiguous, nothing twice.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { follow, WAIT_MS } from "./feed-follow.mjs";
import { startWorker } from "./miniflare.mjs";

/** ws's own wait for the peer to end the connection after a close frame, and a margin. */
const CLOSE_TIMEOUT_MS = 35_000;
/** The close code of a subscriber that fell a buffer behind (core::feed::CLOSE_SLOW_CONSUMER). */
const CLOSE_SLOW_CONSUMER = 4008;


const range = (from, to) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

async function write(call, ns, i) {
  const r = await call("PUT", `/v1/working-memory/s${i % 3}?namespace=${ns}`, { messages: [], data: { i } });
  assert.equal(r.status, 200, r.text);
}

test("two subscribers and a writer see the same contiguous seqs; a rejected write sends nothing; nothing crosses namespaces", async () => {
  const { mf, call } = await startWorker();
  try {
    const base = String(await mf.ready);
    const one = await follow(base, "namespace=a&since=0");
    const two = await follow(base, "namespace=a");
    const other = await follow(base, "namespace=b&since=0");
    for (let i = 0; i < 20; i++) await write(call, "a", i);
    const refused = await call("POST", "/v1/working-memory/missing/messages?namespace=a", { messages: [{ role: "user", content: "x" }] });
    assert.equal(refused.status, 404);
    await write(call, "a", 20);
    await write(call, "b", 0);
    await one.until((s) => s.seqs().length >= 21, "21 events");
    await two.until((s) => s.seqs().length >= 21, "21 events");
    await other.until((s) => s.seqs().length >= 1, "tenant b's event");
    assert.deepEqual(one.seqs(), range(1, 21), "contiguous, the refused write took no seq");
    assert.deepEqual(two.seqs(), range(1, 21));
    assert.deepEqual(one.events.map((e) => e.kind), Array(21).fill("working_memory.updated"));
    assert.ok(one.events.every((e) => !("data" in e)), "events carry no bodies");
    assert.deepEqual(other.seqs(), [1], "tenant b sees only its own write");
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(one.seqs().length, 21, "and nothing after");
    for (const s of [one, two, other]) await s.close();
  } finally {
    await mf.dispose();
  }
});

test("a disconnect, more writes, and a resume with since: nothing missing, nothing twice, also across a restart", async () => {
  const dir = mkdtempSync(join(tmpdir(), "edgemem-feed-"));
  let { mf, call } = await startWorker({ persistDir: dir });
  try {
    let base = String(await mf.ready);
    const first = await follow(base, "namespace=r&since=0");
    for (let i = 0; i < 10; i++) await write(call, "r", i);
    await first.until((s) => s.seqs().length >= 10, "10 events");
    await first.close();
    const last = first.seqs().at(-1);
    for (let i = 10; i < 15; i++) await write(call, "r", i);
    const second = await follow(base, `namespace=r&since=${last}`);
    for (let i = 15; i < 20; i++) await write(call, "r", i);
    await second.until((s) => s.seqs().length >= 10, "the 5 missed and 5 new");
    assert.deepEqual([...first.seqs(), ...second.seqs()], range(1, 20));
    const before = second.seqs().at(-1);
    await mf.dispose();

    ({ mf, call } = await startWorker({ persistDir: dir }));
    base = String(await mf.ready);
    for (let i = 20; i < 25; i++) await write(call, "r", i);
    const third = await follow(base, `namespace=r&since=${before}`);
    await write(call, "r", 25);
    await third.until((s) => s.seqs().length >= 6, "the writes after the restart");
    assert.deepEqual(third.seqs(), range(21, 26), "seqs are durable with the log");
    await third.close();
  } finally {
    await mf.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("bad values get 400 invalid_query before any upgrade; an unknown ack gets an error event", async () => {
  const { mf, call } = await startWorker();
  try {
    const base = String(await mf.ready);
    await write(call, "q", 0);
    for (const q of ["since=-1", "since=x", "since=99", "kinds=nope.nope"]) {
      await assert.rejects(follow(base, `namespace=q&${q}`), (e) => e.status === 400 && JSON.parse(e.body).code === "invalid_query", q);
    }
    const sub = await follow(base, "namespace=q&since=0&kinds=working_memory.*", { ack: false });
    await sub.until((s) => s.events.length >= 1, "the replay");
    sub.ws.send("not json");
    sub.ws.send(JSON.stringify({ ack: 1000 }));
    await sub.until((s) => s.events.filter((e) => e.kind === "error").length >= 2, "two error events");
    assert.deepEqual(sub.events.filter((e) => e.kind === "error").map((e) => e.code), ["invalid_json", "invalid_input"]);
    await write(call, "q", 1);
    await sub.until((s) => s.seqs().length >= 2, "still following after bad messages");
    await sub.close();
  } finally {
    await mf.dispose();
  }
});

test("a filtered subscriber gets only its kinds and keys, and its position moves past the rest", async () => {
  const { mf, call } = await startWorker();
  try {
    const base = String(await mf.ready);
    const keyed = await follow(base, "namespace=f&since=0&keys=s1");
    const kinds = await follow(base, "namespace=f&since=0&kinds=working_memory.deleted");
    for (let i = 0; i < 6; i++) await write(call, "f", i);
    assert.equal((await call("DELETE", "/v1/working-memory/s2?namespace=f")).status, 200);
    await keyed.until((s) => s.seqs().length >= 2, "s1's two writes");
    await kinds.until((s) => s.seqs().length >= 1, "the delete");
    assert.deepEqual(keyed.events.map((e) => e.key), ["s1", "s1"]);
    assert.deepEqual(keyed.seqs(), [2, 5]);
    assert.deepEqual(kinds.seqs(), [7]);
    for (const s of [keyed, kinds]) await s.close();
  } finally {
    await mf.dispose();
  }
});

test("a subscriber that never acks is closed as a slow consumer at the buffer limit, and resumes with since", async () => {
  const { mf, call } = await startWorker();
  try {
    const base = String(await mf.ready);
    const slow = await follow(base, "namespace=slow&since=0", { ack: false });
    // Appends of 32 turns: each event lists 32 ids (about 1 KB), so about
    // a thousand of them pass the 1 MiB buffer.
    const turns = Array.from({ length: 32 }, () => ({ role: "user", content: "." }));
    for (let s = 0; s < 5; s++) assert.equal((await call("PUT", `/v1/working-memory/w${s}?namespace=slow`, { messages: [] })).status, 200);
    let n = 0;
    while (!slow.closed && n < 1_500) {
      const batch = [];
      for (let j = 0; j < 10; j++, n++) batch.push(call("POST", `/v1/working-memory/w${n % 5}/messages?namespace=slow`, { messages: turns }));
      for (const r of await Promise.all(batch)) assert.equal(r.status, 200, r.text);
    }
    // `ws` reports the close once the TCP connection ends, which it forces
    // CLOSE_TIMEOUT_MS after the close frame when the peer (here
    // Miniflare's proxy, under this load) is slow to end it.
    await slow.until((s) => s.closed, "the close", CLOSE_TIMEOUT_MS);
    assert.equal(slow.closed.code, CLOSE_SLOW_CONSUMER, slow.closed.reason);
    const since = Number(/since=(\d+)/.exec(slow.closed.reason)[1]);
    assert.deepEqual(slow.seqs(), range(1, since), "everything up to the close, in order");
    const resumed = await follow(base, `namespace=slow&since=${since}`);
    const last = (await call("GET", "/v1/events?namespace=slow")).json.last_seq;
    await resumed.until((s) => s.seqs().at(-1) === last, "the rest");
    assert.deepEqual([...slow.seqs(), ...resumed.seqs()], range(1, last));
    await resumed.close();
  } finally {
    await mf.dispose();
  }
});

test("Accept: text/event-stream serves the same events as server-sent events, resumable with Last-Event-ID", async () => {
  const { mf, call } = await startWorker();
  try {
    const base = String(await mf.ready);
    for (let i = 0; i < 3; i++) await write(call, "sse", i);
    const read = async (headers, count) => {
      const ctl = new AbortController();
      const res = await fetch(`${base}v1/events?namespace=sse`, { headers: { accept: "text/event-stream", ...headers }, signal: ctl.signal });
      assert.equal(res.status, 200);
      assert.match(res.headers.get("content-type"), /^text\/event-stream/);
      const reader = res.body.getReader();
      const dec = new TextDecoder();
      let text = "";
      const frames = [];
      let wrote = false;
      // A read that never completes fails the test instead of hanging it.
      const timeout = setTimeout(() => ctl.abort(), WAIT_MS);
      while (frames.length < count) {
        const { value, done } = await reader.read().catch(() => ({ done: true }));
        if (done) break;
        text += dec.decode(value, { stream: true });
        let end;
        while ((end = text.indexOf("\n\n")) >= 0) {
          const frame = text.slice(0, end);
          text = text.slice(end + 2);
          const id = /^id: (\d+)$/m.exec(frame)?.[1];
          const data = /^data: (.*)$/m.exec(frame)?.[1];
          if (data) frames.push({ id: Number(id), event: JSON.parse(data) });
        }
        // The replay (2 and 3) may come in one chunk or two: write the live one after the first.
        if (!wrote && frames.length >= 1) {
          wrote = true;
          await write(call, "sse", 99);
        }
      }
      clearTimeout(timeout);
      ctl.abort();
      return frames;
    };
    const frames = await read({ "last-event-id": "1" }, 3);
    assert.deepEqual(frames.map((f) => f.id), [2, 3, 4], "the replay after Last-Event-ID, then live");
    assert.deepEqual(frames.map((f) => f.event.seq), [2, 3, 4]);
    const bad = await fetch(`${base}v1/events?namespace=sse&since=x`, { headers: { accept: "text/event-stream" } });
    assert.equal(bad.status, 400);
    assert.equal((await bad.json()).code, "invalid_query");
  } finally {
    await mf.dispose();
  }
});

test("a since older than what is kept gets one resync_required event, then live events", async () => {
  const { mf, call } = await startWorker();
  try {
    const base = String(await mf.ready);
    // The kept ring is 4,096 events.
    const turns = [{ role: "user", content: "." }];
    for (const id of ["k", "k0", "k1"]) assert.equal((await call("PUT", `/v1/working-memory/${id}?namespace=old`, { messages: [] })).status, 200);
    for (let n = 0; n < 4_200; n += 50) {
      const batch = [];
      for (let j = 0; j < 50; j++) batch.push(call("POST", `/v1/working-memory/k${j % 2}/messages?namespace=old`, { messages: turns }));
      for (const r of await Promise.all(batch)) assert.equal(r.status, 200, r.text);
    }
    const page = (await call("GET", "/v1/events?namespace=old&since=0")).json;
    assert.equal(page.resync_required, true, "the oldest events are no longer kept");
    const sub = await follow(base, "namespace=old&since=0");
    await sub.until((s) => s.events.length >= 1, "the notice");
    assert.equal(sub.events[0].kind, "resync_required");
    assert.equal(sub.events[0].last_seq, page.last_seq);
    assert.equal(sub.events.length, 1, "one notice, no partial replay");
    assert.equal((await call("PUT", "/v1/working-memory/k?namespace=old", { messages: [] })).status, 200);
    await sub.until((s) => s.events.length >= 2, "the next live event");
    assert.equal(sub.events[1].seq, page.last_seq + 1);
    await sub.close();
  } finally {
    await mf.dispose();
  }
});
