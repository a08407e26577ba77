// `edgemem/ai` against the real AI SDK (ai 6, `MockLanguageModelV3` from
// `ai/test`, no network): the middleware puts the system prompt and the
// recalled memories in the prompt, records both turns (generate and
// stream), and refuses an over-budget prompt before the model is called;
// `memoryTools` runs real tool calls, turns bad input into tool errors, and
// its zod schemas say what the tool table's JSON Schemas say.
import { test } from "node:test";
import assert from "node:assert/strict";
import { generateText, streamText, wrapLanguageModel, simulateReadableStream, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";
import { Memory, MemoryStore } from "edgemem";
import { memoryMiddleware, memoryTools, jsonSchemaToZod } from "edgemem/ai";

const SYSTEM = "You are Ana's travel assistant. Answer in one sentence.";
const FACT = "Ana prefers window seats on long flights.";

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};
const stop = { unified: "stop", raw: undefined };
const textResult = (text) => ({ content: [{ type: "text", text }], finishReason: stop, usage, warnings: [] });
const toolCallResult = (toolName, input, toolCallId = "call-1") => ({
  content: [{ type: "tool-call", toolCallId, toolName, input: JSON.stringify(input) }],
  finishReason: { unified: "tool-calls", raw: undefined },
  usage,
  warnings: [],
});

async function openMemory() {
  const memory = await Memory.open({ store: new MemoryStore() });
  await memory.agent("travel").setPrompt(SYSTEM);
  await memory.longTerm.create([
    { text: FACT, user_id: "ana" },
    { text: "Ana lives in Lisbon.", user_id: "ana" },
    { text: "Bob prefers aisle seats.", user_id: "bob" },
  ]);
  return memory;
}

function middlewareFor(memory, extra = {}) {
  return memoryMiddleware(memory, { sessionId: "trip", userId: "ana", agentId: "travel", model: "gpt-4o", ...extra });
}

function systemOf(prompt) {
  return prompt.filter((m) => m.role === "system").map((m) => m.content).join("\n");
}

async function rejectsWith(promise, code) {
  await assert.rejects(promise, (err) => {
    assert.equal(err.code, code, `${err.name}: ${err.message}`);
    return true;
  });
}

test("generateText: the system prompt and the recalled memory reach the model; both turns are recorded", async () => {
  const memory = await openMemory();
  const mock = new MockLanguageModelV3({ doGenerate: [textResult("Booked you a window seat."), textResult("Lisbon it is.")] });
  const model = wrapLanguageModel({ model: mock, middleware: middlewareFor(memory) });

  const r = await generateText({ model, prompt: "Which seat should I book for my flight to Tokyo?" });
  assert.equal(r.text, "Booked you a window seat.");
  const prompt = mock.doGenerateCalls[0].prompt;
  assert.equal(prompt[0].role, "system", JSON.stringify(prompt));
  assert.match(prompt[0].content, /travel assistant/);
  assert.match(prompt[0].content, /Relevant long-term memories:[\s\S]*window seats/);
  assert.doesNotMatch(systemOf(prompt), /Bob/, "another user's memory was recalled");
  assert.deepEqual([prompt.at(-1).role, prompt.at(-1).content], ["user", [{ type: "text", text: "Which seat should I book for my flight to Tokyo?" }]]);

  const session = await memory.getSession("trip");
  assert.deepEqual(session.messages.map((m) => [m.role, m.content]), [
    ["user", "Which seat should I book for my flight to Tokyo?"],
    ["assistant", "Booked you a window seat."],
  ]);
  assert.equal(session.user_id, "ana");

  // The next call sends the new user turn alone: the session's turns come back in.
  await generateText({ model, prompt: "And where do I fly from?" });
  const second = mock.doGenerateCalls[1].prompt;
  assert.deepEqual(second.slice(1).map((m) => [m.role, m.content[0].text]), [
    ["user", "Which seat should I book for my flight to Tokyo?"],
    ["assistant", "Booked you a window seat."],
    ["user", "And where do I fly from?"],
  ]);
  assert.equal((await memory.getSession("trip")).messages.length, 4);
});

