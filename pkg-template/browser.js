// Browser and bundler entry: fetch and compile the wasm next to this file.
import init from "./edgemem_wasm.js";

await init({ module_or_path: new URL("./edgemem_bg.wasm", import.meta.url) });

export * from "./index.js";
