// The demo site's API reference (www/api.html) in Debian's Chromium, served
// by `wrangler dev` as `make demo` serves it: it loads /openapi.json from
// the Worker, lists every operation, filters them, and shows no error.
//
//   node --test tests/e2e/api-page.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { browserHarness } from "./harness.mjs";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SITE = join(ROOT, "target", "site");
const harness = browserHarness({
  root: ROOT,
  required: [join(SITE, "api.html"), join(SITE, "openapi.json")],
  profilePrefix: "edgemem-e2e-api-",
  viewport: { width: 1280, height: 900 },
  actionTimeoutMs: 10_000,
});

test("the API reference lists every operation of /openapi.json and filters them", { timeout: 90_000 }, async () => {
  const doc = JSON.parse(readFileSync(join(ROOT, "www", "openapi.json"), "utf8"));
  const operations = Object.values(doc.paths).reduce((n, item) => n + Object.keys(item).length, 0);
  const { page, problems } = await harness.openPage();
  await page.goto(new URL("index.html", harness.baseUrl).href);
  await page.click('[data-testid="api-reference-link"]');
  // Cloudflare's asset handling serves /api.html as /api.
  await page.waitForURL(/\/api(\.html)?$/);
  await page.locator("#api-count", { hasText: `(${operations})` }).waitFor();
  assert.equal(await page.locator('[data-testid="api-op"]').count(), operations);
  await page.fill('[data-testid="api-filter"]', "/v1/long-term-memory/search");
  const visible = await page.locator('[data-testid="api-op"]:visible').count();
  assert.ok(visible >= 1 && visible < operations, `${visible} of ${operations} shown`);
  const first = page.locator('[data-testid="api-op"]:visible').first();
  await first.locator("summary").click();
  assert.match(await first.innerText(), /search_mode/);
  assert.deepEqual(problems, []);
  await page.close();
});
