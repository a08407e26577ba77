// One tenant across several Durable Objects (issue 21), in Miniflare with
// `EDGEMEM_SHARDS_INITIAL=4`:
// - routing: each record lives in exactly the shard that owns its user's
//   bucket (its own id's without a user), read straight from the shard
//   objects; sessions, records by id, batch deletes and settings go where
//   their placement says;
// - a tenant-wide search answers exactly like one unsharded tenant holding
//   the same records (a second Worker without sharding), in every mode;
// - a stale map is retried after a `shard_moved` (a dev-mode fault);
// - past its deadline a fan-out answers `partial: true` and names the slow
//   shard (`EDGEMEM_TEST_SLOW_SHARD`, dev mode);
// - background extraction in a session's shard hands the records it made
//   for a user of another shard to that shard: found there, exactly once;
// - memory prompts, session lists and a user's forget across shards;
// - a tenant that held data before sharding was turned on keeps it at home.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startWorker } from "./miniflare.mjs";
import { bucketOf, evenOwner, held } from "./split-check.mjs";

const SHARDS = 4;
const running = [];
const dirs = [];
after(async () => {
  for (const w of running) await w.mf.dispose();
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

async function start(bindings, persistDir) {
  const w = await startWorker({ bindings, persistDir });
  running.push(w);
  return w;
}

const owner = (bucket, n = SHARDS) => evenOwner(bucket, n);

const WORDS = ["tofu", "puppy", "lisbon", "marathon", "coffee", "invoice", "rent", "garden", "piano", "train", "sister", "allergy", "peanut", "budget", "flight", "vegan"];
/** `n` records with distinct texts (so no create deduplicates one). */
function records(n) {
  let seed = 0x9e3779b9;
  const next = (k) => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) % k;
  };
  return Array.from({ length: n }, (_, i) => {
    const m = {
      id: `m${String(i).padStart(3, "0")}`,
      text: [...Array.from({ length: 3 + next(5) }, () => WORDS[next(WORDS.length)]), `note${i}`].join(" "),
      created_at: `2024-0${1 + next(9)}-1${next(10)}T10:00:00Z`,
      topics: [WORDS[next(4)]],
    };
    if (next(5) > 0) m.user_id = `u${next(12)}`;
    return m;
  });
}

const meter = (h) => Object.fromEntries((h ?? "").split(";").filter(Boolean).map((kv) => kv.trim().split("=")).map(([k, v]) => [k, Number(v)]));
const hits = (body) => body.memories.map((m) => ({ id: m.id, score: m.score, dist: m.dist }));

