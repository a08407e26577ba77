// `edgemem/ai`: Vercel AI SDK adapters over an open edgemem `Memory`.
//
// - `memoryTools(memory, ctx)`: the memory tool table as AI SDK `tool()`s
//   with zod input schemas, each executed by `memory.resolveFunctionCall`.
// - `memoryMiddleware(memory, options)`: a language-model middleware that
//   puts the agent's system prompt, the session's summary and the recalled
//   long-term memories in front of the call, refuses a call that would not
//   fit the window (`limit_exceeded`, before the model is called), and
//   records each user turn and assistant reply in the session.
//
// Plain ESM without top-level await, so `require("edgemem/ai")` works on
// Node >= 20.19. `ai` (6 or 7) and `zod` (4) are peer dependencies.
import { TOOL_SCHEMAS } from "./tool_schemas.js";
import { tool } from "ai";
import { z } from "zod";
import { EdgememError, fitsContext, model as modelInfo } from "./index.js";

// ---------------------------------------------------------------------------
// JSON Schema -> zod

const DEPTH_MAX = 32;

/**
 * Converts the JSON Schema subset edgemem's tool table uses to zod: object
 * (properties, required, additionalProperties), string (minLength,
 * maxLength, pattern, enum), integer and number (minimum, maximum, the
 * exclusive bounds, multipleOf), boolean, null, enum and const, array
 * (items, minItems, maxItems), `type: [..., "null"]`, anyOf and oneOf (a
 * union; oneOf's exclusivity is not enforced) and `description`. What it
 * does not know (a missing or unknown type, allOf, $ref, tuples, a bad
 * pattern) becomes `z.unknown()` rather than an error: the Rust validator
 * behind `resolveFunctionCall` still checks every call.
 */
export function jsonSchemaToZod(schema) {
  return convert(schema, 0);
}

function convert(s, depth) {
  if (s === false) return z.never();
  if (s === null || typeof s !== "object" || Array.isArray(s) || depth > DEPTH_MAX) return z.unknown();
  let out;
  try {
    out = shape(s, depth + 1);
  } catch {
    out = z.unknown();
  }
  return typeof s.description === "string" ? out.describe(s.description) : out;
}

function isPrimitive(v) {
  return v === null || ["string", "number", "boolean"].includes(typeof v);
}

function union(members, depth) {
  const nonNull = members.filter((m) => !(m && typeof m === "object" && m.type === "null"));
  const schemas = nonNull.map((m) => convert(m, depth));
  const base = schemas.length === 0 ? z.null() : schemas.length === 1 ? schemas[0] : z.union(schemas);
  return nonNull.length < members.length && schemas.length > 0 ? base.nullable() : base;
}

function shape(s, depth) {
  if ("const" in s) return isPrimitive(s.const) ? z.literal(s.const) : z.unknown();
  if (Array.isArray(s.enum) && s.enum.length > 0) {
    if (!s.enum.every(isPrimitive)) return z.unknown();
    return s.enum.every((v) => typeof v === "string") ? z.enum(s.enum) : z.literal(s.enum);
  }
  const members = Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : null;
  if (members && members.length > 0) return union(members, depth);
  if (Array.isArray(s.allOf) && s.allOf.length === 1) return convert(s.allOf[0], depth);
  let types = Array.isArray(s.type) ? s.type : typeof s.type === "string" ? [s.type] : null;
  if (types === null) {
    if (s.properties && typeof s.properties === "object") types = ["object"];
    else return z.unknown();
  }
  const nullable = types.includes("null");
  const rest = types.filter((t) => t !== "null");
  if (rest.length === 0) return z.null();
  const schemas = rest.map((t) => single(t, s, depth));
  const base = schemas.length === 1 ? schemas[0] : z.union(schemas);
  return nullable ? base.nullable() : base;
}

function num(v) {
  return typeof v === "number" && Number.isFinite(v);
}

