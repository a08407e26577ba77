// Browser and bundler entry: fetch and compile the wasm next to this file.
import init from "./edgemem_wasm.js";
import { setAssetLoader } from "./assets.js";

await init({ module_or_path: new URL("./edgemem_bg.wasm", import.meta.url) });

// One literal `new URL("./…", import.meta.url)` per asset: bundlers (Vite,
// webpack, Parcel) rewrite literal paths to the emitted asset. Vite's dev
// pre-bundling turns a template string such as `./encodings/${name}.bin` into
// a URL under node_modules/.vite/deps/ that does not exist (HTTP 404).
function encodingUrl(name) {
  switch (name) {
    case "cl100k_base":
      return new URL("./encodings/cl100k_base.bin", import.meta.url);
    case "o200k_base":
      return new URL("./encodings/o200k_base.bin", import.meta.url);
    case "minilm-static":
      return new URL("./embedder/minilm-static.bin", import.meta.url);
    default:
      throw new Error(`unknown encoding ${name}`);
  }
}

// loadAsset (assets.js) prefixes failures with "encoding asset <name>: ".
setAssetLoader(async (name) => {
  const url = encodingUrl(name);
  const res = await fetch(url);
  if (!res.ok) throw new Error(`HTTP ${res.status} from ${url}`);
  return new Uint8Array(await res.arrayBuffer());
});

export * from "./index.js";
