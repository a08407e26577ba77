// Where encoding assets come from: each runtime entry (node.js, browser.js,
// workerd.js) installs its loader here. Internal: not part of the public API.
let loader = null;

export function setAssetLoader(fn) {
  loader = fn;
}

export async function loadAsset(name) {
  if (!loader) throw new Error("no encoding asset loader for this runtime: use Tokenizer.fromAsset(name, bytes)");
  return loader(name);
}
