// The adapter subpath exports (`edgemem/ai`, `edgemem/langchain`,
// `edgemem/mcp`) from the packed npm tarball, as a user installs them: one
// scratch project in a temp dir gets the tarball plus the peers (`ai`, `zod`,
// `@langchain/core`, `@langchain/langgraph-checkpoint` at the versions of the
// root lockfile, installed `--offline` from the npm cache the root install
// filled), then
//
// - Node ESM imports all four entries and uses each (AI SDK tools through
//   `generateText` with the SDK's mock model, a LangChain chat history and
//   LangGraph store, an MCP `tools/list` over `serveStdio`);
// - Node CJS `require()`s them (require(esm), Node >= 20.19);
// - Vite bundles an app importing `edgemem`, `edgemem/ai` and
//   `edgemem/langchain` for the browser (no Node built-in reaches the bundle)
//   and headless Chromium runs it, under `vite build` + `vite preview` and
//   under the dev server (dependencies pre-bundled);
// - wrangler bundles a Worker importing `edgemem/ai` and `edgemem/langchain`
//   (no `nodejs_compat` flag: nothing in these paths needs Node built-ins)
//   and Miniflare (workerd) answers a request that uses both.
//
// Vite, wrangler, Miniflare and playwright-core are the repo's own
// devDependencies; everything the scratch project imports resolves inside it.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { chromium } from "playwright-core";
import { build, createServer, preview } from "vite";
import { Miniflare } from "miniflare";
import { packPkg, reportAt, root } from "./pack.mjs";
import { CHROMIUM_ARGS } from "../e2e/harness.mjs";

const run = promisify(execFile);

/** The peers the adapters import, at the versions the root lockfile pins. */
const PEERS = ["ai", "zod", "@langchain/core", "@langchain/langgraph-checkpoint"];

/**
 * A lockfile for a project depending on `names`: their entries in the root
 * lockfile and everything they need (dependencies, optional dependencies,
 * non-optional peers), resolved the way Node resolves from each entry's
 * place. With it, `npm install --offline` fetches tarballs by integrity from
 * the cache and never needs a registry document the cache lacks.
 */
function lockfileFor(names) {
  const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8"));
  const resolveFrom = (from, name) => {
    for (let at = from; ; ) {
      const candidate = `${at ? `${at}/` : ""}node_modules/${name}`;
      if (lock.packages[candidate]) return candidate;
      if (!at) return null;
      at = at.slice(0, Math.max(0, at.lastIndexOf("node_modules/") - 1));
    }
  };
  const keep = new Set();
  const todo = names.map((n) => {
    const p = resolveFrom("", n);
    if (!p) throw new Error(`${n} is not in the root package-lock.json`);
    return p;
  });
  while (todo.length > 0) {
    const p = todo.pop();
    if (keep.has(p)) continue;
    keep.add(p);
    const e = lock.packages[p];
    const optionalPeer = (n) => e.peerDependenciesMeta?.[n]?.optional === true;
    const needs = [...Object.keys(e.dependencies ?? {}), ...Object.keys(e.peerDependencies ?? {}).filter((n) => !optionalPeer(n))];
    for (const n of needs) {
      const r = resolveFrom(p, n);
      if (!r) throw new Error(`the root lockfile has no ${n} for ${p}`);
      todo.push(r);
    }
    for (const n of Object.keys(e.optionalDependencies ?? {})) {
      const r = resolveFrom(p, n);
      if (r) todo.push(r);
    }
  }
  const dependencies = Object.fromEntries(names.map((n) => [n, lock.packages[`node_modules/${n}`].version]));
  const packages = { "": { name: "edgemem-adapters-app", dependencies } };
  for (const p of [...keep].sort()) {
    const { dev, devOptional, peer, ...entry } = lock.packages[p];
    packages[p] = entry;
  }
  return { dependencies, lockfile: { name: "edgemem-adapters-app", lockfileVersion: 3, requires: true, packages } };
}

