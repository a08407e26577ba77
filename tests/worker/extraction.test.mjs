// Background extraction through the Worker (issue 14): a session with a
// `long_term_memory_strategy` is extracted on the Durable Object's alarm
// after its writes go quiet, with the offline rules; no request waits for
// it, and a restart does not extract the same turns again.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startWorker } from "./miniflare.mjs";

const persistDir = mkdtempSync(join(tmpdir(), "edgemem-extract-"));
test.after(() => rmSync(persistDir, { recursive: true, force: true }));

const NS = "?namespace=extract";

async function extracted(call) {
  const r = await call("POST", `/v1/long-term-memory/search${NS}`, { text: "", limit: 100, session_id: { eq: "trip" } });
  assert.equal(r.status, 200, r.text);
  return r.json.memories;
}

test("the alarm extracts a quiet session once, with the offline rules", async () => {
  let { mf, call } = await startWorker({ persistDir });
  try {
    const put = await call("PUT", `/v1/working-memory/trip${NS}`, {
      user_id: "ana",
      long_term_memory_strategy: { strategy: "discrete", config: {} },
      messages: [
        { id: "m1", role: "user", content: "Hello!" },
        { id: "m2", role: "user", content: "I prefer metric units." },
        { id: "m3", role: "assistant", content: "Noted, metric it is." },
      ],
    });
    assert.equal(put.status, 200, put.text);
    assert.equal((await extracted(call)).length, 0, "the PUT answered before any extraction");
    let got = [];
    for (let i = 0; i < 40 && got.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 250));
      got = await extracted(call);
    }
    assert.ok(got.some((m) => /metric units/i.test(m.text) && m.extracted_from.includes("m2") && m.user_id === "ana"), JSON.stringify(got));
    assert.ok(got.every((m) => m.extraction_strategy === "discrete" && m.session_id === "trip"));
    assert.ok(!got.some((m) => /hello/i.test(m.text)), "a greeting makes no memory");
    const count = got.length;
    await mf.dispose();
    ({ mf, call } = await startWorker({ persistDir }));
    await new Promise((r) => setTimeout(r, 3_000));
    assert.equal((await extracted(call)).length, count, "a restart does not extract the same turns again");
  } finally {
    await mf.dispose();
  }
});
