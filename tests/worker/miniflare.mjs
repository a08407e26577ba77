// Starts the built Worker (build/index.js) in Miniflare, bound like wrangler.toml.
import { Miniflare } from "miniflare";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));

export async function startWorker({ persistDir, bindings = {} } = {}) {
  if (!existsSync(`${root}build/index.js`)) throw new Error("build/index.js is missing: run `make worker` first");
  const mf = new Miniflare({
    rootPath: root,
    modules: true,
    scriptPath: `${root}build/index.js`,
    modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"], fallthrough: true }],
    compatibilityDate: "2026-04-01",
    durableObjects: { MEMORY: { className: "MemoryObject", useSQLite: true } },
    kvNamespaces: ["SNAPSHOTS"],
    bindings: { EDGEMEM_BODY_BYTES_MAX: "1048576", ...bindings },
    // As in wrangler.toml: the site (with the tokenizer assets) behind the ASSETS binding.
    assets: { directory: `${root}target/site`, binding: "ASSETS", routerConfig: { has_user_worker: true } },
    ...(persistDir ? { durableObjectsPersist: `${persistDir}/do`, kvPersist: `${persistDir}/kv` } : {}),
    host: "127.0.0.1",
  });
  await mf.ready;
  const call = async (method, path, body, headers = {}) => {
    const init = { method, headers: { ...headers } };
    if (body !== undefined) {
      init.body = typeof body === "string" ? body : JSON.stringify(body);
      init.headers["content-type"] = "application/json";
    }
    const res = await mf.dispatchFetch(`http://127.0.0.1${path}`, init);
    const text = await res.text();
    let json;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, json, text, headers: res.headers };
  };
  return { mf, call };
}
