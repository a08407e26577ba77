//! The Cloudflare Worker: a thin front that authenticates, caps and routes
//! each request to its tenant's Durable Object, which owns a [`Store`] on its
//! own storage and answers through the pure [`crate::api`].
//!
//! Static files (the demo page) are served by the runtime's asset layer
//! before this code runs; only `/v1/*` reaches it.

mod backend;
mod budget;
mod feed;
mod routing;
mod services;
mod upstream;

use std::cell::Cell;
use std::rc::Rc;

use futures_util::lock::Mutex;
use worker::{durable_object, event, Context, DurableObject, Env, Headers, Method, Request, RequestInit, Response, State, WebSocket, WebSocketIncomingMessage};

use crate::api::{self, Ctx};
use crate::core::error::Error;
use crate::core::limits;
use crate::core::session::validate_id;
use crate::core::time::Millis;
use crate::store::{Store, StoreConfig};
use backend::{DoBackend, KvBackend};

/// Durable Object namespace binding (one object per tenant namespace).
const MEMORY_BINDING: &str = "MEMORY";
/// Optional KV binding that receives published snapshots.
const SNAPSHOTS_BINDING: &str = "SNAPSHOTS";
/// Carries the explicit namespace from the front Worker to the object.
const NAMESPACE_HEADER: &str = "x-edgemem-namespace";
/// The tenant of requests that name none (AMS's default).
const DEFAULT_NAMESPACE: &str = "default";

type WResult<T> = worker::Result<T>;

/// A JSON response; a body the API already wrote as bytes (a prompt) is
/// handed over as it is, never parsed or re-serialized here.
fn json_response(r: api::Response) -> WResult<Response> {
    let status = r.status;
    let body = r.into_bytes().map_err(|e| worker::Error::RustError(e.to_string()))?;
    let headers = Headers::new();
    headers.set("content-type", "application/json")?;
    headers.set("cache-control", "no-store")?;
    Ok(Response::from_bytes(body)?.with_status(status).with_headers(headers))
}

