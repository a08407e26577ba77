// Long-term memory: AMS MemoryRecords, found by meaning (the vector index),
// by keyword (BM25) or both. Records and queries cross as JSON; vectors as
// Float32Array.
import { EdgememError, checkCount, checkId, invalid, toJson } from "./util.js";
import { LIMITS } from "./limits.js";

function flatVectors(vectors, n) {
  if (vectors === undefined) return undefined;
  if (vectors instanceof Float32Array) return vectors;
  if (Array.isArray(vectors) && vectors.every((v) => v instanceof Float32Array)) {
    if (vectors.length !== n) throw invalid("vectors", `${vectors.length} vectors for ${n} memories`);
    const dim = vectors[0]?.length ?? 0;
    if (vectors.some((v) => v.length !== dim)) throw new EdgememError("dimension_mismatch", "invalid vector (dimension mismatch): vectors differ in length");
    const flat = new Float32Array(n * dim);
    vectors.forEach((v, i) => flat.set(v, i * dim));
    return flat;
  }
  throw invalid("vectors", "must be a Float32Array (flat, n × dim) or an array of Float32Array");
}

function checkEmbedder(fn) {
  if (fn !== undefined && typeof fn !== "function") throw invalid("embedder", "must be a function (texts) => Promise<Float32Array[]>");
  return fn;
}

function checkDetector(fn) {
  if (fn !== undefined && typeof fn !== "function") throw invalid("detector", "must be a function (text) => Promise<{start, end, kind}[]>");
  return fn;
}

/**
 * Runs the caller's detector over `text` and replaces each span it reports
 * with `[KIND]`, before the text leaves for the store. Spans are UTF-16
 * offsets into `text`; overlapping or out-of-range spans are refused, so a
 * broken detector cannot corrupt a memory.
 */
async function detectWith(detector, text, counts) {
  let spans;
  try {
    spans = await detector(text);
  } catch (err) {
    throw new EdgememError("hook_failed", `detector hook failed: ${err && err.message ? err.message : err}; nothing was changed`);
  }
  if (!Array.isArray(spans)) throw new EdgememError("hook_failed", "detector hook failed: it must resolve to an array of {start, end, kind}; nothing was changed");
  const sorted = [...spans].sort((a, b) => a.start - b.start);
  let out = "";
  let at = 0;
  for (const s of sorted) {
    const ok = s && Number.isInteger(s.start) && Number.isInteger(s.end) && s.start >= at && s.end > s.start && s.end <= text.length && typeof s.kind === "string" && /^[a-z][a-z0-9_]{0,31}$/.test(s.kind);
    if (!ok) throw new EdgememError("hook_failed", `detector hook failed: bad span ${JSON.stringify(s)} (in range, not overlapping, kind in snake_case); nothing was changed`);
    out += text.slice(at, s.start) + `[${s.kind.toUpperCase()}]`;
    at = s.end;
    counts[s.kind] = (counts[s.kind] ?? 0) + 1;
  }
  return out + text.slice(at);
}

/** A tenant's long-term memory (`memory.longTerm`). */
export class LongTermMemory {
  #api;
  #embedder;
  #detector;

  constructor(api, embedder, detector) {
    this.#api = api;
    this.#embedder = checkEmbedder(embedder);
    this.#detector = checkDetector(detector);
  }

