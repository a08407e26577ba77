// The Worker's extractor hook (issue 14, point 2): EDGEMEM_EXTRACTOR=http
// POSTs the npm hook's request to an endpoint (here a local server on
// 127.0.0.1) with the key as a bearer token, retries a failing endpoint with
// backoff, and stores what it answers; EDGEMEM_EXTRACTOR=workers-ai asks an
// instruction model through the AI binding (a stand-in that wraps its JSON
// in prose, as models do).
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { startWorker } from "./miniflare.mjs";

const KEY = "extractor-key-0123456789abcdef";
const NS = "?namespace=hook";
const TURNS = [
  { id: "m1", role: "user", content: "Hi there" },
  { id: "m2", role: "user", content: "We are flying to Oslo on the 4th, and I always take the aisle." },
];

async function extracted(call, sid) {
  const r = await call("POST", `/v1/long-term-memory/search${NS}`, { text: "", limit: 100, session_id: { eq: sid } });
  assert.equal(r.status, 200, r.text);
  return r.json.memories;
}

async function poll(call, sid, tries = 60) {
  let got = [];
  for (let i = 0; i < tries && got.length === 0; i++) {
    await new Promise((r) => setTimeout(r, 250));
    got = await extracted(call, sid);
  }
  return got;
}

test("EDGEMEM_EXTRACTOR=http posts the turns to the endpoint, retries its failure, and stores its answer", async () => {
  const seen = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      seen.push({ auth: req.headers.authorization, type: req.headers["content-type"], body: JSON.parse(body) });
      if (seen.length === 1) {
        res.writeHead(503).end("busy");
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify([{ text: "User prefers aisle seats on flights.", kind: "preference", topics: ["travel"], subject: "seat", extracted_from: ["m2"] }]));
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${server.address().port}/extract`;
  const { mf, call } = await startWorker({ bindings: { EDGEMEM_EXTRACTOR: "http", EDGEMEM_EXTRACTOR_URL: url, EDGEMEM_EXTRACTOR_API_KEY: KEY } });
  try {
    const put = await call("PUT", `/v1/working-memory/trip${NS}`, { user_id: "ana", long_term_memory_strategy: { strategy: "preferences", config: {} }, messages: TURNS });
    assert.equal(put.status, 200, put.text);
    const got = await poll(call, "trip");
    assert.deepEqual(got.map((m) => [m.text, m.extraction_strategy, m.extracted_from, m.user_id]), [["User prefers aisle seats on flights.", "preferences", ["m2"], "ana"]]);
    assert.ok(seen.length >= 2, "the first (503) answer was retried");
    assert.equal(seen[0].auth, `Bearer ${KEY}`);
    assert.equal(seen[0].type, "application/json");
    assert.equal(seen[0].body.strategy, "preferences");
    assert.deepEqual(seen[0].body.turns.map((t) => [t.id, t.content]), TURNS.map((t) => [t.id, t.content]));
    // The key is never stored, nor in an episode of the failure.
    const episodes = await call("GET", `/v1/episodes${NS}&limit=100`);
    assert.ok(!episodes.text.includes(KEY));
  } finally {
    await mf.dispose();
    server.close();
  }
});

const AI_STAND_IN = `
class Ai {
  async run(model, input) {
    if (!Array.isArray(input.messages)) throw new Error("chat input expected");
    const transcript = input.messages[1].content;
    if (!/\\[m2\\] user: We are flying to Oslo/.test(transcript)) throw new Error("no transcript: " + transcript);
    if (!/JSON array/.test(input.messages[0].content)) throw new Error("no instructions");
    return { response: "Sure! Here are the memories:\\n\`\`\`json\\n" + JSON.stringify([{ text: "User is flying to Oslo on the 4th.", kind: "event", entities: ["Oslo"] }]) + "\\n\`\`\`" };
  }
}
export default function () { return new Ai(); }
`;

test("EDGEMEM_EXTRACTOR=workers-ai asks the model and reads the JSON out of its prose", async () => {
  const { mf, call } = await startWorker({ ai: AI_STAND_IN, bindings: { EDGEMEM_EXTRACTOR: "workers-ai", EDGEMEM_EMBEDDER: "hash" } });
  try {
    const put = await call("PUT", `/v1/working-memory/oslo${NS}`, { user_id: "ana", long_term_memory_strategy: { strategy: "discrete", config: {} }, messages: TURNS });
    assert.equal(put.status, 200, put.text);
    const got = await poll(call, "oslo");
    assert.deepEqual(got.map((m) => [m.text, m.entities]), [["User is flying to Oslo on the 4th.", ["Oslo"]]]);
  } finally {
    await mf.dispose();
  }
});
