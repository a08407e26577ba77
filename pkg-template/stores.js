// Store adapters. Each one only moves bytes: get(key) -> Uint8Array | undefined,
// put(key, bytes), delete(key), list(prefix) -> keys. put resolves once durable.

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
  async list(prefix) {
    return [...this.map.keys()].filter((k) => k.startsWith(prefix));
  }
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
  constructor(db) {
    this.#db = db;
  }

  /**
   * @param {string} [name] database name (default "edgemem").
   * @param {{indexedDB?: IDBFactory}} [options] an IndexedDB factory (default globalThis.indexedDB; fake-indexeddb in tests).
   */
  static async open(name = "edgemem", { indexedDB = globalThis.indexedDB } = {}) {
    if (!indexedDB) throw new Error("IndexedDB is not available here");
    const req = indexedDB.open(name, 1);
    req.onupgradeneeded = () => req.result.createObjectStore("kv");
    return new IndexedDBStore(await request(req));
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
  async list(prefix) {
    const range = IDBKeyRange.bound(prefix, prefix + "\uffff", false, false);
    const keys = await this.#tx("readonly", (s) => s.getAllKeys(range));
    return keys.filter((k) => typeof k === "string" && k.startsWith(prefix));
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
  async list(prefix) {
    return [...(await this.storage.list({ prefix })).keys()];
  }
}

/** Upper bound on KV list pages walked by one `list` call. */
const KV_LIST_PAGES_MAX = 1000;

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
    throw new Error(`KV list for ${prefix} passed ${KV_LIST_PAGES_MAX} pages`);
  }
}
