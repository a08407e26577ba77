// End-to-end test of the demo page's Chat panel in Debian's Chromium, on both
// backends: turns are added until the history passes 70 % of the window and
// is compacted by the extractive summarizer; then the summary, the
// compaction log, the gauges and the archive must agree, and survive a reload.
//
//   node --test tests/e2e/chat.test.mjs
//
// Like browser.test.mjs, it starts `wrangler dev` as `make demo` does (serving
// target/site/ from `make site`), or tests the Worker at EDGEMEM_E2E_URL.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { browserHarness, switchToWorker } from "./harness.mjs";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SITE = join(ROOT, "target", "site");
const SCREENSHOT = join(ROOT, "target", "e2e", "chat.png");
const WORKER_TOKEN = process.env.EDGEMEM_E2E_TOKEN ?? "";

const ACTION_TIMEOUT_MS = 10_000;
const TEST_TIMEOUT_MS = 60_000;
// The scripted exchanges pass 70 % of the default 500-token window within
// five clicks; more than this means compaction never happened.
const SIMULATE_CLICKS_MAX = 10;

const harness = browserHarness({
  root: ROOT,
  required: [join(SITE, "pkg", "browser.js"), join(SITE, "chat.js")],
  profilePrefix: "edgemem-e2e-chat-",
  viewport: { width: 1280, height: 900 },
  actionTimeoutMs: ACTION_TIMEOUT_MS,
});
const openPage = () => harness.openPage();

async function load(page) {
  await page.goto(harness.baseUrl, { waitUntil: "load" });
  await page.locator('body[data-ready="true"]').waitFor({ state: "attached" });
  await chatIdle(page);
}

async function reload(page) {
  await page.reload({ waitUntil: "load" });
  await page.locator('body[data-ready="true"]').waitFor({ state: "attached" });
  await chatIdle(page);
}

async function useWorkerOn(page, namespace) {
  await switchToWorker(page, namespace, WORKER_TOKEN);
  await page.locator("#chat-backend", { hasText: namespace }).waitFor();
  await chatIdle(page);
}

/** Waits until no chat action is under way (the panel is aria-busy while one runs). */
async function chatIdle(page) {
  await page.locator("#chat:not([aria-busy])").waitFor({ state: "attached" });
}

async function expectChatStatus(page, kind, text) {
  try {
    await page.locator(`#chat-status.status-${kind}`, { hasText: text }).waitFor();
  } catch (err) {
    throw new Error(`expected chat status ${kind} "${text}", got: ${await page.textContent("#chat-status")}`, { cause: err });
  }
}

async function openChatSession(page, id) {
  await page.fill("#chat-session", id);
  await page.click("#chat-open");
  await chatIdle(page);
  await expectChatStatus(page, "info", `"${id}" is a new chat`);
}

const number = (text) => Number(text.replace(/,/g, ""));

/** Everything the panel shows that must survive a reload. */
async function snapshot(page) {
  const gauge = page.locator("#chat-gauge");
  return {
    summary: await page.textContent("#chat-summary"),
    turns: await page.locator('#chat-turns li[data-testid="chat-turn"]').allTextContents(),
    events: await page.locator("#chat-events li.chat-event .what").allTextContents(),
    archived: Number(await page.getAttribute("#chat-archive-box", "data-total")),
    used: Number(await gauge.getAttribute("data-used-percent")),
    until: Number(await gauge.getAttribute("data-until-percent")),
    window: await page.textContent("#chat-window-value"),
  };
}

/**
 * Simulates turns until the first compaction; checks what the panel shows
 * then. Returns the number of turns added.
 */
