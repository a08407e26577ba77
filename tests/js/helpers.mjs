// Shared helpers for the package tests.

/** CRC-32 (IEEE), to forge envelopes the way a newer edgemem would write them. */
export function crc32(bytes) {
  let c = ~0;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}

/** A user-supplied store: a plain object with async get/put/delete/list over a Map. */
export function plainStore(map = new Map()) {
  return {
    map,
    async get(k) {
      return map.get(k);
    },
    async put(k, v) {
      map.set(k, new Uint8Array(v));
    },
    async delete(k) {
      map.delete(k);
    },
    async list(prefix) {
      return [...map.keys()].filter((k) => k.startsWith(prefix));
    },
  };
}

/** Deep copy of a store's bytes, to prove a refused open wrote nothing. */
export function dump(map) {
  return new Map([...map].map(([k, v]) => [k, Buffer.from(v).toString("hex")]));
}

/**
 * `count` finite doubles that are hard to read back exactly: the edge values
 * (±0, the largest and smallest finite, the normal/subnormal border, the two
 * values a review saw drift), then, deterministically from `seed`, random
 * bit patterns (every exponent, subnormals included) alternating with
 * ordinary fractions scaled by powers of ten.
 */
export function hardDoubles(count, seed = 0x9e3779b97f4a7c15n) {
  const out = [
    0, -0, Number.MAX_VALUE, -Number.MAX_VALUE, Number.MIN_VALUE, -Number.MIN_VALUE,
    2.2250738585072014e-308, 2.225073858507201e-308, -2.225073858507201e-308,
    2.7229922332916636e-9, 0.18017933438838418, Number.MAX_SAFE_INTEGER, 2 ** 53 + 2, 0.1, 1e23, 5e-324 * 3,
  ];
  const bits = new BigUint64Array(1);
  const f = new Float64Array(bits.buffer);
  let s = BigInt.asUintN(64, seed);
  const next = () => {
    // xorshift64*: deterministic, so a failure names the same numbers next run.
    s ^= s >> 12n;
    s = BigInt.asUintN(64, s ^ (s << 25n));
    s ^= s >> 27n;
    return BigInt.asUintN(64, s * 0x2545f4914f6cdd1dn);
  };
  for (let i = 0; out.length < count; i++) {
    bits[0] = next();
    if (i % 2) f[0] = (Number(bits[0] >> 11n) / 2 ** 53) * 10 ** ((i % 40) - 20);
    if (Number.isFinite(f[0])) out.push(f[0]);
  }
  return out.slice(0, count);
}

/** JSON text of an array of doubles that keeps -0 (JSON.stringify writes 0). */
export function doublesJson(values) {
  return "[" + values.map((v) => (Object.is(v, -0) ? "-0" : JSON.stringify(v))).join(",") + "]";
}

/** Indices where `got` is not bit for bit `sent` (Object.is tells -0 from 0). */
export function changedDoubles(sent, got) {
  const bad = [];
  for (let i = 0; i < sent.length; i++) if (!Object.is(sent[i], got?.[i])) bad.push(`${sent[i]} came back as ${got?.[i]}`);
  return bad;
}
