// The tenant store on the Durable Object's SQLite API (issue 21, item 1),
// through `wrangler dev`:
// - storage written by the last release that kept the store on the
//   key-value API (tests/fixtures/kv-release, made by make-kv-release.mjs)
//   opens with every record, session and transfer, and afterwards no store
//   key is left in workerd's `_cf_KV` table;
// - rows read and written per operation, from the `x-edgemem-meter` header;
// - an erasure interrupted right after `deleteAll()` loses nothing: the
//   object opens again from its stash, also after a restart.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { filesHolding, startWranglerDev } from "../e2e/wrangler-dev.mjs";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const FIXTURE = join(ROOT, "tests/fixtures/kv-release");
const dirs = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function tempDir(name) {
  const d = mkdtempSync(join(tmpdir(), name));
  dirs.push(d);
  return d;
}

function client(dev) {
  return async (method, path, body, { namespace, key } = {}) => {
    const headers = body === undefined ? {} : { "content-type": "application/json" };
    if (key) headers["x-edgemem-encryption-key"] = key;
    const q = namespace ? `${path.includes("?") ? "&" : "?"}namespace=${namespace}` : "";
    const r = await fetch(`${dev.url}${path.slice(1)}${q}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await r.text();
    let json = null;
    try {
      json = JSON.parse(text);
    } catch {}
    return { status: r.status, json, text, meter: meter(r.headers.get("x-edgemem-meter")) };
  };
}

const meter = (h) => Object.fromEntries((h ?? "").split(";").filter(Boolean).map((kv) => kv.trim().split("=")).map(([k, v]) => [k, Number(v)]));

/** Rows of a query on every Durable Object database under `dir` (python3's sqlite3; no native module needed). */
function query(dir, sql) {
  const doDir = join(dir, "v3/do/edgemem-MemoryObject");
  const files = readdirSync(doDir).filter((f) => f.endsWith(".sqlite") && f !== "metadata.sqlite").map((f) => join(doDir, f));
  const script = [
    "import json,sqlite3,sys",
    "out=[]",
    "for f in sys.argv[2:]:",
    "  c=sqlite3.connect(f)",
    "  t=[r[0] for r in c.execute(\"select name from sqlite_master where type='table'\")]",
    "  try: rows=c.execute(sys.argv[1]).fetchall()",
    "  except sqlite3.OperationalError: rows=[]",
    "  out.append({'file':f,'tables':t,'rows':rows})",
    "print(json.dumps(out))",
  ].join("\n");
  return JSON.parse(execFileSync("python3", ["-c", script, sql, ...files], { encoding: "utf8" }));
}

test("storage written by the key-value release opens on SQL with every record, and the copies leave _cf_KV", async () => {
  const expected = JSON.parse(readFileSync(join(FIXTURE, "expected.json"), "utf8"));
  const dir = tempDir("edgemem-upgrade-");
  cpSync(join(FIXTURE, "state"), dir, { recursive: true });
  const before = query(dir, "select count(*) from _cf_KV where key = 'head' or key = 'crypt' or key like 'log/%' or key like 'snap/%'");
  assert.ok(before.reduce((n, f) => n + (f.rows[0]?.[0] ?? 0), 0) > 40, "the fixture keeps its store on the key-value API");
  const dev = await startWranglerDev(ROOT, { persistDir: dir });
  try {
    const call = client(dev);
    for (const [ns, t] of Object.entries(expected.tenants)) {
      const opts = { namespace: ns || "default", key: ns === "vault" ? expected.key : undefined };
      if (ns === "vault") assert.equal((await call("GET", "/v1/working-memory/s1", undefined, { namespace: ns })).json.code, "key_required", "the sealed tenant still needs its key");
      for (const [id, text] of Object.entries(t.records)) {
        const r = await call("GET", `/v1/long-term-memory/${id}`, undefined, opts);
        assert.equal(r.status, 200, `${ns}/${id}: ${r.text}`);
        assert.equal(r.json.text, text, `${ns}/${id}`);
      }
      for (const [s, n] of Object.entries(t.sessions)) {
        const r = await call("GET", `/v1/working-memory/${s}`, undefined, opts);
        assert.equal(r.status, 200, r.text);
        assert.equal(r.json.messages.length, n, `${ns}/${s}`);
      }
      if (t.erased_user) {
        assert.equal((await call("GET", "/v1/long-term-memory/r4", undefined, opts)).status, 404, "the erasure before the upgrade holds");
        const rec = await call("POST", "/v1/ledger/reconcile", {}, opts);
        assert.equal(rec.status, 200, rec.text);
        assert.equal(rec.json.transfers, t.transfers);
        assert.equal((await call("GET", "/v1/ledger/accounts/player", undefined, opts)).json.balance, t.balances.player);
      }
      const found = await call("POST", "/v1/long-term-memory/search", { text: "otters", limit: 5 }, opts);
      assert.equal(found.status, 200, found.text);
      assert.ok(found.json.memories.length > 0, `${ns}: search works after the upgrade`);
      // A write after the upgrade lands in SQL.
      assert.equal((await call("POST", "/v1/working-memory/s2/messages", { messages: [{ role: "user", content: "after the upgrade" }] }, opts)).status, 200);
    }
  } finally {
    await dev.stop();
  }
  const left = query(dir, "select count(*) from _cf_KV where key = 'head' or key = 'crypt' or key like 'log/%' or key like 'snap/%'");
  assert.deepEqual(left.map((f) => f.rows[0]?.[0] ?? 0).filter((n) => n > 0), [], "no store key is left on the key-value API");
  const files = query(dir, "select count(*) from em_kv");
  assert.ok(files.some((f) => f.tables.includes("em_kv") && f.rows[0][0] > 0), "the store is in em_kv");
  // Reopened once more: the copy ran once, and the data is still whole.
  const again = await startWranglerDev(ROOT, { persistDir: dir });
  try {
    const r = await client(again)("GET", "/v1/working-memory/s2", undefined, { namespace: "legacy" });
    assert.equal(r.json.messages.at(-1).content, "after the upgrade");
  } finally {
    await again.stop();
  }
});

test("rows read and written per operation, metered per request", async () => {
  const dev = await startWranglerDev(ROOT, { persistDir: tempDir("edgemem-rows-") });
  try {
    const call = client(dev);
    const ns = { namespace: "rows" };
    await call("PUT", "/v1/working-memory/s", { context: "c" }, ns); // opens the store
    const append = await call("POST", "/v1/working-memory/s/messages", { messages: [{ role: "user", content: "hi" }] }, ns);
    assert.equal(append.status, 200);
    assert.equal(append.meter.rows_written, 1, `one logged op is one row: ${JSON.stringify(append.meter)}`);
    const create = await call("POST", "/v1/long-term-memory", { memories: [{ id: "m1", text: "a record about otters" }, { id: "m2", text: "one about tea" }] }, ns);
    assert.equal(create.status, 200, create.text);
    assert.equal(create.meter.rows_written, 1, "a batch is one op, one row");
    const search = await call("POST", "/v1/long-term-memory/search", { text: "otters" }, ns);
    assert.equal(search.meter.rows_read + search.meter.rows_written, 0, "a search on a warm object touches no row");
    const stats = await call("GET", "/v1/stats", undefined, ns);
    assert.equal(stats.json.storage.backend, "durable-object-sql");
    assert.ok(stats.json.storage.rows_written >= 3, JSON.stringify(stats.json.storage));
  } finally {
    await dev.stop();
  }
});

test("an erasure interrupted after deleteAll() loses nothing: the object reopens from its stash, in process and after a restart", async () => {
  const dir = tempDir("edgemem-stash-");
  const SENTINEL = "Quokka-Sentinel-8812";
  let dev = await startWranglerDev(ROOT, { persistDir: dir, vars: { EDGEMEM_DEV_MODE: "1", EDGEMEM_TEST_FAULT: "after_delete_all" } });
  const ns = { namespace: "stash" };
  const memories = ["u1", "u2", "u3"].map((u) => ({ id: `m-${u}`, text: `${SENTINEL} of ${u}`, user_id: u }));
  try {
    const call = client(dev);
    for (const u of ["u1", "u2", "u3"]) await call("PUT", `/v1/consent/${u}`, { long_term: true }, ns);
    assert.equal((await call("POST", "/v1/long-term-memory", { memories: [...memories, { id: "kept", text: "kept for u4", user_id: "u4" }] }, ns)).status, 200);
    // The erasure op is logged and snapshotted before the rewrite that
    // scrubs the bytes; the rewrite fails right after deleteAll().
    const failed = await call("DELETE", "/v1/consent/u1", undefined, ns);
    assert.equal(failed.status, 503, failed.text);
    // In process: the next request opens again from the stash.
    assert.equal((await call("GET", "/v1/long-term-memory/kept", undefined, ns)).json.text, "kept for u4");
    assert.equal((await call("GET", "/v1/long-term-memory/m-u1", undefined, ns)).status, 404, "the erasure op itself was durable");
    assert.equal((await call("GET", "/v1/long-term-memory/m-u2", undefined, ns)).status, 200);
    // The crash: fail again, and stop before any other request.
    assert.equal((await call("DELETE", "/v1/consent/u2", undefined, ns)).status, 503);
  } finally {
    await dev.stop();
  }
  dev = await startWranglerDev(ROOT, { persistDir: dir });
  try {
    const call = client(dev);
    assert.equal((await call("GET", "/v1/long-term-memory/kept", undefined, ns)).json.text, "kept for u4", "restored from the stash after a restart");
    assert.equal((await call("GET", "/v1/long-term-memory/m-u2", undefined, ns)).status, 404);
    assert.equal((await call("GET", "/v1/long-term-memory/m-u3", undefined, ns)).status, 200);
    const revoked = await call("DELETE", "/v1/consent/u3", undefined, ns);
    assert.equal(revoked.status, 200, revoked.text);
    assert.equal((await call("GET", "/v1/long-term-memory/m-u3", undefined, ns)).status, 404);
    assert.equal((await call("GET", "/v1/long-term-memory/kept", undefined, ns)).json.text, "kept for u4");
    await new Promise((r) => setTimeout(r, 500));
    assert.deepEqual(filesHolding(dir, SENTINEL), [], "no file holds an erased text: not the tenant's, not the stash's");
  } finally {
    await dev.stop();
  }
});
