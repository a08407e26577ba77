//! Encryption at rest in the Durable Object: the tenant's key arrives with
//! each request (`X-Edgemem-Encryption-Key`, base64url of 32 bytes), is
//! imported once as a non-extractable WebCrypto key, and is held in memory
//! only while the object is active. The object keeps the key's fingerprint
//! (HMAC-SHA256 under the key) to check every later request against, in
//! constant time; storage holds only the key id.
//!
//! * A tenant sealed under a key refuses a request without it
//!   (`key_required`) or with another (`decryption_failed`).
//! * A key sent to a plaintext tenant encrypts it (the same rotation).
//! * `POST /v1/encryption/rotate` re-encrypts under
//!   `X-Edgemem-New-Encryption-Key`; after a crash the same request (or any
//!   request with the new key and `X-Edgemem-Previous-Encryption-Key`)
//!   finishes it.

use serde_json::{json, Value};
use worker::Request;

use super::sql::SqlBackend;
use crate::core::auth::{ct_eq, encryption_fingerprint, encryption_key_id, parse_encryption_key, ENCRYPTION_KEY_HEADER, NEW_ENCRYPTION_KEY_HEADER, PREVIOUS_ENCRYPTION_KEY_HEADER};
use crate::core::error::{Error, Result};
use crate::store::{Key, Sealed, Store, StoreConfig};
use crate::webcrypto::WebCipher;

/// A tenant's store: sealed when the tenant has a key.
pub(super) type DoStore = Store<Sealed<SqlBackend, WebCipher>>;

/// The route that rotates a tenant's key.
pub(super) const ROTATE_PATH: &str = "/v1/encryption/rotate";
/// The route that reports a tenant's encryption.
pub(super) const STATUS_PATH: &str = "/v1/encryption";

/// The encryption keys one request carries.
#[derive(Default)]
pub(super) struct RequestKeys {
    current: Option<[u8; 32]>,
    new: Option<[u8; 32]>,
    previous: Option<[u8; 32]>,
}

impl RequestKeys {
    /// Reads (and checks) the request's key headers.
    pub fn from(req: &Request) -> Result<RequestKeys> {
        let get = |name: &str| -> Result<Option<[u8; 32]>> {
            match req.headers().get(name).map_err(|e| Error::Internal { detail: e.to_string() })? {
                Some(v) => parse_encryption_key(&v).map(Some).map_err(|e| e.renamed(name)),
                None => Ok(None),
            }
        };
        Ok(RequestKeys { current: get(ENCRYPTION_KEY_HEADER)?, new: get(NEW_ENCRYPTION_KEY_HEADER)?, previous: get(PREVIOUS_ENCRYPTION_KEY_HEADER)? })
    }

    /// Whether the request carries a new key (a rotation's).
    pub fn has_new(&self) -> bool {
        self.new.is_some()
    }

    /// The keys an open is given, the one to seal under first: for a
    /// rotation the new key and the current one; otherwise the current key
    /// and, to finish an interrupted rotation, the previous one.
    fn open_list(&self, rotating: bool) -> Vec<[u8; 32]> {
        let pair = if rotating { [self.new, self.current] } else { [self.current, self.previous] };
        pair.into_iter().flatten().collect()
    }
}

/// The tenant key among headers passed on (`X-Edgemem-Encryption-Key`'s
/// value), for the calls that carry it further: a split's, a publish's.
pub(super) fn key_in<K: AsRef<str>>(headers: &[(K, String)]) -> Option<&str> {
    headers.iter().find(|(name, _)| name.as_ref().eq_ignore_ascii_case(ENCRYPTION_KEY_HEADER)).map(|(_, v)| v.as_str())
}

/// The WebCrypto key of `raw` (a request's key), named by its id.
pub(super) async fn key(raw: &[u8; 32]) -> Result<Key<WebCipher>> {
    Ok(Key { id: encryption_key_id(raw), cipher: WebCipher::from_raw(raw).await?, kdf: None })
}

/// An open tenant store and the fingerprint of the key it is sealed under.
pub(super) struct Tenant {
    pub store: std::rc::Rc<DoStore>,
    fingerprint: Option<[u8; 32]>,
}

impl Tenant {
    /// Opens the tenant's store with the request's keys (finishing a due
    /// rotation, or encrypting a plaintext tenant given a key).
    pub async fn open(storage: SqlBackend, keys: &RequestKeys, rotating: bool, config: StoreConfig) -> Result<Tenant> {
        let list = keys.open_list(rotating);
        let mut ring = Vec::with_capacity(list.len());
        for raw in &list {
            ring.push(key(raw).await?);
        }
        let store = Store::open_sealed(Sealed::open(storage, "", ring).await?, config).await?;
        let fingerprint = match store.key_id().await {
            Some(_) => list.first().map(encryption_fingerprint),
            None => None,
        };
        Ok(Tenant { store: std::rc::Rc::new(store), fingerprint })
    }

    /// Checks a request against the open store, encrypting a plaintext
    /// tenant given a key or rotating on the rotate route. Answers whether
    /// storage was rewritten (which drops the alarm).
    pub async fn admit(&mut self, keys: &RequestKeys, rotating: bool) -> Result<bool> {
        let given = keys.current.as_ref().map(encryption_fingerprint);
        match (&self.fingerprint, &given) {
            (None, _) => {}
            (Some(_), None) => return Err(Error::KeyRequired { key_id: self.store.key_id().await }),
            (Some(held), Some(g)) if ct_eq(held, g) => {}
            (Some(held), Some(_)) => {
                // A rotation retried after it landed carries the new key.
                let retried = rotating && keys.new.as_ref().is_some_and(|n| ct_eq(held, &encryption_fingerprint(n)));
                if !retried {
                    let sealed_under = self.store.key_id().await.unwrap_or_default();
                    return Err(Error::DecryptionFailed { key_id: keys.current.as_ref().map(encryption_key_id).unwrap_or_default(), detail: format!("this tenant is sealed under key {sealed_under:?}") });
                }
                return Ok(false);
            }
        }
        let target = if rotating { keys.new } else if self.fingerprint.is_none() { keys.current } else { None };
        match target {
            Some(raw) => {
                self.store.rotate_key(key(&raw).await?).await?;
                self.fingerprint = Some(encryption_fingerprint(&raw));
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// `GET /v1/encryption` and the answer of a rotation.
    pub async fn status(&self, keys: &RequestKeys, rotated: bool) -> Value {
        let key_id = self.store.key_id().await;
        if rotated {
            return json!({ "key_id": key_id, "previous_key_id": keys.current.as_ref().map(encryption_key_id), "leftovers": self.store.leftovers().await });
        }
        json!({ "encrypted": key_id.is_some(), "key_id": key_id, "algorithm": key_id.as_ref().map(|_| "AES-256-GCM") })
    }
}
