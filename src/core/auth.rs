//! Tenancy and trust as plain data: API keys, what a key covers, and the
//! token bucket that rate-limits it.
//!
//! A key is `emk_{id}_{secret}`: the id (16 hex digits) is public and names
//! the key in listings and logs; the secret (64 hex digits, 256 random bits)
//! is shown once and stored only as its SHA-256. A secret of 256 random bits
//! needs no slow hash: there is nothing to brute-force.
//!
//! The Worker keeps [`KeyRecord`]s in a directory Durable Object and asks it
//! to [`KeyRecord::verify`] the presented secret's hash on every request;
//! nothing here knows where the records live or what time it is.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::session::validate_id;
use crate::core::time::Millis;

/// The prefix that marks an edgemem API key.
pub const KEY_PREFIX: &str = "emk_";
/// Hex digits of a key id.
pub const KEY_ID_HEX_LEN: usize = 16;
/// Hex digits of a key secret.
pub const KEY_SECRET_HEX_LEN: usize = 64;

/// What a key may do. Each request needs one scope ([`crate::api::routes`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// Reads, searches and prompts.
    Read,
    /// Every write.
    Write,
    /// Tenant administration: keys within the key's own coverage, snapshot
    /// publishing.
    Admin,
}

impl Scope {
    pub const ALL: [Scope; 3] = [Scope::Read, Scope::Write, Scope::Admin];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Write => "write",
            Scope::Admin => "admin",
        }
    }
}

/// The namespaces a key covers: one, or every namespace under a prefix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Coverage {
    Namespace(String),
    Prefix(String),
}

impl Coverage {
    /// Whether `namespace` is one this coverage names.
    pub fn covers(&self, namespace: &str) -> bool {
        match self {
            Coverage::Namespace(n) => n == namespace,
            Coverage::Prefix(p) => namespace.starts_with(p.as_str()),
        }
    }

    /// Whether everything `other` covers, this covers too.
    pub fn contains(&self, other: &Coverage) -> bool {
        match other {
            Coverage::Namespace(n) => self.covers(n),
            Coverage::Prefix(p) => matches!(self, Coverage::Prefix(mine) if p.starts_with(mine.as_str())),
        }
    }

    /// The one namespace a request that names none goes to, if the
    /// coverage has exactly one.
    pub fn single(&self) -> Option<&str> {
        match self {
            Coverage::Namespace(n) => Some(n),
            Coverage::Prefix(_) => None,
        }
    }
}

/// Token-bucket parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rate {
    pub per_second: u64,
    pub burst: u64,
}

impl Rate {
    /// Checks the rate against the deployment's ceilings.
    pub fn validate(&self) -> Result<()> {
        if !(1..=limits::RATE_PER_SECOND_CEILING).contains(&self.per_second) {
            return Err(Error::invalid("rate.per_second", format!("must be 1 to {}", limits::RATE_PER_SECOND_CEILING)));
        }
        if !(1..=limits::RATE_BURST_CEILING).contains(&self.burst) {
            return Err(Error::invalid("rate.burst", format!("must be 1 to {}", limits::RATE_BURST_CEILING)));
        }
        Ok(())
    }
}

impl Default for Rate {
    fn default() -> Rate {
        Rate { per_second: limits::RATE_PER_SECOND_DEFAULT, burst: limits::RATE_BURST_DEFAULT }
    }
}

/// A rate limiter for one key. Tokens are counted in thousandths so refill
/// is exact integer arithmetic at any rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenBucket {
    milli_tokens: u64,
    at: Millis,
}

impl TokenBucket {
    /// A full bucket.
    pub fn full(rate: Rate, now: Millis) -> TokenBucket {
        TokenBucket { milli_tokens: rate.burst.saturating_mul(1000), at: now }
    }

    /// Takes one token, or says how many milliseconds until one is there.
    pub fn take(&mut self, rate: Rate, now: Millis) -> std::result::Result<(), u64> {
        let cap = rate.burst.saturating_mul(1000);
        let elapsed = now.saturating_sub(self.at);
        // per_second tokens per 1000 ms = per_second milli-tokens per ms.
        self.milli_tokens = self.milli_tokens.saturating_add(elapsed.saturating_mul(rate.per_second)).min(cap);
        self.at = self.at.max(now);
        if self.milli_tokens >= 1000 {
            self.milli_tokens -= 1000;
            Ok(())
        } else {
            let missing = 1000 - self.milli_tokens;
            Err(missing.div_ceil(rate.per_second.max(1)).max(1))
        }
    }
}

