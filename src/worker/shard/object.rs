//! The objects' side of sharding: the directory's map, a shard's check of
//! what it was routed by, who it is, and the hand-over of records it made
//! for another shard's user.

use std::cell::RefCell;
use std::collections::BTreeMap;

use futures_util::lock::Mutex;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use worker::{Env, Headers, Method, Request, RequestInit, State, Url};

use super::{call, directory_name, error_from, object_name, w, Routed, HELD_PATH, MAP_KEY, MAP_PATH};
use crate::api;
use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::shard::{Bucket, ShardId, ShardMap};

#[derive(Deserialize)]
struct MapBody {
    tenant: String,
    #[serde(default)]
    initial: Option<usize>,
}

/// The directory object's side: the tenant's map, created once. `lock`
/// keeps two first requests from creating two maps.
pub async fn serve_map(state: &State, env: &Env, lock: &Mutex<()>, body: &[u8]) -> Result<Value> {
    let b: MapBody = api::parse_json(body)?;
    let _held = lock.lock().await;
    let storage = state.storage();
    if let Some(text) = storage.get::<String>(MAP_KEY).await.map_err(|e| Error::storage(format!("shard map: {e}")))? {
        let map: ShardMap = serde_json::from_str(&text).map_err(|e| Error::SnapshotCorrupt { reason: format!("shard map: {e}") })?;
        map.validate()?;
        return Ok(json!(map));
    }
    let Some(n) = b.initial else { return Err(Error::not_found("shard map", b.tenant)) };
    // A tenant with data from before sharding keeps it all at home.
    let held = n > 1 && call(env, &object_name(&b.tenant, 0), HELD_PATH, &json!({}), &[]).await?["held"].as_bool().unwrap_or(true);
    let map = if held { ShardMap::single() } else { ShardMap::even(n)? };
    storage.put(MAP_KEY, serde_json::to_string(&map).map_err(|e| Error::Internal { detail: e.to_string() })?).await.map_err(|e| Error::storage(format!("shard map: {e}")))?;
    Ok(json!(map))
}

/// A shard's check of a routed request against its fence, if a split of
/// its buckets is under way ([`super::fence::fenced`]), and against its own
/// copy of the map, refreshed from the directory when the request knows a
/// newer epoch.
pub async fn admit(env: &Env, state: &State, fence: &RefCell<Option<Option<super::fence::Fence>>>, cache: &RefCell<Option<ShardMap>>, routed: &Routed) -> Result<()> {
    if let Some(f) = super::fence::fence(state, fence).await? {
        if super::fence::fenced(&f, routed) {
            return Err(Error::ShardMoved { epoch: f.flip_epoch });
        }
    }
    if routed.home {
        return Ok(());
    }
    if cache.borrow().as_ref().is_none_or(|m| m.epoch < routed.epoch) {
        let v = call(env, &directory_name(&routed.tenant), MAP_PATH, &json!({ "tenant": routed.tenant }), &[]).await?;
        let map: ShardMap = serde_json::from_value(v).map_err(|e| Error::Internal { detail: format!("the directory's map: {e}") })?;
        map.validate()?;
        *cache.borrow_mut() = Some(map);
    }
    let cache = cache.borrow();
    let map = cache.as_ref().ok_or_else(|| Error::Internal { detail: "no shard map".into() })?;
    if routed.buckets.is_empty() {
        return map.check_shard(routed.epoch, routed.shard);
    }
    routed.buckets.iter().try_for_each(|&b| map.check(routed.epoch, routed.shard, b))
}

/// The object side of [`HELD_PATH`].
pub async fn serve_held(state: &State, meter: std::rc::Rc<super::super::sql::Meter>) -> Result<Value> {
    Ok(json!({ "held": super::super::sql::SqlBackend::holds_data(&state.storage(), meter).await? }))
}

/// Whether `url` is one of the objects' internal shard paths.
pub fn internal(url: &Url) -> bool {
    url.path().starts_with("/_shard/")
}

/// What a shard object knows of itself once a request was routed to it,
/// kept in its storage so that an alarm after a restart knows it too.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardSelf {
    pub tenant: String,
    pub shard: ShardId,
    /// The namespace header its requests carry (none for the default tenant).
    pub namespace: Option<String>,
    /// Local dev mode, as the front honoured it.
    pub dev: bool,
}

impl ShardSelf {
    /// The headers its calls to the tenant's other objects carry, without
    /// a request's: its namespace and dev mode.
    pub fn headers(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        if let Some(ns) = &self.namespace {
            out.push((super::super::NAMESPACE_HEADER.to_owned(), ns.clone()));
        }
        if self.dev {
            out.push((super::super::DEV_HEADER.to_owned(), "1".to_owned()));
        }
        out
    }
}

