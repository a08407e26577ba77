// The CLI's two targets behind one door, `request(method, path, {query,
// body}) -> {status, json | text}`: a Worker over HTTP, or a store on disk
// served in process by `memory.request` exactly as the Worker would. Every
// command is written once against that door.

/** Exit codes: what a script can branch on. */
export const EXIT = Object.freeze({ OK: 0, REFUSED: 1, USAGE: 2, AUTH: 3, NOT_FOUND: 4, SERVER: 5 });

/** The deadline of one HTTP request (not of a `--follow` stream once open). */
export const HTTP_TIMEOUT_MS = 30_000;

/** How often a local `--follow` asks the store whether another process wrote. */
export const LOCAL_FOLLOW_POLL_MS = 250;

/** The largest response body read into memory. */
export const RESPONSE_BYTES_MAX = 64 * 1024 * 1024;

/** A failure with the exit code it maps to. `code` is the API's error code, or the CLI's own. */
export class CliError extends Error {
  constructor(exit, code, detail) {
    super(detail);
    this.exit = exit;
    this.code = code;
    this.detail = detail;
  }
}

/** A usage error (exit 2): bad or missing arguments. */
export function usage(detail) {
  return new CliError(EXIT.USAGE, "usage", detail);
}

/** The encoding guardrail token ceilings are counted with (the Worker's `counter_for(None)`). */
export const CEILING_ENCODING = "cl100k_base";

// Codes that are about who is asking, whatever their status (503 for a
// deployment with no auth configured is still an auth problem to the caller).
const AUTH_CODES = new Set(["unauthorized", "scope_forbidden", "namespace_forbidden", "auth_not_configured", "key_required", "decryption_failed"]);

/**
 * The exit code of an HTTP status (and the API's error code). A 403 with
 * an API code outside AUTH_CODES (consent_required, a quota) is the
 * server refusing the request, not the caller's key: a script must not
 * rotate credentials over it. A 403 with no API code comes from something
 * in front of the Worker (an access gateway), which is about who asks.
 */
export function exitOf(status, code) {
  if (AUTH_CODES.has(code) || status === 401 || (status === 403 && code === "http_403")) return EXIT.AUTH;
  if (status === 404) return EXIT.NOT_FOUND;
  if (status >= 500) return EXIT.SERVER;
  if (status >= 400) return EXIT.REFUSED;
  return EXIT.OK;
}

// The Worker's status for each error code (src/api/mod.rs `status_of`), so
// an in-process error exits as the same request over HTTP would. Codes not
// listed (conflicts, rule codes, transfer results) are refusals.
const STATUS_OF_CODE = {
  invalid_json: 400, invalid_query: 400, invalid_kind: 400, unauthorized: 401, key_required: 401, decryption_failed: 403,
  namespace_forbidden: 403, scope_forbidden: 403, records_quota_exceeded: 403, bytes_quota_exceeded: 403,
  ledger_accounts_quota_exceeded: 403, consent_required: 403, not_found: 404, method_not_allowed: 405,
  payload_too_large: 413, unsupported_media_type: 415, rate_limited: 429, hook_failed: 502, upstream_error: 502,
  auth_not_configured: 503, overloaded: 503, storage_error: 503, encoding_not_loaded: 503, upstream_timeout: 504,
  snapshot_corrupt: 500, schema_version_unsupported: 500, log_corrupt: 500, store_unsuitable: 500, internal: 500,
};
const STATUS_REFUSED_DEFAULT = 422;

/** Throws the response's error as a CliError when it is not a success; else answers its JSON (or text). */
export function ok(res) {
  if (res.status < 400) return res.json !== undefined ? res.json : res.text;
  const code = typeof res.json?.code === "string" ? res.json.code : `http_${res.status}`;
  const detail = typeof res.json?.detail === "string" ? res.json.detail : `HTTP ${res.status}${res.text ? `: ${res.text.slice(0, 200)}` : ""}`;
  throw new CliError(exitOf(res.status, code), code, detail);
}

/** `a=1&b=2` from URLSearchParams or an object; undefined and null values are left out. */
function queryString(query) {
  if (query === undefined || query === null) return "";
  if (query instanceof URLSearchParams) return query.toString();
  return new URLSearchParams(Object.entries(query).filter(([, v]) => v !== undefined && v !== null).map(([k, v]) => [k, String(v)])).toString();
}

