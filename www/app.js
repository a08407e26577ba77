// The edgemem demo page. All memory logic lives in the package (IndexedDB
// backend) or in the Worker (HTTP backend); these modules only move values
// between the two backends and the DOM. User content is only ever written
// with textContent. This module is the Working-memory panel, backend
// switching and main(); the Ledger panel is in ledger.js, the Context-budget
// panel in budget.js, the Chat panel in chat.js, the Long-term memory panel
// in longterm.js.
import { Memory, IndexedDBStore, version } from "edgemem";
import { DB_NAME, $, ui, state, showStatus, showError, timeElement, setText, setTime, renderStats, needsInput } from "./page.js";
import { localBackend, workerBackend } from "./backends.js";
import { wireLedgerEvents, resetLedger, openLedger } from "./ledger.js";
import { wireBudget } from "./budget.js";
import { wireChat, resetChat, openChat } from "./chat.js";
import { wireLongTerm, resetLongTerm, openLongTerm } from "./longterm.js";
import { followFeed } from "./live.js";
import { wireDecisions, showDecisions, decisionEvent } from "./decisions.js";

const KEY_NAMESPACE = "edgemem-demo:namespace";
const KEY_TOKEN = "edgemem-demo:token";

// ---------------------------------------------------------------------------
// Rendering

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

// ---------------------------------------------------------------------------
// Actions

function remember(id) {
  // The decision log follows the selection.
  if (id !== state.selectedId) showDecisions(id);
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

async function switchBackend() {
  const gen = ++state.generation;
  const worker = ui.backendWorker.checked;
  document.body.classList.toggle("mode-worker", worker);
  ui.namespace.disabled = !worker;
  ui.token.disabled = !worker;
  ui.workerKey.disabled = !worker;
  ui.newKey.disabled = !worker;
  ui.passphrase.disabled = worker;
  state.selectedId = null;
  showStatus("Loading…");
  renderSession(null);
  ui.sessionList.replaceChildren();
  ui.sessionCount.textContent = "";
  resetLedger();
  resetChat();
  resetLongTerm();

  if (worker) {
    state.backend = workerBackend(ui.namespace.value, ui.token.value, ui.workerKey.value);
    ui.workerInfo.hidden = false;
    ui.workerVersion.textContent = "…";
    const health = await state.backend.health();
    if (gen !== state.generation) return;
    ui.workerVersion.textContent = `${health.version}`;
    const crypt = await state.backend.encryption();
    if (gen !== state.generation) return;
    showEncryption(crypt.key_id ?? undefined);
  } else {
    if (!state.memory) {
      ui.encryptionStatus.textContent = "locked";
      throw new Error("IndexedDB memory is not open (see the error above)");
    }
    state.backend = localBackend(state.memory);
    ui.workerInfo.hidden = true;
    showEncryption(await state.memory.keyId());
  }
  await refreshList();
  // A write elsewhere (another window, another client of the Worker) shows
  // in the Live panel and refreshes the session list without a reload.
  showDecisions(null);
  followFeed((e) => {
    if (gen === state.generation) decisionEvent(e);
    if (gen !== state.generation || !e.kind.startsWith("working_memory.")) return;
    run(async () => {
      await refreshList();
      if (state.selectedId !== null && state.selectedId === e.key) renderSession(await state.backend.get(e.key));
    });
  });
  const last = localStorage.getItem(state.backend.selectionKey);
  if (last !== null && gen === state.generation) await select(last);
  if (gen === state.generation) await openLedger();
  if (gen === state.generation) await openChat();
  if (gen === state.generation) await openLongTerm();
  if (gen === state.generation) {
    showStatus(worker ? `Worker API, namespace "${ui.namespace.value}".` : `IndexedDB database "${DB_NAME}".`);
  }
}

function showEncryption(keyId) {
  ui.encryptionStatus.textContent = keyId === undefined ? "plaintext at rest" : `encrypted at rest (AES-256-GCM, key ${keyId})`;
  ui.encryptionStatus.dataset.keyId = keyId ?? "";
}

/** Opens the page's IndexedDB memory, with the passphrase if one is typed. */
async function openLocal() {
  const passphrase = ui.passphrase.value;
  const encryptionKey = passphrase === "" ? undefined : { passphrase };
  state.memory = null;
  state.memory = await Memory.open({ store: await IndexedDBStore.open(DB_NAME), encryptionKey });
  await renderStats();
}

/** A fresh random key for the Worker, base64url of 32 bytes. */
function randomKey() {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
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
  // Encryption at rest: neither the passphrase nor the key is ever stored.
  ui.passphrase.addEventListener("change", () =>
    run(async () => {
      await openLocal();
      await switchBackend();
    }),
  );
  ui.workerKey.addEventListener("change", () => run(switchBackend));
  ui.newKey.addEventListener("click", () => {
    ui.workerKey.value = randomKey();
    run(switchBackend);
  });

  // An empty box only shows a placeholder: the buttons wait for something typed.
  const createReady = needsInput(ui.createSession, () =>
    ui.sessionIdInput.value === "" ? "Type a session id to create or open it." : null,
  );
  const messageReady = needsInput(ui.addMessage, () =>
    ui.messageContent.value === "" ? "Type a message to add it." : null,
  );

  ui.createForm.addEventListener("submit", (e) => {
    e.preventDefault();
    if (!createReady()) return;
    run(async () => {
      const id = ui.sessionIdInput.value;
      const ttl = ttlValue();
      const { created, session } = await state.backend.create(id, ttl === undefined ? {} : { ttl_seconds: ttl });
      remember(session.session_id);
      renderSession(session);
      await afterWrite();
      ui.sessionIdInput.value = "";
      createReady();
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
    if (id === null || !messageReady()) return;
    run(async () => {
      // An append answers only what it added; the panel shows the whole session.
      await state.backend.append(id, [{ role: ui.messageRole.value, content: ui.messageContent.value }]);
      if (state.selectedId === id) renderSession(await state.backend.get(id));
      await afterWrite();
      ui.messageContent.value = "";
      messageReady();
      showStatus(`Added a ${ui.messageRole.value} message to "${id}".`, "ok");
    });
  });
  ui.messageContent.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) ui.messageForm.requestSubmit();
  });

  wireLedgerEvents();
  wireLongTerm();
  wireDecisions();
  // A chat turn may create its session or change the one shown here.
  wireChat({
    onSessionsChanged: async (id) => {
      await refreshList();
      if (state.selectedId === id) await select(id);
    },
  });

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

async function main() {
  ui.pkgVersion.textContent = version();
  // Every load starts on the in-page backend, whatever the browser restored.
  ui.backendLocal.checked = true;
  ui.namespace.value = localStorage.getItem(KEY_NAMESPACE) ?? ui.namespace.value;
  ui.token.value = sessionStorage.getItem(KEY_TOKEN) ?? "";
  wireEvents();
  // The budget panel needs no store: it runs on its own, whatever happens below.
  const budget = wireBudget();
  try {
    // The same database on every load, so a reload recovers the sessions.
    await openLocal();
  } catch (err) {
    ui.storeStats.textContent = "unavailable";
    showError(err);
    // An encrypted database waits for its passphrase.
    if (err?.code === "key_required") ui.encryptionStatus.textContent = "locked: type the passphrase";
  }
  if (state.memory) await run(switchBackend);
  await budget;
  document.body.dataset.ready = "true";
}

main().catch(showError);
