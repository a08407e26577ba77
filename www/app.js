// The edgemem demo page. All memory logic lives in the package (IndexedDB
// backend) or in the Worker (HTTP backend); this file only moves values
// between the two backends and the DOM. User content is only ever written
// with textContent.
import { Memory, IndexedDBStore, EdgememError, version } from "edgemem";

const DB_NAME = "edgemem-demo";
const LIST_LIMIT = 100; // the HTTP API's largest page
const KEY_NAMESPACE = "edgemem-demo:namespace";
const KEY_TOKEN = "edgemem-demo:token";
// The ledger has no "list accounts" call: the page remembers the ids it knows.
const DEMO_ASSET = { code: "USDC", scale: 6 };
const DEMO_ACCOUNTS = [
  { id: "bank", asset: "USDC" },
  { id: "agent", asset: "USDC", flags: ["debits_must_not_exceed_credits"], max_transfer: "50" },
  { id: "casino", asset: "USDC" },
];
const ACCOUNT_FIELDS = ["balance", "debits_posted", "credits_posted", "debits_pending", "credits_pending"];

const $ = (id) => document.getElementById(id);
const ui = {
  backendLocal: $("backend-local"),
  backendWorker: $("backend-worker"),
  namespace: $("namespace"),
  token: $("api-token"),
  status: $("status"),
  createForm: $("create-form"),
  sessionIdInput: $("session-id-input"),
  ttlInput: $("ttl-input"),
  refresh: $("refresh-sessions"),
  sessionCount: $("session-count"),
  sessionList: $("session-list"),
  noSession: $("no-session"),
  detail: $("session-detail"),
  title: $("session-title"),
  deleteButton: $("delete-session"),
  meta: {
    namespace: $("meta-namespace"),
    createdAt: $("meta-created-at"),
    updatedAt: $("meta-updated-at"),
    ttlSeconds: $("meta-ttl-seconds"),
    expiresAt: $("meta-expires-at"),
    tokens: $("meta-tokens"),
    context: $("meta-context"),
    data: $("meta-data"),
  },
  messageCount: $("message-count"),
  messages: $("messages"),
  messageForm: $("message-form"),
  messageRole: $("message-role"),
  messageContent: $("message-content"),
  pkgVersion: $("pkg-version"),
  storeStats: $("store-stats"),
  workerInfo: $("worker-info"),
  workerVersion: $("worker-version"),
  ledger: {
    panel: $("ledger"),
    backend: $("ledger-backend"),
    status: $("ledger-status"),
    setup: $("ledger-setup"),
    refresh: $("ledger-refresh"),
    reconcile: $("ledger-reconcile"),
    accountCount: $("ledger-account-count"),
    accountRows: $("ledger-account-rows"),
    accountForm: $("account-form"),
    accountId: $("account-id-input"),
    accountAsset: $("account-asset-input"),
    accountFlags: $("account-flags-input"),
    accountMax: $("account-max-input"),
    transferForm: $("transfer-form"),
    transferId: $("transfer-id"),
    newId: $("transfer-new-id"),
    debit: $("transfer-debit"),
    credit: $("transfer-credit"),
    amount: $("transfer-amount"),
    pending: $("transfer-pending"),
    timeout: $("transfer-timeout"),
    results: $("ledger-results"),
    resultCount: $("ledger-result-count"),
    clearResults: $("ledger-clear-results"),
    holds: $("ledger-holds"),
    holdCount: $("ledger-hold-count"),
    reconcileEmpty: $("reconcile-empty"),
    reconcileResult: $("reconcile-result"),
    reconcileOk: $("reconcile-ok"),
    reconcileTransfers: $("reconcile-transfers"),
    reconcileEntries: $("reconcile-entries"),
    reconcileHead: $("reconcile-head"),
    reconcileDifferences: $("reconcile-differences"),
  },
};

// ---------------------------------------------------------------------------
// Backends. Both expose the same five session calls and return the same
// session JSON, and a `ledger` with the package's Ledger calls and JSON.

/** The package itself, over IndexedDB in this page. */
function localBackend(memory) {
  return {
    kind: "local",
    selectionKey: "edgemem-demo:selected:local",
    list: () => memory.listSessions({ offset: 0, limit: LIST_LIMIT }),
    get: (id) => memory.getSession(id),
    create: (id, init) => memory.getOrCreateSession(id, init),
    append: (id, messages) => memory.appendMessages(id, messages),
    remove: (id) => memory.deleteSession(id),
    ledgerKey: "edgemem-demo:ledger:local",
    ledger: memory.ledger,
  };
}

