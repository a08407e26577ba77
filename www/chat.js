// The Chat panel: one session's history kept inside a small context window,
// on either backend (`state.backend.history`). Every turn is appended, then
// the session is compacted if its history passed 70 % of the window: the
// oldest turns fold into the running summary (the package's default
// extractive summarizer, no LLM), the newest stay verbatim, and the
// originals go to the archive. The turns, summary and archive are stored by
// the backend; the page keeps the compaction log and its preferences in
// localStorage, as the ledger panel keeps its ids. User content is only ever
// written with textContent.
import { LIMITS, Tokenizer } from "edgemem";
import { DB_NAME, $, ui, state, showStatus, showError, timeElement, badge, renderStats, needsInput } from "./page.js";

const C = {
  panel: $("chat"),
  backend: $("chat-backend"),
  status: $("chat-status"),
  sessionForm: $("chat-session-form"),
  sessionId: $("chat-session"),
  open: $("chat-open"),
  newChat: $("chat-new"),
  window: $("chat-window"),
  windowValue: $("chat-window-value"),
  gauge: $("chat-gauge"),
  gaugeFill: $("chat-gauge-fill"),
  gaugeMark: $("chat-gauge-mark"),
  gaugeText: $("chat-gauge-text"),
  summary: $("chat-summary"),
  turnCount: $("chat-turn-count"),
  turns: $("chat-turns"),
  form: $("chat-form"),
  content: $("chat-content"),
  role: $("chat-role"),
  send: $("chat-send"),
  simulate: $("chat-simulate"),
  eventCount: $("chat-event-count"),
  events: $("chat-events"),
  archiveBox: $("chat-archive-box"),
  archiveCount: $("chat-archive-count"),
  archive: $("chat-archive"),
  promptBox: $("chat-prompt-box"),
  promptInfo: $("chat-prompt-info"),
  prompt: $("chat-prompt"),
};

const SESSION_DEFAULT = "chat-demo";
// Small enough that the scripted exchanges compact after about a dozen turns.
const WINDOW_DEFAULT_TOKENS = 500;
const EVENTS_KEPT_MAX = 50;
const ARCHIVE_SHOWN_MAX = 200;
// Chat-format overhead per message, as the compaction rule counts it.
const MESSAGE_OVERHEAD_TOKENS = LIMITS.MESSAGE_OVERHEAD_TOKENS_DEFAULT;
const SUMMARIZE_AT_PERCENT = LIMITS.SUMMARIZE_AT_PERCENT_DEFAULT;

