//! One tenant across several Durable Objects (issue 21), the Worker's part.
//!
//! Off unless the deployment sets `EDGEMEM_SHARDS_INITIAL`: then every
//! tenant has a **directory** object (`__d/{tenant}`) that owns its
//! [`ShardMap`], created on first use with that many shards (one, if the
//! tenant's home object already holds data: it grows by splitting). Shard
//! 0 is the tenant's existing object, named by its namespace; shard `n` is
//! `__s/{tenant}/{n}`. Unset, nothing here runs and a tenant is one object
//! exactly as before.
//!
//! The front routes each request by its route's [`Placement`], under its
//! cached map (at most [`limits::SHARD_MAP_CACHE_TTL_MS`] old), and tells
//! the shard what it routed by in the [`SHARD_HEADER`]: the map's epoch and
//! the buckets concerned. The shard checks them against its own copy of
//! the map ([`ShardMap::check`]) before it opens its store; a stale route
//! is answered `shard_moved`, and the front refreshes its map and retries
//! (at most [`limits::SHARD_MOVED_RETRIES_MAX`] times).
//!
//! A tenant-wide search goes to one shard chosen at random among those
//! asked, which coordinates it as the root of the fan-out tree
//! ([`super::fanout`]), so no object is every search's coordinator.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};

use futures_util::lock::Mutex;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use worker::{Env, Headers, Method, Request, RequestInit, Response, State, Url};

use super::{auth, front::Forward};
use crate::api::placement::{placeholder, placement, Placement};
use crate::api::{self, routes};
use crate::core::error::{Error, Result};
use crate::core::ids::ulid;
use crate::core::limits;
use crate::core::privacy::PseudonymKey;
use crate::core::retrieval::filter::Filter;
use crate::core::shard::{bucket_of, fanout, fanout_tree, record_bucket, route_search, Bucket, Route, ShardId, ShardMap};
use crate::core::time::Millis;

/// What the front routed a request by, as JSON.
pub const SHARD_HEADER: &str = "x-edgemem-shard";
/// The directory's map (get, or create with the initial shard count).
pub const MAP_PATH: &str = "/_shard/map";
/// Whether an object already holds a tenant store.
pub const HELD_PATH: &str = "/_shard/held";
/// One node of a tenant-wide search's fan-out tree.
pub const FANOUT_PATH: &str = "/_shard/fanout";
/// A memory prompt whose search the front ran: the prompt in its session's shard.
pub const PROMPT_PATH: &str = "/_shard/prompt";
/// Where the directory keeps the map (its key-value storage).
const MAP_KEY: &str = "shard/map";

/// A runtime error as this module's typed error.
pub(super) fn w(e: worker::Error) -> Error {
    Error::Internal { detail: e.to_string() }
}

/// What the front routed a request by.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Routed {
    /// The tenant (its namespace, or `default`).
    pub tenant: String,
    /// The shard the request was sent to.
    pub shard: ShardId,
    /// The epoch of the map it was routed under.
    pub epoch: u64,
    /// The buckets it touches; empty: everything the shard owns.
    #[serde(default)]
    pub buckets: Vec<Bucket>,
    /// Home's own state (the ledger, agents, settings): owned by no bucket.
    #[serde(default)]
    pub home: bool,
}

impl Routed {
    /// The header a shard reads, if the front sent one.
    pub fn from_request(req: &Request) -> Result<Option<Routed>> {
        let Some(h) = req.headers().get(SHARD_HEADER).map_err(w)? else { return Ok(None) };
        serde_json::from_str(&h).map(Some).map_err(|e| Error::invalid(SHARD_HEADER, e.to_string()))
    }
}

/// The object that is `shard` of `tenant`.
pub fn object_name(tenant: &str, shard: ShardId) -> String {
    if shard == 0 {
        tenant.to_owned()
    } else {
        format!("__s/{tenant}/{shard}")
    }
}

fn directory_name(tenant: &str) -> String {
    format!("__d/{tenant}")
}

/// `EDGEMEM_SHARDS_INITIAL`: sharding is on, and new tenants start with
/// this many shards. Unset: off.
pub fn initial_shards(env: &Env) -> Result<Option<usize>> {
    if super::env_string(env, "EDGEMEM_SHARDS_INITIAL").is_none() {
        return Ok(None);
    }
    super::env_u64(env, "EDGEMEM_SHARDS_INITIAL", 1, limits::SHARDS_MAX as u64).map(|n| Some(n as usize))
}

