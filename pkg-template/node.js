// Node entry: load the wasm synchronously from next to this file.
import { readFileSync } from "node:fs";
import { initSync } from "./edgemem_wasm.js";
import { setAssetLoader } from "./assets.js";

initSync({ module: readFileSync(new URL("./edgemem_bg.wasm", import.meta.url)) });
setAssetLoader(async (name) =>
  readFileSync(new URL(name === "minilm-static" ? "./embedder/minilm-static.bin" : `./encodings/${name}.bin`, import.meta.url)),
);

export * from "./index.js";
/** Node only: a durable store on a directory (see file_store.d.ts). */
export { FileStore, FILE_STORE_KEY_BYTES_MAX, FILE_STORE_LOCK_WAIT_MS_DEFAULT, fileNameOf } from "./file_store.js";