test("records, sessions and settings go to the shard their placement names; an edit moves a record to its new user's shard", async () => {
  const { call, ...w } = await start({ EDGEMEM_SHARDS_INITIAL: String(SHARDS) });
  const ns = "?namespace=t1";
  const recs = records(60);
  const created = await call("POST", `/v1/long-term-memory/${ns}`, { memories: recs });
  assert.equal(created.status, 200, created.text);
  assert.deepEqual(created.json.created, recs.map((m) => m.id), "created ids in the request's order");
  assert.deepEqual(created.json.results.map((r) => r.id), recs.map((m) => m.id));

  // Every record in exactly the shard that owns its bucket.
  const where = new Map();
  for (let s = 0; s < SHARDS; s++) for (const id of await held({ ...w, call }, "t1", s)) {
    assert.ok(!where.has(id), `${id} is in two shards`);
    where.set(id, s);
  }
  for (const m of recs) assert.equal(where.get(m.id), owner(bucketOf(m.user_id ?? m.id)), `${m.id} (${m.user_id ?? "no user"})`);
  assert.ok(new Set(where.values()).size === SHARDS, "the records spread over every shard");

  // A user-pinned search asks one shard; a tenant-wide one all four.
  const pinned = await call("POST", `/v1/long-term-memory/search${ns}`, { text: "tofu", search_mode: "keyword", user_id: { eq: "u3" } });
  assert.equal(pinned.status, 200, pinned.text);
  assert.equal(meter(pinned.headers.get("x-edgemem-meter")).do_calls, 1, "one shard, the map cached");
  assert.ok(pinned.json.memories.every((m) => m.user_id === "u3"));
  assert.equal(pinned.json.partial, undefined, "a one-shard answer is not a fan-out's");
  const wide = await call("POST", `/v1/long-term-memory/search${ns}`, { text: "tofu puppy", search_mode: "keyword" });
  assert.equal(wide.status, 200, wide.text);
  assert.equal(wide.json.shards_asked, SHARDS);
  assert.equal(wide.json.partial, false);
  assert.deepEqual(wide.json.missing_shards, []);
  assert.equal(meter(wide.headers.get("x-edgemem-meter")).do_calls, 1, "the front calls the root only");
  assert.equal(meter(wide.headers.get("x-edgemem-meter")).tree_calls, 2 * (SHARDS - 1), "the root calls the three others in each of two rounds");

  // Records by id: found in their shard, edited, deleted.
  const one = recs.find((m) => m.user_id);
  const got = await call("GET", `/v1/long-term-memory/${one.id}${ns}`);
  assert.equal(got.status, 200, got.text);
  assert.equal(got.json.text, one.text);
  // The id directory names the record's bucket: one lookup, then its shard alone.
  assert.equal(meter(got.headers.get("x-edgemem-meter")).do_calls, 2, got.headers.get("x-edgemem-meter"));
  const patched = await call("PATCH", `/v1/long-term-memory/${one.id}${ns}`, { text: `${one.text} edited` });
  assert.equal(patched.status, 200, patched.text);
  assert.equal((await call("GET", `/v1/long-term-memory/${one.id}${ns}`)).json.text, `${one.text} edited`);
  const elsewhere = ["u0", "u1", "u2", "u3", "u4", "u5", "u6", "u7", "u8", "u9", "u10", "u11"].find((u) => owner(bucketOf(u)) !== where.get(one.id));
  // An edit that gives it a user of another shard moves it there
  // (tests/worker/sharded-edit.test.mjs has the rest).
  const moving = await call("PATCH", `/v1/long-term-memory/${one.id}${ns}`, { user_id: elsewhere });
  assert.equal(moving.status, 200, moving.text);
  assert.equal(moving.json.user_id, elsewhere);
  assert.ok((await held({ ...w, call }, "t1", owner(bucketOf(elsewhere)))).includes(one.id), "in its new user's shard");
  assert.ok(!(await held({ ...w, call }, "t1", where.get(one.id))).includes(one.id), "not in its old one");
  const back = await call("GET", `/v1/long-term-memory/${one.id}${ns}`);
  assert.equal(back.json.user_id, elsewhere);
  assert.equal(meter(back.headers.get("x-edgemem-meter")).do_calls, 2, "the id directory names its new bucket");
  assert.equal((await call("GET", `/v1/long-term-memory/nope${ns}`)).status, 404);
  const doomed = recs.slice(0, 6).map((m) => m.id);
  const del = await call("DELETE", `/v1/long-term-memory${ns}&${doomed.map((id) => `memory_ids=${id}`).join("&")}`);
  assert.equal(del.status, 200, del.text);
  assert.equal(del.json.status, "ok, deleted 6 memories");
  for (const id of doomed) assert.equal((await call("GET", `/v1/long-term-memory/${id}${ns}`)).status, 404);

  // Sessions, each in its id's shard, read back whole.
  for (let i = 0; i < 8; i++) {
    const put = await call("PUT", `/v1/working-memory/s${i}${ns}`, { messages: [{ role: "user", content: `hello ${i}` }] });
    assert.equal(put.status, 200, put.text);
  }
  for (let i = 0; i < 8; i++) {
    const s = await call("GET", `/v1/working-memory/s${i}${ns}`);
    assert.equal(s.status, 200, s.text);
    assert.equal(s.json.messages[0].content, `hello ${i}`);
  }
  // A setting every shard applies: each refuses a secret in a session.
  assert.equal((await call("PUT", `/v1/privacy/policy${ns}`, { secrets: "reject" })).status, 200);
  assert.equal((await call("GET", `/v1/privacy/policy${ns}`)).json.secrets, "reject");
  const secret = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0";
  const sessionShards = new Set();
  for (let i = 0; i < 16 && sessionShards.size < SHARDS; i++) {
    const id = `sec-${i}`;
    if (sessionShards.has(owner(bucketOf(id)))) continue;
    sessionShards.add(owner(bucketOf(id)));
    const r = await call("POST", `/v1/working-memory/${id}/messages${ns}`, { messages: [{ role: "user", content: `token ${secret}` }] });
    assert.equal(r.status, 422, `${id} in shard ${owner(bucketOf(id))}: ${r.text}`);
    assert.equal(r.json.code, "secret_detected");
  }
  assert.equal(sessionShards.size, SHARDS, "a session in every shard was tried");
  // Consent: recorded in every shard; a revoke erases the user's records
  // in their shard and answers the summed counts.
  assert.equal((await call("PUT", `/v1/consent/u5${ns}`, { long_term: true })).status, 200);
  assert.equal((await call("GET", `/v1/consent/u5${ns}`)).json.long_term, true);
  const u5 = recs.filter((m) => m.user_id === "u5" && !doomed.includes(m.id));
  assert.ok(u5.length > 0);
  const revoked = await call("DELETE", `/v1/consent/u5${ns}`);
  assert.equal(revoked.status, 200, revoked.text);
  assert.equal(revoked.json.erased.memories, u5.length, revoked.text);
  const after = await call("POST", `/v1/long-term-memory/search${ns}`, { text: "", limit: 100, user_id: { eq: "u5" } });
  assert.equal(after.json.memories.length, 0, "nothing of the user is left");
  for (const m of u5) assert.equal((await call("GET", `/v1/long-term-memory/${m.id}${ns}`)).status, 404);
  // Home's own state: the ledger.
  assert.equal((await call("POST", `/v1/ledger/assets${ns}`, { code: "USD", scale: 2 })).status, 200);

  // Stats: every shard's, summed, each shard's own beside.
  const stats = await call("GET", `/v1/stats${ns}`);
  assert.equal(stats.status, 200, stats.text);
  assert.equal(stats.json.shards.length, SHARDS);
  assert.equal(stats.json.long_term_memories, recs.length - doomed.length - u5.length, stats.text);
  assert.equal(stats.json.long_term_memories, stats.json.shards.reduce((n, s) => n + s.stats.long_term_memories, 0));
  assert.ok(stats.json.shards.every((s) => s.stats.long_term_memories > 0), "every shard holds some");
  assert.equal(stats.json.sessions, stats.json.shards.reduce((n, s) => n + s.stats.sessions, 0));
  assert.ok(stats.json.sessions >= 8, stats.text);
  // Re-embedding: every shard's progress (nothing to do: the embedder is the same).
  const reembed = await call("POST", `/v1/long-term-memory/reembed${ns}`, {});
  assert.equal(reembed.status, 200, reembed.text);
  assert.deepEqual([reembed.json.reembedded, reembed.json.remaining, reembed.json.done], [0, 0, true], reembed.text);

});