thread_local! {
    /// The front's cached maps: tenant → (map, when fetched).
    static MAPS: RefCell<HashMap<String, (ShardMap, Millis)>> = RefCell::new(HashMap::new());
    /// `shard_moved` retries the front made, for the meter.
    pub(super) static RETRIES: Cell<u64> = const { Cell::new(0) };
}

/// A POST of `body` to an internal path of the object `name`, answered as
/// JSON (an error answer is the typed error it carries).
fn call<'a>(env: &'a Env, name: &'a str, path: &'a str, body: &'a Value, headers: &'a [(String, String)]) -> futures_util::future::LocalBoxFuture<'a, Result<Value>> {
    Box::pin(call_now(env, name, path, body, headers))
}

async fn call_now(env: &Env, name: &str, path: &str, body: &Value, headers: &[(String, String)]) -> Result<Value> {
    let h = Headers::new();
    for (k, v) in headers {
        h.set(k, v).map_err(w)?;
    }
    let mut init = RequestInit::new();
    init.with_method(Method::Post).with_headers(h).with_body(Some(body.to_string().into()));
    let req = Request::new_with_init(&format!("https://shard.local{path}"), &init).map_err(w)?;
    let mut resp = super::object_stub(env, name).map_err(w)?.fetch_with_request(req).await.map_err(w)?;
    let status = resp.status_code();
    let v: Value = resp.json().await.map_err(w)?;
    if status != 200 {
        return Err(error_from(status, &v));
    }
    Ok(v)
}

/// The typed error an object answered with.
pub fn error_from(status: u16, v: &Value) -> Error {
    let detail = v["detail"].as_str().unwrap_or("no detail").to_owned();
    match v["code"].as_str() {
        Some("shard_moved") => Error::ShardMoved { epoch: v["epoch"].as_u64().unwrap_or(0) },
        _ => Error::Internal { detail: format!("a shard answered {status}: {detail}") },
    }
}

/// The tenant's map: the cached one unless `fresh` or too old, else the
/// directory's (created with `initial` shards when it has none).
pub async fn map_for(env: &Env, tenant: &str, initial: Option<usize>, fresh: bool, now: Millis) -> Result<ShardMap> {
    if !fresh {
        let cached = MAPS.with(|m| m.borrow().get(tenant).filter(|(_, at)| at.saturating_add(limits::SHARD_MAP_CACHE_TTL_MS) > now).map(|(map, _)| map.clone()));
        if let Some(map) = cached {
            return Ok(map);
        }
    }
    let v = call(env, &directory_name(tenant), MAP_PATH, &json!({ "tenant": tenant, "initial": initial }), &[]).await?;
    let map: ShardMap = serde_json::from_value(v).map_err(|e| Error::Internal { detail: format!("the directory's map: {e}") })?;
    map.validate()?;
    MAPS.with(|m| {
        let mut m = m.borrow_mut();
        if m.len() >= limits::SHARD_MAP_CACHE_ENTRIES_MAX {
            m.clear();
        }
        m.insert(tenant.to_owned(), (map.clone(), now));
    });
    Ok(map)
}

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

/// A shard's check of a routed request against its own copy of the map,
/// refreshed from the directory when the request knows a newer epoch.
pub async fn admit(env: &Env, cache: &RefCell<Option<ShardMap>>, routed: &Routed) -> Result<()> {
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

/// A shard's answer, held so the front can look at it before passing it on.
struct Answer {
    status: u16,
    content_type: Option<String>,
    meter: Option<String>,
    body: Vec<u8>,
}

impl Answer {
    fn json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }

    fn moved(&self) -> bool {
        self.status == 409 && self.json().is_some_and(|v| v["code"] == "shard_moved")
    }

    fn ok(&self) -> bool {
        self.status == 200
    }

    fn with_json(status: u16, v: &Value) -> Answer {
        Answer { status, content_type: Some("application/json".into()), meter: None, body: v.to_string().into_bytes() }
    }

    fn into_response(self) -> Result<Response> {
        let h = Headers::new();
        h.set("content-type", self.content_type.as_deref().unwrap_or("application/json")).map_err(w)?;
        h.set("cache-control", "no-store").map_err(w)?;
        if let Some(m) = &self.meter {
            h.set(super::METER_HEADER, m).map_err(w)?;
        }
        Ok(Response::from_bytes(self.body).map_err(w)?.with_status(self.status).with_headers(h))
    }
}