// What "Simulate a turn" appends, one exchange per click, in order. Three of
// them are a tool call and its result, which compaction never splits.
const SCRIPT = [
  [
    ["user", "Hi, I'm Sam. My partner and I are planning two weeks in Japan in April, and the whole trip has to stay under 400,000 JPY."],
    ["assistant", "Nice to meet you, Sam. April is cherry-blossom season, so trains and ryokan fill up early. Shall we start with the route, or with the budget split between transport, lodging and food?"],
  ],
  [
    ["user", "Route first. We land at Haneda on April 3 and fly home from Kansai on April 17."],
    ["assistant", "Then a Tokyo, Hakone, Kyoto, Osaka loop fits: four nights in Tokyo, one in Hakone, five in Kyoto and three in Osaka, with Nara as a day trip from Kyoto."],
  ],
  [
    ["user", "How much is left in my travel wallet?"],
    ["assistant", '[tool call] wallet.balance {"account": "sam-travel", "asset": "JPY"}'],
    ["tool", '{"account": "sam-travel", "balance": "182500", "asset": "JPY", "pending": "12000"}'],
    ["assistant", "Your travel wallet holds 182,500 JPY, with a 12,000 JPY hold still pending for the Hakone deposit."],
  ],
  [
    ["user", "Is the 14-day JR Pass worth it for that route?"],
    ["assistant", "Not for this route. At 80,000 JPY per person it only breaks even with two long round trips, and since you fly home from Kansai, point-to-point shinkansen tickets come to about 30,000 JPY less for the two of you."],
  ],
  [
    ["user", "We're both vegetarian, and my partner doesn't eat fish either. Any dinner ideas in Kyoto?"],
    ["assistant", "Look for shojin ryori, Buddhist temple cuisine: Shigetsu inside Tenryu-ji in Arashiyama serves it at lunch, and Ain Soph Journey near Shijo is fully vegan in the evening. Ask for kombu dashi, since the usual stock is made from bonito."],
  ],
  [
    ["user", "Book the Hakone ryokan for April 7, one night, two guests."],
    ["assistant", '[tool call] booking.reserve {"hotel": "Gora Kadan", "night": "2027-04-07", "guests": 2, "diet": "vegetarian, no fish stock"}'],
    ["tool", '{"confirmation": "HK-20417", "hotel": "Gora Kadan", "night": "2027-04-07", "guests": 2, "price": "68000 JPY", "status": "confirmed"}'],
    ["assistant", "Done: Gora Kadan is confirmed for the night of April 7 for two guests, confirmation HK-20417, 68,000 JPY with a vegetarian kaiseki dinner."],
  ],
  [
    ["user", "What's the weather usually like in Kyoto in mid-April?"],
    ["assistant", "Mild: highs around 20 °C and lows near 9 °C, with rain every third or fourth day. Pack a light rain jacket and layers for early mornings at Fushimi Inari."],
  ],
  [
    ["user", "Convert 50,000 JPY to US dollars for me."],
    ["assistant", '[tool call] fx.convert {"from": "JPY", "to": "USD", "amount": "50000"}'],
    ["tool", '{"from": "JPY", "to": "USD", "amount": "50000", "rate": "0.00664", "result": "332.00"}'],
    ["assistant", "50,000 JPY is about 332 USD at today's rate of 0.00664."],
  ],
  [
    ["user", "Remind me, which day do we visit Nara?"],
    ["assistant", "Nara is the day trip on April 13, from Kyoto on the Kintetsu line, about 45 minutes. Go early to see Todai-ji before the tour groups arrive."],
  ],
  [
    ["user", "Can you put all of this into a checklist?"],
    ["assistant", "Checklist: land at Haneda on April 3; Hakone ryokan HK-20417 on April 7; point-to-point shinkansen tickets, no JR Pass; Shigetsu lunch in Arashiyama; Nara day trip on April 13; fly home from Kansai on April 17."],
  ],
];

const chat = {
  busy: 0, // chat actions under way
  ticket: 0, // bumped per read, so only the newest read renders
  epoch: 0, // bumped when another session is opened: answers for the old one are dropped
  exists: false, // whether the open session is stored yet (it is created by the first turn)
  // What this page remembers for the current backend (localStorage):
  // {session, window, logs: {[sessionId]: {events: [...], simulated}}}.
  saved: { session: SESSION_DEFAULT, window: WINDOW_DEFAULT_TOKENS, logs: {} },
  onSessionsChanged: async () => {},
  // The forms' main buttons wait for a typed value (page.js needsInput); set by wireChat.
  openReady: () => true,
  sendReady: () => true,
};

// ---------------------------------------------------------------------------
// Preferences and the compaction log

function loadSaved() {
  let saved = {};
  try {
    saved = JSON.parse(localStorage.getItem(state.backend.chatKey) ?? "{}") ?? {};
  } catch {
    // A damaged record starts over; the turns themselves are in the backend.
  }
  const size = Number(saved.window);
  chat.saved = {
    session: typeof saved.session === "string" && saved.session !== "" ? saved.session : SESSION_DEFAULT,
    window: Number.isInteger(size) && size >= Number(C.window.min) && size <= Number(C.window.max) ? size : WINDOW_DEFAULT_TOKENS,
    logs: saved.logs && typeof saved.logs === "object" ? saved.logs : {},
  };
}

function save() {
  localStorage.setItem(state.backend.chatKey, JSON.stringify(chat.saved));
}

function sessionId() {
  return chat.saved.session;
}

function windowTokens() {
  return chat.saved.window;
}

/** A session's log: `{events: [newest first], simulated}`. */
function log(id = sessionId()) {
  const l = chat.saved.logs[id];
  return {
    events: Array.isArray(l?.events) ? l.events : [],
    simulated: Number.isInteger(l?.simulated) ? l.simulated : 0,
  };
}

