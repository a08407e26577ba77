// Export and import through the package (issue 20): `memory.export()` is an
// async iterator of NDJSON lines, `memory.import(lines)` takes text or an
// (async) iterable; a round trip through a file gives the same state and
// ledger balances; a future format is refused and writes nothing.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Memory, MemoryStore } from "edgemem";

async function seeded() {
  const memory = await Memory.open({ store: new MemoryStore() });
  await memory.putSession("s1", { messages: [{ role: "user", content: "hi, I am Ana" }], user_id: "ana" });
  await memory.longTerm.create([
    { id: "u1", text: "Ana prefers metric units", user_id: "ana", fact_key: "user.units", valid_from: "2025-01-01T00:00:00Z" },
    { id: "u2", text: "Ana switched to imperial units", user_id: "ana", fact_key: "user.units", valid_from: "2025-03-01T00:00:00Z" },
  ]);
  await memory.longTerm.edit("u2", { topics: ["units"] });
  await memory.ledger.createAsset("USD", 2);
  for (const id of ["house", "player"]) await memory.ledger.createAccount({ id, asset: "USD" });
  await memory.ledger.createTransfers([{ id: "t1", debit_account: "house", credit_account: "player", amount: "12.50" }]);
  return memory;
}

const lines = async (memory, options) => {
  const out = [];
  for await (const l of memory.export(options)) out.push(l);
  return out;
};
const timeless = (ls) => ls.map((l, i) => (i === 0 ? JSON.stringify({ ...JSON.parse(l), exported_at: null }) : l));

test("export to a file, import it elsewhere: the same state, the same balances", async () => {
  const source = await seeded();
  const out = await lines(source, { vectors: true });
  const header = JSON.parse(out[0]);
  assert.deepEqual([header.format, header.schema_version, header.vectors], ["edgemem-export", 1, "f32"]);
  assert.equal(JSON.parse(out.at(-1)).type, "end");
  const dir = mkdtempSync(join(tmpdir(), "edgemem-export-"));
  try {
    const file = join(dir, "memory.ndjson");
    writeFileSync(file, out.join("\n") + "\n");
    const target = await Memory.open({ store: new MemoryStore() });
    const r = await target.import(readFileSync(file, "utf8"));
    assert.deepEqual([r.imported, r.sessions, r.memories], [true, 1, 2]);
    assert.deepEqual(timeless(await lines(target, { vectors: true })), timeless(out));
    const balances = async (m) => Promise.all(["house", "player"].map((id) => m.ledger.account(id)));
    assert.deepEqual(await balances(target), await balances(source));
    assert.deepEqual(await target.ledger.reconcile(), await source.ledger.reconcile());
    assert.equal((await target.longTerm.get("u1")).superseded_by, "u2");
    // An async iterable of lines works too, and the same file again is a no-op.
    async function* again() {
      yield* out;
    }
    assert.equal((await target.import(again())).imported, false);
    target.free();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  source.free();
});

test("a refused import writes nothing", async () => {
  const source = await seeded();
  const out = await lines(source);
  const store = new MemoryStore();
  const target = await Memory.open({ store });
  const future = [JSON.stringify({ ...JSON.parse(out[0]), schema_version: 2 }), ...out.slice(1)];
  await assert.rejects(target.import(future), { code: "schema_version_unsupported" });
  await assert.rejects(target.import(out.slice(0, -1)), { code: "invalid_input" }, "a cut file");
  await assert.rejects(target.import(42), { code: "invalid_input" });
  await assert.rejects(target.import([1, 2]), { code: "invalid_input" });
  assert.deepEqual(await store.list(""), [], "nothing was written");
  // Without vectors, the importer embeds the texts again.
  const r = await target.import(out);
  assert.equal(r.memories, 2);
  const found = await target.longTerm.search({ text: "imperial units", mode: "semantic" });
  assert.equal(found.memories[0].id, "u2");
  await target.longTerm.create([{ text: "something new" }]);
  await assert.rejects(target.import(out), { code: "import_target_not_empty" });
  target.free();
  source.free();
});

test("an import may be larger than any other request body, up to IMPORT_BYTES_MAX", async () => {
  const { LIMITS } = await import("edgemem");
  const source = await Memory.open({ store: new MemoryStore() });
  const n = 1200;
  const dim = 384;
  const vectors = new Float32Array(n * dim).map((_, i) => Math.sin(i * 0.37) + (i % dim === 0 ? 2 : 0));
  for (let at = 0; at < n; at += 400) {
    const batch = Array.from({ length: 400 }, (_, i) => ({ id: `r${at + i}`, text: `record number ${at + i} about topic ${(at + i) % 17}` }));
    await source.longTerm.create(batch, { vectors: vectors.subarray(at * dim, (at + 400) * dim), deduplicate: false });
  }
  const out = await lines(source, { vectors: true });
  const bytes = out.reduce((s, l) => s + l.length + 1, 0);
  assert.ok(bytes > LIMITS.REQUEST_BODY_BYTES_CEILING && bytes < LIMITS.IMPORT_BYTES_MAX, `${bytes} bytes`);
  const target = await Memory.open({ store: new MemoryStore() });
  assert.equal((await target.import(out)).memories, n);
  assert.deepEqual(timeless(await lines(target, { vectors: true })), timeless(out));
  await assert.rejects(target.longTerm.create([{ text: "x".repeat(LIMITS.REQUEST_BODY_BYTES_CEILING) }]), { code: "payload_too_large" }, "other bodies keep their cap");
  target.free();
  source.free();
});