/// A key as the directory stores it: never the secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyRecord {
    pub id: String,
    /// SHA-256 of the secret, hex.
    pub hash: String,
    pub coverage: Coverage,
    pub scopes: Vec<Scope>,
    pub created_at: Millis,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<Millis>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotated_at: Option<Millis>,
    /// The secret a rotation replaced, valid until the given time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous: Option<(String, Millis)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    /// The key that created this one (`None`: the admin token).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
    /// The tenant's encryption key this API key is bound to, as its key id
    /// ([`encryption_key_id`]): requests must carry that key. Never the key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encryption: Option<String>,
}

/// The header a request carries the tenant's encryption key in.
pub const ENCRYPTION_KEY_HEADER: &str = "x-edgemem-encryption-key";
/// The header a rotation carries the new encryption key in.
pub const NEW_ENCRYPTION_KEY_HEADER: &str = "x-edgemem-new-encryption-key";
/// The header that finishes an interrupted rotation: the old key.
pub const PREVIOUS_ENCRYPTION_KEY_HEADER: &str = "x-edgemem-previous-encryption-key";

/// Reads an encryption key header: base64url (no padding) of 32 bytes.
pub fn parse_encryption_key(header: &str) -> Result<[u8; 32]> {
    crate::core::privacy::pseudonym::base64url_decode(header.trim())
        .and_then(|b| <[u8; 32]>::try_from(b.as_slice()).ok())
        .ok_or_else(|| Error::invalid("x-edgemem-encryption-key", "must be base64url (no padding) of 32 random bytes"))
}

/// HMAC-SHA256 keyed by an encryption key over a fixed label: what a
/// Durable Object compares a request's key with (in constant time), so it
/// holds no second copy of the key to compare against.
pub fn encryption_fingerprint(raw: &[u8; 32]) -> [u8; 32] {
    use hmac::{Hmac, Mac};
    let mut m = <Hmac<sha2::Sha256> as Mac>::new_from_slice(raw).expect("HMAC takes any key length");
    m.update(b"edgemem encryption key v1");
    m.finalize().into_bytes().into()
}

/// The id an encryption key is known by: `k` and 16 hex digits of
/// HMAC-SHA256 keyed by the key over a fixed label. It names the key in
/// the store's header and in API-key bindings; it is not the key, and from
/// a random 256-bit key it reveals nothing usable.
pub fn encryption_key_id(raw: &[u8; 32]) -> String {
    let d = encryption_fingerprint(raw);
    let mut id = String::from("k");
    for b in &d[..8] {
        id.push_str(&format!("{b:02x}"));
    }
    id
}

/// Why a presented key was refused. Never leaves the Worker as anything but
/// `unauthorized`, so a caller cannot tell a wrong secret from an expired key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    WrongSecret,
    Expired,
}

impl KeyRecord {
    /// Checks the hash of a presented secret, in constant time.
    pub fn verify(&self, presented_hash: &str, now: Millis) -> std::result::Result<(), Refusal> {
        if self.expires_at.is_some_and(|at| at <= now) {
            return Err(Refusal::Expired);
        }
        let current = ct_eq(self.hash.as_bytes(), presented_hash.as_bytes());
        let previous = self.previous.as_ref().is_some_and(|(h, until)| now < *until && ct_eq(h.as_bytes(), presented_hash.as_bytes()));
        if current | previous {
            Ok(())
        } else {
            Err(Refusal::WrongSecret)
        }
    }

    /// The record as a listing shows it: no hashes.
    pub fn public(&self) -> serde_json::Value {
        let (namespace, prefix) = match &self.coverage {
            Coverage::Namespace(n) => (Some(n.as_str()), None),
            Coverage::Prefix(p) => (None, Some(p.as_str())),
        };
        let mut v = serde_json::json!({
            "id": self.id,
            "namespace": namespace,
            "namespace_prefix": prefix,
            "scopes": self.scopes,
            "created_at": crate::core::time::format_rfc3339(self.created_at),
            "expires_at": self.expires_at.map(crate::core::time::format_rfc3339),
            "rotated_at": self.rotated_at.map(crate::core::time::format_rfc3339),
        });
        if let Some(r) = self.rate {
            v["rate"] = serde_json::json!({ "per_second": r.per_second, "burst": r.burst });
        }
        if let Some(id) = &self.encryption {
            v["encryption_key_id"] = serde_json::json!(id);
        }
        v
    }
}

