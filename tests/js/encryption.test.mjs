// Encryption at rest through the npm package (issue 20): AES-256-GCM via
// WebCrypto under a CryptoKey or a passphrase, typed errors for a missing or
// wrong key, rotation (also under a crash after every write), encryption of
// a plaintext store, a sealed published replica, and no plaintext sentinel
// in any stored byte.
import { test } from "node:test";
import assert from "node:assert/strict";
import { LIMITS, Memory, MemoryStore } from "edgemem";

const SENTINEL = "Quokka-Sentinel-5813";

const aesKey = (extractable = false) => crypto.subtle.generateKey({ name: "AES-GCM", length: 256 }, extractable, ["encrypt", "decrypt"]);

/** Every stored value, by key. */
function values(store) {
  return [...store.map.entries()];
}

function holds(store, text) {
  const needle = Buffer.from(text);
  return values(store).filter(([, v]) => Buffer.from(v).includes(needle)).map(([k]) => k);
}

/** The key ids stored envelopes name; asserts every log record and chunk is one. */
function envelopeIds(store) {
  const ids = new Set();
  for (const [k, v] of values(store)) {
    if (!k.startsWith("log/") && !k.startsWith("snap/")) continue;
    assert.equal(Buffer.from(v.subarray(0, 4)).toString(), "EMX1", `${k} is sealed`);
    ids.add(Buffer.from(v.subarray(5, 5 + v[4])).toString());
  }
  return ids;
}

/** A MemoryStore whose writes fail after `n` more (a process that dies mid-write). */
class DyingStore extends MemoryStore {
  writesLeft = Infinity;
  writes = 0;
  #take() {
    if (this.writesLeft <= 0) throw new Error("injected crash");
    this.writesLeft -= 1;
    this.writes += 1;
  }
  async put(key, bytes) {
    this.#take();
    return super.put(key, bytes);
  }
  async delete(key) {
    this.#take();
    return super.delete(key);
  }
}

/** Writes the sentinel through every kind of state. */
async function fill(memory, n = 12) {
  for (let i = 0; i < n; i++) {
    await memory.putSession(`s${i % 4}`, { context: `${SENTINEL} context ${i}`, messages: [{ role: "user", content: `${SENTINEL} turn ${i}` }] });
  }
  await memory.longTerm.create([{ id: "m1", text: `${SENTINEL} prefers metric units`, user_id: "ana" }]);
  await memory.ledger.createAsset("USD", 2);
  await memory.ledger.createAccount({ id: "ops", asset: "USD" });
  await memory.decisions.append("s0", { kind: "decision", text: `${SENTINEL} chose plan B` });
}

async function state(memory) {
  return {
    s0: (await memory.getSession("s0")).context,
    m1: (await memory.longTerm.get("m1")).text,
    decisions: (await memory.decisions.list("s0")).entries.map((e) => e.text),
  };
}

test("a CryptoKey seals every stored value; the same key reopens", async () => {
  const store = new MemoryStore();
  const key = await aesKey();
  const memory = await Memory.open({ store, encryptionKey: key, keyId: "k1", snapshotEveryOps: 5, chunkBytes: 256 });
  await fill(memory);
  await memory.snapshot();
  await memory.putSession("tail", { context: `${SENTINEL} in the log after the snapshot` });
  assert.equal(await memory.keyId(), "k1");
  assert.deepEqual(holds(store, SENTINEL), [], "no plaintext in storage");
  assert.deepEqual([...envelopeIds(store)], ["k1"]);
  const header = Buffer.from(store.map.get("crypt")).toString("latin1");
  assert.match(header, /"id":"k1"/);
  assert.match(header, /A256GCM/);
  const before = await state(memory);
  const again = await Memory.open({ store, encryptionKey: key, keyId: "k1" });
  assert.deepEqual(await state(again), before);
  assert.ok(before.s0.includes(SENTINEL));
  const plain = await Memory.open();
  assert.equal(await plain.keyId(), undefined);
});