/** The edgemem Worker's AMS-compatible HTTP API on this origin. */
function workerBackend(namespace, token) {
  const query = `?namespace=${encodeURIComponent(namespace)}`;

  // An empty id or a dot segment cannot name a session in a URL path: the URL
  // parser would turn it into the list route. Refuse it the way the Rust side
  // refuses invalid ids, instead of sending a request that means something else.
  function sessionPath(id) {
    if (id === "" || id === "." || id === "..") {
      throw new EdgememError("invalid_input", `invalid session_id: ${JSON.stringify(id)} cannot appear in a URL path`);
    }
    return `/v1/working-memory/${encodeURIComponent(id)}`;
  }

  async function request(method, path, body, extraQuery = "") {
    const headers = { accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (token) headers.authorization = `Bearer ${token}`;
    const res = await fetch(path + query + extraQuery, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let json;
    try {
      json = JSON.parse(text);
    } catch {
      throw new Error(`${method} ${path}: HTTP ${res.status}, response is not JSON (is the Worker serving this page?)`);
    }
    if (!res.ok) {
      // The API's typed error body: {"detail", "code"}.
      if (json && typeof json.code === "string") throw new EdgememError(json.code, String(json.detail ?? ""));
      throw new Error(`${method} ${path}: HTTP ${res.status}`);
    }
    return json;
  }

  // Ledger ids go into URL paths too; refuse what the package's Ledger refuses
  // (and what the URL parser would rewrite) instead of calling another route.
  function ledgerSegment(id, field = "id") {
    if (typeof id !== "string" || id === "" || id === "." || id === ".." || id.includes("/")) {
      throw new EdgememError("invalid_input", `invalid ${field}: ${JSON.stringify(id)} must be a non-empty string without '/'`);
    }
    return encodeURIComponent(id);
  }

  async function nullIfMissing(call) {
    try {
      return await call();
    } catch (err) {
      if (err instanceof EdgememError && err.code === "not_found") return null;
      throw err;
    }
  }

  /** The same calls and JSON as the package's `memory.ledger`, over `/v1/ledger`. */
  const ledger = {
    createAsset: (code, scale) => request("POST", "/v1/ledger/assets", { code, scale }),
    createAccount: (account) => request("POST", "/v1/ledger/accounts", account),
    account: (id) => nullIfMissing(() => request("GET", `/v1/ledger/accounts/${ledgerSegment(id)}`)),
    transfer: (id) => nullIfMissing(() => request("GET", `/v1/ledger/transfers/${ledgerSegment(id)}`)),
    createTransfers: async (transfers) => (await request("POST", "/v1/ledger/transfers", { transfers })).results,
    post: (id, { amount } = {}) =>
      request("POST", `/v1/ledger/transfers/${ledgerSegment(id)}/post`, amount === undefined ? {} : { amount }),
    void: (id) => request("POST", `/v1/ledger/transfers/${ledgerSegment(id)}/void`, {}),
    reconcile: () => request("POST", "/v1/ledger/reconcile", {}),
  };

  async function get(id) {
    try {
      return await request("GET", sessionPath(id));
    } catch (err) {
      if (err instanceof EdgememError && err.code === "not_found") return null;
      throw err;
    }
  }

  return {
    kind: "worker",
    selectionKey: `edgemem-demo:selected:worker:${namespace}`,
    list: () => request("GET", `/v1/working-memory/`, undefined, `&limit=${LIST_LIMIT}`),
    get,
    // The API's PUT replaces a session; only create one that is not there yet,
    // as the package's getOrCreateSession does.
    async create(id, init) {
      const existing = await get(id);
      if (existing) return { created: false, session: existing };
      return { created: true, session: await request("PUT", sessionPath(id), init) };
    },
    append: (id, messages) => request("POST", `${sessionPath(id)}/messages`, { messages }),
    async remove(id) {
      await request("DELETE", sessionPath(id));
      return true;
    },
    health: () => request("GET", "/v1/health"),
    ledgerKey: `edgemem-demo:ledger:worker:${namespace}`,
    ledger,
  };
}

// ---------------------------------------------------------------------------
// State

const state = {
  memory: null, // the IndexedDB-backed Memory; null if it failed to open
  backend: null,
  selectedId: null,
  // Bumped on every backend switch, so answers for an old backend are dropped.
  generation: 0,
  ledger: {
    extraAccounts: [], // account ids opened in this page, beyond the demo's
    holdIds: [], // pending transfers created from this page, oldest first
    shown: new Map(), // account id -> the account as last rendered
    outcomes: new Map(), // hold id -> {ok, text, code} of its last Post/Void
    resultSeq: 0,
    busy: 0, // ledger actions under way
    ticket: 0, // bumped per ledger read, so only the newest read renders
  },
};

// ---------------------------------------------------------------------------
// Rendering

function showStatus(text, kind = "info", el = ui.status) {
  el.textContent = text;
  el.className = `status status-${kind}`;
  delete el.dataset.code;
}

function errorCode(err) {
  return err instanceof EdgememError ? err.code : err?.name ?? "error";
}

function showError(err, el = ui.status) {
  const code = errorCode(err);
  el.textContent = `${code}: ${err?.message ?? String(err)}`;
  el.className = "status status-error";
  el.dataset.code = code;
  console.warn("edgemem demo:", err); // a warning: the page handled it
}

function formatTime(rfc3339) {
  const d = new Date(rfc3339);
  return Number.isNaN(d.getTime()) ? rfc3339 : d.toLocaleString();
}

function timeElement(rfc3339) {
  const t = document.createElement("time");
  t.dateTime = rfc3339;
  t.title = rfc3339;
  t.textContent = formatTime(rfc3339);
  return t;
}

function setText(el, value) {
  el.replaceChildren();
  el.classList.toggle("muted", value === null || value === undefined || value === "");
  el.textContent = value === null || value === undefined || value === "" ? "—" : String(value);
}

function setTime(el, value) {
  if (value) {
    el.classList.remove("muted");
    el.replaceChildren(timeElement(value));
  } else {
    setText(el, null);
  }
}

function renderSessionList({ sessions, total }) {
  ui.sessionCount.textContent = sessions.length < total ? `(${sessions.length} of ${total})` : `(${total})`;
  const items = sessions.map((id) => {
    const li = document.createElement("li");
    const button = document.createElement("button");
    button.type = "button";
    button.className = "session-item";
    button.dataset.sessionId = id;
    button.dataset.testid = "session-item";
    button.textContent = id;
    if (id === state.selectedId) {
      button.classList.add("selected");
      button.setAttribute("aria-current", "true");
    }
    li.append(button);
    return li;
  });
  if (items.length === 0) {
    const li = document.createElement("li");
    li.className = "muted empty";
    li.textContent = "No sessions yet.";
    items.push(li);
  }
  ui.sessionList.replaceChildren(...items);
}

function markSelected() {
  for (const b of ui.sessionList.querySelectorAll(".session-item")) {
    const on = b.dataset.sessionId === state.selectedId;
    b.classList.toggle("selected", on);
    if (on) b.setAttribute("aria-current", "true");
    else b.removeAttribute("aria-current");
  }
}

function renderMessage(m) {
  const li = document.createElement("li");
  li.className = "message";
  li.dataset.role = m.role;
  li.dataset.messageId = m.id;
  li.dataset.testid = "message";
  const head = document.createElement("div");
  head.className = "message-head";
  const role = document.createElement("span");
  role.className = "role";
  role.textContent = m.role;
  head.append(role, timeElement(m.created_at));
  const content = document.createElement("p");
  content.className = "content";
  content.textContent = m.content;
  li.append(head, content);
  return li;
}

function renderSession(session) {
  if (!session) {
    ui.detail.hidden = true;
    ui.noSession.hidden = false;
    return;
  }
  ui.noSession.hidden = true;
  ui.detail.hidden = false;
  ui.title.textContent = session.session_id;
  setText(ui.meta.namespace, session.namespace);
  setTime(ui.meta.createdAt, session.created_at);
  setTime(ui.meta.updatedAt, session.updated_at);
  setText(ui.meta.ttlSeconds, session.ttl_seconds ?? "none (durable)");
  setTime(ui.meta.expiresAt, session.expires_at);
  setText(ui.meta.tokens, session.tokens);
  setText(ui.meta.context, session.context);
  ui.meta.data.textContent = JSON.stringify(session.data ?? {}, null, 2);
  ui.messageCount.textContent = `(${session.messages.length})`;
  ui.messages.replaceChildren(...session.messages.map(renderMessage));
  if (session.messages.length === 0) {
    const li = document.createElement("li");
    li.className = "muted empty";
    li.textContent = "No messages yet.";
    ui.messages.append(li);
  }
  ui.messages.lastElementChild?.scrollIntoView({ block: "nearest" });
}

async function renderStats() {
  if (!state.memory) return;
  const s = await state.memory.stats();
  ui.storeStats.textContent =
    `seq ${s.last_seq}, ${s.log_records_since_snapshot} log records since snapshot ` +
    `gen ${s.snapshot_gen} (${s.snapshot_bytes} bytes)`;
}

// ---------------------------------------------------------------------------
// Actions

function remember(id) {
  state.selectedId = id;
  if (id === null) localStorage.removeItem(state.backend.selectionKey);
  else localStorage.setItem(state.backend.selectionKey, id);
  markSelected();
}

async function refreshList() {
  const gen = state.generation;
  const page = await state.backend.list();
  if (gen === state.generation) renderSessionList(page);
}

/** Selects a session and shows it; a vanished session clears the selection. */
async function select(id) {
  const gen = state.generation;
  const session = await state.backend.get(id);
  if (gen !== state.generation) return null;
  remember(session ? id : null);
  renderSession(session);
  return session;
}

async function afterWrite() {
  await refreshList();
  if (state.backend.kind === "local") await renderStats();
}

/** Runs a UI action, reporting any failure in the status area. */
async function run(action) {
  try {
    await action();
  } catch (err) {
    showError(err);
  }
}

/**
 * Runs a ledger action, reporting any failure in the ledger's status area.
 * The action gets `live()`, false once the backend has been switched: an
 * answer for the old backend must not land in the new one's panel. The panel
 * is aria-busy while any ledger action runs.
 */
async function runLedger(action) {
  const gen = state.generation;
  const live = () => gen === state.generation;
  state.ledger.busy++;
  ui.ledger.panel.setAttribute("aria-busy", "true");
  try {
    await action(live);
  } catch (err) {
    if (live()) showError(err, ui.ledger.status);
  } finally {
    if (--state.ledger.busy === 0) ui.ledger.panel.removeAttribute("aria-busy");
  }
}

async function switchBackend() {
  const gen = ++state.generation;
  const worker = ui.backendWorker.checked;
  document.body.classList.toggle("mode-worker", worker);
  ui.namespace.disabled = !worker;
  ui.token.disabled = !worker;
  state.selectedId = null;
  showStatus("Loading…");
  renderSession(null);
  ui.sessionList.replaceChildren();
  ui.sessionCount.textContent = "";
  resetLedger();

  if (worker) {
    state.backend = workerBackend(ui.namespace.value, ui.token.value);
    ui.workerInfo.hidden = false;
    ui.workerVersion.textContent = "…";
    const health = await state.backend.health();
    if (gen !== state.generation) return;
    ui.workerVersion.textContent = `${health.version}`;
  } else {
    if (!state.memory) throw new Error("IndexedDB memory is not open (see the error above)");
    state.backend = localBackend(state.memory);
    ui.workerInfo.hidden = true;
  }
  await refreshList();
  const last = localStorage.getItem(state.backend.selectionKey);
  if (last !== null && gen === state.generation) await select(last);
  if (gen === state.generation) await openLedger();
  if (gen === state.generation) {
    showStatus(worker ? `Worker API, namespace "${ui.namespace.value}".` : `IndexedDB database "${DB_NAME}".`);
  }
}

function ttlValue() {
  // Anything typed is passed on, so the Rust side judges it; empty means durable.
  return ui.ttlInput.value === "" ? undefined : ui.ttlInput.valueAsNumber;
}

function wireEvents() {
  // Enter in the namespace or token field commits it through "change"; never navigate.
  $("backend-form").addEventListener("submit", (e) => e.preventDefault());
  for (const radio of [ui.backendLocal, ui.backendWorker]) {
    radio.addEventListener("change", () => run(switchBackend));
  }
  ui.namespace.addEventListener("change", () => {
    localStorage.setItem(KEY_NAMESPACE, ui.namespace.value);
    run(switchBackend);
  });
  ui.token.addEventListener("change", () => {
    sessionStorage.setItem(KEY_TOKEN, ui.token.value);
    run(switchBackend);
  });

  ui.createForm.addEventListener("submit", (e) => {
    e.preventDefault();
    run(async () => {
      const id = ui.sessionIdInput.value;
      const ttl = ttlValue();
      const { created, session } = await state.backend.create(id, ttl === undefined ? {} : { ttl_seconds: ttl });
      remember(session.session_id);
      renderSession(session);
      await afterWrite();
      ui.sessionIdInput.value = "";
      showStatus(created ? `Created session "${id}".` : `Session "${id}" already exists; opened it.`, "ok");
    });
  });

  ui.refresh.addEventListener("click", () =>
    run(async () => {
      await refreshList();
      if (state.selectedId !== null) await select(state.selectedId);
      if (state.backend.kind === "local") await renderStats();
      showStatus("Refreshed.");
    }),
  );

  ui.sessionList.addEventListener("click", (e) => {
    const button = e.target.closest(".session-item");
    if (!button) return;
    const id = button.dataset.sessionId;
    run(async () => {
      const session = await select(id);
      if (session) showStatus(`Selected "${id}".`);
      else {
        await refreshList();
        showStatus(`Session "${id}" is gone (deleted or expired).`);
      }
    });
  });

  ui.messageForm.addEventListener("submit", (e) => {
    e.preventDefault();
    const id = state.selectedId;
    if (id === null) return;
    run(async () => {
      const session = await state.backend.append(id, [
        { role: ui.messageRole.value, content: ui.messageContent.value },
      ]);
      if (state.selectedId === id) renderSession(session);
      await afterWrite();
      ui.messageContent.value = "";
      showStatus(`Added a ${ui.messageRole.value} message to "${id}".`, "ok");
    });
  });
  ui.messageContent.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) ui.messageForm.requestSubmit();
  });

  wireLedgerEvents();

  ui.deleteButton.addEventListener("click", () => {
    const id = state.selectedId;
    if (id === null) return;
    run(async () => {
      await state.backend.remove(id);
      remember(null);
      renderSession(null);
      await afterWrite();
      showStatus(`Deleted session "${id}".`, "ok");
    });
  });
}

