// The Context-budget panel. It runs entirely in this page with the package's
// buildContext (no Worker): the slots typed here are packed into a model's
// window by priority, and the result is drawn as a stacked bar. Every number
// typed is passed on as typed, so the Rust side judges it and answers with a
// typed error. User content is only ever written with textContent.
import { buildContext, model } from "edgemem";
import { $, showStatus, showError, badge } from "./page.js";

const DEBOUNCE_MS = 150;

const B = {
  panel: $("budget"),
  status: $("budget-status"),
  form: $("budget-form"),
  model: $("budget-model"),
  window: $("budget-window"),
  reserve: $("budget-reserve"),
  truncate: $("budget-truncate"),
  modelInfo: $("budget-model-info"),
  slots: $("budget-slots"),
  slotCount: $("budget-slot-count"),
  addSlot: $("budget-add-slot"),
  tools: $("budget-tools"),
  result: $("budget-result"),
  bar: $("budget-bar"),
  legend: $("budget-legend"),
  used: $("budget-used"),
  left: $("budget-left"),
  reserved: $("budget-reserved"),
  toolsTokens: $("budget-tools-tokens"),
  windowTotal: $("budget-window-total"),
  percent: $("budget-percent"),
  encoding: $("budget-encoding"),
  context: $("budget-context"),
};

const MEMORIES = [
  "- The user is planning a two-week trip to Japan in April and prefers trains over domestic flights.",
  "- They are vegetarian and asked twice for restaurants near Kyoto station that serve shojin ryori.",
  "- Budget: roughly 250,000 JPY excluding flights; they already hold a 14-day JR Pass voucher.",
  "- Last month they asked how to carry a laptop and camera gear within carry-on limits on ANA.",
  "- They like quiet ryokan with private onsen and dislike hostels; one night in Hakone is booked.",
  "- Their partner does not eat fish; both want to see the Fushimi Inari shrine at sunrise.",
  "- They mentioned a mild fear of heights, so they skipped the Tokyo Skytree observation deck.",
  "- Earlier they compared the Nozomi and Hikari shinkansen and asked which one the JR Pass covers.",
];

const HISTORY = [
  "user: Can you help me plan the Osaka part of the trip? We arrive on the 14th in the evening.",
  "assistant: Sure. Since you arrive in the evening, I'd suggest staying near Namba so dinner is a short walk away; Dotonbori has several vegetarian-friendly places.",
  "user: Is it worth doing Nara as a day trip from Osaka, or should we stay overnight there?",
  "assistant: A day trip works well: the Kintetsu line from Namba takes about 40 minutes. Go early to see Todai-ji before the tour groups arrive, then walk through Nara Park.",
  "user: What about Himeji? We only have one free day left in that week.",
  "assistant: Himeji Castle is about an hour by shinkansen from Shin-Osaka and is covered by your JR Pass. You could combine it with Kokoen garden next door and be back in Osaka for dinner.",
  "user: Great. Could you also remind me which days the museums are closed?",
  "assistant: Most museums in Osaka close on Mondays; when Monday is a public holiday they close on Tuesday instead. I'll flag any closures when we fix the itinerary.",
];

const DEFAULT_SLOTS = [
  {
    name: "system prompt",
    priority: 10,
    content: "You are a careful travel assistant. Answer concisely, cite prices in JPY, and never invent opening hours.",
  },
  {
    name: "user profile",
    priority: 8,
    content: "Name: Sam. Home airport: SFO. Diet: vegetarian. Travels with a partner. Prefers trains, quiet hotels and early starts.",
  },
  { name: "retrieved memories", priority: 7, content: MEMORIES.join("\n") },
  { name: "conversation history", priority: 5, content: HISTORY.join("\n") },
  { name: "scratchpad", priority: 2, content: "Open questions: Hakone day pass? Luggage forwarding from Tokyo to Kyoto (takkyubin)." },
];

// Per-slot colours in the bar and the legend, by position.
const PALETTE = ["#2f5fd0", "#1f7a45", "#b5651d", "#7a3fa0", "#0f7d8c", "#a8324a", "#5b6b12", "#8a5a00"];

const budgetState = {
  timer: 0,
  ticket: 0, // bumped per computation, so only the newest renders
  loaded: new Set(), // encodings whose rank asset this page has loaded
  nextSlot: 1,
};

// ---------------------------------------------------------------------------
// Slots editor

