// Agent operations: the per-session decision log (`memory.decisions`),
// consent to long-term memory (`memory.consent`) and the namespace's
// privacy policy (`memory.privacy`). Each call is one API route, run in
// process through the same router the Worker serves.
import { scrubText as coreScrubText } from "./edgemem_wasm.js";
import { checkCount, checkId, invalid, rethrow } from "./util.js";
import { LIMITS } from "./limits.js";

/**
 * The store's privacy scrub on any text (a prompt about to leave for a
 * model, a log line): secrets become `[REDACTED:kind]`; with `anonymize`
 * (default true) emails, phones, cards, IBANs, IPs and SSNs become
 * placeholders, or keyed pseudonyms with `privacyKey`. Synchronous:
 * returns `{text, redactions, anonymized}`.
 */
export function scrubText(text, { anonymize = true, privacyKey, namespace } = {}) {
  if (typeof text !== "string") throw invalid("text", "must be a string");
  if (typeof anonymize !== "boolean") throw invalid("anonymize", "must be a boolean");
  if (privacyKey !== undefined && typeof privacyKey !== "string") throw invalid("privacyKey", "must be a string secret");
  if (namespace !== undefined && typeof namespace !== "string") throw invalid("namespace", "must be a string");
  try {
    return JSON.parse(coreScrubText(text, anonymize, privacyKey, namespace));
  } catch (err) {
    rethrow(err);
  }
}

/** The decision kinds, a closed set (anything else is `unknown_kind`). */
export const DECISION_KINDS = Object.freeze(["observation", "reasoning", "decision", "action", "offer", "error"]);

function decisionsPath(sessionId) {
  return `/v1/working-memory/${encodeURIComponent(checkId(sessionId, "sessionId"))}/decisions`;
}

function pageQuery({ kinds, kind, since, limit } = {}) {
  const q = new URLSearchParams();
  // `kind` (one name or a list) is the route's own spelling; `kinds` a list.
  if (kind !== undefined) {
    if (kinds !== undefined) throw invalid("kind", "give kind or kinds, not both");
    kinds = typeof kind === "string" ? [kind] : kind;
  }
  if (kinds !== undefined) {
    if (!Array.isArray(kinds) || kinds.some((k) => typeof k !== "string")) throw invalid("kinds", "must be an array of kind names");
    if (kinds.length) q.set("kinds", kinds.join(","));
  }
  if (since !== undefined) q.set("since", String(checkCount(since, "since", 0, Number.MAX_SAFE_INTEGER)));
  if (limit !== undefined) q.set("limit", String(checkCount(limit, "limit", 1, LIMITS.DECISION_PAGE_LIMIT_MAX)));
  return q;
}

/** Each session's append-only decision log (`memory.decisions`). */
export class Decisions {
  #api;
  #apiText;
  #subscribe;

  constructor(api, apiText, subscribe) {
    this.#api = api;
    this.#apiText = apiText;
    this.#subscribe = subscribe;
  }

  /**
   * Appends `{kind, text, data?, refs?: {tool_call_id?, transfer_id?, memory_ids?}}`
   * to a live session's log; resolves to the stored entry `{seq, ts, kind,
   * text, data?, refs?}` (plus `redactions` when a secret was removed).
   */
  async append(sessionId, entry) {
    if (entry === null || typeof entry !== "object") throw invalid("entry", "must be an object {kind, text, data?, refs?}");
    return this.#api("POST", decisionsPath(sessionId), "", entry);
  }

  /** `{session_id, entries, last_seq}`: entries after `since`, of `kinds`, at most `limit`. */
  async list(sessionId, options = {}) {
    return this.#api("GET", decisionsPath(sessionId), pageQuery(options).toString());
  }

  /** The log as JSON Lines (one entry per line), for export. */
  async export(sessionId, options = {}) {
    const q = pageQuery({ limit: LIMITS.DECISION_PAGE_LIMIT_MAX, ...options });
    let out = "";
    let since = options.since ?? 0;
    // Paged: an export of any length, in bounded steps.
    for (;;) {
      q.set("since", String(since));
      q.set("format", "jsonl");
      const text = await this.#apiText("GET", decisionsPath(sessionId), q.toString());
      if (text === "") return out;
      out += text;
      const lines = text.trimEnd().split("\n");
      since = JSON.parse(lines[lines.length - 1]).seq;
      if (lines.length < Number(q.get("limit"))) return out;
    }
  }

  /**
   * Follows a session's log live: an async iterator of entries after
   * `since`, driven by the change feed (`decision.appended`). Leaving the
   * loop stops it.
   */
  async *follow(sessionId, { since = 0, kinds } = {}) {
    checkId(sessionId, "sessionId");
    let wake;
    let pending = false;
    const unsubscribe = this.#subscribe({ kinds: ["decision.appended"], keys: [sessionId] }, () => {
      pending = true;
      if (wake) wake();
    });
    try {
      for (;;) {
        pending = false;
        const page = await this.list(sessionId, { since, kinds, limit: LIMITS.DECISION_PAGE_LIMIT_MAX });
        for (const e of page.entries) {
          since = e.seq;
          yield e;
        }
        if (page.entries.length === LIMITS.DECISION_PAGE_LIMIT_MAX) continue;
        if (!pending) await new Promise((resolve) => (wake = resolve));
        wake = undefined;
      }
    } finally {
      unsubscribe();
    }
  }
}

function consentPath(userId) {
  return `/v1/consent/${encodeURIComponent(checkId(userId, "userId"))}`;
}

/** Users' consent to long-term memory (`memory.consent`). */
export class Consent {
  #api;

  constructor(api) {
    this.#api = api;
  }

  /** Records consent: `{user_id, long_term: true, granted_at, granted_by}`. */
  async grant(userId) {
    return this.#api("PUT", consentPath(userId), "", { long_term: true });
  }

  /** The consent record, or `null` when the user has not consented. */
  async get(userId) {
    const record = await this.#api("GET", consentPath(userId));
    return record.long_term === true ? record : null;
  }

  /**
   * Withdraws consent and erases the user's long-term memories and episodes
   * from every tier: `{user_id, long_term: false, revoked_at, erased: {memories, episodes}}`.
   */
  async revoke(userId) {
    return this.#api("DELETE", consentPath(userId));
  }
}

/** The namespace's privacy policy (`memory.privacy`). */
export class Privacy {
  #api;

  constructor(api) {
    this.#api = api;
  }

  /** `{require_consent, anonymize, secrets: "redact" | "reject", pseudonyms}`. */
  async policy() {
    return this.#api("GET", "/v1/privacy/policy");
  }

  /** Changes any of `{require_consent, anonymize, secrets}`; the rest stay. */
  async setPolicy(policy) {
    if (policy === null || typeof policy !== "object") throw invalid("policy", "must be an object {require_consent?, anonymize?, secrets?}");
    return this.#api("PUT", "/v1/privacy/policy", "", policy);
  }
}
