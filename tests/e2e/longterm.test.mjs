// End-to-end test of the demo page's Long-term memory panel in Debian's
// Chromium, on both backends: sample memories are loaded, then searched by
// meaning, keyword and both (alpha and RRF), with filters; the table must
// show the obvious record first, its score type and the segment that
// answered; a dry-run forget spares pinned records; a delete removes a
// record from every search; bad input is a typed error that changes nothing;
// the records survive a reload; a fact key supersedes, "as of" finds the
// version current then, and each hit explains its rank.
//
//   node --test tests/e2e/longterm.test.mjs
//
// Like chat.test.mjs, it starts `wrangler dev` as `make demo` does (serving
// target/site/ from `make site`), or tests the Worker at EDGEMEM_E2E_URL.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { browserHarness, indexedDbText, switchToWorker } from "./harness.mjs";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SITE = join(ROOT, "target", "site");
const SCREENSHOT = join(ROOT, "target", "e2e", "longterm.png");
const WORKER_TOKEN = process.env.EDGEMEM_E2E_TOKEN ?? "";

const ACTION_TIMEOUT_MS = 10_000;
const TEST_TIMEOUT_MS = 90_000;
// The page's sample set (www/longterm.js): 18 memories, three of them older
// than 180 days and not pinned, one older and pinned.
const SAMPLE_COUNT = 18;
const OLD_UNPINNED = ["Sam and Alex spent two weeks in Japan", "The team retrospective decided", "Alex asked the assistant to book a table"];

const harness = browserHarness({
  root: ROOT,
  required: [join(SITE, "pkg", "browser.js"), join(SITE, "longterm.js")],
  profilePrefix: "edgemem-e2e-ltm-",
  viewport: { width: 1280, height: 900 },
  actionTimeoutMs: ACTION_TIMEOUT_MS,
});
const openPage = () => harness.openPage();

/** Waits until no long-term action is under way (the panel is aria-busy while one runs). */
async function idle(page) {
  await page.locator("#longterm:not([aria-busy])").waitFor({ state: "attached" });
}

async function load(page) {
  await page.goto(harness.baseUrl, { waitUntil: "load" });
  await page.locator('body[data-ready="true"]').waitFor({ state: "attached" });
  await idle(page);
}

async function reload(page) {
  await page.reload({ waitUntil: "load" });
  await page.locator('body[data-ready="true"]').waitFor({ state: "attached" });
  await idle(page);
}

async function useWorkerOn(page, namespace) {
  await switchToWorker(page, namespace, WORKER_TOKEN);
  await page.locator("#ltm-backend", { hasText: namespace }).waitFor();
  await idle(page);
}

async function expectStatus(page, kind, text) {
  try {
    await page.locator(`#ltm-status.status-${kind}`, { hasText: text }).waitFor();
  } catch (err) {
    throw new Error(`expected status ${kind} "${text}", got: ${await page.textContent("#ltm-status")}`, { cause: err });
  }
}

async function count(page) {
  const n = await page.getAttribute("#ltm-count", "data-count");
  assert.ok(n !== null, "the record count is shown");
  return Number(n);
}

/** The results table as data. */
function rows(page) {
  return page.$$eval('#ltm-rows tr[data-testid="ltm-row"]', (trs) =>
    trs.map((tr) => {
      const field = (name) => tr.querySelector(`[data-field="${name}"]`).textContent;
      return {
        id: tr.dataset.id,
        rank: Number(field("rank")),
        text: tr.querySelector('[data-field="text"] > span').textContent,
        score: Number(field("score")),
        dist: Number(field("dist")),
        scoreType: field("score_type"),
        segment: field("segment"),
        topics: [...tr.querySelectorAll('[data-field="topics"] .tag')].map((t) => t.textContent),
        userId: field("user_id"),
        memoryType: field("memory_type"),
        pinned: tr.dataset.pinned === "true",
        factKey: tr.dataset.factKey,
        superseded: tr.dataset.superseded === "true",
      };
    }),
  );
}