function setLog(id, next) {
  chat.saved.logs[id] = next;
  save();
}

function forgetLog(id) {
  if (!(id in chat.saved.logs)) return;
  delete chat.saved.logs[id];
  save();
}

// ---------------------------------------------------------------------------
// The context gauges

let tokenizer = null;

/** cl100k_base: what compaction counts with when no model is named (as AMS does). */
function cl100k() {
  tokenizer ??= Tokenizer.load("cl100k_base").catch((err) => {
    tokenizer = null;
    throw err;
  });
  return tokenizer;
}

/** `summarize_at_tokens` for a window, as the Rust `CompactionConfig::for_window` sets it. */
function thresholdTokens(size) {
  return Math.floor(size / 100) * SUMMARIZE_AT_PERCENT + Math.floor(((size % 100) * SUMMARIZE_AT_PERCENT) / 100);
}

function percent(n, d) {
  return Math.min(100, Math.round((n / Math.max(1, d)) * 10_000) / 100);
}

/**
 * AMS's two gauges for the session, in percent of the window and of the
 * summarization threshold. The Worker (GET with a window) and every
 * compaction report them; the in-page getSession takes no window, so for it
 * the page counts the history by the rule compaction uses: each turn's
 * tokens plus the chat overhead, the running summary likewise.
 */
async function gauges(session, size) {
  const used = session.context_percentage_total_used;
  const until = session.context_percentage_until_summarization;
  if (typeof used === "number" && typeof until === "number") return { used, until, source: "ams" };
  const t = await cl100k();
  let total = 0;
  for (const m of session.messages) total += t.count(m.content) + MESSAGE_OVERHEAD_TOKENS;
  if (session.context) total += t.count(session.context) + MESSAGE_OVERHEAD_TOKENS;
  return { used: percent(total, size), until: percent(total, thresholdTokens(size)), source: "page" };
}

// ---------------------------------------------------------------------------
// Rendering

function fmt(n) {
  return Number(n).toLocaleString("en-US");
}

function turnItem(m, testid) {
  const li = document.createElement("li");
  li.className = "message";
  li.dataset.role = m.role;
  if (m.id) li.dataset.messageId = m.id;
  li.dataset.testid = testid;
  const head = document.createElement("div");
  head.className = "message-head";
  const role = document.createElement("span");
  role.className = "role";
  role.textContent = m.role;
  head.append(role);
  if (m.created_at) head.append(timeElement(m.created_at));
  const content = document.createElement("p");
  content.className = "content";
  content.textContent = m.content;
  li.append(head, content);
  return li;
}

function emptyItem(text) {
  const li = document.createElement("li");
  li.className = "muted empty";
  li.textContent = text;
  return li;
}

function renderGauge(g, size) {
  const threshold = thresholdTokens(size);
  C.gaugeMark.style.left = `${(100 * threshold) / size}%`;
  C.gaugeMark.title = `summarization threshold: ${fmt(threshold)} tokens`;
  if (g === null) {
    C.gauge.removeAttribute("data-used-percent");
    C.gauge.removeAttribute("data-until-percent");
    C.gauge.removeAttribute("data-source");
    C.gauge.setAttribute("aria-valuenow", "0");
    C.gaugeFill.style.width = "0%";
    C.gaugeFill.classList.remove("over");
    C.gaugeText.textContent = `0 of ${fmt(size)} tokens; summarizes past ${fmt(threshold)} (${SUMMARIZE_AT_PERCENT} %).`;
    return;
  }
  C.gauge.dataset.usedPercent = String(g.used);
  C.gauge.dataset.untilPercent = String(g.until);
  C.gauge.dataset.source = g.source;
  C.gauge.setAttribute("aria-valuenow", String(g.used));
  C.gaugeFill.style.width = `${g.used}%`;
  C.gaugeFill.classList.toggle("over", g.until >= 100);
  // Two decimals of a percentage of at most 2,000 tokens give the count back
  // exactly, up to the 100 % the gauges are capped at.
  const tokens = Math.round((g.used * size) / 100);
  C.gaugeText.textContent =
    `${g.used >= 100 ? "at least " : ""}${fmt(tokens)} of ${fmt(size)} tokens (context_percentage_total_used ${g.used} %); ` +
    `${g.until} % of the way to summarization at ${fmt(threshold)} (context_percentage_until_summarization).`;
}

