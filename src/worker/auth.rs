//! Who is asking: the admin token, a tenant key, or local development.
//!
//! Keys live in a directory of Durable Objects, as [`KeyRecord`]s: a hash,
//! never the secret. A key's record is in `__keys/{n}`, `n` its id's bucket
//! modulo [`limits::KEY_DIRECTORY_SHARDS`], so no one object verifies every
//! request of a deployment. The front Worker hashes the presented secret
//! and asks the key's object to verify it and take a token from the key's
//! bucket in one call, so a revocation or a rotation takes effect on the
//! very next request and a rate limit is exact, with no cache to go stale.
//! Keys written by earlier releases, in the single `__keys`, are found
//! there on a miss and moved to their object. The secret itself never
//! leaves the front Worker and is never formatted into a log line or an
//! error.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use worker::{Env, Method, Request, RequestInit, State, Url};

use super::backend::DoBackend;
use crate::core::auth::{self, Coverage, KeyRecord, Principal, Rate, Scope, TokenBucket};
use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::shard::bucket_of;
use crate::core::time::Millis;
use crate::store::{Backend, KeyRange};

/// The key directory of earlier releases, every key in one object
/// (reserved: namespaces may not start with `__`); read on a miss.
const KEYS_OBJECT: &str = "__keys";

/// The key directory object that holds key `id`'s record.
fn keys_object(id: &str) -> String {
    format!("{KEYS_OBJECT}/{}", bucket_of(id) as usize % limits::KEY_DIRECTORY_SHARDS)
}

/// Every key directory object, the legacy one last.
fn all_keys_objects() -> impl Iterator<Item = String> {
    (0..limits::KEY_DIRECTORY_SHARDS).map(|n| format!("{KEYS_OBJECT}/{n}")).chain(std::iter::once(KEYS_OBJECT.to_owned()))
}
/// Its private path prefix (never forwarded from outside `/v1/`).
pub const KEYS_PATH: &str = "/_keys";

/// The deployment's auth settings, from its vars and secrets.
pub struct Settings {
    /// `EDGEMEM_DEV_MODE=1` on a loopback host: local development, auth off.
    pub dev: bool,
    admin_token: Option<String>,
    /// `EDGEMEM_AUTH_TOKEN`, the single token of earlier releases: it acts
    /// as the admin token.
    legacy_token: Option<String>,
    /// The default rate of keys that set none.
    pub rate: Rate,
}

fn is_loopback(url: &Url) -> bool {
    matches!(url.host_str(), Some("127.0.0.1" | "localhost" | "[::1]" | "::1"))
}

impl Settings {
    pub fn from_env(env: &Env, url: &Url) -> Result<Settings> {
        let dev = super::env_string(env, "EDGEMEM_DEV_MODE").as_deref() == Some("1") && is_loopback(url);
        let rate = Rate {
            per_second: super::env_u64(env, "EDGEMEM_RATE_PER_SECOND", limits::RATE_PER_SECOND_DEFAULT, limits::RATE_PER_SECOND_CEILING)?,
            burst: super::env_u64(env, "EDGEMEM_RATE_BURST", limits::RATE_BURST_DEFAULT, limits::RATE_BURST_CEILING)?,
        };
        Ok(Settings { dev, admin_token: super::env_string(env, "EDGEMEM_ADMIN_TOKEN"), legacy_token: super::env_string(env, "EDGEMEM_AUTH_TOKEN"), rate })
    }
}

/// The token of an `Authorization: Bearer …` header (scheme case-insensitive).
pub fn bearer(authorization: Option<&str>) -> Result<Option<&str>> {
    let Some(h) = authorization else { return Ok(None) };
    let (scheme, token) = h.trim().split_once(' ').ok_or(Error::Unauthorized)?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(Error::Unauthorized);
    }
    let token = token.trim();
    if token.is_empty() || token.len() > limits::BEARER_TOKEN_BYTES_MAX {
        return Err(Error::Unauthorized);
    }
    Ok(Some(token))
}

/// The key a browser WebSocket offers as a subprotocol (`bearer.<key>`
/// beside `edgemem`), since it cannot send an `Authorization` header.
pub fn bearer_from_protocols(protocols: &str) -> Option<String> {
    let offered: Vec<&str> = protocols.split(',').map(str::trim).collect();
    if !offered.contains(&WS_PROTOCOL) {
        return None;
    }
    offered.iter().find_map(|p| p.strip_prefix("bearer.")).map(|t| format!("Bearer {t}"))
}