test("a tenant-wide search over four shards answers exactly like one unsharded tenant", async () => {
  const sharded = await start({ EDGEMEM_SHARDS_INITIAL: String(SHARDS) });
  const single = await start({});
  const recs = records(80);
  for (const w of [sharded, single]) {
    const r = await w.call("POST", "/v1/long-term-memory/?namespace=t2", { memories: recs });
    assert.equal(r.status, 200, r.text);
  }
  const queries = [
    { text: "tofu puppy", search_mode: "keyword", limit: 6, recency_boost: false },
    { text: "rent budget invoice", search_mode: "keyword", limit: 5, offset: 4, recency_boost: false },
    { text: "coffee garden", search_mode: "semantic", limit: 7, recency_boost: false },
    { text: "flight lisbon", search_mode: "hybrid", limit: 5, recency_boost: false },
    { text: "flight lisbon", search_mode: "hybrid", fusion: "rrf", limit: 5, recency_boost: false },
    { text: "peanut allergy", limit: 5, recency_boost: false },
    { text: "", limit: 9, offset: 3, recency_boost: false },
    { text: "piano sister", search_mode: "keyword", limit: 5, topics: { any: ["tofu", "puppy"] }, recency_boost: false },
  ];
  for (const q of queries) {
    const [a, b] = await Promise.all([sharded, single].map((w) => w.call("POST", "/v1/long-term-memory/search?namespace=t2", q)));
    assert.equal(a.status, 200, a.text);
    assert.equal(b.status, 200, b.text);
    assert.deepEqual(hits(a.json), hits(b.json), JSON.stringify(q));
    for (const f of ["total", "next_offset", "search_mode", "exact_filter"]) assert.deepEqual(a.json[f], b.json[f], `${JSON.stringify(q)}: ${f}`);
    assert.ok(a.json.memories.length > 0 || b.json.total === 0, JSON.stringify(q));
    assert.equal(a.json.partial, false);
  }
  // What a fan-out does not merge yet is refused, not approximated.
  const explain = await sharded.call("POST", "/v1/long-term-memory/search?namespace=t2", { text: "tofu", explain: true });
  assert.equal(explain.status, 422, explain.text);
  const deadline = await sharded.call("POST", "/v1/long-term-memory/search?namespace=t2", { text: "tofu", deadline_ms: 5 });
  assert.equal(deadline.status, 422, deadline.text);
});

