// The service-state cache (`memory.services`): the last state an agent read
// from each external service, with a TTL per service. A miss reads through
// the caller's fetcher once however many gets wait on it; an entry past its
// TTL is never served unless asked for, and then says `stale: true`.
import { EdgememError, checkId, fromJson, invalid, toJson } from "./util.js";
import { LIMITS } from "./limits.js";

const path = (service, leaf = "") => `/v1/services/${encodeURIComponent(checkId(service, "service"))}${leaf}`;

function query(params) {
  return Object.entries(params)
    .filter(([, v]) => v !== undefined && v !== false)
    .map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`)
    .join("&");
}

/** Wraps the caller's `fetcher(agentId, service)` with a deadline and typed failures. */
function wrapFetcher(fetcher, timeoutMs) {
  return async (agentId, service) => {
    let timer;
    const deadline = new Promise((_, reject) => {
      timer = setTimeout(
        () => reject(Object.assign(new EdgememError("upstream_timeout", `service ${service}: upstream did not answer within ${timeoutMs} ms`), { timeoutMs })),
        timeoutMs,
      );
    });
    try {
      const state = await Promise.race([Promise.resolve().then(() => fetcher(agentId, service)), deadline]);
      if (typeof state === "string") return state;
      if (state === null || typeof state !== "object" || Array.isArray(state)) {
        throw Object.assign(new Error(`the fetcher returned ${Array.isArray(state) ? "an array" : state === null ? "null" : typeof state}, not a state object`), { status: 0 });
      }
      return toJson(state, "state");
    } catch (err) {
      if (err?.code === "upstream_timeout") throw err;
      const status = Number.isInteger(err?.status) ? err.status : 0;
      throw Object.assign(new EdgememError("upstream_error", String(err?.message ?? err)), { status });
    } finally {
      clearTimeout(timer);
    }
  };
}

/** A tenant's service-state cache (`memory.services`). */
export class ServiceCache {
  #api;
  #apiText;
  #core;

  constructor(api, apiText, core) {
    this.#api = api;
    this.#apiText = apiText;
    this.#core = core;
  }

  /**
   * Sets the upstream: `async (agentId, service) => state` (an object, or
   * JSON text). A throw is `upstream_error` (with `err.status` when the
   * thrown error has one); no answer within `timeoutMs` is `upstream_timeout`.
   */
  setFetcher(fetcher, { timeoutMs = LIMITS.SERVICE_FETCH_TIMEOUT_MS_DEFAULT } = {}) {
    if (fetcher !== null && typeof fetcher !== "function") throw invalid("fetcher", "must be a function (agentId, service) => Promise<state>, or null");
    if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > LIMITS.SERVICE_FETCH_TIMEOUT_MS_MAX) throw invalid("timeoutMs", `must be an integer from 1 to ${LIMITS.SERVICE_FETCH_TIMEOUT_MS_MAX}`);
    this.#core.setServiceFetcher(fetcher === null ? null : wrapFetcher(fetcher, timeoutMs));
  }

  /** The TTL table: `[{service, ttl_seconds}]` (the seed's six by default). */
  async list() {
    return (await this.#api("GET", "/v1/services")).services;
  }

  /** Registers a service, or sets its TTL. */
  async register(service, ttlSeconds) {
    return this.#api("PUT", path(service), "", { ttl_seconds: ttlSeconds });
  }

  /**
   * `{agent_id, service, state, age_ms, stale, source, fetched_at, expires_at}`:
   * fresh from the cache, else read through the fetcher. `allowStale` serves
   * an entry past its TTL when the upstream fails (with `upstream_error`).
   */
  async get(agentId, service, { allowStale = false, forceRefresh = false, exactNumbers = false } = {}) {
    const q = query({ agent_id: checkId(agentId, "agentId"), allow_stale: allowStale && "true", force_refresh: forceRefresh && "true" });
    return fromJson(await this.#apiText("GET", path(service, "/state"), q), exactNumbers);
  }

  /** `get` that skips a fresh entry and asks the upstream. */
  async forceRefresh(agentId, service, options = {}) {
    return this.get(agentId, service, { ...options, forceRefresh: true });
  }

  /** Write-through after the agent's own mutation: `state` is what the service now holds. */
  async put(agentId, service, state) {
    if (state === null || typeof state !== "object") throw invalid("state", "must be an object");
    return this.#api("PUT", path(service, "/state"), query({ agent_id: checkId(agentId, "agentId") }), toJson({ state }, "state"));
  }

  /** Drops the agent's cached state of `service`, or of every service; resolves to how many were dropped. */
  async invalidate(agentId, service) {
    const q = query({ agent_id: checkId(agentId, "agentId") });
    const r = service === undefined ? await this.#api("DELETE", "/v1/services/state", q) : await this.#api("DELETE", path(service, "/state"), q);
    return r.invalidated;
  }

  /**
   * Every service's state (or `services`), read concurrently: per service its
   * state with `age_ms`, or its error; `totals` by asset as exact Decimal strings.
   */
  async portfolioSnapshot(agentId, services, { exactNumbers = false } = {}) {
    if (services !== undefined && (!Array.isArray(services) || services.some((s) => typeof s !== "string" || s.includes(",")))) {
      throw invalid("services", "must be an array of service names");
    }
    const q = query({ agent_id: checkId(agentId, "agentId"), services: services?.join(",") });
    return fromJson(await this.#apiText("GET", "/v1/services/snapshot", q), exactNumbers);
  }
}