test("no key is key_required, a wrong key decryption_failed, and neither writes", async () => {
  const store = new MemoryStore();
  const key = await aesKey();
  await fill(await Memory.open({ store, encryptionKey: key, keyId: "k1" }), 3);
  const snapshot = JSON.stringify(values(store).map(([k, v]) => [k, Buffer.from(v).toString("base64")]));
  await assert.rejects(Memory.open({ store }), (e) => e.code === "key_required" && /"k1"/.test(e.message));
  await assert.rejects(Memory.open({ store, encryptionKey: await aesKey(), keyId: "k1" }), { code: "decryption_failed" });
  await assert.rejects(Memory.open({ store, encryptionKey: await aesKey(), keyId: "other" }), { code: "decryption_failed" });
  await assert.rejects(Memory.open({ store, encryptionKey: { passphrase: "not the key at all" }, keyId: "k1" }), { code: "decryption_failed" });
  assert.equal(JSON.stringify(values(store).map(([k, v]) => [k, Buffer.from(v).toString("base64")])), snapshot, "refused opens wrote nothing");
  // A flipped bit in a stored record is caught, not served.
  const [logKey, logValue] = values(store).find(([k]) => k.startsWith("log/"));
  const tampered = logValue.slice();
  tampered[tampered.length - 1] ^= 1;
  store.map.set(logKey, tampered);
  await assert.rejects(Memory.open({ store, encryptionKey: key, keyId: "k1" }), { code: "decryption_failed" });
});

test("bad keys and key ids are typed errors", async () => {
  const cbc = await crypto.subtle.generateKey({ name: "AES-CBC", length: 256 }, false, ["encrypt", "decrypt"]);
  const gcm128 = await crypto.subtle.generateKey({ name: "AES-GCM", length: 128 }, false, ["encrypt", "decrypt"]);
  const encryptOnly = await crypto.subtle.generateKey({ name: "AES-GCM", length: 256 }, false, ["encrypt"]);
  for (const encryptionKey of ["hunter2", 42, cbc, gcm128, encryptOnly, { passphrase: "short" }, { passphrase: "x".repeat(LIMITS.CRYPT_PASSPHRASE_BYTES_MAX + 1) }, { passphrase: "long enough", extra: 1 }]) {
    await assert.rejects(Memory.open({ encryptionKey }), { code: "invalid_input" }, String(encryptionKey?.algorithm?.name ?? encryptionKey));
  }
  for (const keyId of ["", "has space", "x".repeat(LIMITS.CRYPT_KEY_ID_BYTES_MAX + 1), 7]) {
    await assert.rejects(Memory.open({ encryptionKey: await aesKey(), keyId }), { code: "invalid_input" }, String(keyId));
  }
  await assert.rejects(Memory.open({ previousKey: await aesKey() }), { code: "invalid_input" });
});

test("a passphrase derives the key with PBKDF2 under a stored salt", async () => {
  const store = new MemoryStore();
  const memory = await Memory.open({ store, encryptionKey: { passphrase: "correct horse battery staple" } });
  await fill(memory, 2);
  assert.equal(await memory.keyId(), "default");
  const header = JSON.parse(Buffer.from(store.map.get("crypt").subarray(8)).toString());
  assert.equal(header.current.kdf.alg, "PBKDF2-SHA256");
  assert.equal(header.current.kdf.iterations, LIMITS.CRYPT_PBKDF2_ITERATIONS);
  assert.equal(Buffer.from(header.current.kdf.salt, "base64url").length, LIMITS.CRYPT_SALT_BYTES);
  assert.deepEqual(holds(store, "correct horse"), [], "the passphrase is not stored");
  assert.deepEqual(holds(store, SENTINEL), []);
  const again = await Memory.open({ store, encryptionKey: { passphrase: "correct horse battery staple" } });
  assert.ok((await again.getSession("s0")).context.includes(SENTINEL));
  await assert.rejects(Memory.open({ store, encryptionKey: { passphrase: "wrong horse battery staple" } }), { code: "decryption_failed" });
  // Two stores with one passphrase get different salts, so different keys.
  const other = new MemoryStore();
  await fill(await Memory.open({ store: other, encryptionKey: { passphrase: "correct horse battery staple" } }), 1);
  assert.notEqual(JSON.parse(Buffer.from(other.map.get("crypt").subarray(8)).toString()).current.kdf.salt, header.current.kdf.salt);
});

