//! Which tenant (Durable Object) a request belongs to, and the directory
//! that finds a long-term memory's tenant from its id alone.
//!
//! AMS clients name the namespace in different places: the query, a PUT
//! body, `session.namespace` of a memory prompt, each memory of a create,
//! the `namespace.eq` filter of a search. Reads, edits and deletes by id
//! name none, so ids created outside the default tenant are recorded in a
//! directory object (`__directory`, keys `dir/{id}`) and looked up there.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{json, Value};
use worker::{Env, Method, Request, RequestInit, State};

use crate::core::error::{Error, Result};
use crate::core::limits;

const DIRECTORY_OBJECT: &str = "__directory";
/// The directory's private path prefix; the front Worker never forwards a
/// path outside `/v1/`, so clients cannot reach it.
pub const DIRECTORY_PATH: &str = "/_directory";

fn eq_of(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s.clone()),
        Value::Object(o) => o.get("eq").and_then(Value::as_str).map(str::to_owned),
        _ => None,
    }
}

/// The namespace a request body names, by route.
pub fn body_namespace(method: &Method, path: &str, body: &[u8]) -> Option<String> {
    let parse = || serde_json::from_slice::<Value>(body).ok();
    match (method, path) {
        (Method::Put, p) if p.starts_with("/v1/working-memory/") => eq_of(parse()?.get("namespace")),
        (Method::Post, "/v1/memory/prompt") => {
            let v = parse()?;
            eq_of(v.get("session").and_then(|s| s.get("namespace"))).or_else(|| eq_of(v.get("long_term_search").and_then(|s| s.get("namespace"))))
        }
        (Method::Post, "/v1/long-term-memory/" | "/v1/long-term-memory") => {
            eq_of(parse()?.get("memories").and_then(Value::as_array).and_then(|a| a.first()).and_then(|m| m.get("namespace")))
        }
        (Method::Post, "/v1/long-term-memory/search") => eq_of(parse()?.get("namespace")),
        _ => None,
    }
}

/// The memory ids a by-id request addresses, when it names no namespace.
pub fn ids_needing_lookup(method: &Method, path: &str, query: &[(String, String)]) -> Vec<String> {
    let rest = path.strip_prefix("/v1/long-term-memory/").unwrap_or("");
    match method {
        Method::Get | Method::Patch if !rest.is_empty() && !rest.contains('/') && rest != "search" && rest != "forget" => {
            vec![crate::api::percent_decode(rest)]
        }
        Method::Delete if path.trim_end_matches('/') == "/v1/long-term-memory" => {
            query.iter().filter(|(k, _)| k == "memory_ids").map(|(_, v)| v.clone()).take(limits::LTM_DELETE_BATCH_MAX).collect()
        }
        _ => Vec::new(),
    }
}

async fn call(env: &Env, op: &str, body: Value) -> Result<Value> {
    let w = |e: worker::Error| Error::storage(format!("directory: {e}"));
    let mut init = RequestInit::new();
    init.with_method(Method::Post).with_body(Some(body.to_string().into()));
    let req = Request::new_with_init(&format!("https://directory.local{DIRECTORY_PATH}/{op}"), &init).map_err(w)?;
    let stub = env.durable_object(super::MEMORY_BINDING).map_err(w)?.id_from_name(DIRECTORY_OBJECT).map_err(w)?.get_stub().map_err(w)?;
    let mut resp = stub.fetch_with_request(req).await.map_err(w)?;
    resp.json::<Value>().await.map_err(w)
}

/// The tenant of each id the directory knows.
pub async fn lookup(env: &Env, ids: &[String]) -> Result<BTreeMap<String, String>> {
    let v = call(env, "get", json!({ "ids": ids })).await?;
    Ok(serde_json::from_value(v["namespaces"].clone()).unwrap_or_default())
}

/// Records that `ids` live in `namespace`.
pub async fn register(env: &Env, namespace: &str, ids: &[String]) -> Result<()> {
    call(env, "put", json!({ "namespace": namespace, "ids": ids })).await.map(|_| ())
}

/// Forgets `ids`.
pub async fn forget(env: &Env, ids: &[String]) -> Result<()> {
    call(env, "delete", json!({ "ids": ids })).await.map(|_| ())
}

#[derive(Deserialize)]
struct DirBody {
    #[serde(default)]
    ids: Vec<String>,
    #[serde(default)]
    namespace: Option<String>,
}

/// The directory object's side: `get`, `put`, `delete` on `dir/{id}` keys
/// of its own storage (beside, never inside, a store's key layout).
pub async fn serve(state: &State, op: &str, body: &[u8]) -> Result<Value> {
    let w = |e: worker::Error| Error::storage(format!("directory: {e}"));
    let b: DirBody = crate::api::parse_json(body)?;
    if b.ids.len() > limits::LTM_DELETE_BATCH_MAX.max(limits::LTM_CREATE_BATCH_MAX) {
        return Err(Error::LimitExceeded { what: "directory ids".into(), limit: limits::LTM_DELETE_BATCH_MAX as u64 });
    }
    let storage = state.storage();
    let key = |id: &str| format!("dir/{id}");
    match op {
        "get" => {
            let mut found = BTreeMap::new();
            for id in &b.ids {
                if let Some(ns) = storage.get::<String>(&key(id)).await.map_err(w)? {
                    found.insert(id.clone(), ns);
                }
            }
            Ok(json!({ "namespaces": found }))
        }
        "put" => {
            let ns = b.namespace.ok_or_else(|| Error::invalid("namespace", "required"))?;
            for id in &b.ids {
                storage.put(&key(id), &ns).await.map_err(w)?;
            }
            Ok(json!({ "ok": true }))
        }
        "delete" => {
            for id in &b.ids {
                storage.delete(&key(id)).await.map_err(w)?;
            }
            Ok(json!({ "ok": true }))
        }
        other => Err(Error::not_found("route", other)),
    }
}
