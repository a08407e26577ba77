// The edgemem demo page. All memory logic lives in the package (IndexedDB
// backend) or in the Worker (HTTP backend); this file only moves values
// between the two backends and the DOM. User content is only ever written
// with textContent.
import { Memory, IndexedDBStore, EdgememError, version } from "edgemem";

const DB_NAME = "edgemem-demo";
const LIST_LIMIT = 100; // the HTTP API's largest page
const KEY_NAMESPACE = "edgemem-demo:namespace";
const KEY_TOKEN = "edgemem-demo:token";

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
};

// ---------------------------------------------------------------------------
// Backends. Both expose the same five calls and return the same session JSON.

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
};

// ---------------------------------------------------------------------------
// Rendering

function showStatus(text, kind = "info") {
  ui.status.textContent = text;
  ui.status.className = `status status-${kind}`;
  delete ui.status.dataset.code;
}

function showError(err) {
  const code = err instanceof EdgememError ? err.code : err?.name ?? "error";
  ui.status.textContent = `${code}: ${err?.message ?? String(err)}`;
  ui.status.className = "status status-error";
  ui.status.dataset.code = code;
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
