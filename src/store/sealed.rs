//! Encryption at rest: [`Sealed`], a [`Backend`] adapter that seals every
//! op-log record and snapshot chunk with AES-256-GCM before it reaches the
//! backend, under a key the tenant holds and edgemem never stores.
//!
//! What is sealed is decided by key name, never by sniffing the bytes:
//! `log/…` and `snap/…` values are sealed; `head` (generation, chunk count
//! and last seq, all readable from key names anyway) and `crypt`, the
//! encryption header, stay plaintext.
//!
//! * A sealed value is `EMX1 | id_len u8 | key_id | nonce(12) | ct‖tag(16)`.
//!   Its additional authenticated data is `EMX1 | key_id | storage key`, so a
//!   value moved to another key (another seq, another chunk) fails.
//! * The header (`EMCR | u32 version | JSON`) names the current key id, a
//!   check value sealed under it (so a wrong key is refused at open, before
//!   anything is written), the PBKDF2 salt and iteration count when the key
//!   came from a passphrase, and, during a rotation, the previous key.
//! * Reads open each value under the key its envelope names, so a store
//!   mid-rotation reads with both keys; a value under a key not given is
//!   `key_required`, one that fails authentication `decryption_failed`.
//!
//! Rotation, and enabling encryption on a plaintext store, follow the
//! snapshot protocol (see [`super::Store::rotate_key`]): write the header
//! naming the new key (and the old one as previous), take a snapshot (its
//! head swap commits every live value to the new key), then write the header
//! without the previous key. A crash anywhere leaves a store that opens with
//! the keys named in its header, and the next open with the new key finishes
//! the rotation.

use std::cell::RefCell;
use std::rc::Rc;

use serde::{Deserialize, Serialize};

use super::keys;
use super::{Backend, Durability, KeyRange};
use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::privacy::pseudonym::{base64url_decode, base64url_encode};

const ENVELOPE_MAGIC: &[u8; 4] = b"EMX1";
const HEADER_MAGIC: &[u8; 4] = b"EMCR";
/// The header format this build writes and reads.
pub const HEADER_VERSION: u32 = 1;
/// The one algorithm: AES-256-GCM, 96-bit random nonces, 128-bit tags.
pub const ALG: &str = "A256GCM";
/// The key-derivation algorithm a passphrase goes through.
pub const KDF_ALG: &str = "PBKDF2-SHA256";
const CHECK_PLAIN: &[u8] = b"edgemem";

/// An authenticated cipher under one key: AES-256-GCM through WebCrypto on
/// every JS host. `seal` picks a fresh random nonce itself.
#[allow(async_fn_in_trait)] // single-threaded wasm: futures need not be Send
pub trait Cipher {
    /// Encrypts `plain`, authenticating `aad`: answers `nonce ‖ ct ‖ tag`.
    async fn seal(&self, aad: &[u8], plain: &[u8]) -> Result<Vec<u8>>;
    /// Opens what [`Cipher::seal`] answered; `None` when it fails
    /// authentication (a wrong key, altered bytes or another `aad`).
    async fn open(&self, aad: &[u8], sealed: &[u8]) -> Result<Option<Vec<u8>>>;
}

/// How a key was derived from a passphrase, stored so that the same
/// passphrase derives the same key later (even after the default count
/// changes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Kdf {
    /// Always [`KDF_ALG`].
    pub alg: String,
    /// base64url of [`limits::CRYPT_SALT_BYTES`] random bytes.
    pub salt: String,
    /// Between [`limits::CRYPT_PBKDF2_ITERATIONS_MIN`] and `_MAX`.
    pub iterations: u32,
}

impl Kdf {
    /// A new passphrase derivation over `salt`, at the default count.
    pub fn new(salt: &[u8]) -> Kdf {
        let mut s = String::new();
        base64url_encode(salt, &mut s);
        Kdf { alg: KDF_ALG.into(), salt: s, iterations: limits::CRYPT_PBKDF2_ITERATIONS }
    }

    /// The salt's bytes, checked.
    pub fn salt_bytes(&self) -> Result<Vec<u8>> {
        base64url_decode(&self.salt)
            .filter(|s| s.len() == limits::CRYPT_SALT_BYTES)
            .ok_or_else(|| corrupt("the kdf salt is not 16 bytes of base64url"))
    }

