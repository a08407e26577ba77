//! `/mcp`: the Model Context Protocol over Streamable HTTP (revisions
//! 2025-06-18 and 2025-11-25), around the pure dispatcher in `api::mcp`.
//!
//! - A POST carries one JSON-RPC message and is answered with JSON (the
//!   spec allows it; we never need a server-to-client stream). GET, which
//!   would open one, is 405.
//! - Auth is REST's: the bearer key, its scopes and namespaces. `initialize`
//!   opens a session bound to the key and to one tenant namespace (the
//!   key's default, or `?namespace=`), kept in that tenant's object. Every
//!   later message must carry its `Mcp-Session-Id`; a session of another
//!   key, an expired one or a deleted one is 404, as the spec says.
//! - Each tool call is the REST request it stands for, run through the
//!   front's own pipeline ([`FrontExec`]): the route's scope, the tenancy
//!   check and the id directory apply exactly as over HTTP.

use futures_util::future::LocalBoxFuture;
use serde_json::{json, Value};
use worker::{Env, Headers, Method, Request, RequestInit, Response, State, Url};

use super::front::{dispatch, Forward};
use super::{auth, DEFAULT_NAMESPACE};
use crate::api::mcp::{self as proto, code, Kind};
use crate::api::services::Services;
use crate::api::tools::{exec::into_result, Exec, Failure, ToolCtx};
use crate::api::{self, routes, tenancy};
use crate::core::auth::{check_namespace, Principal};
use crate::core::error::Error;
use crate::core::limits;
use crate::core::time::Millis;
use crate::store::{Backend, KeyRange};

type R<T> = Result<T, Error>;

fn w(e: worker::Error) -> Error {
    Error::Internal { detail: e.to_string() }
}

/// The private path of the session table in a tenant's object.
pub const SESSIONS_PATH: &str = "/_mcp";
const ALLOW: &str = "POST, DELETE, OPTIONS";
const SESSION_HEADER: &str = "mcp-session-id";

/// Tool calls as REST requests through the front's pipeline.
struct FrontExec<'a> {
    env: &'a Env,
    settings: &'a auth::Settings,
    principal: &'a Principal,
    namespace: String,
    /// The request's encryption-key headers, passed on with each call.
    crypt: Vec<(&'static str, String)>,
    now: Millis,
    services: super::services::WorkerServices<'a>,
}

impl Exec for FrontExec<'_> {
    fn call<'a>(&'a mut self, method: &'a str, path: String, query: Vec<(String, String)>, body: Vec<u8>) -> LocalBoxFuture<'a, Result<Value, Failure>> {
        Box::pin(async move {
            let scope = match routes::lookup(method, &path) {
                routes::Match::Found { scope, .. } => scope,
                _ => return Err(Error::not_found("route", path).into()),
            };
            self.principal.require(scope)?;
            let mut url = Url::parse("https://edgemem.internal/").map_err(|e| Error::Internal { detail: e.to_string() })?;
            url.set_path(&path);
            if !query.is_empty() {
                url.query_pairs_mut().extend_pairs(query.iter());
            }
            let method = Method::from(method.to_owned());
            let f = Forward { method, url, query, body, stream: None, bound: Some(self.namespace.clone()), pass: self.crypt.clone() };
            let mut resp = dispatch(self.env, self.settings, self.principal, f, self.now).await?;
            let status = resp.status_code();
            let v: Value = resp.json().await.map_err(|e| Failure::from(Error::Internal { detail: format!("tool answer: {e}") }))?;
            into_result(api::Response { status, body: v, raw: None, content_type: None })
        })
    }

    fn now(&self) -> Millis {
        self.now
    }

    fn services(&self) -> &dyn Services {
        &self.services
    }

    fn new_id(&mut self) -> String {
        crate::core::ids::ulid(self.now, super::random_bits())
    }
}

fn json_rpc(status: u16, body: &Value, session: Option<&str>) -> R<Response> {
    let headers = Headers::new();
    headers.set("content-type", "application/json").map_err(w)?;
    headers.set("cache-control", "no-store").map_err(w)?;
    if let Some(id) = session {
        headers.set(SESSION_HEADER, id).map_err(w)?;
    }
    Ok(Response::from_bytes(body.to_string().into_bytes()).map_err(w)?.with_status(status).with_headers(headers))
}

