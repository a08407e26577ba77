// The Long-term memory panel: AMS memory records on either backend
// (`state.backend.longTerm`), found by meaning (the segmented vector index,
// with the offline n-gram embedder: no model), by keyword (BM25) or both
// (alpha or reciprocal-rank fusion). Each hit shows its score, distance and
// the vector segment that answered it. Records live in the backend; the
// page only remembers the last query and forget policy, to run them again
// after a write. User content is only ever written with textContent.
import { $, ui, state, showStatus, showError, badge, cell, renderStats, needsInput } from "./page.js";

const L = {
  panel: $("longterm"),
  backend: $("ltm-backend"),
  count: $("ltm-count"),
  samples: $("ltm-samples"),
  status: $("ltm-status"),
  addForm: $("ltm-add-form"),
  text: $("ltm-text"),
  user: $("ltm-user"),
  topics: $("ltm-topics"),
  type: $("ltm-type"),
  pinned: $("ltm-pinned"),
  factKey: $("ltm-fact-key"),
  validFrom: $("ltm-valid-from"),
  add: $("ltm-add"),
  searchForm: $("ltm-search-form"),
  query: $("ltm-query"),
  search: $("ltm-search"),
  modes: [$("ltm-mode-auto"), $("ltm-mode-semantic"), $("ltm-mode-keyword"), $("ltm-mode-hybrid")],
  alpha: $("ltm-alpha"),
  alphaValue: $("ltm-alpha-value"),
  rrf: $("ltm-rrf"),
  recency: $("ltm-recency"),
  filterUser: $("ltm-filter-user"),
  filterTopic: $("ltm-filter-topic"),
  filterType: $("ltm-filter-type"),
  limit: $("ltm-limit"),
  asOf: $("ltm-as-of"),
  allVersions: $("ltm-all-versions"),
  resultInfo: $("ltm-result-info"),
  results: $("ltm-results"),
  rows: $("ltm-rows"),
  history: $("ltm-history"),
  historyId: $("ltm-history-id"),
  historyList: $("ltm-history-list"),
  redact: $("ltm-redact"),
  forgetForm: $("ltm-forget-form"),
  forgetAge: $("ltm-forget-age"),
  forgetInactive: $("ltm-forget-inactive"),
  forgetBudget: $("ltm-forget-budget"),
  forgetInfo: $("ltm-forget-info"),
  forgetList: $("ltm-forget-list"),
};

const DAY_MS = 86_400_000;
// A dry run may select many ids; the panel reads back this many texts.
const FORGET_SHOWN_MAX = 25;

