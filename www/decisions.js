// The Decision log panel: the selected session's decision entries, newest
// first, followed live (the Live panel's feed reports `decision.appended`,
// and the panel reads the entries after the last one it shows).
import { $, state, showError, eventRow } from "./page.js";

const SHOWN_MAX = 200;

let sessionId = null;
let lastSeq = 0;
let loading = null;
/** An event arrived while a read was in flight: read again after it. */
let again = false;

function render(e) {
  const li = eventRow(e.seq, e.kind, e.text);
  li.dataset.seq = String(e.seq);
  const list = $("decision-entries");
  list.prepend(li);
  while (list.children.length > SHOWN_MAX) list.lastElementChild.remove();
}

/**
 * Reads the entries after the last one shown: one read at a time, and one
 * more after it when an event came in meanwhile (its entry may be newer
 * than what the read in flight saw).
 */
async function catchUp() {
  if (sessionId === null) return;
  if (loading) {
    again = true;
    return loading;
  }
  const id = sessionId;
  loading = (async () => {
    try {
      do {
        again = false;
        const page = await state.backend.decisions.list(id, lastSeq);
        if (id !== sessionId) return;
        for (const e of page.entries) {
          render(e);
          lastSeq = e.seq;
        }
      } while (again);
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
  // A read still in flight for the session shown before renders nothing:
  // it checks the session when it lands.
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
