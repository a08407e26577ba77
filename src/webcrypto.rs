//! AES-256-GCM and PBKDF2 through WebCrypto (`globalThis.crypto.subtle`),
//! the same code in browsers, Node and workerd: the [`Cipher`] the npm
//! package and the Durable Object seal storage with. Keys stay inside
//! WebCrypto as non-extractable `CryptoKey`s; edgemem never sees their
//! bytes after import.
//!
//! The extern block below names only the four `SubtleCrypto` methods used,
//! so no web-sys feature is needed. Nonces come from `getrandom`
//! (`crypto.getRandomValues`), never from a clock: a repeated nonce under
//! one GCM key would leak plaintext and the authentication key.

use js_sys::{Array, Object, Promise, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::store::{Cipher, Kdf};

#[wasm_bindgen]
extern "C" {
    type Subtle;
    #[wasm_bindgen(method, catch, js_name = encrypt)]
    fn encrypt(this: &Subtle, alg: &Object, key: &JsValue, data: &Uint8Array) -> std::result::Result<Promise, JsValue>;
    #[wasm_bindgen(method, catch, js_name = decrypt)]
    fn decrypt(this: &Subtle, alg: &Object, key: &JsValue, data: &Uint8Array) -> std::result::Result<Promise, JsValue>;
    #[wasm_bindgen(method, catch, js_name = importKey)]
    fn import_key(this: &Subtle, format: &str, data: &JsValue, alg: &JsValue, extractable: bool, usages: &Array) -> std::result::Result<Promise, JsValue>;
    #[wasm_bindgen(method, catch, js_name = deriveKey)]
    fn derive_key(this: &Subtle, alg: &Object, base: &JsValue, derived: &Object, extractable: bool, usages: &Array) -> std::result::Result<Promise, JsValue>;
}

const NONCE_BYTES: usize = 12;

fn js_err(what: &str, e: JsValue) -> Error {
    let name = Reflect::get(&e, &"name".into()).ok().and_then(|n| n.as_string()).unwrap_or_default();
    let message = Reflect::get(&e, &"message".into()).ok().and_then(|n| n.as_string()).unwrap_or_default();
    Error::StoreUnsuitable { detail: format!("WebCrypto {what} failed: {name} {message}") }
}

/// `crypto.subtle`, or a typed error where it is missing (browsers expose
/// it only in secure contexts: https or localhost).
fn subtle() -> Result<Subtle> {
    let crypto = Reflect::get(&js_sys::global(), &"crypto".into()).unwrap_or(JsValue::UNDEFINED);
    let subtle = if crypto.is_object() { Reflect::get(&crypto, &"subtle".into()).unwrap_or(JsValue::UNDEFINED) } else { JsValue::UNDEFINED };
    if !subtle.is_object() {
        return Err(Error::StoreUnsuitable { detail: "crypto.subtle is missing here (browsers expose it only on https or localhost)".into() });
    }
    Ok(subtle.unchecked_into())
}

fn object(pairs: &[(&str, JsValue)]) -> Object {
    let o = Object::new();
    for (k, v) in pairs {
        let _ = Reflect::set(&o, &(*k).into(), v);
    }
    o
}

fn usages(names: &[&str]) -> Array {
    names.iter().map(|n| JsValue::from_str(n)).collect()
}

fn gcm(iv: &[u8], aad: &[u8]) -> Object {
    object(&[("name", "AES-GCM".into()), ("iv", Uint8Array::from(iv).into()), ("additionalData", Uint8Array::from(aad).into())])
}

/// AES-256-GCM under one WebCrypto `CryptoKey`.
#[derive(Clone)]
pub struct WebCipher {
    key: JsValue,
}

impl WebCipher {
    /// Wraps a caller's `CryptoKey`: it must be an AES-GCM key of 256 bits
    /// that allows `encrypt` and `decrypt`.
    pub fn from_crypto_key(key: JsValue) -> Result<WebCipher> {
        let alg = Reflect::get(&key, &"algorithm".into()).unwrap_or(JsValue::UNDEFINED);
        let name = Reflect::get(&alg, &"name".into()).ok().and_then(|n| n.as_string());
        let length = Reflect::get(&alg, &"length".into()).ok().and_then(|n| n.as_f64());
        let usages = Reflect::get(&key, &"usages".into()).ok().map(|u| Array::from(&u)).unwrap_or_default();
        let can = |u: &str| usages.iter().any(|x| x.as_string().as_deref() == Some(u));
        if name.as_deref() != Some("AES-GCM") || length != Some(256.0) || !can("encrypt") || !can("decrypt") {
            return Err(Error::invalid("encryptionKey", "must be an AES-GCM CryptoKey of 256 bits with the encrypt and decrypt usages"));
        }
        Ok(WebCipher { key })
    }

    /// Imports 32 raw key bytes as a non-extractable AES-GCM key.
    pub async fn from_raw(raw: &[u8]) -> Result<WebCipher> {
        if raw.len() != 32 {
            return Err(Error::invalid("encryptionKey", "must be 32 bytes (AES-256)"));
        }
        let p = subtle()?.import_key("raw", &Uint8Array::from(raw).into(), &"AES-GCM".into(), false, &usages(&["encrypt", "decrypt"])).map_err(|e| js_err("importKey", e))?;
        let key = JsFuture::from(p).await.map_err(|e| js_err("importKey", e))?;
        Ok(WebCipher { key })
    }

    /// Derives a non-extractable AES-256-GCM key from a passphrase with
    /// PBKDF2-HMAC-SHA256 under `kdf`'s salt and iteration count.
    pub async fn from_passphrase(passphrase: &str, kdf: &Kdf) -> Result<WebCipher> {
        let n = passphrase.len();
        if !(limits::CRYPT_PASSPHRASE_BYTES_MIN..=limits::CRYPT_PASSPHRASE_BYTES_MAX).contains(&n) {
            return Err(Error::invalid("passphrase", format!("must be {} to {} bytes", limits::CRYPT_PASSPHRASE_BYTES_MIN, limits::CRYPT_PASSPHRASE_BYTES_MAX)));
        }
        let subtle = subtle()?;
        let p = subtle
            .import_key("raw", &Uint8Array::from(passphrase.as_bytes()).into(), &"PBKDF2".into(), false, &usages(&["deriveKey"]))
            .map_err(|e| js_err("importKey", e))?;
        let base = JsFuture::from(p).await.map_err(|e| js_err("importKey", e))?;
        let salt = kdf.salt_bytes()?;
        let alg = object(&[("name", "PBKDF2".into()), ("salt", Uint8Array::from(&salt[..]).into()), ("iterations", kdf.iterations.into()), ("hash", "SHA-256".into())]);
        let derived = object(&[("name", "AES-GCM".into()), ("length", 256.into())]);
        let p = subtle.derive_key(&alg, &base, &derived, false, &usages(&["encrypt", "decrypt"])).map_err(|e| js_err("deriveKey", e))?;
        let key = JsFuture::from(p).await.map_err(|e| js_err("deriveKey", e))?;
        Ok(WebCipher { key })
    }
}

/// 16 random bytes for a new passphrase's salt.
pub fn new_salt() -> Result<[u8; limits::CRYPT_SALT_BYTES]> {
    let mut salt = [0u8; limits::CRYPT_SALT_BYTES];
    getrandom::getrandom(&mut salt).map_err(|e| Error::StoreUnsuitable { detail: format!("no random source: {e}") })?;
    Ok(salt)
}

impl Cipher for WebCipher {
    async fn seal(&self, aad: &[u8], plain: &[u8]) -> Result<Vec<u8>> {
        let mut iv = [0u8; NONCE_BYTES];
        getrandom::getrandom(&mut iv).map_err(|e| Error::StoreUnsuitable { detail: format!("no random source for a nonce: {e}") })?;
        let p = subtle()?.encrypt(&gcm(&iv, aad), &self.key, &Uint8Array::from(plain)).map_err(|e| js_err("encrypt", e))?;
        let ct = JsFuture::from(p).await.map_err(|e| js_err("encrypt", e))?;
        let ct = Uint8Array::new(&ct);
        let mut out = Vec::with_capacity(NONCE_BYTES + ct.length() as usize);
        out.extend_from_slice(&iv);
        out.resize(NONCE_BYTES + ct.length() as usize, 0);
        ct.copy_to(&mut out[NONCE_BYTES..]);
        Ok(out)
    }

    async fn open(&self, aad: &[u8], sealed: &[u8]) -> Result<Option<Vec<u8>>> {
        if sealed.len() < NONCE_BYTES + 16 {
            return Ok(None);
        }
        let (iv, body) = sealed.split_at(NONCE_BYTES);
        let p = subtle()?.decrypt(&gcm(iv, aad), &self.key, &Uint8Array::from(body)).map_err(|e| js_err("decrypt", e))?;
        match JsFuture::from(p).await {
            Ok(buf) => Ok(Some(Uint8Array::new(&buf).to_vec())),
            // AES-GCM's "indication of inauthenticity".
            Err(e) if Reflect::get(&e, &"name".into()).ok().and_then(|n| n.as_string()).as_deref() == Some("OperationError") => Ok(None),
            Err(e) => Err(js_err("decrypt", e)),
        }
    }
}
