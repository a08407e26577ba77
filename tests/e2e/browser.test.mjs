// End-to-end test of the demo page in Debian's Chromium.
//
//   node --test tests/e2e/browser.test.mjs
//
// Without EDGEMEM_E2E_URL it starts `wrangler dev` as `make demo` does (the
// Worker serving target/site/ from `make site`, and its API on the same
// origin) and tests both backends of the page. With EDGEMEM_E2E_URL pointing
// at a running Worker (e.g. http://127.0.0.1:8787/) it tests that one instead,
// sending EDGEMEM_E2E_TOKEN as the bearer token if the Worker wants one.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { browserHarness, switchToWorker } from "./harness.mjs";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SITE = join(ROOT, "target", "site");
const SCREENSHOT = join(ROOT, "target", "e2e", "demo.png");
const LEDGER_SCREENSHOT = join(ROOT, "target", "e2e", "ledger.png");
// Only needed when the Worker has bearer auth switched on.
const WORKER_TOKEN = process.env.EDGEMEM_E2E_TOKEN ?? "";

const ACTION_TIMEOUT_MS = 10_000;
const TEST_TIMEOUT_MS = 25_000;
const LEDGER_TEST_TIMEOUT_MS = 45_000;

const harness = browserHarness({
  root: ROOT,
  required: [join(SITE, "pkg", "browser.js")],
  profilePrefix: "edgemem-e2e-",
  viewport: { width: 1280, height: 800 },
  actionTimeoutMs: ACTION_TIMEOUT_MS,
});
const openPage = () => harness.openPage();

async function waitReady(page) {
  await page.locator('body[data-ready="true"]').waitFor({ state: "attached" });
}

