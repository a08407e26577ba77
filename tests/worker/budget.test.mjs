// /v1/budget through the Worker: ranks loaded from the static assets.
import { test } from "node:test";
import assert from "node:assert/strict";
import { startWorker } from "./miniflare.mjs";

test("count and build with the route shapes of issue 3", async () => {
  const { mf, call } = await startWorker();
  try {
    const c = await call("POST", "/v1/budget/count", { text: "Hello, world!", encoding: "cl100k_base" });
    assert.deepEqual(c.json, { tokens: 4, encoding: "cl100k_base" });
    assert.deepEqual((await call("POST", "/v1/budget/count", { text: "<|endoftext|>", model: "gpt-4o" })).json, { tokens: 7, encoding: "o200k_base" });
    assert.equal((await call("POST", "/v1/budget/count", { text: "hello", model: "claude-sonnet-4" })).json.encoding, "estimate");
    const words = (n) => Array(n).fill("word").join(" ");
    const b = await call("POST", "/v1/budget/build", {
      max_tokens: 100,
      encoding: "o200k_base",
      reserve_for_output: 20,
      slots: [
        { name: "history", content: words(40), priority: 5 },
        { name: "system", content: words(10), priority: 10 },
        { name: "memories", content: words(90), priority: 7 },
      ],
    });
    assert.equal(b.status, 200, b.text);
    assert.deepEqual([b.json.used, b.json.left, b.json.window], [80, 0, 100]);
    assert.deepEqual(b.json.slots.map((s) => s.status), ["kept", "truncated", "dropped"]);
    for (const [body, status, code] of [
      [{ text: "x", encoding: "p50k_base" }, 422, "invalid_input"],
      [{ text: 5 }, 422, "invalid_input"],
      [{ text: "x", model: "gpt-99" }, 422, "invalid_input"],
    ]) {
      const r = await call("POST", "/v1/budget/count", body);
      assert.deepEqual([r.status, r.json.code], [status, code], JSON.stringify(body));
    }
    const bad = await call("POST", "/v1/budget/build", { max_tokens: 0, slots: [] });
    assert.deepEqual([bad.status, bad.json.code], [422, "invalid_input"]);
    assert.equal((await call("GET", "/v1/budget/count")).status, 405);
  } finally {
    await mf.dispose();
  }
});