// ---------------------------------------------------------------------------
// The scratch project's sources.

const ESM_MJS = `
import { Memory, MemoryStore } from "edgemem";
import { memoryTools } from "edgemem/ai";
import { EdgememChatMessageHistory, EdgememStore } from "edgemem/langchain";
import { serveStdio } from "edgemem/mcp";
import { asSchema, generateText, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { BaseListChatMessageHistory } from "@langchain/core/chat_history";
import { BaseStore } from "@langchain/langgraph-checkpoint";

const out = { resolved: ["edgemem", "edgemem/ai", "edgemem/langchain", "edgemem/mcp"].map((s) => import.meta.resolve(s)) };
const memory = await Memory.open({ store: new MemoryStore() });

// AI SDK: tool() objects with zod schemas the consumer's own ai reads.
const tools = await memoryTools(memory, { sessionId: "s1" });
out.toolNames = Object.keys(tools).sort();
out.countTokensSchema = await asSchema(tools.count_tokens.inputSchema).jsonSchema;
const before = Date.now();
out.datetime = await tools.get_current_datetime.execute({}, { toolCallId: "c0", messages: [] });
out.datetimeWindow = [before, Date.now()];
const usage = { inputTokens: { total: 1, noCache: 1 }, outputTokens: { total: 1, text: 1 } };
const model = new MockLanguageModelV3({
  doGenerate: [
    { content: [{ type: "tool-call", toolCallId: "c1", toolName: "count_tokens", input: JSON.stringify({ text: "hello world" }) }], finishReason: { unified: "tool-calls" }, usage, warnings: [] },
    { content: [{ type: "text", text: "two words" }], finishReason: { unified: "stop" }, usage, warnings: [] },
  ],
});
const gen = await generateText({ model, tools, prompt: "count", stopWhen: stepCountIs(3) });
out.generate = { text: gen.text, toolResults: gen.steps.flatMap((s) => s.toolResults.map((r) => [r.toolName, r.output])) };

// LangChain: the chat history on working memory, LangGraph's store on long-term memory.
const history = new EdgememChatMessageHistory({ memory, sessionId: "chat" });
out.historyIsLangChain = history instanceof BaseListChatMessageHistory;
await history.addMessages([new HumanMessage("hello"), new AIMessage("hi there")]);
out.history = (await history.getMessages()).map((m) => [m.getType(), m.content]);
out.session = (await memory.getSession("chat")).messages.map((m) => [m.role, m.content]);
const store = new EdgememStore(memory);
out.storeIsLangGraph = store instanceof BaseStore;
await store.put(["users", "ana"], "prefs", { seat: "window", rows: [1, 2] });
const item = await store.get(["users", "ana"], "prefs");
out.item = { key: item.key, namespace: item.namespace, value: item.value };

// MCP over stdio: one tools/list line in, the written lines out.
const lines = [];
async function* input() {
  yield JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/list", params: {} }) + "\\n";
}
await serveStdio(memory, { input: input(), write: (line) => lines.push(line) });
out.mcp = lines;
memory.free();
console.log(JSON.stringify(out));
`;