// ---------------------------------------------------------------------------
// Ledger. Amounts stay the decimal strings typed and shown: the page never
// turns one into a JS number.

function ledgerApi() {
  return state.backend.ledger;
}

function freshTransferId() {
  const bytes = crypto.getRandomValues(new Uint8Array(4));
  return `t-${Date.now().toString(36)}-${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

function loadLedgerIds() {
  try {
    const saved = JSON.parse(localStorage.getItem(state.backend.ledgerKey) ?? "{}");
    const strings = (v) => (Array.isArray(v) ? v.filter((x) => typeof x === "string") : []);
    state.ledger.extraAccounts = strings(saved.accounts);
    state.ledger.holdIds = strings(saved.holds);
  } catch {
    state.ledger.extraAccounts = [];
    state.ledger.holdIds = [];
  }
}

function saveLedgerIds() {
  localStorage.setItem(
    state.backend.ledgerKey,
    JSON.stringify({ accounts: state.ledger.extraAccounts, holds: state.ledger.holdIds }),
  );
}

function knownAccountIds() {
  const ids = DEMO_ACCOUNTS.map((a) => a.id);
  for (const id of state.ledger.extraAccounts) if (!ids.includes(id)) ids.push(id);
  return ids;
}

function rememberAccount(id) {
  if (knownAccountIds().includes(id)) return;
  state.ledger.extraAccounts.push(id);
  saveLedgerIds();
}

function rememberHold(id) {
  if (state.ledger.holdIds.includes(id)) return;
  state.ledger.holdIds.push(id);
  saveLedgerIds();
}

function cell(text, { field, className } = {}) {
  const td = document.createElement("td");
  if (field) td.dataset.field = field;
  if (className) td.className = className;
  td.textContent = text;
  return td;
}

function renderAccounts(accounts) {
  const L = ui.ledger;
  const previous = state.ledger.shown;
  L.accountCount.textContent = `(${accounts.length})`;
  const rows = accounts.map((a) => {
    const tr = document.createElement("tr");
    tr.dataset.accountId = a.id;
    tr.dataset.testid = "account-row";
    const before = previous.get(a.id);
    tr.append(cell(a.id, { field: "id", className: "mono" }), cell(a.asset, { field: "asset" }));
    for (const f of ACCOUNT_FIELDS) {
      const td = cell(a[f], { field: f, className: "num" });
      if (f === "balance") td.classList.add("balance");
      if (a[f].startsWith("-")) td.classList.add("negative");
      // A value that moved since the last render flashes once.
      if (before && before[f] !== a[f]) td.classList.add("changed");
      tr.append(td);
    }
    const flags = cell("", { field: "flags", className: "flags" });
    if (a.flags.length === 0) {
      flags.textContent = "—";
      flags.classList.add("muted");
    } else {
      for (const flag of a.flags) {
        const tag = document.createElement("span");
        tag.className = "tag";
        tag.textContent = flag;
        flags.append(tag);
      }
    }
    tr.append(flags, cell(a.max_transfer ?? "—", { field: "max_transfer", className: a.max_transfer === null ? "num muted" : "num" }));
    return tr;
  });
  if (rows.length === 0) {
    const tr = document.createElement("tr");
    const td = cell("No accounts yet. Press “Set up demo” to open bank, agent and casino.", { className: "muted empty" });
    td.colSpan = 9;
    tr.append(td);
    rows.push(tr);
  }
  L.accountRows.replaceChildren(...rows);
  state.ledger.shown = new Map(accounts.map((a) => [a.id, a]));
  renderAccountOptions(accounts.map((a) => a.id));
}

function renderAccountOptions(ids) {
  const L = ui.ledger;
  const fill = (select, fallback) => {
    const keep = select.value;
    select.replaceChildren(
      ...ids.map((id) => {
        const o = document.createElement("option");
        o.value = id;
        o.textContent = id;
        return o;
      }),
    );
    if (ids.includes(keep)) select.value = keep;
    else if (ids.length > 0) select.value = ids[Math.min(fallback, ids.length - 1)];
  };
  fill(L.debit, 0);
  fill(L.credit, 1);
}

function badge(text, kind) {
  const b = document.createElement("span");
  b.className = `badge badge-${kind}`;
  b.textContent = text;
  return b;
}

function resultKind(result) {
  if (result === "created") return "ok";
  if (result === "exists") return "info";
  return "error";
}

const RESULT_NOTES = {
  created: "applied",
  exists: "idempotent retry: already applied, balances unchanged",
};

function transferSummary(t, { markHold = true } = {}) {
  const what = document.createElement("span");
  what.className = "what";
  const id = document.createElement("code");
  id.textContent = t.id;
  what.append(id, ` ${t.debit_account} → ${t.credit_account} ${t.amount}${markHold && t.pending ? " (hold)" : ""}`);
  return what;
}

/** One line per submission, newest first: a per-transfer result or a request error. */
function logResult(transfer, { result, error }) {
  const L = ui.ledger;
  L.results.querySelector(".empty")?.remove();
  const li = document.createElement("li");
  li.className = "result";
  li.dataset.testid = "transfer-result";
  li.dataset.transferId = transfer.id;
  const n = ++state.ledger.resultSeq;
  const seq = document.createElement("span");
  seq.className = "seq muted";
  seq.textContent = `#${n}`;
  const body = document.createElement("div");
  body.className = "body";
  const note = document.createElement("div");
  note.className = "note muted";
  if (error) {
    li.dataset.error = errorCode(error);
    body.append(badge(errorCode(error), "error"), " ", transferSummary(transfer));
    note.textContent = "request refused, nothing applied";
  } else {
    li.dataset.result = result;
    body.append(badge(result, resultKind(result)), " ", transferSummary(transfer));
    note.textContent = RESULT_NOTES[result] ?? "rejected, nothing applied";
  }
  body.append(note);
  li.append(seq, body);
  L.results.prepend(li);
  L.resultCount.textContent = `(${n})`;
}