/** Fills the search form and searches; returns the rows. */
async function search(page, text, { mode = "semantic", rrf = false, user = "", topic = "", type = "" } = {}) {
  // The mode first: once results are shown, switching it searches at once.
  await page.check(`#ltm-mode-${mode}`);
  await idle(page);
  if (mode === "hybrid") await page.setChecked("#ltm-rrf", rrf);
  await idle(page);
  await page.fill("#ltm-query", text);
  await page.fill("#ltm-filter-user", user);
  await page.fill("#ltm-filter-topic", topic);
  await page.selectOption("#ltm-filter-type", type);
  await page.click("#ltm-search");
  await idle(page);
  await expectStatus(page, "info", `Searched "${text}"`);
  return rows(page);
}

/** The obvious record ranks first, and every row has the mode's score type. */
function assertFirst(found, expected, scoreType) {
  assert.ok(found.length > 0, `no result for ${expected}`);
  assert.ok(found[0].text.includes(expected), `first: ${found[0].text}; expected ${expected}`);
  assert.deepEqual(found.map((r) => r.rank), found.map((_, i) => i + 1));
  for (const r of found) assert.equal(r.scoreType, scoreType, r.text);
}

async function dryRun(page) {
  await page.fill("#ltm-forget-age", "180");
  await page.click("#ltm-forget");
  await idle(page);
  await expectStatus(page, "info", "Forget dry run");
  const n = Number(await page.getAttribute("#ltm-forget-info", "data-deleted"));
  const texts = await page.locator('#ltm-forget-list li[data-testid="ltm-forget-item"] .what').allTextContents();
  return { n, texts };
}