    fn validate(&self) -> Result<()> {
        if self.alg != KDF_ALG {
            return Err(corrupt(&format!("unknown kdf {:?}", self.alg)));
        }
        if !(limits::CRYPT_PBKDF2_ITERATIONS_MIN..=limits::CRYPT_PBKDF2_ITERATIONS_MAX).contains(&self.iterations) {
            return Err(corrupt("the kdf iteration count is out of bounds"));
        }
        self.salt_bytes().map(|_| ())
    }
}

/// A key the caller holds: its id (stored in the header and in every
/// envelope, never the key), its cipher, and its derivation if it came
/// from a passphrase.
pub struct Key<C> {
    pub id: String,
    pub cipher: C,
    pub kdf: Option<Kdf>,
}

/// Checks a key id: 1 to [`limits::CRYPT_KEY_ID_BYTES_MAX`] bytes of
/// `[A-Za-z0-9._-]`.
pub fn validate_key_id(id: &str) -> Result<()> {
    if id.is_empty() || id.len() > limits::CRYPT_KEY_ID_BYTES_MAX || !id.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b)) {
        return Err(Error::invalid("keyId", format!("must be 1 to {} characters of A-Z a-z 0-9 . _ -", limits::CRYPT_KEY_ID_BYTES_MAX)));
    }
    Ok(())
}

/// One key's entry in the header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyInfo {
    pub id: String,
    /// base64url of `seal(CHECK_PLAIN)` under the key.
    check: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kdf: Option<Kdf>,
}

/// While encryption is being enabled on a plaintext store: chunks of
/// generations below `gen` and log records below `seq` are plaintext.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Legacy {
    gen: u64,
    seq: u64,
}

/// The encryption header, stored in plaintext under `crypt`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    alg: String,
    /// The key every new value is sealed under.
    pub current: KeyInfo,
    /// During a rotation: the key live values may still be sealed under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous: Option<KeyInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    legacy_below: Option<Legacy>,
}

impl Header {
    fn encode(&self) -> Result<Vec<u8>> {
        let json = serde_json::to_vec(self).map_err(|e| Error::Internal { detail: format!("encode crypt header: {e}") })?;
        let mut out = Vec::with_capacity(8 + json.len());
        out.extend_from_slice(HEADER_MAGIC);
        out.extend_from_slice(&HEADER_VERSION.to_le_bytes());
        out.extend_from_slice(&json);
        Ok(out)
    }

    fn decode(bytes: &[u8]) -> Result<Header> {
        if bytes.len() > limits::CRYPT_HEADER_BYTES_MAX {
            return Err(corrupt("the encryption header is too large"));
        }
        if bytes.len() < 8 || &bytes[..4] != HEADER_MAGIC {
            return Err(corrupt("the encryption header has no EMCR magic"));
        }
        let version = u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]);
        if version > HEADER_VERSION {
            return Err(Error::SchemaVersionUnsupported { found: version, supported_max: HEADER_VERSION, input: false });
        }
        let h: Header = serde_json::from_slice(&bytes[8..]).map_err(|e| corrupt(&format!("the encryption header does not decode: {e}")))?;
        if h.alg != ALG {
            return Err(corrupt(&format!("unknown algorithm {:?}", h.alg)));
        }
        for info in std::iter::once(&h.current).chain(h.previous.as_ref()) {
            validate_key_id(&info.id).map_err(|_| corrupt("a key id in the encryption header is malformed"))?;
            if let Some(kdf) = &info.kdf {
                kdf.validate()?;
            }
        }
        Ok(h)
    }

    /// Reads the header of the store under `prefix`, if it is encrypted:
    /// hosts read it before deriving a passphrase's key (its salt).
    pub async fn read<B: Backend + ?Sized>(backend: &B, prefix: &str) -> Result<Option<Header>> {
        match backend.get(&keys::crypt_key(prefix)).await? {
            Some(bytes) => Header::decode(&bytes).map(Some),
            None => Ok(None),
        }
    }

    /// The entry for key `id`, current or previous.
    pub fn find(&self, id: &str) -> Option<&KeyInfo> {
        std::iter::once(&self.current).chain(self.previous.as_ref()).find(|k| k.id == id)
    }
}

