// The idiomatic JS API over the wasm core. Structured values cross into wasm as
// JSON text, validated by the same Rust code as the HTTP API; nothing here
// holds state or logic of its own beyond argument checks.
import {
  MemoryCore,
  TokenizerCore,
  budgetCounting,
  buildContextEstimated,
  buildContextWithCounter,
  checkFitWith,
  fitCounting,
  modelInfo,
  loadStaticEmbedder,
  version as coreVersion,
} from "./edgemem_wasm.js";
/** Bytes of wasm linear memory: its high-water mark (wasm memory never shrinks). */
export { wasmMemoryBytes } from "./edgemem_wasm.js";
import { loadAsset } from "./assets.js";
import { EdgememError, call, checkCount, checkId, fromJson, invalid, rethrow, toJson } from "./util.js";
import { LIMITS } from "./limits.js";
import { cryptEntries, cryptEntry, DEFAULT_KEY_ID } from "./crypt.js";
import { AgentConfig, ToolCache, historyQuery, wrapSummarizer } from "./history.js";
import { Episodes, LongTermMemory } from "./longterm.js";
import { Ledger } from "./ledger.js";
import { Feed } from "./feed.js";
import { ServiceCache } from "./services.js";
import { Profiles, Schemas } from "./agent_state.js";
import { Consent, Decisions, Privacy } from "./operations.js";

export { DECISION_KINDS, scrubText } from "./operations.js";

export { MemoryStore, IndexedDBStore, DurableObjectStore, KVStore } from "./stores.js";

export { EdgememError, ExactNumber, parseExact } from "./util.js";
export { LIMITS, TRANSFER_RESULT_CODES } from "./limits.js";
/** The raw segmented vector index (typed arrays in and out; errors carry `.code`). */
export { VectorIndex } from "./edgemem_wasm.js";

function sessionPath(sessionId) {
  return `/v1/working-memory/${encodeURIComponent(checkId(sessionId))}`;
}

/** Loads the model's encoding (cl100k_base without a model, as AMS counts) so counts are exact. */
async function encodingFor(modelName) {
  if (modelName === undefined) return cachedTokenizer("cl100k_base");
  const info = model(modelName);
  if (info && info.encoding) await cachedTokenizer(info.encoding);
}

/**
 * A tenant's memory. Open it on a store; every mutating call resolves only
 * after its op-log record is durable in that store.
 */
export class Memory {
  #core;
  #api;
  #apiText;
  #feed;
  #extraction;
  #embedder;
  #useStatic;

  /** The tenant's exact Decimal ledger. */
  ledger;

  /** Long-term memory: records found by meaning, keyword or both. */
  longTerm;

  /** The episodic log. */
  episodes;

  /** The service-state cache: per-service TTLs, read-through, portfolio snapshots. */
  services;

  /** User schema versions and their migration chains. */
  schemas;

  /** Each session's decision log: append, list, export (JSONL), follow. */
  decisions;

  /** Users' consent to long-term memory; revoking erases their memories. */
  consent;

  /** The namespace's privacy policy: consent, anonymization, secrets. */
  privacy;

  /** Per-agent profiles with exact increments. */
  profiles;

