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