test("a stale map is answered shard_moved and retried with a fresh one", async () => {
  const { call } = await start({ EDGEMEM_SHARDS_INITIAL: String(SHARDS), EDGEMEM_TEST_FAULT: "stale_map" });
  const put = await call("PUT", "/v1/working-memory/stale-1?namespace=t3", { messages: [{ role: "user", content: "still here" }] });
  assert.equal(put.status, 200, put.text);
  assert.equal(meter(put.headers.get("x-edgemem-meter")).shard_retries, 1, "the first attempt was refused");
  const get = await call("GET", "/v1/working-memory/stale-1?namespace=t3");
  assert.equal(get.status, 200, get.text);
  assert.equal(get.json.messages.length, 1, "written once");
  const wide = await call("POST", "/v1/long-term-memory/search?namespace=t3", { text: "anything", search_mode: "keyword" });
  assert.equal(wide.status, 200, wide.text);
  assert.equal(meter(wide.headers.get("x-edgemem-meter")).shard_retries, 1);
  assert.equal(wide.json.shards_asked, SHARDS);
});

test("past its deadline a fan-out answers partial and names the slow shard", async () => {
  const { call } = await start({ EDGEMEM_SHARDS_INITIAL: String(SHARDS), EDGEMEM_TEST_SLOW_SHARD: "2:1500" });
  const recs = records(60);
  assert.equal((await call("POST", "/v1/long-term-memory/?namespace=t4", { memories: recs })).status, 200);
  const onSlow = new Set(recs.filter((m) => owner(bucketOf(m.user_id ?? m.id)) === 2).map((m) => m.id));
  assert.ok(onSlow.size > 0);
  // Whichever shard is the root (chosen at random), shard 2 misses the
  // deadline: as a child, or as a root whose own part is late.
  for (let i = 0; i < 6; i++) {
    const started = performance.now();
    const r = await call("POST", "/v1/long-term-memory/search?namespace=t4", { text: "", limit: 100, recency_boost: false, deadline_ms: 300 });
    const ms = performance.now() - started;
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.shards_asked, SHARDS);
    assert.equal(r.json.partial, true, r.text);
    assert.deepEqual(r.json.missing_shards, [2]);
    assert.ok(ms < 1500, `answered by its deadline, not the slow shard's (${ms.toFixed(0)} ms)`);
    const ids = r.json.memories.map((m) => m.id);
    assert.ok(ids.every((id) => !onSlow.has(id)), "nothing from the missing shard");
    assert.equal(ids.length, recs.length - onSlow.size, "everything from the shards that answered");
    assert.equal(r.json.total, recs.length - onSlow.size);
  }
  // With time enough, the same search is whole.
  const whole = await call("POST", "/v1/long-term-memory/search?namespace=t4", { text: "", limit: 100, recency_boost: false, deadline_ms: 5000 });
  assert.equal(whole.status, 200, whole.text);
  assert.equal(whole.json.partial, false);
  assert.equal(whole.json.memories.length, recs.length);
});

test("when no shard answers in time the answer is empty, partial, and names them all", async () => {
  const { call } = await start({ EDGEMEM_SHARDS_INITIAL: String(SHARDS), EDGEMEM_TEST_SLOW_SHARD: "0,1,2,3:1500" });
  assert.equal((await call("POST", "/v1/long-term-memory/?namespace=t8", { memories: records(20) })).status, 200);
  // A keyword search has a statistics round: nothing comes back from it.
  for (const body of [{ text: "tofu puppy", search_mode: "keyword" }, { text: "" }]) {
    const r = await call("POST", "/v1/long-term-memory/search?namespace=t8", { ...body, deadline_ms: 300 });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.partial, true);
    assert.deepEqual(r.json.missing_shards, [0, 1, 2, 3]);
    assert.deepEqual(r.json.memories, []);
    assert.equal(r.json.total, 0);
  }
});