function clearResults() {
  const li = document.createElement("li");
  li.className = "muted empty";
  li.textContent = "Submitted transfers show their result here.";
  ui.ledger.results.replaceChildren(li);
  ui.ledger.resultCount.textContent = "";
  state.ledger.resultSeq = 0;
}

function renderHolds(transfers) {
  const L = ui.ledger;
  // Keep partial amounts typed into holds that are still listed.
  const typed = new Map();
  for (const input of L.holds.querySelectorAll("input.post-amount")) typed.set(input.dataset.transferId, input.value);
  L.holdCount.textContent = transfers.length ? `(${transfers.length})` : "";
  const items = transfers.map((t) => {
    const li = document.createElement("li");
    li.className = "hold";
    li.dataset.testid = "hold";
    li.dataset.transferId = t.id;
    li.dataset.state = t.state;

    const head = document.createElement("div");
    head.className = "hold-head";
    const stateBadge = badge(t.state, t.state === "pending" ? "warn" : t.state === "pending_posted" ? "ok" : "muted");
    stateBadge.dataset.field = "state";
    head.append(transferSummary(t, { markHold: false }), stateBadge);

    const meta = document.createElement("div");
    meta.className = "hold-meta muted";
    if (t.state === "pending_posted") meta.textContent = `posted ${t.posted_amount} of ${t.amount}`;
    else if (t.state === "pending" && t.expires_at) meta.append("expires ", timeElement(t.expires_at));
    else if (t.state === "pending") meta.textContent = "no timeout";
    else if (t.resolved_at) meta.append(`${t.state.replace("pending_", "")} `, timeElement(t.resolved_at));

    const actions = document.createElement("div");
    actions.className = "hold-actions";
    const amount = document.createElement("input");
    amount.type = "text";
    amount.className = "post-amount";
    amount.dataset.testid = "hold-post-amount";
    amount.dataset.transferId = t.id;
    amount.placeholder = `all ${t.amount}`;
    amount.inputMode = "decimal";
    amount.autocomplete = "off";
    amount.spellcheck = false;
    amount.setAttribute("aria-label", `Amount to post of ${t.id}`);
    amount.value = typed.get(t.id) ?? "";
    const post = document.createElement("button");
    post.type = "button";
    post.className = "hold-post";
    post.dataset.testid = "hold-post";
    post.dataset.action = "post";
    post.textContent = "Post";
    const voidButton = document.createElement("button");
    voidButton.type = "button";
    voidButton.className = "hold-void danger";
    voidButton.dataset.testid = "hold-void";
    voidButton.dataset.action = "void";
    voidButton.textContent = "Void";
    actions.append(amount, post, voidButton);

    li.append(head, meta, actions);
    const outcome = state.ledger.outcomes.get(t.id);
    if (outcome) {
      const p = document.createElement("div");
      p.className = `hold-outcome ${outcome.ok ? "outcome-ok" : "outcome-error"}`;
      p.dataset.testid = "hold-outcome";
      p.dataset.field = "outcome";
      if (outcome.code) p.dataset.code = outcome.code;
      p.textContent = outcome.text;
      li.append(p);
    }
    return li;
  });
  if (items.length === 0) {
    const li = document.createElement("li");
    li.className = "muted empty";
    li.textContent = "No holds yet. Submit a transfer with “Pending hold” ticked.";
    items.push(li);
  }
  L.holds.replaceChildren(...items);
}

