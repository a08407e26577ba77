// The Worker's embedders (issue 14, point 7): the distilled static embedder
// from the site's assets is the default and finds a paraphrase; a namespace
// built by another embedder answers 422 embedder_mismatch until
// POST /v1/long-term-memory/reembed moves it; EDGEMEM_EMBEDDER=workers-ai
// embeds through the AI binding (a stand-in) and says so when unbound.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startWorker } from "./miniflare.mjs";

const MEMORIES = [
  { id: "paris", text: "User visited Paris in March 2024 for a conference." },
  { id: "peanuts", text: "User is allergic to peanuts." },
  { id: "units", text: "User prefers metric units for all measurements." },
  { id: "cello", text: "User's daughter Maya plays the cello." },
  { id: "job", text: "User works as a backend engineer at a logistics startup." },
];
const QUERY = { text: "what units does the user like?", limit: 5 };

const AI_STAND_IN = `
class Ai {
  async run(model, input) {
    if (!Array.isArray(input.text)) throw new Error("text must be an array");
    return { shape: [input.text.length, 384], data: input.text.map((t) => Array.from({ length: 384 }, (_, i) => (i === t.length % 384 ? 1 : 0.01))) };
  }
}
export default function () { return new Ai(); }
`;

test("the default embedder finds the paraphrase; another embedder's namespace is refused until reembedded", async () => {
  const dir = mkdtempSync(join(tmpdir(), "edgemem-embedder-"));
  try {
    // Built with the hashed embedder...
    let { mf, call } = await startWorker({ persistDir: dir, bindings: { EDGEMEM_EMBEDDER: "hash" } });
    assert.equal((await call("POST", "/v1/long-term-memory/?namespace=emb", { memories: MEMORIES })).status, 200);
    assert.equal((await call("GET", "/v1/stats?namespace=emb")).json.embedder, "edgemem-hash-v1/384");
    await mf.dispose();
    // ...then served with the default (static) one.
    ({ mf, call } = await startWorker({ persistDir: dir }));
    try {
      const refused = await call("POST", "/v1/long-term-memory/search?namespace=emb", { ...QUERY, search_mode: "semantic" });
      assert.equal(refused.status, 422, refused.text);
      assert.equal(refused.json.code, "embedder_mismatch");
      assert.match(refused.json.detail, /reembed/);
      // With no mode named (auto), the old vectors are left alone: keyword.
      const auto = await call("POST", "/v1/long-term-memory/search?namespace=emb", QUERY);
      assert.equal(auto.status, 200, auto.text);
      assert.equal(auto.json.search_mode, "keyword", auto.text);
      const moved = await call("POST", "/v1/long-term-memory/reembed?namespace=emb", {});
      assert.equal(moved.status, 200, moved.text);
      assert.equal(moved.json.done, true);
      assert.equal(moved.json.reembedded, 5);
      assert.equal(moved.json.previous, "edgemem-hash-v1/384");
      assert.match(moved.json.embedder, /^edgemem-minilm-static-v\d+-192d\+edgemem-hash-v1\/384@/);
      const found = await call("POST", "/v1/long-term-memory/search?namespace=emb", QUERY);
      assert.equal(found.status, 200, found.text);
      assert.equal(found.json.memories[0].id, "units", found.text);
      // The default (auto) now runs hybrid over the static embedder's vectors.
      assert.equal(found.json.search_mode, "hybrid", found.text);
      // A fresh namespace takes the static embedder from the first write.
      assert.equal((await call("POST", "/v1/long-term-memory/?namespace=fresh", { memories: MEMORIES })).status, 200);
      assert.equal((await call("POST", "/v1/long-term-memory/search?namespace=fresh", QUERY)).json.memories[0].id, "units");
    } finally {
      await mf.dispose();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("EDGEMEM_EMBEDDER=workers-ai embeds through the AI binding, and names the missing binding", async () => {
  let { mf, call } = await startWorker({ ai: AI_STAND_IN, bindings: { EDGEMEM_EMBEDDER: "workers-ai" } });
  try {
    assert.equal((await call("POST", "/v1/long-term-memory/?namespace=ai", { memories: MEMORIES })).status, 200);
    assert.equal((await call("GET", "/v1/stats?namespace=ai")).json.embedder, "workers-ai:@cf/baai/bge-small-en-v1.5");
  } finally {
    await mf.dispose();
  }
  ({ mf, call } = await startWorker({ bindings: { EDGEMEM_EMBEDDER: "workers-ai" } }));
  try {
    const r = await call("POST", "/v1/long-term-memory/?namespace=ai", { memories: MEMORIES });
    assert.equal(r.json.code, "hook_failed", r.text);
    assert.match(r.json.detail, /no AI binding/);
  } finally {
    await mf.dispose();
  }
});