const CJS_CJS = `
const { Memory } = require("edgemem");
const { memoryTools } = require("edgemem/ai");
const { EdgememChatMessageHistory } = require("edgemem/langchain");
const { serveStdio } = require("edgemem/mcp");
// The consumer's own CJS copy of @langchain/core: a different module
// instance from the ESM one edgemem/langchain imports.
const { HumanMessage, AIMessage } = require("@langchain/core/messages");
const { BaseListChatMessageHistory } = require("@langchain/core/chat_history");

(async () => {
  const out = { resolved: ["edgemem", "edgemem/ai", "edgemem/langchain", "edgemem/mcp"].map((s) => require.resolve(s)) };
  const esm = await import("edgemem/ai");
  out.sameModule = esm.memoryTools === memoryTools;
  const memory = await Memory.open();
  const tools = await memoryTools(memory, { sessionId: "cjs" });
  out.count = await tools.count_tokens.execute({ text: "hello world" }, { toolCallId: "c1", messages: [] });
  const history = new EdgememChatMessageHistory({ memory, sessionId: "cjs" });
  out.historyIsCjsLangChain = history instanceof BaseListChatMessageHistory;
  await history.addMessages([new HumanMessage("from require"), new AIMessage("noted")]);
  const messages = await history.getMessages();
  out.history = messages.map((m) => [m.getType(), m.content]);
  out.firstIsCjsHumanMessage = messages[0] instanceof HumanMessage;
  const lines = [];
  async function* input() {
    yield JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }) + "\\n";
  }
  await serveStdio(memory, { input: input(), write: (line) => lines.push(line) });
  out.mcpTools = JSON.parse(lines[0]).result.tools.length;
  memory.free();
  console.log(JSON.stringify(out));
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
`;

// The browser app and the Worker run the same checks and report the same shape.
const SHARED_CHECKS = `
async function exercise(memory) {
  const out = {};
  const tools = await memoryTools(memory, { sessionId: "edge" });
  out.count = await tools.count_tokens.execute({ text: "hello world" }, { toolCallId: "c0", messages: [] });
  const usage = { inputTokens: { total: 1, noCache: 1 }, outputTokens: { total: 1, text: 1 } };
  const model = new MockLanguageModelV3({
    doGenerate: [
      { content: [{ type: "tool-call", toolCallId: "c1", toolName: "count_tokens", input: JSON.stringify({ text: "hello world" }) }], finishReason: { unified: "tool-calls" }, usage, warnings: [] },
      { content: [{ type: "text", text: "two words" }], finishReason: { unified: "stop" }, usage, warnings: [] },
    ],
  });
  const gen = await generateText({ model, tools, prompt: "count", stopWhen: stepCountIs(3) });
  out.generate = { text: gen.text, toolResults: gen.steps.flatMap((s) => s.toolResults.map((r) => [r.toolName, r.output])) };
  // LangChain's own runnable drives the history: the reply is recorded.
  const chain = new RunnableWithMessageHistory({
    runnable: new FakeListChatModel({ responses: ["pong"] }),
    getMessageHistory: (sessionId) => new EdgememChatMessageHistory({ memory, sessionId }),
  });
  out.reply = (await chain.invoke([new HumanMessage("ping")], { configurable: { sessionId: "lc" } })).content;
  out.history = (await new EdgememChatMessageHistory({ memory, sessionId: "lc" }).getMessages()).map((m) => [m.getType(), m.content]);
  const store = new EdgememStore(memory);
  await store.put(["edge"], "k", { a: 1 });
  out.item = (await store.get(["edge"], "k")).value;
  return out;
}
`;

const SHARED_IMPORTS = `
import { Memory } from "edgemem";
import { memoryTools } from "edgemem/ai";
import { EdgememChatMessageHistory, EdgememStore } from "edgemem/langchain";
import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { HumanMessage } from "@langchain/core/messages";
import { RunnableWithMessageHistory } from "@langchain/core/runnables";
import { FakeListChatModel } from "@langchain/core/utils/testing";
`;

const MAIN_JS = `${SHARED_IMPORTS}
${SHARED_CHECKS}
let out;
try {
  const memory = await Memory.open();
  out = await exercise(memory);
  memory.free();
} catch (err) {
  out = { error: String(err?.stack ?? err) };
}
window.__edgemem = out;
`;

const INDEX_HTML = `<!doctype html>
<html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>edgemem adapters under Vite</title></head>
<body><script type="module" src="/main.js"></script></body></html>
`;

const WORKER_MJS = `${SHARED_IMPORTS}
${SHARED_CHECKS}
export default {
  async fetch() {
    const memory = await Memory.open();
    try {
      return Response.json(await exercise(memory));
    } catch (err) {
      return new Response(String(err?.stack ?? err), { status: 500 });
    } finally {
      memory.free();
    }
  },
};
`;

