// The idiomatic JS API over the wasm core. Structured values cross into wasm as
// JSON text, validated by the same Rust code as the HTTP API; nothing here
// holds state or logic of its own beyond argument checks.
import { MemoryCore, version as coreVersion } from "./edgemem_wasm.js";

export { MemoryStore, IndexedDBStore, DurableObjectStore, KVStore } from "./stores.js";

/** Every error edgemem throws. `code` is stable; see the README for the list. */
export class EdgememError extends Error {
  constructor(code, message) {
    super(message);
    this.name = "EdgememError";
    this.code = code;
  }
}

function rethrow(err) {
  if (err instanceof EdgememError) throw err;
  if (err && err.name === "EdgememError" && typeof err.code === "string") {
    throw new EdgememError(err.code, err.message);
  }
  throw err;
}

async function call(promiseFactory) {
  try {
    return await promiseFactory();
  } catch (err) {
    rethrow(err);
  }
}

function invalid(field, reason) {
  return new EdgememError("invalid_input", `invalid ${field}: ${reason}`);
}

// JSON.stringify would turn NaN and Infinity into null silently; refuse them.
function toJson(value, field) {
  if (value === undefined) return "{}";
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw invalid(field, "must be an object");
  }
  return JSON.stringify(value, (key, v) => {
    if (typeof v === "number" && !Number.isFinite(v)) {
      throw invalid(key ? `${field}.${key}` : field, `${v} is not a finite number`);
    }
    if (typeof v === "bigint") throw invalid(key ? `${field}.${key}` : field, "BigInt is not JSON");
    return v;
  });
}

function checkId(id, field = "sessionId") {
  if (typeof id !== "string") throw invalid(field, "must be a string");
  return id;
}

function checkCount(n, field, min, max) {
  if (!Number.isInteger(n) || n < min || n > max) throw invalid(field, `must be an integer from ${min} to ${max}`);
  return n;
}

/**
 * A tenant's memory. Open it on a store; every mutating call resolves only
 * after its op-log record is durable in that store.
 */
export class Memory {
  #core;

  constructor(core) {
    if (!(core instanceof MemoryCore)) throw new TypeError("use Memory.open()");
    this.#core = core;
  }

  /**
   * @param {object} [options]
   * @param {object} [options.store] MemoryStore, IndexedDBStore, DurableObjectStore, or any object with async get/put/delete/list. Default: volatile memory.
   * @param {string} [options.namespace] the tenant namespace recorded on sessions.
   * @param {number} [options.snapshotEveryOps] log records between snapshots (default 1000).
   * @param {number} [options.chunkBytes] snapshot chunk size (default 1 MiB, at most 2 MB).
   * @param {string} [options.keyPrefix] prefix of every key in the store (default "").
   * @param {() => number} [options.clock] milliseconds since the epoch (default Date.now).
   */
  static async open(options = {}) {
    const { store, namespace, snapshotEveryOps, chunkBytes, keyPrefix, clock } = options;
    const opts = toJson(
      { namespace, snapshot_every_ops: snapshotEveryOps, chunk_bytes: chunkBytes, key_prefix: keyPrefix },
      "options",
    );
    const core = await call(() => MemoryCore.open(store, opts, clock));
    return new Memory(core);
  }

  /** Opens a volatile replica from a snapshot published with `publishSnapshot`. */
  static async openPublished(source, { keyPrefix = "", namespace, clock } = {}) {
    const core = await call(() => MemoryCore.openPublished(source, keyPrefix, namespace, clock));
    return new Memory(core);
  }

  /** Returns `{created, session}`: the live session, or a new one made from `init`. */
  async getOrCreateSession(sessionId, init = {}) {
    return JSON.parse(await call(() => this.#core.getOrCreateSession(checkId(sessionId), toJson(init, "session"))));
  }

  /** Creates or replaces a session (AMS `PUT /v1/working-memory/{id}` semantics). */
  async putSession(sessionId, session = {}) {
    return JSON.parse(await call(() => this.#core.putSession(checkId(sessionId), toJson(session, "session"))));
  }

  /** Appends `[{role, content, id?, created_at?}]` to an existing session. */
  async appendMessages(sessionId, messages) {
    if (!Array.isArray(messages)) throw invalid("messages", "must be an array");
    return JSON.parse(await call(() => this.#core.appendMessages(checkId(sessionId), toJson({ messages }, "messages"))));
  }

  /** The session, or `null` when it is missing or expired. */
  async getSession(sessionId, { userId, recentMessagesLimit } = {}) {
    if (userId !== undefined) checkId(userId, "userId");
    if (recentMessagesLimit !== undefined) checkCount(recentMessagesLimit, "recentMessagesLimit", 0, 2 ** 32 - 1);
    const text = await call(() => this.#core.getSession(checkId(sessionId), userId, recentMessagesLimit));
    return text === null ? null : JSON.parse(text);
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

  /** Frees the wasm memory behind this object. */
  free() {
    this.#core.free();
  }
}

/** The edgemem version. */
export function version() {
  return coreVersion();
}
