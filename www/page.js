// Page plumbing shared by both panels (app.js and ledger.js): the element
// map, the shared state and the DOM/status helpers. User content is only
// ever written with textContent.
import { EdgememError } from "edgemem";

export const DB_NAME = "edgemem-demo";

export const $ = (id) => document.getElementById(id);
export const ui = {
  backendLocal: $("backend-local"),
  backendWorker: $("backend-worker"),
  namespace: $("namespace"),
  token: $("api-token"),
  passphrase: $("local-passphrase"),
  workerKey: $("worker-encryption-key"),
  newKey: $("new-encryption-key"),
  encryptionStatus: $("encryption-status"),
  status: $("status"),
  createForm: $("create-form"),
  sessionIdInput: $("session-id-input"),
  ttlInput: $("ttl-input"),
  createSession: $("create-session"),
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
  addMessage: $("add-message"),
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
    accountCreate: $("account-create"),
    transferForm: $("transfer-form"),
    transferId: $("transfer-id"),
    newId: $("transfer-new-id"),
    debit: $("transfer-debit"),
    credit: $("transfer-credit"),
    amount: $("transfer-amount"),
    pending: $("transfer-pending"),
    timeout: $("transfer-timeout"),
    transferSubmit: $("transfer-submit"),
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
// State

export const state = {
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

export function showStatus(text, kind = "info", el = ui.status) {
  el.textContent = text;
  el.className = `status status-${kind}`;
  delete el.dataset.code;
}

export function errorCode(err) {
  return err instanceof EdgememError ? err.code : err?.name ?? "error";
}

export function showError(err, el = ui.status) {
  const code = errorCode(err);
  el.textContent = `${code}: ${err?.message ?? String(err)}`;
  el.className = "status status-error";
  el.dataset.code = code;
  console.warn("edgemem demo:", err); // a warning: the page handled it
}

/**
 * The page's one rule for a form's main button: while the form lacks what
 * only the user can give (an empty box that merely shows a placeholder, no
 * account to pick yet), the button is disabled and a one-line hint beside it
 * says what to do. An empty box is thus never sent just to be refused;
 * anything typed, even blanks, is still sent, and the Rust side judges it.
 *
 * `missing()` returns the hint, or null when the button can act. It is
 * checked on every input and change in the button's form. Returns `ready()`,
 * which checks again and says whether the button can act: call it after
 * changing the form from script, and first thing in the submit handler,
 * since `requestSubmit()` (Ctrl+Enter) does not look at the disabled button.
 */
export function needsInput(button, missing) {
  const hint = document.createElement("span");
  hint.id = `${button.id}-hint`;
  hint.dataset.testid = hint.id;
  hint.className = "muted hint needs-input";
  button.setAttribute("aria-describedby", hint.id);
  button.after(hint);
  const ready = () => {
    const why = missing();
    button.disabled = why !== null;
    hint.hidden = why === null;
    hint.textContent = why ?? "";
    return why === null;
  };
  button.form.addEventListener("input", ready);
  button.form.addEventListener("change", ready);
  ready();
  return ready;
}

export function formatTime(rfc3339) {
  const d = new Date(rfc3339);
  return Number.isNaN(d.getTime()) ? rfc3339 : d.toLocaleString();
}

export function timeElement(rfc3339) {
  const t = document.createElement("time");
  t.dateTime = rfc3339;
  t.title = rfc3339;
  t.textContent = formatTime(rfc3339);
  return t;
}

export function setText(el, value) {
  el.replaceChildren();
  el.classList.toggle("muted", value === null || value === undefined || value === "");
  el.textContent = value === null || value === undefined || value === "" ? "—" : String(value);
}

export function setTime(el, value) {
  if (value) {
    el.classList.remove("muted");
    el.replaceChildren(timeElement(value));
  } else {
    setText(el, null);
  }
}

export function cell(text, { field, className } = {}) {
  const td = document.createElement("td");
  if (field) td.dataset.field = field;
  if (className) td.className = className;
  td.textContent = text;
  return td;
}

export function badge(text, kind) {
  const b = document.createElement("span");
  b.className = `badge badge-${kind}`;
  b.textContent = text;
  return b;
}

// The store line in the footer: after a write on either panel.
export async function renderStats() {
  if (!state.memory) return;
  const s = await state.memory.stats();
  ui.storeStats.textContent =
    `seq ${s.last_seq}, ${s.log_records_since_snapshot} log records since snapshot ` +
    `gen ${s.snapshot_gen} (${s.snapshot_bytes} bytes)`;
}

/** One row of an event list (the Live panel, the decision log): `#seq kind text`. */
export function eventRow(seq, kind, text) {
  const li = document.createElement("li");
  li.dataset.kind = kind;
  const parts = [["seq", `#${seq}`], ["kind", kind], ["key", text]].map(([cls, t]) => {
    const span = document.createElement("span");
    span.className = cls;
    span.textContent = t;
    return span;
  });
  li.append(...parts);
  return li;
}
