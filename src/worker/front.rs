//! The front Worker: every `/v1/` request passes here, in this order:
//! route table (404, 405 with `Allow`), authentication (401, 503
//! `auth_not_configured`, 429 with `Retry-After`), scope (403), media type
//! (415), body size (413, before reading when the length is declared) and
//! depth, then the tenant: every namespace the request names must be one
//! the key covers (403 `namespace_forbidden`), and a memory id of another
//! tenant is 404. Only then is the tenant's Durable Object asked.

use serde_json::Value;
use worker::{Env, Headers, Method, Request, RequestInit, Response, Url};

use super::{auth, budget, routing, shard, DEFAULT_NAMESPACE, NAMESPACE_HEADER};
use crate::api::{self, routes, tenancy};
use crate::core::auth::{check_namespace, encryption_key_id, parse_encryption_key, Principal, ENCRYPTION_KEY_HEADER, NEW_ENCRYPTION_KEY_HEADER, PREVIOUS_ENCRYPTION_KEY_HEADER};
use crate::core::error::Error;
use crate::core::ids::ulid;
use crate::core::limits;
use crate::core::time::Millis;

type R<T> = Result<T, Error>;

fn w(e: worker::Error) -> Error {
    Error::Internal { detail: e.to_string() }
}

/// The request-body cap: `EDGEMEM_BODY_BYTES_MAX`, or the default.
fn body_bytes_max(env: &Env) -> R<usize> {
    super::env_u64(env, "EDGEMEM_BODY_BYTES_MAX", limits::REQUEST_BODY_BYTES_DEFAULT as u64, limits::REQUEST_BODY_BYTES_CEILING as u64).map(|n| n as usize)
}

/// The origin to allow, if the request has one on the allow-list
/// (`EDGEMEM_CORS_ORIGINS`, comma-separated; empty: same origin only).
pub fn cors_origin(req: &Request, env: &Env) -> Option<String> {
    let origin = req.headers().get("origin").ok()??;
    let list = super::env_string(env, "EDGEMEM_CORS_ORIGINS")?;
    list.split(',').map(str::trim).take(limits::CORS_ORIGINS_MAX).any(|o| o == origin || o == "*").then_some(origin)
}

/// Adds the CORS headers of an allowed origin (not to a WebSocket upgrade,
/// whose response cannot be rebuilt).
pub fn with_cors(resp: Response, origin: Option<&str>) -> worker::Result<Response> {
    let Some(origin) = origin else { return Ok(resp) };
    if resp.status_code() == 101 {
        return Ok(resp);
    }
    let headers = Headers::new();
    for (k, v) in resp.headers() {
        headers.set(&k, &v)?;
    }
    headers.set("access-control-allow-origin", origin)?;
    headers.append("vary", "Origin")?;
    headers.set("access-control-expose-headers", "retry-after, allow, x-edgemem-meter")?;
    Ok(resp.with_headers(headers))
}

fn empty(status: u16, headers: Headers) -> R<Response> {
    Ok(Response::empty().map_err(w)?.with_status(status).with_headers(headers))
}

/// Assigns an id to each memory of a create that has none, so that the
/// directory can record the ids before the tenant's write.
fn assign_ids(body: &[u8], now: Millis) -> R<(Vec<u8>, Vec<String>)> {
    let mut v: Value = api::parse_json(body)?;
    let mut ids = Vec::new();
    if let Some(list) = v.get_mut("memories").and_then(Value::as_array_mut) {
        for m in list.iter_mut().filter(|m| m.is_object()) {
            if m.get("id").is_none_or(Value::is_null) {
                m["id"] = Value::String(ulid(now, super::random_bits()));
            }
            if let Some(id) = m["id"].as_str() {
                ids.push(id.to_owned());
            }
        }
    }
    let bytes = serde_json::to_vec(&v).map_err(|e| Error::Internal { detail: e.to_string() })?;
    Ok((bytes, ids))
}

