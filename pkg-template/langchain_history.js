// `EdgememChatMessageHistory`: a LangChain chat history on working memory.
import { BaseListChatMessageHistory } from "@langchain/core/chat_history";
import { AIMessage, ChatMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { EdgememError, invalid } from "./util.js";
import { SEARCH_DEPTH_MAX, CREATE_BATCH_MAX, DELETE_BATCH_MAX, LISTING_RECORDS_MAX, FILTER_KEYS_MAX, checkMemory, chunks } from "./langchain_common.js";

function textOf(message) {
  if (typeof message.content === "string") return message.content;
  if (typeof message.text === "string") return message.text;
  return Array.isArray(message.content) ? message.content.map((b) => (typeof b === "string" ? b : b?.type === "text" ? b.text : "")).join("") : String(message.content ?? "");
}

function typeOf(message) {
  return message?.type ?? message?._getType?.();
}

const ROLE_OF = { human: "user", ai: "assistant", system: "system", tool: "tool", function: "function" };

/** A LangChain message as a working-memory turn `{role, content, id?}`. */
function toTurn(message, i) {
  const type = typeOf(message);
  const role = type === "generic" ? message.role : ROLE_OF[type];
  if (typeof role !== "string") throw invalid(`messages[${i}]`, `is not a LangChain message (type ${JSON.stringify(type)})`);
  // A tool result keeps its tool_call_id as the turn id (turns are AMS's
  // {role, content}: there is no other field to carry it).
  const id = type === "tool" && typeof message.tool_call_id === "string" && message.tool_call_id ? message.tool_call_id : message.id;
  const turn = { role, content: textOf(message) };
  if (typeof id === "string" && id !== "") turn.id = id;
  return turn;
}

/** A working-memory turn as a LangChain message. */
function fromTurn(t) {
  const fields = { content: t.content, id: t.id };
  switch (t.role) {
    case "user":
      return new HumanMessage(fields);
    case "assistant":
      return new AIMessage(fields);
    case "system":
      return new SystemMessage(fields);
    case "tool":
      return new ToolMessage({ ...fields, tool_call_id: t.id });
    default:
      return new ChatMessage({ ...fields, role: t.role });
  }
}

function isSummary(message) {
  return message?.additional_kwargs?.edgemem?.summary === true;
}

/**
 * A LangChain chat message history on an edgemem session (working memory).
 * `getMessages` answers the session's running summary first (a
 * `SystemMessage` with `additional_kwargs.edgemem.summary`), then the turns
 * compaction kept, so a compacted conversation reads as summary + recent
 * turns. With `model` or `contextWindowMax`, `addMessages` compacts past
 * the threshold after each append.
 */
export class EdgememChatMessageHistory extends BaseListChatMessageHistory {
  lc_namespace = ["langchain", "stores", "message", "edgemem"];

  static lc_name() {
    return "EdgememChatMessageHistory";
  }

  #memory;
  #ready = false;
  #compaction;

  /** The session's id. */
  sessionId;
  /** The error of the last automatic compaction that failed (`hook_failed`), else null; no turn is lost by one. */
  compactionError = null;

  constructor({ memory, sessionId, userId, namespace, model, contextWindowMax, summarizer, timeoutMs, autoCompact } = {}) {
    super({ sessionId, userId, namespace, model, contextWindowMax });
    this.#memory = checkMemory(memory);
    if (typeof sessionId !== "string") throw invalid("sessionId", "must be a string");
    this.sessionId = sessionId;
    this.userId = userId;
    this.namespace = namespace;
    this.model = model;
    this.contextWindowMax = contextWindowMax;
    const windowed = model !== undefined || contextWindowMax !== undefined;
    this.#compaction = { summarizer, timeoutMs, auto: windowed && autoCompact !== false };
  }

  async #ensure() {
    if (this.#ready) return;
    const init = {};
    if (this.userId !== undefined) init.user_id = this.userId;
    if (this.namespace !== undefined) init.namespace = this.namespace;
    await this.#memory.getOrCreateSession(this.sessionId, init);
    this.#ready = true;
  }

  /** The summary (if any) first, then the kept turns, oldest first. */
  async getMessages() {
    const session = await this.#memory.getSession(this.sessionId, this.userId === undefined ? {} : { userId: this.userId });
    if (session === null) return [];
    const out = [];
    if (typeof session.context === "string" && session.context !== "") {
      out.push(new SystemMessage({ content: session.context, additional_kwargs: { edgemem: { summary: true } } }));
    }
    for (const t of session.messages ?? []) out.push(fromTurn(t));
    return out;
  }

  async addMessage(message) {
    return this.addMessages([message]);
  }

  /**
   * Appends the messages as turns in one call, creating the session on
   * first use. The summary message `getMessages` returns is skipped, so
   * reading then re-adding a history does not store it as a turn.
   */
  async addMessages(messages) {
    if (!Array.isArray(messages)) throw invalid("messages", "must be an array of LangChain messages");
    const turns = messages.filter((m) => !isSummary(m)).map(toTurn);
    if (turns.length === 0) return;
    const options = this.model === undefined ? {} : { model: this.model };
    await this.#ensure();
    try {
      await this.#memory.appendMessages(this.sessionId, turns, options);
    } catch (err) {
      // Expired or deleted meanwhile: create it again, once.
      if (err?.code !== "not_found") throw err;
      this.#ready = false;
      await this.#ensure();
      await this.#memory.appendMessages(this.sessionId, turns, options);
    }
    if (this.#compaction.auto) {
      try {
        await this.compact();
        this.compactionError = null;
      } catch (err) {
        if (err?.code !== "hook_failed") throw err;
        this.compactionError = err;
      }
    }
  }

  /**
   * Compacts the session now if it passes the threshold (`memory.compact`):
   * the oldest turns fold into the summary, the newest stay verbatim.
   */
  async compact(options = {}) {
    const { summarizer, timeoutMs } = this.#compaction;
    return this.#memory.compact(this.sessionId, { model: this.model, contextWindowMax: this.contextWindowMax, summarizer, timeoutMs, ...options });
  }

  /** Deletes the session. */
  async clear() {
    await this.#memory.deleteSession(this.sessionId);
    this.#ready = false;
  }
}
