// Chaos against the real Worker (issue 12): a mixed workload runs through
// `wrangler dev` on a persisted directory while the workerd runtime is
// killed with SIGKILL at random points, with requests in flight, and
// wrangler is started again on the same directory each time.
//
// The client keeps its own books: every write it sent, whether a 2xx came
// back (acknowledged), and for the rest whether the write landed anyway
// (allowed: the answer was lost, not the write). After every restart:
//   - every acknowledged write is there: session messages exactly once per
//     id, long-term memories readable by id with their text, transfers in the
//     ledger, tool-cache entries, completed intents;
//   - each unacknowledged write landed whole or not at all (one request is
//     one op), and stays that way until it is retried;
//   - retries of the same body never apply twice: a landed transfer answers
//     `exists`, a landed append `duplicate message id`, an open intent `open`;
//   - balances equal the sum of the distinct transfers present, and the
//     ledger reconciles (books and the client's statement);
//   - executeOnce is at most once: the simulated outside service is called
//     at most once per intent, an acknowledged begin or outcome is never lost;
//   - the op log replays: the change feed rebuilt from the log has no gap up
//     to `last_seq`, `last_seq` never goes back, and (where the replayed log
//     covers the interval) its events are exactly the writes acknowledged or
//     found landed, each once, nothing else;
//   - after an idle kill the store reopens with exactly the same state.
//
// EDGEMEM_CHAOS_SEED=N replays a run's workload and kill schedule (the
// interleaving of requests still depends on timing); EDGEMEM_CHAOS_KILLS=N
// sets the number of kills under load (default 20); three idle kills come on
// top (two at random epochs, one at the end).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { randomInt } from "node:crypto";
import { isDeepStrictEqual as same } from "node:util";
import { spawnWrangler, call, pool, prng, intentKey, fmtUnits, parseUnits } from "./chaos-harness.mjs";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const KILLS = Number(process.env.EDGEMEM_CHAOS_KILLS ?? 20);
const SEED = process.env.EDGEMEM_CHAOS_SEED !== undefined ? Number(process.env.EDGEMEM_CHAOS_SEED) : randomInt(2 ** 31);
const NS = "chaos";
const Q = `?namespace=${NS}`;
// The next Worker build requires auth unless this is set; the current one ignores it.
const VARS = { EDGEMEM_DEV_MODE: "1" };
const SESSIONS = ["s0", "s1", "s2", "s3"];
const ACCOUNTS = ["a0", "a1", "a2", "a3", "a4"];
const SCALE = 2;
const CLIENTS = 8;
const LTM_SAMPLE = 10;
const TOOL_SAMPLE = 5;
// The store's snapshot cadence in the Worker (limits::SNAPSHOT_EVERY_OPS_DEFAULT).
const SNAPSHOT_EVERY_OPS = 1000;