function single(type, s, depth) {
  switch (type) {
    case "string": {
      let out = z.string();
      if (num(s.minLength)) out = out.min(s.minLength);
      if (num(s.maxLength)) out = out.max(s.maxLength);
      if (typeof s.pattern === "string") {
        const re = regex(s.pattern);
        if (re) out = out.regex(re);
      }
      return out;
    }
    case "integer":
    case "number": {
      let out = type === "integer" ? z.number().int() : z.number();
      // Draft 4 spells exclusive bounds as booleans beside minimum/maximum.
      if (num(s.minimum)) out = s.exclusiveMinimum === true ? out.gt(s.minimum) : out.gte(s.minimum);
      if (num(s.maximum)) out = s.exclusiveMaximum === true ? out.lt(s.maximum) : out.lte(s.maximum);
      if (num(s.exclusiveMinimum)) out = out.gt(s.exclusiveMinimum);
      if (num(s.exclusiveMaximum)) out = out.lt(s.exclusiveMaximum);
      if (num(s.multipleOf) && s.multipleOf > 0) out = out.multipleOf(s.multipleOf);
      return out;
    }
    case "boolean":
      return z.boolean();
    case "array": {
      const items = s.items && typeof s.items === "object" && !Array.isArray(s.items) ? convert(s.items, depth) : z.unknown();
      let out = z.array(items);
      if (num(s.minItems)) out = out.min(s.minItems);
      if (num(s.maxItems)) out = out.max(s.maxItems);
      return out;
    }
    case "object": {
      const props = s.properties && typeof s.properties === "object" ? s.properties : {};
      const required = new Set(Array.isArray(s.required) ? s.required : []);
      const fields = {};
      for (const [key, sub] of Object.entries(props)) {
        const field = convert(sub, depth);
        fields[key] = required.has(key) ? field : field.optional();
      }
      const extra = s.additionalProperties;
      if (extra === false) return z.strictObject(fields);
      if (extra && typeof extra === "object") {
        const value = convert(extra, depth);
        return Object.keys(fields).length === 0 ? z.record(z.string(), value) : z.object(fields).catchall(value);
      }
      return z.looseObject(fields);
    }
    default:
      return z.unknown();
  }
}

function regex(pattern) {
  for (const flags of ["u", ""]) {
    try {
      return new RegExp(pattern, flags);
    } catch {
      // try the next flags; a pattern JS cannot read is left to the Rust validator
    }
  }
  return null;
}

// ---------------------------------------------------------------------------
// Tools

function checkMemory(memory, methods) {
  for (const m of methods) {
    if (!memory || typeof memory[m] !== "function") {
      throw new EdgememError("invalid_input", `invalid memory: an open edgemem Memory is required (no ${m}())`);
    }
  }
}

/**
 * The memory tools as AI SDK `tool()`s, keyed by name, with zod input
 * schemas converted from edgemem's one tool table (`tool_schemas.js`, which
 * tests/registry.rs generates from the Rust table). Synchronous: pass it
 * straight to `generateText({ tools })`. Each `execute` runs
 * `memory.resolveFunctionCall` bound to `ctx` (`{agentId, sessionId,
 * userId, namespace, resultTokensMax}`): the model's arguments may fill in
 * what the context leaves open, never contradict it. `ctx.only` keeps just
 * the named tools; the agent's allow-list is applied when a tool runs
 * (`tool_not_allowed`).
 */
export function memoryTools(memory, ctx = {}) {
  checkMemory(memory, ["resolveFunctionCall"]);
  if (ctx === null || typeof ctx !== "object") throw new EdgememError("invalid_input", "invalid ctx: must be an object");
  const { agentId, sessionId, userId, namespace, resultTokensMax, only } = ctx;
  if (only !== undefined && !(Array.isArray(only) && only.every((n) => typeof n === "string"))) throw new EdgememError("invalid_input", "invalid ctx.only: must be an array of tool names");
  const bound = { agentId, sessionId, userId, namespace, resultTokensMax };
  const tools = {};
  for (const entry of TOOL_SCHEMAS) {
    if (only && !only.includes(entry.name)) continue;
    const name = entry.name;
    tools[name] = tool({
      description: entry.description,
      inputSchema: jsonSchemaToZod(entry.inputSchema),
      execute: (args) => memory.resolveFunctionCall(name, args, bound),
    });
  }
  return tools;
}

// ---------------------------------------------------------------------------
// Middleware

/** The text of a V3 prompt message: text parts, tool calls and results as JSON. */
function messageText(message) {
  if (typeof message.content === "string") return message.content;
  if (!Array.isArray(message.content)) return "";
  const out = [];
  for (const part of message.content) {
    if (part.type === "text" || part.type === "reasoning") out.push(part.text ?? "");
    else if (part.type === "tool-call") out.push(`${part.toolName}(${stringify(part.input)})`);
    else if (part.type === "tool-result") out.push(stringify(part.output));
  }
  return out.join("\n");
}