/// A request for a sharded tenant, past every check of the front.
pub(super) struct Sharded<'a> {
    pub env: &'a Env,
    pub settings: &'a auth::Settings,
    pub tenant: String,
    pub forward: Forward,
    /// The headers every shard gets (namespace, key id, dev mode, keys).
    pub base: Vec<(String, String)>,
    pub initial: usize,
    pub now: Millis,
}

impl Sharded<'_> {
    fn dev_fault(&self, point: &str) -> bool {
        self.settings.dev && super::env_string(self.env, "EDGEMEM_TEST_FAULT").as_deref() == Some(point)
    }

    /// The privacy key the tenant's objects seal user ids with: the front
    /// opens sealed ids so a user's bucket is its raw id's.
    fn privacy(&self) -> Result<Option<PseudonymKey>> {
        super::privacy_key(self.env, &self.tenant, self.settings.dev)
    }

    /// One call to a shard. Boxed: it is awaited from many places, and each
    /// caller's future then holds a pointer rather than this one's state.
    fn send<'a>(&'a self, shard: ShardId, routed: &'a Routed, method: Method, url: &'a str, body: &'a [u8]) -> futures_util::future::LocalBoxFuture<'a, Result<Answer>> {
        Box::pin(self.send_now(shard, routed, method, url, body))
    }

    async fn send_now(&self, shard: ShardId, routed: &Routed, method: Method, url: &str, body: &[u8]) -> Result<Answer> {
        let h = Headers::new();
        for (k, v) in &self.base {
            h.set(k, v).map_err(w)?;
        }
        h.set(SHARD_HEADER, &serde_json::to_string(routed).map_err(|e| Error::Internal { detail: e.to_string() })?).map_err(w)?;
        let mut init = RequestInit::new();
        init.with_method(method).with_headers(h);
        if !body.is_empty() {
            init.with_body(Some(js_sys::Uint8Array::from(body).into()));
        }
        let req = Request::new_with_init(url, &init).map_err(w)?;
        let mut resp = super::object_stub(self.env, &object_name(&self.tenant, shard)).map_err(w)?.fetch_with_request(req).await.map_err(w)?;
        let content_type = resp.headers().get("content-type").map_err(w)?;
        let meter = resp.headers().get(super::METER_HEADER).map_err(w)?;
        Ok(Answer { status: resp.status_code(), content_type, meter, body: resp.bytes().await.map_err(w)? })
    }

    fn routed(&self, shard: ShardId, epoch: u64, buckets: Vec<Bucket>) -> Routed {
        Routed { tenant: self.tenant.clone(), shard, epoch, buckets, home: false }
    }

    /// The request as it came, to `shard`.
    async fn pass(&self, shard: ShardId, routed: &Routed) -> Result<Answer> {
        let f = &self.forward;
        self.send(shard, routed, f.method.clone(), f.url.as_str(), &f.body).await
    }

    /// The same request to each shard, at most a fan-out's branching at once.
    async fn each(&self, shards: &[ShardId], epoch: u64, method: Method, url: &str, body: &[u8]) -> Result<Vec<Answer>> {
        let mut out = Vec::with_capacity(shards.len());
        for group in shards.chunks(limits::SHARD_FANOUT_BRANCHING_MAX) {
            let calls = group.iter().map(|&s| {
                let routed = self.routed(s, epoch, Vec::new());
                let method = method.clone();
                async move { self.send(s, &routed, method, url, body).await }
            });
            for a in futures_util::future::join_all(calls).await {
                out.push(a?);
            }
        }
        Ok(out)
    }
}

