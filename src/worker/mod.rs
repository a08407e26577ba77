//! The Cloudflare Worker: a thin front that authenticates, caps and routes
//! each request to its tenant's Durable Object, which owns a [`Store`] on its
//! own storage and answers through the pure [`crate::api`].
//!
//! Static files (the demo page) are served by the runtime's asset layer
//! before this code runs; only `/v1/*` reaches it.

mod auth;
mod backend;
mod budget;
mod crypt;
mod extractor;
mod fanout;
mod feed;
mod front;
mod mcp;
mod object_alarm;
mod object_shard;
mod publish;
mod routing;
mod services;
mod shard;
mod sql;
mod upstream;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use futures_util::lock::Mutex;
use worker::{durable_object, event, Context, DurableObject, Env, Headers, Method, Request, Response, State, WebSocket, WebSocketIncomingMessage};

use crate::api::{self, Ctx};
use crate::core::error::Error;
use crate::core::limits;
use crate::core::time::Millis;
use crypt::{DoStore, RequestKeys, Tenant};
use sql::SqlBackend;

/// Durable Object namespace binding (one object per tenant namespace).
const MEMORY_BINDING: &str = "MEMORY";
/// Optional KV binding that receives published snapshots.
const SNAPSHOTS_BINDING: &str = "SNAPSHOTS";
/// Carries the explicit namespace from the front Worker to the object.
const NAMESPACE_HEADER: &str = "x-edgemem-namespace";
/// The tenant of requests that name none (AMS's default).
const DEFAULT_NAMESPACE: &str = "default";
/// Carries the id of the key a request was made with, for the object's log.
const KEY_ID_HEADER: &str = "x-edgemem-key-id";
/// Tells the object that the front honoured local dev mode for this request.
const DEV_HEADER: &str = "x-edgemem-dev";
/// The privacy key of local dev mode when none is set (see `privacy_key`).
const DEV_PRIVACY_KEY: &str = "edgemem local dev mode: a public, worthless privacy key";

type WResult<T> = worker::Result<T>;

/// What a request cost: the SQL rows its tenant object read and wrote (see
/// [`sql::Meter`]), the calls that object made to others (its stash), that
/// isolate's wasm memory, and the Durable Object calls the front made.
const METER_HEADER: &str = "x-edgemem-meter";

thread_local! {
    /// Durable Object calls made by this isolate, for the meter.
    static OBJECT_CALLS: Cell<u64> = const { Cell::new(0) };
}

/// The stub of the object named `name`, for a call the front makes (each
/// is counted: a request's meter shows the front's Durable Object calls;
/// every caller fetches right after).
fn object_stub(env: &Env, name: &str) -> WResult<worker::Stub> {
    OBJECT_CALLS.with(|c| c.set(c.get().saturating_add(1)));
    env.durable_object(MEMORY_BINDING)?.id_from_name(name)?.get_stub()
}

/// Bytes of this isolate's wasm memory: its high-water mark (wasm memory
/// never shrinks), shared by every object the isolate runs.
fn wasm_memory_bytes() -> u64 {
    #[cfg(target_arch = "wasm32")]
    let pages = core::arch::wasm32::memory_size::<0>();
    #[cfg(not(target_arch = "wasm32"))]
    let pages = 0usize;
    pages as u64 * 65_536
}

/// Adds the front's Durable Object calls and `shard_moved` retries to the
/// meter header (after what the tenant object reported), exact when
/// requests do not overlap in the isolate.
fn with_object_calls(resp: Response, calls: u64, retries: u64) -> WResult<Response> {
    if resp.status_code() == 101 {
        return Ok(resp);
    }
    let headers = Headers::new();
    for (k, v) in resp.headers() {
        headers.set(&k, &v)?;
    }
    let meter = match resp.headers().get(METER_HEADER)? {
        Some(m) => format!("{m}; do_calls={calls}; shard_retries={retries}"),
        None => format!("do_calls={calls}; shard_retries={retries}"),
    };
    headers.set(METER_HEADER, &meter)?;
    Ok(resp.with_headers(headers))
}

/// What one object spent on a request, as `X-Edgemem-Meter` says it.
fn meter_line(spent: &sql::Reading) -> String {
    format!("rows_read={}; rows_written={}; sql_statements={}; object_calls={}; wasm_memory_bytes={}", spent.rows_read, spent.rows_written, spent.statements, spent.object_calls, wasm_memory_bytes())
}

