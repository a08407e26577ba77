// Every number a user stores comes back exactly as sent (issue 18, point 2):
// serde_json parses with `float_roundtrip`, and the package writes -0 as -0.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Memory, MemoryStore } from "edgemem";
import { hardDoubles, changedDoubles } from "./helpers.mjs";

const COUNT = 10_000;
// Session data is capped at 256 KiB, so the doubles go in four sessions.
const PER_SESSION = 2_500;

test("10,000 hard doubles in session data come back bit for bit, also after a reopen", async () => {
  const values = hardDoubles(COUNT);
  const store = new MemoryStore();
  const memory = await Memory.open({ store });
  const parts = [];
  for (let i = 0; i < COUNT; i += PER_SESSION) parts.push(values.slice(i, i + PER_SESSION));
  for (const [i, part] of parts.entries()) {
    const put = await memory.putSession(`floats-${i}`, { data: { values: part, neg_zero: -0, nested: { x: part[1] } } });
    assert.deepEqual(changedDoubles(part, put.data.values), [], "the PUT answer");
    assert.ok(Object.is(put.data.neg_zero, -0), "-0 keeps its sign");
  }
  memory.free();
  const reopened = await Memory.open({ store });
  for (const [i, part] of parts.entries()) {
    const got = await reopened.getSession(`floats-${i}`);
    assert.deepEqual(changedDoubles(part, got.data.values), [], "after a reopen from the op log");
  }
  // The same through a snapshot (rmp) rather than the op log.
  await reopened.snapshot();
  reopened.free();
  const fromSnapshot = await Memory.open({ store });
  const got = await fromSnapshot.getSession("floats-0");
  assert.deepEqual(changedDoubles(parts[0], got.data.values), [], "after a reopen from a snapshot");
});

test("doubles in episode payloads and outcomes come back bit for bit", async () => {
  const values = hardDoubles(500, 7n);
  const memory = await Memory.open({ store: new MemoryStore() });
  await memory.episodes.record({ agent_id: "a", kind: "bet", payload: { values }, outcome: { pnl: values[3], zero: -0 } });
  const [episode] = await memory.episodes.recent(1, { agentId: "a" });
  assert.deepEqual(changedDoubles(values, episode.payload.values), []);
  assert.ok(Object.is(episode.outcome.pnl, values[3]));
  assert.ok(Object.is(episode.outcome.zero, -0));
});

test("numbers a double cannot hold come back exactly as sent (ExactNumber, BigInt), also after a reopen and through a snapshot", async () => {
  const { ExactNumber, parseExact } = await import("edgemem");
  const store = new MemoryStore();
  const memory = await Memory.open({ store });
  const data = { price: new ExactNumber("1234.567890123456789"), big: 123456789012345678901234567n, d28: new ExactNumber("0.1234567890123456789012345678"), plain: 0.1, nested: [new ExactNumber("1e400"), -0] };
  await memory.putSession("exact", { data });
  const check = (got, where) => {
    assert.ok(got.data.price instanceof ExactNumber, where);
    assert.equal(got.data.price.text, "1234.567890123456789", where);
    assert.equal(got.data.big.text, "123456789012345678901234567", where);
    assert.equal(got.data.d28.text, "0.1234567890123456789012345678", where);
    assert.equal(got.data.plain, 0.1, `${where}: a number a double holds stays a number`);
    assert.equal(got.data.nested[0].text, "1e+400", `${where}: the exponent is normalized, the value kept`);
    assert.ok(Object.is(got.data.nested[1], -0), where);
  };
  check(await memory.getSession("exact", { exactNumbers: true }), "in memory");
  // Without the option the nearest doubles come back, as JSON.parse gives them.
  assert.equal((await memory.getSession("exact")).data.price, 1234.567890123456789);
  memory.free();
  const reopened = await Memory.open({ store });
  check(await reopened.getSession("exact", { exactNumbers: true }), "after a reopen from the op log");
  await reopened.snapshot();
  reopened.free();
  const fromSnapshot = await Memory.open({ store });
  check(await fromSnapshot.getSession("exact", { exactNumbers: true }), "after a snapshot");
  fromSnapshot.free();
  assert.throws(() => new ExactNumber("12,5"), (e) => e.code === "invalid_input");
  assert.throws(() => new ExactNumber(12.5), (e) => e.code === "invalid_input");
  assert.deepEqual(parseExact('{"a":1,"b":"1.00000000000000000001","c":1.00000000000000000001}'), { a: 1, b: "1.00000000000000000001", c: new ExactNumber("1.00000000000000000001") });
});