/// Serves a request for a sharded tenant: routed by its placement under
/// the tenant's map, retried with a fresh map when a shard says it moved.
pub(super) async fn dispatch(s: Sharded<'_>) -> Result<Response> {
    let f = &s.forward;
    let path = f.url.path().to_owned();
    let routes::Match::Found { route, .. } = routes::lookup(f.method.as_ref(), &path) else { return Err(Error::not_found("route", path)) };
    let place = placement(route, f.method.as_ref());
    if place == Placement::NotYet {
        return Err(Error::NotSharded { route: format!("{} /v1/{}", f.method.as_ref(), route.pattern) });
    }
    let mut fresh = false;
    let mut epoch = 0;
    for attempt in 0..=limits::SHARD_MOVED_RETRIES_MAX {
        let map = map_for(s.env, &s.tenant, Some(s.initial), fresh, s.now).await?;
        epoch = map.epoch;
        // A test fault (dev mode): the first attempt routes under the map
        // before this one, as a front whose cache missed a split would.
        let routed_epoch = if attempt == 0 && s.dev_fault("stale_map") { map.epoch.saturating_sub(1) } else { map.epoch };
        let answer = placed(&s, place, route, &path, &map, routed_epoch).await?;
        if !answer.moved() {
            return answer.into_response();
        }
        fresh = true;
        RETRIES.with(|r| r.set(r.get().saturating_add(1)));
    }
    Err(Error::ShardMoved { epoch })
}

async fn placed(s: &Sharded<'_>, place: Placement, route: &routes::Route, path: &str, map: &ShardMap, epoch: u64) -> Result<Answer> {
    let key = || placeholder(route, path).ok_or_else(|| Error::not_found("route", path.to_owned()));
    match place {
        Placement::Home => s.pass(0, &Routed { home: true, ..s.routed(0, epoch, Vec::new()) }).await,
        Placement::Session => {
            let b = bucket_of(key()?);
            s.pass(map.owner(b), &s.routed(map.owner(b), epoch, vec![b])).await
        }
        Placement::User => {
            let b = bucket_of(&canonical(s.privacy()?.as_ref(), key()?));
            s.pass(map.owner(b), &s.routed(map.owner(b), epoch, vec![b])).await
        }
        Placement::Broadcast => {
            let mut home = None;
            for shard in map.shards() {
                let a = s.pass(shard, &Routed { home: true, ..s.routed(shard, epoch, Vec::new()) }).await?;
                if !a.ok() {
                    return Ok(a);
                }
                home.get_or_insert(a);
            }
            home.ok_or_else(|| Error::Internal { detail: "a map without shards".into() })
        }
        Placement::Create => create(s, map, epoch).await,
        Placement::Search => search(s, map, epoch).await,
        Placement::Record => record(s, map, epoch, key()?).await,
        Placement::DeleteIds => {
            let f = &s.forward;
            let answers = s.each(&map.shards(), epoch, f.method.clone(), f.url.as_str(), &f.body).await?;
            let mut deleted = 0u64;
            for a in answers {
                if !a.ok() {
                    return Ok(a);
                }
                let status = a.json().and_then(|v| v["status"].as_str().map(str::to_owned)).unwrap_or_default();
                deleted += status.split_whitespace().find_map(|w| w.parse::<u64>().ok()).unwrap_or(0);
            }
            Ok(Answer::with_json(200, &json!({ "status": format!("ok, deleted {deleted} memories") })))
        }
        Placement::Sessions => sessions(s, map, epoch).await,
        Placement::Forget => {
            let user = s.forward.query.iter().find(|(k, _)| k == "user_id").map(|(_, v)| v.clone());
            let Some(user) = user else { return Err(Error::NotSharded { route: "POST /v1/long-term-memory/forget without a user_id (its budget and limit are tenant-wide)".into() }) };
            let b = bucket_of(&canonical(s.privacy()?.as_ref(), &user));
            s.pass(map.owner(b), &s.routed(map.owner(b), epoch, vec![b])).await
        }
        Placement::Prompt => prompt(s, map, epoch).await,
        Placement::Erase => {
            let user_shard = map.owner(bucket_of(&canonical(s.privacy()?.as_ref(), key()?)));
            let (mut memories, mut episodes) = (0u64, 0u64);
            let mut answer = None;
            for shard in map.shards() {
                let a = s.pass(shard, &Routed { home: true, ..s.routed(shard, epoch, Vec::new()) }).await?;
                if !a.ok() {
                    return Ok(a);
                }
                let v = a.json().unwrap_or_default();
                memories += v["erased"]["memories"].as_u64().unwrap_or(0);
                episodes += v["erased"]["episodes"].as_u64().unwrap_or(0);
                if shard == user_shard {
                    answer = Some(v);
                }
            }
            let mut v = answer.ok_or_else(|| Error::Internal { detail: "the user's shard did not answer".into() })?;
            v["erased"] = json!({ "memories": memories, "episodes": episodes });
            Ok(Answer::with_json(200, &v))
        }
        Placement::NotYet => Err(Error::NotSharded { route: route.pattern.to_owned() }),
    }
}