/// The subprotocol a WebSocket that authenticates by subprotocol speaks.
pub const WS_PROTOCOL: &str = "edgemem";

/// Authenticates a request. In development mode a request without a key is
/// the operator; a key is still checked, so a page or client configured
/// with one behaves as deployed.
///
/// `encryption`: the id of the encryption key the request carries; a key
/// bound to an encryption key refuses a request without it
/// (`key_required`) or with another (`decryption_failed`).
pub async fn authenticate(env: &Env, settings: &Settings, authorization: Option<&str>, encryption: Option<&str>, now: Millis) -> Result<Principal> {
    let token = bearer(authorization)?;
    let Some(token) = token else {
        if settings.dev {
            return Ok(Principal::Operator);
        }
        return Err(if settings.admin_token.is_none() && settings.legacy_token.is_none() { Error::AuthNotConfigured } else { Error::Unauthorized });
    };
    for expected in [&settings.admin_token, &settings.legacy_token].into_iter().flatten() {
        if auth::ct_eq(token.as_bytes(), expected.as_bytes()) {
            return Ok(Principal::Operator);
        }
    }
    match auth::parse_key(token) {
        Some((id, secret)) => {
            let ask = json!({ "id": id, "hash": auth::hash_secret(secret), "rate": settings.rate, "now": now });
            let mut v = call(env, &keys_object(id), "verify", ask.clone()).await?;
            if v["missing"] == true && adopt(env, id).await? {
                v = call(env, &keys_object(id), "verify", ask).await?;
            }
            let answer: Verified = serde_json::from_value(v).map_err(|e| Error::Internal { detail: format!("key directory answer: {e}") })?;
            match answer {
                Verified { ok: false, .. } => Err(Error::Unauthorized),
                Verified { retry_after_ms: Some(ms), .. } => Err(Error::RateLimited { retry_after_ms: ms }),
                Verified { encryption: Some(bound), .. } if encryption != Some(bound.as_str()) => Err(match encryption {
                    None => Error::KeyRequired { key_id: Some(bound) },
                    Some(given) => Error::DecryptionFailed { key_id: given.to_owned(), detail: format!("this API key is bound to encryption key {bound:?}") },
                }),
                Verified { coverage: Some(coverage), scopes, .. } => Ok(Principal::Key { id: id.to_owned(), coverage, scopes }),
                _ => Err(Error::Unauthorized),
            }
        }
        None if settings.dev => Ok(Principal::Operator),
        None => Err(Error::Unauthorized),
    }
}

#[derive(Serialize, Deserialize, Default)]
struct Verified {
    ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    coverage: Option<Coverage>,
    #[serde(default)]
    scopes: Vec<Scope>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    retry_after_ms: Option<u64>,
    /// The encryption key id the API key is bound to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    encryption: Option<String>,
    /// No record of this id in the object asked.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    missing: bool,
}

/// Moves key `id`'s record from the legacy directory to its object, if it
/// is there (written by an earlier release). Answers whether it was.
/// Idempotent: the record is stored in its object before the legacy one
/// forgets it, so a crash between the two leaves it in both (and the next
/// miss moves it again), never in neither.
async fn adopt(env: &Env, id: &str) -> Result<bool> {
    let v = call(env, KEYS_OBJECT, "get", json!({ "id": id })).await?;
    let Some(record) = serde_json::from_value::<Option<KeyRecord>>(v["record"].clone()).ok().flatten() else { return Ok(false) };
    call(env, &keys_object(id), "adopt", json!({ "record": record })).await?;
    call(env, KEYS_OBJECT, "revoke", json!({ "id": id })).await?;
    Ok(true)
}

/// `op` at every key directory object, a fan-out's branching at once.
async fn call_all(env: &Env, op: &str, body: Value) -> Result<Vec<Value>> {
    let objects: Vec<String> = all_keys_objects().collect();
    let mut out = Vec::with_capacity(objects.len());
    for group in objects.chunks(limits::SHARD_FANOUT_BRANCHING_MAX) {
        for v in futures_util::future::join_all(group.iter().map(|o| call(env, o, op, body.clone()))).await {
            out.push(v?);
        }
    }
    Ok(out)
}