fn corrupt(reason: &str) -> Error {
    Error::SnapshotCorrupt { reason: reason.to_owned() }
}

fn check_aad(prefix: &str, id: &str) -> Vec<u8> {
    format!("edgemem check\0{prefix}\0{id}").into_bytes()
}

fn value_aad(id: &str, key: &str) -> Vec<u8> {
    let mut aad = Vec::with_capacity(4 + id.len() + 1 + key.len());
    aad.extend_from_slice(ENVELOPE_MAGIC);
    aad.extend_from_slice(id.as_bytes());
    aad.push(0);
    aad.extend_from_slice(key.as_bytes());
    aad
}

async fn key_info<C: Cipher>(prefix: &str, key: &Key<C>) -> Result<KeyInfo> {
    let sealed = key.cipher.seal(&check_aad(prefix, &key.id), CHECK_PLAIN).await?;
    let mut check = String::new();
    base64url_encode(&sealed, &mut check);
    Ok(KeyInfo { id: key.id.clone(), check, kdf: key.kdf.clone() })
}

async fn verify<C: Cipher>(prefix: &str, key: &Key<C>, info: &KeyInfo) -> Result<()> {
    let sealed = base64url_decode(&info.check).ok_or_else(|| corrupt("a key check in the encryption header is not base64url"))?;
    match key.cipher.open(&check_aad(prefix, &key.id), &sealed).await? {
        Some(plain) if plain == CHECK_PLAIN => Ok(()),
        _ => Err(Error::DecryptionFailed { key_id: key.id.clone(), detail: "the key does not match the store's encryption header".into() }),
    }
}

/// What the adapter knows of its store's encryption.
struct State {
    /// The header that governs reads and writes (`None`: a plaintext store).
    header: Option<Header>,
    /// Whether `header` is stored yet: a new store's header is written just
    /// before its first sealed value, so opening writes nothing.
    stored: bool,
    /// The key id the caller wants current; differs from the header's while
    /// a rotation (or the enabling of encryption) is due.
    want: Option<String>,
}

/// A [`Backend`] that seals `log/` and `snap/` values under the tenant's
/// key. With no key and no header it passes everything through unchanged,
/// so a plaintext store keeps working.
pub struct Sealed<B, C> {
    inner: B,
    prefix: String,
    /// Keys given by the caller that passed their check, by id.
    ring: RefCell<Vec<Rc<Key<C>>>>,
    state: RefCell<State>,
}

impl<B: Backend, C: Cipher> Sealed<B, C> {
    /// Opens the adapter over the store under `prefix`, checking `keys`
    /// against its header. The first key is the one new values are sealed
    /// under; more keys may be given while a rotation is unfinished.
    ///
    /// * No header, no key: a plaintext store (pass-through).
    /// * A header and no key: `key_required`, naming the header's key id.
    /// * A key that fails its check: `decryption_failed`.
    /// * A first key the header does not name: `decryption_failed`, unless
    ///   the header's current key is given too (then a rotation to the
    ///   first key is due, which [`super::Store::open_sealed`] runs).
    /// * A key over a plaintext store: a new store is sealed from its first
    ///   write; one holding data is encrypted by `open_sealed`.
    ///
    /// Writes nothing.
    pub async fn open(inner: B, prefix: &str, keys: Vec<Key<C>>) -> Result<Sealed<B, C>> {
        for k in &keys {
            validate_key_id(&k.id)?;
            if let Some(kdf) = &k.kdf {
                kdf.validate().map_err(|_| Error::invalid("kdf", "a passphrase key's salt or iteration count is out of bounds"))?;
            }
        }
        let header = Header::read(&inner, prefix).await?;
        let want = keys.first().map(|k| k.id.clone());
        let mut ring = Vec::new();
        let state = match (header, keys.is_empty()) {
            (None, true) => State { header: None, stored: false, want: None },
            (Some(h), true) => return Err(Error::KeyRequired { key_id: Some(h.current.id) }),
            (Some(h), false) => {
                if !keys.iter().any(|k| k.id == h.current.id) {
                    let first = &keys[0].id;
                    return Err(if h.find(first).is_none() {
                        Error::DecryptionFailed { key_id: first.clone(), detail: format!("this store is sealed under key {:?}, not {first:?}", h.current.id) }
                    } else {
                        Error::KeyRequired { key_id: Some(h.current.id) }
                    });
                }
                for k in keys {
                    match h.find(&k.id) {
                        Some(info) => verify(prefix, &k, info).await?,
                        // The rotation target: new to this store.
                        None if Some(&k.id) == want.as_ref() => {}
                        None => continue,
                    }
                    ring.push(Rc::new(k));
                }
                State { header: Some(h), stored: true, want }
            }
            (None, false) => {
                let empty = inner.get(&keys::head_key(prefix)).await?.is_none()
                    && inner.list(KeyRange { prefix: &keys::log_prefix(prefix), start: "", end: None, limit: 1 }).await?.is_empty();
                let first = keys.into_iter().next().map(Rc::new);
                let header = match (&first, empty) {
                    (Some(k), true) => Some(Header { alg: ALG.into(), current: key_info(prefix, k).await?, previous: None, legacy_below: None }),
                    _ => None,
                };
                ring.extend(first);
                State { header, stored: false, want }
            }
        };
        Ok(Sealed { inner, prefix: prefix.to_owned(), ring: RefCell::new(ring), state: RefCell::new(state) })
    }