fn empty(status: u16) -> R<Response> {
    let headers = Headers::new();
    if status == 405 {
        headers.set("allow", ALLOW).map_err(w)?;
    }
    Ok(Response::empty().map_err(w)?.with_status(status).with_headers(headers))
}

/// Whether the browser origin may talk to us: the Worker's own, or one on
/// `EDGEMEM_CORS_ORIGINS`. Requests without `Origin` (not from a browser) pass.
fn origin_ok(req: &Request, env: &Env, url: &Url) -> R<bool> {
    let Some(origin) = req.headers().get("origin").map_err(w)? else { return Ok(true) };
    Ok(origin == url.origin().ascii_serialization() || super::front::cors_origin(req, env).is_some())
}

/// Answers `/mcp`.
pub async fn serve(req: &mut Request, env: &Env) -> R<Response> {
    let url: Url = req.url().map_err(w)?;
    let method = req.method();
    if method == Method::Options {
        let headers = Headers::new();
        headers.set("allow", ALLOW).map_err(w)?;
        headers.set("access-control-allow-methods", ALLOW).map_err(w)?;
        headers.set("access-control-allow-headers", &format!("{}, accept, mcp-session-id, mcp-protocol-version", super::front::CORS_ALLOW_HEADERS)).map_err(w)?;
        headers.set("access-control-expose-headers", "mcp-session-id").map_err(w)?;
        headers.set("access-control-max-age", "600").map_err(w)?;
        return Ok(Response::empty().map_err(w)?.with_status(204).with_headers(headers));
    }
    if !origin_ok(req, env, &url)? {
        return json_rpc(403, &proto::error(Value::Null, code::INVALID_REQUEST, "origin not allowed", None), None);
    }
    if method != Method::Post && method != Method::Delete {
        return empty(405);
    }
    let now = super::now_ms();
    let settings = auth::Settings::from_env(env, &url)?;
    let authorization = req.headers().get("authorization").map_err(w)?;
    let (encryption, crypt) = super::front::encryption_headers(req)?;
    let principal = auth::authenticate(env, &settings, authorization.as_deref(), encryption.as_deref(), now).await?;
    principal.require(crate::core::auth::Scope::Read)?;
    let query = api::parse_query(url.query().unwrap_or(""));
    let named = query.iter().find(|(k, _)| k == "namespace").map(|(_, v)| v.clone());
    let namespace = match named.or_else(|| principal.default_namespace().map(str::to_owned)) {
        Some(ns) => {
            check_namespace(&ns)?;
            ns
        }
        None => DEFAULT_NAMESPACE.to_owned(),
    };
    principal.authorize(&namespace)?;
    let key_id = match &principal {
        Principal::Key { id, .. } => id.clone(),
        Principal::Operator => String::new(),
    };
    let session_header = req.headers().get(SESSION_HEADER).map_err(w)?;

    if method == Method::Delete {
        let Some(id) = session_header else {
            return json_rpc(400, &proto::error(Value::Null, -32000, "Bad Request: Mcp-Session-Id header is required", None), None);
        };
        let v = sessions(env, &namespace, "close", json!({ "id": id, "key": key_id, "now": now })).await?;
        return empty(if v["found"] == true { 204 } else { 404 });
    }

    // POST: one JSON message.
    if let Some(accept) = req.headers().get("accept").map_err(w)? {
        let a = accept.to_ascii_lowercase();
        if !(a.contains("application/json") || a.contains("*/*") || a.contains("application/*")) {
            return json_rpc(406, &proto::error(Value::Null, -32000, "Not Acceptable: the client must accept application/json", None), None);
        }
    }
    let content_type = req.headers().get("content-type").map_err(w)?;
    if !content_type.as_deref().is_some_and(|c| c.to_ascii_lowercase().starts_with("application/json")) {
        return Err(Error::UnsupportedMediaType { content_type: content_type.unwrap_or_default() });
    }
    let cap = limits::MCP_MESSAGE_BYTES_MAX;
    if let Some(len) = req.headers().get("content-length").map_err(w)?.and_then(|l| l.trim().parse::<u64>().ok()) {
        if len > cap as u64 {
            return Err(Error::PayloadTooLarge { what: "MCP message".into(), bytes: len, bytes_max: cap as u64 });
        }
    }
    let body = req.bytes().await.map_err(w)?;
    if body.len() > cap {
        return Err(Error::too_large("MCP message", body.len(), cap));
    }
    tenancy::check_depth(&body)?;
    let msg: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => return json_rpc(400, &proto::error(Value::Null, code::PARSE_ERROR, format!("parse error: {e}"), None), None),
    };
    let kind = proto::classify(&msg);
    if let Kind::Invalid(e) = &kind {
        return json_rpc(400, e, None);
    }
    if let Kind::Request { id, method: "initialize", params } = &kind {
        let requested = params.get("protocolVersion").and_then(Value::as_str);
        let version = proto::negotiate(requested);
        let session = session_id();
        sessions(env, &namespace, "open", json!({ "id": session, "key": key_id, "version": version, "now": now })).await?;
        let result = proto::initialize_result(requested);
        return json_rpc(200, &json!({ "jsonrpc": "2.0", "id": id, "result": result }), Some(&session));
    }
    let Some(session) = session_header else {
        return json_rpc(400, &proto::error(Value::Null, -32000, "Bad Request: Mcp-Session-Id header is required (send initialize first)", None), None);
    };
    let v = sessions(env, &namespace, "touch", json!({ "id": session, "key": key_id, "now": now })).await?;
    if v["found"] != true {
        return json_rpc(404, &proto::error(Value::Null, -32001, "Session not found: initialize again", None), None);
    }
    if let Some(pv) = req.headers().get("mcp-protocol-version").map_err(w)? {
        if !proto::SUPPORTED.contains(&pv.as_str()) {
            return json_rpc(400, &proto::error(Value::Null, -32000, format!("Bad Request: unsupported MCP-Protocol-Version {pv:?}"), None), None);
        }
    }
    if let Kind::Notification { .. } = kind {
        return empty(202);
    }
    let ctx = ToolCtx {
        namespace: Some(namespace.clone()),
        session_id: query.iter().find(|(k, _)| k == "session_id").map(|(_, v)| v.clone()),
        user_id: query.iter().find(|(k, _)| k == "user_id").map(|(_, v)| v.clone()),
        agent_id: query.iter().find(|(k, _)| k == "agent_id").map(|(_, v)| v.clone()),
        result_tokens_max: None,
    };
    let mut exec = FrontExec { env, settings: &settings, principal: &principal, namespace, crypt, now, services: super::services::WorkerServices { env, shards: None } };
    match proto::handle(&mut exec, &ctx, &msg).await {
        Some(mut answer) => {
            // Internal details stay in the log, as for REST.
            if let Some(e) = answer.get_mut("error").filter(|e| e["code"] == code::INTERNAL_ERROR) {
                let mut r = api::Response { status: 500, body: json!({ "detail": e["message"], "code": e["data"]["code"].as_str().unwrap_or("internal") }), raw: None, content_type: None };
                super::scrub(&mut r);
                e["message"] = r.body["detail"].clone();
            }
            json_rpc(200, &answer, None)
        }
        None => empty(202),
    }
}

