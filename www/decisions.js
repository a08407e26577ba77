// The Decision log panel: the selected session's decision entries, newest
// first, followed live (the Live panel's feed reports `decision.appended`,
// and the panel reads the entries after the last one it shows).
import { $, state, showError } from "./page.js";

const SHOWN_MAX = 200;

let sessionId = null;
let lastSeq = 0;
let loading = null;

function render(e) {
  const li = document.createElement("li");
  li.dataset.kind = e.kind;
  li.dataset.seq = String(e.seq);
  const seq = document.createElement("span");
  seq.className = "seq";
  seq.textContent = `#${e.seq}`;
  const kind = document.createElement("span");
  kind.className = "kind";
  kind.textContent = e.kind;
  const text = document.createElement("span");
  text.className = "key";
  text.textContent = e.text;
  li.append(seq, kind, text);
  const list = $("decision-entries");
  list.prepend(li);
  while (list.children.length > SHOWN_MAX) list.lastElementChild.remove();
}

/** Reads the entries after the last one shown (one read at a time). */
async function catchUp() {
  if (sessionId === null) return;
  if (loading) return loading;
  const id = sessionId;
  loading = (async () => {
    try {
      const page = await state.backend.decisions.list(id, lastSeq);
      if (id !== sessionId) return;
      for (const e of page.entries) {
        render(e);
        lastSeq = e.seq;
      }
    } catch (err) {
      if (err.code !== "not_found") showError(err);
    } finally {
      loading = null;
    }
  })();
  return loading;
}

/** Shows `id`'s log (or none). */
export function showDecisions(id) {
  sessionId = id;
  lastSeq = 0;
  $("decision-entries").replaceChildren();
  $("decisions-session").textContent = id ?? "(none selected)";
  $("decision-add").disabled = id === null;
  return catchUp();
}

/** A change-feed event: reads new entries when it is about the shown session. */
export function decisionEvent(e) {
  if (e.kind === "decision.appended" && e.key === sessionId) catchUp();
}

export function wireDecisions() {
  $("decision-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    if (sessionId === null) return;
    const text = $("decision-text").value.trim();
    if (!text) return;
    try {
      const e = await state.backend.decisions.append(sessionId, { kind: $("decision-kind").value, text });
      $("decision-text").value = "";
      const red = e.redactions ? Object.entries(e.redactions).map(([k, n]) => `${n} ${k}`).join(", ") : "";
      $("decision-status").textContent = red ? `logged #${e.seq}; redacted ${red}` : `logged #${e.seq}`;
      await catchUp();
    } catch (err) {
      $("decision-status").textContent = `${err.code ?? "error"}: ${err.message}`;
    }
  });
}
