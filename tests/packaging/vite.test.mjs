// The packed npm tarball in a new Vite app, as a user would install it:
// token counts in headless Chromium under the dev server (with dependency
// pre-bundling, which moves the package into node_modules/.vite/deps/) and
// under a production build served by `vite preview`. The app lives in a temp
// dir with only the tarball installed; Vite is the project's own devDependency.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";
import { build, createServer, preview } from "vite";
import { packPkg, reportAt } from "./pack.mjs";
import { CHROMIUM_ARGS } from "../e2e/harness.mjs";

const TEXT = "Tokens under Vite: naïve café, 東京, emoji 🎉 and code `let x = 42;`";
// gpt-4o counts with o200k_base, loaded on first use like Tokenizer.load.
const BUDGET = { model: "gpt-4o", slots: [{ name: "user", content: TEXT, priority: 9 }] };

const MAIN_JS = `
import { Tokenizer, buildContext } from "edgemem";

const TEXT = ${JSON.stringify(TEXT)};
const BUDGET = ${JSON.stringify(BUDGET)};
const out = {};
try {
  out.o200k_base = (await Tokenizer.load("o200k_base")).count(TEXT);
  out.cl100k_base = (await Tokenizer.load("cl100k_base")).count(TEXT);
  out.budget = (await buildContext(BUDGET)).used;
} catch (err) {
  out.error = String(err?.message ?? err);
}
window.__edgemem = out;
`;

const INDEX_HTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>edgemem under Vite</title></head>
<body><script type="module" src="/main.js"></script></body></html>
`;

let work;
let app;
let browser;
let expected;

before(
  async () => {
    const packed = packPkg("edgemem-vite-");
    work = packed.dir;
    app = join(work, "app");
    mkdirSync(app);
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "edgemem-vite-app", private: true, type: "module" }));
    writeFileSync(join(app, "index.html"), INDEX_HTML);
    writeFileSync(join(app, "main.js"), MAIN_JS);
    // The package has no dependencies: the tarball alone, no registry.
    execFileSync("npm", ["install", "--offline", "--no-audit", "--no-fund", "--no-package-lock", "--loglevel=error", packed.tarball], {
      cwd: app,
      stdio: ["ignore", "ignore", "pipe"],
    });
    // The same tarball's Node entry gives the counts the browser must match.
    const node = await import(pathToFileURL(join(app, "node_modules", "edgemem", "node.js")).href);
    const o200k = await node.Tokenizer.load("o200k_base");
    const cl100k = await node.Tokenizer.load("cl100k_base");
    expected = { o200k_base: o200k.count(TEXT), cl100k_base: cl100k.count(TEXT), budget: (await node.buildContext(BUDGET)).used };
    browser = await chromium.launch({ executablePath: "/usr/bin/chromium", headless: true, timeout: 20_000, args: CHROMIUM_ARGS });
  },
  { timeout: 60_000 },
);

after(async () => {
  await browser?.close().catch(() => {});
  if (work) rmSync(work, { recursive: true, force: true });
});

/** Opens `url` and returns what the app's main.js reported, plus any 4xx/5xx responses and page errors. */
const countTokensAt = (url) => reportAt(browser, url, 20_000);

function assertCounts({ result, problems }) {
  assert.equal(result.error, undefined, `the app failed: ${result.error}\n${problems.join("\n")}`);
  assert.deepEqual(problems, []);
  assert.deepEqual(result, expected);
}

const quiet = { configFile: false, logLevel: "silent", clearScreen: false };

test("vite dev server (dependencies pre-bundled): token counts in Chromium", { timeout: 60_000 }, async () => {
  const server = await createServer({
    ...quiet,
    root: app,
    server: { host: "127.0.0.1", port: 0, strictPort: true, hmr: false, watch: null },
  });
  try {
    await server.listen();
    const url = server.resolvedUrls.local[0];
    assertCounts(await countTokensAt(url));
    // The dev server did pre-bundle the package (the case that broke).
    const optimized = server.environments?.client?.depsOptimizer?.metadata?.optimized ?? {};
    assert.ok("edgemem" in optimized, `edgemem was not pre-bundled: ${JSON.stringify(Object.keys(optimized))}`);
  } finally {
    await server.close();
  }
});

test("vite build + vite preview: token counts in Chromium", { timeout: 60_000 }, async () => {
  const outDir = join(work, "dist");
  await build({ ...quiet, root: app, build: { outDir, emptyOutDir: true } });
  const server = await preview({ ...quiet, root: app, build: { outDir }, preview: { host: "127.0.0.1", port: 0, strictPort: true } });
  try {
    assertCounts(await countTokensAt(server.resolvedUrls.local[0]));
  } finally {
    await server.close();
  }
});