function renderReconcile(r) {
  const L = ui.ledger;
  L.reconcileEmpty.hidden = true;
  L.reconcileResult.hidden = false;
  L.reconcileOk.textContent = r.ok ? "ok" : "not ok";
  L.reconcileOk.className = r.ok ? "verdict verdict-ok" : "verdict verdict-error";
  L.reconcileTransfers.textContent = String(r.transfers);
  L.reconcileEntries.textContent = String(r.journal_entries);
  L.reconcileHead.textContent = r.journal_head;
  const diffs = [...r.differences, ...r.statement_differences].map((d) => {
    const li = document.createElement("li");
    li.textContent = `${d.account} ${d.field}: expected ${d.expected}, found ${d.found}`;
    return li;
  });
  if (diffs.length === 0) {
    const li = document.createElement("li");
    li.className = "muted";
    li.textContent = "none";
    diffs.push(li);
  }
  L.reconcileDifferences.replaceChildren(...diffs);
}

function resetLedger() {
  const L = ui.ledger;
  state.ledger.shown = new Map();
  state.ledger.outcomes = new Map();
  ++state.ledger.ticket;
  showStatus("Loading…", "info", L.status);
  L.backend.textContent = "…";
  L.accountRows.replaceChildren();
  L.accountCount.textContent = "";
  renderAccountOptions([]);
  L.holds.replaceChildren();
  L.holdCount.textContent = "";
  clearResults();
  L.reconcileEmpty.hidden = false;
  L.reconcileResult.hidden = true;
}