    /// A plaintext pass-through (a volatile replica, which never stores
    /// anything durable).
    pub fn passthrough(inner: B) -> Sealed<B, C> {
        Sealed { inner, prefix: String::new(), ring: RefCell::new(Vec::new()), state: RefCell::new(State { header: None, stored: false, want: None }) }
    }

    /// The adapter over a publish target (a KV replica), which each publish
    /// overwrites whole: whatever key or plaintext it held before, the next
    /// publish seals under `key` ([`super::Store::publish_sealed`]). A key
    /// the target's header already names must pass its check.
    pub async fn for_publish(inner: B, prefix: &str, key: Key<C>) -> Result<Sealed<B, C>> {
        validate_key_id(&key.id)?;
        let header = Header::read(&inner, prefix).await?;
        if let Some(info) = header.as_ref().and_then(|h| h.find(&key.id)) {
            verify(prefix, &key, info).await?;
        }
        let state = State { stored: header.is_some(), header, want: Some(key.id.clone()) };
        Ok(Sealed { inner, prefix: prefix.to_owned(), ring: RefCell::new(vec![Rc::new(key)]), state: RefCell::new(state) })
    }

    /// The wrapped backend.
    pub fn inner(&self) -> &B {
        &self.inner
    }

    /// The current key's id, when the store is (or is about to be) sealed.
    pub fn key_id(&self) -> Option<String> {
        self.state.borrow().header.as_ref().map(|h| h.current.id.clone())
    }

    /// Whether a rotation, or the enabling of encryption, must run before
    /// the store is used: the wanted key is not yet the only live one.
    pub fn rotation_due(&self) -> bool {
        let s = self.state.borrow();
        match (&s.want, &s.header) {
            (None, _) => false,
            (Some(_), None) => true,
            (Some(want), Some(h)) => *want != h.current.id || h.previous.is_some() || h.legacy_below.is_some(),
        }
    }

    /// A key like the current one, for sealing another target (a published
    /// replica) under it.
    pub fn current_key(&self) -> Option<Key<C>>
    where
        C: Clone,
    {
        let id = self.key_id()?;
        let k = self.key(&id).ok()?;
        Some(Key { id: k.id.clone(), cipher: k.cipher.clone(), kdf: k.kdf.clone() })
    }

    /// Whether the store was opened as plaintext, without a key.
    fn opened_plain(&self) -> bool {
        let s = self.state.borrow();
        s.header.is_none() && s.want.is_none()
    }

    /// Whether the header names plaintext ranges (a plaintext store being
    /// encrypted).
    pub(super) fn plaintext_ranges(&self) -> bool {
        self.state.borrow().header.as_ref().is_some_and(|h| h.legacy_below.is_some())
    }