// No HTTP answer, or wrangler's proxy saying its hop to the runtime failed.
const droppedByRuntime = (r) => r.status === 0 || (r.status === 503 && r.text.startsWith("Your worker restarted mid-request"));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const countMap = (xs) => xs.reduce((m, x) => m.set(x, (m.get(x) ?? 0) + 1), new Map());
const sortedEntries = (m) => [...m.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

test(`chaos: ${KILLS} SIGKILLs of workerd under a mixed workload (plus idle ones), nothing acknowledged lost, nothing applied twice`, { timeout: 20 * 60_000 }, async () => {
  const t0 = Date.now();
  console.log(`chaos: seed ${SEED} (re-run with EDGEMEM_CHAOS_SEED=${SEED}), ${KILLS} kills`);
  // The kill schedule (delays, idle kills, the prefill) has its own stream,
  // so it replays exactly with the seed; samples and retry choices another.
  const rng = prng(SEED);
  const pick = prng((SEED ^ 0x9e3779b9) >>> 0);
  const prefillMargin = rng.int(5, 50);
  // Two idle kills at random epochs (and one at the end).
  const idleEpochs = new Set();
  while (KILLS >= 3 && idleEpochs.size < 2) idleEpochs.add(rng.int(2, KILLS));
  const dir = mkdtempSync(join(tmpdir(), "edgemem-chaos-"));
  let server = null;
  let baseUrl = null; // the running server's, kept after a kill so late requests are refused
  let passed = false;
  const fail = (msg) => {
    throw new assert.AssertionError({ message: `${msg}\n(seed ${SEED}; re-run with EDGEMEM_CHAOS_SEED=${SEED})` });
  };
  const check = (cond, msg) => {
    if (!cond) fail(typeof msg === "function" ? msg() : msg);
  };

  // ---- the client's books -------------------------------------------------
  const writes = []; // logical writes (one body each, maybe sent more than once)
  const attempts = []; // every write request sent: {w, iv, outcome: yes|no|maybe}
  const intents = new Map(); // n -> {n, key, params, stage, beginW, completeW}
  const external = new Map(); // n -> {calls, outcome}: the simulated outside service
  const anomalies = []; // non-2xx answers while the server was up
  let inflight = 0; // requests of the workload awaiting an answer
  const inflightAtKill = [];
  let iv = 0; // the current interval: attempts since the last check's seq read
  let epoch = 0;
  const stats = { kills: 0, workerdKilled: 0, idleKills: 0, retries: 0, unackedLanded: 0, unackedNotLanded: 0, unackedRefused: 0, checks: 0, partialFeed: 0, fullFeed: 0, droppedUp: 0 };

  const newWrite = (kind, method, path, body, sig, ids, extra = {}) => {
    const w = { n: writes.length, kind, method, path, body, sig, ids, acked: false, landed: null, ackIv: null, epoch, retried: 0, ...extra };
    writes.push(w);
    return w;
  };
  const send = async (w) => {
    const a = { w, iv, outcome: "maybe" };
    attempts.push(a);
    inflight += 1;
    const r = await call(baseUrl, w.method, w.path + Q, w.body);
    inflight -= 1;
    a.status = r.status;
    a.r = r;
    a.refused = r.error === "ECONNREFUSED"; // never reached the server
    return a;
  };
  const ack = (w, a) => {
    a.outcome = "yes";
    if (!w.acked) {
      w.acked = true;
      w.ackIv = iv;
    }
  };

  // ---- writes of each kind ------------------------------------------------
  const transferWrite = (id, r) => {
    const shape = r();
    const mk = (k, linked) => {
      const [d, c] = (() => {
        const d = r.pick(ACCOUNTS);
        let c = r.pick(ACCOUNTS);
        while (c === d) c = r.pick(ACCOUNTS);
        return [d, c];
      })();
      const t = { id: `${id}-${k}`, debit_account: d, credit_account: c, amount: fmtUnits(BigInt(r.int(1, 500_000)), SCALE) };
      if (linked) t.linked = true;
      return t;
    };
    const transfers = shape < 0.6 ? [mk(0)] : shape < 0.85 ? [mk(0, true), mk(1)] : [mk(0), mk(1), mk(2)];
    const ids = transfers.map((t) => t.id);
    return newWrite("transfer", "POST", "/v1/ledger/transfers", { transfers }, `ledger.transfers_created||${ids.join(",")}`, ids, { transfers });
  };
  const appendWrite = (id, r) => {
    const sid = r.pick(SESSIONS);
    const messages = Array.from({ length: r.int(1, 3) }, (_, k) => ({ id: `${id}-${k}`, role: k % 2 ? "assistant" : "user", content: `message ${id}-${k} ${r.int(0, 1e9)}` }));
    const ids = messages.map((m) => m.id);
    return newWrite("append", "POST", `/v1/working-memory/${sid}/messages`, { messages }, `working_memory.appended|${sid}|${ids.join(",")}`, ids, { sid, messages });
  };
  const ltmWrite = (id, r) => {
    const memories = Array.from({ length: r.int(1, 3) }, (_, k) => ({ id: `${id}-${k}`, text: `memory ${id}-${k}: the agent noted fact ${r.int(0, 1e9)} about topic ${r.int(0, 40)}`, topics: [`topic${r.int(0, 9)}`] }));
    const ids = memories.map((m) => m.id);
    return newWrite("ltm", "POST", "/v1/long-term-memory", { memories }, `long_term_memory.created||${ids.join(",")}`, ids, { memories });
  };
  const toolWrite = (id, r) => {
    const sid = r.pick(SESSIONS);
    const tool = `tool_${id}`;
    const args = { query: id, page: r.int(1, 9) };
    const result = { value: `${id}`, price: fmtUnits(BigInt(r.int(0, 1e6)), 2) };
    return newWrite("tool", "PUT", `/v1/working-memory/${sid}/tool-cache`, { tool, args, result, ttl_seconds: 86_400 }, `tool_cache.put|${sid}|${tool}`, [tool], { sid, tool, args, result });
  };
  const beginWrite = (it, kind = "begin") => newWrite(kind, "POST", "/v1/ledger/intents", { op: "charge", params: it.params }, `ledger.intent_begun|${it.key}|`, [it.key], { it });
  const completeWrite = (it, outcome) =>
    newWrite("complete", "POST", `/v1/ledger/intents/${it.key}/complete`, { outcome }, `ledger.intent_completed|${it.key}|`, [it.key], { it, outcome });

  // The outside service executeOnce guards: counts its calls per intent.
  const callExternal = (it) => {
    const e = external.get(it.n) ?? { calls: 0, outcome: null };
    e.calls += 1;
    e.outcome = { charge_id: `ch-${it.n}`, amount: fmtUnits(BigInt(it.n * 7 + 1), 2) };
    external.set(it.n, e);
    check(e.calls === 1, `executeOnce ran the outside call ${e.calls} times for intent ${it.n}`);
    return e.outcome;
  };

  /** A fresh write's answer: acknowledged, or pending (maybe landed). */
  const judgeFresh = (w, a, up) => {
    const r = a.r;
    if (r.status === 200) {
      const j = r.json;
      if (w.kind === "transfer") check(j?.results?.length === w.ids.length && j.results.every((x) => x.result === "created"), () => `fresh transfer ${w.ids} answered ${r.text}`);
      if (w.kind === "ltm") check(JSON.stringify(j?.created) === JSON.stringify(w.ids), () => `fresh ltm ${w.ids} answered ${r.text}`);
      if (w.kind === "complete") check(j?.status === "done", () => `complete answered ${r.text}`);
      ack(w, a);
      return true;
    }
    if (up()) {
      // No answer from the runtime while it was up: unacknowledged, like a
      // kill (classified at the next check), and counted. An HTTP error from
      // edgemem itself is an anomaly.
      if (droppedByRuntime(r)) stats.droppedUp += 1;
      else anomalies.push(`${w.method} ${w.path} -> ${r.status} ${r.error ?? r.text.slice(0, 300)}`);
    }
    return false;
  };

  // ---- the load: client loops until the kill -----------------------------
  async function clientLoop(c, r, killState, budget = null) {
    let k = 0;
    const up = () => killState.at === null;
    while (up()) {
      const id = `${budget ? "p" : "e"}${epoch}c${c}n${k++}`;
      // The prefill writes only the cheap kinds (transfers, appends).
      const x = budget ? r() * 0.55 : r();
      if (budget && budget.left-- <= 0) return;
      let w;
      if (x < 0.3) w = transferWrite(`t-${id}`, r);
      else if (x < 0.55) w = appendWrite(`m-${id}`, r);
      else if (x < 0.7) w = ltmWrite(`l-${id}`, r);
      else if (x < 0.76) w = toolWrite(id, r);
      else if (x < 0.84) {
        // executeOnce: begin, call the outside service, complete.
        const n = intents.size;
        const it = { n, params: { n }, key: intentKey("charge", { n }), stage: "begin-sent", beginW: null, completeW: null };
        intents.set(n, it);
        it.beginW = beginWrite(it);
        const a = await send(it.beginW);
        if (!judgeFresh(it.beginW, a, up)) return;
        check(a.r.json.status === "started" && a.r.json.key === it.key, () => `a new intent answered ${a.r.text}`);
        it.stage = "called";
        const outcome = callExternal(it);
        it.completeW = completeWrite(it, outcome);
        const b = await send(it.completeW);
        if (!judgeFresh(it.completeW, b, up)) return;
        it.stage = "done";
        continue;
      } else {
        // A read: its answer must be a 2xx while the server is up.
        const read = r.pick([
          () => ["GET", `/v1/working-memory/${r.pick(SESSIONS)}`],
          () => ["POST", "/v1/long-term-memory/search", { text: `fact about topic ${r.int(0, 40)}`, limit: 5 }],
          () => ["GET", `/v1/ledger/accounts/${r.pick(ACCOUNTS)}`],
          () => ["GET", "/v1/stats"],
        ])();
        inflight += 1;
        const res = await call(baseUrl, read[0], read[1] + Q, read[2]);
        inflight -= 1;
        if (res.status !== 200) {
          if (up() && droppedByRuntime(res)) stats.droppedUp += 1;
          else if (up()) anomalies.push(`${read[0]} ${read[1]} -> ${res.status} ${res.error ?? res.text.slice(0, 300)}`);
          return;
        }
        continue;
      }
      const a = await send(w);
      if (!judgeFresh(w, a, up)) return;
    }
  }

  // ---- what the server holds now -----------------------------------------
  async function readJson(method, path, body) {
    const r = await call(server.url, method, path + Q, body);
    check(r.status === 200, () => `${method} ${path} -> ${r.status} ${r.error ?? r.text.slice(0, 500)}`);
    return r.json;
  }

  async function readFeed(since, last) {
    const events = [];
    let cursor = since;
    while (cursor < last) {
      const r = await call(server.url, "GET", `/v1/events${Q}&since=${cursor}&limit=1000`);
      check(r.status === 200, () => `events since ${cursor} -> ${r.status} ${r.text}`);
      check(!r.json.resync_required, () => `events since ${cursor}: resync_required although the replayed log holds them (last_seq ${last})`);
      check(r.json.events.length > 0, () => `events since ${cursor} empty before last_seq ${last}`);
      events.push(...r.json.events);
      cursor = r.json.events.at(-1).seq;
    }
    return events;
  }

  let prevSeq = 0;
  let prevSnapshotGen = 0;
  let lastStats = null;

  /** The full check after a (re)start. `fp`: the fingerprint an idle kill must keep. */
  async function checkAll(opts = {}) {
    const t = Date.now();
    try {
      await checkAllInner(opts);
    } finally {
      times.check += Date.now() - t;
    }
  }
  async function checkAllInner({ fp = null, full = false } = {}) {
    stats.checks += 1;
    const st = await readJson("GET", "/v1/stats");
    check(st.last_seq >= prevSeq, () => `last_seq went back from ${prevSeq} to ${st.last_seq}: committed ops lost`);
    if (fp) check(st.last_seq === fp.last_seq, () => `idle kill: last_seq ${fp.last_seq} became ${st.last_seq}`);
    // The ring is rebuilt from the log after the snapshot: (base, last_seq].
    const base = st.last_seq - st.log_records_since_snapshot;
    check(base >= 0, () => `stats inconsistent: ${JSON.stringify(st)}`);
    const from = Math.max(prevSeq, base);
    const events = await readFeed(from, st.last_seq);
    events.forEach((e, i) => check(e.seq === from + 1 + i, () => `feed gap: expected seq ${from + 1 + i}, got ${e.seq}`));
    check(events.length === st.last_seq - from, () => `feed: ${events.length} events for (${from}, ${st.last_seq}]`);

    // Sessions: every message once, each append whole or absent.
    const sessions = new Map();
    for (const sid of SESSIONS) {
      const s = await readJson("GET", `/v1/working-memory/${sid}`);
      const ids = countMap(s.messages.map((m) => m.id));
      for (const [id, n] of ids) check(n === 1, () => `session ${sid}: message ${id} present ${n} times`);
      sessions.set(sid, new Map(s.messages.map((m) => [m.id, m])));
    }
    const msgOwner = new Map();
    for (const w of writes) if (w.kind === "append") for (const m of w.messages) msgOwner.set(m.id, w);
    for (const [sid, msgs] of sessions) for (const [id, m] of msgs) {
      const w = msgOwner.get(id);
      check(w && w.sid === sid, () => `session ${sid} holds message ${id} the client never sent there`);
      check(w.messages.find((x) => x.id === id).content === m.content, () => `message ${id}: content changed to ${m.content}`);
    }

    // Ledger: the transfers present, from every account's history.
    const present = new Map(); // transfer id -> history entry
    for (const acc of ACCOUNTS) {
      let cursor = 0;
      const seen = new Map();
      for (;;) {
        const page = await call(server.url, "GET", `/v1/ledger/accounts/${acc}/history${Q}&limit=1000&cursor=${cursor}`);
        check(page.status === 200, () => `history of ${acc}: ${page.status} ${page.text}`);
        for (const e of page.json.entries) {
          check(e.kind === "created", () => `history of ${acc}: unexpected entry ${JSON.stringify(e)}`);
          seen.set(e.transfer_id, (seen.get(e.transfer_id) ?? 0) + 1);
          present.set(e.transfer_id, e);
        }
        if (page.json.next_cursor === null) break;
        cursor = page.json.next_cursor;
      }
      for (const [id, n] of seen) check(n === 1, () => `account ${acc}: transfer ${id} in its history ${n} times`);
    }
    const transferOwner = new Map();
    for (const w of writes) if (w.kind === "transfer") for (const t of w.transfers) transferOwner.set(t.id, { w, t });
    for (const [id, e] of present) {
      const o = transferOwner.get(id);
      check(o, () => `the ledger holds transfer ${id} the client never sent`);
      check(e.debit_account === o.t.debit_account && e.credit_account === o.t.credit_account && e.amount === o.t.amount, () => `transfer ${id} is ${JSON.stringify(e)}, sent ${JSON.stringify(o.t)}`);
    }

    // Long-term memories and tool-cache entries: by id (a sample of the old ones, all when `full`).
    const recent = (w) => w.ackIv !== null && w.ackIv >= iv - 1;
    const ltmToRead = [];
    const toolToRead = [];
    const ltmOld = [];
    const toolOld = [];
    for (const w of writes) {
      if (w.kind !== "ltm" && w.kind !== "tool") continue;
      const needed = full || !w.acked || recent(w);
      (w.kind === "ltm" ? (needed ? ltmToRead : ltmOld) : needed ? toolToRead : toolOld).push(w);
    }
    const sample = (xs, k) => {
      const pool = [...xs];
      const out = [];
      while (out.length < k && pool.length) out.push(pool.splice(pick.int(0, pool.length - 1), 1)[0]);
      return out;
    };
    ltmToRead.push(...sample(ltmOld, LTM_SAMPLE));
    toolToRead.push(...sample(toolOld, TOOL_SAMPLE));
    const ltmPresent = new Map(); // w.n -> number of its ids present
    await pool(
      ltmToRead.flatMap((w) => w.memories.map((m) => ({ w, m }))),
      8,
      async ({ w, m }) => {
        const r = await call(server.url, "GET", `/v1/long-term-memory/${m.id}${Q}`);
        check(r.status === 200 || r.status === 404, () => `GET memory ${m.id}: ${r.status} ${r.text}`);
        if (r.status === 200) {
          check(r.json.id === m.id && r.json.text === m.text, () => `memory ${m.id} reads back as ${r.text.slice(0, 300)}`);
          ltmPresent.set(w.n, (ltmPresent.get(w.n) ?? 0) + 1);
        }
      },
    );
    const toolPresent = new Map();
    await pool(toolToRead, 8, async (w) => {
      const r = await call(server.url, "GET", `/v1/working-memory/${w.sid}/tool-cache${Q}&tool=${encodeURIComponent(w.tool)}&args=${encodeURIComponent(JSON.stringify(w.args))}`);
      check(r.status === 200, () => `tool-cache get ${w.tool}: ${r.status} ${r.text}`);
      if (r.json.hit) {
        check(same(r.json.entry.result, w.result), () => `tool-cache ${w.tool} holds ${JSON.stringify(r.json.entry)}`);
        toolPresent.set(w.n, 1);
      }
    });

    // Intents.
    const open = new Set((await readJson("GET", "/v1/ledger/intents")).open.map((i) => i.key));
    const intentOf = new Map([...intents.values()].map((it) => [it.key, it]));
    for (const key of open) {
      const it = intentOf.get(key);
      check(it && it.stage !== "done", () => `intent ${key} is open though the client ${it ? "completed it (acknowledged)" : "never began it"}`);
    }

    // Each write: whole or absent; acknowledged or landed => present;
    // classified absent and not retried since => still absent.
    const presentCount = (w) => {
      switch (w.kind) {
        case "transfer":
          return w.ids.filter((id) => present.has(id)).length;
        case "append":
          return w.ids.filter((id) => sessions.get(w.sid).has(id)).length;
        case "ltm":
          return ltmPresent.get(w.n) ?? 0;
        case "tool":
          return toolPresent.get(w.n) ?? 0;
        case "begin":
          // Begun and not completed is open; the client completes only after an acknowledged begin.
          return w.it.stage === "begin-sent" ? (open.has(w.it.key) ? 1 : 0) : null;
        case "complete":
          return w.it.stage === "done" ? (open.has(w.it.key) ? 0 : 1) : open.has(w.it.key) ? 0 : 1;
        default:
          return null;
      }
    };
    const read = new Set([...ltmToRead, ...toolToRead].map((w) => w.n));
    for (const w of writes) {
      if ((w.kind === "ltm" || w.kind === "tool") && !read.has(w.n)) continue;
      if (w.kind === "setup" || w.kind === "rebegin") continue;
      const n = presentCount(w);
      if (n === null) continue;
      check(n === 0 || n === w.ids.length, () => `${w.kind} ${w.ids}: ${n} of ${w.ids.length} parts present (one request is one op)`);
      const here = n > 0;
      if (w.acked) {
        check(here, () => `ACKNOWLEDGED ${w.kind} ${w.ids} (sent in epoch ${w.epoch}) is missing after the restart`);
      } else if (w.landed === null) {
        w.landed = here;
        if (here) stats.unackedLanded += 1;
        else stats.unackedNotLanded += 1;
        const sent = attempts.filter((a) => a.w === w);
        const refused = sent.length > 0 && sent.every((a) => a.refused);
        check(!(here && refused), () => `${w.kind} ${w.ids} landed though its only request was refused`);
        if (refused) stats.unackedRefused += 1;
        for (const a of attempts) if (a.w === w && a.outcome === "maybe") a.outcome = here ? "yes" : "no";
      } else {
        check(here === w.landed, () => `unacknowledged ${w.kind} ${w.ids} was ${w.landed ? "present" : "absent"} and is now ${here ? "present" : "absent"} with no retry`);
      }
    }
    // Transfers: the ledger holds exactly the acknowledged and the landed ones.
    const expectedTransfers = new Map();
    for (const w of writes) if (w.kind === "transfer" && (w.acked || w.landed)) for (const t of w.transfers) expectedTransfers.set(t.id, t);
    check(expectedTransfers.size === present.size, () => `ledger holds ${present.size} transfers, the client counts ${expectedTransfers.size}`);

    // Balances: the sum of the distinct transfers present, per account.
    const sums = new Map(ACCOUNTS.map((a) => [a, { d: 0n, c: 0n }]));
    for (const t of expectedTransfers.values()) {
      sums.get(t.debit_account).d += parseUnits(t.amount, SCALE);
      sums.get(t.credit_account).c += parseUnits(t.amount, SCALE);
    }
    const accounts = {};
    for (const acc of ACCOUNTS) {
      const a = await readJson("GET", `/v1/ledger/accounts/${acc}`);
      accounts[acc] = a;
      const { d, c } = sums.get(acc);
      check(parseUnits(a.debits_posted, SCALE) === d && parseUnits(a.credits_posted, SCALE) === c, () => `account ${acc}: debits ${a.debits_posted} credits ${a.credits_posted}, the transfers present sum to ${fmtUnits(d, SCALE)} / ${fmtUnits(c, SCALE)}`);
      check(a.debits_pending === "0.00" && a.credits_pending === "0.00", () => `account ${acc} has pending amounts: ${JSON.stringify(a)}`);
    }
    const statement = ACCOUNTS.map((acc) => ({ account: acc, balance: fmtUnits(sums.get(acc).c - sums.get(acc).d, SCALE) }));
    const rec = await readJson("POST", "/v1/ledger/reconcile", { statement });
    check(rec.ok === true && rec.differences.length === 0 && rec.statement_differences.length === 0, () => `reconcile: ${JSON.stringify(rec)}`);
    check(rec.transfers === expectedTransfers.size, () => `reconcile counts ${rec.transfers} transfers, expected ${expectedTransfers.size}`);

    // The op log: its events over the interval are exactly the writes that
    // took effect (acknowledged, or found landed), each once.
    const evSigs = countMap(events.map((e) => `${e.kind}|${e.key ?? ""}|${(e.ids ?? []).join(",")}`));
    const yes = countMap(attempts.filter((a) => a.iv === iv && a.outcome === "yes").map((a) => a.w.sig));
    const maybe = attempts.filter((a) => a.iv === iv && a.outcome === "maybe");
    check(maybe.length === 0, () => `unclassified attempts: ${maybe.map((a) => a.w.sig)}`);
    if (from === prevSeq) {
      stats.fullFeed += 1;
      check(JSON.stringify(sortedEntries(evSigs)) === JSON.stringify(sortedEntries(yes)), () => {
        const extra = [...evSigs].filter(([s, n]) => n > (yes.get(s) ?? 0));
        const missing = [...yes].filter(([s, n]) => n > (evSigs.get(s) ?? 0));
        return `op log over (${from}, ${st.last_seq}] differs from the writes that took effect: in the log only ${JSON.stringify(extra)}, missing from the log ${JSON.stringify(missing)}`;
      });
    } else {
      stats.partialFeed += 1;
      for (const [s, n] of evSigs) check(n <= (yes.get(s) ?? 0), () => `op log holds ${n}× ${s}, only ${yes.get(s) ?? 0} such writes took effect`);
    }

    if (fp) {
      const now = await fingerprint(accounts, rec, open);
      check(JSON.stringify(now) === JSON.stringify(fp), () => `idle kill changed the state:\nbefore ${JSON.stringify(fp).slice(0, 2000)}\nafter  ${JSON.stringify(now).slice(0, 2000)}`);
    }
    check(st.snapshot_gen >= prevSnapshotGen, () => `snapshot generation went back from ${prevSnapshotGen} to ${st.snapshot_gen}`);
    prevSnapshotGen = st.snapshot_gen;
    lastStats = st;
    prevSeq = st.last_seq;
    iv += 1;
  }

  /** What must survive an idle kill unchanged. */
  async function fingerprint(accounts, rec, open) {
    const st = await readJson("GET", "/v1/stats");
    const sessions = [];
    for (const sid of SESSIONS) sessions.push(await readJson("GET", `/v1/working-memory/${sid}`));
    const ltm = [];
    for (const w of writes.filter((w) => w.kind === "ltm" && (w.acked || w.landed)).slice(-10)) for (const m of w.memories) ltm.push(await readJson("GET", `/v1/long-term-memory/${m.id}`));
    return { last_seq: st.last_seq, snapshot_gen: st.snapshot_gen, sessions, accounts, journal_head: rec.journal_head, journal_entries: rec.journal_entries, transfers: rec.transfers, open: [...open].sort(), ltm };
  }
  async function fingerprintNow() {
    const accounts = {};
    for (const acc of ACCOUNTS) accounts[acc] = await readJson("GET", `/v1/ledger/accounts/${acc}`);
    const rec = await readJson("POST", "/v1/ledger/reconcile", {});
    const open = new Set((await readJson("GET", "/v1/ledger/intents")).open.map((i) => i.key));
    return fingerprint(accounts, rec, open);
  }

  // ---- retries of what never got an answer --------------------------------
  async function retryPhase(all) {
    const up = () => true;
    for (const w of writes) {
      if (w.acked || w.landed === null || !["transfer", "append", "ltm", "tool"].includes(w.kind)) continue;
      if (!all && !pick.chance(0.6)) continue;
      const a = await send(w);
      stats.retries += 1;
      w.retried += 1;
      const r = a.r;
      if (w.kind === "append" && w.landed) {
        check(r.status === 422 && r.json?.code === "invalid_input" && /duplicate message id/.test(r.json.detail), () => `retry of a landed append ${w.ids} answered ${r.status} ${r.text}`);
        a.outcome = "no";
        w.acked = true; // it stands, exactly once
        w.ackIv = iv;
        continue;
      }
      check(r.status === 200, () => `retry of ${w.kind} ${w.ids} answered ${r.status} ${r.error ?? r.text}`);
      if (w.kind === "transfer") {
        const want = w.landed ? "exists" : "created";
        check(r.json.results.every((x) => x.result === want), () => `retry of ${w.landed ? "a landed" : "an unlanded"} transfer ${w.ids} answered ${r.text} (want ${want})`);
      }
      if (w.kind === "ltm") {
        // A create is idempotent (issue 20): a landed one answers duplicate_of itself.
        const ok = w.landed
          ? w.ids.every((id, i) => r.json.results?.[i]?.status === "duplicate_of" && r.json.results[i].duplicate_of === id)
          : JSON.stringify(r.json.created) === JSON.stringify(w.ids);
        check(ok, () => `retry of ${w.landed ? "a landed" : "an unlanded"} ltm ${w.ids} answered ${r.text}`);
      }
      ack(w, a);
    }
    // executeOnce recovery, as a client that restarted would do it.
    for (const it of intents.values()) {
      if (it.stage === "done" || (!all && !pick.chance(0.6))) continue;
      stats.retries += 1;
      if (it.stage === "begin-sent") {
        const a = await send(it.beginW);
        check(a.status === 200, () => `re-begin of intent ${it.n}: ${a.status} ${a.r.text}`);
        const want = it.beginW.landed ? "open" : "started";
        check(a.r.json.status === want, () => `re-begin of intent ${it.n} (begin ${it.beginW.landed ? "landed" : "not landed"}) answered ${a.r.json.status}`);
        ack(it.beginW, a);
        // Open: verify with the outside service; it was never called, so call it now.
        check((external.get(it.n)?.calls ?? 0) === 0, `intent ${it.n}: outside service already called before its begin was answered`);
        it.stage = "called";
        const outcome = callExternal(it);
        it.completeW = completeWrite(it, outcome);
        const b = await send(it.completeW);
        check(judgeFresh(it.completeW, b, up), () => `complete of intent ${it.n}: ${b.status} ${b.r.text}`);
        it.stage = "done";
      } else if (it.stage === "called") {
        // Begin again to learn where it stands: never `started` (the begin was acknowledged).
        const rb = beginWrite(it, "rebegin");
        const a = await send(rb);
        check(a.status === 200, () => `re-begin of intent ${it.n}: ${a.status} ${a.r.text}`);
        ack(rb, a);
        check(a.r.json.status !== "started", () => `ACKNOWLEDGED begin of intent ${it.n} was lost: re-begin answered started`);
        const e = external.get(it.n);
        if (a.r.json.status === "done") {
          check(it.completeW.landed === true, `intent ${it.n} is done though its completion was found not landed`);
          check(same(a.r.json.outcome, e.outcome), () => `intent ${it.n} outcome ${JSON.stringify(a.r.json.outcome)}, the outside service says ${JSON.stringify(e.outcome)}`);
          it.completeW.acked = true;
          it.completeW.ackIv = iv;
        } else {
          check(a.r.json.status === "open" && it.completeW.landed === false, () => `re-begin of intent ${it.n} answered ${a.r.text} (completion landed: ${it.completeW.landed})`);
          // Verified with the outside service: called once, here is its outcome. No second call.
          check(e.calls === 1, `intent ${it.n}: outside service calls ${e.calls}`);
          const b = await send(it.completeW);
          check(b.status === 200 && b.r.json.status === "done", () => `complete of intent ${it.n}: ${b.status} ${b.r.text}`);
          ack(it.completeW, b);
        }
        it.stage = "done";
      }
    }
    if (all) {
      // A done intent stays done, with its outcome, and is never run again.
      for (const it of intents.values()) {
        const rb = beginWrite(it, "rebegin");
        const a = await send(rb);
        check(a.status === 200 && a.r.json.status === "done", () => `intent ${it.n} re-begun after completion answered ${a.r.text}`);
        ack(rb, a);
        check(same(a.r.json.outcome, external.get(it.n).outcome), () => `intent ${it.n}: outcome ${JSON.stringify(a.r.json.outcome)}`);
      }
    }
  }

  async function start() {
    const t = Date.now();
    server = await spawnWrangler(ROOT, { persistDir: dir, vars: VARS });
    baseUrl = server.url;
    return Date.now() - t;
  }
  async function kill() {
    const pids = await server.kill();
    check(pids.length > 0, "no workerd process found under wrangler to kill");
    stats.kills += 1;
    stats.workerdKilled += pids.length;
    server = null;
  }

  const startups = [];
  const times = { check: 0, load: 0, retry: 0 };
  try {
    startups.push(await start());
    // Setup, acknowledged before any other write.
    const setup = [
      ["POST", "/v1/ledger/assets", { code: "USD", scale: SCALE }, "ledger.asset_created|USD|"],
      ...ACCOUNTS.map((id) => ["POST", "/v1/ledger/accounts", { id, asset: "USD" }, `ledger.account_created|${id}|`]),
      ...SESSIONS.map((sid) => ["PUT", `/v1/working-memory/${sid}`, { data: { chaos: true } }, `working_memory.updated|${sid}|`]),
    ];
    for (const [method, path, body, sig] of setup) {
      const w = newWrite("setup", method, path, body, sig, []);
      const a = await send(w);
      check(a.status === 200, () => `setup ${method} ${path}: ${a.status} ${a.r.text}`);
      ack(w, a);
    }
    await checkAll();

    for (epoch = 1; epoch <= KILLS; epoch++) {
      let t = Date.now();
      await retryPhase(false);
      times.retry += Date.now() - t;
      if (idleEpochs.has(epoch)) {
        // An idle kill besides: nothing in flight, so the store must reopen
        // with exactly the state it had.
        const fp = await fingerprintNow();
        await kill();
        stats.idleKills += 1;
        startups.push(await start());
        await checkAll({ fp });
      }
      t = Date.now();
      if (epoch === Math.ceil(KILLS / 2) && lastStats.log_records_since_snapshot < SNAPSHOT_EVERY_OPS - 60) {
        // Bring the log close to the snapshot threshold, so that a snapshot
        // is written while this epoch's load runs and the kill may hit it.
        const budget = { left: SNAPSHOT_EVERY_OPS - lastStats.log_records_since_snapshot - prefillMargin };
        stats.prefill = budget.left;
        const never = { at: null };
        const loops = Array.from({ length: CLIENTS }, (_, c) => clientLoop(c, prng((SEED ^ (epoch * 7717 + c * 99991)) >>> 0), never, budget));
        const results = await Promise.allSettled(loops);
        for (const r of results) if (r.status === "rejected") throw r.reason;
        check(anomalies.length === 0, () => `answers other than 2xx while the server was up:\n${anomalies.slice(0, 20).join("\n")}`);
        const unanswered = writes.filter((w) => !w.acked && w.epoch === epoch).length;
        check(unanswered <= stats.droppedUp, `${unanswered} writes of the prefill went unanswered with the server up`);
      }
      // The kill under load: client loops run until workerd is SIGKILLed
      // after a random delay, with requests in flight.
      const killState = { at: null };
      const delay = rng.chance(0.1) ? rng.int(0, 80) : rng.int(100, 2000);
      const loops = Array.from({ length: CLIENTS }, (_, c) => clientLoop(c, prng((SEED ^ (epoch * 7919 + c * 104729)) >>> 0), killState));
      const killer = (async () => {
        await sleep(delay);
        killState.at = performance.now();
        inflightAtKill.push(inflight);
        await kill();
      })();
      // A client loop that throws (a failed check) must not leave the killer behind.
      const results = await Promise.allSettled([...loops, killer]);
      for (const r of results) if (r.status === "rejected") throw r.reason;
      times.load += Date.now() - t;
      startups.push(await start());
      check(anomalies.length === 0, () => `answers other than 2xx while the server was up:\n${anomalies.slice(0, 20).join("\n")}`);
      await checkAll();
    }

    // The end: resolve everything still pending, then one idle kill, and a
    // full check (every acknowledged memory read back by id).
    await retryPhase(true);
    await checkAll();
    const fp = await fingerprintNow();
    await kill();
    stats.idleKills += 1;
    startups.push(await start());
    await checkAll({ fp, full: true });
    const pendingLeft = writes.filter((w) => !w.acked);
    check(pendingLeft.length === 0, () => `writes still unresolved at the end: ${pendingLeft.map((w) => `${w.kind} ${w.ids}`)}`);
    check([...intents.values()].every((it) => it.stage === "done"), "intents left open at the end");
    check([...external.values()].every((e) => e.calls === 1), "an intent's outside call ran other than once");
    passed = true;
  } finally {
    if (server) await server.kill().catch(() => {});
    if (passed) rmSync(dir, { recursive: true, force: true });
    else console.log(`chaos: failed with seed ${SEED}; persisted state kept in ${dir}`);
  }

  const counted = (w) => w.acked && w.kind !== "setup" && w.kind !== "rebegin";
  const byKind = countMap(writes.filter(counted).map((w) => w.kind));
  const acked = writes.filter(counted).length;
  const wall = ((Date.now() - t0) / 1000).toFixed(1);
  const med = [...startups].sort((a, b) => a - b)[Math.floor(startups.length / 2)];
  console.log(
    `chaos: ${stats.kills} kills survived, ${acked} acknowledged writes checked, unacknowledged writes: ${stats.unackedLanded} landed, ${stats.unackedNotLanded} not landed (seed ${SEED}, wall ${wall} s)`,
  );
  console.log(
    `chaos: details: ${stats.kills - stats.idleKills} kills under load (requests in flight at the kill: min ${Math.min(...inflightAtKill)}, max ${Math.max(...inflightAtKill)}) and ${stats.idleKills} idle (state compared whole after each), ${stats.workerdKilled} workerd processes SIGKILLed; ` +
      `acknowledged ${sortedEntries(byKind).map(([k, n]) => `${k} ${n}`).join(", ")}; ` +
      `${stats.unackedRefused} unacknowledged writes were refused (sent after a kill); ${stats.retries} retries, none applied twice; ` +
      `${stats.droppedUp} requests dropped by the runtime while it was up; ` +
      `${stats.checks} checks (op log compared whole over ${stats.fullFeed} intervals, partly over ${stats.partialFeed}); ` +
      `${stats.prefill ?? 0} writes of prefill before epoch ${Math.ceil(KILLS / 2)}; final last_seq ${lastStats.last_seq}, snapshot generation ${lastStats.snapshot_gen}; ` +
      `startup median ${med} ms (total ${(startups.reduce((a, b) => a + b, 0) / 1000).toFixed(1)} s), checks ${(times.check / 1000).toFixed(1)} s, load ${(times.load / 1000).toFixed(1)} s, retries ${(times.retry / 1000).toFixed(1)} s`,
  );
});
