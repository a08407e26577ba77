import type { Memory, ToolContext } from "./index.js";

/**
 * Serves `memory` to an MCP client over newline-delimited JSON-RPC until
 * `input` ends or `signal` aborts: one response line per request, written
 * through `write` (without the newline), in order.
 */
export function serveStdio(
  memory: Memory,
  options: {
    input: AsyncIterable<string | Uint8Array>;
    write: (line: string) => void;
    context?: ToolContext;
    signal?: AbortSignal;
  },
): Promise<void>;