    /// Whether the header still names a previous key or plaintext ranges.
    pub(super) fn unfinished(&self) -> bool {
        self.state.borrow().header.as_ref().is_some_and(|h| h.previous.is_some() || h.legacy_below.is_some())
    }

    /// Makes `key` the wanted key (a rotation's target).
    pub(super) fn set_target(&self, key: Key<C>) -> Result<()> {
        validate_key_id(&key.id)?;
        let mut ring = self.ring.borrow_mut();
        let id = key.id.clone();
        let known = ring.iter().any(|k| k.id == id) || self.state.borrow().header.as_ref().is_some_and(|h| h.find(&id).is_some());
        if known {
            return Err(Error::invalid("keyId", format!("{id:?} is already one of this store's keys; a new key needs a new id")));
        }
        ring.push(Rc::new(key));
        self.state.borrow_mut().want = Some(id);
        Ok(())
    }

    /// Commit point A of a rotation: stores the header naming the wanted
    /// key as current and the old one as previous (or, on a plaintext
    /// store, the generations and seqs that stay plaintext until the next
    /// snapshot). `last_seq` and `head_gen` describe the store now.
    pub(super) async fn begin_rotation(&self, last_seq: u64, head_gen: Option<u64>) -> Result<()> {
        let want = self.state.borrow().want.clone().ok_or_else(|| Error::Internal { detail: "a rotation without a target key".into() })?;
        let target = self.key(&want)?;
        let old = self.state.borrow().header.clone();
        let header = match old {
            Some(h) if !self.state.borrow().stored => Header { current: key_info(&self.prefix, &target).await?, ..h },
            Some(h) if h.current.id == want => h,
            Some(h) => Header { alg: ALG.into(), current: key_info(&self.prefix, &target).await?, previous: Some(h.current), legacy_below: h.legacy_below },
            None => Header {
                alg: ALG.into(),
                current: key_info(&self.prefix, &target).await?,
                previous: None,
                legacy_below: Some(Legacy { gen: head_gen.map_or(1, |g| g.saturating_add(1)), seq: last_seq.saturating_add(1) }),
            },
        };
        self.write_header(header).await
    }

    /// Commit point C: after a snapshot under the current key committed,
    /// no live value is under the previous key or in plaintext any more.
    pub(super) async fn end_rotation(&self) -> Result<()> {
        let header = self.state.borrow().header.clone();
        if let Some(h) = header {
            if h.previous.is_some() || h.legacy_below.is_some() {
                self.write_header(Header { previous: None, legacy_below: None, ..h }).await?;
            }
        }
        Ok(())
    }

    async fn write_header(&self, header: Header) -> Result<()> {
        self.inner.put(&keys::crypt_key(&self.prefix), header.encode()?).await?;
        let mut s = self.state.borrow_mut();
        s.header = Some(header);
        s.stored = true;
        Ok(())
    }

    fn key(&self, id: &str) -> Result<Rc<Key<C>>> {
        self.ring.borrow().iter().find(|k| k.id == id).cloned().ok_or_else(|| Error::KeyRequired { key_id: Some(id.to_owned()) })
    }

    /// Whether the value under `key` is (to be) sealed.
    fn sealed(&self, key: &str) -> bool {
        let s = self.state.borrow();
        let Some(h) = &s.header else { return false };
        let Some(rest) = key.strip_prefix(&self.prefix) else { return false };
        if let Some(gen) = rest.strip_prefix("snap/").and_then(|r| r.get(..16)).and_then(|g| u64::from_str_radix(g, 16).ok()) {
            return h.legacy_below.is_none_or(|l| gen >= l.gen);
        }
        match keys::parse_seq(&self.prefix, key) {
            Some(seq) => h.legacy_below.is_none_or(|l| seq >= l.seq),
            None => false,
        }
    }

    async fn seal(&self, key: &str, value: &[u8]) -> Result<Vec<u8>> {
        let id = self.key_id().ok_or_else(|| Error::Internal { detail: "sealing without a header".into() })?;
        let k = self.key(&id)?;
        let body = k.cipher.seal(&value_aad(&id, key), value).await?;
        let mut out = Vec::with_capacity(5 + id.len() + body.len());
        out.extend_from_slice(ENVELOPE_MAGIC);
        out.push(id.len() as u8);
        out.extend_from_slice(id.as_bytes());
        out.extend_from_slice(&body);
        Ok(out)
    }