// What "Load sample memories" adds: two users' preferences, travel, health,
// work and family, of varied ages (`days` before now), so that a forget dry
// run has something to select and the recency re-rank something to weigh.
// The oldest one is pinned: forget spares it.
const SAMPLES = [
  { days: 400, pinned: true, text: "Sam has a severe peanut allergy and always carries an EpiPen.", user_id: "sam", topics: ["health", "allergy"], entities: ["peanuts", "EpiPen"], memory_type: "semantic" },
  { days: 40, text: "Sam is vegetarian and avoids fish stock, so dashi must be made from kombu.", user_id: "sam", topics: ["food", "preferences"], entities: ["dashi"], memory_type: "semantic" },
  { days: 12, text: "Sam prefers a window seat on trains and planes.", user_id: "sam", topics: ["travel", "preferences"], memory_type: "semantic" },
  { days: 230, text: "Sam and Alex spent two weeks in Japan for the cherry blossoms, from Tokyo to Kyoto and Osaka.", user_id: "sam", topics: ["travel"], entities: ["Japan", "Kyoto", "Alex"], memory_type: "episodic" },
  { days: 3, text: "Sam's passport expires in March 2027; it must be renewed before booking flights abroad.", user_id: "sam", topics: ["travel", "documents"], entities: ["passport"], memory_type: "semantic" },
  { days: 90, text: "Sam works as a backend engineer at Northwind, mostly in Rust and PostgreSQL.", user_id: "sam", topics: ["work"], entities: ["Northwind", "Rust", "PostgreSQL"], memory_type: "semantic" },
  { days: 20, text: "Sam's team holds sprint planning every second Monday at 10:00 CET.", user_id: "sam", topics: ["work", "schedule"], memory_type: "semantic" },
  { days: 200, text: "The team retrospective decided to move production deployments to Tuesdays.", user_id: "sam", topics: ["work"], memory_type: "episodic" },
  { days: 8, text: "Sam runs 5 km three mornings a week, training for the Lisbon half marathon in October.", user_id: "sam", topics: ["health", "fitness"], entities: ["Lisbon"], memory_type: "semantic" },
  { days: 60, text: "Sam takes 10 mg of cetirizine daily during the spring pollen season.", user_id: "sam", topics: ["health", "medication"], entities: ["cetirizine"], memory_type: "semantic" },
  { days: 30, text: "Sam's monthly budget for eating out is 300 EUR.", user_id: "sam", topics: ["finance", "food"], memory_type: "semantic" },
  { days: 150, text: "Sam's sister Maya lives in Porto with her two kids, Inês and Tomás.", user_id: "sam", topics: ["family"], entities: ["Maya", "Porto"], memory_type: "semantic" },
  { days: 5, text: "Sam wants dark mode in every app and turns off notification sounds.", user_id: "sam", topics: ["preferences", "tech"], memory_type: "semantic" },
  { days: 45, text: "Alex is allergic to cats, so holiday rentals must be pet-free.", user_id: "alex", topics: ["health", "travel", "preferences"], entities: ["cats"], memory_type: "semantic" },
  { days: 15, text: "Alex prefers an aisle seat and likes to board early.", user_id: "alex", topics: ["travel", "preferences"], memory_type: "semantic" },
  { days: 25, text: "Alex is learning Japanese, 20 minutes a day with flashcards.", user_id: "alex", topics: ["learning"], entities: ["Japanese"], memory_type: "semantic" },
  { days: 2, text: "Alex's favourite coffee is a flat white with oat milk.", user_id: "alex", topics: ["food", "preferences"], memory_type: "semantic" },
  { days: 210, text: "Alex asked the assistant to book a table for two in Osaka on the last night of the trip.", user_id: "alex", topics: ["travel", "food"], entities: ["Osaka"], memory_type: "message" },
];

const ltm = {
  busy: 0, // actions under way
  ticket: 0, // bumped per search, so only the newest search renders
  last: null, // the last query searched on this backend, run again after each write
  lastPolicy: null, // the policy of the dry run shown, run again after each write
  // The forms' main buttons wait for a typed value (page.js needsInput); set by wireLongTerm.
  addReady: () => true,
  searchReady: () => true,
};

// ---------------------------------------------------------------------------
// Reading the forms

function sampleRecords(now = Date.now()) {
  return SAMPLES.map(({ days, ...record }) => {
    const at = new Date(now - days * DAY_MS).toISOString();
    return { ...record, created_at: at, last_accessed: at };
  });
}

/** Comma-separated tags; blanks between commas are dropped. */
function tags(value) {
  return value.split(",").map((t) => t.trim()).filter((t) => t !== "");
}

/** The add form as an AMS ClientMemoryRecord; the text goes as typed, for the Rust side to judge. */
function memoryFromForm() {
  const record = { text: L.text.value, memory_type: L.type.value, pinned: L.pinned.checked };
  if (L.user.value.trim() !== "") record.user_id = L.user.value.trim();
  const topics = tags(L.topics.value);
  if (topics.length > 0) record.topics = topics;
  if (L.factKey.value.trim() !== "") record.fact_key = L.factKey.value.trim();
  // A date alone reads as that day's start, UTC; the Rust side refuses it without a fact key.
  if (L.validFrom.value !== "") record.valid_from = `${L.validFrom.value}T00:00:00Z`;
  return record;
}

