// End-to-end test of the demo page as a newcomer first meets it, in Debian's
// Chromium: on a fresh page (a fresh profile, a fresh Worker namespace),
// every panel's buttons are pressed without typing anything, and the page
// must show no error. A box that only shows a placeholder is empty: its
// button either acts on something the page already holds, or is disabled
// with a visible one-line hint saying what to type. The boxes are also
// submitted from the keyboard (Enter, Ctrl+Enter), which a disabled button
// does not stop by itself.
//
//   node --test tests/e2e/fresh-page.test.mjs
//
// Like the other page tests, it starts `wrangler dev` as `make demo` does
// (serving target/site/ from `make site`), or tests the Worker at
// EDGEMEM_E2E_URL.
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { browserHarness, switchToWorker } from "./harness.mjs";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SITE = join(ROOT, "target", "site");
const WORKER_TOKEN = process.env.EDGEMEM_E2E_TOKEN ?? "";

const ACTION_TIMEOUT_MS = 10_000;
const TEST_TIMEOUT_MS = 90_000;
// A panel's work against the Worker (wrangler dev sharing two cores with
// the suite under CI) may outlast an action's timeout: once, a press's
// panel stayed busy past 10 s in a full CI run and never alone.
const IDLE_TIMEOUT_MS = 30_000;
// After a press that must do nothing: time for a stray handler to show an error.
const NOTHING_WAIT_MS = 300;

const harness = browserHarness({
  root: ROOT,
  required: [join(SITE, "pkg", "browser.js"), join(SITE, "index.html")],
  profilePrefix: "edgemem-e2e-fresh-",
  viewport: { width: 1280, height: 900 },
  actionTimeoutMs: ACTION_TIMEOUT_MS,
});

// Where the page shows an error: a status area in the error state, a ledger
// result line for a refused request, a hold's failed Post/Void.
const ERROR_SHOWN = ".status-error, #ledger-results [data-error], .hold-outcome.outcome-error";
// The panels that are aria-busy while one of their actions runs.
const BUSY_PANELS = "#chat, #longterm, #ledger, #budget";

/**
 * Every button of every panel, in an order a newcomer might press them,
 * with nothing typed. `button` is the control pressed, or, with `key`, the
 * form's main button while `key` is pressed in the box `box`. `status` is
 * where the panel reports the outcome. `before` runs first (no typing).
 */
const PRESSES = [
  { panel: "Working memory", button: "#create-session", status: "#status" },
  { panel: "Working memory", button: "#create-session", box: "#session-id-input", key: "Enter", status: "#status" },
  { panel: "Working memory", button: "#create-session", box: "#ttl-input", key: "Enter", status: "#status" },
  { panel: "Working memory", button: "#refresh-sessions", status: "#status" },
  { panel: "Chat", button: "#chat-send", status: "#chat-status" },
  { panel: "Chat", button: "#chat-send", box: "#chat-content", key: "Control+Enter", status: "#chat-status" },
  { panel: "Chat", button: "#chat-simulate", status: "#chat-status" },
  { panel: "Chat", button: "#chat-open", status: "#chat-status" },
  // The chat's first turn created a session: pick it from the list (a click, no typing).
  {
    panel: "Working memory",
    button: "#add-message",
    status: "#status",
    before: async (page) => {
      await page.click('#session-list .session-item[data-session-id="chat-demo"]');
      await page.locator("#session-title", { hasText: "chat-demo" }).waitFor();
    },
  },
  { panel: "Working memory", button: "#add-message", box: "#message-content", key: "Control+Enter", status: "#status" },
  { panel: "Long-term memory", button: "#ltm-search", status: "#ltm-status" },
  { panel: "Long-term memory", button: "#ltm-search", box: "#ltm-query", key: "Enter", status: "#ltm-status" },
  { panel: "Long-term memory", button: "#ltm-add", status: "#ltm-status" },
  { panel: "Long-term memory", button: "#ltm-add", box: "#ltm-text", key: "Control+Enter", status: "#ltm-status" },
  { panel: "Long-term memory", button: "#ltm-samples", status: "#ltm-status" },
  // With memories stored, the empty box still must not be sent.
  { panel: "Long-term memory", button: "#ltm-search", status: "#ltm-status" },
  { panel: "Long-term memory", button: "#ltm-forget", status: "#ltm-status" },
  { panel: "Ledger", button: "#account-create", status: "#ledger-status" },
  { panel: "Ledger", button: "#account-create", box: "#account-id-input", key: "Enter", status: "#ledger-status" },
  { panel: "Ledger", button: "#transfer-submit", status: "#ledger-status" },
  { panel: "Ledger", button: "#transfer-submit", box: "#transfer-amount", key: "Enter", status: "#ledger-status" },
  { panel: "Ledger", button: "#ledger-reconcile", status: "#ledger-status" },
  { panel: "Ledger", button: "#ledger-setup", status: "#ledger-status" },
  // With the demo accounts open, the empty amount still must not be sent.
  { panel: "Ledger", button: "#transfer-submit", status: "#ledger-status" },
  { panel: "Ledger", button: "#ledger-refresh", status: "#ledger-status" },
  { panel: "Ledger", button: "#ledger-reconcile", status: "#ledger-status" },
  { panel: "Context budget", button: "#budget-add-slot", status: "#budget-status" },
];