function networkError(url, err) {
  if (err?.name === "TimeoutError") return new CliError(EXIT.SERVER, "timeout", `no answer from ${url} within ${HTTP_TIMEOUT_MS / 1000} s`);
  const cause = err?.cause?.code ?? err?.cause?.message ?? err?.message ?? String(err);
  return new CliError(EXIT.SERVER, "network_error", `cannot reach ${url}: ${cause}`);
}

async function readBody(res) {
  const length = Number(res.headers.get("content-length"));
  if (length > RESPONSE_BYTES_MAX) throw new CliError(EXIT.SERVER, "response_too_large", `the response has ${length} bytes, more than ${RESPONSE_BYTES_MAX}`);
  const text = await res.text();
  if (text.length > RESPONSE_BYTES_MAX) throw new CliError(EXIT.SERVER, "response_too_large", `the response is larger than ${RESPONSE_BYTES_MAX} bytes`);
  const type = res.headers.get("content-type") ?? "";
  if (type.includes("application/json") && text !== "") {
    try {
      return { status: res.status, json: JSON.parse(text) };
    } catch {
      // A proxy's error page that claims JSON: keep it as text.
    }
  }
  return { status: res.status, text };
}

/**
 * A Worker at `url`; `token` is sent as `Authorization: Bearer`, and
 * `encryptionKey` (the tenant's key, base64url of 32 bytes) as
 * `X-Edgemem-Encryption-Key`.
 */
export function httpTarget({ url, token, namespace, encryptionKey }) {
  let base;
  try {
    base = new URL(url);
  } catch {
    throw usage(`--url ${JSON.stringify(url)} is not a URL`);
  }
  if (!["http:", "https:"].includes(base.protocol)) throw usage(`--url must be http or https, not ${base.protocol}`);
  // Keep a path prefix (https://host/edgemem) that `new URL("/v1/..", base)` would drop.
  const root = base.href.replace(/\/+$/, "");
  const headers = (extra = {}) => ({
    ...(token ? { authorization: `Bearer ${token}` } : {}),
    ...(encryptionKey ? { "x-edgemem-encryption-key": encryptionKey } : {}),
    ...extra,
  });
  const address = (path, query) => {
    const q = new URLSearchParams(queryString(query));
    if (namespace !== undefined) q.set("namespace", namespace);
    const s = q.toString();
    return `${root}${path}${s ? `?${s}` : ""}`;
  };
  return {
    kind: "http",
    async request(method, path, { query, body } = {}) {
      // No redirects: the token is for this URL only.
      // A string body is sent as it is (an NDJSON import); anything else as JSON.
      const type = typeof body === "string" ? "application/x-ndjson" : "application/json";
      const init = { method, redirect: "error", headers: headers(body === undefined ? {} : { "content-type": type }), signal: AbortSignal.timeout(HTTP_TIMEOUT_MS) };
      if (body !== undefined) init.body = typeof body === "string" ? body : JSON.stringify(body);
      let res;
      try {
        res = await fetch(address(path, query), init);
        return await readBody(res);
      } catch (err) {
        if (err instanceof CliError) throw err;
        throw networkError(root, err);
      }
    },
    /**
     * Server-sent events from `path`: yields `{event: "open"}` once the
     * stream is open, then `{id, event, data}` per event until it ends or
     * `signal` aborts. Only opening the stream has a deadline.
     */
    async *events(path, { query, signal } = {}) {
      const opening = new AbortController();
      const timer = setTimeout(() => opening.abort(new DOMException("timed out", "TimeoutError")), HTTP_TIMEOUT_MS);
      let res;
      try {
        res = await fetch(address(path, query), { redirect: "error", headers: headers({ accept: "text/event-stream" }), signal: AbortSignal.any([opening.signal, ...(signal ? [signal] : [])]) });
      } catch (err) {
        if (signal?.aborted) return;
        throw networkError(root, opening.signal.aborted ? opening.signal.reason : err);
      } finally {
        clearTimeout(timer);
      }
      if (res.status >= 400 || !(res.headers.get("content-type") ?? "").includes("text/event-stream")) ok(await readBody(res));
      yield { id: undefined, event: "open", data: "" };
      const decoder = new TextDecoder();
      let buffered = "";
      try {
        for await (const chunk of res.body) {
          buffered += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, "\n");
          let end;
          while ((end = buffered.indexOf("\n\n")) >= 0) {
            const frame = buffered.slice(0, end);
            buffered = buffered.slice(end + 2);
            const ev = { id: undefined, event: "message", data: "" };
            for (const line of frame.split("\n")) {
              if (line.startsWith(":")) continue;
              const [field, ...rest] = line.split(":");
              const value = rest.join(":").replace(/^ /, "");
              if (field === "id") ev.id = value;
              else if (field === "event") ev.event = value;
              else if (field === "data") ev.data += (ev.data ? "\n" : "") + value;
            }
            yield ev;
          }
          if (buffered.length > RESPONSE_BYTES_MAX) throw new CliError(EXIT.SERVER, "response_too_large", "an event stream frame passed the response limit");
        }
      } catch (err) {
        if (signal?.aborted) return;
        if (err instanceof CliError) throw err;
        throw networkError(root, err);
      }
    },
    async close() {},
  };
}