  /** Applies the detector hook (if any) to each text; counts go into the answer's `anonymized`. */
  async #detect(texts) {
    const counts = {};
    if (!this.#detector) return { texts, counts };
    const out = [];
    for (const t of texts) out.push(typeof t === "string" ? await detectWith(this.#detector, t, counts) : t);
    return { texts: out, counts };
  }

  static #merge(answer, counts) {
    if (Object.keys(counts).length === 0) return answer;
    const anonymized = { ...(answer.anonymized ?? {}) };
    for (const [k, n] of Object.entries(counts)) anonymized[k] = (anonymized[k] ?? 0) + n;
    return { ...answer, anonymized };
  }

  /**
   * Creates records (AMS `ClientMemoryRecord` shape: `{id?, text, user_id?,
   * session_id?, topics?, entities?, memory_type?, event_date?, pinned?}`).
   * `vectors`: their embeddings (a flat Float32Array or one per record);
   * else `embedder` (or the one given to `Memory.open`), else the offline
   * hashed n-gram embedder. A record with a `fact_key` (and `valid_from`)
   * supersedes older versions of that fact for the same user. Idempotent:
   * a record already stored is not written again. Resolves to `{created,
   * duplicates, results}`, one result per record: `{id, status: "created" |
   * "superseded" | "duplicate_of", duplicate_of?, superseded?, superseded_by?}`.
   */
  async create(memories, { vectors, deduplicate = true, embedder } = {}) {
    if (!Array.isArray(memories)) throw invalid("memories", "must be an array");
    const flat = flatVectors(vectors, memories.length);
    const { texts, counts } = await this.#detect(memories.map((m) => m?.text));
    const detected = this.#detector ? memories.map((m, i) => (m && typeof m === "object" ? { ...m, text: texts[i] } : m)) : memories;
    const body = toJson({ memories: detected, deduplicate }, "memories");
    return LongTermMemory.#merge(await this.#api("POST", "/v1/long-term-memory/", "", body, undefined, checkEmbedder(embedder) ?? this.#embedder, flat), counts);
  }

  /**
   * Searches: `{text, mode: "auto" (default) | "semantic" | "keyword" |
   * "hybrid", vector?, limit?, offset?, hybridAlpha?, fusion?: "alpha" |
   * "rrf", recencyBoost?, distanceThreshold?, ef?, expand?, referenceTime?,
   * tz?, latestOnly?, asOf?, includeSuperseded?, explain?, exact?}` plus AMS filters
   * in snake_case (`user_id: {eq}`, `topics: {any}`, `memory_type: {eq}`,
   * `created_at: {gte, lte}`, `speaker: {eq}`, `fact_key: {eq}`, ...).
   * Resolves to `{memories: [record + dist, score, score_type, segment,
   * context?, explain?], total, next_offset, search_mode, time_query}`; with
   * `fields: ["id", "score"]` each hit holds only those fields.
   */
  async search({ text, mode, vector, limit, offset, hybridAlpha, fusion, recencyBoost, distanceThreshold, ef, expand, referenceTime, tz, latestOnly, asOf, includeSuperseded, explain, exact, fields, embedder, ...filters } = {}) {
    if (vector !== undefined && !(vector instanceof Float32Array)) throw invalid("vector", "must be a Float32Array");
    const body = toJson({ text, search_mode: mode, limit, offset, hybrid_alpha: hybridAlpha, fusion, recency_boost: recencyBoost, distance_threshold: distanceThreshold, ef, expand, reference_time: referenceTime, tz, latest_only: latestOnly, as_of: asOf, include_superseded: includeSuperseded, explain, exact, fields, ...filters }, "query");
    return this.#api("POST", "/v1/long-term-memory/search", "", body, undefined, checkEmbedder(embedder) ?? this.#embedder, vector);
  }

  /** The record, or null. */
  async get(id) {
    try {
      return await this.#api("GET", `/v1/long-term-memory/${encodeURIComponent(checkId(id, "id"))}`);
    } catch (err) {
      if (err.code === "not_found") return null;
      throw err;
    }
  }

  /** Edits `{text?, topics?, entities?, memory_type?, user_id?, session_id?, event_date?, pinned?}`; a new text is re-embedded. */
  /**
   * Moves the namespace's vectors to the current embedder (after changing
   * models, or to the static embedder from the hashed one): repeats
   * `POST /v1/long-term-memory/reembed` until done. Searches keep the old
   * vectors until the last batch swaps them all at once.
   */
  async reembed({ embedder } = {}) {
    const total = { embedder: null, previous: null, reembedded: 0, remaining: 0, done: false };
    const rounds = Math.ceil(LIMITS.LTM_RECORDS_MAX / LIMITS.LTM_REEMBED_RECORDS_PER_CALL_MAX) + 1;
    for (let i = 0; i < rounds && !total.done; i++) {
      const r = await this.#api("POST", "/v1/long-term-memory/reembed", "", {}, undefined, checkEmbedder(embedder) ?? this.#embedder);
      Object.assign(total, { embedder: r.embedder, previous: i === 0 ? r.previous : total.previous, remaining: r.remaining, done: r.done });
      total.reembedded += r.reembedded;
    }
    return total;
  }

  async edit(id, patch, { embedder } = {}) {
    const { texts, counts } = await this.#detect([patch?.text]);
    const body = this.#detector && typeof patch?.text === "string" ? { ...patch, text: texts[0] } : patch;
    return LongTermMemory.#merge(await this.#api("PATCH", `/v1/long-term-memory/${encodeURIComponent(checkId(id, "id"))}`, "", body, undefined, checkEmbedder(embedder) ?? this.#embedder), counts);
  }

  /**
   * The record's versions, oldest first: `{id, current, versions: [{version,
   * ts, op, text_hash, actor, text}]}` (`text` null once pruned, deleted or
   * redacted); null when the id never existed.
   */
  async versions(id) {
    try {
      return await this.#api("GET", `/v1/long-term-memory/${encodeURIComponent(checkId(id, "id"))}/versions`);
    } catch (err) {
      if (err.code === "not_found") return null;
      throw err;
    }
  }

  /** Writes a new version equal to `version` (re-embedded; back if deleted). Resolves to the record with its new `version`. */
  async restore(id, version, { embedder } = {}) {
    checkCount(version, "version", 1, 0xffffffff);
    return this.#api("POST", `/v1/long-term-memory/${encodeURIComponent(checkId(id, "id"))}/restore`, "", { version }, undefined, checkEmbedder(embedder) ?? this.#embedder);
  }

  /**
   * Removes the record and the text of every version from memory and
   * storage, keeping the hashes and a receipt: `{id, version,
   * redacted_versions, redacted_by, redacted_at}`.
   */
  async redact(id) {
    return this.#api("POST", `/v1/long-term-memory/${encodeURIComponent(checkId(id, "id"))}/redact`);
  }

  /** Deletes records; resolves to how many existed. */
  async delete(ids) {
    if (!Array.isArray(ids) || ids.length === 0) throw invalid("ids", "must be a non-empty array");
    const q = new URLSearchParams();
    for (const id of ids) q.append("memory_ids", checkId(id, "ids[]"));
    const r = await this.#api("DELETE", "/v1/long-term-memory", q.toString());
    return Number(/deleted (\d+)/.exec(r.status)?.[1] ?? 0);
  }

  /**
   * Applies a forget policy `{max_age_days?, max_inactive_days?, budget?,
   * memory_type_allowlist?}`; pinned records and `pinnedIds` are spared.
   * A dry run unless `dryRun: false`. Resolves to `{scanned, deleted, deleted_ids, dry_run}`.
   */
  async forget(policy, { userId, sessionId, namespace, pinnedIds = [], dryRun = true, limit } = {}) {
    if (limit !== undefined) checkCount(limit, "limit", 1, LIMITS.LTM_DELETE_BATCH_MAX);
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries({ user_id: userId, session_id: sessionId, namespace, limit, dry_run: dryRun })) if (v !== undefined) q.set(k, String(v));
    return this.#api("POST", "/v1/long-term-memory/forget", q.toString(), { policy, pinned_ids: pinnedIds });
  }
}

