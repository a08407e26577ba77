//! The directory that finds a long-term memory's tenant from its id alone.
//!
//! Reads, edits and deletes by id may name no namespace, so ids created
//! outside the default tenant are recorded in a directory object (keys
//! `dir/{id}/{namespace}` holding the time of the entry, and for a sharded
//! tenant `/` and the record's bucket, so its by-id routes ask one shard). An id may live in
//! several tenants (clients choose ids); the front Worker picks the one the
//! caller's key covers.
//!
//! The directory is sharded (issue 21): an id's entries live in
//! `__directory/{n}`, `n` its bucket modulo [`limits::ID_DIRECTORY_SHARDS`],
//! so the creates of all tenants do not pass through one object. Entries
//! written by earlier releases, in the single `__directory`, are still
//! found: an id missing from its shard is looked up there too, and a
//! forget clears both.
//!
//! The entry is written *before* the tenant's write (the front Worker
//! assigns the ids of a create first), so an acknowledged record is always
//! found by id. A crash between the two leaves an entry for a record that
//! does not exist: harmless, because the tenant it names answers 404 (the
//! tenant is the truth; the directory only routes), and pruned when such a
//! lookup finds it older than [`limits::DIRECTORY_ENTRY_GRACE_MS`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use worker::{Env, Method, Request, RequestInit, State};

use super::backend::DoBackend;
use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::shard::{bucket_of, Bucket};
use crate::store::{Backend, KeyRange};

/// The single directory of earlier releases, read on a miss.
const LEGACY_OBJECT: &str = "__directory";

/// The directory object that holds `id`'s entries.
fn directory_of(id: &str) -> String {
    format!("{LEGACY_OBJECT}/{}", bucket_of(id) as usize % limits::ID_DIRECTORY_SHARDS)
}

/// Ids, each with its record's bucket when known.
type Entries = Vec<(String, Option<Bucket>)>;

/// `ids` (each with its record's bucket, when known) grouped by their
/// directory object.
fn by_object(ids: &[String], buckets: Option<&[Bucket]>) -> BTreeMap<String, Entries> {
    let mut out: BTreeMap<String, Entries> = BTreeMap::new();
    for (i, id) in ids.iter().enumerate() {
        out.entry(directory_of(id)).or_default().push((id.clone(), buckets.and_then(|b| b.get(i).copied())));
    }
    out
}

/// `op` with `body` (its `ids` and `buckets` replaced by each group's) at
/// every object of `groups`, a fan-out's branching at once; the answers
/// in order.
async fn each(env: &Env, op: &str, groups: &BTreeMap<String, Entries>, body: &Value) -> Result<Vec<Value>> {
    let groups: Vec<(&String, &Entries)> = groups.iter().collect();
    let mut out = Vec::with_capacity(groups.len());
    for chunk in groups.chunks(limits::SHARD_FANOUT_BRANCHING_MAX) {
        let calls = chunk.iter().map(|(object, entries)| {
            let mut b = body.clone();
            b["ids"] = json!(entries.iter().map(|(id, _)| id).collect::<Vec<_>>());
            b["buckets"] = json!(entries.iter().map(|(_, bucket)| bucket).collect::<Vec<_>>());
            async move { call(env, object, op, b).await }
        });
        for v in futures_util::future::join_all(calls).await {
            out.push(v?);
        }
    }
    Ok(out)
}
/// The directory's private path prefix; the front Worker never forwards a
/// path outside `/v1/`, so clients cannot reach it.
pub const DIRECTORY_PATH: &str = "/_directory";

async fn call(env: &Env, object: &str, op: &str, body: Value) -> Result<Value> {
    let w = |e: worker::Error| Error::storage(format!("directory: {e}"));
    let mut init = RequestInit::new();
    init.with_method(Method::Post).with_body(Some(body.to_string().into()));
    let req = Request::new_with_init(&format!("https://directory.local{DIRECTORY_PATH}/{op}"), &init).map_err(w)?;
    let stub = super::object_stub(env, object).map_err(w)?;
    let mut resp = stub.fetch_with_request(req).await.map_err(w)?;
    resp.json::<Value>().await.map_err(w)
}

/// One tenant an id is recorded in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub namespace: String,
    /// When the entry was written (0: an earlier release's).
    pub at: u64,
    /// The record's bucket in a sharded tenant, when the create knew it:
    /// its by-id routes ask that bucket's shard first.
    pub bucket: Option<Bucket>,
}

