// Types of the Node-only directory store (`pkg-template/file_store.js`),
// exported from the package's `node` entry.
import type { KeyRange, Store } from "./index.js";

/** The longest key, counted after escaping (one file name): 255 bytes. */
export declare const FILE_STORE_KEY_BYTES_MAX: 255;

/** How long `FileStore.lock()` waits for another writer by default, in ms. */
export declare const FILE_STORE_LOCK_WAIT_MS_DEFAULT: 10000;

/**
 * The file name a key is stored under: every UTF-8 byte outside
 * `[A-Za-z0-9._-]` escaped as `%XX`. Throws `invalid_input` for `""`, `"."`,
 * `".."` and keys that escape to more than {@link FILE_STORE_KEY_BYTES_MAX}.
 */
export declare function fileNameOf(key: string): string;

/**
 * A durable store on a directory (Node only): one file per key, written to a
 * temp file, fsynced and renamed into place. One writer at a time: hold
 * `lock()` around writes.
 */
export declare class FileStore implements Store {
  /** `dir` is created (with parents) on first use. */
  constructor(dir: string);
  /** The absolute directory. */
  readonly dir: string;
  get(key: string): Promise<Uint8Array | undefined>;
  put(key: string, bytes: Uint8Array): Promise<void>;
  delete(key: string): Promise<void>;
  list(prefix: string, range?: KeyRange): Promise<string[]>;
  getRange(prefix: string, range?: KeyRange): Promise<Array<[string, Uint8Array]>>;
  /** The BroadcastChannel name memories on this directory share; any message on it makes them catch up with storage. */
  feedChannel(keyPrefix?: string): string;
  /** Takes the single-writer lock (a dead holder's is taken over); resolves to its release. */
  lock(options?: { waitMs?: number }): Promise<() => Promise<void>>;
}