/** Reads every known account and hold and shows them; a newer read wins. */
async function refreshLedger() {
  const gen = state.generation;
  const ticket = ++state.ledger.ticket;
  const api = ledgerApi();
  // One call at a time: the in-page Memory answers calls in order anyway.
  const accounts = [];
  for (const id of knownAccountIds()) {
    const a = await api.account(id);
    if (a) accounts.push(a);
  }
  const holds = [];
  for (const id of state.ledger.holdIds) {
    const t = await api.transfer(id);
    if (t) holds.push(t);
  }
  if (gen !== state.generation || ticket !== state.ledger.ticket) return;
  renderAccounts(accounts);
  renderHolds(holds);
}

async function afterLedgerWrite() {
  await refreshLedger();
  if (state.backend.kind === "local") await renderStats();
}

/** Called by switchBackend once the backend answers. */
async function openLedger() {
  loadLedgerIds();
  const local = state.backend.kind === "local";
  const where = local ? `IndexedDB database "${DB_NAME}"` : `Worker API, namespace "${ui.namespace.value}"`;
  ui.ledger.backend.textContent = local ? "this page (IndexedDB)" : `the Worker, namespace "${ui.namespace.value}"`;
  await runLedger(async (live) => {
    await refreshLedger();
    ledgerStatus(live, `Ledger on ${where}.`);
  });
}

