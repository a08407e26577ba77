// Export and import through the Worker (issue 20): a namespace goes out as
// NDJSON and into another namespace identical apart from the export's own
// time, with the same ledger balances; the same file again is a no-op, a
// non-empty target and a future format are refused.
import { test } from "node:test";
import assert from "node:assert/strict";
import { startWorker } from "./miniflare.mjs";

const NDJSON = { "content-type": "application/x-ndjson" };
const timeless = (text) => text.trimEnd().split("\n").map((l, i) => (i === 0 ? JSON.stringify({ ...JSON.parse(l), exported_at: null }) : l));

test("export one namespace, import into another: the same state", async () => {
  const { mf, call } = await startWorker();
  try {
    const ok = async (method, path, body) => {
      const r = await call(method, path, body);
      assert.equal(r.status, 200, `${method} ${path}: ${r.text}`);
      return r;
    };
    await ok("PUT", "/v1/working-memory/s1?namespace=src", { messages: [{ role: "user", content: "hello" }], user_id: "ana" });
    await ok("POST", "/v1/long-term-memory/?namespace=src", { memories: [
      { id: "ex-1", text: "Ana prefers metric units", user_id: "ana", fact_key: "user.units", valid_from: "2025-01-01T00:00:00Z" },
      { id: "ex-2", text: "Ana switched to imperial units", user_id: "ana", fact_key: "user.units", valid_from: "2025-03-01T00:00:00Z" },
    ] });
    await ok("POST", "/v1/ledger/assets?namespace=src", { code: "USD", scale: 2 });
    for (const id of ["a", "b"]) await ok("POST", "/v1/ledger/accounts?namespace=src", { id, asset: "USD" });
    await ok("POST", "/v1/ledger/transfers?namespace=src", { transfers: [{ id: "t1", debit_account: "a", credit_account: "b", amount: "3.25" }] });
    const out = await ok("GET", "/v1/export?namespace=src&vectors=f32");
    assert.match(out.headers.get("content-type"), /application\/x-ndjson/);
    const r = await call("POST", "/v1/import?namespace=dst", out.text, NDJSON);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual([r.json.imported, r.json.memories, r.json.sessions], [true, 2, 1]);
    const back = await ok("GET", "/v1/export?namespace=dst&vectors=f32");
    assert.deepEqual(timeless(back.text), timeless(out.text), "the same lines apart from exported_at");
    assert.deepEqual((await ok("GET", "/v1/ledger/accounts/b?namespace=dst")).json, (await ok("GET", "/v1/ledger/accounts/b?namespace=src")).json);
    assert.equal((await ok("POST", "/v1/ledger/reconcile?namespace=dst", {})).json.ok, true);
    const same = await call("POST", "/v1/import?namespace=dst", out.text, NDJSON);
    assert.deepEqual([same.status, same.json.imported], [200, false]);
    const future = out.text.replace('"schema_version":1', '"schema_version":9');
    const refused = await call("POST", "/v1/import?namespace=fresh", future, NDJSON);
    assert.deepEqual([refused.status, refused.json.code], [422, "schema_version_unsupported"]);
    assert.equal((await ok("GET", "/v1/export?namespace=fresh")).text.split("\n")[0].includes('"last_seq":0'), true, "nothing was written");
    const busy = await call("POST", "/v1/import?namespace=src", out.text.replace('"last_seq":', '"last_seq":1'), NDJSON);
    assert.deepEqual([busy.status, busy.json.code], [409, "import_target_not_empty"]);
  } finally {
    await mf.dispose();
  }
});