fn error_response(e: &Error) -> WResult<Response> {
    json_response(api::Response::error(e))
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

/// The request-body cap: `EDGEMEM_BODY_BYTES_MAX`, or the default.
fn body_bytes_max(env: &Env) -> Result<usize, Error> {
    match env_string(env, "EDGEMEM_BODY_BYTES_MAX") {
        None => Ok(limits::REQUEST_BODY_BYTES_DEFAULT),
        Some(v) => match v.parse::<usize>() {
            Ok(n) if (1..=limits::REQUEST_BODY_BYTES_CEILING).contains(&n) => Ok(n),
            _ => Err(Error::Internal { detail: format!("EDGEMEM_BODY_BYTES_MAX={v:?} is not 1 to {}", limits::REQUEST_BODY_BYTES_CEILING) }),
        },
    }
}

#[event(fetch)]
async fn fetch(mut req: Request, env: Env, _ctx: Context) -> WResult<Response> {
    match front(&mut req, &env).await {
        Ok(resp) => Ok(resp),
        Err(e) => error_response(&e),
    }
}

async fn front(req: &mut Request, env: &Env) -> Result<Response, Error> {
    let w = |e: worker::Error| Error::Internal { detail: e.to_string() };
    let url = req.url().map_err(w)?;
    let path = url.path().to_owned();
    if !path.starts_with("/v1/") {
        return Err(Error::not_found("route", path));
    }
    let method = req.method();
    if path == "/v1/health" {
        let r = if method == Method::Get {
            api::Response { status: 200, body: serde_json::json!({ "now": now_ms(), "version": api::VERSION }), raw: None }
        } else {
            api::Response::error(&Error::MethodNotAllowed { method: method.to_string() })
        };
        return json_response(r).map_err(w);
    }
    let authorization = req.headers().get("authorization").map_err(w)?;
    api::check_auth(authorization.as_deref(), env_string(env, "EDGEMEM_AUTH_TOKEN").as_deref())?;

    // Refuse oversized bodies before reading them when the length is declared,
    // and after reading when it is not.
    let cap = body_bytes_max(env)?;
    if let Some(len) = req.headers().get("content-length").map_err(w)? {
        match len.trim().parse::<u64>() {
            Ok(n) if n > cap as u64 => return Err(Error::PayloadTooLarge { what: "request body".into(), bytes: n, bytes_max: cap as u64 }),
            Ok(_) => {}
            Err(_) => return Err(Error::invalid("content-length", "not a number")),
        }
    }
    let body = req.bytes().await.map_err(w)?;
    if body.len() > cap {
        return Err(Error::too_large("request body", body.len(), cap));
    }
    if path.starts_with("/v1/budget/") {
        let r = budget::route(env, method.as_ref(), &path, &body).await?;
        return json_response(r).map_err(w);
    }

    // The tenant: `?namespace=`, else where the AMS client put it in the
    // body, else (for by-id long-term routes) the directory.
    let query_ns = url.query_pairs().find(|(k, _)| k == "namespace").map(|(_, v)| v.into_owned());
    let mut namespace = query_ns.or_else(|| routing::body_namespace(&method, &path, &body));
    if namespace.is_none() {
        let pairs = api::parse_query(url.query().unwrap_or(""));
        let ids = routing::ids_needing_lookup(&method, &path, &pairs);
        if !ids.is_empty() {
            let found = routing::lookup(env, &ids).await?;
            let mut spaces: Vec<&String> = found.values().collect();
            spaces.sort();
            spaces.dedup();
            match spaces.as_slice() {
                [] => {}
                [one] => namespace = Some((*one).clone()),
                _ => return Err(Error::invalid("memory_ids", "the ids live in different namespaces; pass ?namespace=")),
            }
        }
    }
    if let Some(ns) = &namespace {
        validate_id("namespace", ns)?;
    }
    let object_name = namespace.clone().unwrap_or_else(|| DEFAULT_NAMESPACE.to_owned());

    let headers = Headers::new();
    if let Some(ns) = &namespace {
        headers.set(NAMESPACE_HEADER, ns).map_err(w)?;
    }
    // The change feed follows live over a WebSocket or an event stream.
    for name in ["upgrade", "accept", "last-event-id"] {
        if let Some(v) = req.headers().get(name).map_err(w)? {
            headers.set(name, &v).map_err(w)?;
        }
    }
    let mut init = RequestInit::new();
    init.with_method(method.clone()).with_headers(headers);
    if !body.is_empty() {
        init.with_body(Some(js_sys::Uint8Array::from(body.as_slice()).into()));
    }
    let inner = Request::new_with_init(url.as_str(), &init).map_err(w)?;
    let stub = env.durable_object(MEMORY_BINDING).map_err(w)?.id_from_name(&object_name).map_err(w)?.get_stub().map_err(w)?;
    let mut resp = stub.fetch_with_request(inner).await.map_err(w)?;
    // Keep the id directory current for memories outside the default tenant.
    let ltm = path.trim_end_matches('/') == "/v1/long-term-memory";
    if ltm && resp.status_code() == 200 && (method == Method::Post || method == Method::Delete) {
        let text = resp.text().await.map_err(w)?;
        if method == Method::Post && object_name != DEFAULT_NAMESPACE {
            let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
            let created: Vec<String> = v["created"].as_array().map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_owned)).collect()).unwrap_or_default();
            if !created.is_empty() {
                routing::register(env, &object_name, &created).await?;
            }
        }
        if method == Method::Delete {
            let pairs = api::parse_query(url.query().unwrap_or(""));
            routing::forget(env, &routing::ids_needing_lookup(&method, &path, &pairs)).await?;
        }
        let r = api::Response { status: 200, body: serde_json::from_str(&text).unwrap_or_default(), raw: None };
        return json_response(r).map_err(w);
    }
    Ok(resp)
}

