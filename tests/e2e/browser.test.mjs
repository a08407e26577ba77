// End-to-end test of the demo page in Debian's Chromium.
//
//   node --test tests/e2e/browser.test.mjs
//
// Without EDGEMEM_E2E_URL it starts `wrangler dev` as `make demo` does (the
// Worker serving target/site/ from `make site`, and its API on the same
// origin) and tests both backends of the page. With EDGEMEM_E2E_URL pointing
// at a running Worker (e.g. http://127.0.0.1:8787/) it tests that one instead,
// sending EDGEMEM_E2E_TOKEN as the bearer token if the Worker wants one.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { startWranglerDev } from "./wrangler-dev.mjs";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SITE = join(ROOT, "target", "site");
const SCREENSHOT = join(ROOT, "target", "e2e", "demo.png");
const GIVEN_URL = process.env.EDGEMEM_E2E_URL;
// Only needed when the Worker has bearer auth switched on.
const WORKER_TOKEN = process.env.EDGEMEM_E2E_TOKEN ?? "";

const ACTION_TIMEOUT_MS = 10_000;
const TEST_TIMEOUT_MS = 25_000;

let baseUrl;
let server;
let context;
let userDataDir;

before(
  async () => {
    if (GIVEN_URL) {
      baseUrl = new URL(GIVEN_URL).href;
    } else {
      for (const built of [join(SITE, "pkg", "browser.js"), join(ROOT, "build", "index.js")]) {
        if (!existsSync(built)) throw new Error(`${built} does not exist; run \`make build\` first`);
      }
      server = await startWranglerDev(ROOT);
      baseUrl = server.url;
    }
    // A fresh profile: IndexedDB survives reloads within this run only.
    userDataDir = await mkdtemp(join(tmpdir(), "edgemem-e2e-"));
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: "/usr/bin/chromium",
      headless: true,
      viewport: { width: 1280, height: 800 },
      timeout: 20_000,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
      ],
    });
    context.setDefaultTimeout(ACTION_TIMEOUT_MS);
  },
  { timeout: 90_000 },
);

after(async () => {
  await context?.close().catch(() => {});
  await server?.stop().catch(() => {});
  if (userDataDir) await rm(userDataDir, { recursive: true, force: true });
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
      new URL(msg.location().url || "about:blank", baseUrl).pathname.startsWith("/v1/");
    if (!apiStatus) problems.push(`console.error: ${msg.text()} (${msg.location().url})`);
  });
  return { page, problems };
}

async function waitReady(page) {
  await page.locator('body[data-ready="true"]').waitFor({ state: "attached" });
}

async function load(page) {
  await page.goto(baseUrl, { waitUntil: "load" });
  await waitReady(page);
}

async function reload(page) {
  await page.reload({ waitUntil: "load" });
  await waitReady(page);
}

/** Waits for the status area to show a success (or fails with what it shows). */
async function expectStatusOk(page, text) {
  const status = page.locator("#status");
  try {
    await page.locator("#status.status-ok", { hasText: text }).waitFor();
  } catch (err) {
    throw new Error(`expected status ok "${text}", got: ${await status.textContent()}`, { cause: err });
  }
}

async function createSession(page, id) {
  await page.fill("#session-id-input", id);
  await page.click("#create-session");
  await expectStatusOk(page, id);
  await page.locator("#session-title", { hasText: id }).waitFor();
}

async function addMessage(page, role, content) {
  await page.selectOption("#message-role", role);
  await page.fill("#message-content", content);
  await page.click("#add-message");
  await expectStatusOk(page, "Added");
}

function sessionItem(page, id) {
  return page.locator(`#session-list .session-item[data-session-id="${id}"]`);
}

function message(page, text) {
  return page.locator("#messages li.message", { hasText: text });
}

