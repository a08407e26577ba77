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
use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use worker::{Env, Headers, Method, Request, RequestInit, Response};

use super::{auth, front::Forward};

mod admin;
mod backup;
pub mod feed;
pub mod fence;
mod object;
mod record;
mod spans;
pub mod split;
pub mod steps;
pub mod views;

pub use admin::{admin, AdminAsk};
pub use backup::{IMPORT_STAGED_HEADER, IMPORT_STAGE_PATH};
pub use object::{admit, hand_over, internal, known_self, remember_self, serve_held, serve_map, ShardSelf};
pub use spans::PromptBody;
use record::record;
use spans::{agent_prompt, create, forget, prompt, search, sessions};
use crate::api::placement::{combine, placeholder, placement, Placement};
use crate::api::routes;
use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::privacy::PseudonymKey;
use crate::core::shard::{bucket_of, Bucket, ShardId, ShardMap};
use crate::core::time::Millis;
use crate::worker::crypt::DoStore;

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
/// Home's step of a prompt whose session lives in another shard: the
/// agent's system text (`{agent_id}` → `{system}`).
pub const AGENT_SYSTEM_PATH: &str = "/_shard/agent-system";
/// A prompt in its session's shard, with the agent's system text from
/// home: `{prompt, system}`.
pub const AGENT_PROMPT_PATH: &str = "/_shard/agent-prompt";
/// A forget without a user, first step: a shard's part (the forget's own
/// query and body).
pub const FORGET_PART_PATH: &str = "/_shard/forget-part";
/// A forget without a user, second step: `{ids}` chosen in this shard.
pub const FORGET_DELETE_PATH: &str = "/_shard/forget-delete";
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
    /// Whether it may write (a split's fence holds writes, not reads);
    /// absent: taken to write.
    #[serde(default = "yes")]
    pub write: bool,
    /// Sent to every shard alike (a setting, an erasure): a split's fence
    /// holds it until the new shard is in the map.
    #[serde(default)]
    pub all: bool,
}

fn yes() -> bool {
    true
}

impl Routed {
    /// The header a shard reads, if the front sent one.
    pub fn from_request(req: &Request) -> Result<Option<Routed>> {
        let Some(h) = req.headers().get(SHARD_HEADER).map_err(w)? else { return Ok(None) };
        serde_json::from_str(&h).map(Some).map_err(|e| Error::invalid(SHARD_HEADER, e.to_string()))
    }

