//! `GET /v1/admin/shards`, `POST /v1/admin/shards/split` and
//! `POST /v1/admin/shards/abort`: a sharded tenant's map, its shards'
//! holdings and the split in progress, a split on request, and the abort
//! of a split not yet flipped.

use serde::Deserialize;
use serde_json::{json, Value};
use worker::Env;

use super::split::{step_call, ABORT_PATH, SPLIT_PATH, STATUS_PATH};
use super::{call, directory_name, initial_shards, map_for};
use crate::api;
use crate::core::auth::Principal;
use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::shard::ShardId;
use crate::core::time::Millis;

#[derive(Deserialize)]
struct SplitRequest {
    #[serde(default)]
    shard: Option<ShardId>,
}

/// One request to the shard admin routes.
pub struct AdminAsk<'a> {
    pub method: &'a str,
    pub path: &'a str,
    pub query: &'a [(String, String)],
    pub body: &'a [u8],
    /// The request's encryption key (its header's value), if any.
    pub key: Option<&'a str>,
}

/// Serves the shard admin routes for `?namespace=` (default: the default
/// tenant), which the principal must cover. A sealed tenant's split, abort
/// and holdings need its key (`key`: the request's encryption-key header),
/// which the directory holds in memory only while the split runs.
pub async fn admin(env: &Env, dev: bool, principal: &Principal, ask: AdminAsk<'_>) -> Result<Value> {
    let AdminAsk { method, path, query, body, key } = ask;
    let now: Millis = super::super::now_ms();
    let Some(initial) = initial_shards(env)? else {
        return Err(Error::NotSharded { route: "the shard admin routes: sharding is off in this deployment (EDGEMEM_SHARDS_INITIAL)".into() });
    };
    let param = |name: &str| query.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    let tenant = param("namespace").unwrap_or(super::super::DEFAULT_NAMESPACE).to_owned();
    crate::core::auth::check_namespace(&tenant)?;
    principal.authorize(&tenant)?;
    let mut headers: Vec<(String, String)> = Vec::new();
    if tenant != super::super::DEFAULT_NAMESPACE {
        headers.push((super::super::NAMESPACE_HEADER.to_owned(), tenant.clone()));
    }
    if dev {
        headers.push((super::super::DEV_HEADER.to_owned(), "1".to_owned()));
    }
    // The map exists from here on, as it would after the tenant's first request.
    let map = map_for(env, &tenant, Some(initial), true, now).await?;
    match (method, path) {
        ("POST", "/v1/admin/shards/split") => {
            let r: SplitRequest = if body.is_empty() { SplitRequest { shard: None } } else { api::parse_json(body)? };
            if let Some(s) = r.shard {
                if map.bucket_count(s) < 2 {
                    return Err(Error::invalid("shard", format!("shard {s} owns {} bucket(s) of this tenant; it cannot split", map.bucket_count(s))));
                }
            }
            let report = call(env, &directory_name(&tenant), SPLIT_PATH, &json!({ "tenant": tenant, "shard": r.shard, "reason": "admin", "headers": headers, "key": key }), &[]).await?;
            if let Some("overloaded") = report["refused"]["code"].as_str() {
                // Retried by the directory's alarm.
                return Err(Error::Overloaded { what: report["refused"]["what"].as_str().unwrap_or("a split's steps").to_owned(), limit: report["refused"]["limit"].as_u64().unwrap_or(0) });
            }
            // The front's own cache follows at once.
            map_for(env, &tenant, Some(initial), true, now).await?;
            Ok(report)
        }
        ("POST", "/v1/admin/shards/abort") => {
            let v = call(env, &directory_name(&tenant), ABORT_PATH, &json!({ "key": key }), &[]).await?;
            match v["refused"]["code"].as_str() {
                None => Ok(v),
                Some("not_found") => Err(Error::not_found("split in progress", tenant)),
                Some(_) => Err(Error::invalid("split", v["refused"]["reason"].as_str().unwrap_or_default().to_owned())),
            }
        }
        ("GET", "/v1/admin/shards") => {
            let ids = api::query_flag("ids", param("ids"))?;
            let mut v = call(env, &directory_name(&tenant), STATUS_PATH, &json!({}), &[]).await?;
            let mut shards = Vec::new();
            if let Some(key) = key {
                headers.push((crate::core::auth::ENCRYPTION_KEY_HEADER.to_owned(), key.to_owned()));
            }
            for s in map.shards() {
                let mut held = step_call(env, &tenant, &headers, map.epoch, s, "held", &json!({ "ids": ids })).await?;
                held["shard"] = json!(s);
                held["buckets"] = json!(map.bucket_count(s));
                shards.push(held);
            }
            v["tenant"] = json!(tenant);
            v["shards"] = Value::Array(shards);
            v["ids_max"] = json!(limits::SHARD_ADMIN_IDS_MAX);
            Ok(v)
        }
        _ => Err(Error::not_found("route", path.to_owned())),
    }
}
