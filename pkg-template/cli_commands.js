// The `edgemem` commands: each one names its options and runs against the
// target's one door (`t.request`), so it works the same on a Worker and on a
// local store. Argument parsing, help and exit codes live in cli.js.
import { readFile, stat } from "node:fs/promises";
import { randomUUID } from "node:crypto";
import { CEILING_ENCODING, CliError, EXIT, ok, usage } from "./cli_transport.js";
import { LIMITS } from "./limits.js";

/** The largest `--file` read (a prompt, a text to count). */
export const CLI_FILE_BYTES_MAX = 1024 * 1024;

/** Rounds of `memory forget --user` (each deletes up to a batch). */
export const FORGET_ROUNDS_MAX = 1000;

/** Decision entries asked for per page by `logs` (the server's maximum). */
export const LOGS_PAGE_MAX = 1000;

/** Consecutive failed reconnects after which `logs --follow` gives up. */
export const FOLLOW_RECONNECTS_MAX = 10;

const FOLLOW_BACKOFF_MS = [250, 500, 1000, 2000, 5000];
const FORGET_BATCH = 1000;
const DECISION_KINDS = ["observation", "reasoning", "decision", "action", "offer", "error"];
// A decimal string as the ledger takes it; anything else (1e3, 0x10, .5,
// 12,50) would be guessed at, and money is never guessed.
const DECIMAL = /^[0-9]+(\.[0-9]+)?$/;

const seg = (s) => encodeURIComponent(s);
const agentPath = (a) => `/v1/agents/${seg(a)}`;
const oneLine = (s) => String(s ?? "").replace(/\r?\n/g, "\\n");

function int(value, name, min = 0) {
  if (value === undefined) return undefined;
  if (!/^[0-9]+$/.test(value) || Number(value) < min || !Number.isSafeInteger(Number(value))) throw usage(`--${name} must be an integer of at least ${min}, not ${JSON.stringify(value)}`);
  return Number(value);
}

function need(v, name) {
  if (v[name] === undefined || v[name] === "") throw usage(`--${name} is required`);
  return v[name];
}

