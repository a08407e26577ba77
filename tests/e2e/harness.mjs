// What every page test shares: the built site served by `wrangler dev` (or
// EDGEMEM_E2E_URL), one Chromium profile per test file, and pages that
// record uncaught errors.
import { after, before } from "node:test";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { startWranglerDev } from "./wrangler-dev.mjs";

/** Debian Chromium, headless, and nothing leaves 127.0.0.1. */
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
];

/**
 * Registers `before`/`after` hooks that start the Worker (unless
 * EDGEMEM_E2E_URL names one) and a fresh Chromium profile, so IndexedDB
 * survives reloads within the file's run only. `required` are built files
 * the tests need. Returns `{ baseUrl, openPage }`; `baseUrl` is set once
 * the hooks ran.
 */
export function browserHarness({ root, required, profilePrefix, viewport, actionTimeoutMs }) {
  const h = { baseUrl: undefined, openPage };
  let server;
  let context;
  let userDataDir;

  before(
    async () => {
      const given = process.env.EDGEMEM_E2E_URL;
      if (given) {
        h.baseUrl = new URL(given).href;
      } else {
        for (const built of [...required, join(root, "build", "index.js")]) {
          if (!existsSync(built)) throw new Error(`${built} does not exist; run \`make build\` first`);
        }
        server = await startWranglerDev(root);
        h.baseUrl = server.url;
      }
      userDataDir = await mkdtemp(join(tmpdir(), profilePrefix));
      context = await chromium.launchPersistentContext(userDataDir, {
        executablePath: "/usr/bin/chromium",
        headless: true,
        viewport,
        // A loaded 2-core machine (a build beside the tests) has taken
        // more than 20 s to start Chromium; the hook's own bound is 90 s.
        timeout: 60_000,
        args: CHROMIUM_ARGS,
      });
      context.setDefaultTimeout(actionTimeoutMs);
    },
    { timeout: 90_000 },
  );

  after(async () => {
    await context?.close().catch(() => {});
    await server?.stop().catch(() => {});
    // A Chromium that never finished starting may still be writing there.
    if (userDataDir) await rm(userDataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  });

  /**
   * Opens a page that records uncaught errors and console errors. The one
   * exception: Chromium logs every non-2xx fetch as a console error, and the
   * page meets expected ones (404 probes, 422 on bad input) on the API routes.
   */
  async function openPage() {
    const page = await context.newPage();
    const problems = [];
    page.on("pageerror", (err) => problems.push(`pageerror: ${err.stack ?? err.message}`));
    page.on("console", (msg) => {
      if (msg.type() !== "error") return;
      const apiStatus =
        msg.text().startsWith("Failed to load resource: the server responded with a status of") &&
        new URL(msg.location().url || "about:blank", h.baseUrl).pathname.startsWith("/v1/");
      if (!apiStatus) problems.push(`console.error: ${msg.text()} (${msg.location().url})`);
    });
    return { page, problems };
  }

  return h;
}

/**
 * Switches the page to the Worker backend on `namespace` and waits until the
 * page says so. Callers wait for their own panel afterwards.
 */
export async function switchToWorker(page, namespace, token = process.env.EDGEMEM_E2E_TOKEN ?? "") {
  await page.check("#backend-worker");
  await page.fill("#api-token", token);
  await page.fill("#namespace", namespace);
  // Enter commits the field through a real "change", so leaving it later fires none.
  await page.press("#namespace", "Enter");
  await page.locator("#status", { hasText: `Worker API, namespace "${namespace}"` }).waitFor();
}

/** Every value in the page's IndexedDB databases, as latin-1 text, for "is it gone from storage" checks. */
export function indexedDbText(page) {
  return page.evaluate(async () => {
    const out = [];
    const text = (v) => {
      if (v instanceof ArrayBuffer) v = new Uint8Array(v);
      if (ArrayBuffer.isView(v)) return Array.from(new Uint8Array(v.buffer, v.byteOffset, v.byteLength), (b) => String.fromCharCode(b)).join("");
      return typeof v === "string" ? v : JSON.stringify(v);
    };
    for (const { name } of await indexedDB.databases()) {
      const db = await new Promise((ok, fail) => Object.assign(indexedDB.open(name), { onsuccess: (e) => ok(e.target.result), onerror: fail }));
      for (const store of db.objectStoreNames) {
        const all = await new Promise((ok, fail) => Object.assign(db.transaction(store).objectStore(store).getAll(), { onsuccess: (e) => ok(e.target.result), onerror: fail }));
        out.push(...all.map(text));
      }
      db.close();
    }
    return out.join("\n");
  });
}