// No compatibility_flags: the adapters and the LangChain/AI SDK paths they
// use need no Node built-ins in workerd (the test checks the bundle).
const WRANGLER_TOML = `# Bundled with \`wrangler deploy --dry-run\` by the test, never deployed.
name = "edgemem-adapters-consumer"
main = "worker.mjs"
compatibility_date = "2026-04-01"
`;

// ---------------------------------------------------------------------------

let work;
let app;
let browser;

before(
  () => {
    const packed = packPkg("edgemem-adapters-");
    work = packed.dir;
    app = join(work, "app");
    mkdirSync(join(app, "worker"), { recursive: true });
    const { dependencies, lockfile } = lockfileFor(PEERS);
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "edgemem-adapters-app", private: true, type: "module", dependencies }, null, 2));
    writeFileSync(join(app, "package-lock.json"), JSON.stringify(lockfile, null, 2));
    writeFileSync(join(app, "esm.mjs"), ESM_MJS);
    writeFileSync(join(app, "cjs.cjs"), CJS_CJS);
    writeFileSync(join(app, "index.html"), INDEX_HTML);
    writeFileSync(join(app, "main.js"), MAIN_JS);
    writeFileSync(join(app, "worker", "worker.mjs"), WORKER_MJS);
    writeFileSync(join(app, "worker", "wrangler.toml"), WRANGLER_TOML);
    try {
      execFileSync("npm", ["install", "--offline", "--no-audit", "--no-fund", "--loglevel=error", packed.tarball], {
        cwd: app,
        encoding: "utf8",
        stdio: ["ignore", "ignore", "pipe"],
      });
    } catch (err) {
      throw new Error(`npm install --offline of the tarball and its peers failed (run \`npm ci\` at the repo root first to fill the cache):\n${err.stderr}`);
    }
  },
  { timeout: 120_000 },
);

after(async () => {
  await browser?.close().catch(() => {});
  if (work) rmSync(work, { recursive: true, force: true });
});

/** Runs `node file` in the scratch project; returns its one line of JSON. */
async function runNode(file) {
  try {
    const { stdout } = await run(process.execPath, [file], { cwd: app, encoding: "utf8", timeout: 60_000 });
    return JSON.parse(stdout.trim().split("\n").at(-1));
  } catch (err) {
    throw new Error(`node ${file} failed: ${err.stderr ?? ""}\n${err.stack}`);
  }
}

