// The two backends the page can talk to. Both expose the same five session
// calls and return the same session JSON, a `ledger` with the package's
// Ledger calls and JSON, a `history` for the chat panel and a `longTerm`
// for the long-term memory panel.
import { EdgememError } from "edgemem";

const LIST_LIMIT = 100; // the HTTP API's largest page

/** The package itself, over IndexedDB in this page. */
export function localBackend(memory) {
  return {
    kind: "local",
    selectionKey: "edgemem-demo:selected:local",
    list: () => memory.listSessions({ offset: 0, limit: LIST_LIMIT }),
    get: (id) => memory.getSession(id),
    create: (id, init) => memory.getOrCreateSession(id, init),
    append: (id, messages) => memory.appendMessages(id, messages),
    remove: (id) => memory.deleteSession(id),
    ledgerKey: "edgemem-demo:ledger:local",
    ledger: memory.ledger,
    chatKey: "edgemem-demo:chat:local",
    // The chat panel's calls; `windowTokens` is the context window in tokens. The
    // package's getSession takes no window, so its gauges stay null here.
    history: {
      get: (id) => memory.getSession(id),
      compact: (id, windowTokens) => memory.compact(id, { contextWindowMax: windowTokens }),
      archive: (id, offset, limit) => memory.archivedMessages(id, { offset, limit }),
      prompt: (id, windowTokens, query) => memory.prompt({ sessionId: id, windowTokens, query }),
    },
    // The long-term panel's calls: the package's `memory.longTerm`, plus a
    // count. Neither API has a count route; a dry-run forget with an empty
    // policy scans every record and selects none.
    longTerm: {
      create: (memories) => memory.longTerm.create(memories),
      search: (query) => memory.longTerm.search(query),
      get: (id) => memory.longTerm.get(id),
      edit: (id, patch) => memory.longTerm.edit(id, patch),
      delete: (ids) => memory.longTerm.delete(ids),
      forget: (policy, dryRun) => memory.longTerm.forget(policy, { dryRun }),
      count: async () => (await memory.longTerm.forget({}, { dryRun: true })).scanned,
      versions: (id) => memory.longTerm.versions(id),
      restore: (id, version) => memory.longTerm.restore(id, version),
      redact: (id) => memory.longTerm.redact(id),
    },
    // The decision-log panel's calls: the package's `memory.decisions`.
    decisions: {
      append: (id, entry) => memory.decisions.append(id, entry),
      list: (id, since) => memory.decisions.list(id, { since }),
    },
  };
}