/** The scenario both backends go through on an empty store. */
async function scenario(page) {
  assert.equal(await count(page), 0);

  // An empty text is not sent: Add waits for one. Bad input is refused with a
  // typed error and stores nothing.
  await page.fill("#ltm-text", "");
  assert.equal(await page.isDisabled("#ltm-add"), true);
  await page.fill("#ltm-text", "Sam likes green tea");
  await page.fill("#ltm-user", "sam/alex");
  await page.fill("#ltm-topics", "travel");
  await page.click("#ltm-add");
  await idle(page);
  await page.locator('#ltm-status.status-error[data-code="invalid_input"]', { hasText: "user_id" }).waitFor();
  assert.equal(await count(page), 0);
  assert.equal(await page.inputValue("#ltm-topics"), "travel", "the form keeps what was typed");
  assert.equal(await page.inputValue("#ltm-text"), "Sam likes green tea", "the form keeps what was typed");
  await page.fill("#ltm-text", "");
  await page.fill("#ltm-user", "");
  await page.fill("#ltm-topics", "");

  await page.click("#ltm-samples");
  await idle(page);
  await expectStatus(page, "ok", `Loaded ${SAMPLE_COUNT} sample memories`);
  assert.equal(await count(page), SAMPLE_COUNT);
  // Again: every one is a duplicate by hash.
  await page.click("#ltm-samples");
  await idle(page);
  await expectStatus(page, "ok", `Loaded 0 sample memories; ${SAMPLE_COUNT} were already stored`);
  assert.equal(await count(page), SAMPLE_COUNT);

  // Semantic: the flat segment (exact scan) answers every hit.
  const semantic = await search(page, "peanut allergy");
  assertFirst(semantic, "peanut allergy", "semantic");
  for (const r of semantic) assert.equal(r.segment, "flat", r.text);
  assert.ok(semantic[0].pinned, "the peanut allergy is pinned");
  assert.ok(Math.abs(semantic[0].score + semantic[0].dist - 1) < 0.002, "dist is 1 - score");

  // Keyword: BM25 alone, so no vector segment answered.
  const keyword = await search(page, "marathon", { mode: "keyword" });
  assertFirst(keyword, "Lisbon half marathon", "keyword");
  assert.equal(keyword.length, 1, "one record has the word");
  assert.equal(keyword[0].segment, "—");
  assert.equal(keyword[0].score, 1);

  // Hybrid, by alpha and by reciprocal-rank fusion.
  const alpha = await search(page, "window seat on the train", { mode: "hybrid" });
  assertFirst(alpha, "window seat", "hybrid");
  assert.match(await page.textContent("#ltm-result-info"), /hybrid, alpha 0\.70/);
  const rrf = await search(page, "flat white coffee", { mode: "hybrid", rrf: true });
  assertFirst(rrf, "flat white", "hybrid");
  assert.match(await page.textContent("#ltm-result-info"), /hybrid, RRF/);

  // Filters restrict the results, and few records are scanned exactly.
  const all = await search(page, "seat preference");
  assert.ok(all.some((r) => r.userId === "sam"), "unfiltered, Sam's memories come up too");
  const alex = await search(page, "seat preference", { user: "alex" });
  assertFirst(alex, "aisle seat", "semantic");
  for (const r of alex) assert.equal(r.userId, "alex", r.text);
  assert.equal(await page.getAttribute("#ltm-results", "data-exact-filter"), "true");
  assert.match(await page.textContent("#ltm-result-info"), /exact scan/);
  const health = await search(page, "allergy", { topic: "health" });
  assert.ok(health.length >= 2);
  for (const r of health) assert.ok(r.topics.includes("health"), r.text);
  const episodic = await search(page, "trip", { type: "episodic" });
  assert.equal(episodic.length, 2);
  for (const r of episodic) assert.equal(r.memoryType, "episodic", r.text);

  // An empty query is not sent: Search waits for one. A blank query is sent,
  // and lists what the filters admit, newest first, with no error (a search
  // without text is a filter-only listing, as AMS answers one).
  await page.fill("#ltm-query", "");
  assert.equal(await page.isDisabled("#ltm-search"), true);
  await page.fill("#ltm-query", "   ");
  await page.click("#ltm-search");
  await idle(page);
  assert.equal(await page.locator("#ltm-status.status-error").count(), 0, "a blank query is no error");
  assert.ok((await rows(page)).length >= 1, "a blank query lists memories");

  // Markup in a memory stays text, in the table and the forget list.
  await page.fill("#ltm-text", '<img src=x onerror="window.__ltmInjected=1"><b>bold</b> Sam drinks green tea');
  await page.fill("#ltm-user", "sam");
  await page.fill("#ltm-topics", "food, <i>drinks</i>");
  await page.click("#ltm-add");
  await idle(page);
  await expectStatus(page, "ok", "Added memory");
  assert.equal(await page.inputValue("#ltm-text"), "");
  assert.equal(await count(page), SAMPLE_COUNT + 1);
  const tea = await search(page, "green tea", { mode: "keyword" });
  assert.equal(tea[0].text, '<img src=x onerror="window.__ltmInjected=1"><b>bold</b> Sam drinks green tea');
  assert.deepEqual(tea[0].topics, ["food", "<i>drinks</i>"]);
  assert.equal(await page.locator("#longterm img, #longterm b, #longterm i").count(), 0);
  assert.equal(await page.evaluate(() => window.__ltmInjected), undefined);

  // A dry-run forget lists the old records, spares the pinned one, deletes nothing.
  const before = await dryRun(page);
  assert.equal(before.n, OLD_UNPINNED.length);
  for (const t of OLD_UNPINNED) assert.ok(before.texts.some((x) => x.startsWith(t)), `${t} in ${before.texts}`);
  assert.ok(!before.texts.some((x) => x.includes("peanut")), "the pinned record is spared");
  assert.equal(await count(page), SAMPLE_COUNT + 1);

  // Pinning one from the table spares it too.
  const trip = await search(page, "cherry blossoms", { mode: "keyword" });
  assertFirst(trip, "two weeks in Japan", "keyword");
  assert.equal(trip[0].pinned, false);
  await page.locator(`#ltm-rows tr[data-id="${trip[0].id}"] button[data-action="pin"]`).click();
  await idle(page);
  await expectStatus(page, "ok", `Pinned memory ${trip[0].id}`);
  assert.equal((await rows(page))[0].pinned, true);
  // The dry run shown was run again after the write.
  assert.equal(await page.getAttribute("#ltm-forget-info", "data-deleted"), String(OLD_UNPINNED.length - 1));
  const pinned = await dryRun(page);
  assert.equal(pinned.n, OLD_UNPINNED.length - 1);
  assert.ok(!pinned.texts.some((x) => x.includes("two weeks in Japan")));

  // Delete: the record leaves every search.
  const marathon = await search(page, "marathon", { mode: "keyword" });
  const gone = marathon[0];
  await page.locator(`#ltm-rows tr[data-id="${gone.id}"] button[data-action="delete"]`).click();
  await idle(page);
  await expectStatus(page, "ok", `Deleted memory ${gone.id}`);
  // The last search ran again by itself.
  assert.deepEqual(await rows(page), []);
  await page.locator("#ltm-rows td.empty", { hasText: "No memory matches." }).waitFor();
  assert.equal(await count(page), SAMPLE_COUNT);
  for (const mode of ["semantic", "hybrid"]) {
    const found = await search(page, "Lisbon half marathon training", { mode });
    assert.ok(found.length > 0);
    assert.ok(!found.some((r) => r.id === gone.id), `${mode} still finds the deleted record`);
  }
  return gone.id;
}

