// Cloudflare Workers entry: wrangler bundles the .wasm import as a compiled module.
import wasmModule from "./edgemem_bg.wasm";
import { initSync } from "./edgemem_wasm.js";

initSync({ module: wasmModule });

export * from "./index.js";