/// A JSON response; a body the API already wrote as bytes (a prompt) is
/// handed over as it is, never parsed or re-serialized here.
fn json_response(r: api::Response) -> WResult<Response> {
    let status = r.status;
    let content_type = r.content_type.unwrap_or("application/json");
    let body = r.into_bytes().map_err(|e| worker::Error::RustError(e.to_string()))?;
    let headers = Headers::new();
    headers.set("content-type", content_type)?;
    headers.set("cache-control", "no-store")?;
    Ok(Response::from_bytes(body)?.with_status(status).with_headers(headers))
}

/// Errors whose detail may name storage keys or internals: the answer says
/// only what kind of failure it was and a reference to find the detail in
/// the Worker's log.
fn is_internal(code: &str) -> bool {
    matches!(code, "storage_error" | "internal" | "snapshot_corrupt" | "log_corrupt" | "store_unsuitable" | "schema_version_unsupported")
}

/// Replaces an internal error's detail with a reference to the log.
fn scrub(r: &mut api::Response) {
    let code = r.body["code"].as_str().unwrap_or_default().to_owned();
    if r.status >= 500 && is_internal(&code) {
        let reference = crate::core::auth::hex(&random_bits()[..6]);
        worker::console_error!("edgemem error {reference} ({code}): {}", r.body["detail"].as_str().unwrap_or_default());
        r.body = serde_json::json!({ "detail": format!("{} (reference {reference} in the Worker's log)", code.replace('_', " ")), "code": code });
    }
}

fn error_response(e: &Error) -> WResult<Response> {
    let mut r = api::Response::error(e);
    scrub(&mut r);
    let mut resp = json_response(r)?;
    if let Error::RateLimited { retry_after_ms } = e {
        resp.headers_mut().set("retry-after", &retry_after_ms.div_ceil(1000).max(1).to_string())?;
    }
    Ok(resp)
}

fn now_ms() -> Millis {
    js_sys::Date::now().max(0.0) as Millis
}

fn random_bits() -> [u8; 10] {
    let mut r = [0u8; 10];
    if getrandom::getrandom(&mut r).is_err() {
        r[..8].copy_from_slice(&js_sys::Date::now().to_bits().to_le_bytes());
    }
    r
}

fn env_string(env: &Env, name: &str) -> Option<String> {
    env.secret(name).ok().map(|s| s.to_string()).or_else(|| env.var(name).ok().map(|v| v.to_string())).filter(|s| !s.is_empty())
}

/// A numeric Worker var: `default` when unset, refused (as a configuration
/// bug, 500) outside `1..=ceiling`.
fn env_u64(env: &Env, name: &str, default: u64, ceiling: u64) -> Result<u64, Error> {
    match env_string(env, name) {
        None => Ok(default),
        Some(v) => match v.trim().parse::<u64>() {
            Ok(n) if (1..=ceiling).contains(&n) => Ok(n),
            _ => Err(Error::Internal { detail: format!("{name}={v:?} is not 1 to {ceiling}") }),
        },
    }
}

/// Per-tenant quotas from `EDGEMEM_QUOTA_*`, each within its ceiling.
fn quotas(env: &Env) -> Result<api::quota::Quotas, Error> {
    let d = api::quota::Quotas::default();
    let c = api::quota::Quotas::CEILINGS;
    Ok(api::quota::Quotas {
        records: env_u64(env, "EDGEMEM_QUOTA_RECORDS", d.records, c.records)?,
        bytes: env_u64(env, "EDGEMEM_QUOTA_BYTES", d.bytes, c.bytes)?,
        ledger_accounts: env_u64(env, "EDGEMEM_QUOTA_LEDGER_ACCOUNTS", d.ledger_accounts, c.ledger_accounts)?,
    })
}

#[event(fetch)]
async fn fetch(mut req: Request, env: Env, _ctx: Context) -> WResult<Response> {
    let origin = front::cors_origin(&req, &env);
    let calls = OBJECT_CALLS.with(Cell::get);
    let retries = shard::RETRIES.with(Cell::get);
    let resp = match front::front(&mut req, &env).await {
        Ok(resp) => resp,
        Err(e) => error_response(&e)?,
    };
    let resp = with_object_calls(resp, OBJECT_CALLS.with(Cell::get).saturating_sub(calls), shard::RETRIES.with(Cell::get).saturating_sub(retries))?;
    front::with_cors(resp, origin.as_deref())
}