/**
 * A store on disk, served in process. The directory's writer lock is held
 * from open to `close()` unless `readOnly` (a `--follow` must not block
 * writers for as long as it runs). `privacyKey` must be the key the store
 * was written with: user ids are sealed with it, so without it every
 * by-user route (search, forget, consent) silently matches nothing.
 */
export function localTarget({ dir, namespace, readOnly = false, privacyKey, passphrase }) {
  let opened;
  const open = () =>
    (opened ??= (async () => {
      const { Memory, FileStore, Tokenizer } = await import("./node.js");
      // Without a loaded encoding the core estimates, so a prompt the
      // Worker refuses for its token ceiling could pass here (or the other
      // way round). Loading registers it with every Memory in the process.
      await Tokenizer.load(CEILING_ENCODING);
      const store = new FileStore(dir);
      const release = readOnly ? async () => {} : await store.lock();
      try {
        return { store, release, memory: await Memory.open({ store, namespace, privacyKey, encryptionKey: passphrase === undefined ? undefined : { passphrase } }) };
      } catch (err) {
        await release();
        throw err;
      }
    })());
  const fail = (err) => {
    const code = typeof err?.code === "string" ? err.code : "internal";
    const status = Number.isInteger(err?.status) ? err.status : STATUS_OF_CODE[code] ?? (code === "internal" ? 500 : STATUS_REFUSED_DEFAULT);
    return { status, json: { detail: String(err?.message ?? err), code } };
  };
  return {
    kind: "local",
    /** The opened Memory (for commands that speak to it directly, as `mcp` does). */
    async memory() {
      return (await open()).memory;
    },
    async request(method, path, { query, body } = {}) {
      let memory;
      try {
        ({ memory } = await open());
      } catch (err) {
        return fail(err);
      }
      try {
        const out = await memory.request(method, path, { query: queryString(query), body });
        return typeof out === "string" ? { status: 200, text: out } : { status: 200, json: out };
      } catch (err) {
        return fail(err);
      }
    },
    /**
     * Calls `handler(event)` for each feed event `options` admits, including
     * writes by other processes: the store is polled through its feed
     * channel. Resolves to a function that stops.
     */
    async subscribe(options, handler) {
      let o;
      try {
        o = await open();
      } catch (err) {
        ok(fail(err));
      }
      let unsubscribe;
      try {
        unsubscribe = o.memory.subscribe(options, handler);
      } catch (err) {
        ok(fail(err));
      }
      const poke = new BroadcastChannel(o.store.feedChannel(""));
      const timer = setInterval(() => poke.postMessage("poll"), LOCAL_FOLLOW_POLL_MS);
      return () => {
        clearInterval(timer);
        poke.close();
        unsubscribe();
      };
    },
    async close() {
      if (!opened) return;
      const o = await opened.catch(() => undefined);
      if (!o) return;
      o.memory.free();
      await o.release();
    },
  };
}