async fn call(env: &Env, object: &str, op: &str, body: Value) -> Result<Value> {
    let w = |e: worker::Error| Error::storage(format!("key directory: {e}"));
    let mut init = RequestInit::new();
    init.with_method(Method::Post).with_body(Some(body.to_string().into()));
    let req = Request::new_with_init(&format!("https://keys.local{KEYS_PATH}/{op}"), &init).map_err(w)?;
    let stub = super::object_stub(env, object).map_err(w)?;
    let mut resp = stub.fetch_with_request(req).await.map_err(w)?;
    let v = resp.json::<Value>().await.map_err(w)?;
    if resp.status_code() != 200 {
        return Err(Error::storage(format!("key directory answered {}", resp.status_code())));
    }
    Ok(v)
}

// ---- The admin routes, in the front Worker ----

fn key_answer(record: &KeyRecord, key: &str) -> Value {
    let mut v = record.public();
    v["key"] = json!(key);
    v
}

fn random_bytes<const N: usize>() -> Result<[u8; N]> {
    let mut b = [0u8; N];
    getrandom::getrandom(&mut b).map_err(|e| Error::Internal { detail: format!("no randomness for a key: {e}") })?;
    Ok(b)
}

/// Whether `principal` may manage `record` (the operator: any; an admin
/// key: those inside its own coverage).
fn manages(principal: &Principal, record: &KeyRecord) -> bool {
    match principal {
        Principal::Operator => true,
        Principal::Key { coverage, .. } => coverage.contains(&record.coverage),
    }
}

async fn get_record(env: &Env, principal: &Principal, id: &str) -> Result<KeyRecord> {
    let not_found = || Error::not_found("key", id);
    if !auth::is_key_id(id) {
        return Err(not_found());
    }
    let mut v = call(env, &keys_object(id), "get", json!({ "id": id })).await?;
    if v["record"].is_null() && adopt(env, id).await? {
        v = call(env, &keys_object(id), "get", json!({ "id": id })).await?;
    }
    let record: Option<KeyRecord> = serde_json::from_value(v["record"].clone()).ok();
    record.filter(|r| manages(principal, r)).ok_or_else(not_found)
}

