//! The npm package's encryption keys: `{keyId, key: CryptoKey}` or
//! `{keyId, passphrase}` entries turned into [`Key`]s. A passphrase derives
//! its key with PBKDF2 under the salt and count the store's header names,
//! or under a fresh salt for a key new to the store.

use js_sys::{Array, Reflect};
use wasm_bindgen::prelude::*;

use super::backend::AnyBackend;
use super::to_js_error;
use crate::core::error::Error;
use crate::store::{validate_key_id, CryptHeader, Kdf, Key};
use crate::webcrypto::{new_salt, WebCipher};

/// How many keys one open may name: the key to seal under and the
/// previous one of an interrupted rotation.
const KEYS_PER_OPEN_MAX: u32 = 2;

fn typed(e: Error) -> JsValue {
    to_js_error(&e)
}

struct Entry {
    id: String,
    key: Option<JsValue>,
    passphrase: Option<String>,
}

fn entry(v: &JsValue) -> Result<Entry, JsValue> {
    if !v.is_object() {
        return Err(typed(Error::invalid("encryptionKey", "must be {keyId, key: CryptoKey} or {keyId, passphrase}")));
    }
    let get = |name: &str| Reflect::get(v, &name.into()).unwrap_or(JsValue::UNDEFINED);
    let id = get("keyId").as_string().ok_or_else(|| typed(Error::invalid("keyId", "must be a string")))?;
    validate_key_id(&id).map_err(typed)?;
    let (key, passphrase) = (get("key"), get("passphrase"));
    match (key.is_undefined(), passphrase.is_undefined()) {
        (false, true) => Ok(Entry { id, key: Some(key), passphrase: None }),
        (true, false) => {
            let p = passphrase.as_string().ok_or_else(|| typed(Error::invalid("passphrase", "must be a string")))?;
            Ok(Entry { id, key: None, passphrase: Some(p) })
        }
        _ => Err(typed(Error::invalid("encryptionKey", "give exactly one of key (a CryptoKey) and passphrase"))),
    }
}

async fn cipher(e: Entry, kdf: Option<Kdf>) -> Result<Key<WebCipher>, JsValue> {
    match (e.key, e.passphrase) {
        (Some(key), _) => {
            if kdf.is_some() {
                return Err(typed(Error::invalid("encryptionKey", format!("key {:?} was derived from a passphrase: give the passphrase", e.id))));
            }
            Ok(Key { id: e.id, cipher: WebCipher::from_crypto_key(key).map_err(typed)?, kdf: None })
        }
        (None, Some(p)) => {
            let kdf = match kdf {
                Some(kdf) => kdf,
                None => Kdf::new(&new_salt().map_err(typed)?),
            };
            let cipher = WebCipher::from_passphrase(&p, &kdf).await.map_err(typed)?;
            Ok(Key { id: e.id, cipher, kdf: Some(kdf) })
        }
        (None, None) => Err(typed(Error::Internal { detail: "an entry with no key".into() })),
    }
}

/// The keys of an open: `undefined` (none) or an array of entries, the key
/// to seal under first.
pub(super) async fn keys(crypt: &JsValue, backend: &AnyBackend, prefix: &str) -> Result<Vec<Key<WebCipher>>, JsValue> {
    if crypt.is_undefined() || crypt.is_null() {
        return Ok(Vec::new());
    }
    if !Array::is_array(crypt) {
        return Err(typed(Error::invalid("encryptionKey", "must be an array of key entries")));
    }
    let list = Array::from(crypt);
    if list.length() > KEYS_PER_OPEN_MAX {
        return Err(typed(Error::LimitExceeded { what: "keys given to one open".into(), limit: u64::from(KEYS_PER_OPEN_MAX) }));
    }
    let header = CryptHeader::read(backend, prefix).await.map_err(typed)?;
    let mut out = Vec::new();
    for v in list.iter() {
        let e = entry(&v)?;
        let kdf = header.as_ref().and_then(|h| h.find(&e.id)).and_then(|info| info.kdf.clone());
        if out.iter().any(|k: &Key<WebCipher>| k.id == e.id) {
            return Err(typed(Error::invalid("keyId", format!("{:?} is given twice", e.id))));
        }
        out.push(cipher(e, kdf).await?);
    }
    Ok(out)
}

/// A rotation's new key (a passphrase gets a fresh salt).
pub(super) async fn new_key(v: &JsValue) -> Result<Key<WebCipher>, JsValue> {
    cipher(entry(v)?, None).await
}