/// What the front sends a prompt's shard.
#[derive(Serialize, Deserialize)]
pub struct PromptBody {
    /// The memory prompt as the client sent it.
    pub prompt: Value,
    /// Its long-term search's memories, across the shards.
    pub memories: Vec<Value>,
}

/// A memory prompt: its search as a search of its own (pinned or fanned
/// out), then the prompt in the session's shard, which reads the turns.
async fn prompt(s: &Sharded<'_>, map: &ShardMap, epoch: u64) -> Result<Answer> {
    let v: Value = api::parse_json(&s.forward.body)?;
    let query = v.get("query").and_then(Value::as_str).unwrap_or_default();
    let mut memories = Vec::new();
    if let Some(search_body) = v.get("long_term_search").map(|l| api::memory_prompt_search(query, l)).transpose()?.flatten() {
        let a = search_with(s, map, epoch, search_body).await?;
        if !a.ok() {
            return Ok(a);
        }
        memories = a.json().and_then(|v| v["memories"].as_array().cloned()).unwrap_or_default();
    }
    let session = v.get("session").and_then(|x| x.get("session_id")).and_then(Value::as_str);
    let routed = match session {
        Some(id) => {
            let b = bucket_of(id);
            s.routed(map.owner(b), epoch, vec![b])
        }
        None => Routed { home: true, ..s.routed(0, epoch, Vec::new()) },
    };
    let body = json!(PromptBody { prompt: v.clone(), memories });
    let url = format!("{}{PROMPT_PATH}", s.forward.url.origin().ascii_serialization());
    s.send(routed.shard, &routed, Method::Post, &url, body.to_string().as_bytes()).await
}

/// The sessions of every shard, merged in id order (as one object lists
/// them) and paged.
async fn sessions(s: &Sharded<'_>, map: &ShardMap, epoch: u64) -> Result<Answer> {
    let q = &s.forward.query;
    let param = |name: &str| q.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    let number = |name: &str, default: usize, min: usize, max: usize| match param(name) {
        None => Ok(default),
        Some(v) => v.parse::<usize>().ok().filter(|n| (min..=max).contains(n)).ok_or_else(|| Error::invalid(name, format!("must be from {min} to {max}"))),
    };
    let limit = number("limit", limits::SESSION_LIST_LIMIT_DEFAULT, 1, limits::SESSION_LIST_LIMIT_MAX)?;
    let offset = number("offset", 0, 0, limits::SESSIONS_MAX)?;
    let want = offset + limit;
    if want > limits::SHARD_SESSION_LIST_DEPTH_MAX {
        return Err(Error::LimitExceeded { what: "sessions listed across a sharded tenant's shards (offset + limit)".into(), limit: limits::SHARD_SESSION_LIST_DEPTH_MAX as u64 });
    }
    let mut ids: Vec<String> = Vec::new();
    let mut total = 0u64;
    for shard in map.shards() {
        // Each shard's first `want` ids hold its part of the page.
        let mut at = 0;
        loop {
            let page = (want - at).min(limits::SESSION_LIST_LIMIT_MAX);
            let mut url = s.forward.url.clone();
            let kept: Vec<(String, String)> = q.iter().filter(|(k, _)| k != "offset" && k != "limit").cloned().collect();
            url.query_pairs_mut().clear().extend_pairs(kept).append_pair("offset", &at.to_string()).append_pair("limit", &page.to_string());
            let a = s.send(shard, &s.routed(shard, epoch, Vec::new()), Method::Get, url.as_str(), &[]).await?;
            if !a.ok() {
                return Ok(a);
            }
            let v = a.json().unwrap_or_default();
            let got: Vec<String> = v["sessions"].as_array().into_iter().flatten().filter_map(|x| x.as_str().map(str::to_owned)).collect();
            if at == 0 {
                total += v["total"].as_u64().unwrap_or(0);
            }
            let n = got.len();
            ids.extend(got);
            at += n;
            if n < page || at >= want {
                break;
            }
        }
    }
    ids.sort_unstable();
    let page: Vec<String> = ids.into_iter().skip(offset).take(limit).collect();
    Ok(Answer::with_json(200, &json!({ "sessions": page, "total": total })))
}