/** Shows a ledger outcome, unless the backend changed meanwhile. */
function ledgerStatus(live, text, kind = "info", code = undefined) {
  if (!live()) return;
  showStatus(text, kind, ui.ledger.status);
  if (code !== undefined) ui.ledger.status.dataset.code = code;
}

async function setUpDemo(live) {
  const api = ledgerApi();
  // Creating the same asset or account again returns it; a conflicting one throws a typed error.
  await api.createAsset(DEMO_ASSET.code, DEMO_ASSET.scale);
  for (const account of DEMO_ACCOUNTS) await api.createAccount(account);
  await afterLedgerWrite();
  ledgerStatus(
    live,
    `Demo ready: asset ${DEMO_ASSET.code} (scale ${DEMO_ASSET.scale}), accounts ${DEMO_ACCOUNTS.map((a) => a.id).join(", ")}.`,
    "ok",
  );
}

async function openAccount(live) {
  const L = ui.ledger;
  const account = { id: L.accountId.value, asset: L.accountAsset.value };
  if (L.accountFlags.value) account.flags = [L.accountFlags.value];
  if (L.accountMax.value !== "") account.max_transfer = L.accountMax.value;
  const a = await ledgerApi().createAccount(account);
  if (!live()) return;
  rememberAccount(a.id);
  await afterLedgerWrite();
  L.accountId.value = "";
  L.accountMax.value = "";
  ledgerStatus(live, `Account "${a.id}" is open (${a.asset}).`, "ok");
}

