// Key rotation under SIGKILL against the real Worker (issue 20): a tenant
// encrypted under a key is rotated to a new one while appends run, and the
// workerd runtime is killed at a random point of the rotation, then started
// again on the same directory. After each restart:
//   - the same rotate request (current key, new key) succeeds, whatever the
//     kill interrupted (before the new header, after it, after the snapshot,
//     after the old key was dropped);
//   - every acknowledged append is there, under the new key, and the old key
//     is refused (decryption_failed);
//   - no plaintext sentinel is in any persisted byte.
//
// EDGEMEM_CHAOS_SEED=N replays the kill schedule.
import { test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes, randomInt } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { spawnWrangler, prng } from "./chaos-harness.mjs";
import { filesHolding } from "../e2e/wrangler-dev.mjs";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SEED = process.env.EDGEMEM_CHAOS_SEED !== undefined ? Number(process.env.EDGEMEM_CHAOS_SEED) : randomInt(2 ** 31);
const ROUNDS = 4;
const SESSIONS = 60;
const SENTINEL = "Okapi-Rotation-8812";
const Q = "?namespace=rotchaos";

const newKey = () => randomBytes(32).toString("base64url");

async function call(base, method, path, { body, key, newKey: next } = {}) {
  const headers = {};
  if (body !== undefined) headers["content-type"] = "application/json";
  if (key) headers["x-edgemem-encryption-key"] = key;
  if (next) headers["x-edgemem-new-encryption-key"] = next;
  try {
    const r = await fetch(base + path.replace(/^\//, "") + Q, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(30_000) });
    const text = await r.text();
    let json = null;
    try {
      json = JSON.parse(text);
    } catch {}
    return { status: r.status, json, text };
  } catch (e) {
    return { status: 0, json: null, text: String(e) };
  }
}

test(`rotation survives SIGKILL at a random point (seed ${SEED})`, { timeout: 600_000 }, async () => {
  const rng = prng(SEED);
  const persistDir = mkdtempSync(join(tmpdir(), "edgemem-rot-chaos-"));
  let w = await spawnWrangler(ROOT, { persistDir, vars: { EDGEMEM_DEV_MODE: "1" } });
  try {
    let key = newKey();
    // Every message acknowledged, by session.
    const acked = new Map();
    for (let i = 0; i < SESSIONS; i++) {
      const r = await call(w.url, "PUT", `/v1/working-memory/s${i}`, { key, body: { messages: [{ id: `m${i}-0`, role: "user", content: `${SENTINEL} ${i} ${"padding ".repeat(40)}` }] } });
      assert.equal(r.status, 200, r.text);
      acked.set(`s${i}`, new Set([`m${i}-0`]));
    }
    let n = 1;
    for (let round = 0; round < ROUNDS; round++) {
      const next = newKey();
      // Appends run while the rotation does; the kill lands at a random point.
      const appends = Array.from({ length: 8 }, async (_, j) => {
        const s = `s${rng.int(0, SESSIONS - 1)}`;
        const id = `m-${round}-${j}-${n++}`;
        const r = await call(w.url, "POST", `/v1/working-memory/${s}/messages`, { key, body: { messages: [{ id, role: "user", content: `${SENTINEL} appended` }] } });
        if (r.status === 200) acked.get(s).add(id);
      });
      const rotation = call(w.url, "POST", "/v1/encryption/rotate", { key, newKey: next });
      await new Promise((r) => setTimeout(r, rng.int(0, 120)));
      await w.kill();
      await Promise.all([rotation, ...appends]);
      w = await spawnWrangler(ROOT, { persistDir, vars: { EDGEMEM_DEV_MODE: "1" } });
      // The same request finishes (or confirms) the rotation.
      const again = await call(w.url, "POST", "/v1/encryption/rotate", { key, newKey: next });
      assert.equal(again.status, 200, `round ${round}: ${again.text}`);
      assert.equal(again.json.key_id.length, 17);
      const old = key;
      key = next;
      assert.equal((await call(w.url, "GET", "/v1/working-memory/s0", { key: old })).json?.code, "decryption_failed", `round ${round}`);
      for (const [s, ids] of acked) {
        const r = await call(w.url, "GET", `/v1/working-memory/${s}`, { key });
        assert.equal(r.status, 200, `round ${round} ${s}: ${r.text}`);
        const have = new Set(r.json.messages.map((m) => m.id));
        for (const id of ids) assert.ok(have.has(id), `round ${round}: acknowledged ${s}/${id} is lost`);
      }
      const plain = filesHolding(persistDir, SENTINEL);
      assert.deepEqual(plain, [], `round ${round}: plaintext on disk`);
    }
  } finally {
    await w.stop();
    rmSync(persistDir, { recursive: true, force: true });
  }
});