/// A user id as its bucket is computed: a sealed id (as answers show
/// them) opened, so either form finds the same shard.
fn canonical(key: Option<&PseudonymKey>, user: &str) -> String {
    key.and_then(|k| k.open_user_id(user)).unwrap_or_else(|| user.to_owned())
}

/// A create, split by each memory's bucket; each shard's part is atomic,
/// the whole is not (a failed part is answered; parts before it stay).
async fn create(s: &Sharded<'_>, map: &ShardMap, epoch: u64) -> Result<Answer> {
    let f = &s.forward;
    let mut v: Value = api::parse_json(&f.body)?;
    let memories = v.get_mut("memories").and_then(Value::as_array_mut).ok_or_else(|| Error::invalid("memories", "must be an array"))?;
    if memories.len() > limits::LTM_CREATE_BATCH_MAX {
        return Err(Error::LimitExceeded { what: "memories in one create".into(), limit: limits::LTM_CREATE_BATCH_MAX as u64 });
    }
    let key = s.privacy()?;
    // shard → (index in the request, memory), in request order.
    let mut parts: BTreeMap<ShardId, Vec<(usize, Value)>> = BTreeMap::new();
    let mut buckets: BTreeMap<ShardId, Vec<Bucket>> = BTreeMap::new();
    for (i, m) in memories.iter_mut().enumerate() {
        if m.is_object() && m.get("id").is_none_or(Value::is_null) {
            // Ids are assigned here so a memory without a user has a bucket
            // (its id's), and a retry of the same body is idempotent.
            m["id"] = Value::String(ulid(s.now, super::random_bits()));
        }
        let id = m.get("id").and_then(Value::as_str).unwrap_or_default();
        let user = m.get("user_id").and_then(Value::as_str).map(|u| canonical(key.as_ref(), u));
        let b = record_bucket(user.as_deref(), id);
        let shard = map.owner(b);
        parts.entry(shard).or_default().push((i, m.clone()));
        buckets.entry(shard).or_default().push(b);
    }
    let mut created: Vec<(usize, Value)> = Vec::new();
    let mut duplicates: Vec<(usize, Value)> = Vec::new();
    let mut results: Vec<(usize, Value)> = Vec::new();
    let mut last = None;
    for (shard, part) in parts {
        let mut body = v.clone();
        body["memories"] = Value::Array(part.iter().map(|(_, m)| m.clone()).collect());
        let mut bs = buckets.remove(&shard).unwrap_or_default();
        bs.sort_unstable();
        bs.dedup();
        let a = s.send(shard, &s.routed(shard, epoch, bs), f.method.clone(), f.url.as_str(), body.to_string().as_bytes()).await?;
        if !a.ok() {
            return Ok(a);
        }
        let r = a.json().unwrap_or_default();
        let index_of = |id: &Value| part.iter().find(|(_, m)| m.get("id") == Some(id)).map_or(usize::MAX, |(i, _)| *i);
        created.extend(r["created"].as_array().into_iter().flatten().map(|id| (index_of(id), id.clone())));
        duplicates.extend(r["duplicates"].as_array().into_iter().flatten().map(|id| (index_of(id), id.clone())));
        results.extend(r["results"].as_array().into_iter().flatten().map(|x| (index_of(&x["id"]), x.clone())));
        last = Some(a);
    }
    let Some(mut answer) = last else {
        // No memories: any shard answers the empty create as one object would.
        return s.pass(0, &s.routed(0, epoch, Vec::new())).await;
    };
    let sorted = |mut xs: Vec<(usize, Value)>| -> Vec<Value> {
        xs.sort_by_key(|x| x.0);
        xs.into_iter().map(|x| x.1).collect()
    };
    let mut out = answer.json().unwrap_or_default();
    out["created"] = Value::Array(sorted(created));
    out["duplicates"] = Value::Array(sorted(duplicates));
    out["results"] = Value::Array(sorted(results));
    answer.body = out.to_string().into_bytes();
    Ok(answer)
}

/// A search: to the shards of the users its filter pins, else to a
/// random root that coordinates the fan-out.
async fn search(s: &Sharded<'_>, map: &ShardMap, epoch: u64) -> Result<Answer> {
    search_with(s, map, epoch, api::parse_json(&s.forward.body)?).await
}