/** Facts over time (issue 20): a fact key supersedes, "as of" and "every version" see past ones, and each hit says why it ranked. */
async function facts(page) {
  const add = async (text, validFrom) => {
    await page.fill("#ltm-text", text);
    await page.fill("#ltm-user", "sam");
    await page.fill("#ltm-fact-key", "user.seat");
    await page.fill("#ltm-valid-from", validFrom);
    await page.click("#ltm-add");
    await idle(page);
  };
  await add("Sam booked aisle seats on every flight this winter", "2025-01-01");
  await expectStatus(page, "ok", "Added memory");
  await add("Sam switched to window seats for long flights", "2025-06-01");
  await expectStatus(page, "ok", "it supersedes");
  const seats = async () => (await search(page, "seats flights", { mode: "keyword", user: "sam" })).filter((r) => r.factKey === "user.seat");
  const current = await seats();
  assert.deepEqual(current.map((r) => [r.text, r.superseded]), [["Sam switched to window seats for long flights", false]]);
  await page.fill("#ltm-as-of", "2025-03-01");
  const march = await seats();
  assert.deepEqual(march.map((r) => [r.text, r.superseded]), [["Sam booked aisle seats on every flight this winter", true]]);
  await page.fill("#ltm-as-of", "");
  await page.check("#ltm-all-versions");
  assert.equal((await seats()).length, 2);
  await page.uncheck("#ltm-all-versions");
  // Why the first hit ranked: a small breakdown beside it.
  await search(page, "seats flights", { mode: "keyword", user: "sam" });
  const why = page.locator('#ltm-rows tr[data-testid="ltm-row"]').first().locator('[data-testid="ltm-explain"]');
  await why.locator("summary").click();
  const lines = await why.locator("pre").textContent();
  assert.match(lines, /^bm25: [0-9.]+ \(rank \d+\)/m);
  assert.match(lines, /^filters: user_id$/m);
  assert.match(lines, /^versions: latest_only$/m);
}

/** Versions, restore and redaction from the table (issue 20); `local`: also grep IndexedDB. */
async function versions(page, local) {
  const SENTINEL = "Sentinel-Fig-2718";
  await page.fill("#ltm-text", `${SENTINEL} is Sam's gate code`);
  await page.fill("#ltm-user", "sam");
  await page.fill("#ltm-fact-key", "");
  await page.fill("#ltm-valid-from", "");
  await page.click("#ltm-add");
  await idle(page);
  await expectStatus(page, "ok", "Added memory");
  const [hit] = await search(page, SENTINEL, { mode: "keyword" });
  // Pinning is an edit: a second version.
  await page.locator(`#ltm-rows tr[data-id="${hit.id}"] button[data-action="pin"]`).click();
  await idle(page);
  await page.locator(`#ltm-rows tr[data-id="${hit.id}"] button[data-action="versions"]`).click();
  await idle(page);
  const items = () => page.$$eval('#ltm-history-list li[data-testid="ltm-version"]', (lis) => lis.map((li) => `${li.dataset.version}:${li.dataset.op}`));
  assert.deepEqual(await items(), ["1:create", "2:edit"]);
  await page.locator('#ltm-history-list li[data-version="1"] button[data-action="restore"]').click();
  await idle(page);
  await expectStatus(page, "ok", "Restored version 1");
  assert.deepEqual(await items(), ["1:create", "2:edit", "3:restore"]);
  assert.equal((await search(page, SENTINEL, { mode: "keyword" }))[0].pinned, false, "version 1 was unpinned");
  if (local) assert.ok((await indexedDbText(page)).includes(SENTINEL), "the grep sees stored text");
  await page.click("#ltm-redact");
  await idle(page);
  await expectStatus(page, "ok", `Redacted memory ${hit.id}: 3 versions`);
  assert.deepEqual(await items(), ["1:create", "2:edit", "3:restore", "4:redact"]);
  assert.equal(await page.locator("#ltm-history-list button[data-action=restore]").count(), 0, "no text left to restore");
  assert.deepEqual(await search(page, SENTINEL, { mode: "keyword" }), []);
  if (local) assert.ok(!(await indexedDbText(page)).includes(SENTINEL), "redacted from IndexedDB, not just hidden");
}