function stringify(v) {
  if (typeof v === "string") return v;
  try {
    return JSON.stringify(v) ?? "";
  } catch {
    return String(v);
  }
}

function userText(message) {
  return message.content
    .filter((p) => p.type === "text")
    .map((p) => p.text)
    .join("\n");
}

function lastUserText(prompt) {
  for (let i = prompt.length - 1; i >= 0; i--) {
    if (prompt[i].role === "user" && Array.isArray(prompt[i].content)) {
      const t = userText(prompt[i]);
      if (t.trim() !== "") return t;
    }
  }
  return "";
}

function resultText(content) {
  return (content ?? [])
    .filter((p) => p.type === "text")
    .map((p) => p.text)
    .join("");
}

/**
 * A language-model middleware (`specificationVersion: "v3"`, for
 * `wrapLanguageModel` in ai 6 and 7) that:
 *
 * 1. before each call, takes the last user text, recalls long-term memories
 *    for it (`recall`), calls `memory.prompt()` and puts its system text
 *    (the agent's prompt, the session summary, the memories) in one system
 *    message at the front of the prompt (and, with `history`, the session's
 *    newest turns after it);
 * 2. refuses a prompt whose tokens plus `maxOutputTokens` exceed the window
 *    with an `EdgememError` (`code: "limit_exceeded"`): the model is not
 *    called;
 * 3. after the call, appends the user turn and the assistant's text to the
 *    session (created with `getOrCreateSession` when missing).
 */
