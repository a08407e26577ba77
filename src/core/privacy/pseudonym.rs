//! Keyed pseudonyms and sealed user ids.
//!
//! A [`PseudonymKey`] is derived per namespace from a deployment secret, so
//! the same email is the same pseudonym within a namespace and unlinkable
//! across namespaces. The same key seals user ids with a deterministic
//! authenticated cipher (SIV built from HMAC-SHA256 as the PRF): equal ids
//! seal equally, so a sealed id can be an index key, and only the key's
//! holder can open one or forge one that opens.

use std::fmt;

use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::{PSEUDONYM_SECRET_BYTES_MIN, PSEUDONYM_TOKEN_HEX_LEN, SEALED_USER_ID_BYTES_MAX, SEALED_USER_ID_IV_BYTES};
use crate::core::auth::{ct_eq, hex};
use crate::core::error::{Error, Result};

/// Marks a sealed user id.
pub const SEALED_PREFIX: &str = "psu_";
// The limit on a sealed id's length counts this prefix.
const _: () = assert!(SEALED_PREFIX.len() == super::SEALED_USER_ID_PREFIX_BYTES);
/// Domain separation of the key derivation: a new version gets new keys.
const DERIVE_LABEL: &[u8] = b"edgemem/pseudonym/v1/";

type HmacSha256 = Hmac<Sha256>;

fn hmac(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    // HMAC accepts keys of any length, so this cannot fail.
    let mut mac = HmacSha256::new_from_slice(key).expect("HMAC takes any key length");
    for p in parts {
        mac.update(p);
    }
    mac.finalize().into_bytes().into()
}

/// A namespace's pseudonym key. Its `Debug` never shows the key.
#[derive(Clone)]
pub struct PseudonymKey([u8; 32]);

impl fmt::Debug for PseudonymKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PseudonymKey(<redacted>)")
    }
}

impl PseudonymKey {
    /// The key of `namespace` under a deployment `secret` of at least
    /// [`PSEUDONYM_SECRET_BYTES_MIN`] bytes:
    /// HMAC-SHA256(secret, "edgemem/pseudonym/v1/" || namespace).
    pub fn derive(secret: &[u8], namespace: &str) -> Result<PseudonymKey> {
        if secret.len() < PSEUDONYM_SECRET_BYTES_MIN {
            return Err(Error::invalid("secret", format!("at least {PSEUDONYM_SECRET_BYTES_MIN} bytes are needed")));
        }
        if secret.len() > crate::core::limits::PRIVACY_KEY_BYTES_MAX {
            return Err(Error::too_large("secret", secret.len(), crate::core::limits::PRIVACY_KEY_BYTES_MAX));
        }
        Ok(PseudonymKey(hmac(secret, &[DERIVE_LABEL, namespace.as_bytes()])))
    }

    /// The pseudonym of a normalized value of `kind`: the first
    /// [`PSEUDONYM_TOKEN_HEX_LEN`] hex digits of
    /// HMAC-SHA256(key, kind || 0x00 || normalized). The zero byte keeps
    /// `("ab", "c")` and `("a", "bc")` apart.
    pub fn token(&self, kind: &str, normalized: &str) -> String {
        let mac = hmac(&self.0, &[kind.as_bytes(), &[0], normalized.as_bytes()]);
        let mut h = hex(&mac[..PSEUDONYM_TOKEN_HEX_LEN.div_ceil(2)]);
        h.truncate(PSEUDONYM_TOKEN_HEX_LEN);
        h
    }

    fn subkeys(&self) -> ([u8; 32], [u8; 32]) {
        (hmac(&self.0, &[b"siv"]), hmac(&self.0, &[b"ctr"]))
    }

    /// `user_id` sealed: `psu_` and base64url (no padding) of iv || ct, where
    /// iv = HMAC(k1, user_id)[..16] and ct = user_id XOR the keystream
    /// HMAC(k2, iv || i as u32 BE) for blocks i = 0, 1, … Deterministic.
    pub fn seal_user_id(&self, user_id: &str) -> String {
        let (k1, k2) = self.subkeys();
        let siv = hmac(&k1, &[user_id.as_bytes()]);
        let iv = &siv[..SEALED_USER_ID_IV_BYTES];
        let mut buf = Vec::with_capacity(SEALED_USER_ID_IV_BYTES + user_id.len());
        buf.extend_from_slice(iv);
        buf.extend_from_slice(user_id.as_bytes());
        xor_keystream(&k2, iv.try_into().expect("16 bytes"), &mut buf[SEALED_USER_ID_IV_BYTES..]);
        let mut out = String::from(SEALED_PREFIX);
        base64url_encode(&buf, &mut out);
        out
    }

    /// The user id `sealed` holds, or `None` when it is not one this key
    /// sealed (wrong prefix, bad base64url, tampered or foreign).
    pub fn open_user_id(&self, sealed: &str) -> Option<String> {
        if sealed.len() > SEALED_USER_ID_BYTES_MAX {
            return None;
        }
        let mut buf = base64url_decode(sealed.strip_prefix(SEALED_PREFIX)?)?;
        if buf.len() < SEALED_USER_ID_IV_BYTES {
            return None;
        }
        let (k1, k2) = self.subkeys();
        let iv: [u8; SEALED_USER_ID_IV_BYTES] = buf[..SEALED_USER_ID_IV_BYTES].try_into().expect("16 bytes");
        let pt = &mut buf[SEALED_USER_ID_IV_BYTES..];
        xor_keystream(&k2, &iv, pt);
        let siv = hmac(&k1, &[pt]);
        if !ct_eq(&siv[..SEALED_USER_ID_IV_BYTES], &iv) {
            return None;
        }
        String::from_utf8(pt.to_vec()).ok()
    }
}

fn xor_keystream(k2: &[u8], iv: &[u8; SEALED_USER_ID_IV_BYTES], data: &mut [u8]) {
    for (i, chunk) in data.chunks_mut(32).enumerate() {
        // Ids are at most a few hundred bytes; a u32 counter cannot wrap.
        let block = hmac(k2, &[iv, &(i as u32).to_be_bytes()]);
        for (d, k) in chunk.iter_mut().zip(block) {
            *d ^= k;
        }
    }
}

const B64URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Appends base64url of `data`, without padding.
pub(crate) fn base64url_encode(data: &[u8], out: &mut String) {
    for chunk in data.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, &c)| n | (u32::from(c) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(B64URL[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
}

/// Decodes unpadded base64url; `None` on any other character, an impossible
/// length or non-zero unused bits (so each byte string has one encoding).
pub(crate) fn base64url_decode(s: &str) -> Option<Vec<u8>> {
    let s = s.as_bytes();
    if s.len() % 4 == 1 {
        return None;
    }
    let val = |c: u8| B64URL.iter().position(|&x| x == c).map(|v| v as u32);
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    for chunk in s.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= val(c)? << (18 - 6 * i);
        }
        let bytes = chunk.len() - 1;
        if n & (0xFF_FFFF >> (8 * bytes)) != 0 {
            return None;
        }
        for i in 0..bytes {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    Some(out)
}

#[cfg(test)]
pub(super) fn base64url_round_trip(data: &[u8]) -> Option<Vec<u8>> {
    let mut s = String::new();
    base64url_encode(data, &mut s);
    base64url_decode(&s)
}