function slotRow({ name, priority, content }) {
  const li = document.createElement("li");
  li.className = "budget-slot";
  li.dataset.testid = "budget-slot";

  const head = document.createElement("div");
  head.className = "budget-slot-head";
  const swatch = document.createElement("span");
  swatch.className = "swatch";
  const nameInput = document.createElement("input");
  nameInput.type = "text";
  nameInput.className = "slot-name";
  nameInput.dataset.testid = "budget-slot-name";
  nameInput.value = name;
  nameInput.autocomplete = "off";
  nameInput.spellcheck = false;
  nameInput.setAttribute("aria-label", "Slot name");
  const prioLabel = document.createElement("label");
  prioLabel.className = "slot-priority-label";
  prioLabel.append("priority ");
  const prio = document.createElement("input");
  prio.type = "number";
  prio.className = "slot-priority";
  prio.dataset.testid = "budget-slot-priority";
  prio.min = "0";
  prio.max = "10";
  prio.step = "1";
  prio.value = String(priority);
  prioLabel.append(prio);
  const remove = document.createElement("button");
  remove.type = "button";
  remove.className = "link-button slot-remove";
  remove.dataset.testid = "budget-slot-remove";
  remove.textContent = "remove";
  head.append(swatch, nameInput, prioLabel, remove);

  const text = document.createElement("textarea");
  text.className = "slot-content";
  text.dataset.testid = "budget-slot-content";
  text.rows = 3;
  text.value = content;
  text.setAttribute("aria-label", "Slot content");

  li.append(head, text);
  return li;
}

function renumberSlots() {
  const rows = [...B.slots.querySelectorAll("li.budget-slot")];
  rows.forEach((li, i) => {
    li.dataset.index = String(i);
    li.querySelector(".swatch").style.background = PALETTE[i % PALETTE.length];
  });
  B.slotCount.textContent = `(${rows.length})`;
}

function readSlots() {
  return [...B.slots.querySelectorAll("li.budget-slot")].map((li) => {
    const prio = li.querySelector(".slot-priority");
    return {
      name: li.querySelector(".slot-name").value,
      content: li.querySelector(".slot-content").value,
      // Anything typed is passed on; empty is sent as null and refused by the Rust side.
      priority: prio.value === "" ? null : prio.valueAsNumber,
    };
  });
}

// ---------------------------------------------------------------------------
// Request and result

function numberOrUndefined(input) {
  return input.value === "" ? undefined : input.valueAsNumber;
}

/** The request as typed; throws a SyntaxError for tools that are not JSON. */
function readRequest() {
  const request = { slots: readSlots() };
  const custom = numberOrUndefined(B.window);
  // A custom window replaces the model: counting falls back to the estimator.
  if (custom === undefined) request.model = B.model.value;
  else request.max_tokens = custom;
  const reserve = numberOrUndefined(B.reserve);
  if (reserve !== undefined) request.reserve_for_output = reserve;
  const truncate = numberOrUndefined(B.truncate);
  if (truncate !== undefined) request.truncate_at_priority = truncate;
  if (B.tools.value.trim() !== "") request.tools = JSON.parse(B.tools.value);
  return request;
}

function renderModelInfo() {
  if (B.window.value !== "") {
    B.modelInfo.textContent = "custom window: counted with the estimator";
    return;
  }
  const info = model(B.model.value);
  B.modelInfo.textContent = info
    ? `${fmt(info.context_window_tokens)} tokens, ${info.encoding ?? "estimated"}`
    : "unknown model";
}

function fmt(n) {
  return Number(n).toLocaleString("en-US");
}

function segment(kind, tokens, window, { color, label }) {
  const seg = document.createElement("div");
  seg.className = `seg seg-${kind}`;
  seg.dataset.kind = kind;
  seg.dataset.tokens = String(tokens);
  seg.style.width = `${(100 * tokens) / window}%`;
  if (color) seg.style.background = color;
  seg.title = `${label}: ${fmt(tokens)} tokens`;
  return seg;
}

function statusKind(status) {
  if (status === "kept") return "ok";
  if (status === "truncated") return "warn";
  return "muted";
}

function legendItem({ label, status, tokens, color, kind, index }) {
  const li = document.createElement("li");
  li.className = "legend-item";
  li.dataset.testid = "budget-legend-item";
  li.dataset.kind = kind;
  if (index !== undefined) li.dataset.index = String(index);
  if (status) li.dataset.status = status;
  const swatch = document.createElement("span");
  swatch.className = `swatch swatch-${kind}`;
  if (color) swatch.style.background = color;
  const name = document.createElement("span");
  name.className = "legend-name";
  name.textContent = label;
  const tok = document.createElement("span");
  tok.className = "legend-tokens";
  tok.dataset.field = "tokens";
  tok.textContent = status === "dropped" ? "—" : fmt(tokens);
  li.append(swatch, name);
  if (status) {
    const b = badge(status, statusKind(status));
    b.dataset.field = "status";
    li.append(b);
  }
  li.append(tok);
  return li;
}

