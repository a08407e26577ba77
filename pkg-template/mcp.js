// MCP over stdio: one JSON-RPC message per line in, one per line out, and
// nothing else on stdout (logs go to stderr). The protocol itself is the
// core's (`memory.mcp`), the same dispatcher the Worker's /mcp serves.
import { LIMITS } from "./limits.js";

/**
 * Serves `memory` to an MCP client until `input` ends or `signal` aborts.
 * `input` is an async iterable of text or bytes (process.stdin), `write`
 * receives each response line without its newline; `context` binds every
 * tool call ({namespace, sessionId, userId, agentId, resultTokensMax}).
 * Messages are answered in order.
 */
export async function serveStdio(memory, { input, write, context = {}, signal } = {}) {
  if (!input || typeof input[Symbol.asyncIterator] !== "function") throw new TypeError("input must be an async iterable");
  if (typeof write !== "function") throw new TypeError("write must be a function");
  const max = LIMITS.MCP_MESSAGE_BYTES_MAX;
  const decoder = new TextDecoder();
  let buf = "";
  let skipping = false; // inside a line already refused as too long
  const answer = async (line) => {
    const res = await memory.mcp(line, context).catch((err) => ({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32603, message: String(err?.message ?? err), data: { code: err?.code ?? "internal" } },
    }));
    if (res !== undefined) write(JSON.stringify(res));
  };
  for await (const chunk of input) {
    if (signal?.aborted) break;
    buf += typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
    let nl;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, nl).replace(/\r$/, "");
      buf = buf.slice(nl + 1);
      if (skipping) {
        skipping = false;
        continue;
      }
      if (line.trim() !== "") await answer(line);
    }
    if (buf.length > max) {
      write(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32600, message: `message over ${max} bytes` } }));
      buf = "";
      skipping = true;
    }
  }
  if (buf.trim() !== "" && !skipping) await answer(buf);
}