/// Constant-time byte comparison: the time taken depends on the lengths
/// only, never on where the first difference is.
pub fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = u8::from(a.len() != b.len());
    for i in 0..a.len().min(b.len()) {
        diff |= a[i] ^ b[i];
    }
    diff == 0
}

/// SHA-256 of a key secret, hex.
pub fn hash_secret(secret: &str) -> String {
    hex(&Sha256::digest(secret.as_bytes()))
}

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

/// A freshly minted key from random bytes (the caller's RNG): the full key
/// to show once, its id, and the hash to store.
pub struct Minted {
    pub key: String,
    pub id: String,
    pub hash: String,
}

/// Mints a key from 8 random bytes for the id and 32 for the secret.
pub fn mint(id_bytes: [u8; 8], secret_bytes: [u8; 32]) -> Minted {
    rekey(&hex(&id_bytes), secret_bytes)
}

/// A new secret for an existing key id (a rotation).
pub fn rekey(id: &str, secret_bytes: [u8; 32]) -> Minted {
    let secret = hex(&secret_bytes);
    Minted { key: format!("{KEY_PREFIX}{id}_{secret}"), hash: hash_secret(&secret), id: id.to_owned() }
}

/// Splits a presented key into its id and secret, if it has the shape of
/// one. Says nothing about whether it is valid.
pub fn parse_key(key: &str) -> Option<(&str, &str)> {
    let rest = key.strip_prefix(KEY_PREFIX)?;
    let (id, secret) = rest.split_once('_')?;
    let hexy = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    (hexy(id, KEY_ID_HEX_LEN) && hexy(secret, KEY_SECRET_HEX_LEN)).then_some((id, secret))
}

/// Whether `s` has the shape of a key id.
pub fn is_key_id(s: &str) -> bool {
    s.len() == KEY_ID_HEX_LEN && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Namespaces edgemem keeps for itself (its directory objects).
pub fn check_namespace(namespace: &str) -> Result<()> {
    validate_id("namespace", namespace)?;
    if namespace.starts_with("__") {
        return Err(Error::invalid("namespace", "names starting with '__' are reserved"));
    }
    Ok(())
}

/// `POST /v1/admin/keys`, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRequest {
    pub coverage: Coverage,
    pub scopes: Vec<Scope>,
    pub expires_at: Option<Millis>,
    pub rate: Option<Rate>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyRequestBody {
    #[serde(default)]
    namespace: Option<String>,
    #[serde(default)]
    namespace_prefix: Option<String>,
    scopes: Vec<Scope>,
    #[serde(default)]
    expires_at: Option<serde_json::Value>,
    #[serde(default)]
    rate: Option<Rate>,
}

/// A timestamp given as an RFC 3339 string or as Unix milliseconds.
pub fn parse_instant(field: &str, v: &serde_json::Value) -> Result<Millis> {
    match v {
        serde_json::Value::String(s) => crate::core::time::parse_rfc3339(field, s),
        serde_json::Value::Number(n) => n
            .as_u64()
            .filter(|ms| *ms <= crate::core::time::MILLIS_MAX)
            .ok_or_else(|| Error::invalid(field, "must be an RFC 3339 date-time or Unix milliseconds")),
        _ => Err(Error::invalid(field, "must be an RFC 3339 date-time or Unix milliseconds")),
    }
}

impl KeyRequest {
    /// Parses and checks a key request at `now`.
    pub fn parse(body: &[u8], now: Millis) -> Result<KeyRequest> {
        let b: KeyRequestBody = crate::api::parse_json(body)?;
        let coverage = match (b.namespace, b.namespace_prefix) {
            (Some(n), None) => {
                check_namespace(&n)?;
                Coverage::Namespace(n)
            }
            (None, Some(p)) => {
                if p.is_empty() {
                    return Err(Error::invalid("namespace_prefix", "must not be empty: a key for every tenant is the admin token's job"));
                }
                check_namespace(&p)?;
                Coverage::Prefix(p)
            }
            _ => return Err(Error::invalid("namespace", "give exactly one of namespace and namespace_prefix")),
        };
        let mut scopes = b.scopes;
        scopes.sort();
        scopes.dedup();
        if scopes.is_empty() {
            return Err(Error::invalid("scopes", "give at least one of read, write, admin"));
        }
        let expires_at = b.expires_at.filter(|v| !v.is_null()).map(|v| parse_instant("expires_at", &v)).transpose()?;
        if expires_at.is_some_and(|at| at <= now) {
            return Err(Error::invalid("expires_at", "is in the past"));
        }
        if let Some(r) = &b.rate {
            r.validate()?;
        }
        Ok(KeyRequest { coverage, scopes, expires_at, rate: b.rate })
    }
}

/// Who is asking, once authenticated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Principal {
    /// Local development with auth off (loopback only), or the deployment's
    /// admin token: every namespace, every scope.
    Operator,
    /// A tenant key.
    Key { id: String, coverage: Coverage, scopes: Vec<Scope> },
}