/** The episodic log (`memory.episodes`): agent events with a per-agent cap and a TTL. */
export class Episodes {
  #api;

  constructor(api) {
    this.#api = api;
  }

  /** Records `{agent_id, kind, at?, payload?, outcome?, id?}`; resolves to `{id, seq, evicted}`. */
  async record(event) {
    return this.#api("POST", "/v1/episodes", "", event);
  }

  /** The newest `n` events, newest first, optionally of one agent and kind. */
  async recent(n = 20, { agentId, kind } = {}) {
    checkCount(n, "n", 1, LIMITS.EPISODES_RECENT_MAX);
    const q = new URLSearchParams({ n: String(n) });
    if (agentId !== undefined) q.set("agent_id", checkId(agentId, "agentId"));
    if (kind !== undefined) q.set("kind", String(kind));
    return (await this.#api("GET", "/v1/episodes", q.toString())).episodes;
  }

  /** `{total, by_kind, first_at, last_at, span_seconds}` since a time (RFC 3339 or ms). */
  async summarizeWindow(since, { agentId } = {}) {
    const q = new URLSearchParams({ since: since instanceof Date ? since.toISOString() : String(since) });
    if (agentId !== undefined) q.set("agent_id", checkId(agentId, "agentId"));
    return this.#api("GET", "/v1/episodes/summary", q.toString());
  }

  /** Sets `{per_agent_max, ttl_seconds?, at_cap?: "evict_oldest" | "refuse"}`. */
  async configure(config) {
    return this.#api("PUT", "/v1/episodes/config", "", config);
  }
}