test("the caller's own history is not doubled, and its system message stays with ours at the front", async () => {
  const memory = await openMemory();
  await memory.getOrCreateSession("trip", { user_id: "ana" });
  await memory.appendMessages("trip", [{ role: "user", content: "Hi" }, { role: "assistant", content: "Hello Ana" }]);
  const mock = new MockLanguageModelV3({ doGenerate: textResult("Sure.") });
  const model = wrapLanguageModel({ model: mock, middleware: middlewareFor(memory) });
  await generateText({
    model,
    system: "Be brief.",
    messages: [
      { role: "user", content: "Hi" },
      { role: "assistant", content: "Hello Ana" },
      { role: "user", content: "Book the seat I like." },
    ],
  });
  const prompt = mock.doGenerateCalls[0].prompt;
  assert.deepEqual(prompt.map((m) => m.role), ["system", "system", "user", "assistant", "user"]);
  assert.equal(prompt[1].content, "Be brief.");
  assert.equal((await memory.getSession("trip")).messages.length, 4, "only the new user turn and the reply are appended");
});

test("streamText: the streamed text is recorded when the stream finishes", async () => {
  const memory = await openMemory();
  const chunks = [
    { type: "stream-start", warnings: [] },
    { type: "text-start", id: "t1" },
    { type: "text-delta", id: "t1", delta: "A window " },
    { type: "text-delta", id: "t1", delta: "seat, " },
    { type: "text-delta", id: "t1", delta: "as you like." },
    { type: "text-end", id: "t1" },
    { type: "finish", finishReason: stop, usage },
  ];
  const mock = new MockLanguageModelV3({ doStream: async () => ({ stream: simulateReadableStream({ chunks }) }) });
  const model = wrapLanguageModel({ model: mock, middleware: middlewareFor(memory) });
  const r = streamText({ model, prompt: "Which seat should I book?" });
  let streamed = "";
  for await (const delta of r.textStream) streamed += delta;
  assert.equal(streamed, "A window seat, as you like.");
  assert.match(systemOf(mock.doStreamCalls[0].prompt), /travel assistant[\s\S]*window seats/);
  const session = await memory.getSession("trip");
  assert.deepEqual(session.messages.map((m) => [m.role, m.content]), [
    ["user", "Which seat should I book?"],
    ["assistant", "A window seat, as you like."],
  ]);
});

test("an over-budget prompt is refused with limit_exceeded before the model is called", async () => {
  const memory = await openMemory();
  const mock = new MockLanguageModelV3({ doGenerate: textResult("never"), doStream: async () => assert.fail("doStream was called") });
  const model = wrapLanguageModel({ model: mock, middleware: middlewareFor(memory, { windowTokens: 400 }) });
  const long = "Please remember this detail about my itinerary. ".repeat(60);
  await rejectsWith(generateText({ model, prompt: long }), "limit_exceeded");
  assert.equal(mock.doGenerateCalls.length, 0);

  // It fits alone, but not with the output it asks room for.
  const short = "Which seat should I book?";
  await rejectsWith(generateText({ model, prompt: short, maxOutputTokens: 390 }), "limit_exceeded");
  for (const maxOutputTokens of [399, 400, 5000]) await rejectsWith(generateText({ model, prompt: short, maxOutputTokens }), "limit_exceeded");
  assert.equal(mock.doGenerateCalls.length, 0);
  const ok = await generateText({ model, prompt: short, maxOutputTokens: 100 });
  assert.equal(ok.text, "never");
  assert.equal(mock.doGenerateCalls.length, 1);

  // Streaming is refused the same way.
  let error;
  const r = streamText({ model, prompt: long, onError: ({ error: e }) => (error = e) });
  for await (const _ of r.fullStream); // eslint-disable-line no-unused-vars
  assert.equal(error?.code, "limit_exceeded", String(error));
  assert.equal(mock.doStreamCalls.length, 0);

  // Nothing was recorded for the refused calls.
  assert.equal((await memory.getSession("trip")).messages.length, 2);
});

test("the window comes from the wrapped model's id when edgemem knows it; otherwise one must be named", async () => {
  const memory = await openMemory();
  const known = new MockLanguageModelV3({ modelId: "gpt-4o-mini", doGenerate: textResult("ok") });
  await generateText({ model: wrapLanguageModel({ model: known, middleware: memoryMiddleware(memory, { sessionId: "s1" }) }), prompt: "hi" });
  assert.equal(known.doGenerateCalls.length, 1);
  const unknown = new MockLanguageModelV3({ doGenerate: textResult("ok") });
  await rejectsWith(generateText({ model: wrapLanguageModel({ model: unknown, middleware: memoryMiddleware(memory, { sessionId: "s2" }) }), prompt: "hi" }), "invalid_input");
  assert.equal(unknown.doGenerateCalls.length, 0);
  await generateText({ model: wrapLanguageModel({ model: unknown, middleware: memoryMiddleware(memory, { sessionId: "s2", windowTokens: 8000 }) }), prompt: "hi" });
  assert.equal(unknown.doGenerateCalls.length, 1);
});