function renderSession(session, g) {
  renderGauge(g, windowTokens());
  const summary = session?.context ?? "";
  C.summary.textContent = summary === "" ? "No summary yet: it appears at the first compaction." : summary;
  C.summary.classList.toggle("muted", summary === "");
  C.summary.dataset.empty = String(summary === "");
  const messages = session?.messages ?? [];
  C.turnCount.textContent = `(${messages.length} verbatim)`;
  C.turns.replaceChildren(...messages.map((m) => turnItem(m, "chat-turn")));
  if (messages.length === 0) C.turns.append(emptyItem(session ? "No turns yet." : "No turns yet: send one or simulate a turn."));
  C.turns.scrollTop = C.turns.scrollHeight;
}

function eventItem(e) {
  const li = document.createElement("li");
  li.className = "chat-event";
  li.dataset.testid = "chat-event";
  li.dataset.archived = String(e.archived);
  li.dataset.tokensBefore = String(e.tokens_before);
  li.dataset.tokensAfter = String(e.tokens_after);
  const what = document.createElement("div");
  what.className = "what";
  what.append(
    `compacted ${e.archived} turn${e.archived === 1 ? "" : "s"}, ${fmt(e.tokens_before)} → ${fmt(e.tokens_after)} tokens, `,
    badge(e.summarizer, e.summarizer === "extractive" ? "info" : "ok"),
  );
  const meta = document.createElement("div");
  meta.className = "muted note";
  meta.append(`window ${fmt(e.window)}, ${e.counting}, `, timeElement(e.at));
  li.append(what, meta);
  return li;
}

function renderEvents() {
  const { events } = log();
  C.eventCount.textContent = `(${events.length})`;
  C.events.replaceChildren(...events.map(eventItem));
  if (events.length === 0) C.events.append(emptyItem(`None yet. Add turns until the gauge passes the ${SUMMARIZE_AT_PERCENT} % mark.`));
}

function renderArchive({ messages, total, offset }) {
  C.archiveCount.textContent = `(${fmt(total)})`;
  C.archiveBox.dataset.total = String(total);
  const items = messages.map((m) => turnItem(m, "chat-archived"));
  if (offset > 0) items.unshift(emptyItem(`… ${fmt(offset)} older turns not shown`));
  if (total === 0) items.push(emptyItem("Nothing archived yet."));
  C.archive.replaceChildren(...items);
}

function renderPrompt(p) {
  if (p === null) {
    C.promptInfo.textContent = "No session yet.";
    C.prompt.replaceChildren();
    return;
  }
  const d = p.dropped;
  C.promptInfo.textContent =
    `memory.prompt(): ${fmt(p.used_tokens)} of ${fmt(p.window_tokens)} tokens, ${p.turns_kept} turns kept, ` +
    `${d.turns} dropped${d.truncated.length ? `, truncated: ${d.truncated.join(", ")}` : ""}; counting ${p.counting}.`;
  C.prompt.replaceChildren(...p.messages.map((m) => turnItem(m, "chat-prompt-message")));
}

// ---------------------------------------------------------------------------
// Actions

/** False once the backend switched or another session was opened. */
function liveNow() {
  const gen = state.generation;
  const epoch = chat.epoch;
  return () => gen === state.generation && epoch === chat.epoch;
}

/**
 * Runs a chat action, reporting any failure in the chat's status area. The
 * action gets `live()` (see liveNow). The panel is aria-busy while any chat
 * action runs.
 */
async function runChat(action) {
  const gen = state.generation;
  const live = liveNow();
  chat.busy++;
  C.panel.setAttribute("aria-busy", "true");
  try {
    await action(live);
  } catch (err) {
    // Still this backend's panel, even if the action opened another session.
    if (gen === state.generation) showError(err, C.status);
  } finally {
    if (--chat.busy === 0) C.panel.removeAttribute("aria-busy");
  }
}