impl Principal {
    /// Refuses a request needing `scope` the principal lacks.
    pub fn require(&self, scope: Scope) -> Result<()> {
        match self {
            Principal::Operator => Ok(()),
            Principal::Key { scopes, .. } if scopes.contains(&scope) => Ok(()),
            Principal::Key { .. } => Err(Error::ScopeForbidden { scope: scope.as_str().into() }),
        }
    }

    /// Whether the principal may touch `namespace`.
    pub fn covers(&self, namespace: &str) -> bool {
        match self {
            Principal::Operator => true,
            Principal::Key { coverage, .. } => coverage.covers(namespace),
        }
    }

    /// Refuses a namespace the principal does not cover.
    pub fn authorize(&self, namespace: &str) -> Result<()> {
        if self.covers(namespace) {
            Ok(())
        } else {
            Err(Error::NamespaceForbidden { namespace: namespace.into() })
        }
    }

    /// The namespace a request that names none goes to.
    pub fn default_namespace(&self) -> Option<&str> {
        match self {
            Principal::Operator => None,
            Principal::Key { coverage, .. } => coverage.single(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minted_keys_parse_and_verify_and_nothing_else_does() {
        let m = mint([1; 8], [2; 32]);
        let (id, secret) = parse_key(&m.key).unwrap();
        assert_eq!(id, m.id);
        assert_eq!(hash_secret(secret), m.hash);
        let rec = KeyRecord { id: m.id.clone(), hash: m.hash.clone(), coverage: Coverage::Namespace("a".into()), scopes: vec![Scope::Read], created_at: 0, expires_at: Some(100), rotated_at: None, previous: None, rate: None, created_by: None, encryption: None };
        assert_eq!(rec.verify(&m.hash, 50), Ok(()));
        assert_eq!(rec.verify(&m.hash, 100), Err(Refusal::Expired));
        assert_eq!(rec.verify(&hash_secret("nope"), 50), Err(Refusal::WrongSecret));
        for bad in ["", "emk_", "emk_0101010101010101", "emk_0101010101010101_", "emk_XX01010101010101_00", &m.key[..m.key.len() - 1], &m.key.to_uppercase(), &format!("{}0", m.key)] {
            assert!(parse_key(bad).is_none(), "{bad}");
        }
        // A listing never shows a hash.
        assert!(!rec.public().to_string().contains(&m.hash));
    }

    #[test]
    fn a_rotated_secret_works_only_within_its_grace() {
        let old = mint([1; 8], [2; 32]);
        let new = mint([1; 8], [3; 32]);
        let rec = KeyRecord { id: old.id, hash: new.hash.clone(), coverage: Coverage::Prefix("t-".into()), scopes: vec![Scope::Write], created_at: 0, expires_at: None, rotated_at: Some(10), previous: Some((old.hash.clone(), 20)), rate: None, created_by: None, encryption: None };
        assert!(rec.verify(&old.hash, 19).is_ok());
        assert!(rec.verify(&old.hash, 20).is_err());
        assert!(rec.verify(&new.hash, 1_000).is_ok());
    }

    #[test]
    fn coverage_and_scopes_decide() {
        let p = Principal::Key { id: "k".into(), coverage: Coverage::Prefix("acme-".into()), scopes: vec![Scope::Read] };
        assert!(p.authorize("acme-eu").is_ok());
        assert_eq!(p.authorize("globex").unwrap_err().code(), "namespace_forbidden");
        assert_eq!(p.require(Scope::Write).unwrap_err().code(), "scope_forbidden");
        assert!(p.require(Scope::Read).is_ok());
        assert_eq!(p.default_namespace(), None);
        assert!(Coverage::Prefix("acme-".into()).contains(&Coverage::Prefix("acme-eu-".into())));
        assert!(!Coverage::Prefix("acme-eu-".into()).contains(&Coverage::Prefix("acme-".into())));
        assert!(!Coverage::Namespace("acme".into()).contains(&Coverage::Prefix("acme".into())));
        assert!(Principal::Operator.authorize("anything").is_ok());
    }

    #[test]
    fn key_requests_are_checked() {
        let ok = KeyRequest::parse(br#"{"namespace":"acme","scopes":["write","read","read"],"expires_at":"2030-01-01T00:00:00Z"}"#, 0).unwrap();
        assert_eq!(ok.scopes, vec![Scope::Read, Scope::Write]);
        assert_eq!(ok.coverage, Coverage::Namespace("acme".into()));
        for (body, code) in [
            (r#"{"scopes":["read"]}"#, "invalid_input"),
            (r#"{"namespace":"a","namespace_prefix":"b","scopes":["read"]}"#, "invalid_input"),
            (r#"{"namespace_prefix":"","scopes":["read"]}"#, "invalid_input"),
            (r#"{"namespace":"__keys","scopes":["read"]}"#, "invalid_input"),
            (r#"{"namespace":"a","scopes":[]}"#, "invalid_input"),
            (r#"{"namespace":"a","scopes":["root"]}"#, "invalid_input"),
            (r#"{"namespace":"a","scopes":["read"],"expires_at":5}"#, "invalid_input"),
            (r#"{"namespace":"a","scopes":["read"],"rate":{"per_second":0,"burst":1}}"#, "invalid_input"),
            (r#"{"namespace":"a","scopes":["read"],"extra":1}"#, "invalid_input"),
            ("{", "invalid_json"),
        ] {
            assert_eq!(KeyRequest::parse(body.as_bytes(), 10).unwrap_err().code(), code, "{body}");
        }
    }

    #[test]
    fn the_bucket_refills_exactly_and_says_when() {
        let rate = Rate { per_second: 2, burst: 3 };
        let mut b = TokenBucket::full(rate, 0);
        for _ in 0..3 {
            assert!(b.take(rate, 0).is_ok());
        }
        assert_eq!(b.take(rate, 0), Err(500));
        assert_eq!(b.take(rate, 499), Err(1));
        assert!(b.take(rate, 500).is_ok());
        // A long idle period refills to the burst, no more.
        let mut n = 0;
        while b.take(rate, 1_000_000).is_ok() {
            n += 1;
        }
        assert_eq!(n, 3);
        // A clock that steps back does not mint tokens.
        assert!(b.take(rate, 10).is_err());
    }

    #[test]
    fn comparison_is_exact() {
        assert!(ct_eq(b"abc", b"abc"));
        assert!(!ct_eq(b"abc", b"abd"));
        assert!(!ct_eq(b"abc", b"abcd"));
        assert!(!ct_eq(b"", b"a"));
    }

    #[test]
    fn encryption_keys_parse_strictly_and_have_stable_ids() {
        let raw = [7u8; 32];
        let mut b64 = String::new();
        crate::core::privacy::pseudonym::base64url_encode(&raw, &mut b64);
        assert_eq!(parse_encryption_key(&b64).unwrap(), raw);
        assert_eq!(parse_encryption_key(&b64[..40]).unwrap_err().code(), "invalid_input");
        assert_eq!(parse_encryption_key("not base64!").unwrap_err().code(), "invalid_input");
        let id = encryption_key_id(&raw);
        assert_eq!(id.len(), 17);
        assert_eq!(id, encryption_key_id(&raw));
        assert_ne!(id, encryption_key_id(&[8u8; 32]));
        crate::store::validate_key_id(&id).unwrap();
    }
}