function assertFromScratch(resolved) {
  const pkgRoot = join(app, "node_modules", "edgemem");
  for (const r of resolved) assert.ok(r.replace(/^file:\/\//, "").startsWith(pkgRoot), `${r} is not inside the installed tarball (${pkgRoot})`);
}

function assertCountTool(out) {
  assert.deepEqual(Object.keys(out.count).sort(), ["counting", "tokens"]);
  assert.ok(Number.isInteger(out.count.tokens) && out.count.tokens > 0, JSON.stringify(out.count));
}

/** What the browser app and the Worker report. */
function assertEdgeResult(out) {
  assert.equal(out.error, undefined, out.error);
  assertCountTool(out);
  assert.deepEqual(out.generate, { text: "two words", toolResults: [["count_tokens", out.count]] });
  assert.equal(out.reply, "pong");
  assert.deepEqual(out.history, [
    ["human", "ping"],
    ["ai", "pong"],
  ]);
  assert.deepEqual(out.item, { a: 1 });
}

test("Node ESM: edgemem, edgemem/ai, edgemem/langchain and edgemem/mcp from the tarball, each used", { timeout: 60_000 }, async () => {
  const out = await runNode("esm.mjs");
  assertFromScratch(out.resolved);

  // edgemem/ai
  for (const name of ["get_current_datetime", "count_tokens", "search_long_term_memory", "create_long_term_memories", "get_working_memory"]) {
    assert.ok(out.toolNames.includes(name), `memoryTools has no ${name}: ${out.toolNames.join(", ")}`);
  }
  assert.equal(out.countTokensSchema.type, "object");
  assert.deepEqual(out.countTokensSchema.required, ["text"]);
  const [t0, t1] = out.datetimeWindow;
  const now = Date.parse(out.datetime.iso_utc);
  assert.ok(now >= t0 - 1000 && now <= t1 + 1000, `get_current_datetime answered ${out.datetime.iso_utc}, not within the call`);
  assert.equal(out.generate.text, "two words");
  assert.equal(out.generate.toolResults.length, 1);
  assert.equal(out.generate.toolResults[0][0], "count_tokens");
  assertCountTool({ count: out.generate.toolResults[0][1] });

  // edgemem/langchain, with the consumer's own @langchain classes
  assert.equal(out.historyIsLangChain, true, "EdgememChatMessageHistory is not the consumer's BaseListChatMessageHistory");
  assert.equal(out.storeIsLangGraph, true, "EdgememStore is not the consumer's LangGraph BaseStore");
  assert.deepEqual(out.history, [
    ["human", "hello"],
    ["ai", "hi there"],
  ]);
  assert.deepEqual(out.session, [
    ["user", "hello"],
    ["assistant", "hi there"],
  ]);
  assert.deepEqual(out.item, { key: "prefs", namespace: ["users", "ana"], value: { seat: "window", rows: [1, 2] } });

  // edgemem/mcp: one line in, one answer out, the same tool table
  assert.equal(out.mcp.length, 1, `serveStdio wrote ${out.mcp.length} lines`);
  const answer = JSON.parse(out.mcp[0]);
  assert.equal(answer.jsonrpc, "2.0");
  assert.equal(answer.id, 7);
  assert.deepEqual(answer.result.tools.map((t) => t.name).sort(), out.toolNames);
  for (const t of answer.result.tools) assert.equal(t.inputSchema?.type, "object", `${t.name} has no object inputSchema`);
});

const requireEsm = process.features.require_module === true;

test(
  "Node CJS: require('edgemem/ai'), require('edgemem/langchain'), require('edgemem/mcp') (require(esm)), each used",
  { timeout: 60_000, skip: requireEsm ? false : `require(esm) is not available in Node ${process.version} (needs >= 20.19 or 22.12)` },
  async (t) => {
    const out = await runNode("cjs.cjs");
    assertFromScratch(out.resolved);
    assert.equal(out.sameModule, true, "require() and import() gave two instances of edgemem/ai");
    assertCountTool(out);
    assert.deepEqual(out.history, [
      ["human", "from require"],
      ["ai", "noted"],
    ]);
    // LangChain's messages are brand-checked, so the CJS copy's classes
    // recognize the ESM copy's instances and the other way round.
    assert.equal(out.firstIsCjsHumanMessage, true);
    assert.ok(out.mcpTools > 0);
    // edgemem/langchain is ESM and imports @langchain/core's ESM build; a CJS
    // caller's require("@langchain/core/...") loads its CJS build, whose base
    // classes are other objects (the dual-package hazard). LangChain's own
    // code duck-types histories and stores, so this only shows in a caller's
    // own `instanceof`.
    t.diagnostic(`history instanceof the CJS BaseListChatMessageHistory: ${out.historyIsCjsLangChain}`);
  },
);

const quiet = { configFile: false, logLevel: "silent", clearScreen: false };

async function launch() {
  browser ??= await chromium.launch({ executablePath: "/usr/bin/chromium", headless: true, timeout: 20_000, args: CHROMIUM_ARGS });
  return browser;
}

/** Opens `url`; returns what main.js reported, plus 4xx/5xx responses and page errors. */
const resultAt = async (url) => reportAt(await launch(), url, 30_000);

test("vite build + vite preview: edgemem, edgemem/ai and edgemem/langchain in Chromium", { timeout: 90_000 }, async () => {
  const outDir = join(work, "dist");
  await build({ ...quiet, root: app, build: { outDir, emptyOutDir: true, chunkSizeWarningLimit: 10_000 } });
  // A Node built-in would be replaced by Vite's empty browser-external stub.
  const assets = readdirSync(join(outDir, "assets"));
  for (const f of assets.filter((f) => f.endsWith(".js"))) {
    const js = readFileSync(join(outDir, "assets", f), "utf8");
    assert.ok(!js.includes("__vite-browser-external"), `${f} stubs out a Node built-in`);
  }
  assert.ok(assets.some((f) => f.endsWith(".wasm")), `no .wasm among ${assets.join(", ")}`);
  const server = await preview({ ...quiet, root: app, build: { outDir }, preview: { host: "127.0.0.1", port: 0, strictPort: true } });
  try {
    const { result, problems } = await resultAt(server.resolvedUrls.local[0]);
    assert.deepEqual(problems, [], result.error);
    assertEdgeResult(result);
  } finally {
    await server.close();
  }
});

test("vite dev server (dependencies pre-bundled): the same app in Chromium", { timeout: 90_000 }, async () => {
  const server = await createServer({
    ...quiet,
    root: app,
    server: { host: "127.0.0.1", port: 0, strictPort: true, hmr: false, watch: null },
  });
  try {
    await server.listen();
    const { result, problems } = await resultAt(server.resolvedUrls.local[0]);
    assert.deepEqual(problems, [], result.error);
    assertEdgeResult(result);
    const optimized = Object.keys(server.environments?.client?.depsOptimizer?.metadata?.optimized ?? {});
    for (const dep of ["edgemem", "edgemem/ai", "edgemem/langchain"]) assert.ok(optimized.includes(dep), `${dep} was not pre-bundled: ${optimized.join(", ")}`);
  } finally {
    await server.close();
  }
});

test("workerd: a Worker importing edgemem/ai and edgemem/langchain, without nodejs_compat, answers through both", { timeout: 90_000 }, async () => {
  const outdir = join(work, "worker-dist");
  await run(join(root, "node_modules/.bin/wrangler"), ["deploy", "--dry-run", "--outdir", outdir], {
    cwd: join(app, "worker"),
    timeout: 60_000,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", XDG_CONFIG_HOME: join(work, "xdg") },
  }).catch((err) => {
    throw new Error(`wrangler deploy --dry-run failed:\n${err.stderr}`);
  });
  const files = readdirSync(outdir);
  assert.ok(files.some((f) => f.endsWith(".wasm")), "the wasm is a separate module, not inlined");
  // Without nodejs_compat wrangler refuses to bundle an import of a Node
  // built-in; this checks the output too (esbuild writes double quotes; a
  // message text in ai mentions `import('node:buffer')`, which is no import).
  const bundle = readFileSync(join(outdir, "worker.js"), "utf8");
  const builtins = [...new Set(bundle.match(/(?:\bfrom\s*|\bimport\(\s*|\brequire\(\s*)"node:[\w/]+"/g) ?? [])];
  assert.deepEqual(builtins, [], "the bundle imports Node built-ins (they would need nodejs_compat)");
  const mf = new Miniflare({
    modules: true,
    scriptPath: join(outdir, "worker.js"),
    // Module names are paths relative to this root (by default the cwd, which the temp dir is outside of).
    modulesRoot: outdir,
    modulesRules: [
      { type: "CompiledWasm", include: ["**/*.wasm"], fallthrough: true },
      { type: "Data", include: ["**/*.bin"], fallthrough: true },
    ],
    compatibilityDate: "2026-04-01",
    host: "127.0.0.1",
  });
  try {
    await mf.ready;
    const res = await mf.dispatchFetch("http://127.0.0.1/");
    const text = await res.text();
    assert.equal(res.status, 200, text);
    assertEdgeResult(JSON.parse(text));
  } finally {
    await mf.dispose();
  }
});