/// Header names and values passed on to the tenant's object.
type Passed = Vec<(&'static str, String)>;

/// The encryption-key headers a request carries, checked (base64url of 32
/// bytes each), with the id of its current key. They go on to the tenant's
/// object and nowhere else; nothing logs them.
pub(super) fn encryption_headers(req: &Request) -> R<(Option<String>, Passed)> {
    let (mut id, mut pass) = (None, Vec::new());
    // A browser WebSocket cannot send headers: its key may come as an
    // `edgemem-key.<key>` subprotocol beside `edgemem` (never echoed back).
    let from_protocol = match req.headers().get("sec-websocket-protocol").map_err(w)? {
        Some(p) if p.split(',').any(|x| x.trim() == auth::WS_PROTOCOL) => p.split(',').find_map(|x| x.trim().strip_prefix(WS_KEY_PROTOCOL_PREFIX).map(str::to_owned)),
        _ => None,
    };
    for name in [ENCRYPTION_KEY_HEADER, NEW_ENCRYPTION_KEY_HEADER, PREVIOUS_ENCRYPTION_KEY_HEADER] {
        let header = req.headers().get(name).map_err(w)?;
        let value = if name == ENCRYPTION_KEY_HEADER { header.or_else(|| from_protocol.clone()) } else { header };
        if let Some(v) = value {
            let raw = parse_encryption_key(&v).map_err(|e| e.renamed(name))?;
            if name == ENCRYPTION_KEY_HEADER {
                id = Some(encryption_key_id(&raw));
            }
            pass.push((name, v));
        }
    }
    Ok((id, pass))
}

/// The subprotocol prefix a browser WebSocket carries its encryption key in.
pub(super) const WS_KEY_PROTOCOL_PREFIX: &str = "edgemem-key.";

/// Headers a browser may send cross-origin.
pub(super) const CORS_ALLOW_HEADERS: &str = "authorization, content-type, last-event-id, x-edgemem-encryption-key, x-edgemem-new-encryption-key, x-edgemem-previous-encryption-key";

pub async fn front(req: &mut Request, env: &Env) -> R<Response> {
    let url: Url = req.url().map_err(w)?;
    let path = url.path().to_owned();
    let method = req.method();
    if path == "/mcp" {
        return super::mcp::serve(req, env).await;
    }
    if !path.starts_with("/v1/") {
        return Err(Error::not_found("route", path));
    }
    let scope = match routes::lookup(method.as_ref(), &path) {
        routes::Match::Found { scope, .. } => scope,
        routes::Match::MethodNotAllowed { allow } => {
            let headers = Headers::new();
            headers.set("allow", &allow).map_err(w)?;
            if method == Method::Options {
                // A CORS preflight (the allowed origin is added by the caller).
                headers.set("access-control-allow-methods", &allow).map_err(w)?;
                headers.set("access-control-allow-headers", CORS_ALLOW_HEADERS).map_err(w)?;
                headers.set("access-control-max-age", "600").map_err(w)?;
                return empty(204, headers);
            }
            let e = Error::MethodNotAllowed { method: method.to_string() };
            return Ok(super::error_response(&e).map_err(w)?.with_headers(headers_with_json(&headers)?));
        }
        routes::Match::NotFound => return Err(Error::not_found("route", path)),
    };
    if path == "/v1/health" {
        let body = serde_json::json!({ "now": super::now_ms(), "version": api::VERSION });
        return super::json_response(api::Response { status: 200, body, raw: None, content_type: None }).map_err(w);
    }

    let now = super::now_ms();
    let settings = auth::Settings::from_env(env, &url)?;
    let mut authorization = req.headers().get("authorization").map_err(w)?;
    if authorization.is_none() {
        if let Some(p) = req.headers().get("sec-websocket-protocol").map_err(w)? {
            authorization = auth::bearer_from_protocols(&p);
        }
    }
    let (encryption, crypt_headers) = encryption_headers(req)?;
    let principal = auth::authenticate(env, &settings, authorization.as_deref(), encryption.as_deref(), now).await?;
    principal.require(scope)?;

    // Refuse oversized bodies before reading them when the length is declared,
    // and after reading when it is not.
    let content_type = req.headers().get("content-type").map_err(w)?;
    // A sharded deployment's import is read as it streams to the shards,
    // past what one body read whole may hold.
    let streamed = method == Method::Post && path == "/v1/import" && super::shard::initial_shards(env)?.is_some();
    let cap = if streamed { limits::SHARD_IMPORT_BYTES_MAX } else { api::body_bytes_max(url.path(), body_bytes_max(env)?) };
    if let Some(len) = req.headers().get("content-length").map_err(w)? {
        match len.trim().parse::<u64>() {
            Ok(n) if n > cap as u64 => return Err(Error::PayloadTooLarge { what: "request body".into(), bytes: n, bytes_max: cap as u64 }),
            Ok(n) => tenancy::check_content_type(content_type.as_deref(), n as usize)?,
            Err(_) => return Err(Error::invalid("content-length", "not a number")),
        }
    }
    let (body, stream) = if streamed {
        tenancy::check_content_type(content_type.as_deref(), 1)?;
        (Vec::new(), Some(req.stream().map_err(w)?))
    } else {
        (req.bytes().await.map_err(w)?, None)
    };
    if body.len() > cap {
        return Err(Error::too_large("request body", body.len(), cap));
    }
    tenancy::check_content_type(content_type.as_deref(), body.len())?;
    tenancy::check_depth(&body)?;
    let query = api::parse_query(url.query().unwrap_or(""));

    if path.starts_with("/v1/admin/shards") {
        let ask = super::shard::AdminAsk { method: method.as_ref(), path: &path, query: &query, body: &body, key: super::crypt::key_in(&crypt_headers) };
        let v = super::shard::admin(env, settings.dev, &principal, ask).await?;
        return super::json_response(api::Response { status: 200, body: v, raw: None, content_type: None }).map_err(w);
    }
    if path.starts_with("/v1/admin/") {
        let v = auth::admin_route(env, &principal, method.as_ref(), &path, &query, &body, encryption.as_deref(), now).await?;
        return super::json_response(api::Response { status: 200, body: v, raw: None, content_type: None }).map_err(w);
    }
    if path.starts_with("/v1/budget/") {
        let r = budget::route(env, method.as_ref(), &path, &body).await?;
        return super::json_response(r).map_err(w);
    }

    if path == "/v1/tools/call" && method == Method::Post {
        return super::mcp::tools_call(env, &settings, &principal, &query, &body, crypt_headers, now).await;
    }
    // The change feed follows live over a WebSocket or an event stream.
    let mut pass: Vec<(&'static str, String)> = crypt_headers;
    for name in ["upgrade", "accept", "last-event-id"] {
        if let Some(v) = req.headers().get(name).map_err(w)? {
            pass.push((name, v));
        }
    }
    // Only the protocol name goes on, never a key offered beside it.
    if req.headers().get("sec-websocket-protocol").map_err(w)?.is_some_and(|p| p.split(',').any(|x| x.trim() == auth::WS_PROTOCOL)) {
        pass.push(("sec-websocket-protocol", auth::WS_PROTOCOL.to_owned()));
    }
    let rotation = (path == "/v1/encryption/rotate").then(|| pass.iter().find(|(n, _)| *n == NEW_ENCRYPTION_KEY_HEADER).map(|(_, v)| v.clone())).flatten();
    let resp = dispatch(env, &settings, &principal, Forward { method, url, query, body, stream, bound: None, pass }, now).await?;
    // The tenant now answers to the new key only: so do the API keys bound
    // to the old one. A crash before this line is healed by the same
    // request again (the rotation itself is then a no-op).
    if let (Some(old), Some(new), 200) = (encryption, rotation, resp.status_code()) {
        auth::rebind(env, &old, &encryption_key_id(&parse_encryption_key(&new)?)).await?;
    }
    Ok(resp)
}

/// One API request past authentication, scope and the body checks, on its
/// way to a tenant.
pub(super) struct Forward {
    pub method: Method,
    /// The request URL (its path and query are what the object sees).
    pub url: Url,
    pub query: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The body left unread, as it comes (a sharded deployment's import);
    /// `body` is then empty.
    pub stream: Option<worker::ByteStream>,
    /// A namespace fixed by the caller (an MCP session's): the request goes
    /// there, and naming another is refused.
    pub bound: Option<String>,
    /// Headers passed on to the object.
    pub pass: Vec<(&'static str, String)>,
}

/// The tenant part of the pipeline: every namespace the request names must
/// be one the key covers, by-id requests follow the directory, creates
/// register their ids first; then the tenant's Durable Object answers.
pub(super) async fn dispatch(env: &Env, settings: &auth::Settings, principal: &Principal, f: Forward, now: Millis) -> R<Response> {
    let Forward { method, url, query, mut body, stream, bound, pass } = f;
    let path = url.path().to_owned();
    let named = tenancy::one_namespace(&query, &body)?;
    if let (Some(b), Some(n)) = (&bound, &named) {
        if b != n {
            return Err(Error::NamespaceForbidden { namespace: n.clone() });
        }
    }
    let named = bound.or(named);
    if let Some(ns) = &named {
        check_namespace(ns)?;
        principal.authorize(ns)?;
    }
    let mut namespace = named.or_else(|| principal.default_namespace().map(str::to_owned));
    let by_id = tenancy::ids_needing_lookup(method.as_ref(), &path, &query);
    // (namespace, entry time) of the directory entry a by-id request followed.
    let mut followed: Option<(String, u64)> = None;
    if namespace.is_none() && !by_id.is_empty() {
        let found = routing::lookup(env, &by_id, true).await?;
        let mut spaces: Vec<(String, u64)> = found.into_values().flatten().filter(|e| principal.covers(&e.namespace)).map(|e| (e.namespace, e.at)).collect();
        spaces.sort();
        spaces.dedup_by(|a, b| a.0 == b.0);
        match spaces.as_slice() {
            [] if !principal.covers(DEFAULT_NAMESPACE) => {
                // Another tenant's id, or none at all: the same answer.
                return Err(Error::not_found("memory", by_id[0].as_str()));
            }
            [] => {}
            [one] => {
                namespace = Some(one.0.clone());
                followed = Some(one.clone());
            }
            _ => return Err(Error::invalid("memory_ids", "the ids live in different namespaces; pass ?namespace=")),
        }
    }
    let object_name = namespace.clone().unwrap_or_else(|| DEFAULT_NAMESPACE.to_owned());
    principal.authorize(&object_name)?;

    // The directory learns a create's ids before the tenant writes them.
    let ltm = path.trim_end_matches('/') == "/v1/long-term-memory";
    if ltm && method == Method::Post && object_name != DEFAULT_NAMESPACE {
        let (rewritten, ids) = assign_ids(&body, now)?;
        if !ids.is_empty() {
            // A sharded tenant's entries name each record's bucket.
            let buckets = match shard::initial_shards(env)? {
                Some(_) => Some(shard::create_buckets(&rewritten, super::privacy_key(env, &object_name, settings.dev)?.as_ref())?),
                None => None,
            };
            routing::register(env, &object_name, &ids, buckets.as_deref().filter(|b| b.len() == ids.len()), now).await?;
        }
        fault(env, settings, "after_directory_register")?;
        body = rewritten;
    }

    // An import's records are found by id like created ones.
    if path == "/v1/import" && method == Method::Post && object_name != DEFAULT_NAMESPACE {
        // A sharded tenant's entries name each record's bucket, as a create's do.
        let key = match shard::initial_shards(env)? {
            Some(_) => Some(super::privacy_key(env, &object_name, settings.dev)?),
            None => None,
        };
        for chunk in tenancy::imported_records(&body).chunks(limits::LTM_CREATE_BATCH_MAX) {
            let ids: Vec<String> = chunk.iter().map(|(id, _)| id.clone()).collect();
            let buckets: Option<Vec<_>> = key.as_ref().map(|k| chunk.iter().map(|(id, r)| shard::memory_bucket(r, id, k.as_ref())).collect());
            routing::register(env, &object_name, &ids, buckets.as_deref(), now).await?;
        }
    }

    let mut base: Vec<(String, String)> = Vec::new();
    if let Some(ns) = &namespace {
        base.push((NAMESPACE_HEADER.to_owned(), ns.clone()));
    }
    if let Principal::Key { id, .. } = &principal {
        base.push((super::KEY_ID_HEADER.to_owned(), id.clone()));
    }
    // Built here, never copied from the client: dev mode as honoured (loopback only).
    if settings.dev {
        base.push((super::DEV_HEADER.to_owned(), "1".to_owned()));
    }
    base.extend(pass.iter().map(|(n, v)| ((*n).to_owned(), v.clone())));
    let resp = match shard::initial_shards(env)? {
        // Sharding is a deployment setting: unset, a tenant is one object.
        None => {
            let headers = Headers::new();
            for (name, v) in &base {
                headers.set(name, v).map_err(w)?;
            }
            let mut init = RequestInit::new();
            init.with_method(method.clone()).with_headers(headers);
            if !body.is_empty() {
                init.with_body(Some(js_sys::Uint8Array::from(body.as_slice()).into()));
            }
            let inner = Request::new_with_init(url.as_str(), &init).map_err(w)?;
            let stub = super::object_stub(env, &object_name).map_err(w)?;
            stub.fetch_with_request(inner).await.map_err(w)?
        }
        // The change feed may be a WebSocket or a stream: home's response
        // as it is.
        Some(initial) if method == Method::Get && path == "/v1/events" => shard::feed::open(env, &object_name, &base, &url, initial, now).await?,
        Some(initial) => {
            let forward = Forward { method: method.clone(), url: url.clone(), query, body, stream, bound: None, pass: Vec::new() };
            Box::pin(shard::dispatch(shard::Sharded { env, settings, tenant: object_name.clone(), forward, base, initial, now, write: true })).await?
        }
    };
    let status = resp.status_code();
    if ltm && method == Method::Post && status == 200 {
        fault(env, settings, "after_tenant_write")?;
    }
    if ltm && method == Method::Delete && status == 200 && object_name != DEFAULT_NAMESPACE {
        routing::forget(env, &object_name, &by_id).await?;
    }
    // An entry whose tenant has no such record, old enough that no create
    // can still be in flight, is what a crash between the two writes left.
    if let (Some((ns, at)), 404) = (&followed, status) {
        if at.saturating_add(limits::DIRECTORY_ENTRY_GRACE_MS) < now {
            routing::forget(env, ns, &by_id).await?;
        }
    }
    Ok(resp)
}

/// A crash injected at a named point (`EDGEMEM_TEST_FAULT`), honoured in
/// local dev mode only: the tests stop a write between its two steps.
fn fault(env: &Env, settings: &auth::Settings, point: &str) -> R<()> {
    if settings.dev && super::env_string(env, "EDGEMEM_TEST_FAULT").as_deref() == Some(point) {
        return Err(Error::Internal { detail: format!("injected fault at {point}") });
    }
    Ok(())
}

fn headers_with_json(extra: &Headers) -> R<Headers> {
    let h = Headers::new();
    h.set("content-type", "application/json").map_err(w)?;
    h.set("cache-control", "no-store").map_err(w)?;
    for (k, v) in extra {
        h.set(&k, &v).map_err(w)?;
    }
    Ok(h)
}
