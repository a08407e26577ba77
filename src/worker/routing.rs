//! The directory that finds a long-term memory's tenant from its id alone.
//!
//! Reads, edits and deletes by id may name no namespace, so ids created
//! outside the default tenant are recorded in a directory object
//! (`__directory`, keys `dir/{id}/{namespace}` holding the time of the
//! entry). An id may live in several tenants (clients choose ids); the
//! front Worker picks the one the caller's key covers.
//!
//! The entry is written *before* the tenant's write (the front Worker
//! assigns the ids of a create first), so an acknowledged record is always
//! found by id. A crash between the two leaves an entry for a record that
//! does not exist: harmless, because the tenant it names answers 404 (the
//! tenant is the truth; the directory only routes), and pruned when such a
//! lookup finds it older than [`limits::DIRECTORY_ENTRY_GRACE_MS`].

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{json, Value};
use worker::{Env, Method, Request, RequestInit, State};

use super::backend::DoBackend;
use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::store::{Backend, KeyRange};

const DIRECTORY_OBJECT: &str = "__directory";
/// The directory's private path prefix; the front Worker never forwards a
/// path outside `/v1/`, so clients cannot reach it.
pub const DIRECTORY_PATH: &str = "/_directory";

async fn call(env: &Env, op: &str, body: Value) -> Result<Value> {
    let w = |e: worker::Error| Error::storage(format!("directory: {e}"));
    let mut init = RequestInit::new();
    init.with_method(Method::Post).with_body(Some(body.to_string().into()));
    let req = Request::new_with_init(&format!("https://directory.local{DIRECTORY_PATH}/{op}"), &init).map_err(w)?;
    let stub = super::object_stub(env, DIRECTORY_OBJECT).map_err(w)?;
    let mut resp = stub.fetch_with_request(req).await.map_err(w)?;
    resp.json::<Value>().await.map_err(w)
}

/// The tenants each id is recorded in.
pub async fn lookup(env: &Env, ids: &[String]) -> Result<BTreeMap<String, Vec<(String, u64)>>> {
    let v = call(env, "get", json!({ "ids": ids })).await?;
    Ok(serde_json::from_value(v["namespaces"].clone()).unwrap_or_default())
}

/// Records that `ids` live (or are about to live) in `namespace`.
pub async fn register(env: &Env, namespace: &str, ids: &[String], now: u64) -> Result<()> {
    call(env, "put", json!({ "namespace": namespace, "ids": ids, "at": now })).await.map(|_| ())
}

/// Forgets `ids` in `namespace`.
pub async fn forget(env: &Env, namespace: &str, ids: &[String]) -> Result<()> {
    call(env, "delete", json!({ "namespace": namespace, "ids": ids })).await.map(|_| ())
}

#[derive(Deserialize)]
struct DirBody {
    #[serde(default)]
    ids: Vec<String>,
    #[serde(default)]
    namespace: Option<String>,
    #[serde(default)]
    at: u64,
}

/// The directory object's side: `get`, `put`, `delete` on its own storage
/// (beside, never inside, a store's key layout).
pub async fn serve(state: &State, op: &str, body: &[u8]) -> Result<Value> {
    let b: DirBody = crate::api::parse_json(body)?;
    if b.ids.len() > limits::LTM_DELETE_BATCH_MAX.max(limits::LTM_CREATE_BATCH_MAX) {
        return Err(Error::LimitExceeded { what: "directory ids".into(), limit: limits::LTM_DELETE_BATCH_MAX as u64 });
    }
    let storage = DoBackend { storage: state.storage() };
    let legacy = |id: &str| format!("dir/{id}");
    let entry = |id: &str, ns: &str| format!("dir/{id}/{ns}");
    let namespace = || b.namespace.clone().ok_or_else(|| Error::invalid("namespace", "required"));
    match op {
        "get" => {
            let mut found: BTreeMap<String, Vec<(String, u64)>> = BTreeMap::new();
            for id in &b.ids {
                let prefix = format!("dir/{id}/");
                let range = KeyRange { prefix: &prefix, start: "", end: None, limit: limits::DIRECTORY_NAMESPACES_PER_ID_MAX };
                let mut spaces: Vec<(String, u64)> = storage
                    .get_range(range)
                    .await?
                    .into_iter()
                    .map(|(k, v)| (k[prefix.len()..].to_owned(), String::from_utf8_lossy(&v).parse::<u64>().unwrap_or(0)))
                    .collect();
                // Entries of earlier releases: `dir/{id}` holding the namespace.
                // (stored as a string value, not bytes).
                if let Ok(Some(ns)) = state.storage().get::<String>(&legacy(id)).await {
                    spaces.push((ns, 0));
                }
                if !spaces.is_empty() {
                    found.insert(id.clone(), spaces);
                }
            }
            Ok(json!({ "namespaces": found }))
        }
        "put" => {
            let ns = namespace()?;
            for id in &b.ids {
                storage.put(&entry(id, &ns), b.at.to_string().into_bytes()).await?;
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