async function load(page) {
  await page.goto(harness.baseUrl, { waitUntil: "load" });
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

/** Switches the page to the Worker backend on `namespace`. */
async function useWorkerOn(page, namespace) {
  await switchToWorker(page, namespace, WORKER_TOKEN);
  assert.match(await page.textContent("#worker-version"), /\d+\.\d+\.\d+/);
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

test("Live changes: a write in one window appears in the other without a reload, in the page and on the Worker", { timeout: TEST_TIMEOUT_MS }, async () => {
  const one = await openPage();
  const two = await openPage();
  try {
    await load(one.page);
    await load(two.page);
    const id = `live-${Date.now()}`;
    await createSession(one.page, id);
    // The other window hears it through BroadcastChannel and catches up with IndexedDB.
    await two.page.locator(`#live-events li[data-key="${id}"]`).first().waitFor();
    await two.page.locator("#session-list", { hasText: id }).waitFor();
    // On the Worker: over a WebSocket on the tenant's Durable Object.
    if (!WORKER_TOKEN) {
      const namespace = `live-${Date.now()}`;
      await switchToWorker(one.page, namespace);
      await switchToWorker(two.page, namespace);
      await two.page.locator("#live-status", { hasText: "following the Worker" }).waitFor();
      const wid = `live-worker-${Date.now()}`;
      await createSession(one.page, wid);
      await two.page.locator(`#live-events li[data-key="${wid}"]`).first().waitFor();
      await two.page.locator("#session-list", { hasText: wid }).waitFor();
    }
    assert.deepEqual([...one.problems, ...two.problems], []);
  } finally {
    await one.page.close();
    await two.page.close();
  }
});

test("Decision log panel: log an entry, a secret is redacted, the other window sees it live, in the page and on the Worker", { timeout: TEST_TIMEOUT_MS }, async () => {
  const one = await openPage();
  const two = await openPage();
  const decide = async (page, kind, text) => {
    await page.selectOption("#decision-kind", kind);
    await page.fill("#decision-text", text);
    await page.click("#decision-add");
    await page.locator("#decision-status", { hasText: "logged #" }).waitFor();
  };
  const entry = (page, text) => page.locator("#decision-entries li", { hasText: text });
  const run = async (id) => {
    await createSession(one.page, id);
    await two.page.locator("#session-list", { hasText: id }).waitFor();
    await sessionItem(two.page, id).click();
    await two.page.locator("#decisions-session", { hasText: id }).waitFor();
    await decide(one.page, "offer", "offered 42.00 USDC, above the floor");
    await entry(one.page, "offered 42.00 USDC").waitFor();
    await entry(two.page, "offered 42.00 USDC").waitFor();
    await decide(one.page, "action", `paid with key sk-proj-${"Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6"}`);
    await one.page.locator("#decision-status", { hasText: "redacted 1 openai_key" }).waitFor();
    await entry(two.page, "[REDACTED:openai_key]").waitFor();
    assert.equal(await entry(two.page, "sk-proj-").count(), 0);
  };
  try {
    await load(one.page);
    await load(two.page);
    await run(`decide-${Date.now()}`);
    if (!WORKER_TOKEN) {
      const namespace = `decide-${Date.now()}`;
      await switchToWorker(one.page, namespace);
      await switchToWorker(two.page, namespace);
      await two.page.locator("#live-status", { hasText: "following the Worker" }).waitFor();
      await run(`decide-worker-${Date.now()}`);
    }
    assert.deepEqual([...one.problems, ...two.problems], []);
  } finally {
    await one.page.close();
    await two.page.close();
  }
});

test("Worker API backend: create, append, survive a reload", { timeout: TEST_TIMEOUT_MS }, async () => {
  const { page, problems } = await openPage();
  // The Worker's storage outlives test runs, so use a fresh id each time.
  const id = `e2e-worker-${Date.now()}`;
  const namespace = "e2e";

  const useWorker = () => useWorkerOn(page, namespace);

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

    // An empty box is not sent (the button waits for input); blank content is, and is refused.
    await page.fill("#message-content", "");
    assert.equal(await page.isDisabled("#add-message"), true);
    await page.fill("#message-content", "   ");
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

// ---------------------------------------------------------------------------
// Ledger panel

function accountCell(page, id, field) {
  return page.locator(`#ledger-account-rows tr[data-account-id="${id}"] td[data-field="${field}"]`);
}

async function expectAccount(page, id, field, value) {
  const cell = accountCell(page, id, field);
  try {
    await page.locator(`#ledger-account-rows tr[data-account-id="${id}"] td[data-field="${field}"]`, { hasText: new RegExp(`^${value.replace(/[.]/g, "\\.")}$`) }).waitFor();
  } catch (err) {
    throw new Error(`expected ${id}.${field} = ${value}, got: ${await cell.textContent().catch(() => "(no cell)")}`, { cause: err });
  }
}

/** Waits until no ledger action is under way (the panel is aria-busy while one runs). */
async function ledgerIdle(page) {
  await page.locator("#ledger:not([aria-busy])").waitFor({ state: "attached" });
}

/** Waits for the ledger's status area to match `pattern` (or fails with what it shows). */
async function expectLedgerStatus(page, pattern, kind) {
  const status = page.locator("#ledger-status");
  try {
    await page.locator(`#ledger-status.status-${kind}`, { hasText: pattern }).waitFor();
  } catch (err) {
    throw new Error(`expected ledger status ${kind} ${pattern}, got: ${await status.textContent()}`, { cause: err });
  }
}

async function fillTransfer(page, { debit, credit, amount, pending = false, timeout = "", newId = true }) {
  if (newId) {
    const before = await page.inputValue("#transfer-id");
    await page.click("#transfer-new-id");
    assert.notEqual(await page.inputValue("#transfer-id"), before);
  }
  await page.selectOption("#transfer-debit", debit);
  await page.selectOption("#transfer-credit", credit);
  await page.fill("#transfer-amount", amount);
  await page.setChecked("#transfer-pending", pending);
  if (pending) await page.fill("#transfer-timeout", timeout);
  return page.inputValue("#transfer-id");
}

/** Submits the transfer form; resolves to the newest result line once the page has settled. */
async function submitTransfer(page, id, expected) {
  const lines = page.locator("#ledger-results li.result");
  const before = await lines.count();
  await page.click("#transfer-submit");
  await ledgerIdle(page);
  assert.equal(await lines.count(), before + 1, "one log line per submission");
  const line = lines.first();
  assert.equal(await line.getAttribute("data-transfer-id"), id);
  if (expected === "created" || expected === "exists") {
    await expectLedgerStatus(page, `Transfer "${id}": ${expected}`, "ok");
    assert.equal(await line.getAttribute("data-result"), expected);
  } else {
    await page.locator(`#ledger-status.status-error[data-code="${expected}"]`).waitFor();
    const result = (await line.getAttribute("data-result")) ?? (await line.getAttribute("data-error"));
    assert.equal(result, expected);
  }
  assert.equal(await line.locator(".badge").textContent(), expected);
  return line;
}

function hold(page, id) {
  return page.locator(`#ledger-holds li.hold[data-transfer-id="${id}"]`);
}

/** The scenario both backends go through, on an empty ledger. Returns the hold's id. */
async function ledgerScenario(page) {
  await page.locator("#ledger-status", { hasText: "Ledger on" }).waitFor();

  // Set up twice: creating the same asset and accounts again returns them.
  for (let i = 0; i < 2; i++) {
    await page.click("#ledger-setup");
    await ledgerIdle(page);
    await expectLedgerStatus(page, "Demo ready", "ok");
  }
  await expectAccount(page, "agent", "balance", "0.000000");
  assert.deepEqual(await page.locator("#ledger-account-rows tr").evaluateAll((rows) => rows.map((r) => r.dataset.accountId)), ["bank", "agent", "casino"]);
  assert.equal(await accountCell(page, "agent", "flags").textContent(), "debits_must_not_exceed_credits");
  assert.equal(await accountCell(page, "agent", "max_transfer").textContent(), "50.000000");
  assert.equal(await accountCell(page, "bank", "max_transfer").textContent(), "—");

  // bank -> agent 40, then the very same submission again: an idempotent retry.
  const t1 = await fillTransfer(page, { debit: "bank", credit: "agent", amount: "40" });
  await submitTransfer(page, t1, "created");
  await expectAccount(page, "agent", "balance", "40.000000");
  await expectAccount(page, "bank", "balance", "-40.000000");
  await submitTransfer(page, t1, "exists");
  await expectAccount(page, "agent", "balance", "40.000000");
  await expectAccount(page, "agent", "credits_posted", "40.000000");
  assert.equal(await page.locator(`#ledger-results li.result[data-transfer-id="${t1}"]`).count(), 2);

  // Same id, another amount: a typed conflict, nothing moves.
  await page.fill("#transfer-amount", "41");
  await submitTransfer(page, t1, "exists_with_different_amount");
  await expectAccount(page, "agent", "balance", "40.000000");

  // Per-transfer rejection: over the agent's max_transfer.
  const t2 = await fillTransfer(page, { debit: "agent", credit: "casino", amount: "50.000001" });
  await submitTransfer(page, t2, "exceeds_max_transfer");
  await expectAccount(page, "agent", "balance", "40.000000");

  // Request-level errors: the whole request is refused with invalid_input.
  for (const bad of ["1e3", "12.1234567"]) {
    const t = await fillTransfer(page, { debit: "agent", credit: "casino", amount: bad });
    await submitTransfer(page, t, "invalid_input");
    assert.match(await page.textContent("#ledger-status"), /^invalid_input: /);
  }

  // A pending hold of 10, posted for 7.5: the rest is released.
  const h = await fillTransfer(page, { debit: "agent", credit: "casino", amount: "10", pending: true, timeout: "3600" });
  await submitTransfer(page, h, "created");
  await hold(page, h).locator('[data-field="state"]', { hasText: "pending" }).waitFor();
  await expectAccount(page, "agent", "debits_pending", "10.000000");
  await expectAccount(page, "agent", "balance", "40.000000");
  await hold(page, h).locator("input.post-amount").fill("7.5");
  await hold(page, h).locator("button.hold-post").click();
  await ledgerIdle(page);
  await expectLedgerStatus(page, `Hold "${h}" posted 7.500000 of 10.000000`, "ok");
  assert.equal(await hold(page, h).locator('[data-field="state"]').textContent(), "pending_posted");
  assert.equal(await hold(page, h).getAttribute("data-state"), "pending_posted");
  await expectAccount(page, "agent", "balance", "32.500000");
  await expectAccount(page, "agent", "debits_pending", "0.000000");
  await expectAccount(page, "casino", "balance", "7.500000");

  // Posting again is a typed error, shown on the hold and in the status area.
  await hold(page, h).locator("button.hold-post").click();
  await ledgerIdle(page);
  await hold(page, h).locator('.hold-outcome[data-code="pending_transfer_already_posted"]').waitFor();
  await page.locator('#ledger-status.status-error[data-code="pending_transfer_already_posted"]').waitFor();
  await expectAccount(page, "agent", "balance", "32.500000");

  await page.click("#ledger-reconcile");
  await ledgerIdle(page);
  await expectLedgerStatus(page, "Reconciled: ok", "ok");
  assert.equal(await page.textContent("#reconcile-ok"), "ok");
  assert.equal(await page.textContent("#reconcile-transfers"), "2");
  assert.match(await page.textContent("#reconcile-head"), /^[0-9a-f]{16,}$/);
  assert.equal(await page.textContent("#reconcile-differences"), "none");
  return h;
}

test("Ledger, IndexedDB backend: demo setup, idempotent retry, typed rejections, hold, reconcile, survive a reload", { timeout: LEDGER_TEST_TIMEOUT_MS }, async () => {
  const { page, problems } = await openPage();
  try {
    await load(page);
    assert.equal(await page.isChecked("#backend-local"), true);
    const h = await ledgerScenario(page);

    await mkdir(join(ROOT, "target", "e2e"), { recursive: true });
    await page.locator("#ledger").screenshot({ path: LEDGER_SCREENSHOT });

    // A reload recovers the ledger from IndexedDB; the page remembers the hold.
    await reload(page);
    await expectAccount(page, "agent", "balance", "32.500000");
    await expectAccount(page, "casino", "balance", "7.500000");
    assert.equal(await hold(page, h).getAttribute("data-state"), "pending_posted");
    assert.equal(await page.locator("#ledger-results li.result").count(), 0);

    // Markup in an id stays text.
    await page.fill("#transfer-id", "<b>x</b>");
    await page.fill("#transfer-amount", "1");
    await page.click("#transfer-submit");
    await page.locator('#ledger-results li.result[data-transfer-id="<b>x</b>"]').waitFor();
    assert.equal(await page.locator("#ledger b").count(), 0);

    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
});

test("Ledger, Worker API backend: the same scenario over /v1/ledger", { timeout: LEDGER_TEST_TIMEOUT_MS }, async () => {
  const { page, problems } = await openPage();
  // The Worker's storage outlives test runs, so use a fresh namespace each time.
  const namespace = `e2e-ledger-${Date.now()}`;
  try {
    await load(page);
    await useWorkerOn(page, namespace);
    assert.match(await page.textContent("#ledger-backend"), new RegExp(namespace));
    await ledgerScenario(page);

    // The page's state is not the Worker's: after a reload and a switch, the Worker still has it.
    await reload(page);
    await useWorkerOn(page, namespace);
    await expectAccount(page, "agent", "balance", "32.500000");

    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
});

// ---------------------------------------------------------------------------
// Context-budget panel

const BUDGET_SCREENSHOT = join(ROOT, "target", "e2e", "budget.png");

/** Waits until the budget panel has settled (no pending or running computation). */
async function budgetIdle(page) {
  await page.locator("#budget:not([aria-busy])").waitFor({ state: "attached" });
}

function budgetLegend(page, status) {
  return page.locator(`#budget-legend li.legend-item[data-kind="slot"][data-status="${status}"]`);
}

test("Context budget: truncation and dropping in a small window, typed error, exact counting for gpt-4o", { timeout: TEST_TIMEOUT_MS }, async () => {
  const { page, problems } = await openPage();
  try {
    await load(page);
    await budgetIdle(page);
    await page.locator("#budget-status.status-ok").waitFor();
    assert.equal(await page.locator("#budget-slots li.budget-slot").count(), 5);

    // A 200-token custom window: the high-priority long slot is truncated, low ones dropped.
    await page.fill("#budget-window", "200");
    await page.locator('#budget-result[data-window="200"]').waitFor({ state: "attached" });
    await budgetIdle(page);
    await page.locator("#budget-status.status-ok").waitFor();
    assert.ok((await budgetLegend(page, "truncated").count()) >= 1, "at least one slot truncated");
    assert.ok((await budgetLegend(page, "dropped").count()) >= 1, "at least one slot dropped");
    assert.ok((await budgetLegend(page, "kept").count()) >= 1, "at least one slot kept");
    const reserve = Number(await page.inputValue("#budget-reserve"));
    const used = Number((await page.textContent("#budget-used")).replace(/,/g, ""));
    assert.ok(used > 0 && used <= 200 - reserve, `used ${used} within 200 - ${reserve}`);
    assert.equal(await page.textContent("#budget-window-total"), "200");
    assert.equal(await page.textContent("#budget-encoding"), "estimate");
    // One bar segment per kept/truncated slot, plus the output reserve.
    const shown = (await budgetLegend(page, "kept").count()) + (await budgetLegend(page, "truncated").count());
    assert.equal(await page.locator('#budget-bar .seg[data-kind="slot"]').count(), shown);
    assert.equal(await page.locator('#budget-bar .seg[data-kind="reserve"]').count(), reserve > 0 ? 1 : 0);
    await mkdir(join(ROOT, "target", "e2e"), { recursive: true });
    await page.locator("#budget").screenshot({ path: BUDGET_SCREENSHOT });

    // Priority 11 is refused by the Rust side with a typed error.
    const priority = page.locator("#budget-slots li.budget-slot").first().locator(".slot-priority");
    await priority.fill("11");
    await page.locator('#budget-status.status-error[data-code="invalid_input"]').waitFor();
    assert.match(await page.textContent("#budget-status"), /^invalid_input: .*priority/);
    await priority.fill("10");
    await budgetIdle(page);
    await page.locator("#budget-status.status-ok").waitFor();

    // Markup in a slot name stays text.
    await page.locator("#budget-slots li.budget-slot").first().locator(".slot-name").fill("<b>sys</b>");
    await page.locator("#budget-legend li.legend-item", { hasText: "<b>sys</b>" }).waitFor();
    assert.equal(await page.locator("#budget b").count(), 0);

    // gpt-4o without a custom window: exact counting, after loading the rank asset.
    await page.fill("#budget-window", "");
    await page.selectOption("#budget-model", "gpt-4o");
    await page.locator('#budget-result[data-encoding="o200k_base"]').waitFor({ state: "attached", timeout: 20_000 });
    await budgetIdle(page);
    assert.equal(await page.textContent("#budget-encoding"), "o200k_base");
    assert.equal(await page.textContent("#budget-window-total"), "128,000");
    assert.equal(await budgetLegend(page, "dropped").count(), 0);
    await page.locator("#budget-status.status-ok", { hasText: "o200k_base" }).waitFor();

    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
});