const SELF_KEY: &str = "shard/self";

/// Records who this object is (once; a change is written again).
pub async fn remember_self(state: &State, cell: &RefCell<Option<ShardSelf>>, me: ShardSelf) -> Result<()> {
    if cell.borrow().as_ref() == Some(&me) {
        return Ok(());
    }
    let text = serde_json::to_string(&me).map_err(|e| Error::Internal { detail: e.to_string() })?;
    state.storage().put(SELF_KEY, text).await.map_err(|e| Error::storage(format!("shard self: {e}")))?;
    *cell.borrow_mut() = Some(me);
    Ok(())
}

/// Who this object is, if a routed request ever told it.
pub async fn known_self(state: &State, cell: &RefCell<Option<ShardSelf>>) -> Result<Option<ShardSelf>> {
    if let Some(me) = cell.borrow().clone() {
        return Ok(Some(me));
    }
    let Some(text) = state.storage().get::<String>(SELF_KEY).await.map_err(|e| Error::storage(format!("shard self: {e}")))? else { return Ok(None) };
    let me: ShardSelf = serde_json::from_str(&text).map_err(|e| Error::SnapshotCorrupt { reason: format!("shard self: {e}") })?;
    *cell.borrow_mut() = Some(me.clone());
    Ok(Some(me))
}

/// Hands records this shard made outside its buckets (extraction, a
/// session's promoted memories) to their owners: created there, then
/// deleted here ([`crate::api::longterm::rehome`]). Scans only records
/// inserted since `from` (the watermark it answers, to pass next time).
/// `keys`: the encryption-key header, for a sealed tenant's owners.
pub async fn hand_over(env: &Env, store: &super::super::crypt::DoStore, me: &ShardSelf, cache: &RefCell<Option<ShardMap>>, keys: &[(String, String)], from: u64, count: &dyn Fn()) -> Result<u64> {
    if cache.borrow().is_none() {
        let v = call(env, &directory_name(&me.tenant), MAP_PATH, &json!({ "tenant": me.tenant }), &[]).await?;
        let map: ShardMap = serde_json::from_value(v).map_err(|e| Error::Internal { detail: format!("the directory's map: {e}") })?;
        map.validate()?;
        *cache.borrow_mut() = Some(map);
    }
    let Some(map) = cache.borrow().clone() else { return Ok(from) };
    if map.bucket_count(me.shard) == 0 {
        // A split's new shard before the flip (or a map older than this
        // shard): everything would look misplaced. Nothing moves; the map
        // is read again next time.
        *cache.borrow_mut() = None;
        return Ok(from);
    }
    let (found, next) = crate::api::longterm::rehome::misplaced(store, |b| map.owner(b) == me.shard, from, limits::LTM_CREATE_BATCH_MAX).await?;
    let mut by_owner: BTreeMap<ShardId, Vec<crate::api::longterm::rehome::Misplaced>> = BTreeMap::new();
    for m in found {
        by_owner.entry(map.owner(m.bucket)).or_default().push(m);
    }
    for (owner, part) in by_owner {
        let mut buckets: Vec<Bucket> = part.iter().map(|m| m.bucket).collect();
        buckets.sort_unstable();
        buckets.dedup();
        let to = Routed { tenant: me.tenant.clone(), shard: owner, epoch: map.epoch, buckets, home: false, write: true, all: false };
        let mut headers = to.headers(keys)?;
        headers.extend(me.headers());
        let h = Headers::new();
        for (k, v) in &headers {
            h.set(k, v).map_err(w)?;
        }
        let body = json!({ "memories": part.iter().map(|m| m.json.clone()).collect::<Vec<_>>(), "deduplicate": false });
        let mut init = RequestInit::new();
        init.with_method(Method::Post).with_headers(h).with_body(Some(body.to_string().into()));
        let req = Request::new_with_init("https://shard.local/v1/long-term-memory", &init).map_err(w)?;
        count();
        let stub = env.durable_object(super::super::MEMORY_BINDING).map_err(w)?.id_from_name(&object_name(&me.tenant, owner)).map_err(w)?.get_stub().map_err(w)?;
        let mut resp = stub.fetch_with_request(req).await.map_err(w)?;
        if resp.status_code() != 200 {
            let v: Value = resp.json().await.unwrap_or_default();
            let e = error_from(resp.status_code(), &v);
            if matches!(e, Error::ShardMoved { .. }) {
                // A split moved the owner: the next pass reads the map again.
                *cache.borrow_mut() = None;
            }
            return Err(e);
        }
        crate::api::longterm::rehome::handed_over(store, part.into_iter().map(|m| m.id).collect(), super::super::now_ms()).await?;
    }
    Ok(next)
}