test("memoryTools: a tool call is executed by edgemem and its result reaches the next step", async () => {
  const memory = await openMemory();
  await memory.getOrCreateSession("trip", { user_id: "ana" });
  await memory.appendMessages("trip", [{ role: "user", content: "I fly to Tokyo on May 3." }]);
  const tools = await memoryTools(memory, { sessionId: "trip", userId: "ana" });
  assert.ok(tools.get_current_datetime && tools.get_working_memory, Object.keys(tools).join(", "));
  for (const t of Object.values(tools)) assert.equal(typeof t.execute, "function");

  const mock = new MockLanguageModelV3({
    doGenerate: [
      toolCallResult("get_working_memory", { session_id: "trip" }, "c1"),
      textResult("You fly to Tokyo on May 3."),
    ],
  });
  const r = await generateText({ model: mock, tools, stopWhen: stepCountIs(3), prompt: "When do I fly?" });
  assert.equal(r.text, "You fly to Tokyo on May 3.");
  assert.equal(r.steps.length, 2);
  const [result] = r.steps[0].toolResults;
  assert.equal(result.toolName, "get_working_memory");
  assert.equal(result.output.messages[0].content, "I fly to Tokyo on May 3.");
  const toolMessage = mock.doGenerateCalls[1].prompt.find((m) => m.role === "tool");
  assert.ok(toolMessage, JSON.stringify(mock.doGenerateCalls[1].prompt));
  assert.equal(toolMessage.content[0].toolCallId, "c1");
  assert.match(JSON.stringify(toolMessage.content[0].output), /I fly to Tokyo on May 3\./);

  const clock = new MockLanguageModelV3({ doGenerate: [toolCallResult("get_current_datetime", {}), textResult("done")] });
  const c = await generateText({ model: clock, tools, stopWhen: stepCountIs(3), prompt: "What time is it?" });
  assert.match(c.steps[0].toolResults[0].output.now, /^\d{4}-\d{2}-\d{2}T/);
});

test("memoryTools and memoryMiddleware together: one user turn and one reply are recorded over a tool step", async () => {
  const memory = await openMemory();
  const tools = await memoryTools(memory, { sessionId: "trip" });
  const mock = new MockLanguageModelV3({ doGenerate: [toolCallResult("get_current_datetime", {}), textResult("It is morning.")] });
  const model = wrapLanguageModel({ model: mock, middleware: middlewareFor(memory) });
  const r = await generateText({ model, tools, stopWhen: stepCountIs(3), prompt: "What time is it?" });
  assert.equal(r.text, "It is morning.");
  assert.match(systemOf(mock.doGenerateCalls[1].prompt), /travel assistant/);
  const session = await memory.getSession("trip");
  assert.deepEqual(session.messages.map((m) => [m.role, m.content]), [
    ["user", "What time is it?"],
    ["assistant", "It is morning."],
  ]);
});

test("bad tool input and edgemem's refusals are tool errors, not crashes", async () => {
  const memory = await openMemory();
  const tools = await memoryTools(memory, { sessionId: "trip" });
  const mock = new MockLanguageModelV3({
    doGenerate: [
      {
        ...toolCallResult("get_current_datetime", {}),
        content: [
          { type: "tool-call", toolCallId: "bad", toolName: "get_working_memory", input: JSON.stringify({ recent_messages_limit: -1 }) },
          { type: "tool-call", toolCallId: "junk", toolName: "get_account_balance", input: "{not json" },
          { type: "tool-call", toolCallId: "missing", toolName: "get_long_term_memory", input: JSON.stringify({ memory_id: "nope" }) },
        ],
      },
      textResult("Sorry, that failed."),
    ],
  });
  const r = await generateText({ model: mock, tools, stopWhen: stepCountIs(3), prompt: "Show my session." });
  assert.equal(r.text, "Sorry, that failed.");
  const errors = r.steps[0].content.filter((p) => p.type === "tool-error");
  assert.deepEqual(errors.map((e) => e.toolCallId).sort(), ["bad", "junk", "missing"]);
  const missing = errors.find((e) => e.toolCallId === "missing");
  assert.equal(missing.error.code, "not_found", String(missing.error));
  // The model is told about each error in the next step.
  const toolMessage = mock.doGenerateCalls[1].prompt.find((m) => m.role === "tool");
  assert.equal(toolMessage.content.length, 3);
  assert.ok(toolMessage.content.every((p) => p.output.type === "error-text" || p.output.type === "error-json"), JSON.stringify(toolMessage.content));
});