function mode() {
  return L.modes.find((r) => r.checked)?.value ?? "auto";
}

/** The search form as the package's query: `{text, mode, ...}` plus AMS filters. */
function queryFromForm() {
  const m = mode();
  // The page always asks why each hit ranked: the "why" column shows it.
  const q = { text: L.query.value, mode: m, recencyBoost: L.recency.checked, explain: true };
  if (L.asOf.value !== "") q.asOf = `${L.asOf.value}T23:59:59Z`;
  if (L.allVersions.checked) q.includeSuperseded = true;
  // An empty box is the default; anything else typed goes to the Rust side as is.
  if (L.limit.value !== "") q.limit = L.limit.valueAsNumber;
  if (m === "hybrid") {
    q.fusion = L.rrf.checked ? "rrf" : "alpha";
    if (!L.rrf.checked) q.hybridAlpha = L.alpha.valueAsNumber;
  }
  const user = L.filterUser.value.trim();
  if (user !== "") q.user_id = { eq: user };
  const topic = L.filterTopic.value.trim();
  if (topic !== "") q.topics = { any: [topic] };
  if (L.filterType.value !== "") q.memory_type = { eq: L.filterType.value };
  return q;
}

function hasFilter(q) {
  return q.user_id !== undefined || q.topics !== undefined || q.memory_type !== undefined;
}

function optionalCount(input) {
  return input.value === "" ? undefined : input.valueAsNumber;
}

function forgetPolicy() {
  const policy = {};
  for (const [name, input] of [["max_age_days", L.forgetAge], ["max_inactive_days", L.forgetInactive], ["budget", L.forgetBudget]]) {
    const v = optionalCount(input);
    if (v !== undefined) policy[name] = v;
  }
  return policy;
}

// ---------------------------------------------------------------------------
// Rendering

/** Flat segment 0 is scanned exactly; 1 and up are HNSW graphs; keyword-only hits have none. */
function segmentLabel(segment) {
  if (segment === null || segment === undefined) return "—";
  return segment === 0 ? "flat" : `HNSW #${segment}`;
}

function emptyRow(text) {
  const tr = document.createElement("tr");
  const td = cell(text, { className: "empty muted" });
  td.colSpan = 11;
  tr.append(td);
  return tr;
}

function actionButton(text, className, action, hit) {
  const b = document.createElement("button");
  b.type = "button";
  b.className = className;
  b.textContent = text;
  b.dataset.action = action;
  b.dataset.testid = `ltm-${action}`;
  b.setAttribute("aria-label", `${text}: ${hit.text}`);
  return b;
}

const num = (x, digits = 3) => (typeof x === "number" ? x.toFixed(digits) : "—");

/** The lines of a hit's explanation: each signal behind its rank, numbers and names only. */
function explainLines(x) {
  const lines = [];
  lines.push(`bm25: ${x.bm25 ? `${num(x.bm25.score)} (rank ${x.bm25.rank})` : "—"}`);
  lines.push(`vector: ${x.vector ? `${num(x.vector.score)} (rank ${x.vector.rank})` : "—"}`);
  if (x.fusion) {
    lines.push(`fusion: ${x.fusion.formula}`);
    lines.push(`  prior ${num(x.fusion.prior, 2)}, coverage ${num(x.fusion.coverage, 2)}, confidence ${num(x.fusion.confidence, 2)}`);
  }
  if (x.time_boost !== null) lines.push(`time boost: ×${num(x.time_boost, 2)}`);
  if (x.recency) lines.push(`recency: ${num(x.recency.recency_score)} → combined ${num(x.recency.combined)}`);
  lines.push(`filters: ${x.filters.length ? x.filters.join(", ") : "none"}`);
  lines.push(`versions: ${typeof x.versions === "string" ? x.versions : `as of ${x.versions.as_of}`}`);
  return lines;
}