async function idle(page) {
  try {
    await page.waitForFunction((sel) => document.querySelectorAll(`:is(${sel})[aria-busy]`).length === 0, BUSY_PANELS, { timeout: IDLE_TIMEOUT_MS });
  } catch (e) {
    const busy = await page.evaluate((sel) => [...document.querySelectorAll(`:is(${sel})[aria-busy]`)].map((el) => el.id || el.className), BUSY_PANELS);
    throw new Error(`panels still busy after ${IDLE_TIMEOUT_MS} ms: ${busy.join(", ")} (${e.message})`);
  }
}

async function load(page) {
  await page.goto(harness.baseUrl, { waitUntil: "load" });
  await page.locator('body[data-ready="true"]').waitFor({ state: "attached" });
  await idle(page);
}

async function useWorkerOn(page, namespace) {
  await switchToWorker(page, namespace, WORKER_TOKEN);
  await page.locator("#ltm-backend", { hasText: namespace }).waitFor();
  await idle(page);
}

function errorsShown(page) {
  return page.$$eval(ERROR_SHOWN, (els) => els.map((e) => e.textContent.trim()));
}

/**
 * Marks a status area with an empty element. Every report (showStatus,
 * showError) replaces the area's children, so the mark is gone once the
 * panel has reported anything, even the very text it showed before.
 */
function markStatus(page, sel) {
  return page.$eval(sel, (el) => {
    const mark = document.createElement("span");
    mark.dataset.e2eUnreported = "";
    el.append(mark);
    return el.className;
  });
}

/** The visible text of the hint a button points at (aria-describedby), or null. */
async function hintOf(page, sel) {
  const id = await page.getAttribute(sel, "aria-describedby");
  if (!id) return null;
  const hint = page.locator(`#${id}`);
  return (await hint.isVisible()) ? (await hint.textContent()).trim() : null;
}

function label(p) {
  return p.key ? `${p.key} in ${p.box} (${p.button})` : p.button;
}

/**
 * Presses one control on the page as it stands. A button that can act must
 * finish (its panel reports an outcome, checked for errors by the caller);
 * one that cannot must be disabled, say why in a one-line hint, and do
 * nothing when pressed or submitted from its box.
 */
async function press(page, p) {
  if (p.before) await p.before(page);
  const button = page.locator(p.button);
  await button.scrollIntoViewIfNeeded();
  const enabled = await button.isEnabled();
  if (!enabled) {
    const hint = await hintOf(page, p.button);
    assert.ok(hint, `${p.panel}: ${p.button} is disabled without a visible hint`);
    assert.ok(!hint.includes("\n") && hint.length <= 80, `${p.panel}: ${p.button}'s hint is one short line: ${hint}`);
  }
  const className = await markStatus(page, p.status);
  const mark = page.locator(`${p.status} [data-e2e-unreported]`);
  // A real press where the button is: a disabled button takes no click.
  if (p.key) await page.press(p.box, p.key);
  else await button.click({ force: !enabled });
  if (enabled) {
    // The button acted: wait for its panel to report the outcome.
    await idle(page);
    await mark.waitFor({ state: "detached" });
  } else {
    await page.waitForTimeout(NOTHING_WAIT_MS);
    await idle(page);
    assert.equal(await mark.count(), 1, `${p.panel}: ${label(p)} did something while disabled`);
    assert.equal(await page.getAttribute(p.status, "class"), className);
    await mark.evaluate((m) => m.remove());
  }
}

/** Presses everything; resolves to the errors the page showed, by the press that showed them first. */
async function pressEverything(page, problems) {
  const seen = new Set(await errorsShown(page));
  const found = [...seen].map((e) => `on load: ${e}`);
  for (const p of PRESSES) {
    await press(page, p);
    for (const e of await errorsShown(page)) {
      if (seen.has(e)) continue;
      seen.add(e);
      found.push(`${p.panel}, ${label(p)}: ${e}`);
    }
  }
  for (const e of problems) found.push(e);
  return found;
}

test("A fresh page, IndexedDB backend: every panel's buttons pressed with nothing typed show no error", { timeout: TEST_TIMEOUT_MS }, async () => {
  const { page, problems } = await harness.openPage();
  try {
    await load(page);
    assert.equal(await page.isChecked("#backend-local"), true);
    await page.locator("#ltm-count[data-count='0']").waitFor({ state: "attached" });
    assert.deepEqual(await pressEverything(page, problems), []);
  } finally {
    await page.close();
  }
});

test("A fresh page, Worker API backend: every panel's buttons pressed with nothing typed show no error", { timeout: TEST_TIMEOUT_MS }, async () => {
  const { page, problems } = await harness.openPage();
  // A fresh namespace is a fresh tenant, whatever the Worker stored before.
  const namespace = `e2e-fresh-${Date.now()}`;
  try {
    await load(page);
    await useWorkerOn(page, namespace);
    await page.locator("#ltm-count[data-count='0']").waitFor({ state: "attached" });
    assert.deepEqual(await pressEverything(page, problems), []);
  } finally {
    await page.close();
  }
});