export function memoryMiddleware(memory, options = {}) {
  checkMemory(memory, ["prompt", "getOrCreateSession", "appendMessages"]);
  if (options === null || typeof options !== "object") throw new EdgememError("invalid_input", "invalid options: must be an object");
  const { sessionId, userId, namespace, agentId, windowTokens, reserveForOutput, counter, onRecordError } = options;
  const history = options.history ?? "auto";
  const record = options.record ?? true;
  const recall = options.recall ?? {};
  if (sessionId !== undefined && typeof sessionId !== "string") throw new EdgememError("invalid_input", "invalid sessionId: must be a string");
  if (!["auto", true, false].includes(history)) throw new EdgememError("invalid_input", 'invalid history: must be "auto", true or false');

  const edgemodel = (lm) => {
    if (options.model !== undefined) return options.model;
    const id = lm?.modelId;
    return typeof id === "string" && modelInfo(id) ? id : undefined;
  };
  // Every call: a session may have expired or been deleted since the last.
  const ensureSession = async () => {
    if (sessionId === undefined) return;
    const init = {};
    if (userId !== undefined) init.user_id = userId;
    if (namespace !== undefined) init.namespace = namespace;
    await memory.getOrCreateSession(sessionId, init);
  };

  const recallFor = async (query) => {
    if (recall === false || !query || !memory.longTerm) return [];
    const { limit = 5, ...rest } = recall;
    const search = { text: query, limit, fields: ["text"], ...rest };
    if (userId !== undefined && search.user_id === undefined) search.user_id = { eq: userId };
    if (namespace !== undefined && search.namespace === undefined) search.namespace = { eq: namespace };
    const hits = await memory.longTerm.search(search);
    return hits.memories.map((m) => m.text).filter((t) => typeof t === "string" && t !== "");
  };

  // The budget, before the model is called: these messages (and the call's
  // tools) plus the output reserve must fit the window.
  const enforce = async (messages, { window, reserve, mdl, tools }) => {
    const request = { max_tokens: window, reserve_for_output: reserve, messages: messages.map((m) => ({ role: m.role, content: messageText(m) })) };
    if (mdl !== undefined) request.model = mdl;
    if (tools.length > 0) request.tools = tools;
    const fit = reserve >= window ? { fits: false, tokens: 0, limit: 0, window } : await fitsContext(request, counter ? { counter } : undefined);
    if (fit.fits) return;
    const err = new EdgememError(
      "limit_exceeded",
      reserve >= window
        ? `the output reserve (${reserve} tokens) leaves no room in the ${window}-token window`
        : `prompt too long: ${fit.tokens} tokens, over the ${fit.limit} the window leaves (${fit.window} less ${reserve} for output)`,
    );
    Object.assign(err, { tokens: fit.tokens, limit: fit.limit, window: fit.window, reserve });
    throw err;
  };

  const transformParams = async ({ params, model: lm }) => {
    const prompt = Array.isArray(params.prompt) ? params.prompt : [];
    const query = lastUserText(prompt);
    const mdl = edgemodel(lm);
    const info = mdl === undefined ? null : modelInfo(mdl);
    if (mdl !== undefined && !info) throw new EdgememError("invalid_input", `invalid model: ${JSON.stringify(mdl)} is not in edgemem's model table (name a windowTokens and leave model out)`);
    if (!info && windowTokens === undefined) {
      throw new EdgememError("invalid_input", "invalid options: name an edgemem `model` or a `windowTokens` (the wrapped model's id is not in edgemem's table)");
    }
    const window = windowTokens ?? info.context_window_tokens;
    // edgemem's default reserve: the model's output maximum, at most a quarter of the window.
    const reserve = params.maxOutputTokens ?? reserveForOutput ?? (info ? Math.min(info.output_tokens_max, Math.floor(window / 4)) : 0);
    const tools = (params.tools ?? []).map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema ?? t.args }));
    const budget = { window, reserve, mdl, tools };
    // The caller's prompt alone first: one too long is refused before any recall.
    await enforce(prompt, budget);

    await ensureSession();
    const memories = await recallFor(query);
    const p = await memory.prompt({
      query: query || undefined,
      sessionId,
      agentId,
      model: mdl,
      windowTokens: window,
      reserveForOutput: reserve,
      memories,
      format: "neutral",
    });
    const systemText = p.messages
      .filter((m) => m.role === "system")
      .map((m) => m.content)
      .join("\n\n");
    // System messages stay together at the front (some providers refuse
    // system messages between turns): ours, the caller's leading ones, then
    // the session's turns, then the rest of the caller's prompt.
    const lead = prompt.findIndex((m) => m.role !== "system");
    const callerSystem = lead === -1 ? prompt : prompt.slice(0, lead);
    const callerRest = lead === -1 ? [] : prompt.slice(lead);
    const turns = [];
    const callerHasHistory = prompt.some((m) => m.role === "assistant" || m.role === "tool");
    if (history === true || (history === "auto" && !callerHasHistory)) {
      // The session's kept turns (not the query: the caller's prompt holds it).
      const kept = p.messages.filter((m) => m.role === "user" || m.role === "assistant");
      if (query && kept.length > 0 && kept[kept.length - 1].role === "user") kept.pop();
      for (const t of kept) turns.push({ role: t.role, content: [{ type: "text", text: t.content }] });
    }
    const ours = systemText.trim() === "" ? [] : [{ role: "system", content: systemText }];
    const next = [...ours, ...callerSystem, ...turns, ...callerRest];
    await enforce(next, budget);
    return { ...params, prompt: next };
  };

  const save = async (params, assistant, lm) => {
    if (!record || sessionId === undefined) return;
    const prompt = Array.isArray(params.prompt) ? params.prompt : [];
    const turns = [];
    // A multi-step call (tools) answers one user turn in several calls: the
    // user turn is recorded by the call that answers it first.
    const last = prompt[prompt.length - 1];
    if (last && last.role === "user" && Array.isArray(last.content)) {
      const text = userText(last);
      if (text.trim() !== "") turns.push({ role: "user", content: text });
    }
    if (assistant.trim() !== "") turns.push({ role: "assistant", content: assistant });
    if (turns.length === 0) return;
    try {
      await ensureSession();
      const mdl = edgemodel(lm);
      await memory.appendMessages(sessionId, turns, mdl !== undefined ? { model: mdl } : undefined);
    } catch (err) {
      if (typeof onRecordError === "function") onRecordError(err);
      else throw err;
    }
  };

  return {
    specificationVersion: "v3",
    transformParams,
    wrapGenerate: async ({ doGenerate, params, model: lm }) => {
      const result = await doGenerate();
      await save(params, resultText(result.content), lm);
      return result;
    },
    wrapStream: async ({ doStream, params, model: lm }) => {
      const { stream, ...rest } = await doStream();
      let text = "";
      const collect = new TransformStream({
        transform(part, controller) {
          if (part && part.type === "text-delta") text += part.delta ?? part.textDelta ?? "";
          controller.enqueue(part);
        },
        async flush() {
          await save(params, text, lm);
        },
      });
      return { stream: stream.pipeThrough(collect), ...rest };
    },
  };
}
