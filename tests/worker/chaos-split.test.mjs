// Splits under SIGKILL against the real Worker (issue 21): a sharded
// tenant (2 shards) takes creates from three writers while an admin split
// runs, and workerd is killed at a random point of it, then started again
// on the same directory. After each restart the directory's alarm finishes
// the move it logged (or none was logged), and then:
//   - every acknowledged create is held by exactly one shard object, the
//     one that owns its bucket under the tenant's map;
//   - no record (acknowledged or not) is in two shards;
//   - no fence is left.
// A last split runs without a kill, so at least one completes.
//
// EDGEMEM_CHAOS_SEED=N replays the kill schedule; EDGEMEM_SPLIT_KILLS sets
// the number of kills (3 in `make test`, more in `make soak`).
import { test } from "node:test";
import assert from "node:assert/strict";
import { randomInt } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { spawnWrangler, prng, call as harnessCall } from "./chaos-harness.mjs";
import { checkPlacement } from "./split-check.mjs";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SEED = process.env.EDGEMEM_CHAOS_SEED !== undefined ? Number(process.env.EDGEMEM_CHAOS_SEED) : randomInt(2 ** 31);
const KILLS = Number(process.env.EDGEMEM_SPLIT_KILLS ?? 3);
const NS = "splitchaos";
const VARS = { EDGEMEM_DEV_MODE: "1", EDGEMEM_SHARDS_INITIAL: "2" };

/** The harness's client (never throws), with a split's longer timeout. */
const call = (base, method, path, body) => harnessCall(base, method, path, body, { timeoutMs: 60_000 });

/** The tenant's shards once no split is in progress (the alarm finishes one). */
async function settled(base) {
  let last;
  for (let i = 0; i < 240; i++) {
    last = await call(base, "GET", `/v1/admin/shards?namespace=${NS}&ids=true`);
    if (last.status === 200 && !last.json.moving) return last.json;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`the split did not settle: ${last.text}`);
}

test(`splits survive SIGKILL at a random point (seed ${SEED}, ${KILLS} kills)`, { timeout: 900_000 }, async (t) => {
  const rng = prng(SEED);
  const persistDir = mkdtempSync(join(tmpdir(), "edgemem-split-chaos-"));
  let w = await spawnWrangler(ROOT, { persistDir, vars: VARS });
  const live = new Set();
  const users = new Map();
  let n = 0;
  const statuses = new Map();
  let firstError;
  const create = async (base) => {
    const i = n++;
    const id = `c${i}`;
    const user = i % 5 === 0 ? undefined : `u${i % 31}`;
    const r = await call(base, "POST", `/v1/long-term-memory/?namespace=${NS}`, { memories: [{ id, text: `chaos note ${i} for ${user ?? "nobody"}`, ...(user ? { user_id: user } : {}) }] });
    statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
    if (r.status === 0 && !firstError) firstError = `${base}: ${r.error}`;
    if (r.status === 200) {
      live.add(id);
      if (user) users.set(id, user);
    }
    return r.status;
  };
  try {
    for (let i = 0; i < 120; i++) assert.equal(await create(w.url), 200);
    let splits = 0;
    for (let k = 0; k <= KILLS; k++) {
      const last = k === KILLS;
      let stop = false;
      const writers = Array.from({ length: 3 }, async () => {
        while (!stop) await create(w.url);
      });
      // The writers are under way (a few creates acknowledged) before the split starts.
      const from = live.size;
      for (let i = 0; i < 200 && live.size < from + 5; i++) await new Promise((r) => setTimeout(r, 50));
      const split = call(w.url, "POST", `/v1/admin/shards/split?namespace=${NS}`, {});
      if (last) {
        const r = await split;
        assert.equal(r.status, 200, r.text);
        stop = true;
        await Promise.all(writers);
      } else {
        await new Promise((r) => setTimeout(r, rng.int(0, 600)));
        await w.kill();
        stop = true;
        await Promise.all([split, ...writers]);
        w = await spawnWrangler(ROOT, { persistDir, vars: VARS });
        // The first request after a start compiles the Worker: warm it.
        await call(w.url, "GET", `/v1/admin/shards?namespace=${NS}`);
      }
      // What the kill interrupted: the directory's logged step, if any.
      const before = last ? null : await call(w.url, "GET", `/v1/admin/shards?namespace=${NS}`);
      const st = await settled(w.url);
      t.diagnostic(`kill ${k}: ${last ? "none" : `step ${before.json?.moving?.step ?? "none logged or done"}`}, epoch ${st.map.epoch}, ${live.size} acknowledged (answers ${[...statuses].map(([k, v]) => `${k}:${v}`).join(" ")}), shards ${st.shards.map((s) => `${s.shard}:${s.ids.length}`).join(" ")}`);
      splits = st.map.epoch - 1;
      assert.ok(st.shards.every((s) => !s.fenced), `kill ${k}: a fence was left`);
      checkPlacement(st, live, new Set(), users);
    }
    assert.ok(splits >= 1, "no split completed");
    // Writes cut by a kill fail at the socket (never acknowledged): the first, for the record.
    if (firstError) t.diagnostic(`first unacknowledged write: ${firstError}`);
  } finally {
    await w.stop();
    rmSync(persistDir, { recursive: true, force: true });
  }
});
