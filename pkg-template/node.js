// Node entry: load the wasm synchronously from next to this file.
import { readFileSync } from "node:fs";
import { initSync } from "./edgemem_wasm.js";
import { setAssetLoader } from "./assets.js";

initSync({ module: readFileSync(new URL("./edgemem_bg.wasm", import.meta.url)) });
setAssetLoader(async (name) => readFileSync(new URL(`./encodings/${name}.bin`, import.meta.url)));

export * from "./index.js";