test("IndexedDB backend: create, append, typed error, delete, survive a reload", { timeout: TEST_TIMEOUT_MS }, async () => {
  const { page, problems } = await openPage();
  try {
    await load(page);
    assert.match(await page.textContent("#pkg-version"), /^\d+\.\d+\.\d+/);
    assert.equal(await page.isChecked("#backend-local"), true);

    // A throwaway session, deleted again.
    await createSession(page, "e2e-temp");
    await sessionItem(page, "e2e-temp").waitFor();
    await page.click("#delete-session");
    await expectStatusOk(page, "Deleted");
    await sessionItem(page, "e2e-temp").waitFor({ state: "detached" });
    assert.equal(await page.isVisible("#session-detail"), false);

    await createSession(page, "e2e-chat");
    assert.equal(await sessionItem(page, "e2e-chat").getAttribute("aria-current"), "true");
    await addMessage(page, "user", "hello from playwright");
    const msg = message(page, "hello from playwright");
    await msg.waitFor();
    assert.equal(await msg.getAttribute("data-role"), "user");
    assert.equal(await msg.locator(".role").textContent(), "user");
    assert.match(await msg.locator("time").getAttribute("datetime"), /^\d{4}-\d\d-\d\dT/);

    // Blank content is refused by the Rust side with a typed error.
    await page.fill("#message-content", "   ");
    await page.click("#add-message");
    await page.locator('#status.status-error[data-code="invalid_input"]').waitFor();
    assert.match(await page.textContent("#status"), /^invalid_input: .*content/);
    assert.equal(await page.locator("#messages li.message").count(), 1);

    // Markup in user content stays text.
    await addMessage(page, "assistant", "<b>not bold</b>");
    assert.equal(await page.locator("#messages b").count(), 0);
    await message(page, "<b>not bold</b>").waitFor();

    // Click-to-select from the list.
    await createSession(page, "e2e-other");
    await sessionItem(page, "e2e-chat").click();
    await page.locator("#session-title", { hasText: "e2e-chat" }).waitFor();

    assert.match(await page.textContent("#store-stats"), /seq \d+/);
    const seqBefore = Number((await page.textContent("#store-stats")).match(/seq (\d+)/)[1]);
    assert.ok(seqBefore >= 5, `expected at least 5 logged ops, stats say ${seqBefore}`);

    // A reload recovers everything from IndexedDB and reselects the session.
    await reload(page);
    await page.locator("#session-title", { hasText: "e2e-chat" }).waitFor();
    await message(page, "hello from playwright").waitFor();
    await message(page, "<b>not bold</b>").waitFor();
    assert.deepEqual(await page.locator("#session-list .session-item").allTextContents(), ["e2e-chat", "e2e-other"]);
    assert.equal(await page.textContent("#meta-ttl-seconds"), "none (durable)");
    assert.match(await page.textContent("#store-stats"), new RegExp(`seq ${seqBefore}\\b`));

    await mkdir(join(ROOT, "target", "e2e"), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });

    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
});

test("Worker API backend: create, append, survive a reload", { timeout: TEST_TIMEOUT_MS }, async () => {
  const { page, problems } = await openPage();
  // The Worker's storage outlives test runs, so use a fresh id each time.
  const id = `e2e-worker-${Date.now()}`;
  const namespace = "e2e";

  async function useWorker() {
    await page.check("#backend-worker");
    await page.fill("#api-token", WORKER_TOKEN);
    await page.fill("#namespace", namespace);
    await page.locator("#namespace").dispatchEvent("change");
    await page.locator("#status", { hasText: `Worker API, namespace "${namespace}"` }).waitFor();
    assert.match(await page.textContent("#worker-version"), /\d+\.\d+\.\d+/);
  }

  try {
    await load(page);
    await useWorker();

    await page.fill("#ttl-input", "3600");
    await createSession(page, id);
    assert.equal(await page.textContent("#meta-ttl-seconds"), "3600");
    assert.notEqual(await page.textContent("#meta-expires-at"), "—");
    assert.equal(await page.textContent("#meta-namespace"), namespace);
    await addMessage(page, "user", "hello from the worker test");
    await message(page, "hello from the worker test").waitFor();

    await page.fill("#message-content", "");
    await page.click("#add-message");
    await page.locator('#status.status-error[data-code="invalid_input"]').waitFor();

    // After a reload the page is back on IndexedDB; switching again finds the session.
    await reload(page);
    assert.equal(await page.isChecked("#backend-local"), true);
    await useWorker();
    await sessionItem(page, id).waitFor();
    await page.locator("#session-title", { hasText: id }).waitFor();
    await message(page, "hello from the worker test").waitFor();

    // Clean up the Worker's storage.
    await page.click("#delete-session");
    await expectStatusOk(page, "Deleted");
    await sessionItem(page, id).waitFor({ state: "detached" });

    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
});