function chatStatus(live, text, kind = "info") {
  if (live()) showStatus(text, kind, C.status);
}

async function loadArchive(live) {
  const api = state.backend.history;
  const id = sessionId();
  let page = await api.archive(id, 0, ARCHIVE_SHOWN_MAX);
  let offset = 0;
  if (page.total > ARCHIVE_SHOWN_MAX) {
    offset = page.total - ARCHIVE_SHOWN_MAX;
    page = await api.archive(id, offset, ARCHIVE_SHOWN_MAX);
  }
  if (live()) renderArchive({ messages: page.messages, total: page.total, offset });
}

async function loadPrompt(live) {
  if (!C.promptBox.open) return;
  if (!chat.exists) {
    renderPrompt(null);
    return;
  }
  const query = C.content.value.trim() === "" ? undefined : C.content.value;
  const p = await state.backend.history.prompt(sessionId(), windowTokens(), query);
  if (live()) renderPrompt(p);
}

/** Shows a session (with its gauges), then refreshes the archive and the prompt preview. */
async function show(live, session) {
  const g = session ? await gauges(session, windowTokens()) : null;
  if (!live()) return;
  renderSession(session, g);
  renderEvents();
  if (session) await loadArchive(live);
  else renderArchive({ messages: [], total: 0, offset: 0 });
  await loadPrompt(live);
}

/** Shows a session just read (null: not stored yet, or gone). */
async function adopt(live, session) {
  chat.exists = session !== null;
  // A session that is gone (deleted, expired) takes its log with it.
  if (!session) forgetLog(sessionId());
  await show(live, session);
}

/** Reads the open session and shows it; a newer read wins. */
async function refreshChat(live) {
  const ticket = ++chat.ticket;
  const session = await state.backend.history.get(sessionId(), windowTokens());
  if (!live() || ticket !== chat.ticket) return null;
  await adopt(live, session);
  return session;
}

/** Compacts the open session if it passed the threshold; records and returns what happened. */
async function compactNow(live) {
  const id = sessionId();
  const r = await state.backend.history.compact(id, windowTokens());
  if (!r.compacted) return null;
  const event = {
    at: new Date().toISOString(),
    archived: r.archived,
    tokens_before: r.tokens_before,
    tokens_after: r.tokens_after,
    summarizer: r.summarizer,
    counting: r.counting,
    window: windowTokens(),
  };
  // The backend compacted whether or not this page still shows the session.
  const l = log(id);
  setLog(id, { ...l, events: [event, ...l.events].slice(0, EVENTS_KEPT_MAX) });
  if (live()) {
    ++chat.ticket;
    await show(live, r.session);
  }
  return event;
}

function describe(event) {
  return `compacted ${event.archived} turns, ${fmt(event.tokens_before)} → ${fmt(event.tokens_after)} tokens (${event.summarizer})`;
}

/** Stores turns; the first ones create the session, so a refused turn creates nothing. */
async function storeTurns(id, messages) {
  if (!chat.exists) {
    const { created } = await state.backend.create(id, { messages });
    chat.exists = true;
    if (created) return;
  }
  try {
    await state.backend.append(id, messages);
  } catch (err) {
    // Deleted or expired since it was shown: start it again, without the old log.
    if (err?.code !== "not_found") throw err;
    forgetLog(id);
    await state.backend.create(id, { messages });
  }
}

/** Stores turns, then compacts if the history passed the threshold. */
async function addTurns(live, messages) {
  const id = sessionId();
  await storeTurns(id, messages);
  const event = await compactNow(live);
  if (!event) await refreshChat(live);
  if (state.backend.kind === "local") await renderStats();
  await chat.onSessionsChanged(id);
  const n = messages.length;
  chatStatus(live, `Added ${n} turn${n === 1 ? "" : "s"} to "${id}"${event ? `; ${describe(event)}` : ""}.`, "ok");
}

async function send(live) {
  const role = C.role.value;
  await addTurns(live, [{ role, content: C.content.value }]);
  if (live()) {
    C.content.value = "";
    chat.sendReady();
  }
}