function renderResult(r) {
  B.result.hidden = false;
  B.result.classList.remove("stale");
  B.result.dataset.window = String(r.window);
  B.result.dataset.encoding = r.encoding;

  const segments = [];
  const legend = [];
  r.slots.forEach((s, i) => {
    const color = PALETTE[i % PALETTE.length];
    if (s.status !== "dropped" && s.tokens > 0) {
      segments.push(segment("slot", s.tokens, r.window, { color, label: `${s.name} (${s.status})` }));
    }
    legend.push(legendItem({ label: s.name, status: s.status, tokens: s.tokens, color, kind: "slot", index: i }));
  });
  if (r.tools > 0) {
    segments.push(segment("tools", r.tools, r.window, { label: "tools" }));
    legend.push(legendItem({ label: "tools", tokens: r.tools, kind: "tools" }));
  }
  // Anything used that no slot or tool accounts for (none today; kept honest).
  const other = r.used - r.tools - r.slots.reduce((sum, s) => sum + s.tokens, 0);
  if (other > 0) segments.push(segment("other", other, r.window, { label: "overhead" }));
  if (r.reserve_for_output > 0) {
    segments.push(segment("reserve", r.reserve_for_output, r.window, { label: "reserved for output" }));
    legend.push(legendItem({ label: "reserved for output", tokens: r.reserve_for_output, kind: "reserve" }));
  }
  if (r.left > 0) segments.push(segment("free", r.left, r.window, { label: "free" }));
  legend.push(legendItem({ label: "free", tokens: r.left, kind: "free" }));
  B.bar.replaceChildren(...segments);
  B.bar.setAttribute("aria-label", `Context window: ${r.percent_used}% used of ${fmt(r.window)} tokens`);
  B.legend.replaceChildren(...legend);

  B.used.textContent = fmt(r.used);
  B.left.textContent = fmt(r.left);
  B.reserved.textContent = fmt(r.reserve_for_output);
  B.toolsTokens.textContent = fmt(r.tools);
  B.windowTotal.textContent = fmt(r.window);
  B.percent.textContent = `${r.percent_used}%`;
  B.encoding.textContent = r.encoding;
  B.context.textContent = r.context;
}

/** The encoding whose rank asset this request will load, if not loaded yet. */
function pendingAsset(request) {
  if (request.model === undefined) return null;
  const enc = model(request.model)?.encoding ?? null;
  return enc && !budgetState.loaded.has(enc) ? enc : null;
}

async function recompute() {
  const ticket = ++budgetState.ticket;
  const live = () => ticket === budgetState.ticket;
  B.panel.setAttribute("aria-busy", "true");
  try {
    renderModelInfo();
    const request = readRequest();
    const loading = pendingAsset(request);
    if (loading) showStatus(`Loading tokenizer ${loading} (about 1 MB, first use only)…`, "info", B.status);
    const r = await buildContext(request);
    if (loading) budgetState.loaded.add(loading);
    if (!live()) return;
    renderResult(r);
    const count = (status) => r.slots.filter((s) => s.status === status).length;
    showStatus(
      `${fmt(r.used)} of ${fmt(r.window)} tokens used (${r.encoding}): ` +
        `${count("kept")} kept, ${count("truncated")} truncated, ${count("dropped")} dropped.`,
      "ok",
      B.status,
    );
  } catch (err) {
    if (!live()) return;
    showError(err, B.status);
    // Keep the last good result on screen, marked as out of date.
    B.result.classList.add("stale");
  } finally {
    if (live() && budgetState.timer === 0) B.panel.removeAttribute("aria-busy");
  }
}

function schedule() {
  clearTimeout(budgetState.timer);
  // Busy from the first keystroke, so a waiting reader never sees an old answer as current.
  B.panel.setAttribute("aria-busy", "true");
  budgetState.timer = setTimeout(() => {
    budgetState.timer = 0;
    recompute();
  }, DEBOUNCE_MS);
}

// ---------------------------------------------------------------------------
// Wiring

function addSlot(slot) {
  B.slots.append(slotRow(slot));
  renumberSlots();
}

/** Fills the panel with the demo slots and computes the first result. */
export function wireBudget() {
  for (const slot of DEFAULT_SLOTS) addSlot(slot);
  B.form.addEventListener("submit", (e) => e.preventDefault());
  B.form.addEventListener("input", schedule);
  B.form.addEventListener("change", schedule);
  B.addSlot.addEventListener("click", () => {
    addSlot({ name: `slot ${budgetState.nextSlot++}`, priority: 5, content: "" });
    B.slots.lastElementChild.querySelector(".slot-content").focus();
    schedule();
  });
  B.slots.addEventListener("click", (e) => {
    const remove = e.target.closest(".slot-remove");
    if (!remove) return;
    remove.closest("li.budget-slot").remove();
    renumberSlots();
    schedule();
  });
  return recompute();
}