/// The tenants each id is recorded in. `legacy`: also look in the single
/// directory of earlier releases for an id not found in its shard.
pub async fn lookup(env: &Env, ids: &[String], legacy: bool) -> Result<BTreeMap<String, Vec<Entry>>> {
    let mut found: BTreeMap<String, Vec<Entry>> = BTreeMap::new();
    for v in each(env, "get", &by_object(ids, None), &json!({})).await? {
        found.extend(serde_json::from_value::<BTreeMap<String, Vec<Entry>>>(v["entries"].clone()).unwrap_or_default());
    }
    let missing: Vec<String> = ids.iter().filter(|id| !found.contains_key(*id)).cloned().collect();
    if legacy && !missing.is_empty() {
        let v = call(env, LEGACY_OBJECT, "get", json!({ "ids": missing })).await?;
        found.extend(serde_json::from_value::<BTreeMap<String, Vec<Entry>>>(v["entries"].clone()).unwrap_or_default());
    }
    Ok(found)
}

/// Records that `ids` live (or are about to live) in `namespace`, each in
/// the bucket `buckets` gives it (a sharded tenant's create), if any.
pub async fn register(env: &Env, namespace: &str, ids: &[String], buckets: Option<&[Bucket]>, now: u64) -> Result<()> {
    each(env, "put", &by_object(ids, buckets), &json!({ "namespace": namespace, "at": now })).await.map(drop)
}

/// Forgets `ids` in `namespace` (in their shards and in the legacy object).
pub async fn forget(env: &Env, namespace: &str, ids: &[String]) -> Result<()> {
    each(env, "delete", &by_object(ids, None), &json!({ "namespace": namespace })).await?;
    call(env, LEGACY_OBJECT, "delete", json!({ "namespace": namespace, "ids": ids })).await.map(drop)
}

#[derive(Deserialize)]
struct DirBody {
    #[serde(default)]
    ids: Vec<String>,
    /// Each id's bucket, or null (`put` only).
    #[serde(default)]
    buckets: Vec<Option<Bucket>>,
    #[serde(default)]
    namespace: Option<String>,
    #[serde(default)]
    at: u64,
}

/// An entry's stored value: its time, then `/` and the bucket if known.
fn entry_value(at: u64, bucket: Option<Bucket>) -> String {
    match bucket {
        Some(b) => format!("{at}/{b}"),
        None => at.to_string(),
    }
}

fn parse_entry(namespace: String, value: &str) -> Entry {
    let (at, bucket) = value.split_once('/').map_or((value, None), |(at, b)| (at, b.parse::<Bucket>().ok().filter(|b| (*b as usize) < limits::SHARD_BUCKETS)));
    Entry { namespace, at: at.parse::<u64>().unwrap_or(0), bucket }
}

/// The directory object's side: `get`, `put`, `delete` on its own storage
/// (beside, never inside, a store's key layout).
pub async fn serve(state: &State, op: &str, body: &[u8]) -> Result<Value> {
    let b: DirBody = crate::api::parse_json(body)?;
    if b.ids.len() > limits::LTM_DELETE_BATCH_MAX.max(limits::LTM_CREATE_BATCH_MAX) || b.buckets.len() > b.ids.len() {
        return Err(Error::LimitExceeded { what: "directory ids".into(), limit: limits::LTM_DELETE_BATCH_MAX as u64 });
    }
    let storage = DoBackend { storage: state.storage() };
    let legacy = |id: &str| format!("dir/{id}");
    let entry = |id: &str, ns: &str| format!("dir/{id}/{ns}");
    let namespace = || b.namespace.clone().ok_or_else(|| Error::invalid("namespace", "required"));
    match op {
        "get" => {
            let mut found: BTreeMap<String, Vec<Entry>> = BTreeMap::new();
            for id in &b.ids {
                let prefix = format!("dir/{id}/");
                let range = KeyRange { prefix: &prefix, start: "", end: None, limit: limits::DIRECTORY_NAMESPACES_PER_ID_MAX };
                let mut entries: Vec<Entry> = storage.get_range(range).await?.into_iter().map(|(k, v)| parse_entry(k[prefix.len()..].to_owned(), &String::from_utf8_lossy(&v))).collect();
                // Entries of earlier releases: `dir/{id}` holding the namespace.
                // (stored as a string value, not bytes).
                if let Ok(Some(ns)) = state.storage().get::<String>(&legacy(id)).await {
                    entries.push(Entry { namespace: ns, at: 0, bucket: None });
                }
                if !entries.is_empty() {
                    found.insert(id.clone(), entries);
                }
            }
            Ok(json!({ "entries": found }))
        }
        "put" => {
            let ns = namespace()?;
            for (i, id) in b.ids.iter().enumerate() {
                let bucket = b.buckets.get(i).copied().flatten().filter(|b| (*b as usize) < limits::SHARD_BUCKETS);
                storage.put(&entry(id, &ns), entry_value(b.at, bucket).into_bytes()).await?;
            }
            Ok(json!({ "ok": true }))
        }
        "delete" => {
            let ns = namespace()?;
            let keys: Vec<String> = b.ids.iter().flat_map(|id| [entry(id, &ns), legacy(id)]).collect();
            storage.delete(&keys).await?;
            Ok(json!({ "ok": true }))
        }
        other => Err(Error::not_found("route", other)),
    }
}