async function simulate(live) {
  const id = sessionId();
  const next = log(id).simulated;
  await addTurns(live, SCRIPT[next % SCRIPT.length].map(([role, content]) => ({ role, content })));
  setLog(id, { ...log(id), simulated: next + 1 });
}

async function changeWindow(live) {
  chat.saved.window = C.window.valueAsNumber;
  save();
  if (!chat.exists) {
    await refreshChat(live);
    chatStatus(live, `Context window: ${fmt(windowTokens())} tokens.`);
    return;
  }
  // A smaller window may put the history over its threshold right away.
  const event = await compactNow(live);
  if (!event) await refreshChat(live);
  chatStatus(live, `Context window: ${fmt(windowTokens())} tokens${event ? `; ${describe(event)}` : ""}.`, event ? "ok" : "info");
}

async function openSession(live, id) {
  // Read first: an id the backend refuses throws here and changes nothing.
  const session = await state.backend.history.get(id, windowTokens());
  if (!live()) return;
  chat.saved.session = id;
  save();
  C.sessionId.value = id;
  chat.openReady();
  ++chat.epoch;
  ++chat.ticket;
  const now = liveNow();
  await adopt(now, session);
  chatStatus(now, session ? `Opened "${id}": ${session.messages.length} verbatim turns.` : `"${id}" is a new chat: the first turn creates it.`);
}

function freshSessionId() {
  return `chat-${Date.now().toString(36)}`;
}

// ---------------------------------------------------------------------------
// Wiring

/** Clears the panel while a backend switch is under way. */
export function resetChat() {
  ++chat.ticket;
  ++chat.epoch;
  chat.exists = false;
  showStatus("Loading…", "info", C.status);
  C.backend.textContent = "…";
  renderSession(null, null);
  C.events.replaceChildren();
  C.eventCount.textContent = "";
  renderArchive({ messages: [], total: 0, offset: 0 });
  C.prompt.replaceChildren();
  C.promptInfo.textContent = "";
}

/** Called by switchBackend once the backend answers. */
export async function openChat() {
  loadSaved();
  const local = state.backend.kind === "local";
  C.backend.textContent = local ? "this page (IndexedDB)" : `the Worker, namespace "${ui.namespace.value}"`;
  C.sessionId.value = sessionId();
  chat.openReady();
  C.window.value = String(windowTokens());
  C.windowValue.textContent = fmt(windowTokens());
  const where = local ? `IndexedDB database "${DB_NAME}"` : `Worker API, namespace "${ui.namespace.value}"`;
  await runChat(async (live) => {
    const session = await refreshChat(live);
    chatStatus(live, `Chat "${sessionId()}" on ${where}${session ? `: ${session.messages.length} verbatim turns` : ": no turns yet"}.`);
  });
}

/** `onSessionsChanged` runs after each chat write (the page refreshes its session list). */
export function wireChat({ onSessionsChanged } = {}) {
  if (onSessionsChanged) chat.onSessionsChanged = onSessionsChanged;
  // An empty box only shows a placeholder: the buttons wait for something typed.
  chat.openReady = needsInput(C.open, () =>
    C.sessionId.value === "" ? "Name a chat to open, or start a new chat." : null,
  );
  chat.sendReady = needsInput(C.send, () =>
    C.content.value === "" ? "Type a turn to send, or simulate one." : null,
  );
  C.sessionForm.addEventListener("submit", (e) => {
    e.preventDefault();
    if (!chat.openReady()) return;
    runChat((live) => openSession(live, C.sessionId.value));
  });
  C.newChat.addEventListener("click", () => runChat((live) => openSession(live, freshSessionId())));
  C.window.addEventListener("input", () => {
    C.windowValue.textContent = fmt(C.window.valueAsNumber);
  });
  C.window.addEventListener("change", () => runChat(changeWindow));
  C.form.addEventListener("submit", (e) => {
    e.preventDefault();
    if (!chat.sendReady()) return;
    runChat(send);
  });
  C.content.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) C.form.requestSubmit();
  });
  C.simulate.addEventListener("click", () => runChat(simulate));
  C.promptBox.addEventListener("toggle", () => {
    if (C.promptBox.open) runChat(loadPrompt);
  });
}
