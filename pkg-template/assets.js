// Where encoding assets come from: each runtime entry (node.js, browser.js,
// workerd.js) installs its loader here. Internal: not part of the public API.
import { EdgememError } from "./util.js";

let loader = null;

export function setAssetLoader(fn) {
  loader = fn;
}

/** The asset's bytes; a loader that fails (a 404, a missing file) is `storage_error`. */
export async function loadAsset(name) {
  if (!loader) throw new EdgememError("storage_error", "no encoding asset loader for this runtime: use Tokenizer.fromAsset(name, bytes)");
  try {
    return await loader(name);
  } catch (err) {
    if (err instanceof EdgememError) throw err;
    throw new EdgememError("storage_error", `encoding asset ${name}: ${err?.message ?? err}`);
  }
}
