// The Ledger panel. Amounts stay the decimal strings typed and shown: the
// page never turns one into a JS number.
import { DB_NAME, ui, state, showStatus, errorCode, showError, timeElement, cell, badge, renderStats, needsInput } from "./page.js";

// The ledger has no "list accounts" call: the page remembers the ids it knows.
const DEMO_ASSET = { code: "USDC", scale: 6 };
const DEMO_ACCOUNTS = [
  { id: "bank", asset: "USDC" },
  { id: "agent", asset: "USDC", flags: ["debits_must_not_exceed_credits"], max_transfer: "50" },
  { id: "casino", asset: "USDC" },
];
const ACCOUNT_FIELDS = ["balance", "debits_posted", "credits_posted", "debits_pending", "credits_pending"];

// The forms' main buttons wait for what only the user can give (page.js
// needsInput); set by wireLedgerEvents.
const ready = { account: () => true, transfer: () => true };

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
  ready.transfer();
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

export function resetLedger() {
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
export async function openLedger() {
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
  ready.account();
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

export function wireLedgerEvents() {
  const L = ui.ledger;
  L.transferId.value = freshTransferId();
  clearResults();
  // An empty box only shows a placeholder, and an empty list offers no account:
  // the buttons wait for something to send.
  ready.account = needsInput(L.accountCreate, () => {
    if (L.accountId.value === "") return "Type an account id to open it.";
    if (L.accountAsset.value === "") return "Type the account's asset code.";
    return null;
  });
  ready.transfer = needsInput(L.transferSubmit, () => {
    if (L.debit.options.length === 0) return "Press “Set up demo” first: there is no account yet.";
    if (L.transferId.value === "") return "Type a transfer id, or press “new id”.";
    if (L.amount.value === "") return "Type an amount to transfer.";
    return null;
  });
  L.newId.addEventListener("click", () => {
    L.transferId.value = freshTransferId();
    ready.transfer();
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
    if (!ready.account()) return;
    runLedger(openAccount);
  });
  L.transferForm.addEventListener("submit", (e) => {
    e.preventDefault();
    if (!ready.transfer()) return;
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