/** Reads stdin to its end, refusing more than `max` bytes. */
async function readStdin(stdin, max = CLI_FILE_BYTES_MAX) {
  const chunks = [];
  let bytes = 0;
  for await (const chunk of stdin) {
    bytes += chunk.length;
    if (bytes > max) throw usage(`--file - (stdin) has more than ${max} bytes`);
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Reads a `--file`, refusing one past {@link CLI_FILE_BYTES_MAX} before
 * reading it. `-` is stdin, the only way stdin is ever read: a CI job with
 * no stdin must never wait on it.
 */
async function readTextFile(path, stdin, max = CLI_FILE_BYTES_MAX) {
  if (path === "-") return readStdin(stdin, max);
  let info;
  try {
    info = await stat(path);
  } catch (err) {
    throw usage(`cannot read --file ${path}: ${err.code ?? err.message}`);
  }
  if (!info.isFile()) throw usage(`--file ${path} is not a file`);
  if (info.size > max) throw usage(`--file ${path} has ${info.size} bytes, more than ${max}`);
  return readFile(path, "utf8");
}

// ---- export / import ----

/** `edgemem export [--vectors]`: the namespace as NDJSON on stdout. */
async function exportState(c) {
  const text = ok(await c.t.request("GET", "/v1/export", { query: { vectors: c.v.vectors ? "f32" : "none" } }));
  if (typeof text !== "string") throw new CliError(EXIT.SERVER, "internal", "the export is not NDJSON");
  for (const line of text.split("\n")) if (line !== "") c.out(line);
}

/** `edgemem import --file F`: an export into an empty namespace. */
async function importState(c) {
  const text = await readTextFile(need(c.v, "file"), c.stdin, LIMITS.IMPORT_BYTES_MAX);
  const r = ok(await c.t.request("POST", "/v1/import", { body: text }));
  emit(c, r, r.imported ? `imported ${r.sessions} sessions and ${r.memories} long-term memories (last seq ${r.last_seq})` : "already imported: nothing changed");
}

/** Prints `json` with --json, else each human line. */
function emit(c, json, lines) {
  if (c.json) c.out(JSON.stringify(json));
  else for (const line of [].concat(typeof lines === "function" ? lines() : lines)) c.out(line);
}

function printConfigLine(c, cfg, what) {
  emit(c, cfg, `agent ${cfg.agent_id}: ${what}, version ${cfg.active_version} active`);
}

// ---- prompt ----

async function promptSet(c) {
  const agent = need(c.v, "agent");
  const text = await readTextFile(need(c.v, "file"), c.stdin);
  const res = await c.t.request("PUT", `${agentPath(agent)}/prompt`, { body: { text, note: c.v.note } });
  if (res.status === 422 && res.json?.code === "guardrail_violated") {
    if (!c.json) c.out("Validating safety guardrails... FAILED");
    throw new CliError(EXIT.REFUSED, "guardrail_violated", res.json.detail);
  }
  const cfg = ok(res);
  if (!c.json) c.out("Validating safety guardrails... OK");
  printConfigLine(c, cfg, "prompt set");
}

async function promptPatch(c) {
  const agent = need(c.v, "agent");
  const { append, remove } = c.v;
  if ((append === undefined) === (remove === undefined)) throw usage("give exactly one of --append TEXT and --remove GLOB");
  if (append !== undefined) {
    const cfg = ok(await c.t.request("POST", `${agentPath(agent)}/patches`, { body: { text: append } }));
    const added = cfg.patches?.[cfg.patches.length - 1];
    return emit(c, cfg, `agent ${agent}: patch ${added?.id ?? "?"} appended (${cfg.patches?.length ?? 0} active)`);
  }
  const cfg = ok(await c.t.request("DELETE", `${agentPath(agent)}/patches`, { query: { glob: remove } }));
  const removed = cfg.removed ?? [];
  emit(c, cfg, `agent ${agent}: removed ${removed.length} patch${removed.length === 1 ? "" : "es"}${removed.length ? `: ${removed.join(", ")}` : ""}`);
}

async function promptHistory(c) {
  const cfg = ok(await c.t.request("GET", `${agentPath(need(c.v, "agent"))}/config`));
  emit(c, cfg, () => [
    ...(cfg.versions ?? []).map((v) => `${v.version === cfg.active_version ? "*" : " "} v${v.version}  ${v.created_at}  ${v.note ?? ""}  ${oneLine(v.text.trim()).slice(0, 60)}`.trimEnd()),
    ...(cfg.patches ?? []).map((p) => `  patch ${p.id}  ${p.created_at}  ${oneLine(p.text.trim()).slice(0, 60)}`),
  ]);
}

async function promptRollback(c) {
  const agent = need(c.v, "agent");
  // `prompt history` prints versions as v2: take them as printed.
  const version = int(c.args[0].replace(/^v/i, ""), "version (the positional V)", 1);
  printConfigLine(c, ok(await c.t.request("POST", `${agentPath(agent)}/prompt/rollback`, { body: { version } })), `rolled back to v${version}`);
}

function guardrailLines(agent, g = {}) {
  return [
    `agent ${agent} guardrails:`,
    ...(g.required ?? []).map((r) => `  required: ${JSON.stringify(r)}`),
    ...(g.forbidden ?? []).map((f) => `  forbidden: ${JSON.stringify(f)}`),
    `  tokens_max: ${g.tokens_max ?? "none"}`,
  ];
}

/**
 * Shows the rules, or sets them. The route replaces every rule at once,
 * so a kind of rule not given is read back first and kept (a kind given
 * replaces that kind's list); `--replace` sets exactly what is given.
 * Between the read and the write another writer's change to the kept
 * kinds can be lost: the route has no compare-and-set to prevent it.
 */
async function promptGuardrails(c) {
  const agent = need(c.v, "agent");
  const { require: required, forbid, "tokens-max": tokensMax, replace } = c.v;
  const ceiling = tokensMax === undefined || tokensMax === "none" ? null : int(tokensMax, "tokens-max", 1);
  if (required === undefined && forbid === undefined && tokensMax === undefined && !replace) {
    const cfg = ok(await c.t.request("GET", `${agentPath(agent)}/config`));
    return emit(c, cfg.guardrails ?? {}, guardrailLines(agent, cfg.guardrails));
  }
  let kept = {};
  if (!replace) {
    const res = await c.t.request("GET", `${agentPath(agent)}/config`);
    // An agent with no config yet has no rules to keep.
    if (!(res.status === 404 && res.json?.code === "not_found")) kept = ok(res).guardrails ?? {};
  }
  const body = {
    required: required ?? kept.required ?? [],
    forbidden: forbid ?? kept.forbidden ?? [],
    tokens_max: tokensMax !== undefined ? ceiling : kept.tokens_max ?? null,
  };
  const cfg = ok(await c.t.request("PUT", `${agentPath(agent)}/guardrails`, { body }));
  emit(c, cfg, guardrailLines(agent, cfg.guardrails));
}

// ---- logs and decisions ----

const decisionsPath = (s) => `/v1/working-memory/${seg(s)}/decisions`;
const entryLine = (e) => `#${e.seq} ${e.ts} ${e.kind} ${oneLine(e.text)}`;

function kindsOf(v) {
  if (v.kinds === undefined) return undefined;
  const kinds = v.kinds.split(",").map((k) => k.trim()).filter(Boolean);
  const bad = kinds.find((k) => !DECISION_KINDS.includes(k));
  if (bad !== undefined || kinds.length === 0) throw usage(`--kinds takes a comma-separated list of ${DECISION_KINDS.join(", ")}${bad ? `, not ${JSON.stringify(bad)}` : ""}`);
  return kinds.join(",");
}

/** Prints the entries after `since` (every page); resolves to the last seq printed. */
async function printDecisions(c, session, { since, kinds, limit }) {
  let printed = 0;
  for (;;) {
    const page = Math.min(LOGS_PAGE_MAX, limit === undefined ? LOGS_PAGE_MAX : limit - printed);
    if (page <= 0) return since;
    const r = ok(await c.t.request("GET", decisionsPath(session), { query: { kinds, since: since ?? undefined, limit: page } }));
    for (const e of r.entries ?? []) {
      c.out(c.json ? JSON.stringify(e) : entryLine(e));
      since = e.seq;
      printed += 1;
    }
    if ((r.entries ?? []).length < page) return since ?? r.last_seq ?? 0;
  }
}

/** Waits `ms`, or less if `signal` aborts; leaves no listener behind. */
function sleep(ms, signal) {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

async function logs(c) {
  const session = need(c.v, "session");
  const kinds = kindsOf(c.v);
  let since = int(c.v.since, "since");
  const limit = int(c.v.limit, "limit", 1);
  if (!c.v.follow) return void (await printDecisions(c, session, { since, kinds, limit }));
  const feed = { kinds: ["decision.appended"], keys: [session] };
  if (c.t.kind === "local") {
    // Subscribe first, then read: an entry appended in between is still seen.
    let wake = () => {};
    let dirty = false;
    const stop = await c.t.subscribe(feed, () => {
      dirty = true;
      wake();
    });
    c.signal.addEventListener("abort", () => wake(), { once: true });
    try {
      since = await printDecisions(c, session, { since, kinds });
      while (!c.signal.aborted) {
        if (!dirty) await new Promise((r) => (wake = r));
        dirty = false;
        if (!c.signal.aborted) since = await printDecisions(c, session, { since, kinds });
      }
    } finally {
      stop();
    }
    return;
  }
  // Over HTTP: server-sent events say when; decisions with `since` say what.
  // Each (re)connect reads once the stream is open, so an entry appended
  // while it was closed or opening is not missed.
  let failures = 0;
  while (!c.signal.aborted) {
    try {
      for await (const ev of c.t.events("/v1/events", { query: { kinds: feed.kinds.join(","), keys: session }, signal: c.signal })) {
        if (ev.event === "close") break;
        if (ev.event === "open") failures = 0;
        since = await printDecisions(c, session, { since, kinds });
      }
    } catch (err) {
      if (!(err instanceof CliError) || err.exit !== EXIT.SERVER || ++failures > FOLLOW_RECONNECTS_MAX) throw err;
    }
    if (c.signal.aborted) return;
    // The stream ended (a restart, a slow-consumer close): reconnect after a pause.
    await sleep(FOLLOW_BACKOFF_MS[Math.min(failures, FOLLOW_BACKOFF_MS.length - 1)], c.signal);
  }
}

async function decisionsAdd(c) {
  const kind = need(c.v, "kind");
  if (!DECISION_KINDS.includes(kind)) throw usage(`--kind must be one of ${DECISION_KINDS.join(", ")}`);
  const e = ok(await c.t.request("POST", decisionsPath(need(c.v, "session")), { body: { kind, text: need(c.v, "text") } }));
  emit(c, e, entryLine(e));
}

// ---- memory ----

const recordLine = (m) => `${m.id}  ${m.score === undefined ? "" : Number(m.score).toFixed(3) + "  "}${oneLine(m.text).slice(0, 100)}`;

async function memorySearch(c) {
  if (c.args.length !== 1) throw usage("memory search takes one TEXT");
  const mode = c.v.mode;
  if (mode !== undefined && !["semantic", "keyword", "hybrid"].includes(mode)) throw usage("--mode must be semantic, keyword or hybrid");
  const body = { text: c.args[0], limit: int(c.v.limit, "limit", 1), search_mode: mode };
  if (c.v.user !== undefined) body.user_id = { eq: c.v.user };
  const r = ok(await c.t.request("POST", "/v1/long-term-memory/search", { body }));
  emit(c, r, () => [...r.memories.map(recordLine), `(${r.memories.length} of ${r.total})`]);
}

async function memoryGet(c) {
  if (c.args.length !== 1) throw usage("memory get takes one ID");
  const m = ok(await c.t.request("GET", `/v1/long-term-memory/${seg(c.args[0])}`));
  emit(c, m, () => [
    `id: ${m.id}`,
    `text: ${m.text}`,
    ...["user_id", "session_id", "namespace", "memory_type", "created_at", "last_accessed"].filter((k) => m[k] != null).map((k) => `${k}: ${m[k]}`),
    ...(m.topics?.length ? [`topics: ${m.topics.join(", ")}`] : []),
  ]);
}

async function memoryVersions(c) {
  if (c.args.length !== 1) throw usage("memory versions takes one ID");
  const r = ok(await c.t.request("GET", `/v1/long-term-memory/${seg(c.args[0])}/versions`));
  emit(c, r, () => r.versions.map((v) => `${v.version}${v.version === r.current ? "*" : " "} ${v.ts}  ${v.op.padEnd(7)} ${v.actor}  ${v.text === null ? `(${v.text_hash.slice(0, 12)})` : oneLine(v.text).slice(0, 80)}`));
}

async function memoryRestore(c) {
  // Positional: --version is the CLI's own flag.
  if (c.args.length !== 2) throw usage("memory restore takes an ID and a VERSION");
  const version = int(c.args[1], "version", 1);
  const m = ok(await c.t.request("POST", `/v1/long-term-memory/${seg(c.args[0])}/restore`, { body: { version } }));
  emit(c, m, `${m.id}: version ${m.restored_from} restored as version ${m.version}`);
}

async function memoryRedact(c) {
  if (c.args.length !== 1) throw usage("memory redact takes one ID");
  const r = ok(await c.t.request("POST", `/v1/long-term-memory/${seg(c.args[0])}/redact`));
  emit(c, r, `${r.id}: redacted (${r.redacted_versions} versions lost their text) by ${r.redacted_by} at ${r.redacted_at}`);
}

/** How a DELETE by id reports its count: "ok, deleted N memories". */
const DELETED_COUNT = /\bdeleted (\d+) memor/;

/**
 * Forgets memories by id, reporting the same shape with or without
 * `--dry-run`. The route answers only a count, so each id goes in a
 * request of its own: its count says whether that id was there (a
 * concurrent delete shows as not found, never as deleted twice).
 */
async function forgetIds(c, ids, dry) {
  const deleted = [];
  const missing = [];
  for (const id of ids) {
    if (dry) {
      const res = await c.t.request("GET", `/v1/long-term-memory/${seg(id)}`);
      if (res.status === 404) missing.push(id);
      else deleted.push(ok(res));
      continue;
    }
    const r = ok(await c.t.request("DELETE", "/v1/long-term-memory", { query: { memory_ids: id } }));
    const n = DELETED_COUNT.exec(r?.status ?? "");
    if (!n) throw new CliError(EXIT.SERVER, "unexpected_response", `deleting ${id}: cannot read the count in ${JSON.stringify(r)}`);
    if (Number(n[1]) > 0) deleted.push({ id });
    else missing.push(id);
  }
  const report = { dry_run: dry, deleted: deleted.length, deleted_ids: deleted.map((m) => m.id), not_found: missing };
  const n = deleted.length;
  emit(c, report, [`${dry ? "would delete" : "deleted"} ${n} memor${n === 1 ? "y" : "ies"}${n ? ":" : ""}`, ...deleted.map((m) => (dry ? recordLine(m) : `  ${m.id}`)), ...missing.map((id) => `not found: ${id}`)]);
  if (n === 0) throw new CliError(EXIT.NOT_FOUND, "not_found", `none of the ids exist: ${missing.join(", ")}`);
}

async function memoryForget(c) {
  const ids = c.v.id ?? [];
  const user = c.v.user;
  if ((ids.length > 0) === (user !== undefined)) throw usage("give --id ID (repeatable) or --user U");
  const dry = c.v["dry-run"] === true;
  if (ids.length > 0) return forgetIds(c, [...new Set(ids)], dry);
  // Every unpinned record of the user: a budget of 0 keeps none.
  const body = { policy: { budget: 0 } };
  const all = { scanned: 0, deleted: 0, deleted_ids: [], dry_run: dry };
  for (let round = 0; round < FORGET_ROUNDS_MAX; round++) {
    const r = ok(await c.t.request("POST", "/v1/long-term-memory/forget", { query: { user_id: user, dry_run: String(dry), limit: FORGET_BATCH }, body }));
    all.scanned = Math.max(all.scanned, r.scanned);
    all.deleted += r.deleted;
    all.deleted_ids.push(...r.deleted_ids);
    if (dry || r.deleted < FORGET_BATCH) break;
  }
  emit(c, all, [`${dry ? "would delete" : "deleted"} ${all.deleted} memor${all.deleted === 1 ? "y" : "ies"} of user ${user}${all.deleted ? ":" : ""}`, ...all.deleted_ids.map((id) => `  ${id}`)]);
}

// ---- sessions ----

async function sessionsLs(c) {
  const r = ok(await c.t.request("GET", "/v1/working-memory/", { query: { offset: int(c.v.offset, "offset") ?? 0, limit: int(c.v.limit, "limit", 1) ?? 20 } }));
  emit(c, r, r.sessions);
  if (!c.json) c.err(`(${r.sessions.length} of ${r.total})`);
}

// ---- ledger ----

async function ledgerBalance(c) {
  if (c.args.length !== 1) throw usage("ledger balance takes one ACCOUNT");
  const a = ok(await c.t.request("GET", `/v1/ledger/accounts/${seg(c.args[0])}`));
  emit(c, a, `${a.id}: ${a.balance} ${a.asset} (debits ${a.debits_posted}, credits ${a.credits_posted}, pending debits ${a.debits_pending}, pending credits ${a.credits_pending})`);
}

async function ledgerHistory(c) {
  if (c.args.length !== 1) throw usage("ledger history takes one ACCOUNT");
  const r = ok(await c.t.request("GET", `/v1/ledger/accounts/${seg(c.args[0])}/history`, { query: { limit: int(c.v.limit, "limit", 1) } }));
  emit(c, r, r.entries.map((e) => `#${e.seq} ${e.at} ${e.kind} ${e.transfer_id} ${e.debit_account} -> ${e.credit_account} ${e.amount}`));
}

async function ledgerTransfer(c) {
  const [from, to, amount] = [need(c.v, "from"), need(c.v, "to"), need(c.v, "amount")];
  if (!DECIMAL.test(amount)) throw usage(`--amount must be a decimal string such as 12.50, not ${JSON.stringify(amount)}`);
  if (c.v.asset !== undefined) {
    // The ledger takes no asset on a transfer (the accounts fix it): check it here.
    for (const id of [from, to]) {
      const a = ok(await c.t.request("GET", `/v1/ledger/accounts/${seg(id)}`));
      if (a.asset !== c.v.asset) throw new CliError(EXIT.REFUSED, "asset_mismatch", `account ${id} holds ${a.asset}, not ${c.v.asset}`);
    }
  }
  // A fresh id unless given: print it, so a retry with --id cannot pay twice.
  const id = c.v.id ?? randomUUID();
  const r = ok(await c.t.request("POST", "/v1/ledger/transfers", { body: { transfers: [{ id, debit_account: from, credit_account: to, amount }] } }));
  const result = r.results?.[0]?.result;
  if (result !== "created" && result !== "exists") throw new CliError(EXIT.REFUSED, result ?? "unknown", `transfer ${id} refused: ${result}`);
  emit(c, r.results[0], `transfer ${id}: ${result} (${amount} ${from} -> ${to})`);
}

// ---- budget ----

const ENCODINGS = ["cl100k_base", "o200k_base"];

async function countLocally(text, modelName, encodingName) {
  const { Tokenizer, model, buildContext, LIMITS } = await import("./node.js");
  // As the Worker counts: the encoding asked for, else the model's, else
  // the calibrated estimate for vendors with no tokenizer.
  let encoding = encodingName;
  if (modelName !== undefined) {
    const info = model(modelName);
    if (!info) throw new CliError(EXIT.REFUSED, "invalid_input", `invalid model: unknown model ${JSON.stringify(modelName)}`);
    if (!info.encoding) {
      // One slot with no chat overhead in the widest window: its count is the text's.
      const r = await buildContext({ model: modelName, max_tokens: LIMITS.WINDOW_TOKENS_MAX, message_overhead_tokens: 0, slots: [{ name: "text", content: text, priority: 1 }] });
      return { tokens: r.slots[0].tokens, encoding: "estimate" };
    }
    encoding = info.encoding;
  }
  const t = await Tokenizer.load(encoding);
  return { tokens: t.count(text), encoding };
}

async function budgetCount(c) {
  if ((c.v.text === undefined) === (c.v.file === undefined)) throw usage("give exactly one of --text T and --file F");
  if (c.v.model !== undefined && c.v.encoding !== undefined) throw usage("give --model or --encoding, not both");
  if (c.v.encoding !== undefined && !ENCODINGS.includes(c.v.encoding)) throw usage(`--encoding must be ${ENCODINGS.join(" or ")}`);
  // The default is the ceiling's encoding, so a count of a prompt file is
  // the number `prompt set` checks against --tokens-max. The API's own
  // default (o200k_base) is not: the encoding is always sent.
  const encoding = c.v.encoding ?? (c.v.model === undefined ? CEILING_ENCODING : undefined);
  const text = c.v.text ?? (await readTextFile(c.v.file, c.stdin));
  const r = c.t.kind === "http" ? ok(await c.t.request("POST", "/v1/budget/count", { body: { text, model: c.v.model, encoding } })) : await countLocally(text, c.v.model, encoding);
  emit(c, r, `${r.tokens} tokens (${r.encoding})`);
}

// ---- consent ----

const consentPath = (u) => `/v1/consent/${seg(u)}`;
function oneUser(c) {
  if (c.args.length !== 1) throw usage("takes one USER");
  return c.args[0];
}

async function consentGrant(c) {
  const r = ok(await c.t.request("PUT", consentPath(oneUser(c)), { body: { long_term: true } }));
  emit(c, r, `consent for ${r.user_id}: long-term memory granted at ${r.granted_at} by ${r.granted_by}`);
}

async function consentRevoke(c) {
  const r = ok(await c.t.request("DELETE", consentPath(oneUser(c))));
  emit(c, r, `consent for ${r.user_id}: revoked at ${r.revoked_at}; erased ${r.erased?.memories ?? 0} memories, ${r.erased?.episodes ?? 0} episodes`);
}

async function consentGet(c) {
  const r = ok(await c.t.request("GET", consentPath(oneUser(c))));
  emit(c, r, `consent for ${r.user_id}: long_term ${r.long_term}${r.granted_at ? `, granted at ${r.granted_at} by ${r.granted_by}` : ""}`);
}

// ---- the table ----

const S = { type: "string" };
const agent = { agent: { ...S, help: "the agent id" } };

/**
 * Every command: `args` names its positionals, `options` its own flags
 * (parseArgs shapes plus `help`), `required` the flags it cannot run
 * without, `local: "none"` that it needs no store,
 * `local: "read"` that it must not hold the store's writer lock.
 */
/**
 * `edgemem mcp`: the memory tools over MCP on stdio, for desktop clients.
 * Only stdout's JSON-RPC lines go to the client; the store stays locked
 * until stdin closes.
 */
async function mcpServe(c) {
  if (c.t.kind !== "local") throw usage("edgemem mcp serves a local store: pass --store DIR (a Worker serves MCP itself at /mcp)");
  const memory = await c.t.memory();
  const { serveStdio } = await import("./mcp.js");
  const context = { namespace: c.v.namespace, sessionId: c.v.session, userId: c.v.user, agentId: c.v.agent };
  context.resultTokensMax = int(c.v["result-tokens-max"], "result-tokens-max", 1);
  await serveStdio(memory, { input: c.stdin, write: (line) => c.out(line), context, signal: c.signal });
}

export const COMMANDS = {
  prompt: {
    summary: "an agent's system prompt: versions, patches, guardrails",
    sub: {
      get: { summary: "print the active prompt text", required: ["agent"], options: agent, run: async (c) => {
        const cfg = ok(await c.t.request("GET", `${agentPath(need(c.v, "agent"))}/config`));
        // Exactly the stored text (one final newline), so `get > f; set --file f` round-trips.
        emit(c, cfg, (cfg.prompt ?? "").replace(/\n$/, ""));
      } },
      set: { summary: "make a file's text the new prompt version (guardrails checked)", required: ["agent", "file"], options: { ...agent, file: { ...S, help: `the prompt text, '-' for stdin (at most ${CLI_FILE_BYTES_MAX} bytes)` }, note: { ...S, help: "a note on the version" } }, run: promptSet },
      patch: { summary: "append a patch, or remove patches by glob", required: ["agent"], options: { ...agent, append: { ...S, help: "the patch text to append" }, remove: { ...S, help: "a glob ('*', '?') of patch texts to remove" } }, run: promptPatch },
      history: { summary: "list versions (* marks the active one) and patches", required: ["agent"], options: agent, run: promptHistory },
      rollback: { summary: "make version V (2 or v2) active again", args: "V", required: ["agent"], options: agent, run: promptRollback },
      guardrails: { summary: "show, or change, the rules every prompt must pass (kinds not given are kept)", required: ["agent"], options: { ...agent, require: { ...S, multiple: true, help: "a clause every prompt must contain; replaces the required list" }, forbid: { ...S, multiple: true, help: "a glob no prompt may match; replaces the forbidden list" }, "tokens-max": { ...S, help: `the token ceiling (counted in ${CEILING_ENCODING}), or 'none'` }, replace: { type: "boolean", help: "set exactly the rules given, clearing the others (alone: clear all)" } }, run: promptGuardrails },
    },
  },
  logs: { summary: "print a session's decision log", local: "read", required: ["session"], options: { session: { ...S, help: "the session id" }, follow: { type: "boolean", help: "keep printing new entries until interrupted" }, kinds: { ...S, help: `comma-separated kinds (${DECISION_KINDS.join(", ")})` }, since: { ...S, help: "only entries after this seq" }, limit: { ...S, help: "at most this many entries (without --follow)" } }, run: logs },
  decisions: { summary: "write to a session's decision log", sub: { add: { summary: "append one entry", required: ["session", "kind", "text"], options: { session: { ...S, help: "the session id" }, kind: { ...S, help: DECISION_KINDS.join("|") }, text: { ...S, help: "the entry text" } }, run: decisionsAdd } } },
  memory: {
    summary: "long-term memory",
    sub: {
      search: { summary: "find memories by meaning, keyword or both", args: "TEXT", options: { limit: { ...S, help: "at most this many" }, user: { ...S, help: "only this user's" }, mode: { ...S, help: "semantic (default), keyword or hybrid" } }, run: memorySearch },
      get: { summary: "print one memory", args: "ID", run: memoryGet },
      versions: { summary: "list a memory's versions (* marks the current one)", args: "ID", run: memoryVersions },
      restore: { summary: "restore an old version as a new one", args: "ID VERSION", run: memoryRestore },
      redact: { summary: "remove a memory and the text of all its versions from storage", args: "ID", run: memoryRedact },
      forget: { summary: "delete memories by id or by user (by id: exit 4 if none existed)", options: { id: { ...S, multiple: true, help: "a memory id (repeatable)" }, user: { ...S, help: "every memory of this user" }, "dry-run": { type: "boolean", help: "show what would be deleted, delete nothing" } }, run: memoryForget },
    },
  },
  sessions: { summary: "working-memory sessions", sub: { ls: { summary: "list session ids", options: { limit: { ...S, help: "page size (default 20)" }, offset: { ...S, help: "skip this many" } }, run: sessionsLs } } },
  ledger: {
    summary: "the exact Decimal ledger",
    sub: {
      balance: { summary: "an account's balances", args: "ACCOUNT", run: ledgerBalance },
      history: { summary: "an account's postings", args: "ACCOUNT", options: { limit: { ...S, help: "at most this many" } }, run: ledgerHistory },
      transfer: { summary: "move an amount between accounts (idempotent by --id)", required: ["from", "to", "amount"], options: { from: { ...S, help: "the debit account" }, to: { ...S, help: "the credit account" }, amount: { ...S, help: "a decimal string, e.g. 12.50" }, asset: { ...S, help: "refuse unless both accounts hold this asset" }, id: { ...S, help: "the transfer id (default: a fresh UUID, printed)" } }, run: ledgerTransfer },
    },
  },
  export: { summary: "print the namespace's whole state as NDJSON (edgemem's open export format)", local: "read", options: { vectors: { type: "boolean", help: "include each long-term record's vector" } }, run: exportState },
  import: { summary: "load an export into an empty namespace (the same file again changes nothing)", local: "write", required: ["file"], options: { file: { ...S, help: `the export, '-' for stdin (at most ${LIMITS.IMPORT_BYTES_MAX} bytes)` } }, run: importState },
  mcp: {
    summary: "serve the memory tools over MCP on stdio (with --store)",
    local: "write",
    options: {
      session: { ...S, help: "bind tool calls to this session" },
      user: { ...S, help: "bind tool calls to this user: writes are theirs, reads only theirs" },
      agent: { ...S, help: "apply this agent's tool allow-list" },
      "result-tokens-max": { ...S, help: "the token ceiling on one tool result (default 4000)" },
    },
    run: mcpServe,
  },
  budget: { summary: "token budgets", sub: { count: { summary: "count the tokens of a text", local: "none", options: { text: { ...S, help: "the text" }, file: { ...S, help: `a file's text, '-' for stdin (at most ${CLI_FILE_BYTES_MAX} bytes)` }, model: { ...S, help: "count as this model does" }, encoding: { ...S, help: `${ENCODINGS.join(" or ")} (default ${CEILING_ENCODING}, as guardrail ceilings count)` } }, run: budgetCount } } },
  consent: {
    summary: "a user's consent to long-term memory",
    sub: {
      grant: { summary: "record consent", args: "USER", run: consentGrant },
      revoke: { summary: "revoke consent and erase the user's long-term memories", args: "USER", run: consentRevoke },
      get: { summary: "print the consent record", args: "USER", run: consentGet },
    },
  },
};