/// `POST /v1/tools/call` in the Worker: the tool runs as its REST request
/// through the front's pipeline (the DO would skip the id directory).
pub async fn tools_call(env: &Env, settings: &auth::Settings, principal: &Principal, query: &[(String, String)], body: &[u8], crypt: Vec<(&'static str, String)>, now: Millis) -> R<Response> {
    let call: crate::api::tools::Call = api::parse_json(body)?;
    let (name, arguments, mut ctx) = call.split();
    let named = query.iter().find(|(k, _)| k == "namespace").map(|(_, v)| v.clone());
    let namespace = match (named, ctx.namespace.clone()) {
        (Some(a), Some(b)) if a != b => return Err(Error::NamespaceForbidden { namespace: b }),
        (a, b) => a.or(b).or_else(|| principal.default_namespace().map(str::to_owned)).unwrap_or_else(|| DEFAULT_NAMESPACE.to_owned()),
    };
    check_namespace(&namespace)?;
    principal.authorize(&namespace)?;
    ctx.namespace = Some(namespace.clone());
    let mut exec = FrontExec { env, settings, principal, namespace, crypt, now, services: super::services::WorkerServices { env, shards: None } };
    let r = match crate::api::tools::resolve(&mut exec, &ctx, &name, arguments).await {
        Ok(v) => api::Response { status: 200, body: json!({ "result": v }), raw: None, content_type: None },
        Err(f) => {
            let mut r = f.response();
            super::scrub(&mut r);
            r
        }
    };
    super::json_response(r).map_err(w)
}

/// A new session id: 128 random bits, hex (visible ASCII, as the spec asks).
fn session_id() -> String {
    let mut b = [0u8; 16];
    b[..10].copy_from_slice(&super::random_bits());
    b[10..].copy_from_slice(&super::random_bits()[..6]);
    crate::core::auth::hex(&b)
}

/// Calls the session table in the tenant's object.
async fn sessions(env: &Env, namespace: &str, op: &str, body: Value) -> R<Value> {
    let mut init = RequestInit::new();
    init.with_method(Method::Post).with_body(Some(body.to_string().into()));
    let req = Request::new_with_init(&format!("https://tenant.local{SESSIONS_PATH}/{op}"), &init).map_err(w)?;
    let stub = super::object_stub(env, namespace).map_err(w)?;
    let mut resp = stub.fetch_with_request(req).await.map_err(w)?;
    resp.json::<Value>().await.map_err(w)
}

#[derive(serde::Deserialize)]
struct SessionOp {
    id: String,
    key: String,
    #[serde(default)]
    version: Option<String>,
    now: Millis,
}

/// The object's side: `open`, `touch` and `close` sessions under `mcp/`,
/// beside the store's keys. A session answers only to the key that opened
/// it, and ends after `MCP_SESSION_IDLE_SECONDS` unused; past
/// `MCP_SESSIONS_MAX` the least recently used is dropped.
pub async fn serve_sessions(state: &State, op: &str, body: &[u8]) -> R<Value> {
    let b: SessionOp = api::parse_json(body)?;
    if b.id.is_empty() || b.id.len() > 64 || !b.id.bytes().all(|c| c.is_ascii_hexdigit()) {
        return Ok(json!({ "found": false }));
    }
    let storage = super::backend::DoBackend { storage: state.storage() };
    let key = format!("mcp/{}", b.id);
    let idle_ms = limits::MCP_SESSION_IDLE_SECONDS * 1000;
    let record = |version: &str, seen: Millis| json!({ "key": b.key, "version": version, "seen": seen }).to_string().into_bytes();
    match op {
        "open" => {
            let range = KeyRange { prefix: "mcp/", start: "", end: None, limit: limits::MCP_SESSIONS_MAX + 1 };
            let all = storage.get_range(range).await?;
            if all.len() >= limits::MCP_SESSIONS_MAX {
                let seen = |v: &[u8]| serde_json::from_slice::<Value>(v).ok().and_then(|v| v["seen"].as_u64()).unwrap_or(0);
                let mut by_age: Vec<(u64, String)> = all.iter().map(|(k, v)| (seen(v), k.clone())).collect();
                by_age.sort();
                let drop: Vec<String> = by_age.into_iter().take(all.len() + 1 - limits::MCP_SESSIONS_MAX).map(|(_, k)| k).collect();
                storage.delete(&drop).await?;
            }
            storage.put(&key, record(b.version.as_deref().unwrap_or(proto::SUPPORTED[0]), b.now)).await?;
            Ok(json!({ "found": true }))
        }
        "touch" | "close" => {
            let Some(raw) = storage.get(&key).await? else { return Ok(json!({ "found": false })) };
            let v: Value = serde_json::from_slice(&raw).unwrap_or(Value::Null);
            let seen = v["seen"].as_u64().unwrap_or(0);
            if v["key"].as_str() != Some(b.key.as_str()) {
                return Ok(json!({ "found": false }));
            }
            if seen.saturating_add(idle_ms) < b.now || op == "close" {
                storage.delete(&[key]).await?;
                return Ok(json!({ "found": op == "close" && seen.saturating_add(idle_ms) >= b.now }));
            }
            // Bump the idle clock at most once a minute: reads stay reads.
            if b.now.saturating_sub(seen) > 60_000 {
                storage.put(&key, record(v["version"].as_str().unwrap_or(proto::SUPPORTED[0]), b.now)).await?;
            }
            Ok(json!({ "found": true, "version": v["version"] }))
        }
        other => Err(Error::not_found("route", other)),
    }
}