// ---------------------------------------------------------------------------
// JSON Schema -> zod

/** What the comparison looks at: types, required, bounds, enums, patterns, strictness. */
const KEYS = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength", "pattern", "minItems", "maxItems", "multipleOf"];

/** A schema as its non-null variants (`type: [t, "null"]`, anyOf, oneOf) and whether null is allowed. */
function variants(s) {
  const list = s.anyOf ?? s.oneOf;
  if (list) {
    const inner = list.map(variants);
    return { nullable: inner.some((v) => v.nullable), list: inner.flatMap((v) => v.list) };
  }
  if (Array.isArray(s.type)) {
    const rest = s.type.filter((t) => t !== "null");
    return { nullable: rest.length < s.type.length, list: rest.map((t) => ({ ...s, type: t })) };
  }
  if (s.type === "null") return { nullable: true, list: [] };
  if (s.enum?.includes(null)) return { nullable: true, list: [{ ...s, enum: s.enum.filter((v) => v !== null) }] };
  return { nullable: false, list: [s] };
}

function kind(s) {
  if (s.const !== undefined) return `const:${JSON.stringify(s.const)}`;
  if (s.enum) return `enum:${JSON.stringify(s.enum.map((v) => JSON.stringify(v)).sort())}`;
  if (s.type === undefined) return s.properties ? "object" : "any";
  return s.type;
}

/** Asserts that `got` (zod's JSON Schema) agrees with `want` (the source) at `path`. */
function agree(want, got, path) {
  const w = variants(want);
  const g = variants(got);
  assert.equal(g.nullable, w.nullable, `${path}: nullable`);
  assert.deepEqual(g.list.map(kind), w.list.map(kind), `${path}: types`);
  w.list.forEach((v, i) => agreeOne(v, g.list[i], `${path}${w.list.length > 1 ? `|${i}` : ""}`));
  if (want.description !== undefined) assert.equal(got.description ?? g.list[0]?.description, want.description, `${path}: description`);
}

function agreeOne(want, got, path) {
  for (const k of KEYS) if (want[k] !== undefined) assert.equal(got[k], want[k], `${path}: ${k}`);
  if (kind(want) === "object") {
    assert.deepEqual([...(got.required ?? [])].sort(), [...(want.required ?? [])].sort(), `${path}: required`);
    assert.deepEqual(Object.keys(got.properties ?? {}).sort(), Object.keys(want.properties ?? {}).sort(), `${path}: properties`);
    for (const [k, sub] of Object.entries(want.properties ?? {})) agree(sub, got.properties[k], `${path}.${k}`);
    if (want.additionalProperties === false) assert.equal(got.additionalProperties, false, `${path}: additionalProperties`);
    else assert.notEqual(got.additionalProperties, false, `${path}: additionalProperties`);
    if (want.additionalProperties && typeof want.additionalProperties === "object") agree(want.additionalProperties, got.additionalProperties, `${path}{*}`);
  }
  if (kind(want) === "array" && want.items) agree(want.items, got.items, `${path}[]`);
}

function roundTrip(schema) {
  return z.toJSONSchema(jsonSchemaToZod(schema), { io: "input", unrepresentable: "any" });
}

test("every tool schema survives JSON Schema -> zod -> JSON Schema (types, required, bounds)", async () => {
  const memory = await openMemory();
  const schemas = await memory.toolSchemas({ format: "anthropic" });
  assert.ok(schemas.length >= 6);
  for (const s of schemas) {
    const source = s.input_schema ?? s.inputSchema;
    agree(source, roundTrip(source), s.name);
  }
  // The tools hold the same zod schemas, synchronously, from the generated table.
  const tools = memoryTools(memory);
  assert.ok(!(tools instanceof Promise));
  assert.deepEqual(Object.keys(memoryTools(memory, { only: ["count_tokens", "ledger_transfer"] })).sort(), ["count_tokens", "ledger_transfer"]);
  assert.deepEqual(Object.keys(tools).sort(), schemas.map((s) => s.name).sort());
  for (const s of schemas) agree(s.input_schema ?? s.inputSchema, z.toJSONSchema(tools[s.name].inputSchema, { io: "input" }), `tool ${s.name}`);
});

