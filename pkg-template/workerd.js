// Cloudflare Workers entry: wrangler bundles the .wasm import as a compiled module.
import wasmModule from "./edgemem_bg.wasm";
import { initSync } from "./edgemem_wasm.js";
import { setAssetLoader } from "./assets.js";

initSync({ module: wasmModule });
// Wrangler bundles .bin files as Data modules (ArrayBuffer), loaded on first use.
setAssetLoader(async (name) => {
  switch (name) {
    case "cl100k_base":
      return new Uint8Array((await import("./encodings/cl100k_base.bin")).default);
    case "o200k_base":
      return new Uint8Array((await import("./encodings/o200k_base.bin")).default);
    case "minilm-static":
      return new Uint8Array((await import("./embedder/minilm-static.bin")).default);
    default:
      throw new Error(`unknown encoding ${name}`);
  }
});

export * from "./index.js";