async fn search_with(s: &Sharded<'_>, map: &ShardMap, epoch: u64, mut v: Value) -> Result<Answer> {
    let f = &s.forward;
    // The search's own route, with the request's query (a prompt's search
    // is one too).
    let query = f.url.query().map(|q| format!("?{q}")).unwrap_or_default();
    let search_url = format!("{}/v1/long-term-memory/search{query}", f.url.origin().ascii_serialization());
    let original = v.clone();
    let o = v.as_object_mut().ok_or_else(|| Error::invalid("body", "must be an object"))?;
    let key = s.privacy()?;
    // The users' buckets are their raw ids'.
    let mut users: Vec<String> = Vec::new();
    if let Some(u) = o.get_mut("user_id") {
        let mut open = |x: &mut Value| {
            if let Some(id) = x.as_str() {
                let c = canonical(key.as_ref(), id);
                users.push(c.clone());
                *x = Value::String(c);
            }
        };
        match u {
            Value::String(_) => open(u),
            Value::Object(m) => {
                m.get_mut("eq").into_iter().for_each(&mut open);
                if let Some(list) = m.get_mut("any").and_then(Value::as_array_mut) {
                    list.iter_mut().for_each(&mut open);
                }
            }
            _ => {}
        }
    }
    let filter = Filter::from_request(o)?;
    let asked_ms = match o.get("deadline_ms") {
        None | Some(Value::Null) => None,
        Some(d) => Some(d.as_u64().ok_or_else(|| Error::invalid("deadline_ms", "must be a whole number of milliseconds"))?),
    };
    let deadline_at = fanout::deadline_at(s.now, asked_ms)?;
    match route_search(&filter, map) {
        Route::One(shard) => {
            let mut bs: Vec<Bucket> = users.iter().map(|u| bucket_of(u)).filter(|&b| map.owner(b) == shard).collect();
            bs.sort_unstable();
            bs.dedup();
            s.send(shard, &s.routed(shard, epoch, bs), Method::Post, &search_url, original.to_string().as_bytes()).await
        }
        Route::FanOut(mut shards) => {
            // A random root spreads the coordinating work over the shards.
            let at = super::random_bits()[0] as usize % shards.len();
            shards.rotate_left(at);
            let tree = fanout_tree(&shards, limits::SHARD_FANOUT_BRANCHING_MAX).ok_or_else(|| Error::Internal { detail: "an empty fan-out".into() })?;
            let root = tree.shard;
            let body = json!({ "search": original, "tree": tree, "deadline_at": deadline_at });
            let url = format!("https://shard.local{FANOUT_PATH}");
            let routed = s.routed(root, epoch, Vec::new());
            let bytes = body.to_string().into_bytes();
            let call = s.send(root, &routed, Method::Post, &url, &bytes);
            // The root answers by the deadline (partial if it must); a root
            // that cannot (an overloaded object) is a timeout, never a wait.
            let wait_ms = deadline_at.saturating_sub(super::now_ms()).saturating_add(2 * limits::SHARD_FANOUT_HOP_MARGIN_MS);
            let timer = worker::Delay::from(std::time::Duration::from_millis(wait_ms));
            let answer = match futures_util::future::select(Box::pin(call), timer).await {
                futures_util::future::Either::Left((answer, _)) => answer,
                futures_util::future::Either::Right(_) => Err(Error::UpstreamTimeout { service: format!("shard {root} (the fan-out's root)"), timeout_ms: wait_ms }),
            };
            answer
        }
    }
}