/// One tenant's memory. Its store opens on first use; the async mutex makes
/// concurrent first requests share one open.
#[durable_object]
pub struct MemoryObject {
    state: Rc<State>,
    /// Live change-feed subscribers.
    hub: Rc<feed::Hub>,
    env: Env,
    store: Mutex<Option<Rc<Store<DoBackend>>>>,
    /// The alarm time last set, to avoid rewriting it on every request.
    alarm_at: Cell<Option<Millis>>,
}

impl MemoryObject {
    async fn store(&self) -> Result<Rc<Store<DoBackend>>, Error> {
        let mut slot = self.store.lock().await;
        if let Some(store) = slot.as_ref() {
            return Ok(store.clone());
        }
        let store = Rc::new(Store::open(DoBackend { storage: self.state.storage() }, StoreConfig::default()).await?);
        store.set_listener(Some(self.hub.listener()));
        *slot = Some(store.clone());
        Ok(store)
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
        if let Some(op) = url.path().strip_prefix(routing::DIRECTORY_PATH).and_then(|p| p.strip_prefix('/')) {
            let body = req.bytes().await.map_err(w)?;
            let v = routing::serve(&self.state, op, &body).await?;
            return json_response(api::Response { status: 200, body: v, raw: None }).map_err(w);
        }
        let store = self.store().await?;
        let method = req.method();
        let namespace = req.headers().get(NAMESPACE_HEADER).map_err(w)?;
        let body = req.bytes().await.map_err(w)?;
        if method == Method::Post && url.path() == "/v1/snapshots/publish" {
            return self.publish(&store, namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE)).await;
        }
        let query = api::parse_query(url.query().unwrap_or(""));
        if method == Method::Get && url.path() == "/v1/events" {
            if let Some(live) = self.hub.open(&store, req, &query).await? {
                return Ok(live);
            }
        }
        let api_req = api::Request { method: method.as_ref(), path: url.path(), query, body: &body };
        let mut rand = random_bits;
        let services = services::WorkerServices { env: &self.env };
        let mut ctx = Ctx::new(now_ms(), &mut rand, namespace.as_deref(), limits::REQUEST_BODY_BYTES_CEILING, &services);
        let resp = api::handle(&store, &api_req, &mut ctx).await;
        // A read-through GET of a service's state writes too.
        if (method != Method::Get || url.path().starts_with("/v1/services/")) && resp.status == 200 {
            self.schedule(api::next_wake(&store, now_ms()).await?).await?;
        }
        json_response(resp).map_err(w)
    }

    /// Publishes this tenant's snapshot to the KV binding, for read-mostly
    /// replicas (`Memory.openPublished` with a `KVStore`).
    async fn publish(&self, store: &Store<DoBackend>, namespace: &str) -> Result<Response, Error> {
        let kv = self
            .env
            .kv(SNAPSHOTS_BINDING)
            .map_err(|_| Error::not_found("binding", SNAPSHOTS_BINDING))?;
        let config = StoreConfig { key_prefix: format!("{namespace}/"), ..StoreConfig::default() };
        let stats = store.publish(&KvBackend { kv }, &config).await?;
        let body = serde_json::json!({ "snapshot_gen": stats.snapshot_gen, "snapshot_bytes": stats.snapshot_bytes, "last_seq": stats.last_seq, "key_prefix": config.key_prefix });
        json_response(api::Response { status: 200, body, raw: None }).map_err(|e| Error::Internal { detail: e.to_string() })
    }
}

impl DurableObject for MemoryObject {
    fn new(state: State, env: Env) -> Self {
        let state = Rc::new(state);
        MemoryObject { hub: Rc::new(feed::Hub::new(state.clone())), state, env, store: Mutex::new(None), alarm_at: Cell::new(None) }
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
        let run = async {
            let store = self.store().await?;
            self.alarm_at.set(None);
            let next = api::wake(&store, now_ms()).await?;
            self.schedule(next).await
        };
        match run.await {
            Ok(()) => Response::ok("expired"),
            Err(e) => Err(worker::Error::RustError(e.to_string())),
        }
    }
}
