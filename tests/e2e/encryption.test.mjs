// Encryption at rest on the demo page (issue 20), in Chromium: a passphrase
// encrypts the page's IndexedDB memory (no sentinel in any stored byte, a
// reload is locked until the passphrase is typed again, a wrong one is
// decryption_failed); on the Worker backend a new key encrypts the tenant,
// and a request without it is key_required.
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { browserHarness, indexedDbText, switchToWorker } from "./harness.mjs";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SITE = join(ROOT, "target", "site");
const SENTINEL = "Axolotl-Sentinel-6047";
const PASSPHRASE = "a page passphrase, 42";
const WORKER_TOKEN = process.env.EDGEMEM_E2E_TOKEN ?? "";

const harness = browserHarness({
  root: ROOT,
  required: [join(SITE, "pkg", "browser.js"), join(SITE, "app.js")],
  profilePrefix: "edgemem-e2e-crypt-",
  viewport: { width: 1280, height: 900 },
  actionTimeoutMs: 20_000,
});

async function ready(page) {
  await page.goto(harness.baseUrl);
  await page.locator("body[data-ready=true]").waitFor();
}

async function typePassphrase(page, passphrase) {
  await page.fill("#local-passphrase", passphrase);
  await page.press("#local-passphrase", "Enter");
}

test("IndexedDB encrypted under a passphrase: no plaintext stored, locked after a reload, typed errors", { timeout: 120_000 }, async () => {
  const { page, problems } = await harness.openPage();
  await ready(page);
  await page.locator("#encryption-status", { hasText: "plaintext at rest" }).waitFor();
  // Plaintext first, so the passphrase has data to encrypt.
  await page.evaluate(async (s) => {
    const { state } = await import("/page.js");
    await state.memory.putSession("before", { context: `${s} before encryption` });
  }, SENTINEL);
  assert.ok((await indexedDbText(page)).includes(SENTINEL), "the grep sees plaintext");
  await typePassphrase(page, PASSPHRASE);
  await page.locator("#encryption-status", { hasText: "encrypted at rest (AES-256-GCM, key default)" }).waitFor();
  await page.evaluate(async (s) => {
    const { state } = await import("/page.js");
    await state.memory.putSession("after", { context: `${s} after encryption`, messages: [{ role: "user", content: `${s} says hi` }] });
    await state.memory.longTerm.create([{ text: `${s} keeps bees`, user_id: "ana" }]);
  }, SENTINEL);
  const stored = await indexedDbText(page);
  assert.ok(!stored.includes(SENTINEL), "no plaintext sentinel in IndexedDB");
  assert.ok(!stored.includes(PASSPHRASE), "the passphrase is not stored");
  assert.ok(stored.includes("EMX1"), "values are sealed envelopes");
  // A reload holds no key: the page is locked until the passphrase comes back.
  await ready(page);
  await page.locator("#status[data-code=key_required]").waitFor();
  await page.locator("#encryption-status", { hasText: "locked" }).waitFor();
  await typePassphrase(page, "not the passphrase");
  await page.locator("#status[data-code=decryption_failed]").waitFor();
  await typePassphrase(page, PASSPHRASE);
  await page.locator("#encryption-status", { hasText: "encrypted at rest" }).waitFor();
  await page.locator('#session-list [data-session-id="after"]').waitFor();
  const context = await page.evaluate(async () => (await (await import("/page.js")).state.memory.getSession("before")).context);
  assert.ok(context.includes(SENTINEL));
  // Chromium logs the failed opens' rejections nowhere else: no page errors.
  assert.deepEqual(problems.filter((p) => !p.includes("/v1/")), []);
  await page.close();
});

test("Worker backend: a new key encrypts the tenant, requests without it are key_required", { timeout: 120_000 }, async () => {
  const { page } = await harness.openPage();
  await ready(page);
  const namespace = `e2e-crypt-${Date.now()}`;
  await switchToWorker(page, namespace);
  await page.locator("#encryption-status", { hasText: "plaintext at rest" }).waitFor();
  await page.click("#new-encryption-key");
  await page.locator("#encryption-status", { hasText: "encrypted at rest (AES-256-GCM, key k" }).waitFor();
  const key = await page.inputValue("#worker-encryption-key");
  assert.match(key, /^[A-Za-z0-9_-]{43}$/);
  await page.fill("#session-id-input", "sealed");
  await page.click("#create-session");
  await page.locator('#session-list [data-session-id="sealed"]').waitFor();
  const auth = WORKER_TOKEN ? { authorization: `Bearer ${WORKER_TOKEN}` } : {};
  const url = new URL(`v1/working-memory/sealed?namespace=${namespace}`, harness.baseUrl);
  const without = await fetch(url, { headers: auth });
  assert.equal(without.status, 401);
  assert.equal((await without.json()).code, "key_required");
  const withKey = await fetch(url, { headers: { ...auth, "x-edgemem-encryption-key": key } });
  assert.equal(withKey.status, 200);
  // The live panel follows with the key as a WebSocket subprotocol.
  await page.locator("#live-status", { hasText: "following" }).waitFor();
  await page.close();
});