/// `/v1/admin/keys[/{id}[/rotate]]`. The principal already holds the
/// admin scope.
///
/// `encryption`: the id of the encryption key the request carries, which
/// `PUT /v1/admin/keys/{id}/encryption` binds the key to.
#[allow(clippy::too_many_arguments)]
pub async fn admin_route(env: &Env, principal: &Principal, method: &str, path: &str, query: &[(String, String)], body: &[u8], encryption: Option<&str>, now: Millis) -> Result<Value> {
    let rest = path.strip_prefix("/v1/admin/keys").unwrap_or("").trim_start_matches('/');
    let segs: Vec<&str> = if rest.is_empty() { Vec::new() } else { rest.split('/').collect() };
    match (segs.as_slice(), method) {
        ([], "POST") => {
            let request = auth::KeyRequest::parse(body, now)?;
            let created_by = match principal {
                Principal::Operator => None,
                Principal::Key { id, coverage, scopes } => {
                    if !coverage.contains(&request.coverage) {
                        let named = match &request.coverage {
                            Coverage::Namespace(n) | Coverage::Prefix(n) => n.clone(),
                        };
                        return Err(Error::NamespaceForbidden { namespace: named });
                    }
                    if let Some(s) = request.scopes.iter().find(|s| !scopes.contains(s)) {
                        return Err(Error::ScopeForbidden { scope: s.as_str().into() });
                    }
                    Some(id.clone())
                }
            };
            let minted = auth::mint(random_bytes()?, random_bytes()?);
            let record = KeyRecord {
                id: minted.id.clone(),
                hash: minted.hash,
                coverage: request.coverage,
                scopes: request.scopes,
                created_at: now,
                expires_at: request.expires_at,
                rotated_at: None,
                previous: None,
                rate: request.rate,
                created_by,
                encryption: None,
            };
            // The limit is the deployment's: every object's keys counted.
            let held: u64 = call_all(env, "count", json!({})).await?.iter().map(|v| v["count"].as_u64().unwrap_or(0)).sum();
            if held >= limits::API_KEYS_MAX as u64 {
                return Err(Error::LimitExceeded { what: "API keys".into(), limit: limits::API_KEYS_MAX as u64 });
            }
            let v = call(env, &keys_object(&record.id), "create", json!({ "record": record })).await?;
            if v["full"].as_bool() == Some(true) {
                return Err(Error::LimitExceeded { what: "API keys".into(), limit: limits::API_KEYS_MAX as u64 });
            }
            Ok(key_answer(&record, &minted.key))
        }
        ([], "GET") => {
            // Every object's records, in id order (a key found in two, mid-move, once).
            let mut by_id: BTreeMap<String, KeyRecord> = BTreeMap::new();
            for v in call_all(env, "list", json!({})).await? {
                let part: Vec<KeyRecord> = serde_json::from_value(v["records"].clone()).unwrap_or_default();
                for r in part {
                    by_id.entry(r.id.clone()).or_insert(r);
                }
            }
            let records: Vec<KeyRecord> = by_id.into_values().collect();
            let namespace = query.iter().find(|(k, _)| k == "namespace").map(|(_, v)| v.as_str());
            let keys: Vec<Value> = records
                .iter()
                .filter(|r| manages(principal, r) && namespace.is_none_or(|n| r.coverage.covers(n)))
                .take(limits::API_KEYS_LIST_MAX)
                .map(KeyRecord::public)
                .collect();
            Ok(json!({ "keys": keys }))
        }
        ([id], "GET") => Ok(get_record(env, principal, id).await?.public()),
        ([id], "DELETE") | ([id, "revoke"], "POST") => {
            get_record(env, principal, id).await?;
            call(env, &keys_object(id), "revoke", json!({ "id": id })).await?;
            Ok(json!({ "id": id, "revoked": true }))
        }
        ([id, "rotate"], "POST") => {
            #[derive(Deserialize, Default)]
            #[serde(deny_unknown_fields)]
            struct Rotate {
                #[serde(default)]
                grace_seconds: u64,
            }
            let b: Rotate = if body.is_empty() { Rotate::default() } else { crate::api::parse_json(body)? };
            if b.grace_seconds > limits::KEY_ROTATE_GRACE_SECONDS_MAX {
                return Err(Error::invalid("grace_seconds", format!("must be at most {}", limits::KEY_ROTATE_GRACE_SECONDS_MAX)));
            }
            get_record(env, principal, id).await?;
            // The id stays: only the secret changes.
            let minted = auth::rekey(id, random_bytes()?);
            let v = call(env, &keys_object(id), "rotate", json!({ "id": id, "hash": minted.hash, "now": now, "grace_until": now + b.grace_seconds * 1000 })).await?;
            let record: KeyRecord = serde_json::from_value(v["record"].clone()).map_err(|_| Error::not_found("key", *id))?;
            Ok(key_answer(&record, &minted.key))
        }
        ([id, "encryption"], "PUT" | "DELETE") => {
            get_record(env, principal, id).await?;
            let bound = if method == "PUT" {
                Some(encryption.ok_or_else(|| Error::invalid("x-edgemem-encryption-key", "carry the encryption key to bind this API key to"))?)
            } else {
                None
            };
            let v = call(env, &keys_object(id), "bind", json!({ "id": id, "encryption": bound })).await?;
            let record: KeyRecord = serde_json::from_value(v["record"].clone()).map_err(|_| Error::not_found("key", *id))?;
            Ok(record.public())
        }
        _ => Err(Error::not_found("route", path)),
    }
}

/// After a tenant's encryption key rotated: every API key bound to `old`
/// is bound to `new`. Answers how many were.
pub async fn rebind(env: &Env, old: &str, new: &str) -> Result<u64> {
    Ok(call_all(env, "rebind", json!({ "id": old, "encryption": new })).await?.iter().map(|v| v["rebound"].as_u64().unwrap_or(0)).sum())
}

// ---- The directory object's side ----

/// The key directory's state inside its Durable Object: every record
/// (loaded once; the object is their only writer) and each key's bucket.
/// Buckets live in memory only: an evicted object starts them full again.
#[derive(Default)]
pub struct KeyDirectory {
    records: RefCell<Option<BTreeMap<String, KeyRecord>>>,
    buckets: RefCell<HashMap<String, TokenBucket>>,
}

const RECORD_PREFIX: &str = "key/";

#[derive(Deserialize)]
struct Op {
    #[serde(default)]
    id: String,
    #[serde(default)]
    hash: String,
    #[serde(default)]
    record: Option<KeyRecord>,
    #[serde(default)]
    rate: Option<Rate>,
    #[serde(default)]
    now: Millis,
    #[serde(default)]
    grace_until: Millis,
    #[serde(default)]
    encryption: Option<String>,
}

