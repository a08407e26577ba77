// Encryption-at-rest keys as the wasm core takes them: `[{keyId, key}]` or
// `[{keyId, passphrase}]`, the key to seal under first. The key itself never
// leaves WebCrypto (a non-extractable CryptoKey stays one); a passphrase is
// handed to PBKDF2 in the core and not kept.
import { invalid } from "./util.js";

/** The key id used when `keyId` is not given. */
export const DEFAULT_KEY_ID = "default";

function isCryptoKey(k) {
  if (typeof CryptoKey !== "undefined" && k instanceof CryptoKey) return true;
  // Another realm's CryptoKey (a test harness, an iframe): the same shape.
  return k !== null && typeof k === "object" && typeof k.type === "string" && typeof k.algorithm === "object" && Array.isArray(k.usages);
}

/** One `{keyId, key}` or `{keyId, passphrase}` entry. */
export function cryptEntry(key, keyId, field) {
  if (typeof keyId !== "string") throw invalid("keyId", "must be a string");
  if (isCryptoKey(key)) return { keyId, key };
  if (key !== null && typeof key === "object" && typeof key.passphrase === "string" && Object.keys(key).length === 1) return { keyId, passphrase: key.passphrase };
  throw invalid(field, "must be a CryptoKey (AES-GCM, 256 bits, encrypt and decrypt) or { passphrase }");
}

/** The entries of an open, or undefined when no key is given. */
export function cryptEntries({ encryptionKey, keyId = DEFAULT_KEY_ID, previousKey, previousKeyId }) {
  if (encryptionKey === undefined) {
    if (previousKey !== undefined) throw invalid("previousKey", "needs encryptionKey");
    return undefined;
  }
  const list = [cryptEntry(encryptionKey, keyId, "encryptionKey")];
  if (previousKey !== undefined) list.push(cryptEntry(previousKey, previousKeyId ?? DEFAULT_KEY_ID, "previousKey"));
  return list;
}