/** A small breakdown of why the hit ranked where it did, folded by default. */
function explainCell(hit) {
  const td = cell("", { field: "explain", className: "ltm-explain" });
  if (!hit.explain) {
    td.textContent = "—";
    return td;
  }
  const details = document.createElement("details");
  details.dataset.testid = "ltm-explain";
  const summary = document.createElement("summary");
  summary.textContent = `#${hit.explain.rank}`;
  const pre = document.createElement("pre");
  pre.textContent = explainLines(hit.explain).join("\n");
  details.append(summary, pre);
  td.append(details);
  return td;
}

function hitRow(hit, rank) {
  const tr = document.createElement("tr");
  tr.dataset.testid = "ltm-row";
  tr.dataset.id = hit.id;
  tr.dataset.scoreType = hit.score_type;
  tr.dataset.segment = hit.segment === null ? "" : String(hit.segment);
  tr.dataset.pinned = String(hit.pinned);
  const text = cell("", { field: "text", className: "ltm-text" });
  const p = document.createElement("span");
  p.textContent = hit.text;
  text.append(p);
  if (hit.pinned) text.append(" ", badge("pinned", "warn"));
  if (hit.fact_key) text.append(" ", badge(hit.fact_key, "info"));
  if (hit.superseded_by) text.append(" ", badge(`superseded by ${hit.superseded_by}`, "warn"));
  tr.dataset.factKey = hit.fact_key ?? "";
  tr.dataset.superseded = String(Boolean(hit.superseded_by));
  const topics = cell("", { field: "topics" });
  for (const t of hit.topics) {
    const tag = document.createElement("span");
    tag.className = "tag";
    tag.textContent = t;
    topics.append(tag, " ");
  }
  const actions = cell("", { className: "ltm-row-actions" });
  actions.append(
    actionButton("Versions", "link-button", "versions", hit),
    actionButton(hit.pinned ? "Unpin" : "Pin", "link-button", "pin", hit),
    actionButton("Delete", "link-button ltm-delete", "delete", hit),
  );
  tr.append(
    cell(String(rank), { field: "rank", className: "num" }),
    text,
    cell(hit.score.toFixed(3), { field: "score", className: "num" }),
    cell(hit.dist.toFixed(3), { field: "dist", className: "num" }),
    cell(hit.score_type, { field: "score_type" }),
    cell(segmentLabel(hit.segment), { field: "segment", className: "mono" }),
    topics,
    cell(hit.user_id ?? "—", { field: "user_id", className: "mono" }),
    cell(hit.memory_type, { field: "memory_type" }),
    explainCell(hit),
    actions,
  );
  return tr;
}

function describeQuery(q) {
  const how = q.mode === "hybrid" ? (q.fusion === "rrf" ? "hybrid, RRF" : `hybrid, alpha ${q.hybridAlpha.toFixed(2)}`) : q.mode;
  return `${how}${q.recencyBoost ? ", recency re-rank" : ""}`;
}

function renderResults(result, q) {
  const hits = result.memories;
  L.results.dataset.mode = q.mode;
  // What auto ran as, and how a time expression in the query was read.
  L.results.dataset.searchMode = result.search_mode ?? q.mode;
  L.results.dataset.timeQuery = (result.time_query ?? []).map((t) => `${t.text}: ${t.from ?? "…"} – ${t.to ?? "…"}`).join("; ");
  L.results.dataset.total = String(result.total);
  L.results.dataset.exactFilter = String(result.exact_filter);
  L.rows.replaceChildren(...hits.map((h, i) => hitRow(h, i + 1)));
  if (hits.length === 0) L.rows.append(emptyRow("No memory matches."));
  let info = `(${hits.length} shown of ${result.total}; ${describeQuery(q)}`;
  if (hasFilter(q)) info += result.exact_filter ? "; filter answered by an exact scan" : "; filter applied inside the graph search";
  L.resultInfo.textContent = `${info})`;
}

