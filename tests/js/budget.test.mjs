// The context budget through the built package.
import { test } from "node:test";
import assert from "node:assert/strict";
import { buildContext, fitsContext, model, Tokenizer, EdgememError } from "edgemem";

const words = (n) => Array(n).fill("word").join(" ");

test("exact budgets: priority order, threshold 7, reserve, and the report", async () => {
  const r = await buildContext({
    max_tokens: 100,
    encoding: "o200k_base",
    reserve_for_output: 20,
    slots: [
      { name: "history", content: words(40), priority: 5 },
      { name: "system", content: words(10), priority: 10 },
      { name: "memories", content: words(90), priority: 7 },
    ],
  });
  assert.deepEqual(
    r.slots.map((s) => [s.name, s.status, s.tokens]),
    [["system", "kept", 13], ["memories", "truncated", 67], ["history", "dropped", 0]],
  );
  assert.deepEqual([r.used, r.left, r.window, r.encoding, r.percent_used], [80, 0, 100, "o200k_base", 80]);
  const t = await Tokenizer.load("o200k_base");
  assert.equal(t.count(r.context.split("\n\n")[1]), 64, "the truncated slot holds exactly what was reported");
});

test("models pick their tokenizer or the estimator; tools are counted", async () => {
  assert.equal(model("gpt-4o-2024-08-06").encoding, "o200k_base");
  assert.equal(model("claude-sonnet-4-20250514").encoding, null);
  assert.equal(model("no-such-model"), null);
  const claude = await buildContext({ model: "claude-sonnet-4", slots: [{ name: "a", content: "hello world", priority: 5 }] });
  assert.equal(claude.encoding, "estimate");
  assert.equal(claude.window, 200_000);
  const tools = [{ type: "function", function: { name: "place_bet", parameters: { type: "object", properties: { stake: { type: "string" } } } } }];
  const gpt = await buildContext({ model: "gpt-4o", slots: [], tools });
  assert.equal(gpt.encoding, "o200k_base");
  assert.ok(gpt.tools > 10 && gpt.used === gpt.tools);
});

test("truncation keeps whole characters, including astral ones in JS strings", async () => {
  const text = "😀👩‍👩‍👧中文字符".repeat(30);
  for (let max = 5; max < 40; max++) {
    const r = await buildContext({ max_tokens: max, encoding: "cl100k_base", message_overhead_tokens: 0, slots: [{ name: "s", content: text, priority: 9 }] });
    const kept = r.context;
    assert.ok(text.startsWith(kept), `budget ${max}`);
    assert.ok(!/[\uD800-\uDBFF]$/.test(kept), "no lone high surrogate at the cut");
    assert.ok(r.used <= max);
  }
});

test("bad budgets get typed errors", async () => {
  const bad = [
    [{ slots: [] }, "invalid_input"],
    [{ max_tokens: 0, slots: [] }, "invalid_input"],
    [{ max_tokens: -5, slots: [] }, "invalid_input"],
    [{ max_tokens: 1e12, slots: [] }, "invalid_input"],
    [{ max_tokens: 100, reserve_for_output: 100, slots: [] }, "invalid_input"],
    [{ model: "gpt-9-turbo", slots: [] }, "invalid_input"],
    [{ max_tokens: 100, encoding: "p50k_base", slots: [] }, "invalid_input"],
    [{ max_tokens: 100, slots: [{ name: "a", content: "x", priority: 11 }] }, "invalid_input"],
    [{ max_tokens: 100, slots: [{ name: "a", content: "x", priority: 5 }], extra: 1 }, "invalid_input"],
    [{ max_tokens: NaN, slots: [] }, "invalid_input"],
  ];
  for (const [req, code] of bad) {
    await assert.rejects(buildContext(req), (e) => e instanceof EdgememError && e.code === code, JSON.stringify(req));
  }
});

test("a counter supplied from JS, and the fit check", async () => {
  const words = (t) => (t.match(/\S+/g) ?? []).length; // one token per word
  const r = await buildContext(
    { max_tokens: 30, message_overhead_tokens: 0, slots: [{ name: "a", content: "one two three four five six seven eight nine ten ".repeat(5), priority: 9 }] },
    { counter: words },
  );
  assert.equal(r.encoding, "custom");
  assert.equal(r.slots[0].status, "truncated");
  assert.equal(words(r.context), 30, "cut at the largest prefix the counter accepts");
  await assert.rejects(buildContext({ max_tokens: 10, slots: [{ name: "a", content: "x", priority: 1 }] }, { counter: () => NaN }), (e) => e.code === "invalid_input");
  await assert.rejects(buildContext({ max_tokens: 10, slots: [{ name: "a", content: "x", priority: 1 }] }, { counter: () => { throw new Error("boom"); } }), (e) => e.code === "invalid_input");

  const messages = [{ role: "system", content: "You are terse." }, { role: "user", content: "Hello, world!" }];
  const fit = await fitsContext({ model: "gpt-4o", messages });
  // OpenAI chat format: 3 per message + role + content, and 3 for the reply.
  const t = await Tokenizer.load("o200k_base");
  const want = 3 + messages.reduce((n, m) => n + 3 + t.count(m.role) + t.count(m.content), 0);
  assert.deepEqual([fit.fits, fit.tokens, fit.limit, fit.encoding], [true, want, 128_000, "o200k_base"]);
  const tight = await fitsContext({ max_tokens: want, reserve_for_output: 1, messages, encoding: "o200k_base" });
  assert.equal(tight.fits, false);
  assert.equal((await fitsContext({ max_tokens: 100, messages }, { counter: words })).encoding, "custom");
  await assert.rejects(fitsContext({ messages }), (e) => e.code === "invalid_input");
});
