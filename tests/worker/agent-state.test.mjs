// The agent's own state through the Worker (issue 11, point 5): the seed's
// v1 → v2 example (a flat `balance` moved into a `portfolio` map) by a
// declarative chain, run on read and written back once, across a restart;
// profiles with exact increments.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startWorker } from "./miniflare.mjs";

const CHAIN = { version: 2, migrations: [{ from: 1, steps: [{ move: { from: ["balance"], to: ["portfolio", "USD"] } }] }] };

test("v1 state migrates to v2 on read, once, and stays migrated across a restart", async () => {
  const dir = mkdtempSync(join(tmpdir(), "edgemem-schema-"));
  let { mf, call } = await startWorker({ persistDir: dir });
  try {
    assert.equal((await call("PUT", "/v1/working-memory/s?namespace=st", '{"data":{"balance":1234.567890123456789,"name":"ada"}}')).status, 200);
    assert.equal((await call("PUT", "/v1/agents/ag/profile?namespace=st", { fields: { balance: "10.50" } })).status, 200);
    for (const kind of ["session_data", "profile"]) {
      const r = await call("PUT", `/v1/schemas/${kind}?namespace=st`, CHAIN);
      assert.equal(r.status, 200, r.text);
    }
    const s = await call("GET", "/v1/working-memory/s?namespace=st");
    assert.ok(s.text.includes('"portfolio":{"USD":1234.567890123456789}'), s.text);
    assert.equal(s.json.data_schema_version, 2);
    const p = await call("GET", "/v1/agents/ag/profile?namespace=st");
    assert.deepEqual(p.json.fields, { portfolio: { USD: "10.50" } });
    const bad = await call("PUT", "/v1/working-memory/t?namespace=st", { data: {}, data_schema_version: 3 });
    assert.equal(bad.status, 409);
    assert.equal(bad.json.code, "schema_version_too_new");
    assert.equal((await call("GET", "/v1/working-memory/t?namespace=st")).status, 404, "nothing was written");
  } finally {
    await mf.dispose();
  }
  ({ mf, call } = await startWorker({ persistDir: dir }));
  try {
    assert.equal((await call("GET", "/v1/working-memory/s?namespace=st")).json.data.portfolio.USD, 1234.567890123456789);
    const events = (await call("GET", "/v1/events?namespace=st&since=0&kinds=working_memory.migrated,profile.migrated")).json.events;
    assert.deepEqual(events.map((e) => e.kind), ["working_memory.migrated", "profile.migrated"], "written back once each, also after a restart");
    const inc = await call("POST", "/v1/agents/ag/profile/increment?namespace=st", { field: "session_count", by: 1 });
    assert.equal(inc.json.value, 1);
    const spent = await call("POST", "/v1/agents/ag/profile/increment?namespace=st", '{"field":"spent","by":"0.1"}');
    assert.equal(spent.json.value, "0.1");
    assert.equal((await call("POST", "/v1/agents/ag/profile/increment?namespace=st", '{"field":"spent","by":"0.2"}')).json.value, "0.3");
    const double = await call("POST", "/v1/agents/ag/profile/increment?namespace=st", '{"field":"spent","by":0.2}');
    assert.equal(double.status, 422);
  } finally {
    await mf.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
});