  constructor(core, { embedder, embedderName, offlineEmbedder = "static", detector, extractor, serviceFetcher, serviceTimeoutMs, channelName, clock } = {}) {
    if (!(core instanceof MemoryCore)) throw new TypeError("use Memory.open()");
    this.#core = core;
    try {
      core.setOfflineEmbedder(offlineEmbedder);
    } catch (err) {
      rethrow(err);
    }
    if (embedderName !== undefined && (typeof embedderName !== "string" || !/^[!-~]{1,128}$/.test(embedderName))) throw invalid("embedderName", "must be 1 to 128 printable ASCII characters");
    // The hook's identity is stored with the vectors it makes, so another
    // model's vectors are refused rather than mixed (embedder_mismatch).
    if (typeof embedder === "function") {
      const hook = embedder;
      embedder = Object.assign((texts) => hook(texts), { edgememName: embedderName ?? hook.edgememName ?? "js-hook" });
    }
    const useStatic = offlineEmbedder === "static" && !embedder;
    this.#embedder = embedder;
    this.#useStatic = useStatic;
    this.#extraction = new ExtractionQueue(core, extractor, embedder, clock, useStatic);
    // The one door into the API: every route, with the hooks and caller
    // vectors it may use. `body` is an object, or JSON text already checked.
    // A working-memory write arms the background extraction queue, after
    // the answer: no request waits for the extractor.
    this.#apiText = async (method, path, query = "", body, summarizer, embedder, vectors) => {
      if (useStatic && EMBEDDING_PATHS.test(path)) await ensureStaticEmbedder();
      const out = await call(() => core.call(method, path, query, body === undefined ? "" : typeof body === "string" ? body : toJson(body, "body"), summarizer, embedder, vectors));
      if (method !== "GET" && path.startsWith("/v1/working-memory/")) this.#extraction.kick();
      return out;
    };
    this.#api = async (...args) => JSON.parse(await this.#apiText(...args));
    this.#feed = new Feed(core, this.#api, channelName);
    this.longTerm = new LongTermMemory(this.#api, embedder, detector);
    this.episodes = new Episodes(this.#api);
    this.services = new ServiceCache(this.#api, this.#apiText, core);
    this.schemas = new Schemas(this.#api);
    this.profiles = new Profiles(this.#api, this.schemas);
    this.decisions = new Decisions(this.#api, this.#apiText, (options, handler) => this.subscribe(options, handler));
    this.consent = new Consent(this.#api);
    this.privacy = new Privacy(this.#api);
    if (serviceFetcher !== undefined) this.services.setFetcher(serviceFetcher, serviceTimeoutMs === undefined ? {} : { timeoutMs: serviceTimeoutMs });
    this.ledger = new Ledger(
      (method, path, query, body) => this.#api(method, `/v1/ledger/${path}`, query, body),
      (...columns) => call(() => core.transferColumns(...columns)),
    );
  }

  /**
   * @param {object} [options]
   * @param {object} [options.store] MemoryStore, IndexedDBStore, DurableObjectStore, or any object with async get/put/delete/list. Default: volatile memory.
   * @param {string} [options.namespace] the tenant namespace recorded on sessions.
   * @param {number} [options.snapshotEveryOps] log records between snapshots (default 1000).
   * @param {number} [options.chunkBytes] snapshot chunk size (default 1 MiB, at most 2 MB).
   * @param {string} [options.keyPrefix] prefix of every key in the store (default "").
   * @param {() => number} [options.clock] milliseconds since the epoch (default Date.now).
   * @param {(agentId: string, service: string) => Promise<object>} [options.serviceFetcher] the service-state cache's upstream.
   * @param {number} [options.serviceTimeoutMs] its deadline (default 10,000).
   * @param {(text: string) => Promise<{start: number, end: number, kind: string}[]>} [options.detector] an extra personal-data detector (person names from a model, say) run on each long-term text before it is stored; each span becomes `[KIND]`.
   * @param {string} [options.privacyKey] a secret of at least 16 bytes: personal data in long-term memory becomes keyed pseudonyms (the same value, the same token) and user ids are sealed in storage. Held in memory only; without it, typed placeholders.
   * @param {string | false} [options.broadcast] the BroadcastChannel through which memories on the same storage (other tabs) hear of each other's writes; default the IndexedDBStore's, none for other stores.
   * @param {string} [options.embedderName] the embedder hook's identity (e.g. "openai:text-embedding-3-small"), stored with the namespace's vectors; default "js-hook".
   * @param {"static" | "hash"} [options.offlineEmbedder] without a hook: "static" (default), the distilled MiniLM embedder, loaded on first need (the hashed one if its asset is missing); "hash", the hashed n-gram embedder.
   * @param {(request: {strategy: string, prompt?: string, turns: object[]}) => Promise<object[]>} [options.extractor] background extraction's model (an LLM call): the memories worth keeping from a session's new turns, `[{text, kind?, topics?, entities?, event_date?, extracted_from?, subject?}]`. Default: the offline rules.
   * @param {CryptoKey | {passphrase: string}} [options.encryptionKey] encrypts every stored op-log record and snapshot chunk with AES-256-GCM (WebCrypto). A CryptoKey must be AES-GCM, 256 bits, with encrypt and decrypt; a passphrase goes through PBKDF2-HMAC-SHA256 (600,000 iterations, a random 16-byte salt stored with the store). Never stored; a store that holds plaintext data is encrypted at open.
   * @param {string} [options.keyId] the key's id, recorded in the store (default "default").
   * @param {CryptoKey | {passphrase: string}} [options.previousKey] the old key, to finish a rotation a crash interrupted; with `previousKeyId`.
   * @param {string} [options.previousKeyId]
   */
  static async open(options = {}) {
    const { store, namespace, snapshotEveryOps, chunkBytes, keyPrefix, clock, embedder, embedderName, offlineEmbedder, detector, extractor, serviceFetcher, serviceTimeoutMs, broadcast, privacyKey } = options;
    const crypt = cryptEntries(options);
    if (offlineEmbedder !== undefined && offlineEmbedder !== "static" && offlineEmbedder !== "hash") throw invalid("offlineEmbedder", 'must be "static" or "hash"');
    if (extractor !== undefined && typeof extractor !== "function") throw invalid("extractor", "must be an async function ({strategy, prompt, turns}) => memories");
    if (privacyKey !== undefined && typeof privacyKey !== "string") throw invalid("privacyKey", "must be a string secret");
    const opts = toJson(
      { namespace, snapshot_every_ops: snapshotEveryOps, chunk_bytes: chunkBytes, key_prefix: keyPrefix, privacy_key: privacyKey },
      "options",
    );
    const core = await call(() => MemoryCore.open(store, opts, clock, crypt));
    // Tabs on one IndexedDB database hear of each other's writes, unless `broadcast: false`.
    const channelName = broadcast === false ? undefined : typeof broadcast === "string" ? broadcast : store?.feedChannel?.(keyPrefix ?? "");
    return new Memory(core, { embedder, embedderName, offlineEmbedder, detector, extractor, serviceFetcher, serviceTimeoutMs, channelName, clock });
  }

  /**
   * Runs any `/v1/...` route in process, exactly as the Worker serves it:
   * `query` is a string or an object, `body` an object. Resolves to the
   * parsed JSON answer, or a JSON Lines answer (`format=jsonl`, one entry
   * per line, newline-terminated) as text; rejects with the typed error.
   */
  async request(method, path, { query, body } = {}) {
    if (typeof method !== "string" || typeof path !== "string" || !path.startsWith("/v1/")) throw invalid("path", "must be a /v1/... route");
    const q = query === undefined ? "" : typeof query === "string" ? query : new URLSearchParams(query).toString();
    const text = await this.#apiText(method.toUpperCase(), path, q, body);
    // A JSON answer never ends with a newline; JSON Lines (or an empty
    // export) is handed over as text.
    return text === "" || text.endsWith("\n") ? text : JSON.parse(text);
  }

  /**
   * Calls `handler(event)` once per committed write that `options` admits,
   * after it is durable: `{seq, ts, kind, key, count?, ids?}`. `kinds` (exact,
   * or `"area.*"`) and `keys` filter; `since` first replays the kept events
   * after that seq. Returns a function that unsubscribes.
   */
  subscribe(options, handler) {
    return this.#feed.subscribe(options, handler);
  }

  /** `subscribe` as an async iterator (`for await`); leaving the loop unsubscribes. */
  events(options = {}) {
    return this.#feed.events(options);
  }

  /**
   * The namespace's whole state in edgemem's open NDJSON format (a header,
   * then sessions, long-term records and their versions, episodes, ledgers
   * with their journals, prompts, profiles, and an end line): an async
   * iterator of lines, without newlines. `vectors: true` adds each
   * record's vector (base64url of little-endian f32s).
   */
  async *export({ vectors = false } = {}) {
    if (typeof vectors !== "boolean") throw invalid("vectors", "must be a boolean");
    const text = await this.#apiText("GET", "/v1/export", vectors ? "vectors=f32" : "vectors=none");
    for (const line of text.split("\n")) if (line !== "") yield line;
  }

  /**
   * Imports an export into this namespace, which must be empty (the same
   * file again is a no-op): `lines` is the NDJSON text or an iterable or
   * async iterable of lines. Validated whole first: a refused import writes
   * nothing. Records exported without vectors are embedded again. Resolves
   * to `{status, imported, sessions, memories, last_seq}`.
   */
  async import(lines) {
    let text;
    if (typeof lines === "string") text = lines;
    else if (lines !== null && typeof lines === "object" && (Symbol.asyncIterator in lines || Symbol.iterator in lines)) {
      const parts = [];
      let bytes = 0;
      for await (const line of lines) {
        if (typeof line !== "string") throw invalid("lines", "must be strings");
        bytes += line.length + 1;
        if (bytes > LIMITS.IMPORT_BYTES_MAX) throw new EdgememError("payload_too_large", `an import is at most ${LIMITS.IMPORT_BYTES_MAX} bytes`);
        parts.push(line.endsWith("\n") ? line : `${line}\n`);
      }
      text = parts.join("");
    } else throw invalid("lines", "must be NDJSON text or an iterable of lines");
    return JSON.parse(await this.#apiText("POST", "/v1/import", "", text, undefined, this.#embedder));
  }

  /**
   * Opens a volatile replica from a snapshot published with
   * `publishSnapshot`; an encrypted memory's replica needs its key
   * (`encryptionKey`, `keyId`).
   */
  static async openPublished(source, { keyPrefix = "", namespace, clock, encryptionKey, keyId } = {}) {
    const crypt = cryptEntries({ encryptionKey, keyId });
    const core = await call(() => MemoryCore.openPublished(source, keyPrefix, namespace, clock, crypt));
    return new Memory(core);
  }

  /**
   * Re-encrypts every stored value under a new key (or encrypts a
   * plaintext store), in crash-safe steps: resolves to `{key_id,
   * leftovers}` once every live value is sealed under it. `keyId` must be
   * new to the store. After a crash, open with the new key and
   * `previousKey` to finish.
   */
  async rotateKey(encryptionKey, keyId) {
    const entry = cryptEntry(encryptionKey, keyId ?? DEFAULT_KEY_ID, "encryptionKey");
    return JSON.parse(await call(() => this.#core.rotateKey(entry)));
  }

  /** The id of the key this memory's store is sealed under, or undefined. */
  async keyId() {
    return call(() => this.#core.keyId());
  }

  /** Returns `{created, session}`: the live session, or a new one made from `init`. */
  async getOrCreateSession(sessionId, init = {}) {
    const out = JSON.parse(await call(() => this.#core.getOrCreateSession(checkId(sessionId), toJson(init, "session"))));
    if (out.created) this.#extraction.kick();
    return out;
  }

  /**
   * Creates or replaces a session (AMS `PUT /v1/working-memory/{id}`). With
   * `model` or `contextWindowMax` it then compacts past 70 % of the window
   * through `summarizer` (default: extractive) and fills the context gauges;
   * a failed summarizer is reported in `compaction_error`, nothing is lost.
   */
  async putSession(sessionId, session = {}, { model, contextWindowMax, summarizer, timeoutMs } = {}) {
    const newest = this.schemas.newest("session_data");
    if (newest !== undefined && session && typeof session === "object" && session.data_schema_version == null) session = { ...session, data_schema_version: newest };
    if (model === undefined && contextWindowMax === undefined) {
      const out = JSON.parse(await call(() => this.#core.putSession(checkId(sessionId), toJson(session, "session"))));
      this.#extraction.kick();
      return out;
    }
    await encodingFor(model);
    const query = historyQuery({ model_name: model, context_window_max: contextWindowMax });
    return this.#api("PUT", sessionPath(sessionId), query, session, wrapSummarizer(summarizer, timeoutMs));
  }

  /**
   * Compacts a session now if its history passes `summarizeAtTokens`
   * (default 70 % of the window): the oldest turns go to `summarizer`
   * (`async (turns, previousSummary, {tokensMax}) => string`, default the
   * offline extractive one), the newest stay verbatim, a tool call and its
   * results stay together. Resolves to `{compacted, archived, tokens_before,
   * tokens_after, summarizer, session}`; a throwing, slow (`timeoutMs`,
   * default 30 s), empty or oversized summary rejects with `hook_failed`
   * and changes nothing.
   */
  async compact(sessionId, { model, contextWindowMax, summarizeAtTokens, keepRecentTokens, summaryTokensMax, summarizer, timeoutMs } = {}) {
    await encodingFor(model);
    const body = { model_name: model, context_window_max: contextWindowMax, summarize_at_tokens: summarizeAtTokens, keep_recent_tokens: keepRecentTokens, summary_tokens_max: summaryTokensMax };
    return this.#api("POST", `${sessionPath(sessionId)}/compact`, "", body, wrapSummarizer(summarizer, timeoutMs));
  }

  /**
   * Assembles a prompt within a model's window: the agent's system prompt
   * and patches, the session's summary, its newest turns, `memories` (best
   * first), then `query`. Resolves to `{messages, used_tokens, left_tokens,
   * turns_kept, memories_kept, dropped, counting}` (`format`: `openai`,
   * `anthropic` with a separate `system`, or `neutral`).
   */
  async prompt({ query, sessionId, agentId, model, windowTokens, reserveForOutput, toolsTokens, memories, format, as = "object" } = {}) {
    if (!["object", "plan", "bytes"].includes(as)) throw invalid("as", `${JSON.stringify(as)} is not object, plan or bytes`);
    await encodingFor(model);
    const body = { query, session_id: sessionId, agent_id: agentId, model, window_tokens: windowTokens, reserve_for_output: reserveForOutput, tools_tokens: toolsTokens, memories, format, as: as === "plan" ? "plan" : undefined };
    if (as !== "bytes") return this.#api("POST", "/v1/prompt", "", body);
    // The answer Rust wrote, as UTF-8, copied out once: never decoded or parsed here.
    return call(() => this.#core.callBytes("POST", "/v1/prompt", "", toJson(body, "request")));
  }

  /** The summary first, then the verbatim turns, in `openai` or `anthropic` shape. */
  async toMessages(sessionId, { format = "openai" } = {}) {
    return this.#api("GET", `${sessionPath(sessionId)}/messages`, historyQuery({ format }));
  }

  /** `{messages, total}`: turns compacted out of the session, oldest first. */
  async archivedMessages(sessionId, { offset = 0, limit = 100 } = {}) {
    return this.#api("GET", `${sessionPath(sessionId)}/archive`, historyQuery({ offset, limit }));
  }

  /** An agent's configuration: prompts with rollback, patches, tool allow-list. */
  agent(agentId) {
    return new AgentConfig(this.#api, agentId, () => cachedTokenizer("cl100k_base"));
  }

  /** A session's tool-result cache. */
  toolCache(sessionId) {
    return new ToolCache(this.#api, sessionId);
  }

  /** Sets per-tool cache TTLs in seconds, e.g. `{"wallet.balance": 30}`. */
  async setToolTtls(ttls) {
    return (await this.#api("PUT", "/v1/tool-ttls", "", { ttls })).ttls;
  }

  /** OpenAI (`tools`), Anthropic or MCP (`tools/list` entries) tool schemas for the memory operations, filtered by the agent's allow-list. */
  async toolSchemas({ format = "openai", agentId } = {}) {
    return this.#api("GET", "/v1/tools/schemas", historyQuery({ format, agent_id: agentId }));
  }

  /**
   * Executes a model's function call (`arguments` as an object or JSON text)
   * after the agent's allow-list and argument validation; resolves to the
   * result. Unknown tools are `not_found`, refused ones `tool_not_allowed`.
   * `sessionId`, `userId` and `namespace` bind the call: the model's
   * arguments may fill in what they leave open, never contradict them
   * (`invalid_input`, `namespace_forbidden`). A result over
   * `resultTokensMax` tokens (default 4,000) loses whole items from its
   * longest list and gains `truncated: {omitted, total}`.
   */
  async resolveFunctionCall(name, args, { agentId, sessionId, userId, namespace, resultTokensMax } = {}) {
    if (typeof name !== "string") throw invalid("name", "must be a string");
    const body = { name, arguments: args ?? {}, agent_id: agentId, session_id: sessionId, user_id: userId, namespace, result_tokens_max: resultTokensMax };
    return (await this.#api("POST", "/v1/tools/call", "", body, undefined, this.#embedder)).result;
  }

  /**
   * Answers one MCP JSON-RPC message (an object or its JSON text) as the
   * Worker's `/mcp` does, under the bound context; resolves to the
   * response object, or `undefined` for a notification. Protocol errors
   * come back as JSON-RPC errors, tool failures as `isError` results.
   */
  async mcp(message, { namespace, sessionId, userId, agentId, resultTokensMax } = {}) {
    if (this.#useStatic) await ensureStaticEmbedder();
    const text = typeof message === "string" ? message : toJson(message, "message");
    const ctx = toJson({ namespace, session_id: sessionId, user_id: userId, agent_id: agentId, result_tokens_max: resultTokensMax }, "options");
    const out = await call(() => this.#core.mcp(text, ctx, this.#embedder));
    this.#extraction.kick();
    return out === undefined ? undefined : JSON.parse(out);
  }

  /** Appends `[{role, content, id?, created_at?}]` to an existing session; with `model`, counts the new turns once (reported in `tokens`, remembered for prompts). */
  async appendMessages(sessionId, messages, { model } = {}) {
    if (!Array.isArray(messages)) throw invalid("messages", "must be an array");
    if (model !== undefined) await encodingFor(model);
    const body = model === undefined ? { messages } : { messages, model_name: model };
    const out = JSON.parse(await call(() => this.#core.appendMessages(checkId(sessionId), toJson(body, "messages"))));
    this.#extraction.kick();
    return out;
  }

  /**
   * The session, or `null` when it is missing or expired. With
   * `exactNumbers`, numbers a double cannot hold come back as
   * `ExactNumber`s holding the text that was stored.
   */
  async getSession(sessionId, options = {}) {
    const s = await this.#readSession(sessionId, options);
    if (s === null) return null;
    // A JS migration chain (`schemas.register`) runs here; a declarative one already ran in the store.
    const migrated = await this.schemas.run("session_data", s.data, s.data_schema_version ?? 1);
    if (!migrated) return s;
    const body = toJson({ from_version: s.data_schema_version ?? 1, to_version: migrated.to, data: migrated.state }, "data");
    try {
      await this.#api("POST", `${sessionPath(sessionId)}/data/migrate`, "", body);
    } catch (err) {
      // Another writer migrated or rewrote it meanwhile: read theirs.
      if (err.code !== "schema_version_changed") throw err;
    }
    return this.#readSession(sessionId, options);
  }

  async #readSession(sessionId, { userId, recentMessagesLimit, model, contextWindowMax, exactNumbers = false } = {}) {
    if (model !== undefined || contextWindowMax !== undefined) {
      // With a window, AMS's GET also reports the context gauges.
      await encodingFor(model);
      const query = historyQuery({ user_id: userId, model_name: model, context_window_max: contextWindowMax });
      try {
        return fromJson(await this.#apiText("GET", sessionPath(sessionId), query), exactNumbers);
      } catch (err) {
        if (err.code === "not_found") return null;
        throw err;
      }
    }
    if (userId !== undefined) checkId(userId, "userId");
    if (recentMessagesLimit !== undefined) checkCount(recentMessagesLimit, "recentMessagesLimit", 0, 2 ** 32 - 1);
    const text = await call(() => this.#core.getSession(checkId(sessionId), userId, recentMessagesLimit));
    return text === null ? null : fromJson(text, exactNumbers);
  }

  /** Deletes a session; resolves to whether it existed. */
  async deleteSession(sessionId) {
    return call(() => this.#core.deleteSession(checkId(sessionId)));
  }

  /** `{sessions, total}`: one page of live session ids, sorted. */
  async listSessions({ offset = 0, limit = 20, userId } = {}) {
    checkCount(offset, "offset", 0, 2 ** 32 - 1);
    checkCount(limit, "limit", 0, 2 ** 32 - 1);
    if (userId !== undefined) checkId(userId, "userId");
    return JSON.parse(await call(() => this.#core.listSessions(offset, limit, userId)));
  }

  /** Removes sessions whose TTL ran out; resolves to the next expiry (ms) or null. */
  async expire() {
    return call(() => this.#core.expire());
  }

  /** Writes a snapshot now and truncates the log. */
  async snapshot() {
    return JSON.parse(await call(() => this.#core.snapshot()));
  }

  /** Publishes a snapshot to a snapshots-only store such as `KVStore`. */
  async publishSnapshot(target, { keyPrefix = "" } = {}) {
    return JSON.parse(await call(() => this.#core.publishSnapshot(target, keyPrefix)));
  }

  /** `{last_seq, log_records_since_snapshot, snapshot_gen, snapshot_bytes}`. */
  async stats() {
    return JSON.parse(await call(() => this.#core.stats()));
  }

  /**
   * Runs every background extraction pass that waits (sessions with a
   * `long_term_memory_strategy` and new turns), without the debounce, and
   * resolves when they are committed: `{sessions, created, duplicates,
   * failed, without_consent}`. A failing extractor is retried later with
   * backoff, and after its last attempt surfaces as an `extraction_failed`
   * episode.
   */
  async flushExtraction() {
    return this.#extraction.flush();
  }

  /** Frees the wasm memory behind this object. */
  free() {
    this.#extraction.close();
    this.#feed.close();
    this.#core.free();
  }
}

let staticEmbedder = null;

/**
 * Loads the distilled static embedder's asset once per wasm instance, on
 * first need (as the tokenizer ranks are). Resolves to its identity, or
 * null when the asset cannot be had: then the hashed n-gram embedder is
 * the offline default, and a namespace built with the static one answers
 * `embedder_mismatch` rather than mixing vectors.
 */
function ensureStaticEmbedder() {
  staticEmbedder ??= loadAsset("minilm-static")
    .then((bytes) => loadStaticEmbedder(bytes))
    .catch((err) => {
      globalThis.console?.warn?.(`edgemem: static embedder unavailable, using the hashed embedder: ${err?.message ?? err}`);
      return null;
    });
  return staticEmbedder;
}

/** The routes that may embed text with the offline embedder. */
const EMBEDDING_PATHS = /^\/v1\/(long-term-memory|memory\/prompt|tools\/call|working-memory\/|import$)/;

/**
 * Background extraction in the package: a debounced timer armed by
 * working-memory writes runs the passes that are due, one run at a time;
 * `flush` runs them all now. The timer never keeps Node alive.
 */
class ExtractionQueue {
  #core;
  #extractor;
  #embedder;
  #clock;
  #timer;
  #running = Promise.resolve();
  #closed = false;

  #useStatic;

  constructor(core, extractor, embedder, clock, useStatic) {
    this.#core = core;
    this.#useStatic = useStatic && !embedder;
    // The hook sees objects; the core passes JSON text both ways.
    this.#extractor = extractor && (async (request) => JSON.stringify(await extractor(JSON.parse(request))));
    this.#embedder = embedder;
    this.#clock = clock ?? Date.now;
  }

  kick(delayMs = LIMITS.EXTRACT_DEBOUNCE_MS) {
    if (this.#closed) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#run(false).catch(() => {});
    }, Math.max(0, delayMs));
    this.#timer.unref?.();
  }

  #run(flush) {
    const run = this.#running.catch(() => {}).then(async () => {
      if (this.#closed) return { sessions: 0, created: 0, duplicates: 0, superseded: 0, failed: 0, without_consent: 0, next_due: null };
      if (this.#useStatic) await ensureStaticEmbedder();
      const r = JSON.parse(await call(() => this.#core.runExtraction(flush, this.#extractor, this.#embedder)));
      if (r.next_due !== null && !this.#closed) this.kick(r.next_due - this.#clock());
      return r;
    });
    this.#running = run;
    return run;
  }

  async flush() {
    clearTimeout(this.#timer);
    const total = { sessions: 0, created: 0, duplicates: 0, superseded: 0, failed: 0, without_consent: 0 };
    // Each round takes a bounded number of sessions and turns; rounds go on
    // while they commit something (a failing hook stops the loop).
    for (let round = 0; round < LIMITS.EXTRACT_FLUSH_ROUNDS_MAX; round++) {
      const r = await this.#run(true);
      for (const k of Object.keys(total)) total[k] += r[k];
      if (r.sessions + r.without_consent === 0 || r.next_due === null) break;
    }
    return total;
  }

  close() {
    this.#closed = true;
    clearTimeout(this.#timer);
  }
}

/** The encodings that have a rank asset. */
export const ENCODINGS = ["cl100k_base", "o200k_base"];

/**
 * An exact OpenAI tokenizer: every count and token id equals tiktoken's.
 * Text that looks like a special token (`<|endoftext|>`) is ordinary text
 * unless `allowSpecial` is set, as in tiktoken's `encode_ordinary`.
 */
export class Tokenizer {
  #core;

  constructor(core) {
    if (!(core instanceof TokenizerCore)) throw new TypeError("use Tokenizer.load() or Tokenizer.fromAsset()");
    this.#core = core;
  }

  /** Loads an encoding's ranks from the asset shipped next to this package. */
  static async load(name) {
    if (!ENCODINGS.includes(name)) throw invalid("encoding", `unknown encoding ${JSON.stringify(name)} (known: ${ENCODINGS.join(", ")})`);
    return Tokenizer.fromAsset(name, await loadAsset(name));
  }

  /** Builds a tokenizer from asset bytes you fetched yourself (KV, R2, a CDN). */
  static fromAsset(name, bytes) {
    const view = bytes instanceof Uint8Array ? bytes : bytes instanceof ArrayBuffer ? new Uint8Array(bytes) : null;
    if (!view) throw invalid("asset", "must be a Uint8Array or ArrayBuffer");
    try {
      return new Tokenizer(TokenizerCore.load(String(name), view));
    } catch (err) {
      rethrow(err);
    }
  }

  /** `cl100k_base` or `o200k_base`. */
  get name() {
    return this.#core.name();
  }

  /** Number of tokens of `text`. */
  count(text, { allowSpecial = false } = {}) {
    if (typeof text !== "string") throw invalid("text", "must be a string");
    try {
      return this.#core.count(text, allowSpecial === true);
    } catch (err) {
      rethrow(err);
    }
  }

  /** Token ids of `text`, as a Uint32Array. */
  encode(text, { allowSpecial = false } = {}) {
    if (typeof text !== "string") throw invalid("text", "must be a string");
    try {
      return this.#core.encode(text, allowSpecial === true);
    } catch (err) {
      rethrow(err);
    }
  }

  /** The text of `tokens` (invalid UTF-8 at the edges becomes U+FFFD). */
  decode(tokens) {
    const ids = tokens instanceof Uint32Array ? tokens : Uint32Array.from(tokens);
    try {
      return new TextDecoder().decode(this.#core.decodeBytes(ids));
    } catch (err) {
      rethrow(err);
    }
  }

  /** Builds a context budget counted exactly with this encoding (see `buildContext`). */
  buildContext(request) {
    try {
      return JSON.parse(this.#core.buildContext(toJson(request, "request")));
    } catch (err) {
      rethrow(err);
    }
  }

  /** Fit check counted with this encoding (JSON text in, used by `fitsContext`). */
  checkFit(json) {
    return this.#core.checkFit(json);
  }

  /** Memory held by the rank tables, in bytes. */
  get heapBytes() {
    return this.#core.heapBytes();
  }

  /** Frees the wasm memory behind this tokenizer. */
  free() {
    this.#core.free();
  }
}

/** The model table's row for `name` (dated variants resolve), or null. */
export function model(name) {
  if (typeof name !== "string") throw invalid("model", "must be a string");
  return JSON.parse(modelInfo(name));
}

const tokenizers = new Map();

/** One load per encoding per process, shared by every budget call. */
function cachedTokenizer(name) {
  if (!tokenizers.has(name)) tokenizers.set(name, Tokenizer.load(name));
  return tokenizers.get(name);
}

/**
 * Builds a context within a model's window: `{model? | max_tokens?,
 * reserve_for_output?, truncate_at_priority?, slots: [{name, content,
 * priority}], tools?}`. Counts exactly with the model's encoding (loaded once
 * and cached), or with the calibrated estimator for models whose vendor
 * publishes no tokenizer. Resolves to `{context, used, left, window,
 * percent_used, percent_left, encoding, slots: [{name, status, tokens}]}`.
 */
export async function buildContext(request, { counter } = {}) {
  const json = toJson(request, "request");
  if (counter !== undefined) {
    if (typeof counter !== "function") throw invalid("counter", "must be a function (text) => number");
    try {
      return JSON.parse(buildContextWithCounter(json, counter));
    } catch (err) {
      rethrow(err);
    }
  }
  let counting;
  try {
    counting = budgetCounting(json);
  } catch (err) {
    rethrow(err);
  }
  if (counting === "estimate") {
    try {
      return JSON.parse(buildContextEstimated(json));
    } catch (err) {
      rethrow(err);
    }
  }
  return (await cachedTokenizer(counting)).buildContext(request);
}

/**
 * "Does this request fit?" before calling the model: `{model? | max_tokens?,
 * reserve_for_output?, messages: [{role, content}], tools?}` → `{fits, tokens,
 * limit, window, encoding}`, counting OpenAI's chat overhead (3 tokens per
 * message, 3 to prime the reply). `counter` overrides the counting.
 */
export async function fitsContext(request, { counter } = {}) {
  const json = toJson(request, "request");
  if (counter !== undefined && typeof counter !== "function") throw invalid("counter", "must be a function (text) => number");
  let counting;
  try {
    counting = counter ? "custom" : fitCounting(json);
    if (counting === "custom" || counting === "estimate") return JSON.parse(checkFitWith(json, counter));
  } catch (err) {
    rethrow(err);
  }
  const t = await cachedTokenizer(counting);
  try {
    return JSON.parse(t.checkFit(json));
  } catch (err) {
    rethrow(err);
  }
}

/** The edgemem version. */
export function version() {
  return coreVersion();
}