function clearResults(text) {
  delete L.results.dataset.mode;
  delete L.results.dataset.total;
  delete L.results.dataset.exactFilter;
  L.resultInfo.textContent = "";
  L.rows.replaceChildren(emptyRow(text));
}

function renderCount(n) {
  L.count.dataset.count = String(n);
  L.count.textContent = `${n.toLocaleString("en-US")} ${n === 1 ? "memory" : "memories"}`;
}

function clearForget() {
  ltm.lastPolicy = null;
  L.forgetList.hidden = true;
  L.forgetList.replaceChildren();
  delete L.forgetInfo.dataset.deleted;
  L.forgetInfo.textContent = "A dry run lists what the policy would forget and deletes nothing; pinned memories are spared.";
}

function forgetItem(id, record) {
  const li = document.createElement("li");
  li.dataset.testid = "ltm-forget-item";
  li.dataset.id = id;
  const what = document.createElement("div");
  what.className = "what";
  what.textContent = record ? record.text : id;
  const note = document.createElement("div");
  note.className = "muted note";
  note.textContent = record
    ? `${record.memory_type}, created ${record.created_at.slice(0, 10)}, last accessed ${record.last_accessed.slice(0, 10)}`
    : "gone since the dry run";
  li.append(what, note);
  return li;
}

// ---------------------------------------------------------------------------
// Actions

/**
 * Runs an action, reporting any failure in the panel's status area while the
 * backend is unchanged. The action gets `live()`: false once the backend
 * switched. The panel is aria-busy while any action runs.
 */
async function runLtm(action) {
  const gen = state.generation;
  const live = () => gen === state.generation;
  ltm.busy++;
  L.panel.setAttribute("aria-busy", "true");
  try {
    await action(live);
  } catch (err) {
    if (live()) showError(err, L.status);
  } finally {
    if (--ltm.busy === 0) L.panel.removeAttribute("aria-busy");
  }
}

function ltmStatus(live, text, kind = "info") {
  if (live()) showStatus(text, kind, L.status);
}

async function refreshCount(live) {
  const n = await state.backend.longTerm.count();
  if (live()) renderCount(n);
  return n;
}

/** Searches; a newer search wins. Returns the result, or null if it was dropped. */
async function search(live, q) {
  const ticket = ++ltm.ticket;
  const result = await state.backend.longTerm.search(q);
  if (!live() || ticket !== ltm.ticket) return null;
  ltm.last = q;
  renderResults(result, q);
  return result;
}

/** After a write: the count, the footer, the last search and dry run again. */
async function afterWrite(live) {
  await refreshCount(live);
  if (state.backend.kind === "local") await renderStats();
  if (ltm.last && live()) await search(live, ltm.last);
  if (ltm.lastPolicy && live()) await dryRun(live, ltm.lastPolicy);
}

async function add(live) {
  const record = memoryFromForm();
  const r = await state.backend.longTerm.create([record]);
  await afterWrite(live);
  if (!live()) return;
  if (r.duplicates.length > 0) {
    ltmStatus(live, `Not added: the same memory is already stored (id ${r.duplicates[0]}).`);
    return;
  }
  L.text.value = "";
  ltm.addReady();
  const result = r.results?.[0] ?? {};
  let told = `Added memory ${r.created[0]}`;
  if (result.superseded?.length) told += `; it supersedes ${result.superseded.join(", ")}`;
  if (result.superseded_by) told += `; a newer version (${result.superseded_by}) already holds`;
  ltmStatus(live, `${told}.`, "ok");
}

async function loadSamples(live) {
  const r = await state.backend.longTerm.create(sampleRecords());
  await afterWrite(live);
  const dup = r.duplicates.length;
  ltmStatus(live, `Loaded ${r.created.length} sample memories${dup ? `; ${dup} were already stored (same hash)` : ""}.`, "ok");
}