/**
 * Issue 20's round trip: the page's IndexedDB state exported by the package,
 * imported into the Worker from that file, exported again: the same lines
 * apart from the export's own time.
 */
async function roundTrip(page) {
  const lines = await page.evaluate(async () => {
    const { state } = await import("/page.js");
    const out = [];
    for await (const line of state.memory.export({ vectors: true })) out.push(line);
    return out;
  });
  const file = join(ROOT, "target", "e2e", "indexeddb-export.ndjson");
  await mkdir(join(ROOT, "target", "e2e"), { recursive: true });
  await writeFile(file, lines.join("\n") + "\n");
  const namespace = `e2e-import-${Date.now()}`;
  const headers = { "content-type": "application/x-ndjson", ...(WORKER_TOKEN ? { authorization: `Bearer ${WORKER_TOKEN}` } : {}) };
  const r = await fetch(new URL(`v1/import?namespace=${namespace}`, harness.baseUrl), { method: "POST", headers, body: await readFile(file, "utf8") });
  const answer = await r.text();
  assert.equal(r.status, 200, answer);
  assert.equal(JSON.parse(answer).imported, true);
  const back = await (await fetch(new URL(`v1/export?namespace=${namespace}&vectors=f32`, harness.baseUrl), { headers })).text();
  const timeless = (ls) => ls.map((l, i) => (i === 0 ? JSON.stringify({ ...JSON.parse(l), exported_at: null }) : l));
  assert.deepEqual(timeless(back.trimEnd().split("\n")), timeless(lines));
}

/** After a reload: the same records, found the same way. */
async function checkKept(page, deletedId) {
  assert.equal(await count(page), SAMPLE_COUNT);
  const semantic = await search(page, "peanut allergy");
  assertFirst(semantic, "peanut allergy", "semantic");
  assert.equal(semantic[0].segment, "flat");
  const trip = await search(page, "cherry blossoms", { mode: "keyword" });
  assert.equal(trip[0].pinned, true, "the pin was stored");
  assert.deepEqual(await search(page, "marathon", { mode: "keyword" }), []);
  const found = await search(page, "Lisbon half marathon training", { mode: "hybrid" });
  assert.ok(!found.some((r) => r.id === deletedId));
}

test("Long-term panel, IndexedDB backend: samples, three modes, filters, pin, forget dry run, delete, reload", { timeout: TEST_TIMEOUT_MS }, async () => {
  const { page, problems } = await openPage();
  try {
    await load(page);
    assert.equal(await page.isChecked("#backend-local"), true);
    await page.locator("#ltm-backend", { hasText: "IndexedDB" }).waitFor();
    const deletedId = await scenario(page);

    // The screenshot: a hybrid search with its scores and segments.
    await search(page, "window seat on the train", { mode: "hybrid" });
    await mkdir(join(ROOT, "target", "e2e"), { recursive: true });
    await page.locator("#longterm").screenshot({ path: SCREENSHOT });

    await reload(page);
    await page.locator("#ltm-backend", { hasText: "IndexedDB" }).waitFor();
    await checkKept(page, deletedId);
    await facts(page);
    await versions(page, true);
    await roundTrip(page);
    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
});

test("Long-term panel, Worker API backend: the same over AMS's routes, survive a reload", { timeout: TEST_TIMEOUT_MS }, async () => {
  const { page, problems } = await openPage();
  // The Worker's storage may outlive test runs (EDGEMEM_E2E_URL): a fresh namespace each time.
  const namespace = `e2e-ltm-${Date.now()}`;
  try {
    await load(page);
    await useWorkerOn(page, namespace);
    const deletedId = await scenario(page);

    await reload(page);
    assert.equal(await page.isChecked("#backend-local"), true);
    await useWorkerOn(page, namespace);
    await checkKept(page, deletedId);
    await facts(page);
    await versions(page, false);

    // Another namespace is another tenant: none of these records.
    await useWorkerOn(page, `${namespace}-other`);
    assert.equal(await count(page), 0);
    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
});