/** The edgemem Worker's AMS-compatible HTTP API on this origin. */
export function workerBackend(namespace, token, encryptionKey = "") {
  const query = `?namespace=${encodeURIComponent(namespace)}`;

  // An empty id or a dot segment cannot name a session in a URL path: the URL
  // parser would turn it into the list route. Refuse it the way the Rust side
  // refuses invalid ids, instead of sending a request that means something else.
  function sessionPath(id) {
    if (id === "" || id === "." || id === "..") {
      throw new EdgememError("invalid_input", `invalid session_id: ${JSON.stringify(id)} cannot appear in a URL path`);
    }
    return `/v1/working-memory/${encodeURIComponent(id)}`;
  }

  async function request(method, path, body, extraQuery = "") {
    const headers = { accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (token) headers.authorization = `Bearer ${token}`;
    if (encryptionKey) headers["x-edgemem-encryption-key"] = encryptionKey;
    const res = await fetch(path + query + extraQuery, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let json;
    try {
      json = JSON.parse(text);
    } catch {
      throw new Error(`${method} ${path}: HTTP ${res.status}, response is not JSON (is the Worker serving this page?)`);
    }
    if (!res.ok) {
      // The API's typed error body: {"detail", "code"}.
      if (json && typeof json.code === "string") throw new EdgememError(json.code, String(json.detail ?? ""));
      throw new Error(`${method} ${path}: HTTP ${res.status}`);
    }
    return json;
  }

  // Ledger ids go into URL paths too; refuse what the package's Ledger refuses
  // (and what the URL parser would rewrite) instead of calling another route.
  function ledgerSegment(id, field = "id") {
    if (typeof id !== "string" || id === "" || id === "." || id === ".." || id.includes("/")) {
      throw new EdgememError("invalid_input", `invalid ${field}: ${JSON.stringify(id)} must be a non-empty string without '/'`);
    }
    return encodeURIComponent(id);
  }

  async function nullIfMissing(call) {
    try {
      return await call();
    } catch (err) {
      if (err instanceof EdgememError && err.code === "not_found") return null;
      throw err;
    }
  }

  /** The same calls and JSON as the package's `memory.ledger`, over `/v1/ledger`. */
  const ledger = {
    createAsset: (code, scale) => request("POST", "/v1/ledger/assets", { code, scale }),
    createAccount: (account) => request("POST", "/v1/ledger/accounts", account),
    account: (id) => nullIfMissing(() => request("GET", `/v1/ledger/accounts/${ledgerSegment(id)}`)),
    transfer: (id) => nullIfMissing(() => request("GET", `/v1/ledger/transfers/${ledgerSegment(id)}`)),
    createTransfers: async (transfers) => (await request("POST", "/v1/ledger/transfers", { transfers })).results,
    post: (id, { amount } = {}) =>
      request("POST", `/v1/ledger/transfers/${ledgerSegment(id)}/post`, amount === undefined ? {} : { amount }),
    void: (id) => request("POST", `/v1/ledger/transfers/${ledgerSegment(id)}/void`, {}),
    reconcile: () => request("POST", "/v1/ledger/reconcile", {}),
  };

  /**
   * The same calls and JSON as the local `longTerm`, over AMS's
   * `/v1/long-term-memory` routes; `search` takes the package's query and
   * sends AMS's SearchRequest.
   */
  const longTerm = {
    create: (memories) => request("POST", "/v1/long-term-memory/", { memories }),
    search: ({ text, mode, limit, offset, hybridAlpha, fusion, recencyBoost, latestOnly, asOf, includeSuperseded, explain, ...filters }) =>
      request("POST", "/v1/long-term-memory/search", {
        text,
        search_mode: mode,
        limit,
        offset,
        hybrid_alpha: hybridAlpha,
        fusion,
        recency_boost: recencyBoost,
        latest_only: latestOnly,
        as_of: asOf,
        include_superseded: includeSuperseded,
        explain,
        ...filters,
      }),
    get: (id) => nullIfMissing(() => request("GET", `/v1/long-term-memory/${ledgerSegment(id, "memory_id")}`)),
    edit: (id, patch) => request("PATCH", `/v1/long-term-memory/${ledgerSegment(id, "memory_id")}`, patch),
    async delete(ids) {
      const q = new URLSearchParams();
      for (const id of ids) q.append("memory_ids", id);
      const r = await request("DELETE", "/v1/long-term-memory", undefined, `&${q}`);
      return Number(/deleted (\d+)/.exec(r.status)?.[1] ?? 0);
    },
    forget: (policy, dryRun) => request("POST", "/v1/long-term-memory/forget", { policy }, `&dry_run=${dryRun}`),
    count: async () => (await request("POST", "/v1/long-term-memory/forget", { policy: {} }, "&dry_run=true")).scanned,
    versions: (id) => nullIfMissing(() => request("GET", `/v1/long-term-memory/${ledgerSegment(id, "memory_id")}/versions`)),
    restore: (id, version) => request("POST", `/v1/long-term-memory/${ledgerSegment(id, "memory_id")}/restore`, { version }),
    redact: (id) => request("POST", `/v1/long-term-memory/${ledgerSegment(id, "memory_id")}/redact`),
  };

  async function get(id) {
    try {
      return await request("GET", sessionPath(id));
    } catch (err) {
      if (err instanceof EdgememError && err.code === "not_found") return null;
      throw err;
    }
  }

  return {
    kind: "worker",
    namespace,
    token,
    encryptionKey,
    selectionKey: `edgemem-demo:selected:worker:${namespace}`,
    list: () => request("GET", `/v1/working-memory/`, undefined, `&limit=${LIST_LIMIT}`),
    get,
    // The API's PUT replaces a session; only create one that is not there yet,
    // as the package's getOrCreateSession does.
    async create(id, init) {
      const existing = await get(id);
      if (existing) return { created: false, session: existing };
      return { created: true, session: await request("PUT", sessionPath(id), init) };
    },
    append: (id, messages) => request("POST", `${sessionPath(id)}/messages`, { messages }),
    async remove(id) {
      await request("DELETE", sessionPath(id));
      return true;
    },
    health: () => request("GET", "/v1/health"),
    /** `{encrypted, key_id, algorithm}`: a key sent to a plaintext tenant encrypts it. */
    encryption: () => request("GET", "/v1/encryption"),
    ledgerKey: `edgemem-demo:ledger:worker:${namespace}`,
    ledger,
    chatKey: `edgemem-demo:chat:worker:${namespace}`,
    /** The same calls as the local `history`; a GET with a window fills AMS's context gauges. */
    history: {
      get: (id, windowTokens) => nullIfMissing(() => request("GET", sessionPath(id), undefined, `&context_window_max=${windowTokens}`)),
      compact: (id, windowTokens) => request("POST", `${sessionPath(id)}/compact`, { context_window_max: windowTokens }),
      archive: (id, offset, limit) => request("GET", `${sessionPath(id)}/archive`, undefined, `&offset=${offset}&limit=${limit}`),
      prompt: (id, windowTokens, query) => request("POST", "/v1/prompt", { session_id: id, window_tokens: windowTokens, query }),
    },
    longTerm,
    /** The same calls as the local `decisions`, over `/v1/working-memory/{id}/decisions`. */
    decisions: {
      append: (id, entry) => request("POST", `${sessionPath(id)}/decisions`, entry),
      list: (id, since) => request("GET", `${sessionPath(id)}/decisions`, undefined, `&since=${since}`),
    },
  };
}