test("extraction hands its records to the user's shard; prompts and session lists span shards", async () => {
  const w = await start({ EDGEMEM_SHARDS_INITIAL: String(SHARDS) });
  const { call } = w;
  const ns = "?namespace=t7";
  // A session and a user in different shards.
  const sid = "trip-1";
  const user = ["ana", "ben", "cy", "dee", "eli", "fay", "gus", "hal"].find((u) => owner(bucketOf(u)) !== owner(bucketOf(sid)));
  const put = await call("PUT", `/v1/working-memory/${sid}${ns}`, {
    user_id: user,
    long_term_memory_strategy: { strategy: "discrete", config: {} },
    messages: [
      { id: "m1", role: "user", content: "Hello!" },
      { id: "m2", role: "user", content: "I prefer metric units." },
      { id: "m3", role: "assistant", content: "Noted, metric it is." },
    ],
  });
  assert.equal(put.status, 200, put.text);
  let got = [];
  for (let i = 0; i < 60 && got.length === 0; i++) {
    await new Promise((r) => setTimeout(r, 250));
    const r = await call("POST", `/v1/long-term-memory/search${ns}`, { text: "", limit: 100, user_id: { eq: user } });
    assert.equal(r.status, 200, r.text);
    got = r.json.memories;
  }
  assert.ok(got.some((m) => /metric units/i.test(m.text) && m.session_id === sid && m.user_id === user), JSON.stringify(got));
  const ids = got.map((m) => m.id);
  const everywhere = [];
  for (let s = 0; s < SHARDS; s++) everywhere.push(...(await held(w, "t7", s)).filter((id) => ids.includes(id)));
  assert.deepEqual(everywhere.sort(), [...ids].sort(), "each extracted record in exactly one shard, its user's");
  for (const id of ids) assert.ok((await held(w, "t7", owner(bucketOf(user)))).includes(id));

  // A memory prompt reads the session from its shard and searches the user's.
  const p = await call("POST", `/v1/memory/prompt${ns}`, { query: "which units?", session: { session_id: sid, user_id: user }, long_term_search: { user_id: { eq: user }, limit: 3 } });
  assert.equal(p.status, 200, p.text);
  assert.ok(p.json.long_term_memories.some((m) => /metric units/i.test(m.text)), p.text);
  assert.ok(JSON.stringify(p.json.messages).includes("I prefer metric units."), "the session's turns are in the prompt");
  const wide = await call("POST", `/v1/memory/prompt${ns}`, { query: "metric", long_term_search: { search_mode: "keyword" } });
  assert.equal(wide.status, 200, wide.text);
  assert.ok(wide.json.long_term_memories.some((m) => /metric units/i.test(m.text)), "a prompt's tenant-wide search fans out");

  // Sessions of every shard, listed in id order and paged.
  const sids = Array.from({ length: 11 }, (_, i) => `list-${String(i).padStart(2, "0")}`);
  for (const id of sids) assert.equal((await call("PUT", `/v1/working-memory/${id}${ns}`, { messages: [] })).status, 200);
  const all = [sid, ...sids].sort();
  const page1 = await call("GET", `/v1/working-memory/${ns}&limit=5`);
  assert.equal(page1.status, 200, page1.text);
  assert.deepEqual(page1.json, { sessions: all.slice(0, 5), total: all.length });
  const page2 = await call("GET", `/v1/working-memory/${ns}&limit=5&offset=5`);
  assert.deepEqual(page2.json.sessions, all.slice(5, 10));
  assert.equal((await call("GET", `/v1/working-memory/${ns}&limit=100&offset=950`)).status, 422, "past the sharded listing depth");

  // A user's forget goes to that user's shard.
  const f = await call("POST", `/v1/long-term-memory/forget${ns}&user_id=${user}&dry_run=true`, { policy: { max_age_days: 0 } });
  assert.equal(f.status, 200, f.text);
  assert.equal(f.json.scanned, got.length);
});

test("a tenant with data from before sharding keeps it all at home", async () => {
  const dir = mkdtempSync(join(tmpdir(), "edgemem-shard-"));
  dirs.push(dir);
  const before = await start({}, dir);
  const recs = records(20);
  assert.equal((await before.call("POST", "/v1/long-term-memory/?namespace=t5", { memories: recs })).status, 200);
  await before.mf.dispose();
  running.splice(running.indexOf(before), 1);
  const after = await start({ EDGEMEM_SHARDS_INITIAL: String(SHARDS) }, dir);
  const r = await after.call("POST", "/v1/long-term-memory/search?namespace=t5", { text: "", limit: 100, recency_boost: false });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.memories.length, recs.length, "every record still found");
  assert.equal(r.json.shards_asked, undefined, "one shard: no fan-out");
  for (const m of recs.slice(0, 3)) assert.equal((await after.call("GET", `/v1/long-term-memory/${m.id}?namespace=t5`)).status, 200);
  // A new tenant of the same deployment is spread.
  const fresh = await after.call("POST", "/v1/long-term-memory/search?namespace=t6", { text: "", limit: 5 });
  assert.equal(fresh.json.shards_asked, SHARDS);
});