test("rotateKey re-seals every live value; the old key no longer opens", async () => {
  const store = new MemoryStore();
  const k1 = await aesKey();
  const k2 = await aesKey();
  const memory = await Memory.open({ store, encryptionKey: k1, keyId: "k1", snapshotEveryOps: 4, chunkBytes: 128 });
  await fill(memory);
  const before = await state(memory);
  assert.deepEqual(await memory.rotateKey(k2, "k2"), { key_id: "k2", leftovers: false });
  assert.deepEqual([...envelopeIds(store)], ["k2"]);
  await assert.rejects(memory.rotateKey(await aesKey(), "k2"), { code: "invalid_input" }, "a new key needs a new id");
  await memory.putSession("after", { context: `${SENTINEL} after` });
  await assert.rejects(Memory.open({ store, encryptionKey: k1, keyId: "k1" }), { code: "decryption_failed" });
  const reopened = await Memory.open({ store, encryptionKey: k2, keyId: "k2" });
  assert.deepEqual(await state(reopened), before);
  assert.deepEqual(holds(store, SENTINEL), []);
  // To a passphrase, and back to a key.
  await reopened.rotateKey({ passphrase: "a long enough passphrase" }, "p1");
  const viaPass = await Memory.open({ store, encryptionKey: { passphrase: "a long enough passphrase" }, keyId: "p1" });
  assert.deepEqual(await state(viaPass), before);
});

test("a key given to a plaintext store encrypts what it holds", async () => {
  const store = new MemoryStore();
  await fill(await Memory.open({ store, snapshotEveryOps: 4 }), 6);
  assert.notDeepEqual(holds(store, SENTINEL), [], "plaintext before");
  const key = await aesKey();
  const memory = await Memory.open({ store, encryptionKey: key, keyId: "k1" });
  assert.deepEqual(holds(store, SENTINEL), [], "no plaintext left");
  assert.ok((await memory.getSession("s1")).context.includes(SENTINEL));
  await assert.rejects(Memory.open({ store }), { code: "key_required" });
});

test("rotation survives a crash after every write: reopen with both keys finishes it", async () => {
  const k1 = await aesKey();
  const k2 = await aesKey();
  const run = async (crashAfter) => {
    const store = new DyingStore();
    const memory = await Memory.open({ store, encryptionKey: k1, keyId: "k1", snapshotEveryOps: 4, chunkBytes: 128 });
    await fill(memory, 6);
    const before = await state(memory);
    store.writesLeft = crashAfter;
    const start = store.writes;
    let rotated = true;
    try {
      await memory.rotateKey(k2, "k2");
    } catch (e) {
      assert.equal(e.code, "storage_error", String(e));
      rotated = false;
    }
    store.writesLeft = Infinity;
    return { store, before, rotated, writes: store.writes - start };
  };
  const clean = await run(Infinity);
  assert.ok(clean.rotated && clean.writes > 3, `a rotation takes several writes (${clean.writes})`);
  let newAloneOpened = 0;
  for (let n = 0; n <= clean.writes; n++) {
    const { store, before, rotated } = await run(n);
    assert.equal(rotated, n >= clean.writes, `crash after ${n} writes`);
    assert.deepEqual(holds(store, SENTINEL), [], `crash after ${n}: no plaintext`);
    try {
      const alone = await Memory.open({ store, encryptionKey: k2, keyId: "k2" });
      assert.deepEqual(await state(alone), before);
      newAloneOpened += 1;
    } catch (e) {
      assert.ok(["key_required", "decryption_failed"].includes(e.code), `crash after ${n}: ${e.code}`);
    }
    const both = await Memory.open({ store, encryptionKey: k2, keyId: "k2", previousKey: k1, previousKeyId: "k1" });
    assert.deepEqual(await state(both), before, `crash after ${n}`);
    assert.equal(await both.keyId(), "k2");
    assert.deepEqual([...envelopeIds(store)], ["k2"], `crash after ${n}: finished`);
  }
  assert.ok(newAloneOpened > 0 && newAloneOpened <= clean.writes, `the new key alone opened ${newAloneOpened} times`);
});

test("a published replica is sealed under the memory's key", async () => {
  const key = await aesKey();
  const memory = await Memory.open({ encryptionKey: key, keyId: "k1" });
  await fill(memory, 3);
  const kv = new MemoryStore();
  await memory.publishSnapshot(kv, { keyPrefix: "replica/" });
  assert.deepEqual(holds(kv, SENTINEL), []);
  const replica = await Memory.openPublished(kv, { keyPrefix: "replica/", encryptionKey: key, keyId: "k1" });
  assert.deepEqual(await state(replica), await state(memory));
  await assert.rejects(Memory.openPublished(kv, { keyPrefix: "replica/" }), { code: "key_required" });
});
