// Conversation history, agent configuration and the tool-result cache: thin
// wrappers over in-process API routes (`MemoryCore.call`), validated by the
// same Rust code as the HTTP API.
import { EdgememError, checkCount, checkId, invalid, toJson } from "./util.js";
import { LIMITS } from "./limits.js";

const { SUMMARIZER_TIMEOUT_MS_DEFAULT, SUMMARIZER_TIMEOUT_MS_MAX } = LIMITS;

/**
 * Adapts the user's `async (turns, previousSummary, {tokensMax}) => string`
 * to the core's hook, with a timeout. A throw, a timeout or a non-string
 * reaches the core as a failed hook, which leaves the history intact.
 */
export function wrapSummarizer(fn, timeoutMs = SUMMARIZER_TIMEOUT_MS_DEFAULT) {
  if (fn === undefined || fn === null) return undefined;
  if (typeof fn !== "function") throw invalid("summarizer", "must be a function (turns, previousSummary) => Promise<string>");
  checkCount(timeoutMs, "timeoutMs", 1, SUMMARIZER_TIMEOUT_MS_MAX);
  return async (turnsJson, previous, tokensMax) => {
    const turns = JSON.parse(turnsJson);
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      return await Promise.race([Promise.resolve().then(() => fn(turns, previous, { tokensMax })), timeout]);
    } finally {
      clearTimeout(timer);
    }
  };
}

/** `a=1&b=2` from an object, skipping undefined values. */
export function historyQuery(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null) q.set(k, String(v));
  return q.toString();
}

const seg = (id, field) => encodeURIComponent(checkId(id, field));

/** One agent's configuration: versioned system prompts, patches, tool allow-list. */
export class AgentConfig {
  #api;
  #path;
  #loadCeilingEncoding;

  constructor(api, agentId, loadCeilingEncoding) {
    this.#api = api;
    this.#path = `/v1/agents/${seg(agentId, "agentId")}`;
    this.#loadCeilingEncoding = loadCeilingEncoding;
  }

  /**
   * A token ceiling is counted in cl100k_base, as the Worker counts it; the
   * store estimates when no encoding is loaded, so the same prompt could
   * pass here and fail there. Loaded only when a ceiling is set (the ranks
   * are an asset to fetch); a failed load leaves the estimate.
   */
  async #readyCeiling() {
    if (!this.#loadCeilingEncoding) return;
    const config = await this.get();
    if (config?.guardrails?.tokens_max == null) return;
    try {
      await this.#loadCeilingEncoding();
    } catch {
      // Counted by the estimator, as before the ceiling had an encoding.
    }
  }

  /** `{agent_id, active_version, prompt, versions, patches, tools_allowed, system_text}`, or null. */
  async get() {
    try {
      return await this.#api("GET", `${this.#path}/config`);
    } catch (err) {
      if (err.code === "not_found") return null;
      throw err;
    }
  }

  /**
   * Adds a prompt version and makes it live. `validate` runs first:
   * `async (text) => true | string`; anything but `true` refuses the prompt
   * (`prompt_rejected`) and nothing changes.
   */
  async setPrompt(text, { note, validate } = {}) {
    if (typeof text !== "string") throw invalid("text", "must be a string");
    if (validate !== undefined) {
      if (typeof validate !== "function") throw invalid("validate", "must be a function (text) => true | string");
      let verdict;
      try {
        verdict = await validate(text);
      } catch (err) {
        verdict = `the validator threw: ${err && err.message ? err.message : err}`;
      }
      if (verdict !== true) {
        throw new EdgememError("prompt_rejected", `prompt rejected: ${typeof verdict === "string" ? verdict : "the validator did not return true"}`);
      }
    }
    await this.#readyCeiling();
    return this.#api("PUT", `${this.#path}/prompt`, "", { text, note });
  }

  /** Makes an existing version live again. */
  async rollback(version) {
    checkCount(version, "version", 1, 2 ** 32 - 1);
    await this.#readyCeiling();
    return this.#api("POST", `${this.#path}/prompt/rollback`, "", { version });
  }

  /** Appends a context patch after the system prompt. */
  async appendPatch(text) {
    if (typeof text !== "string") throw invalid("text", "must be a string");
    await this.#readyCeiling();
    return this.#api("POST", `${this.#path}/patches`, "", { text });
  }

  /** Removes patches matching a glob (`*`, `?`, `\` escapes); `removed` lists their ids. */
  async removePatches(glob) {
    if (typeof glob !== "string") throw invalid("glob", "must be a string");
    return this.#api("DELETE", `${this.#path}/patches`, historyQuery({ glob }));
  }

  /**
   * Sets the rules every later prompt or patch must keep: `required`
   * clauses, `forbidden` patterns (globs, matched anywhere in the text), and
   * `tokensMax` of the system text. A change that breaks one is refused
   * with `guardrail_violated`, naming the rule, by the store itself.
   */
  async setGuardrails({ required = [], forbidden = [], tokensMax = null } = {}) {
    if (!Array.isArray(required) || !Array.isArray(forbidden)) throw invalid("guardrails", "required and forbidden must be arrays of strings");
    return this.#api("PUT", `${this.#path}/guardrails`, "", { required, forbidden, tokens_max: tokensMax });
  }

  /** Sets the tool allow-list; `null` allows every tool. */
  async allowTools(tools) {
    if (tools !== null && !Array.isArray(tools)) throw invalid("tools", "must be an array of names or null");
    return this.#api("PUT", `${this.#path}/tools`, "", { tools });
  }
}

/** A session's tool-result cache, keyed by tool name plus canonical arguments. */
export class ToolCache {
  #api;
  #path;

  constructor(api, sessionId) {
    this.#api = api;
    this.#path = `/v1/working-memory/${seg(sessionId, "sessionId")}/tool-cache`;
  }

  /** The cached result, or `undefined` on a miss (hits and misses are counted). */
  async get(tool, args = {}) {
    const r = await this.#api("GET", this.#path, historyQuery({ tool: checkId(tool, "tool"), args: toJson(args, "args") }));
    return r.hit ? r.entry.result : undefined;
  }

  /** Caches `result` (any JSON) for `ttlSeconds`, else the tool's configured TTL. */
  async put(tool, args, result, { ttlSeconds } = {}) {
    if (ttlSeconds !== undefined) checkCount(ttlSeconds, "ttlSeconds", 1, 2 ** 32 - 1);
    return this.#api("PUT", this.#path, "", { tool: checkId(tool, "tool"), args: args ?? {}, result, ttl_seconds: ttlSeconds });
  }

  /** Returns the cached result or calls `fn(args)` and caches what it resolves to. */
  async getOrCall(tool, args, fn, options) {
    const hit = await this.get(tool, args);
    if (hit !== undefined) return hit;
    const result = await fn(args);
    await this.put(tool, args, result, options);
    return result;
  }

  /** Drops entries: all, one tool's, or one call's. Resolves to how many. */
  async invalidate({ tool, args } = {}) {
    const r = await this.#api("DELETE", this.#path, historyQuery({ tool, args: args === undefined ? undefined : toJson(args, "args") }));
    return r.invalidated;
  }

  /** `{entries, hits, misses}`. */
  async list() {
    return this.#api("GET", this.#path);
  }
}
