// Starts the built Worker (build/index.js) in Miniflare, bound like wrangler.toml.
import { after } from "node:test";
import { Miniflare } from "miniflare";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));

/**
 * `ai`: the source of an ES module whose default export takes the inner env
 * and returns the object bound as `AI` (a workerd wrapped binding, the way
 * Miniflare binds Workers AI itself), for tests that stand in for Workers AI.
 */
export async function startWorker({ persistDir, bindings = {}, ai } = {}) {
  if (!existsSync(`${root}build/index.js`)) throw new Error("build/index.js is missing: run `make worker` first");
  const main = {
    name: "edgemem",
    rootPath: root,
    modules: true,
    scriptPath: `${root}build/index.js`,
    modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"], fallthrough: true }],
    compatibilityDate: "2026-04-01",
    durableObjects: { MEMORY: { className: "MemoryObject", useSQLite: true } },
    kvNamespaces: ["SNAPSHOTS"],
    // Local dev mode (auth off) unless the test configures auth.
    bindings: { EDGEMEM_BODY_BYTES_MAX: "1048576", ...("EDGEMEM_ADMIN_TOKEN" in bindings || "EDGEMEM_AUTH_TOKEN" in bindings ? {} : { EDGEMEM_DEV_MODE: "1" }), ...bindings },
    // As in wrangler.toml: the site (with the tokenizer assets) behind the ASSETS binding.
    assets: { directory: `${root}target/site`, binding: "ASSETS", routerConfig: { has_user_worker: true } },
    ...(ai ? { wrappedBindings: { AI: { scriptName: "ai-stand-in" } } } : {}),
  };
  const mf = new Miniflare({
    workers: ai ? [main, { name: "ai-stand-in", modules: true, script: ai }] : [main],
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

/**
 * A `start(bindings)` whose workers are all disposed after the calling
 * test file's tests.
 */
export function workerPool() {
  const running = [];
  after(async () => {
    for (const w of running) await w.mf.dispose();
  });
  return async (bindings) => {
    const w = await startWorker({ bindings });
    running.push(w);
    return w;
  };
}
