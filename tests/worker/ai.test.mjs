// Workers AI through the Worker (issue 18, point 1): a stand-in `AI` binding
// (a workerd wrapped binding whose class is named `Ai`, as workers-rs checks)
// answers like Workers AI and refuses what the real service would not read.
// Before the fix the Worker sent a JS Map, which the binding sees as `{}`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { startWorker } from "./miniflare.mjs";

// The summarizer echoes a digest of what it received in its summary (the
// parcel numbers of the transcript), so the test reads its input back from
// the session's context. The embedder maps texts
// to one-hot vectors by a rule no lexical embedder follows, so a semantic
// hit proves its vectors were used.
const AI_STAND_IN = `
const HOT = { "User prefers metric units.": 0, "User visited Paris in March.": 1, "User drinks green tea.": 2, "zz-lookup-one": 0, "zz-lookup-two": 1 };
class Ai {
  async run(model, input) {
    if (input instanceof Map || input === null || typeof input !== "object") throw new Error("input is not a plain object");
    if ("messages" in input) {
      const ok = Array.isArray(input.messages) && input.messages.every((m) => typeof m.role === "string" && typeof m.content === "string");
      if (!ok) throw new Error("messages must be [{role, content}]");
      return { response: "STAND-IN " + JSON.stringify({ model, keys: Object.keys(input).sort(), max_tokens: input.max_tokens, roles: input.messages.map((m) => m.role), parcels: input.messages[1].content.match(/P-[0-9]+/g) }) };
    }
    if (!Array.isArray(input.text) || !input.text.every((t) => typeof t === "string")) throw new Error("text must be an array of strings, got " + JSON.stringify(input));
    return {
      shape: [input.text.length, 384],
      data: input.text.map((t) => {
        const v = new Array(384).fill(0);
        v[HOT[t] ?? 3 + (t.length % 300)] = 1;
        return v;
      }),
    };
  }
}
export default function () {
  return new Ai();
}
`;

test("compaction sends Workers AI {messages, max_tokens} with the transcript", async () => {
  const { mf, call } = await startWorker({ ai: AI_STAND_IN });
  try {
    const messages = [];
    for (let i = 0; i < 12; i++) messages.push({ role: i % 2 ? "assistant" : "user", content: `Turn ${i}: parcel P-${i} ships to Porto on day ${i}.` });
    assert.equal((await call("PUT", "/v1/working-memory/chat?namespace=ai", { messages })).status, 200);
    const r = await call("POST", "/v1/working-memory/chat/compact?namespace=ai", {
      context_window_max: 4000, summarize_at_tokens: 150, keep_recent_tokens: 60, summary_tokens_max: 120,
    });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.compacted, true, r.text);
    assert.equal(r.json.summarizer, "hook");
    const context = r.json.session.context;
    assert.ok(context.startsWith("STAND-IN "), context);
    const seen = JSON.parse(context.slice("STAND-IN ".length));
    assert.equal(seen.model, "@cf/meta/llama-3.1-8b-instruct");
    assert.deepEqual(seen.keys, ["max_tokens", "messages"]);
    assert.equal(seen.max_tokens, 120);
    assert.deepEqual(seen.roles, ["system", "user"]);
    const archived = r.json.archived;
    assert.ok(archived >= 1 && archived < 12, r.text);
    // Exactly the compacted turns, in order; the kept ones are not summarized.
    assert.deepEqual(seen.parcels, Array.from({ length: archived }, (_, i) => `P-${i}`));
  } finally {
    await mf.dispose();
  }
});

test("long-term create and semantic search embed through Workers AI with text as an array of strings", async () => {
  const { mf, call } = await startWorker({ ai: AI_STAND_IN, bindings: { EDGEMEM_EMBEDDER: "workers-ai" } });
  try {
    const memories = [
      { id: "units", text: "User prefers metric units." },
      { id: "paris", text: "User visited Paris in March." },
      { id: "tea", text: "User drinks green tea." },
    ];
    const created = await call("POST", "/v1/long-term-memory/?namespace=ai", { memories });
    assert.equal(created.status, 200, created.text);
    // No word in common with any memory: only the stand-in's vectors find it.
    for (const [query, id] of [["zz-lookup-one", "units"], ["zz-lookup-two", "paris"]]) {
      const s = await call("POST", "/v1/long-term-memory/search?namespace=ai", { text: query, search_mode: "semantic", limit: 3 });
      assert.equal(s.status, 200, s.text);
      assert.equal(s.json.memories[0].id, id, s.text);
      assert.ok(s.json.memories[0].dist < 1e-6, s.text);
    }
  } finally {
    await mf.dispose();
  }
});