/// One tenant's memory. Its store opens on first use; the async mutex makes
/// concurrent first requests share one open.
#[durable_object]
pub struct MemoryObject {
    state: Rc<State>,
    /// Live change-feed subscribers.
    hub: Rc<feed::Hub>,
    env: Env,
    store: Mutex<Option<Tenant>>,
    /// An alarm found the store sealed and no key in memory: the next
    /// keyed request re-arms it.
    wake_due: Cell<bool>,
    /// The API keys, in the key directory's object only.
    keys: auth::KeyDirectory,
    /// The alarm time last set, to avoid rewriting it on every request.
    alarm_at: Cell<Option<Millis>>,
    /// SQL rows read and written by the tenant store since the object started.
    meter: Rc<sql::Meter>,
    /// Set by the store's backend when an erasure failed after wiping the
    /// database: the tenant is dropped and opens again from its stash.
    wiped: Rc<Cell<bool>>,
    /// A shard's copy of its tenant's map (see [`shard::admit`]).
    shard_map: RefCell<Option<crate::core::shard::ShardMap>>,
    /// In a tenant's directory object: one map is created at a time.
    map_lock: Mutex<()>,
    /// Which shard of which tenant this object is, once routed to.
    shard_self: RefCell<Option<shard::ShardSelf>>,
    /// Records inserted from this key on have not been checked for a
    /// bucket this shard does not own ([`shard::hand_over`]).
    hand_over_from: Cell<u64>,
    /// A split's fence on this shard, once read ([`shard::fence::fence`]).
    shard_fence: RefCell<Option<Option<shard::fence::Fence>>>,
    /// The routed writes admitted and not yet answered ([`shard::fence::InFlight`]).
    in_flight: shard::fence::InFlight,
    /// In a tenant's directory object: one split runs at a time.
    split_lock: Mutex<()>,
    /// In a sealed tenant's directory: its key, in memory only, for a
    /// split's calls ([`shard::split::SplitKey`]).
    split_key: shard::split::SplitKey,
    /// When this shard last asked its directory for a split.
    split_asked: Cell<Millis>,
    /// When this shard last told home of a long-term change ([`shard::views`]).
    views_trust: Cell<shard::views::Trust>,
    /// At home: one shard's feed relayed at a time; elsewhere: this
    /// shard's relaying ([`shard::feed`]).
    feed_lock: Mutex<()>,
    feed_relaying: Cell<shard::feed::Relaying>,
}

impl MemoryObject {
    /// The tenant's store, opened (or checked) with the request's keys.
    /// `namespace` names the stash of an erasure (see [`sql`]); without it
    /// (an alarm), an object that might need its stash is `Ok(None)`.
    async fn store(&self, keys: &RequestKeys, rotating: bool, namespace: Option<&str>) -> Result<Option<Rc<DoStore>>, Error> {
        let mut slot = self.store.lock().await;
        if self.wiped.get() {
            *slot = None;
        }
        let rewrote = match slot.as_mut() {
            Some(tenant) => tenant.admit(keys, rotating).await?,
            None => {
                let stash = match namespace {
                    Some(ns) => Some(self.stash(ns)?),
                    None => None,
                };
                let fault = env_string(&self.env, "EDGEMEM_DEV_MODE").as_deref() == Some("1") && env_string(&self.env, "EDGEMEM_TEST_FAULT").as_deref() == Some("after_delete_all");
                let Some(backend) = SqlBackend::open(self.state.storage(), self.meter.clone(), stash, self.wiped.clone(), fault).await? else { return Ok(None) };
                let tenant = Tenant::open(backend, keys, rotating, store_config(&self.env)?).await?;
                tenant.store.set_listener(Some(self.hub.listener()));
                *slot = Some(tenant);
                // An open may have finished a rotation (storage rewritten).
                true
            }
        };
        if rewrote {
            // Rewriting storage drops the alarm: set it again on the next write.
            self.alarm_at.set(None);
        }
        Ok(slot.as_ref().map(|t| t.store.clone()))
    }