async function compactOnce(page) {
  const events = page.locator("#chat-events li.chat-event");
  assert.equal(await events.count(), 0);
  assert.equal(await page.getAttribute("#chat-summary", "data-empty"), "true");
  let turns = 0;
  for (let click = 1; (await events.count()) === 0; click++) {
    assert.ok(click <= SIMULATE_CLICKS_MAX, `no compaction after ${SIMULATE_CLICKS_MAX} simulated exchanges`);
    const before = await page.locator('#chat-turns li[data-testid="chat-turn"]').count();
    await page.click("#chat-simulate");
    await chatIdle(page);
    await expectChatStatus(page, "ok", "Added");
    const added = Number((await page.textContent("#chat-status")).match(/Added (\d+) turns?/)[1]);
    turns += added;
    if ((await events.count()) === 0) {
      // Below the threshold: every turn is still verbatim, and the gauge says so.
      assert.equal(await page.locator('#chat-turns li[data-testid="chat-turn"]').count(), before + added);
      assert.ok(Number(await page.getAttribute("#chat-gauge", "data-until-percent")) <= 100);
    }
  }
  assert.equal(await events.count(), 1);
  const event = events.first();
  const what = await event.locator(".what").textContent();
  const m = what.match(/^compacted (\d+) turns, ([\d,]+) → ([\d,]+) tokens, extractive$/);
  assert.ok(m, `event text: ${what}`);
  const [archived, before, after] = [Number(m[1]), number(m[2]), number(m[3])];
  assert.equal(await event.getAttribute("data-archived"), String(archived));
  assert.ok(after < before, `${before} → ${after}`);
  // The threshold is 70 % of the 500-token window; compaction ran because the history passed it.
  assert.ok(before > 350, `compacted at ${before} tokens`);
  await expectChatStatus(page, "ok", `compacted ${archived} turns`);

  // The summary box holds the running summary.
  assert.equal(await page.getAttribute("#chat-summary", "data-empty"), "false");
  const summary = (await page.textContent("#chat-summary")).trim();
  assert.ok(summary.length > 20, `summary: ${summary}`);

  // The gauge, from AMS's fields, is back under the threshold.
  const gauge = page.locator("#chat-gauge");
  const used = Number(await gauge.getAttribute("data-used-percent"));
  const until = Number(await gauge.getAttribute("data-until-percent"));
  assert.ok(used > 0 && used < 70, `context_percentage_total_used ${used}`);
  assert.ok(until > 0 && until < 100, `context_percentage_until_summarization ${until}`);
  assert.equal(await gauge.getAttribute("data-source"), "ams");
  assert.equal(Math.round((used * 500) / 100), after, "the gauge shows the tokens after compaction");

  // The archive keeps exactly the compacted originals; the rest are verbatim.
  assert.equal(await page.getAttribute("#chat-archive-box", "data-total"), String(archived));
  assert.equal(await page.textContent("#chat-archive-count"), `(${archived})`);
  await page.click("#chat-archive-box summary");
  const archivedItems = page.locator('#chat-archive li[data-testid="chat-archived"]');
  assert.equal(await archivedItems.count(), archived);
  const verbatim = page.locator('#chat-turns li[data-testid="chat-turn"]');
  assert.equal((await verbatim.count()) + archived, turns);
  // A tool result never starts the verbatim part: it went with its call.
  assert.notEqual(await verbatim.first().getAttribute("data-role"), "tool");
  // The oldest turn was archived verbatim.
  assert.match(await archivedItems.first().locator(".content").textContent(), /^Hi, I'm Sam\./);
  return turns;
}

async function checkPromptPreview(page) {
  await page.click("#chat-prompt-box summary");
  await chatIdle(page);
  await page.locator("#chat-prompt-info", { hasText: "memory.prompt()" }).waitFor();
  const first = page.locator('#chat-prompt li[data-testid="chat-prompt-message"]').first();
  assert.equal(await first.getAttribute("data-role"), "system");
  assert.match(await first.locator(".content").textContent(), /summary/i);
}

/** The scenario both backends go through on a fresh chat session. */
async function scenario(page, id, gaugeSource) {
  await openChatSession(page, id);
  // A blank first turn is refused with a typed error and creates no session.
  await page.fill("#chat-content", "   ");
  await page.click("#chat-send");
  await chatIdle(page);
  await page.locator('#chat-status.status-error[data-code="invalid_input"]').waitFor();
  await openChatSession(page, id);

  const turns = await compactOnce(page);

  // Reading the session again shows the same state. The gauge just came with
  // the compaction; now it comes from a read: the Worker's GET with a window,
  // or, in the page, its own count, which must equal AMS's.
  const compacted = await snapshot(page);
  await page.fill("#chat-session", id);
  await page.click("#chat-open");
  await chatIdle(page);
  await expectChatStatus(page, "info", `Opened "${id}"`);
  assert.deepEqual(await snapshot(page), compacted);
  assert.equal(await page.getAttribute("#chat-gauge", "data-source"), gaugeSource);

  await checkPromptPreview(page);

  // A typed turn: markup stays text.
  await page.selectOption("#chat-role", "user");
  await page.fill("#chat-content", "<b>also</b> book a table for two in Osaka");
  await page.click("#chat-send");
  await chatIdle(page);
  await expectChatStatus(page, "ok", "Added 1 turn");
  await page.locator("#chat-turns li.message", { hasText: "<b>also</b> book a table" }).waitFor();
  assert.equal(await page.locator("#chat b").count(), 0);
  assert.equal(await page.inputValue("#chat-content"), "");
  return turns;
}

/**
 * An empty box is not sent: Open waits for an id. An id the backend refuses
 * is a typed error and leaves the open chat alone.
 */
async function refuseEmptyId(page) {
  const shown = await snapshot(page);
  await page.fill("#chat-session", "");
  assert.equal(await page.isDisabled("#chat-open"), true);
  await page.locator("#chat-open-hint").waitFor();
  await page.fill("#chat-session", "..");
  await page.click("#chat-open");
  await chatIdle(page);
  await page.locator('#chat-status.status-error[data-code="invalid_input"]').waitFor();
  assert.deepEqual(await snapshot(page), shown);
}

test("Chat panel, IndexedDB backend: compaction, summary, gauge, archive, survive a reload", { timeout: TEST_TIMEOUT_MS }, async () => {
  const { page, problems } = await openPage();
  try {
    await load(page);
    assert.equal(await page.isChecked("#backend-local"), true);
    await page.locator("#chat-backend", { hasText: "IndexedDB" }).waitFor();
    const turns = await scenario(page, "e2e-chat-local", "page");
    console.log(`IndexedDB: first compaction after ${turns} turns`);

    await mkdir(join(ROOT, "target", "e2e"), { recursive: true });
    await page.locator("#chat").screenshot({ path: SCREENSHOT });
    await refuseEmptyId(page);

    const shown = await snapshot(page);
    await reload(page);
    // The panel reopens the same chat.
    assert.equal(await page.inputValue("#chat-session"), "e2e-chat-local");
    assert.deepEqual(await snapshot(page), shown);
    assert.equal(await page.getAttribute("#chat-gauge", "data-source"), "page");

    // The chat is an ordinary session of the working-memory panel.
    await page.locator('#session-list .session-item[data-session-id="e2e-chat-local"]').waitFor();

    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
});

test("Chat panel, Worker API backend: the same over HTTP, a smaller window, survive a reload", { timeout: TEST_TIMEOUT_MS }, async () => {
  const { page, problems } = await openPage();
  // The Worker's storage may outlive test runs (EDGEMEM_E2E_URL): a fresh namespace each time.
  const namespace = `e2e-chat-${Date.now()}`;
  try {
    await load(page);
    await useWorkerOn(page, namespace);
    const turns = await scenario(page, "e2e-chat-worker", "ams");
    console.log(`Worker: first compaction after ${turns} turns`);
    await refuseEmptyId(page);

    // One more turn puts the history between the thresholds of a 400-token
    // window (280) and of the 500-token one (350).
    await page.selectOption("#chat-role", "assistant");
    await page.fill("#chat-content", "Noted: your partner is Alex, she prefers window seats on the shinkansen, and you both want to be back at the hotel before 10 pm on the night of the Nara day trip.");
    await page.press("#chat-content", "Control+Enter");
    await chatIdle(page);
    await expectChatStatus(page, "ok", "Added 1 turn");
    const before = await snapshot(page);
    const tokens = Math.round((before.used * 500) / 100);
    assert.ok(tokens > 280 && tokens <= 350, `${tokens} tokens before the window shrinks`);
    const events = page.locator("#chat-events li.chat-event");
    assert.equal(await events.count(), 1);

    // The smaller window puts the history over its threshold: compacted at once.
    await page.focus("#chat-window");
    await page.keyboard.press("ArrowLeft");
    await chatIdle(page);
    assert.equal(await page.textContent("#chat-window-value"), "400");
    await expectChatStatus(page, "ok", "Context window: 400 tokens; compacted");
    assert.equal(await events.count(), 2);
    const after = await snapshot(page);
    const archivedNow = Number(await events.first().getAttribute("data-archived"));
    assert.equal(await events.first().getAttribute("data-tokens-before"), String(tokens));
    assert.equal(after.archived, before.archived + archivedNow);
    assert.ok(after.until > 0 && after.until < 100, `until ${after.until} after the window shrank`);
    assert.equal(Math.round((after.used * 400) / 100), Number(await events.first().getAttribute("data-tokens-after")));

    await reload(page);
    assert.equal(await page.isChecked("#backend-local"), true);
    await useWorkerOn(page, namespace);
    assert.equal(await page.inputValue("#chat-session"), "e2e-chat-worker");
    assert.deepEqual(await snapshot(page), after);
    assert.equal(await page.getAttribute("#chat-gauge", "data-source"), "ams");

    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
});