    /// `base` with this routing's header: what a call to a shard carries.
    pub fn headers(&self, base: &[(String, String)]) -> Result<Vec<(String, String)>> {
        let mut headers = base.to_vec();
        headers.push((SHARD_HEADER.to_owned(), serde_json::to_string(self).map_err(|e| Error::Internal { detail: e.to_string() })?));
        Ok(headers)
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

pub(super) fn directory_name(tenant: &str) -> String {
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
        // A sealed tenant's shard asked without its key, or with another
        // (a split's calls, an admin route's): typed as a tenant answers.
        Some("key_required") => Error::KeyRequired { key_id: None },
        Some("decryption_failed") => Error::DecryptionFailed { key_id: String::new(), detail: format!("a shard answered: {detail}") },
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

/// One call to `shard` of `routed`'s tenant, with the headers `base` and
/// the routing header.
async fn send_to(env: &Env, base: &[(String, String)], routed: &Routed, shard: ShardId, method: Method, url: &str, body: &[u8]) -> Result<Answer> {
    let h = Headers::new();
    for (k, v) in base {
        h.set(k, v).map_err(w)?;
    }
    h.set(SHARD_HEADER, &serde_json::to_string(routed).map_err(|e| Error::Internal { detail: e.to_string() })?).map_err(w)?;
    let mut init = RequestInit::new();
    init.with_method(method).with_headers(h);
    if !body.is_empty() {
        init.with_body(Some(js_sys::Uint8Array::from(body).into()));
    }
    let req = Request::new_with_init(url, &init).map_err(w)?;
    let mut resp = super::object_stub(env, &object_name(&routed.tenant, shard)).map_err(w)?.fetch_with_request(req).await.map_err(w)?;
    let content_type = resp.headers().get("content-type").map_err(w)?;
    let meter = resp.headers().get(super::METER_HEADER).map_err(w)?;
    Ok(Answer { status: resp.status_code(), content_type, meter, body: resp.bytes().await.map_err(w)? })
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
    /// Whether the request may write (see [`Routed::write`]); set by dispatch.
    pub write: bool,
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
        send_to(self.env, &self.base, routed, shard, method, url, body).await
    }

    fn routed(&self, shard: ShardId, epoch: u64, buckets: Vec<Bucket>) -> Routed {
        Routed { tenant: self.tenant.clone(), shard, epoch, buckets, home: false, write: self.write, all: false }
    }

    /// The request as it came, to `shard`.
    async fn pass(&self, shard: ShardId, routed: &Routed) -> Result<Answer> {
        let f = &self.forward;
        self.send(shard, routed, f.method.clone(), f.url.as_str(), &f.body).await
    }

    /// The same request to each shard, at most a fan-out's branching at
    /// once; `write`: whether it may write (see [`Routed::write`]).
    async fn each(&self, shards: &[ShardId], epoch: u64, write: bool, method: Method, url: &str, body: &[u8]) -> Result<Vec<Answer>> {
        let mut out = Vec::with_capacity(shards.len());
        for group in shards.chunks(limits::SHARD_FANOUT_BRANCHING_MAX) {
            let calls = group.iter().map(|&s| {
                let routed = Routed { write, ..self.routed(s, epoch, Vec::new()) };
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
pub(super) async fn dispatch(mut s: Sharded<'_>) -> Result<Response> {
    let f = &s.forward;
    let path = f.url.path().to_owned();
    let routes::Match::Found { route, .. } = routes::lookup(f.method.as_ref(), &path) else { return Err(Error::not_found("route", path)) };
    let place = placement(route, f.method.as_ref());
    if place == Placement::NotYet {
        return Err(Error::NotSharded { route: format!("{} /v1/{}", f.method.as_ref(), route.pattern) });
    }
    let write = f.method != Method::Get && !matches!(place, Placement::Home | Placement::ViewCreate | Placement::Search | Placement::Prompt | Placement::AgentPrompt);
    s.write = write;
    let mut fresh = false;
    let mut epoch = 0;
    for attempt in 0..=limits::SHARD_MOVED_RETRIES_MAX {
        if attempt > 0 {
            // A split's fence holds writes for a moment: back off.
            let wait = limits::SHARD_MOVED_BACKOFF_MS << (attempt - 1).min(16);
            worker::Delay::from(std::time::Duration::from_millis(wait)).await;
        }
        let map = map_for(s.env, &s.tenant, Some(s.initial), fresh, s.now).await?;
        epoch = map.epoch;
        // A test fault (dev mode): the first attempt routes under the map
        // before this one, as a front whose cache missed a split would.
        let routed_epoch = if attempt == 0 && s.dev_fault("stale_map") { map.epoch.saturating_sub(1) } else { map.epoch };
        let answer = match place {
            Placement::Export => match backup::export(&s, &map, routed_epoch).await? {
                backup::Exported::Stream(streamed) => return Ok(streamed),
                backup::Exported::Refused(a) => a,
            },
            // Its body as it comes, when the front left it unread.
            Placement::Import => {
                let body: futures_util::stream::LocalBoxStream<'static, worker::Result<Vec<u8>>> = match s.forward.stream.take() {
                    Some(stream) => Box::pin(stream),
                    None => Box::pin(futures_util::stream::iter([Ok(s.forward.body.clone())])),
                };
                backup::import(&s, &map, routed_epoch, body).await?
            }
            _ => placed(&s, place, route, &path, &map, routed_epoch).await?,
        };
        if !answer.moved() {
            return answer.into_response();
        }
        fresh = true;
        RETRIES.with(|r| r.set(r.get().saturating_add(1)));
        if attempt > 0 {
            resume_with_key(&s).await;
        }
    }
    Err(Error::ShardMoved { epoch })
}

/// A request still fenced after a retry: if it carries a sealed tenant's
/// key, the directory is given it, so a split its restart left waiting
/// for the key runs again ([`split::SplitKey`]).
async fn resume_with_key(s: &Sharded<'_>) {
    let Some(key) = super::crypt::key_in(&s.base) else { return };
    let body = json!({ "tenant": s.tenant, "reason": "resume", "key": key });
    if let Err(e) = call(s.env, &directory_name(&s.tenant), split::SPLIT_PATH, &body, &[]).await {
        worker::console_error!("edgemem: the split of {} could not be resumed: {e}", s.tenant);
    }
}

async fn placed(s: &Sharded<'_>, place: Placement, route: &routes::Route, path: &str, map: &ShardMap, epoch: u64) -> Result<Answer> {
    let key = || placeholder(route, path).ok_or_else(|| Error::not_found("route", path.to_owned()));
    match place {
        Placement::Home => s.pass(0, &Routed { home: true, ..s.routed(0, epoch, Vec::new()) }).await,
        Placement::ViewCreate => {
            let a = s.pass(0, &Routed { home: true, ..s.routed(0, epoch, Vec::new()) }).await?;
            if a.ok() && a.json().is_some_and(|v| v["continuous"] == true) {
                // Best effort: a shard the reset misses tells home again
                // within its trust's bound.
                let others: Vec<ShardId> = map.shards().into_iter().filter(|&x| x != 0).collect();
                let url = format!("{}{}", s.forward.url.origin().ascii_serialization(), views::RESET_PATH);
                if let Err(e) = s.each(&others, epoch, s.write, Method::Post, &url, b"{}").await {
                    worker::console_error!("edgemem: a shard of {} missed a continuous view's creation: {e}", s.tenant);
                }
            }
            Ok(a)
        }
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
                let a = s.pass(shard, &Routed { home: true, all: true, ..s.routed(shard, epoch, Vec::new()) }).await?;
                if !a.ok() {
                    return Ok(a);
                }
                home.get_or_insert(a);
            }
            home.ok_or_else(|| Error::Internal { detail: "a map without shards".into() })
        }
        Placement::Create => create(s, map, epoch).await,
        Placement::Search => search(s, map, epoch).await,
        Placement::Record => {
            let a = record(s, map, epoch, key()?).await?;
            if a.ok() && path.ends_with("/redact") {
                backup::republish(s, map, epoch).await?;
            }
            Ok(a)
        }
        Placement::DeleteIds => {
            let f = &s.forward;
            let answers = s.each(&map.shards(), epoch, s.write, f.method.clone(), f.url.as_str(), &f.body).await?;
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
        Placement::EveryShard => {
            let f = &s.forward;
            let shards = map.shards();
            let answers = s.each(&shards, epoch, s.write, f.method.clone(), f.url.as_str(), &f.body).await?;
            let mut values = Vec::with_capacity(answers.len());
            for a in answers {
                if !a.ok() {
                    return Ok(a);
                }
                values.push(a.json().ok_or_else(|| Error::Internal { detail: "a shard's answer is not JSON".into() })?);
            }
            Ok(Answer::with_json(200, &combine(route.pattern, &shards, &values)?))
        }
        Placement::Forget => {
            // A user's records all live in the user's shard; without a user
            // every shard has a part (`spans::forget`).
            let Some((_, user)) = s.forward.query.iter().find(|(k, _)| k == "user_id") else { return forget(s, map, epoch).await };
            let b = bucket_of(&canonical(s.privacy()?.as_ref(), user));
            s.pass(map.owner(b), &s.routed(map.owner(b), epoch, vec![b])).await
        }
        Placement::Prompt => prompt(s, map, epoch).await,
        Placement::AgentPrompt => agent_prompt(s, map, epoch).await,
        Placement::Publish => backup::publish(s, map, epoch).await,
        Placement::Export | Placement::Import => Err(Error::Internal { detail: "an export or an import is streamed, not placed".into() }),
        Placement::Erase => {
            let user_shard = map.owner(bucket_of(&canonical(s.privacy()?.as_ref(), key()?)));
            let (mut memories, mut episodes) = (0u64, 0u64);
            let mut answer = None;
            for shard in map.shards() {
                let a = s.pass(shard, &Routed { home: true, all: true, ..s.routed(shard, epoch, Vec::new()) }).await?;
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
            backup::republish(s, map, epoch).await?;
            Ok(Answer::with_json(200, &v))
        }
        Placement::NotYet => Err(Error::NotSharded { route: route.pattern.to_owned() }),
    }
}

/// The bucket of each memory of a create's body that has an id (the
/// order in which the front registers their ids): its user's, else its
/// id's.
pub fn create_buckets(body: &[u8], key: Option<&PseudonymKey>) -> Result<Vec<Bucket>> {
    let v: Value = crate::api::parse_json(body)?;
    let memories = v.get("memories").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    Ok(memories
        .iter()
        .filter(|m| m.is_object())
        .filter_map(|m| Some(memory_bucket(m, m["id"].as_str()?, key)))
        .collect())
}

/// The bucket of the memory `m` of a create, whose id is `id`: its
/// user's (a sealed id opened), else its id's.
pub fn memory_bucket(m: &Value, id: &str, key: Option<&PseudonymKey>) -> Bucket {
    let user = m.get("user_id").and_then(Value::as_str).map(|u| canonical(key, u));
    crate::core::shard::record_bucket(user.as_deref(), id)
}

/// A user id as its bucket is computed: a sealed id (as answers show
/// them) opened, so either form finds the same shard.
fn canonical(key: Option<&PseudonymKey>, user: &str) -> String {
    key.and_then(|k| k.open_user_id(user)).unwrap_or_else(|| user.to_owned())
}

/// The object side of the steps a front sends a shard that run in the API
/// pipeline (its quota, scrub, alarm and after-write steps): a memory
/// prompt whose search the front ran, a prompt's two steps (the agent's
/// text at home, the prompt in the session's shard), the two steps of a
/// forget without a user, and an import's check. `None` for any other path.
pub async fn serve_step(store: &DoStore, ctx: &mut crate::api::Ctx<'_>, req: &crate::api::Request<'_>) -> Option<crate::api::Response> {
    use crate::api::longterm::forget as f;
    let r = match req.path {
        PROMPT_PATH => async {
            let p: PromptBody = crate::api::parse_json(req.body)?;
            let prompt = serde_json::to_vec(&p.prompt).map_err(|e| Error::Internal { detail: e.to_string() })?;
            crate::api::memory_prompt_route(store, ctx, &prompt, Some(p.memories)).await
        }
        .await,
        AGENT_SYSTEM_PATH => async {
            #[derive(Deserialize)]
            struct Agent {
                agent_id: String,
            }
            let b: Agent = crate::api::parse_json(req.body)?;
            crate::core::session::validate_id("agent_id", &b.agent_id)?;
            let system = store.read(|e| e.agent(&b.agent_id).map(|c| c.system_text())).await?;
            Ok(crate::api::Response::ok(json!({ "system": system })))
        }
        .await,
        AGENT_PROMPT_PATH => async {
            #[derive(Deserialize)]
            struct AgentPrompt {
                prompt: Value,
                system: Option<String>,
            }
            let b: AgentPrompt = crate::api::parse_json(req.body)?;
            let mut body: crate::api::history::PromptBody = serde_json::from_value(b.prompt).map_err(|e| Error::invalid("body", e.to_string()))?;
            body.agent_system = Some(b.system);
            crate::api::history::prompt_answer(store, ctx.services, body, ctx.now).await
        }
        .await,
        backup::IMPORT_CHECK_PATH => crate::api::export::check(store, req.body).await.map(crate::api::Response::ok),
        backup::EXPORT_STEP_PATH => crate::api::export_stream::export_step(store, req.body, ctx.now).await.map(crate::api::Response::ok_bytes),
        FORGET_PART_PATH => async {
            let asked = f::Forget::read(req)?;
            Ok(crate::api::Response::ok(json!(f::part(store, &asked, ctx.now).await?)))
        }
        .await,
        FORGET_DELETE_PATH => async {
            #[derive(Deserialize)]
            struct Ids {
                ids: Vec<String>,
            }
            let b: Ids = crate::api::parse_json(req.body)?;
            Ok(crate::api::Response::ok(json!({ "deleted": f::delete(store, b.ids, ctx.now, ctx.actor).await? })))
        }
        .await,
        _ => return None,
    };
    Some(r.unwrap_or_else(|e| crate::api::Response::error(&e)))
}
