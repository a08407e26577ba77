// Types of the package's Node entry: everything in index.d.ts, plus the
// Node-only directory store.
export * from "./index.js";
export { FileStore, FILE_STORE_KEY_BYTES_MAX, FILE_STORE_LOCK_WAIT_MS_DEFAULT, fileNameOf } from "./file_store.js";