async function runSearch(live) {
  const q = queryFromForm();
  const result = await search(live, q);
  if (result) ltmStatus(live, `Searched "${q.text}": ${result.memories.length} shown (${describeQuery(q)}).`);
}

async function remove(live, id) {
  const deleted = await state.backend.longTerm.delete([id]);
  await afterWrite(live);
  ltmStatus(live, deleted ? `Deleted memory ${id}.` : `Memory ${id} was already gone.`, "ok");
}

/** One version in the history list, with Restore when it has a text and is not the current one. */
function versionItem(v, current) {
  const li = document.createElement("li");
  li.dataset.testid = "ltm-version";
  li.dataset.version = String(v.version);
  li.dataset.op = v.op;
  const what = document.createElement("div");
  what.className = "what";
  what.textContent = v.text ?? `(text gone; sha-256 ${v.text_hash.slice(0, 16)}…)`;
  const note = document.createElement("div");
  note.className = "muted note";
  note.textContent = `v${v.version}${v.version === current ? " (current)" : ""}: ${v.op} by ${v.actor}, ${v.ts}`;
  li.append(what, note);
  if (v.text !== null && v.version !== current) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "link-button";
    b.textContent = "Restore";
    b.dataset.action = "restore";
    b.dataset.testid = "ltm-restore";
    b.setAttribute("aria-label", `Restore version ${v.version}`);
    li.append(b);
  }
  return li;
}

/** Shows `id`'s versions under the results. */
async function showVersions(live, id) {
  const h = await state.backend.longTerm.versions(id);
  if (!live()) return;
  if (!h) {
    L.history.hidden = true;
    ltmStatus(live, `Memory ${id} has no history.`);
    return;
  }
  L.history.dataset.id = id;
  L.historyId.textContent = id;
  L.historyList.replaceChildren(...h.versions.map((v) => versionItem(v, h.current)));
  L.history.hidden = false;
  L.redact.disabled = h.versions.at(-1)?.op === "redact";
  ltmStatus(live, `Memory ${id}: ${h.versions.length} versions.`);
}

async function restoreVersion(live, id, version) {
  const r = await state.backend.longTerm.restore(id, version);
  await afterWrite(live);
  await showVersions(live, id);
  ltmStatus(live, `Restored version ${version} of memory ${id} as version ${r.version}.`, "ok");
}

async function redactMemory(live, id) {
  const r = await state.backend.longTerm.redact(id);
  await afterWrite(live);
  await showVersions(live, id);
  ltmStatus(live, `Redacted memory ${id}: ${r.redacted_versions} versions lost their text (by ${r.redacted_by}).`, "ok");
}

async function togglePin(live, id, pinned) {
  const r = await state.backend.longTerm.edit(id, { pinned });
  await afterWrite(live);
  ltmStatus(live, `${r.pinned ? "Pinned" : "Unpinned"} memory ${id}${r.pinned ? ": forget spares it" : ""}.`, "ok");
}

/** Shows what `policy` would forget; returns the backend's answer. */
async function dryRun(live, policy) {
  const r = await state.backend.longTerm.forget(policy, true);
  const shown = r.deleted_ids.slice(0, FORGET_SHOWN_MAX);
  const records = await Promise.all(shown.map((id) => state.backend.longTerm.get(id)));
  if (!live()) return r;
  L.forgetInfo.dataset.deleted = String(r.deleted);
  L.forgetInfo.textContent =
    `Dry run of ${JSON.stringify(policy)}: would forget ${r.deleted} of ${r.scanned} memories; nothing was deleted.` +
    (r.deleted > shown.length ? ` The first ${shown.length} are listed.` : "");
  L.forgetList.replaceChildren(...shown.map((id, i) => forgetItem(id, records[i])));
  L.forgetList.hidden = shown.length === 0;
  ltm.lastPolicy = policy;
  return r;
}