    /// The sibling object that holds an erasure's replacement while this
    /// object's storage is rewritten.
    fn stash(&self, namespace: &str) -> Result<sql::Stash, Error> {
        let w = |e: worker::Error| Error::Internal { detail: e.to_string() };
        // Not through `object_stub`: the object's own calls are metered by
        // its meter, the front's by the front.
        let objects = self.env.durable_object(MEMORY_BINDING).map_err(w)?;
        let stub = objects.id_from_name(&format!("__stash/{namespace}")).map_err(w)?.get_stub().map_err(w)?;
        Ok(sql::Stash { stub, meter: self.meter.clone() })
    }

    /// Keeps the Durable Object alarm at the next TTL expiry or background
    /// compaction pass ([`api::next_wake`]).
    async fn schedule(&self, next: Option<Millis>) -> Result<(), Error> {
        if next == self.alarm_at.get() {
            return Ok(());
        }
        let storage = self.state.storage();
        let r = match next {
            Some(at) => storage.set_alarm(worker::ScheduledTime::new(js_sys::Date::new(&(at as f64).into()))).await,
            None => storage.delete_alarm().await,
        };
        r.map_err(|e| Error::storage(format!("alarm: {e}")))?;
        self.alarm_at.set(next);
        Ok(())
    }

    async fn serve(&self, req: &mut Request) -> Result<Response, Error> {
        let w = |e: worker::Error| Error::Internal { detail: e.to_string() };
        let url = req.url().map_err(w)?;
        if let Some(op) = url.path().strip_prefix(auth::KEYS_PATH).and_then(|p| p.strip_prefix('/')) {
            let body = req.bytes().await.map_err(w)?;
            let v = self.keys.serve(&self.state, op, &body).await?;
            return json_response(api::Response { status: 200, body: v, raw: None, content_type: None }).map_err(w);
        }
        if let Some(op) = url.path().strip_prefix(routing::DIRECTORY_PATH).and_then(|p| p.strip_prefix('/')) {
            let body = req.bytes().await.map_err(w)?;
            let v = routing::serve(&self.state, op, &body).await?;
            return json_response(api::Response { status: 200, body: v, raw: None, content_type: None }).map_err(w);
        }
        if let Some(op) = url.path().strip_prefix(mcp::SESSIONS_PATH).and_then(|p| p.strip_prefix('/')) {
            let body = req.bytes().await.map_err(w)?;
            let v = mcp::serve_sessions(&self.state, op, &body).await?;
            return json_response(api::Response { status: 200, body: v, raw: None, content_type: None }).map_err(w);
        }
        if let Some(op) = url.path().strip_prefix(sql::STASH_PATH).and_then(|p| p.strip_prefix('/')) {
            let body = req.bytes().await.map_err(w)?;
            let out = sql::serve_stash(&self.state, op, body).await?;
            return Response::from_bytes(out).map_err(w);
        }
        if let Some(v) = self.serve_directory(url.path(), req).await {
            return json_response(api::Response { status: 200, body: v?, raw: None, content_type: None }).map_err(w);
        }
        // A shard checks what the front routed by before it opens anything.
        let routed = shard::Routed::from_request(req)?;
        // Counted before the fence check, so a fence set while this request
        // is anywhere past it waits for its answer.
        let admitted = routed.as_ref().and_then(|r| self.in_flight.begin(r));
        if let Some(r) = &routed {
            shard::admit(&self.env, &self.state, &self.shard_fence, &self.shard_map, r).await?;
            let me = shard::ShardSelf { tenant: r.tenant.clone(), shard: r.shard, namespace: req.headers().get(NAMESPACE_HEADER).map_err(w)?, dev: req.headers().get(DEV_HEADER).map_err(w)?.as_deref() == Some("1") };
            shard::remember_self(&self.state, &self.shard_self, me).await?;
            if let Some(v) = self.serve_import_stage(&url, req).await {
                return json_response(api::Response { status: 200, body: v?, raw: None, content_type: None }).map_err(w);
            }
            if url.path() == shard::views::RESET_PATH {
                self.views_trust.set(Default::default());
                return json_response(api::Response { status: 200, body: serde_json::json!({}), raw: None, content_type: None }).map_err(w);
            }
        } else if shard::internal(&url) {
            return Err(Error::not_found("route", url.path()));
        }
        let before = self.meter.read();
        let method = req.method();
        let keys = RequestKeys::from(req)?;
        let rotating = method == Method::Post && url.path() == crypt::ROTATE_PATH;
        if rotating && !keys.has_new() {
            return Err(Error::invalid("x-edgemem-new-encryption-key", "a rotation carries the new key"));
        }
        let namespace = req.headers().get(NAMESPACE_HEADER).map_err(w)?;
        let store = self.store(&keys, rotating, Some(namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE))).await?.ok_or_else(|| Error::Internal { detail: "the store did not open".into() })?;
        if self.wake_due.take() {
            self.schedule(api::next_wake(&store, now_ms()).await?).await?;
        }
        if rotating || (method == Method::Get && url.path() == crypt::STATUS_PATH) {
            let slot = self.store.lock().await;
            let body = slot.as_ref().expect("opened above").status(&keys, rotating).await;
            return json_response(api::Response { status: 200, body, raw: None, content_type: None }).map_err(w);
        }
        let dev = req.headers().get(DEV_HEADER).map_err(w)?.as_deref() == Some("1");
        self.privacy_key(&store, namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE), dev)?;
        let actor = req.headers().get(KEY_ID_HEADER).map_err(w)?.unwrap_or_else(|| "operator".to_owned());
        let body = req.bytes().await.map_err(w)?;
        // A sharded import's part, read back from where it was staged.
        let body = if routed.is_some() { self.staged_body(req, body)? } else { body };
        if let (Some(_), Some(step)) = (&routed, url.path().strip_prefix(shard::split::MOVE_PATH)) {
            // No alarm is set here: a new shard must not run background
            // work (extraction, the hand-over) on buckets it does not own
            // yet. Its first routed write after the flip sets one.
            let v = shard::steps::serve_move(&self.state, &store, shard::steps::Held { fence: &self.shard_fence, writes: &self.in_flight, map: &self.shard_map }, step, &body, now_ms()).await?;
            return json_response(api::Response { status: 200, body: v, raw: None, content_type: None }).map_err(w);
        }
        // The headers a call to another of the tenant's objects carries.
        let mut pass: Vec<(String, String)> = Vec::new();
        for name in [NAMESPACE_HEADER, KEY_ID_HEADER, DEV_HEADER, crate::core::auth::ENCRYPTION_KEY_HEADER] {
            if let Some(v) = req.headers().get(name).map_err(w)? {
                pass.push((name.to_owned(), v));
            }
        }
        if routed.is_some() {
            if let Some(v) = self.serve_feed(url.path(), &store, &body).await {
                return json_response(api::Response { status: 200, body: v?, raw: None, content_type: None }).map_err(w);
            }
            if let Some(v) = shard::views::serve(url.path(), &store, &body, now_ms()).await {
                let v = v?;
                // Home, told of a change: its continuous views may be due.
                self.schedule(api::next_wake(&store, now_ms()).await?).await?;
                return json_response(api::Response { status: 200, body: v, raw: None, content_type: None }).map_err(w);
            }
        }
        if let (Some(routed), shard::FANOUT_PATH) = (&routed, url.path()) {
            let node_body: fanout::NodeBody = api::parse_json(&body)?;
            let services = services::WorkerServices { env: &self.env, shards: None };
            let meter = self.meter.clone();
            let count = move || meter.count_call();
            let node = fanout::Node { env: &self.env, store: &store, services: &services, routed, pass: pass.clone(), dev, now: now_ms, calls: &count, tree_calls: Cell::new(0) };
            // Boxed: this (large) future's state stays out of `serve`'s.
            let v = Box::pin(node.serve(node_body)).await?;
            let out = json_response(api::Response { status: 200, body: v, raw: None, content_type: None }).map_err(w)?;
            let spent = self.meter.read().since(before);
            // The root's: every call of the tree that answered it.
            let meter = format!("{}; tree_calls={}", meter_line(&spent), node.tree_calls.get());
            out.headers().set(METER_HEADER, &meter).map_err(w)?;
            return Ok(out);
        }
        if method == Method::Post && url.path() == "/v1/snapshots/publish" {
            return publish::publish(&self.env, &store, namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE)).await;
        }
        let query = api::parse_query(url.query().unwrap_or(""));
        if method == Method::Get && url.path() == "/v1/events" {
            if let Some(r) = routed.as_ref().filter(|r| r.shard == 0) {
                let live = req.headers().get("upgrade").map_err(w)?.is_some() || req.headers().get("accept").map_err(w)?.is_some_and(|a| a.contains("text/event-stream"));
                self.pull_feed(&store, r, pass.clone(), live).await;
            }
            if let Some(live) = self.hub.open(&store, req, &query).await? {
                return Ok(live);
            }
        }
        if method != Method::Get {
            api::quota::check(&store, method.as_ref(), url.path(), &body, &quotas(&self.env)?).await?;
        }
        if admitted.is_some() && dev {
            // A test fault (dev mode): a routed write slow on its way to the
            // state, as a remote embedder makes it.
            if let Some(ms) = env_string(&self.env, "EDGEMEM_TEST_WRITE_PAUSE_MS").and_then(|v| v.parse::<u64>().ok()) {
                worker::Delay::from(std::time::Duration::from_millis(ms.min(limits::SHARD_FENCE_DRAIN_MS * 2))).await;
            }
        }
        let api_req = api::Request { method: method.as_ref(), path: url.path(), query, body: &body };
        let mut rand = random_bits;
        // A sharded tenant's home gathers summary-view runs from its shards.
        let scope = routed.as_ref().filter(|r| r.shard == 0).map(|r| shard::views::Scope { tenant: r.tenant.clone(), headers: pass.clone(), meter: self.meter.clone() });
        let services = services::WorkerServices { env: &self.env, shards: scope };
        // A shard other than home tells home when long-term memory changed.
        let ltm_before = match routed.as_ref().filter(|r| r.shard != 0 && method != Method::Get) {
            Some(_) => Some(store.read(|e| e.summary_views().ltm_version()).await?),
            None => None,
        };
        let mut ctx = Ctx::new(now_ms(), &mut rand, namespace.as_deref(), limits::REQUEST_BODY_BYTES_CEILING, &services);
        ctx.actor = &actor;
        // A sharded tenant's steps that run in the API pipeline.
        let stepped = match &routed {
            Some(_) => shard::serve_step(&store, &mut ctx, &api_req).await,
            None => None,
        };
        let mut resp = match stepped {
            Some(r) => r,
            None => api::handle(&store, &api_req, &mut ctx).await,
        };
        scrub(&mut resp);
        // A consent revoke or a redaction: both erase texts from storage.
        let revoked = resp.status == 200 && resp.body.get("erased").is_some() && (url.path().starts_with("/v1/consent/") || url.path().ends_with("/redact"));
        if revoked {
            // The erasure rewrote storage, which drops a set alarm.
            self.alarm_at.set(None);
            // The right to be forgotten reaches the KV replica too: a
            // published snapshot is replaced (its old generation retired).
            // A sharded tenant's is all shards' state: its front publishes.
            if routed.is_none() {
                publish::republish_if_published(&self.env, &store, namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE)).await?;
            }
        }
        // A read-through GET of a service's state writes too.
        if (method != Method::Get || url.path().starts_with("/v1/services/")) && resp.status == 200 {
            self.schedule(api::next_wake(&store, now_ms()).await?).await?;
        }
        if method == Method::Get && url.path() == "/v1/stats" && resp.status == 200 {
            if let Some(body) = resp.body.as_object_mut() {
                let total = self.meter.read();
                let database_bytes = SqlBackend::database_bytes(&self.state.storage());
                body.insert("storage".into(), serde_json::json!({ "backend": "durable-object-sql", "database_bytes": database_bytes, "rows_read": total.rows_read, "rows_written": total.rows_written, "sql_statements": total.statements }));
            }
        }
        if resp.status == 200 && url.path() == "/v1/import" && req.headers().get(shard::IMPORT_STAGED_HEADER).map_err(w)?.is_some() {
            sql::staged::clear(&self.state, self.meter.clone())?;
        }
        // Applied: a fence no longer waits for it (what follows writes elsewhere).
        drop(admitted);
        if let Some(r) = routed.as_ref().filter(|_| method != Method::Get && resp.status == 200) {
            let keys: Vec<(String, String)> = req.headers().get(crate::core::auth::ENCRYPTION_KEY_HEADER).map_err(w)?.map(|k| (crate::core::auth::ENCRYPTION_KEY_HEADER.to_owned(), k)).into_iter().collect();
            Box::pin(self.after_write(&store, &r.tenant, &keys, pass, ltm_before)).await;
        }
        let out = json_response(resp).map_err(w)?;
        // This request's share, exact when requests do not overlap (they
        // interleave at awaits).
        let spent = self.meter.read().since(before);
        out.headers().set(METER_HEADER, &meter_line(&spent)).map_err(w)?;
        Ok(out)
    }

    /// Derives this tenant's privacy key from `EDGEMEM_PRIVACY_KEY` once (the
    /// object serves one namespace). Without the secret, personal data gets
    /// typed placeholders and user ids are kept as given, except in local
    /// dev mode, which uses a public dev key.
    fn privacy_key(&self, store: &DoStore, namespace: &str, dev: bool) -> Result<(), Error> {
        if store.with_privacy_key(|k| k.is_some()) {
            return Ok(());
        }
        store.set_privacy_key(privacy_key(&self.env, namespace, dev)?);
        Ok(())
    }
}

