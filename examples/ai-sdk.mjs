// edgemem with the Vercel AI SDK, offline: `node examples/ai-sdk.mjs`.
//
// A mock model (the AI SDK's own `MockLanguageModelV3`) stands in for a real
// provider; swap in e.g. `openai("gpt-4o")` from `@ai-sdk/openai` and the
// rest stays the same. Needs `ai` (6 or 7) and `zod` 4 installed next to
// edgemem.
import { generateText, streamText, wrapLanguageModel, simulateReadableStream, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { Memory, MemoryStore } from "edgemem";
import { memoryMiddleware, memoryTools } from "edgemem/ai";

const memory = await Memory.open({ store: new MemoryStore() });
await memory.agent("travel").setPrompt("You are Ana's travel assistant. Answer in one sentence.");
await memory.longTerm.create([{ text: "Ana prefers window seats on long flights.", user_id: "ana" }]);

const usage = { inputTokens: { total: 0, noCache: 0 }, outputTokens: { total: 0, text: 0 } };
const reply = (text) => ({ content: [{ type: "text", text }], finishReason: { unified: "stop" }, usage, warnings: [] });
const mock = new MockLanguageModelV3({
  modelId: "gpt-4o", // edgemem knows its window and tokenizer
  doGenerate: [
    reply("I'd book you a window seat."),
    { content: [{ type: "tool-call", toolCallId: "c1", toolName: "get_current_datetime", input: "{}" }], finishReason: { unified: "tool-calls" }, usage, warnings: [] },
    reply("It's a fine time to fly."),
  ],
  doStream: async () => ({
    stream: simulateReadableStream({
      chunks: [
        { type: "text-start", id: "t" },
        { type: "text-delta", id: "t", delta: "Tokyo, " },
        { type: "text-delta", id: "t", delta: "window seat." },
        { type: "text-end", id: "t" },
        { type: "finish", finishReason: { unified: "stop" }, usage },
      ],
    }),
  }),
});

// 1. The middleware: memories and the agent's prompt in, turns recorded, budget enforced.
const model = wrapLanguageModel({
  model: mock,
  middleware: memoryMiddleware(memory, { sessionId: "trip", userId: "ana", agentId: "travel" }),
});
const first = await generateText({ model, prompt: "Which seat should I book to Tokyo?" });
console.log("reply:", first.text);
console.log("the model saw:", JSON.stringify(mock.doGenerateCalls[0].prompt[0].content));

// 2. Streaming records the streamed text too.
const stream = streamText({ model, prompt: "Remind me where I'm going." });
let streamed = "";
for await (const delta of stream.textStream) streamed += delta;
console.log("streamed:", streamed);

// 3. The memory tools, executed by edgemem.
const tools = memoryTools(memory, { sessionId: "trip", userId: "ana", agentId: "travel" });
const withTools = await generateText({ model, tools, stopWhen: stepCountIs(3), prompt: "What time is it?" });
console.log("tool result:", JSON.stringify(withTools.steps[0].toolResults[0].output), "->", withTools.text);

// 4. Too long for the window: refused before the model is called.
try {
  await generateText({ model, prompt: "Long story. ".repeat(100), maxOutputTokens: 127_900 });
} catch (err) {
  console.log("refused:", err.code, "-", err.message);
}

const session = await memory.getSession("trip");
console.log("session turns:", session.messages.map((m) => `${m.role}: ${m.content}`));