impl KeyDirectory {
    async fn load(&self, storage: &DoBackend) -> Result<()> {
        if self.records.borrow().is_some() {
            return Ok(());
        }
        let range = KeyRange { prefix: RECORD_PREFIX, start: "", end: None, limit: limits::API_KEYS_MAX + 1 };
        let mut records = BTreeMap::new();
        for (_, bytes) in storage.get_range(range).await? {
            let r: KeyRecord = serde_json::from_slice(&bytes).map_err(|e| Error::storage(format!("key record: {e}")))?;
            records.insert(r.id.clone(), r);
        }
        // Another request may have loaded them while this one awaited.
        self.records.borrow_mut().get_or_insert(records);
        Ok(())
    }

    fn with<R>(&self, f: impl FnOnce(&mut BTreeMap<String, KeyRecord>) -> R) -> R {
        f(self.records.borrow_mut().as_mut().expect("loaded before use"))
    }

    async fn store(&self, storage: &DoBackend, record: &KeyRecord) -> Result<()> {
        let bytes = serde_json::to_vec(record).map_err(|e| Error::Internal { detail: e.to_string() })?;
        storage.put(&format!("{RECORD_PREFIX}{}", record.id), bytes).await?;
        self.with(|m| m.insert(record.id.clone(), record.clone()));
        Ok(())
    }

    /// Serves one directory operation.
    pub async fn serve(&self, state: &State, op: &str, body: &[u8]) -> Result<Value> {
        let storage = DoBackend { storage: state.storage() };
        let b: Op = crate::api::parse_json(body)?;
        self.load(&storage).await?;
        match op {
            "verify" => {
                let Some(record) = self.with(|m| m.get(&b.id).cloned()) else { return Ok(json!(Verified { missing: true, ..Verified::default() })) };
                if record.verify(&b.hash, b.now).is_err() {
                    return Ok(json!(Verified::default()));
                }
                let rate = record.rate.or(b.rate).unwrap_or_default();
                let mut buckets = self.buckets.borrow_mut();
                let bucket = buckets.entry(b.id.clone()).or_insert_with(|| TokenBucket::full(rate, b.now));
                let retry_after_ms = bucket.take(rate, b.now).err();
                Ok(json!(Verified { ok: true, coverage: Some(record.coverage), scopes: record.scopes, retry_after_ms, encryption: record.encryption, missing: false }))
            }
            "create" => {
                let record = b.record.ok_or_else(|| Error::invalid("record", "required"))?;
                if self.with(|m| m.len()) >= limits::API_KEYS_MAX {
                    return Ok(json!({ "full": true }));
                }
                self.store(&storage, &record).await?;
                Ok(json!({ "ok": true }))
            }
            // A record moved from the legacy directory: stored as it was.
            "adopt" => {
                let record = b.record.ok_or_else(|| Error::invalid("record", "required"))?;
                self.store(&storage, &record).await?;
                Ok(json!({ "ok": true }))
            }
            "count" => Ok(json!({ "count": self.with(|m| m.len()) })),
            "list" => Ok(json!({ "records": self.with(|m| m.values().cloned().collect::<Vec<_>>()) })),
            "get" => Ok(json!({ "record": self.with(|m| m.get(&b.id).cloned()) })),
            "revoke" => {
                storage.delete(&[format!("{RECORD_PREFIX}{}", b.id)]).await?;
                self.with(|m| m.remove(&b.id));
                self.buckets.borrow_mut().remove(&b.id);
                Ok(json!({ "ok": true }))
            }
            "rotate" => {
                let Some(mut record) = self.with(|m| m.get(&b.id).cloned()) else { return Ok(json!({ "record": null })) };
                let old = std::mem::replace(&mut record.hash, b.hash);
                record.previous = (b.grace_until > b.now).then_some((old, b.grace_until));
                record.rotated_at = Some(b.now);
                self.store(&storage, &record).await?;
                Ok(json!({ "record": record }))
            }
            "bind" => {
                let Some(mut record) = self.with(|m| m.get(&b.id).cloned()) else { return Ok(json!({ "record": null })) };
                record.encryption = b.encryption;
                self.store(&storage, &record).await?;
                Ok(json!({ "record": record }))
            }
            "rebind" => {
                let bound: Vec<KeyRecord> = self.with(|m| m.values().filter(|r| r.encryption.as_deref() == Some(b.id.as_str())).cloned().collect());
                for mut record in bound.iter().cloned() {
                    record.encryption = b.encryption.clone();
                    self.store(&storage, &record).await?;
                }
                Ok(json!({ "rebound": bound.len() }))
            }
            other => Err(Error::not_found("route", other)),
        }
    }
}
