// Follows a tenant's change feed over a WebSocket, as a client does: the
// feed tests of one object and of a sharded tenant share it.
import WebSocket from "ws";

export const WAIT_MS = 10_000;

/**
 * Follows the feed over a WebSocket. `ack`: acknowledge each event as it
 * arrives (what a well-behaved client does). Resolves once open.
 */
export function follow(base, query, { ack = true } = {}) {
  const url = `${base.replace(/^http/, "ws")}v1/events?${query}`;
  const ws = new WebSocket(url);
  const sub = { ws, events: [], closed: null, waiters: [] };
  const wake = () => {
    for (const w of sub.waiters.splice(0)) w();
  };
  ws.on("message", (data) => {
    const e = JSON.parse(String(data));
    sub.events.push(e);
    if (ack && typeof e.seq === "number" && e.kind !== "error") ws.send(JSON.stringify({ ack: e.seq }));
    wake();
  });
  ws.on("close", (code, reason) => {
    sub.closed = { code, reason: String(reason) };
    wake();
  });
  sub.until = async (pred, what, waitMs = WAIT_MS) => {
    const deadline = Date.now() + waitMs;
    while (!pred(sub)) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; have seqs ${sub.events.map((e) => e.seq).join(",")}, closed ${JSON.stringify(sub.closed)}, readyState ${ws.readyState}`);
      await new Promise((r) => {
        sub.waiters.push(r);
        setTimeout(r, 50);
      });
    }
  };
  sub.seqs = () => sub.events.filter((e) => e.kind !== "resync_required" && e.kind !== "error").map((e) => e.seq);
  sub.close = () => new Promise((r) => (sub.closed ? r() : (ws.once("close", r), ws.close())));
  return new Promise((resolve, reject) => {
    ws.once("open", () => resolve(sub));
    ws.once("unexpected-response", (_req, res) => {
      let body = "";
      res.on("data", (c) => (body += c));
      res.on("end", () => reject(Object.assign(new Error(`HTTP ${res.statusCode}: ${body}`), { status: res.statusCode, body })));
    });
    ws.once("error", reject);
  });
}
