// Store adapters. Each one only moves bytes: get(key) -> Uint8Array | undefined,
// put(key, bytes), delete(key), list(prefix, range) -> keys. put resolves once durable.
// `range` is { start, end, limit }: keys at or after `start`, before `end` (if
// given), the `limit` smallest. A store may ignore it (edgemem applies it too);
// these honor it, so a listing costs what it returns. getRange(prefix, range)
// -> [key, bytes][] is optional: it lets recovery read each log record once.

import { EdgememError } from "./util.js";
import { LIMITS } from "./limits.js";

/** A volatile store over a Map. Share one between `Memory.open` calls to simulate a restart. */
export class MemoryStore {
  constructor(map = new Map()) {
    this.map = map;
  }
  async get(key) {
    const v = this.map.get(key);
    return v === undefined ? undefined : v.slice();
  }
  async put(key, bytes) {
    this.map.set(key, bytes.slice());
  }
  async delete(key) {
    this.map.delete(key);
  }
  async list(prefix, range) {
    return inRange([...this.map.keys()], prefix, range);
  }
  async getRange(prefix, range) {
    return inRange([...this.map.keys()], prefix, range).map((k) => [k, this.map.get(k).slice()]);
  }
}

/** The keys of `keys` under `prefix` and in `range`, ascending, at most `range.limit`. */
function inRange(keys, prefix, { start = "", end, limit = Infinity } = {}) {
  const within = keys.filter((k) => k.startsWith(prefix) && k >= start && (end === undefined || k < end));
  return within.sort().slice(0, limit);
}

function request(req) {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

/** IndexedDB, for browsers. A put resolves when its transaction has committed. */
export class IndexedDBStore {
  #db;
  #name;
  constructor(db, name = db?.name ?? "edgemem") {
    this.#db = db;
    this.#name = name;
  }

  /**
   * The BroadcastChannel name through which memories on this database (in
   * other tabs) hear of each other's writes.
   */
  feedChannel(keyPrefix = "") {
    return `edgemem:${this.#name}:${keyPrefix}`;
  }

  /**
   * @param {string} [name] database name (default "edgemem").
   * @param {{indexedDB?: IDBFactory}} [options] an IndexedDB factory (default globalThis.indexedDB; fake-indexeddb in tests).
   */
  static async open(name = "edgemem", { indexedDB = globalThis.indexedDB } = {}) {
    if (!indexedDB) {
      throw new EdgememError(
        "storage_error",
        "IndexedDB is not available here: use MemoryStore (or your own get/put/delete/list object) in Node, or pass { indexedDB } (for example fake-indexeddb)",
      );
    }
    const req = indexedDB.open(name, 1);
    req.onupgradeneeded = () => req.result.createObjectStore("kv");
    return new IndexedDBStore(await request(req), name);
  }

  #tx(mode, fn) {
    return new Promise((resolve, reject) => {
      const tx = this.#db.transaction("kv", mode, { durability: "strict" });
      let result;
      const req = fn(tx.objectStore("kv"));
      req.onsuccess = () => (result = req.result);
      tx.oncomplete = () => resolve(result);
      tx.onerror = () => reject(tx.error);
      tx.onabort = () => reject(tx.error ?? new Error("IndexedDB transaction aborted"));
    });
  }

  async get(key) {
    const v = await this.#tx("readonly", (s) => s.get(key));
    return v === undefined ? undefined : new Uint8Array(v);
  }
  async put(key, bytes) {
    await this.#tx("readwrite", (s) => s.put(bytes.slice().buffer, key));
  }
  async delete(key) {
    await this.#tx("readwrite", (s) => s.delete(key));
  }
  /** The IndexedDB key range for `prefix` and `range`, or null if it is empty. */
  #bounds(prefix, { start = "", end } = {}) {
    const lower = start > prefix ? start : prefix;
    const upper = end !== undefined && end < prefix + "\uffff" ? end : prefix + "\uffff";
    if (!(lower < upper)) return null;
    return IDBKeyRange.bound(lower, upper, false, upper === end);
  }
  async list(prefix, range = {}) {
    const bounds = this.#bounds(prefix, range);
    if (!bounds) return [];
    const keys = await this.#tx("readonly", (s) => s.getAllKeys(bounds, range.limit));
    return keys.filter((k) => typeof k === "string" && k.startsWith(prefix));
  }
  async getRange(prefix, range = {}) {
    const bounds = this.#bounds(prefix, range);
    if (!bounds) return [];
    // Keys and values from one transaction, so they pair up.
    const [keys, values] = await new Promise((resolve, reject) => {
      const tx = this.#db.transaction("kv", "readonly");
      const s = tx.objectStore("kv");
      const k = s.getAllKeys(bounds, range.limit);
      const v = s.getAll(bounds, range.limit);
      tx.oncomplete = () => resolve([k.result, v.result]);
      tx.onerror = () => reject(tx.error);
      tx.onabort = () => reject(tx.error ?? new Error("IndexedDB transaction aborted"));
    });
    return keys.map((k, i) => [k, new Uint8Array(values[i])]).filter(([k]) => typeof k === "string" && k.startsWith(prefix));
  }
  close() {
    this.#db.close();
  }
}

/** Durable Object storage (`state.storage`). Output gates hold replies until writes are durable. */
export class DurableObjectStore {
  constructor(storage) {
    this.storage = storage;
  }
  async get(key) {
    const v = await this.storage.get(key);
    if (v === undefined) return undefined;
    return v instanceof Uint8Array ? v : new Uint8Array(v);
  }
  async put(key, bytes) {
    await this.storage.put(key, bytes);
  }
  async delete(key) {
    await this.storage.delete(key);
  }
  // Durable Object storage has no keys-only listing: list() reads every
  // value it returns, so the range (and its limit) is passed on.
  #options(prefix, { start, end, limit } = {}) {
    const options = { prefix };
    if (start) options.start = start;
    if (end !== undefined) options.end = end;
    if (limit !== undefined) options.limit = limit;
    return options;
  }
  async list(prefix, range) {
    return [...(await this.storage.list(this.#options(prefix, range))).keys()];
  }
  async getRange(prefix, range) {
    const entries = [...(await this.storage.list(this.#options(prefix, range)))];
    return entries.map(([k, v]) => [k, v instanceof Uint8Array ? v : new Uint8Array(v)]);
  }
}

const { KV_LIST_PAGES_MAX } = LIMITS;

/**
 * Workers KV. It is eventually consistent, so it may only hold published
 * snapshots (`memory.publishSnapshot(kv)`, `Memory.openPublished(kv)`), never an op log.
 */
export class KVStore {
  durability = "snapshots-only";
  constructor(kv) {
    this.kv = kv;
  }
  async get(key) {
    const v = await this.kv.get(key, "arrayBuffer");
    return v === null ? undefined : new Uint8Array(v);
  }
  async put(key, bytes) {
    await this.kv.put(key, bytes);
  }
  async delete(key) {
    await this.kv.delete(key);
  }
  async list(prefix) {
    const keys = [];
    let cursor;
    for (let page = 0; page < KV_LIST_PAGES_MAX; page++) {
      const res = await this.kv.list({ prefix, cursor });
      keys.push(...res.keys.map((k) => k.name));
      if (res.list_complete) return keys;
      cursor = res.cursor;
    }
    throw new EdgememError("limit_exceeded", `KV list for ${prefix} passed ${KV_LIST_PAGES_MAX} pages`);
  }
}
