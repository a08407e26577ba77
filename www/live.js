// The Live panel: the change feed as it happens. In the page it follows the
// local memory (writes in another window on the same IndexedDB database
// arrive through BroadcastChannel); on the Worker it follows
// GET /v1/events over a WebSocket, acking each event and resuming with
// `since` after a disconnect.
import { $, state, eventRow } from "./page.js";

const SHOWN_MAX = 50;
const RECONNECT_MS = 1_000;

let stop = null;
let onChange = () => {};

function render(e) {
  const list = $("live-events");
  const li = eventRow(e.seq, e.kind, e.key ? e.key : e.count !== undefined ? `${e.count} ids` : "");
  li.dataset.key = e.key ?? "";
  list.prepend(li);
  while (list.children.length > SHOWN_MAX) list.lastElementChild.remove();
  $("live-count").textContent = String(Number($("live-count").textContent || 0) + 1);
}

function status(text) {
  $("live-status").textContent = text;
}

function followLocal(memory) {
  status("following this page's memory (and other windows on it)");
  return memory.subscribe({}, (e) => {
    if (e.kind === "error") return status(`error: ${e.detail}`);
    render(e);
    onChange(e);
  });
}

function followWorker(namespace, token, encryptionKey) {
  let ws = null;
  let since = null;
  let closed = false;
  let timer = null;
  const open = () => {
    const url = new URL("/v1/events", location.href);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    url.searchParams.set("namespace", namespace);
    if (since !== null) url.searchParams.set("since", String(since));
    // A browser WebSocket cannot send an Authorization header: the key
    // travels as a subprotocol, and the Worker answers "edgemem".
    // The tenant's encryption key travels the same way (never in the URL).
    const protocols = [...(token ? [`bearer.${token}`] : []), ...(encryptionKey ? [`edgemem-key.${encryptionKey}`] : [])];
    ws = protocols.length > 0 ? new WebSocket(url, ["edgemem", ...protocols]) : new WebSocket(url);
    ws.onopen = () => status(`following the Worker's namespace "${namespace}"`);
    ws.onmessage = (m) => {
      const e = JSON.parse(m.data);
      if (e.kind === "error") return status(`error: ${e.detail}`);
      since = e.kind === "resync_required" ? e.last_seq : e.seq;
      ws.send(JSON.stringify({ ack: since }));
      render(e);
      onChange(e);
    };
    ws.onclose = (c) => {
      if (closed) return;
      status(`disconnected (${c.code}); resuming from #${since ?? "now"}…`);
      timer = setTimeout(open, RECONNECT_MS);
    };
  };
  open();
  return () => {
    closed = true;
    clearTimeout(timer);
    ws?.close();
  };
}

/**
 * Follows the current backend's feed; `changed(event)` runs after each
 * event is shown (the page refreshes its session list with it).
 */
export function followFeed(changed) {
  stop?.();
  onChange = changed;
  $("live-events").replaceChildren();
  $("live-count").textContent = "0";
  const b = state.backend;
  stop = b.kind === "local" ? followLocal(state.memory) : followWorker(b.namespace, b.token, b.encryptionKey);
}
