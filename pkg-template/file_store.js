// A store on a directory, for Node (the `edgemem` CLI's `--store DIR`). Same
// contract as the adapters in stores.js: key -> bytes, `list(prefix, range)`
// ascending, and a put resolves only once the bytes are durable.
//
// Layout: DIR/kv/<escaped key> holds one value per file; DIR/tmp/ holds
// writes in flight, so a temp name can never be mistaken for a key; DIR/lock
// is the advisory single-writer lock (`lock()`).
import { closeSync, fsyncSync, openSync } from "node:fs";
import { mkdir, open, readFile, readdir, rename, unlink, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { randomBytes } from "node:crypto";
import { EdgememError } from "./util.js";

/**
 * The longest key, counted after escaping: one file name (255 bytes on
 * ext4, APFS, NTFS). A plain key may have 255 bytes, a fully escaped one 85.
 */
export const FILE_STORE_KEY_BYTES_MAX = 255;

/** How long `lock()` waits for another writer by default. */
export const FILE_STORE_LOCK_WAIT_MS_DEFAULT = 10_000;

const LOCK_RETRY_MS = 50;
const UNESCAPED = /^[A-Za-z0-9._-]$/;

function invalidKey(key, reason) {
  return new EdgememError("invalid_input", `invalid store key ${JSON.stringify(String(key).slice(0, 64))}: ${reason}`);
}

/**
 * The file name of `key`: every UTF-8 byte outside [A-Za-z0-9._-] as %XX, so
 * `/` and `\` can never reach the path, and the mapping is one to one.
 */
export function fileNameOf(key) {
  if (typeof key !== "string") throw invalidKey(key, "must be a string");
  if (key === "" || key === "." || key === "..") throw invalidKey(key, "empty, '.' and '..' name no file");
  let name = "";
  for (const byte of new TextEncoder().encode(key)) {
    const ch = String.fromCharCode(byte);
    name += byte < 0x80 && UNESCAPED.test(ch) ? ch : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  if (name.length > FILE_STORE_KEY_BYTES_MAX) throw invalidKey(key, `escapes to ${name.length} bytes, more than ${FILE_STORE_KEY_BYTES_MAX}`);
  return name;
}

/** The key of a file name, or `undefined` for a name `fileNameOf` never writes. */
function keyOf(name) {
  if (!/^(?:[A-Za-z0-9._-]|%[0-9A-F]{2})+$/.test(name)) return undefined;
  try {
    const key = decodeURIComponent(name);
    return fileNameOf(key) === name ? key : undefined;
  } catch {
    return undefined;
  }
}

const missing = (err) => err && err.code === "ENOENT";

function storageError(op, key, err) {
  return new EdgememError("storage_error", `file store ${op} ${key === undefined ? "" : JSON.stringify(key) + " "}failed: ${err && err.message ? err.message : err}`);
}

// A rename is durable only once the directory entry is: fsync the directory.
// Windows cannot open a directory for that (EISDIR/EPERM); NTFS journals it.
function syncDir(dir) {
  let fd;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch (err) {
    if (!["EISDIR", "EPERM", "EACCES", "EINVAL"].includes(err.code)) throw err;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function pidAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === "EPERM";
  }
}

/**
 * A durable store on a directory (Node only). Each value is one file,
 * written to a temp file, fsynced, then renamed into place, so a crash
 * leaves the old value or the new one, never a torn one.
 *
 * One process writes at a time: take `lock()` around writes. Readers in
 * other processes see a writer's commits through `Memory`'s catch-up, which
 * `feedChannel()` lets a reader trigger.
 */
export class FileStore {
  #dir;
  #kv;
  #tmp;
  #ready;
  #seq = 0;

  /** @param {string} dir created (with parents) on first use. */
  constructor(dir) {
    if (typeof dir !== "string" || dir === "") throw new EdgememError("invalid_input", "invalid dir: must be a non-empty path");
    this.#dir = resolve(dir);
    this.#kv = join(this.#dir, "kv");
    this.#tmp = join(this.#dir, "tmp");
  }

  /** The absolute directory. */
  get dir() {
    return this.#dir;
  }

  #init() {
    this.#ready ??= (async () => {
      await mkdir(this.#kv, { recursive: true });
      await mkdir(this.#tmp, { recursive: true });
      // Temp files of a writer that died mid-put: its value was never renamed in.
      for (const name of await readdir(this.#tmp)) {
        const pid = Number(name.split("-")[0]);
        if (!(Number.isSafeInteger(pid) && pid > 0 && pidAlive(pid))) await unlink(join(this.#tmp, name)).catch(() => {});
      }
    })().catch((err) => {
      this.#ready = undefined;
      throw storageError("open", this.#dir, err);
    });
    return this.#ready;
  }

  async get(key) {
    const name = fileNameOf(key);
    await this.#init();
    try {
      const buf = await readFile(join(this.#kv, name));
      return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
    } catch (err) {
      if (missing(err)) return undefined;
      throw storageError("get", key, err);
    }
  }

  async put(key, bytes) {
    const name = fileNameOf(key);
    if (!(bytes instanceof Uint8Array)) throw new EdgememError("invalid_input", "invalid bytes: must be a Uint8Array");
    await this.#init();
    const tmp = join(this.#tmp, `${process.pid}-${++this.#seq}-${randomBytes(4).toString("hex")}`);
    let fh;
    try {
      fh = await open(tmp, "wx");
      await writeFile(fh, bytes);
      await fh.sync();
      await fh.close();
      fh = undefined;
      await rename(tmp, join(this.#kv, name));
      syncDir(this.#kv);
    } catch (err) {
      await fh?.close().catch(() => {});
      await unlink(tmp).catch(() => {});
      throw storageError("put", key, err);
    }
  }

  async delete(key) {
    const name = fileNameOf(key);
    await this.#init();
    try {
      await unlink(join(this.#kv, name));
      syncDir(this.#kv);
    } catch (err) {
      if (!missing(err)) throw storageError("delete", key, err);
    }
  }

  // A directory has no order: read the names, keep the range, sort. The
  // store stays small (the log is truncated at each snapshot), so a listing
  // is one readdir.
  async list(prefix, { start = "", end, limit = Infinity } = {}) {
    await this.#init();
    let names;
    try {
      names = await readdir(this.#kv);
    } catch (err) {
      throw storageError("list", prefix, err);
    }
    const keys = [];
    for (const name of names) {
      const k = keyOf(name);
      if (k !== undefined && k.startsWith(prefix) && k >= start && (end === undefined || k < end)) keys.push(k);
    }
    return keys.sort().slice(0, limit);
  }

  async getRange(prefix, range) {
    const out = [];
    for (const k of await this.list(prefix, range)) {
      const v = await this.get(k);
      // Deleted between the listing and the read: it is not in the range any more.
      if (v !== undefined) out.push([k, v]);
    }
    return out;
  }

  /**
   * The BroadcastChannel name memories on this directory (in this process)
   * share. Posting any message on it makes them catch up with storage,
   * which is how a reader picks up another process's writes.
   */
  feedChannel(keyPrefix = "") {
    return `edgemem:file:${this.#dir}:${keyPrefix}`;
  }

  /**
   * Takes the directory's single-writer lock (DIR/lock, holding the pid),
   * waiting up to `waitMs`; a lock whose process is gone is taken over.
   * Resolves to a function that releases it. Rejects with `storage_error`
   * naming the holder when the wait runs out.
   */
  async lock({ waitMs = FILE_STORE_LOCK_WAIT_MS_DEFAULT } = {}) {
    await mkdir(this.#dir, { recursive: true });
    const path = join(this.#dir, "lock");
    const deadline = Date.now() + waitMs;
    for (;;) {
      try {
        const fh = await open(path, "wx");
        await fh.writeFile(String(process.pid));
        await fh.close();
        let released = false;
        return async () => {
          if (released) return;
          released = true;
          await unlink(path).catch(() => {});
        };
      } catch (err) {
        if (err.code !== "EEXIST") throw storageError("lock", undefined, err);
      }
      const holder = Number((await readFile(path, "utf8").catch(() => "")).trim());
      if (Number.isSafeInteger(holder) && holder > 0 && !pidAlive(holder)) {
        // The holder died without releasing: remove its lock and try again.
        await unlink(path).catch(() => {});
        continue;
      }
      if (Date.now() >= deadline) {
        throw new EdgememError("storage_error", `the store ${this.#dir} is locked by process ${holder || "unknown"} (waited ${waitMs} ms)`);
      }
      await new Promise((r) => setTimeout(r, LOCK_RETRY_MS));
    }
  }
}