/// A tenant store's settings from the deployment: `EDGEMEM_VECTOR_QUANTIZATION`
/// (`f32`, the default, or `int8`: a quarter of the bytes per vector, for
/// tenants whose shards must fit a smaller memory budget).
fn store_config(env: &Env) -> Result<crate::store::StoreConfig, Error> {
    let vector_quantization = match env_string(env, "EDGEMEM_VECTOR_QUANTIZATION").as_deref() {
        None | Some("f32") => crate::store::Quantization::None,
        Some("int8") => crate::store::Quantization::Int8,
        Some(other) => return Err(Error::invalid("EDGEMEM_VECTOR_QUANTIZATION", format!("{other:?} is not f32 or int8"))),
    };
    Ok(crate::store::StoreConfig { vector_quantization, ..Default::default() })
}

/// A namespace's privacy key, from `EDGEMEM_PRIVACY_KEY`: none without the
/// secret, except in local dev mode.
fn privacy_key(env: &Env, namespace: &str, dev: bool) -> Result<Option<crate::core::privacy::PseudonymKey>, Error> {
    let secret = match env_string(env, "EDGEMEM_PRIVACY_KEY") {
        Some(secret) => secret,
        // Local development without a key (a harness that sets only
        // EDGEMEM_DEV_MODE) still shows pseudonyms and sealed ids, under
        // a key that is public and so protects nothing: never deployed.
        None if dev => DEV_PRIVACY_KEY.to_owned(),
        None => return Ok(None),
    };
    crate::core::privacy::PseudonymKey::derive(secret.as_bytes(), namespace).map(Some)
}