/// A request for one record by id: the shards are asked which holds it
/// (ids are the client's, so only the shards know), and it goes there.
async fn record(s: &Sharded<'_>, map: &ShardMap, epoch: u64, id: &str) -> Result<Answer> {
    let f = &s.forward;
    let query = f.url.query().map(|q| format!("?{q}")).unwrap_or_default();
    let probe = format!("{}/v1/long-term-memory/{id}{query}", f.url.origin().ascii_serialization());
    let shards = map.shards();
    let answers = s.each(&shards, epoch, Method::Get, &probe, &[]).await?;
    if let Some(moved) = answers.iter().position(Answer::moved) {
        return Ok(answers.into_iter().nth(moved).expect("found above"));
    }
    let holders: Vec<usize> = answers.iter().enumerate().filter(|(_, a)| a.ok()).map(|(i, _)| i).collect();
    let (i, shard) = match holders.as_slice() {
        // Not found anywhere: home's answer (a 404), as one object's.
        [] => return answers.into_iter().next().ok_or_else(|| Error::not_found("memory", id.to_owned())),
        [one] => (*one, shards[*one]),
        _ => return Err(Error::invalid("memory_id", format!("{id:?} names records of several users in different shards; delete one of them"))),
    };
    if f.method == Method::Get && f.url.path().ends_with(id) {
        return Ok(answers.into_iter().nth(i).expect("a holder"));
    }
    // An edit that gives the record another user's bucket would move it.
    if f.method == Method::Patch {
        let patch: Value = api::parse_json(&f.body)?;
        if let Some(user) = patch.get("user_id").and_then(Value::as_str) {
            let b = bucket_of(&canonical(s.privacy()?.as_ref(), user));
            if map.owner(b) != shard {
                return Err(Error::NotSharded { route: "PATCH /v1/long-term-memory/{} moving a record to another user's shard".into() });
            }
        }
    }
    s.pass(shard, &s.routed(shard, epoch, Vec::new())).await
}

/// The object side of [`HELD_PATH`].
pub async fn serve_held(state: &State, meter: std::rc::Rc<super::sql::Meter>) -> Result<Value> {
    Ok(json!({ "held": super::sql::SqlBackend::holds_data(&state.storage(), meter).await? }))
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
pub async fn hand_over(env: &Env, store: &super::crypt::DoStore, me: &ShardSelf, cache: &RefCell<Option<ShardMap>>, keys: &[(String, String)], from: u64, count: &dyn Fn()) -> Result<u64> {
    if cache.borrow().is_none() {
        let v = call(env, &directory_name(&me.tenant), MAP_PATH, &json!({ "tenant": me.tenant }), &[]).await?;
        let map: ShardMap = serde_json::from_value(v).map_err(|e| Error::Internal { detail: format!("the directory's map: {e}") })?;
        map.validate()?;
        *cache.borrow_mut() = Some(map);
    }
    let Some(map) = cache.borrow().clone() else { return Ok(from) };
    let (found, next) = crate::api::longterm::rehome::misplaced(store, |b| map.owner(b) == me.shard, from, limits::LTM_CREATE_BATCH_MAX).await?;
    let mut by_owner: BTreeMap<ShardId, Vec<crate::api::longterm::rehome::Misplaced>> = BTreeMap::new();
    for m in found {
        by_owner.entry(map.owner(m.bucket)).or_default().push(m);
    }
    for (owner, part) in by_owner {
        let mut buckets: Vec<Bucket> = part.iter().map(|m| m.bucket).collect();
        buckets.sort_unstable();
        buckets.dedup();
        let to = Routed { tenant: me.tenant.clone(), shard: owner, epoch: map.epoch, buckets, home: false };
        let mut headers: Vec<(String, String)> = keys.to_vec();
        headers.push((SHARD_HEADER.to_owned(), serde_json::to_string(&to).map_err(|e| Error::Internal { detail: e.to_string() })?));
        if let Some(ns) = &me.namespace {
            headers.push((super::NAMESPACE_HEADER.to_owned(), ns.clone()));
        }
        if me.dev {
            headers.push((super::DEV_HEADER.to_owned(), "1".to_owned()));
        }
        let h = Headers::new();
        for (k, v) in &headers {
            h.set(k, v).map_err(w)?;
        }
        let body = json!({ "memories": part.iter().map(|m| m.json.clone()).collect::<Vec<_>>(), "deduplicate": false });
        let mut init = RequestInit::new();
        init.with_method(Method::Post).with_headers(h).with_body(Some(body.to_string().into()));
        let req = Request::new_with_init("https://shard.local/v1/long-term-memory", &init).map_err(w)?;
        count();
        let stub = env.durable_object(super::MEMORY_BINDING).map_err(w)?.id_from_name(&object_name(&me.tenant, owner)).map_err(w)?.get_stub().map_err(w)?;
        let mut resp = stub.fetch_with_request(req).await.map_err(w)?;
        if resp.status_code() != 200 {
            let v: Value = resp.json().await.unwrap_or_default();
            return Err(error_from(resp.status_code(), &v));
        }
        crate::api::longterm::rehome::handed_over(store, part.into_iter().map(|m| m.id).collect(), super::now_ms()).await?;
    }
    Ok(next)
}
