// Browser and bundler entry: fetch and compile the wasm next to this file.
import init from "./edgemem_wasm.js";
import { setAssetLoader } from "./assets.js";

await init({ module_or_path: new URL("./edgemem_bg.wasm", import.meta.url) });
setAssetLoader(async (name) => {
  const res = await fetch(new URL(`./encodings/${name}.bin`, import.meta.url));
  if (!res.ok) throw new Error(`encoding asset ${name}: HTTP ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
});

export * from "./index.js";