async function submitTransfer(live) {
  const L = ui.ledger;
  const transfer = {
    id: L.transferId.value,
    debit_account: L.debit.value,
    credit_account: L.credit.value,
    amount: L.amount.value, // the string as typed; the Rust side parses it exactly
  };
  if (L.pending.checked) {
    transfer.pending = true;
    // Anything typed is passed on, so the Rust side judges it; empty means no timeout.
    if (L.timeout.value !== "") transfer.timeout_seconds = L.timeout.valueAsNumber;
  }
  let results;
  try {
    results = await ledgerApi().createTransfers([transfer]);
  } catch (err) {
    if (live()) logResult(transfer, { error: err });
    throw err;
  }
  if (!live()) return;
  const { result } = results[0];
  logResult(transfer, { result });
  if (transfer.pending && (result === "created" || result === "exists")) rememberHold(transfer.id);
  await afterLedgerWrite();
  const text =
    result === "created"
      ? `Transfer "${transfer.id}": created.`
      : result === "exists"
        ? `Transfer "${transfer.id}": exists (an idempotent retry; nothing changed).`
        : `Transfer "${transfer.id}" rejected: ${result}.`;
  const rejected = resultKind(result) === "error";
  ledgerStatus(live, text, rejected ? "error" : "ok", rejected ? result : undefined);
}

async function resolveHold(live, id, action, amount) {
  const L = ui.ledger;
  const api = ledgerApi();
  try {
    const { transfer } = action === "post" ? await api.post(id, { amount }) : await api.void(id);
    if (!live()) return;
    const text = action === "post" ? `posted ${transfer.posted_amount} of ${transfer.amount}` : `voided ${transfer.amount}`;
    state.ledger.outcomes.set(id, { ok: true, text: `${transfer.state}: ${text}` });
    const typed = L.holds.querySelector(`input.post-amount[data-transfer-id="${CSS.escape(id)}"]`);
    if (typed) typed.value = "";
    await afterLedgerWrite();
    ledgerStatus(live, `Hold "${id}" ${text}.`, "ok");
  } catch (err) {
    if (!live()) throw err;
    state.ledger.outcomes.set(id, { ok: false, code: errorCode(err), text: `${errorCode(err)}: ${err?.message ?? String(err)}` });
    await refreshLedger().catch(() => {});
    throw err;
  }
}

async function reconcile(live) {
  const r = await ledgerApi().reconcile();
  if (!live()) return;
  renderReconcile(r);
  ledgerStatus(
    live,
    r.ok ? `Reconciled: ok, ${r.transfers} transfers, ${r.journal_entries} journal entries.` : "Reconciliation found differences.",
    r.ok ? "ok" : "error",
  );
}

function wireLedgerEvents() {
  const L = ui.ledger;
  L.transferId.value = freshTransferId();
  clearResults();
  L.newId.addEventListener("click", () => {
    L.transferId.value = freshTransferId();
    L.transferId.focus();
  });
  L.pending.addEventListener("change", () => {
    L.timeout.disabled = !L.pending.checked;
  });
  L.setup.addEventListener("click", () => runLedger(setUpDemo));
  L.refresh.addEventListener("click", () =>
    runLedger(async (live) => {
      await refreshLedger();
      ledgerStatus(live, "Ledger refreshed.");
    }),
  );
  L.reconcile.addEventListener("click", () => runLedger(reconcile));
  L.clearResults.addEventListener("click", clearResults);
  L.accountForm.addEventListener("submit", (e) => {
    e.preventDefault();
    runLedger(openAccount);
  });
  L.transferForm.addEventListener("submit", (e) => {
    e.preventDefault();
    runLedger(submitTransfer);
  });
  L.holds.addEventListener("click", (e) => {
    const button = e.target.closest("button[data-action]");
    if (!button) return;
    const li = button.closest("li.hold");
    const id = li.dataset.transferId;
    const typed = li.querySelector("input.post-amount").value;
    runLedger((live) => resolveHold(live, id, button.dataset.action, typed === "" ? undefined : typed));
  });
}

async function main() {
  ui.pkgVersion.textContent = version();
  // Every load starts on the in-page backend, whatever the browser restored.
  ui.backendLocal.checked = true;
  ui.namespace.value = localStorage.getItem(KEY_NAMESPACE) ?? ui.namespace.value;
  ui.token.value = sessionStorage.getItem(KEY_TOKEN) ?? "";
  wireEvents();
  try {
    // The same database on every load, so a reload recovers the sessions.
    state.memory = await Memory.open({ store: await IndexedDBStore.open(DB_NAME) });
    await renderStats();
  } catch (err) {
    ui.storeStats.textContent = "unavailable";
    showError(err);
  }
  if (state.memory) await run(switchBackend);
  document.body.dataset.ready = "true";
}

main().catch(showError);