    async fn unseal(&self, key: &str, value: Vec<u8>) -> Result<Vec<u8>> {
        let bad = |detail: &str| Error::DecryptionFailed { key_id: String::new(), detail: format!("{key}: {detail}") };
        if value.len() < 5 || &value[..4] != ENVELOPE_MAGIC {
            return Err(bad("not a sealed value"));
        }
        let id_len = value[4] as usize;
        let id = value.get(5..5 + id_len).and_then(|b| std::str::from_utf8(b).ok()).ok_or_else(|| bad("a malformed envelope"))?;
        let k = self.key(id)?;
        match k.cipher.open(&value_aad(id, key), &value[5 + id_len..]).await? {
            Some(plain) => Ok(plain),
            None => Err(Error::DecryptionFailed {
                key_id: id.to_owned(),
                detail: format!("{key} failed authentication: a wrong key, or the value was altered in storage"),
            }),
        }
    }

    async fn maybe_seal(&self, key: &str, value: Vec<u8>) -> Result<Vec<u8>> {
        if self.sealed(key) {
            self.seal(key, &value).await
        } else {
            Ok(value)
        }
    }
}

impl<B: Backend, C: Cipher> Backend for Sealed<B, C> {
    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        match self.inner.get(key).await? {
            Some(v) if self.sealed(key) => self.unseal(key, v).await.map(Some),
            other => Ok(other),
        }
    }

    async fn put(&self, key: &str, value: Vec<u8>) -> Result<()> {
        if !self.sealed(key) {
            if self.opened_plain() && keys::parse_seq(&self.prefix, key).is_some() {
                // Another process (a second tab) may have encrypted this
                // store since: a plaintext record would then sit among
                // sealed ones. One read per op, on plaintext stores only.
                if let Some(h) = Header::read(&self.inner, &self.prefix).await? {
                    return Err(Error::KeyRequired { key_id: Some(h.current.id) });
                }
            }
            return self.inner.put(key, value).await;
        }
        let pending = {
            let s = self.state.borrow();
            if s.stored { None } else { s.header.clone() }
        };
        if let Some(h) = pending {
            self.write_header(h).await?;
        }
        let sealed = self.seal(key, &value).await?;
        self.inner.put(key, sealed).await
    }

    async fn delete(&self, keys: &[String]) -> Result<()> {
        self.inner.delete(keys).await
    }

    async fn list(&self, range: KeyRange<'_>) -> Result<Vec<String>> {
        self.inner.list(range).await
    }

    async fn get_range(&self, range: KeyRange<'_>) -> Result<Vec<(String, Vec<u8>)>> {
        let mut out = Vec::new();
        for (key, value) in self.inner.get_range(range).await? {
            let value = if self.sealed(&key) { self.unseal(&key, value).await? } else { value };
            out.push((key, value));
        }
        Ok(out)
    }

    fn durability(&self) -> Durability {
        self.inner.durability()
    }

    fn deletes_leave_bytes(&self) -> bool {
        self.inner.deletes_leave_bytes()
    }

    /// The head is plaintext, so its commit passes through; a sealed key
    /// takes the put path, which seals it.
    async fn commit_head(&self, key: &str, value: &[u8], retire: &[KeyRange<'_>]) -> Result<bool> {
        if self.sealed(key) {
            return Ok(false);
        }
        self.inner.commit_head(key, value, retire).await
    }

    fn value_overhead_bytes(&self) -> usize {
        if self.state.borrow().header.is_some() {
            limits::CRYPT_ENVELOPE_BYTES_MAX
        } else {
            0
        }
    }

    async fn replace_all(&self, entries: Vec<(String, Vec<u8>)>) -> Result<()> {
        let mut sealed = Vec::with_capacity(entries.len() + 1);
        for (key, value) in entries {
            let value = self.maybe_seal(&key, value).await?;
            sealed.push((key, value));
        }
        let header = self.state.borrow().header.clone();
        if let Some(h) = header {
            sealed.push((keys::crypt_key(&self.prefix), h.encode()?));
        }
        self.inner.replace_all(sealed).await
    }
}
