// Types of `edgemem/ai`: Vercel AI SDK adapters (peers: `ai` 6 or 7, `zod` 4).
import type { LanguageModelMiddleware, Tool } from "ai";
import type { ZodType } from "zod";
import type { CountTokens, Memory, SearchQueryFields } from "./index.js";

/** The context a tool call runs in; bound into every `execute`. */
export interface MemoryToolsContext {
  /** Whose tool allow-list applies when a tool runs (`tool_not_allowed`). */
  agentId?: string;
  /** The session a session tool uses when the model names none; another is refused. */
  sessionId?: string;
  /** Records are written for, and reads limited to, this user. */
  userId?: string;
  /** The tenant namespace; naming another is `namespace_forbidden`. */
  namespace?: string;
  /** The token ceiling on one tool result (default 4,000). */
  resultTokensMax?: number;
  /** Only these tools (default: all). */
  only?: string[];
}

/**
 * The memory tools as AI SDK tools, keyed by name, with zod input schemas
 * converted from edgemem's one tool table. Synchronous:
 * `generateText({ tools: memoryTools(memory, ctx) })`. Each `execute` is
 * `memory.resolveFunctionCall(name, args, ctx)`; its errors (an
 * `EdgememError` with `.code`) become the AI SDK's tool errors.
 */
export function memoryTools(memory: Memory, ctx?: MemoryToolsContext): Record<string, Tool>;

/**
 * JSON Schema (the subset the tool table uses) to zod. What it does not
 * know becomes `z.unknown()`, never an exception.
 */
export function jsonSchemaToZod(schema: unknown): ZodType;

export interface MemoryMiddlewareOptions {
  /** The session the turns are read from and recorded in (created when missing). Without it nothing is recorded. */
  sessionId?: string;
  /** Set on a created session, and filters the recalled memories (`user_id: {eq}`). */
  userId?: string;
  /** Set on a created session, and filters the recalled memories. */
  namespace?: string;
  /** The agent whose system prompt (and patches) goes first. */
  agentId?: string;
  /**
   * A model of edgemem's table (its window and tokenizer). Default: the
   * wrapped model's id when edgemem knows it. Name a `model` or a `windowTokens`.
   */
  model?: string;
  /** The context window; overrides the model's. */
  windowTokens?: number;
  /** Tokens kept for the answer when the call sets no `maxOutputTokens`; default the model's output maximum, at most a quarter of the window. */
  reserveForOutput?: number;
  /** Counts tokens instead of the model's tokenizer (as `fitsContext`'s `counter`). */
  counter?: CountTokens;
  /**
   * Long-term memories recalled for the last user text: extra search fields
   * (default `{limit: 5}`, filtered by `userId` and `namespace`), or `false`
   * for none.
   */
  recall?: false | (Omit<SearchQueryFields, "text" | "vector"> & { limit?: number });
  /**
   * The session's newest turns in the prompt: `true`, `false`, or `"auto"`
   * (default): only when the caller's prompt holds no assistant or tool
   * message (the caller sent the new user turn alone).
   */
  history?: boolean | "auto";
  /** Append the user turn and the assistant's text after each call. Default true. */
  record?: boolean;
  /** Called with an error from recording the turns; without it, the error fails the call. */
  onRecordError?: (error: Error) => void;
}

/**
 * A language-model middleware (`specificationVersion: "v3"`) for
 * `wrapLanguageModel({ model, middleware })` in ai 6 and 7. Puts the
 * agent's system prompt, the session summary and the recalled long-term
 * memories in a system message at the front; refuses a prompt whose tokens
 * plus `maxOutputTokens` exceed the window with an `EdgememError` whose
 * `code` is `"limit_exceeded"` (the model is never called); records the
 * user turn and the assistant's text in the session after the call.
 */
export function memoryMiddleware(memory: Memory, options?: MemoryMiddlewareOptions): LanguageModelMiddleware;