impl DurableObject for MemoryObject {
    fn new(state: State, env: Env) -> Self {
        let state = Rc::new(state);
        MemoryObject { hub: Rc::new(feed::Hub::new(state.clone())), state, env, store: Mutex::new(None), wake_due: Cell::new(false), keys: auth::KeyDirectory::default(), alarm_at: Cell::new(None), meter: Rc::new(sql::Meter::default()), wiped: Rc::new(Cell::new(false)), shard_map: RefCell::new(None), map_lock: Mutex::new(()), shard_self: RefCell::new(None), hand_over_from: Cell::new(0), shard_fence: RefCell::new(None), in_flight: Default::default(), split_lock: Mutex::new(()), split_key: Default::default(), split_asked: Cell::new(0), views_trust: Cell::new(Default::default()), feed_lock: Mutex::new(()), feed_relaying: Cell::new(Default::default()) }
    }

    async fn fetch(&self, mut req: Request) -> WResult<Response> {
        match self.serve(&mut req).await {
            Ok(r) => Ok(r),
            Err(e) => error_response(&e),
        }
    }

    async fn websocket_message(&self, ws: WebSocket, message: WebSocketIncomingMessage) -> WResult<()> {
        feed::receive(&ws, message);
        Ok(())
    }

    async fn websocket_close(&self, ws: WebSocket, _code: usize, _reason: String, _was_clean: bool) -> WResult<()> {
        // Complete the closing handshake; the socket may already be gone.
        let _ = ws.close(Some(1000), Some("closed"));
        Ok(())
    }

    async fn websocket_error(&self, _ws: WebSocket, _error: worker::Error) -> WResult<()> {
        Ok(())
    }

    async fn alarm(&self) -> WResult<Response> {
        self.wake().await
    }
}