test("the converter covers the keywords the table may use, and falls back to unknown for the rest", () => {
  const source = {
    type: "object",
    description: "A search.",
    additionalProperties: false,
    required: ["text", "limit", "mode"],
    properties: {
      text: { type: "string", minLength: 1, maxLength: 4096, description: "What to look for." },
      id: { type: "string", pattern: "^[A-Za-z0-9_.:-]{1,128}$" },
      limit: { type: "integer", minimum: 1, maximum: 100 },
      alpha: { type: "number", exclusiveMinimum: 0, exclusiveMaximum: 1 },
      mode: { type: "string", enum: ["semantic", "keyword", "hybrid"] },
      version: { const: 2 },
      flag: { type: "boolean" },
      user_id: { type: ["string", "null"], maxLength: 128 },
      topics: { type: "array", items: { type: "string", maxLength: 64 }, minItems: 1, maxItems: 32 },
      when: { anyOf: [{ type: "string" }, { type: "integer", minimum: 0 }] },
      maybe: { oneOf: [{ type: "number", maximum: 5 }, { type: "null" }] },
      level: { enum: [1, 2, "three", null] },
      data: { type: "object" },
      tags: { type: "object", additionalProperties: { type: "string" } },
      filter: { type: "object", properties: { eq: { type: "string" } }, additionalProperties: true },
      anything: { description: "No type at all." },
    },
  };
  agree(source, roundTrip(source), "source");

  const zs = jsonSchemaToZod(source);
  assert.equal(zs.safeParse({ text: "x", limit: 5, mode: "hybrid" }).success, true);
  assert.equal(zs.safeParse({ text: "x", limit: 5, mode: "hybrid", extra: 1 }).success, false, "additionalProperties false");
  assert.equal(zs.safeParse({ text: "x", limit: 0, mode: "hybrid" }).success, false, "minimum");
  assert.equal(zs.safeParse({ text: "x", limit: 1.5, mode: "hybrid" }).success, false, "integer");
  assert.equal(zs.safeParse({ text: "x", limit: 5, mode: "fuzzy" }).success, false, "enum");
  assert.equal(zs.safeParse({ text: "x", limit: 5, mode: "hybrid", id: "a b" }).success, false, "pattern");
  assert.equal(zs.safeParse({ text: "x", limit: 5, mode: "hybrid", user_id: null, maybe: null, when: 3, level: null, anything: [1] }).success, true);
  assert.equal(zs.safeParse({ text: "x", limit: 5, mode: "hybrid", alpha: 1 }).success, false, "exclusiveMaximum");
  assert.equal(zs.safeParse({ text: "x", limit: 5, mode: "hybrid", topics: [] }).success, false, "minItems");
  assert.equal(zs.safeParse({ text: "x", limit: 5, mode: "hybrid", tags: { a: 1 } }).success, false, "additionalProperties schema");
  assert.equal(zs.safeParse({ text: "x", limit: 5, mode: "hybrid", filter: { eq: "a", other: 1 } }).success, true, "additionalProperties true");

  // Draft 4's boolean exclusive bounds.
  const d4 = jsonSchemaToZod({ type: "number", minimum: 0, exclusiveMinimum: true });
  assert.equal(d4.safeParse(0).success, false);
  assert.equal(d4.safeParse(0.1).success, true);

  // What it does not know never throws.
  for (const odd of [
    null, undefined, true, 42, "string", [], {},
    { type: "frobnicate" }, { $ref: "#/definitions/x" }, { allOf: [{ type: "string" }, { minLength: 2 }] },
    { type: "string", pattern: "(?<unclosed" }, { type: "array", items: [{ type: "string" }] },
    { enum: [{ a: 1 }] }, { const: { a: 1 } }, { type: "object", properties: { a: { type: "wat" } }, required: ["a"] },
    { type: "integer", minimum: "zero" }, { not: { type: "string" } }, { if: {}, then: {}, else: {} },
  ]) {
    const s = jsonSchemaToZod(odd);
    assert.equal(typeof s.safeParse, "function", JSON.stringify(odd));
  }
  assert.equal(jsonSchemaToZod(false).safeParse(1).success, false);
  const deep = [...Array(100)].reduce((items) => ({ type: "array", items }), { type: "string" });
  assert.equal(typeof jsonSchemaToZod(deep).safeParse, "function");
});

test("memoryTools refuses something that is not a Memory", async () => {
  assert.throws(() => memoryTools({}), (err) => err.code === "invalid_input");
  assert.throws(() => memoryTools(fakeMemoryForTools(), { only: "search" }), (err) => err.code === "invalid_input");
  assert.throws(() => memoryMiddleware(null), (err) => err.code === "invalid_input");
});

function fakeMemoryForTools() {
  return { resolveFunctionCall: async () => ({}) };
}