async function forgetDryRun(live) {
  const r = await dryRun(live, forgetPolicy());
  ltmStatus(live, `Forget dry run: ${r.deleted} of ${r.scanned} would go.`);
}

function syncModeControls() {
  const hybrid = mode() === "hybrid";
  L.rrf.disabled = !hybrid;
  L.alpha.disabled = !hybrid || L.rrf.checked;
  L.searchForm.dataset.mode = mode();
}

// ---------------------------------------------------------------------------
// Wiring

/** Clears the panel while a backend switch is under way. */
export function resetLongTerm() {
  ++ltm.ticket;
  ltm.last = null;
  showStatus("Loading…", "info", L.status);
  L.backend.textContent = "…";
  L.count.textContent = "";
  delete L.count.dataset.count;
  clearResults("Search to see ranked memories.");
  clearForget();
  L.history.hidden = true;
  L.historyList.replaceChildren();
}

/** Called by switchBackend once the backend answers. */
export async function openLongTerm() {
  const local = state.backend.kind === "local";
  L.backend.textContent = local ? "this page (IndexedDB)" : `the Worker, namespace "${ui.namespace.value}"`;
  await runLtm(async (live) => {
    const n = await refreshCount(live);
    ltmStatus(live, n === 0 ? "No long-term memories yet: add one or load the samples." : `${n} long-term memories stored. Search them by meaning, keyword or both.`);
  });
}

export function wireLongTerm() {
  // An empty box only shows a placeholder: the buttons wait for something typed.
  ltm.addReady = needsInput(L.add, () => (L.text.value === "" ? "Type the memory's text to add it." : null));
  ltm.searchReady = needsInput(L.search, () => (L.query.value === "" ? "Type a query to search." : null));
  L.addForm.addEventListener("submit", (e) => {
    e.preventDefault();
    if (!ltm.addReady()) return;
    runLtm(add);
  });
  L.text.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) L.addForm.requestSubmit();
  });
  L.samples.addEventListener("click", () => runLtm(loadSamples));
  L.searchForm.addEventListener("submit", (e) => {
    e.preventDefault();
    if (!ltm.searchReady()) return;
    runLtm(runSearch);
  });
  // Once results are shown, a new mode or fusion searches again at once (with a query typed).
  const researchIfShown = () => {
    syncModeControls();
    if (ltm.last && ltm.searchReady()) runLtm(runSearch);
  };
  for (const r of L.modes) r.addEventListener("change", researchIfShown);
  L.rrf.addEventListener("change", researchIfShown);
  L.alpha.addEventListener("input", () => {
    L.alphaValue.textContent = L.alpha.valueAsNumber.toFixed(2);
  });
  L.alpha.addEventListener("change", researchIfShown);
  L.rows.addEventListener("click", (e) => {
    const button = e.target.closest("button[data-action]");
    const row = button?.closest("tr[data-id]");
    if (!row) return;
    const id = row.dataset.id;
    if (button.dataset.action === "delete") runLtm((live) => remove(live, id));
    else if (button.dataset.action === "versions") runLtm((live) => showVersions(live, id));
    else runLtm((live) => togglePin(live, id, row.dataset.pinned !== "true"));
  });
  L.historyList.addEventListener("click", (e) => {
    const item = e.target.closest('button[data-action="restore"]')?.closest("li[data-version]");
    if (item) runLtm((live) => restoreVersion(live, L.history.dataset.id, Number(item.dataset.version)));
  });
  L.redact.addEventListener("click", () => runLtm((live) => redactMemory(live, L.history.dataset.id)));
  L.forgetForm.addEventListener("submit", (e) => {
    e.preventDefault();
    runLtm(forgetDryRun);
  });
  syncModeControls();
  L.alphaValue.textContent = L.alpha.valueAsNumber.toFixed(2);
}
