// Every runnable script in examples/ runs to completion against the built
// package (the HTTP one runs in tests/worker/mcp.test.mjs, beside a Worker).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const run = (script) =>
  new Promise((resolve) => execFile(process.execPath, [script], { cwd: ROOT, timeout: 120_000 }, (err, stdout, stderr) => resolve({ code: err ? err.code ?? -1 : 0, stdout, stderr })));

for (const [script, expect] of [
  ["examples/ai-sdk.mjs", /window seat/i],
  ["examples/langgraph.mjs", /./],
  ["examples/mcp-stdio.mjs", /recalled: \[.*window seats/],
]) {
  test(`${script} runs`, async () => {
    const r = await run(script);
    assert.equal(r.code, 0, `${script}\n${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, expect);
  });
}
