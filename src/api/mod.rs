//! The HTTP API, as plain data: a [`Request`] in, a [`Response`] out, over a
//! [`Store`] on any backend.
//!
//! Routes are shaped like Redis Agent Memory Server's REST API so that its
//! clients work unchanged; edgemem's own routes sit beside them. Nothing here
//! knows about the Workers runtime, so every route is tested natively on the
//! in-memory backend; `src/worker` only moves bytes in and out.

pub mod agent_state;
pub mod agents;
pub mod budget;
pub mod decisions;
pub mod episodes;
pub mod export;
pub mod export_stream;
pub mod external_index;
pub mod feed_relay;
pub mod extraction;
pub mod service_cache;
pub mod history;
pub mod ledger;
pub mod longterm;
pub mod mcp;
pub mod moves;
// The OpenAPI document is built natively only (tests/openapi.rs writes it).
#[cfg(not(target_arch = "wasm32"))]
pub mod openapi;
pub mod placement;
pub mod privacy;
pub mod services;
pub mod summary_views;
pub mod quota;
mod request;
pub mod routes;
pub mod schema;
pub mod tenancy;
pub mod tools;
pub mod working_memory;

use serde_json::{json, Value};

use crate::core::budget::Counter;
use crate::core::engine::{Applied, Op};
use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::session::{validate_id, Session};
use crate::core::time::Millis;
use crate::store::{Backend, Store};

pub use request::{from_value, parse_json, parse_query, percent_decode, query_flag, split_target};
use request::segments;

/// Package version, reported by `/v1/health`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// An HTTP request reduced to what the routes need.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    pub method: &'a str,
    /// The path, percent-encoded as received, without the query.
    pub path: &'a str,
    /// Decoded query pairs, in order.
    pub query: Vec<(String, String)>,
    pub body: &'a [u8],
}

/// A JSON response.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    pub status: u16,
    pub body: Value,
    /// The body already written as UTF-8 JSON, straight from the data (a
    /// large answer such as a prompt, built once, never as a `Value`). When
    /// set, it is the body and `body` is `Null`.
    pub raw: Option<Vec<u8>>,
    /// The media type of `raw` when it is not JSON (JSON Lines exports).
    pub content_type: Option<&'static str>,
}

impl Response {
    /// A 200 with a JSON body.
    pub fn ok(body: Value) -> Response {
        Response { status: 200, body, raw: None, content_type: None }
    }

    /// A 200 whose body was written as bytes.
    pub fn ok_bytes(raw: Vec<u8>) -> Response {
        Response { status: 200, body: Value::Null, raw: Some(raw), content_type: None }
    }

    /// The `{"detail", "code"}` body and honest status of an error.
    pub fn error(err: &Error) -> Response {
        Response { status: status_of(err), body: json!({ "detail": err.to_string(), "code": err.code() }), raw: None, content_type: None }
    }

    /// The body as UTF-8 JSON bytes: the written bytes, or the `Value` serialized.
    pub fn into_bytes(self) -> Result<Vec<u8>> {
        match self.raw {
            Some(raw) => Ok(raw),
            None => serde_json::to_vec(&self.body).map_err(|e| Error::Internal { detail: format!("encode response: {e}") }),
        }
    }
}

/// The HTTP status of each error code.
pub fn status_of(err: &Error) -> u16 {
    match err {
        Error::InvalidJson { .. } | Error::InvalidQuery { .. } | Error::UnknownKind { .. } => 400,
        Error::ConsentRequired { .. } => 403,
        Error::SecretDetected { .. } => 422,
        Error::Unauthorized | Error::KeyRequired { .. } => 401,
        Error::DecryptionFailed { .. } => 403,
        Error::NamespaceForbidden { .. } | Error::ScopeForbidden { .. } | Error::QuotaExceeded { .. } => 403,
        Error::RateLimited { .. } => 429,
        Error::UnsupportedMediaType { .. } => 415,
        Error::AuthNotConfigured => 503,
        Error::NotFound { .. } => 404,
        Error::Conflict { .. } | Error::ShardMoved { .. } => 409,
        Error::Rejected { .. } | Error::InvalidVector { .. } => 422,
        Error::HookFailed { .. } | Error::Upstream { .. } => 502,
        Error::UpstreamTimeout { .. } => 504,
        Error::NotSharded { .. } => 501,
        Error::Overloaded { .. } => 503,
        Error::MethodNotAllowed { .. } => 405,
        Error::PayloadTooLarge { .. } => 413,
        Error::InvalidInput { .. } | Error::LimitExceeded { .. } | Error::MigrationFailed { .. } | Error::SchemaVersionUnsupported { input: true, .. } => 422,
        Error::Storage { .. } | Error::EncodingNotLoaded { .. } => 503,
        Error::SnapshotCorrupt { .. }
        | Error::SchemaVersionUnsupported { .. }
        | Error::LogCorrupt { .. }
        | Error::StoreUnsuitable { .. }
        | Error::Internal { .. } => 500,
    }
}

/// Per-request inputs the pure API cannot produce itself.
pub struct Ctx<'a> {
    /// The current time.
    pub now: Millis,
    /// 80 random bits per call, for ULIDs.
    pub random: &'a mut dyn FnMut() -> [u8; 10],
    /// The tenant namespace the request was routed to (`None` = default).
    pub namespace: Option<&'a str>,
    /// The request-body cap in force.
    pub body_bytes_max: usize,
    /// Encodings and the summarizer hook.
    pub services: &'a dyn services::Services,
    /// Caller vectors of a long-term create (one flat array of
    /// `memories × dim`) or search (the query): the JS API passes a
    /// `Float32Array`; HTTP has none, and texts are embedded instead.
    pub vectors: Option<Vec<f32>>,
    /// Who makes the request, as consent records name it: an API key's id,
    /// or `local` in process.
    pub actor: &'a str,
}

impl<'a> Ctx<'a> {
    /// A context with no caller vectors.
    pub fn new(now: Millis, random: &'a mut dyn FnMut() -> [u8; 10], namespace: Option<&'a str>, body_bytes_max: usize, services: &'a dyn services::Services) -> Ctx<'a> {
        Ctx { now, random, namespace, body_bytes_max, services, vectors: None, actor: "local" }
    }
}

/// Answers one request. Never panics; every failure is a typed error body.
pub async fn handle<B: Backend>(store: &Store<B>, req: &Request<'_>, ctx: &mut Ctx<'_>) -> Response {
    match route(store, req, ctx).await {
        Ok(r) => r,
        Err(e) => Response::error(&e),
    }
}

/// The largest body `path` takes when others take `default_max`: an import
/// carries a whole namespace ([`limits::IMPORT_BYTES_MAX`]).
pub fn body_bytes_max(path: &str, default_max: usize) -> usize {
    if path == "/v1/import" {
        limits::IMPORT_BYTES_MAX
    } else {
        default_max
    }
}

/// The one door into the API: every front end (HTTP in the Worker, `call`
/// in the JS API, the tests) routes through here and gets the typed error,
/// which [`handle`] turns into `{"detail", "code"}` for HTTP.
pub async fn route<B: Backend>(store: &Store<B>, req: &Request<'_>, ctx: &mut Ctx<'_>) -> Result<Response> {
    let cap = body_bytes_max(req.path, ctx.body_bytes_max);
    if req.body.len() > cap {
        return Err(Error::too_large("request body", req.body.len(), cap));
    }
    let segs = segments(req.path).ok_or_else(|| Error::not_found("route", req.path))?;
    let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
    let method = req.method;
    match (segs.as_slice(), method) {
        (["health"], "GET") => Ok(Response::ok(json!({ "now": ctx.now, "version": VERSION }))),
        (["stats"], "GET") => stats(store).await.map(Response::ok),
        (["events"], "GET") => events_route(store, req).await.map(Response::ok),
        (["ledger", rest @ ..], _) => ledger::route(store, req, ctx, rest).await,
        (["services", rest @ ..], _) => service_cache::route(store, req, ctx, rest).await.map(Response::ok),
        (["episodes", rest @ ..], _) => {
            let mut v = episodes::route(store, req, ctx, rest).await?;
            store.with_privacy_key(|k| privacy::open_user_ids(&mut v, k));
            Ok(Response::ok(v))
        }
        (["long-term-memory", rest @ ..], _) => longterm::route(store, req, ctx, rest).await.map(Response::ok),
        (["summary-views", rest @ ..], _) => {
            let mut v = summary_views::route(store, req, ctx, rest).await?;
            store.with_privacy_key(|k| privacy::open_user_ids(&mut v, k));
            Ok(Response::ok(v))
        }
        (["tasks", id], "GET") => summary_views::task_route(store, id).await.map(Response::ok),
        (["tasks", _], other) => Err(Error::MethodNotAllowed { method: other.to_owned() }),
        (["working-memory", ""], "GET") => list_sessions_route(store, req, ctx).await,
        (["working-memory", id], _) if !id.is_empty() => match method {
            "GET" => get_session_route(store, req, ctx, id).await,
            "PUT" => {
                let window = history::Window::from_query(req)?;
                let (session, scrubbed) = put_session_raw(store, ctx, id, req.body).await?;
                let mut v = history::after_write(store, ctx.services, &window, session, true, ctx.now).await?;
                privacy::report_into(&mut v, &scrubbed);
                Ok(Response::ok(v))
            }
            // AMS answers 200 whether or not the session existed.
            "DELETE" => delete_session(store, ctx.now, id).await.map(|_| Response::ok(json!({ "status": "ok" }))),
            other => Err(Error::MethodNotAllowed { method: other.to_owned() }),
        },
        (["working-memory", id, "messages"], "POST") => append_messages(store, ctx, id, req.body).await.map(Response::ok),
        (["working-memory", id, "messages"], "GET") => history::to_messages_route(store, req, id, ctx.now).await.map(Response::ok),
        (["working-memory", id, "decisions"], _) => decisions::route(store, req, id, ctx.now).await,
        (["privacy", "policy"], _) => privacy::policy_route(store, req, ctx.now).await.map(Response::ok),
        (["export"], "GET") => export::export(store, req, ctx).await,
        (["import"], "POST") => export::import(store, req.body, ctx).await.map(Response::ok),
        (["export"] | ["import"], other) => Err(Error::MethodNotAllowed { method: other.to_owned() }),
        (["consent", user_id], _) if !user_id.is_empty() => privacy::consent_route(store, req, user_id, ctx.actor, ctx.now).await.map(Response::ok),
        (["working-memory", id, "compact"], "POST") => history::compact_route(store, ctx.services, id, req.body, ctx.now).await.map(Response::ok),
        (["working-memory", id, "archive"], "GET") => history::archive_route(store, req, id, ctx.now).await.map(Response::ok),
        (["working-memory", id, "tool-cache"], _) => agents::tool_cache_route(store, req, id, ctx.now).await.map(Response::ok),
        (["tool-ttls"], _) => agents::tool_ttls_route(store, req, ctx.now).await.map(Response::ok),
        (["agents", agent, "profile", rest @ ..], _) => {
            validate_id("agent_id", agent)?;
            agent_state::profile_route(store, req, ctx.now, agent, rest).await.map(Response::ok)
        }
        (["schemas", rest @ ..], _) => agent_state::schemas_route(store, req, ctx.now, rest).await.map(Response::ok),
        (["working-memory", id, "data", "migrate"], "POST") => agent_state::migrate_session_route(store, req, ctx.now, id).await.map(Response::ok),
        (["agents", agent, rest @ ..], _) => agents::route(store, req, ctx.now, ctx.random, ctx.services, agent, rest).await.map(Response::ok),
        (["prompt"], "POST") => history::prompt_answer(store, ctx.services, parse_json(req.body)?, ctx.now).await,
        (["memory", "prompt"], "POST") => memory_prompt_route(store, ctx, req.body, None).await,
        (["tools", "schemas"], "GET") => {
            let agent = req.param("agent_id").map(str::to_owned);
            let config = match &agent {
                Some(a) => store.read(|e| e.agent(a).cloned()).await?,
                None => None,
            };
            tools::schemas(req.param("format").unwrap_or("openai"), |name| config.as_ref().is_none_or(|c| c.tool_allowed(name))).map(Response::ok)
        }
        (["tools", "call"], "POST") => {
            let call: tools::Call = parse_json(req.body)?;
            let (name, arguments, mut tool_ctx) = call.split();
            // In process, the tenant is the routed namespace whatever the call says.
            if let Some(ns) = ctx.namespace {
                match &tool_ctx.namespace {
                    Some(given) if given != ns => return Err(Error::NamespaceForbidden { namespace: given.clone() }),
                    _ => tool_ctx.namespace = Some(ns.to_owned()),
                }
            }
            let mut exec = tools::StoreExec { store, now: ctx.now, random: &mut *ctx.random, namespace: ctx.namespace, body_bytes_max: ctx.body_bytes_max, services: ctx.services, actor: ctx.actor };
            match tools::resolve(&mut exec, &tool_ctx, &name, arguments).await {
                Ok(v) => Ok(Response::ok(json!({ "result": v }))),
                Err(f) => Err(f.into_error()),
            }
        }
        (["prompt"] | ["memory", "prompt"] | ["tools", "call"] | ["tools", "schemas"] | ["working-memory", _, _], other) => Err(Error::MethodNotAllowed { method: other.to_owned() }),
        (["health"] | ["stats"] | ["working-memory", ..], other) => Err(Error::MethodNotAllowed { method: other.to_owned() }),
        _ => Err(Error::not_found("route", req.path)),
    }
}

async fn list_sessions_route<B: Backend>(store: &Store<B>, req: &Request<'_>, ctx: &Ctx<'_>) -> Result<Response> {
    let limit = req.param_usize("limit", limits::SESSION_LIST_LIMIT_DEFAULT, 1, limits::SESSION_LIST_LIMIT_MAX)?;
    let offset = req.param_usize("offset", 0, 0, limits::SESSIONS_MAX)?;
    list_sessions(store, ctx.now, req.param("user_id"), offset, limit).await.map(Response::ok)
}

async fn get_session_route<B: Backend>(store: &Store<B>, req: &Request<'_>, ctx: &Ctx<'_>, id: &str) -> Result<Response> {
    let recent = match req.param("recent_messages_limit") {
        None => None,
        Some(_) => Some(req.param_usize("recent_messages_limit", 0, 0, limits::SESSION_MESSAGES_MAX)?),
    };
    let window = history::Window::from_query(req)?;
    if window.tokens()?.is_some() {
        validate_id("session_id", id)?;
        agent_state::migrate_session_if_due(store, id, ctx.now).await?;
        let user_id = req.param("user_id");
        let now = ctx.now;
        let s = store
            .read(|e| e.session(id, now).filter(|s| user_id.is_none() || s.user_id.as_deref() == user_id).cloned())
            .await?
            .ok_or_else(|| Error::not_found("session", id))?;
        return history::after_write(store, ctx.services, &window, s, false, ctx.now).await.map(Response::ok);
    }
    match get_session(store, ctx.now, id, req.param("user_id"), recent).await? {
        Some(v) => Ok(Response::ok(v)),
        None => Err(Error::not_found("session", id)),
    }
}

/// `POST /v1/memory/prompt`: the session's turns and, when asked, a
/// long-term search. `found` is that search's memories when a host ran it
/// already (a sharded tenant's, across its shards); the search's body is
/// then not run here.
pub async fn memory_prompt_route<B: Backend>(store: &Store<B>, ctx: &mut Ctx<'_>, body: &[u8], found: Option<Vec<Value>>) -> Result<Response> {
    let body: history::MemoryPromptBody = parse_json(body)?;
    let memories = match (found, &body.long_term_search) {
        (Some(mut found), _) => {
            // As this route's own search answers them: user ids sealed.
            let mut list = Value::Array(std::mem::take(&mut found));
            store.with_privacy_key(|k| privacy::seal_user_ids(&mut list, k));
            list.as_array().cloned().unwrap_or_default()
        }
        (None, None | Some(Value::Null) | Some(Value::Bool(false))) => Vec::new(),
        (None, Some(v)) => {
            let Some(v) = memory_prompt_search(&body.query, v)? else { return Err(Error::Internal { detail: "a search body was expected".into() }) };
            let mut v = v;
            store.with_privacy_key(|k| privacy::seal_user_ids(&mut v, k));
            let sb = longterm::SearchBody::parse(&v)?;
            let found = longterm::search(store, ctx.services, &sb, None, ctx.now).await?;
            found["memories"].as_array().cloned().unwrap_or_default()
        }
    };
    // AMS's line format, ids included so the model can cite and edit them.
    let lines = memories.iter().map(|m| format!("{} (ID: {})", m["text"].as_str().unwrap_or(""), m["id"].as_str().unwrap_or(""))).collect();
    let mut out = history::memory_prompt(store, ctx.services, &body, lines, ctx.now).await?;
    out["long_term_memories"] = Value::Array(memories);
    Ok(Response::ok(out))
}

/// The search a memory prompt's `long_term_search` asks for: `true` searches
/// with defaults, an object is a `SearchRequest` whose text defaults to the
/// query; absent, null or `false`: none.
pub fn memory_prompt_search(query: &str, v: &Value) -> Result<Option<Value>> {
    match v {
        Value::Null | Value::Bool(false) => Ok(None),
        v if !v.is_object() && !v.is_boolean() => Err(Error::invalid("long_term_search", "must be a boolean or a search request object")),
        v => {
            let mut v = if v.is_object() { v.clone() } else { json!({}) };
            if v.get("text").is_none_or(Value::is_null) {
                v["text"] = json!(query);
            }
            Ok(Some(v))
        }
    }
}

/// One page of live session ids, sorted: `{"sessions", "total"}`.
pub async fn list_sessions<B: Backend>(
    store: &Store<B>,
    now: Millis,
    user_id: Option<&str>,
    offset: usize,
    limit: usize,
) -> Result<Value> {
    if limit == 0 || limit > limits::SESSION_LIST_LIMIT_MAX {
        return Err(Error::invalid("limit", format!("must be from 1 to {}", limits::SESSION_LIST_LIMIT_MAX)));
    }
    let page = store.read(|e| e.list_sessions(now, user_id, offset, limit)).await?;
    Ok(json!({ "sessions": page.sessions, "total": page.total }))
}

/// The session in AMS's shape, or `None` when it is missing, expired, or
/// belongs to another `user_id`.
pub async fn get_session<B: Backend>(
    store: &Store<B>,
    now: Millis,
    id: &str,
    user_id: Option<&str>,
    recent_messages_limit: Option<usize>,
) -> Result<Option<Value>> {
    validate_id("session_id", id)?;
    agent_state::migrate_session_if_due(store, id, now).await?;
    store
        .read(|e| {
            e.session(id, now)
                .filter(|s| user_id.is_none() || s.user_id.as_deref() == user_id)
                .map(|s| working_memory::session_json(s, recent_messages_limit))
        })
        .await
}

/// Creates or replaces a session from an AMS `WorkingMemory` JSON body.
pub async fn put_session<B: Backend>(store: &Store<B>, ctx: &mut Ctx<'_>, id: &str, body: &[u8]) -> Result<Value> {
    put_session_raw(store, ctx, id, body).await.map(|(s, scrubbed)| {
        let mut v = working_memory::session_json(&s, None);
        privacy::report_into(&mut v, &scrubbed);
        v
    })
}

async fn put_session_raw<B: Backend>(store: &Store<B>, ctx: &mut Ctx<'_>, id: &str, body: &[u8]) -> Result<(Session, crate::core::privacy::Scrubbed)> {
    validate_id("session_id", id)?;
    let body: working_memory::PutBody = parse_json(body)?;
    let session = working_memory::session_from_put(id, body, ctx.namespace, ctx.now, ctx.random)?;
    match store.apply_reporting(Op::SessionPut { session }, ctx.now).await? {
        (Applied::Session(s), scrubbed) => Ok((s, scrubbed)),
        other => Err(Error::Internal { detail: format!("put returned {other:?}") }),
    }
}

/// Returns the live session, or creates it from the body (same shape as a
/// PUT) when there is none: `{"created": bool, "session": {...}}`.
pub async fn get_or_create_session<B: Backend>(store: &Store<B>, ctx: &mut Ctx<'_>, id: &str, body: &[u8]) -> Result<Value> {
    validate_id("session_id", id)?;
    let body: working_memory::PutBody = parse_json(body)?;
    let session = working_memory::session_from_put(id, body, ctx.namespace, ctx.now, ctx.random)?;
    let now = ctx.now;
    // The common case logs nothing; the op below settles a race atomically.
    if let Some(s) = store.read(|e| e.session(id, now).map(|s| working_memory::session_json(s, None))).await? {
        return Ok(json!({ "created": false, "session": s }));
    }
    match store.apply(Op::SessionCreate { session }, ctx.now).await? {
        Applied::Session(s) => Ok(json!({ "created": true, "session": working_memory::session_json(&s, None) })),
        Applied::Existing(s) => Ok(json!({ "created": false, "session": working_memory::session_json(&s, None) })),
        other => Err(Error::Internal { detail: format!("create returned {other:?}") }),
    }
}

/// Appends `{"messages": [...]}` to an existing session. Answers only what
/// the append added (`working_memory::appended_json`), so a conversation of
/// n turns costs O(n), not O(n²), in answers.
pub async fn append_messages<B: Backend>(store: &Store<B>, ctx: &mut Ctx<'_>, id: &str, body: &[u8]) -> Result<Value> {
    validate_id("session_id", id)?;
    let body: working_memory::AppendBody = parse_json(body)?;
    if body.messages.len() > limits::APPEND_MESSAGES_MAX {
        return Err(Error::LimitExceeded { what: "messages in one append".into(), limit: limits::APPEND_MESSAGES_MAX as u64 });
    }
    let messages = working_memory::messages_from(body.messages, ctx.now, ctx.random)?;
    // Counted before the write, outside the store's lock; each turn keeps
    // its count, so no later prompt tokenizes it again.
    let counted = match body.model_name.as_deref() {
        None => None,
        Some(model) => {
            let counter = services::counter_for(ctx.services, Some(model)).await?;
            let key = counter.cache_key();
            let tokens: Vec<usize> = messages.iter().map(|m| m.tokens.get_or(key, || counter.count(&m.content))).collect();
            Some((tokens, counter.describe()))
        }
    };
    match store.apply_reporting(Op::SessionAppend { session_id: id.to_owned(), messages }, ctx.now).await? {
        (Applied::Appended(a), scrubbed) => {
            let mut v = working_memory::appended_json(&a, counted.as_ref().map(|(t, c)| (t.as_slice(), c.clone())));
            privacy::report_into(&mut v, &scrubbed);
            Ok(v)
        }
        other => Err(Error::Internal { detail: format!("append returned {other:?}") }),
    }
}

/// Deletes a session; `Ok(false)` when there was none (nothing is logged).
pub async fn delete_session<B: Backend>(store: &Store<B>, now: Millis, id: &str) -> Result<bool> {
    validate_id("session_id", id)?;
    if !store.read(|e| e.session(id, now).is_some()).await? {
        return Ok(false);
    }
    store.apply(Op::SessionDelete { session_id: id.to_owned() }, now).await?;
    Ok(true)
}

/// edgemem's `GET /v1/stats`: store counters and the session count,
/// including expired sessions not yet swept.
pub async fn stats<B: Backend>(store: &Store<B>) -> Result<Value> {
    let s = store.stats().await;
    let (sessions, next_expiry) = store.read(|e| (e.session_count(), e.next_expiry())).await?;
    let (embedder, reembedding) = store.read(|e| (e.longterm().embedder().map(str::to_owned), e.longterm().restaging().map(|(to, staged)| json!({"embedder": to, "staged": staged})))).await?;
    Ok(json!({
        "last_seq": s.last_seq,
        "log_records_since_snapshot": s.log_records_since_snapshot,
        "snapshot_gen": s.snapshot_gen,
        "snapshot_bytes": s.snapshot_bytes,
        "sessions": sessions,
        "next_expiry": next_expiry,
        "long_term_memories": store.read(|e| e.longterm().len()).await?,
        "embedder": embedder,
        "reembedding": reembedding,
    }))
}

/// Sweeps expired sessions; the Worker calls it from its alarm. Returns the
/// next expiry to schedule, if any.
pub async fn expire<B: Backend>(store: &Store<B>, now: Millis) -> Result<Option<Millis>> {
    let (sessions_due, ledger_due) = store.read(|e| (e.sessions_due(now), e.ledger().next_expiry().is_some_and(|at| at <= now))).await?;
    if sessions_due {
        store.apply(Op::SessionsExpire, now).await?;
    }
    if ledger_due {
        store.apply(Op::Ledger(crate::core::ledger::LedgerOp::Expire), now).await?;
    }
    if store.read(|e| e.episodes().next_expiry().is_some_and(|at| at <= now)).await? {
        store.apply(Op::EpisodesExpire, now).await?;
    }
    if store.read(|e| e.services().next_expiry().is_some_and(|at| at <= now)).await? {
        store.apply(Op::Service(crate::core::service_cache::ServiceOp::Expire), now).await?;
    }
    store.read(|e| e.next_expiry()).await
}

/// `GET /v1/events?since=&kinds=&keys=&limit=`: the change feed as one
/// page of JSON (hosts may also stream it: the Worker over WebSocket or
/// server-sent events). Without `since`, the page is empty and `last_seq`
/// says where to start.
async fn events_route<B: Backend>(store: &Store<B>, req: &Request<'_>) -> Result<Value> {
    let page = events_page(store, req.param("since"), req.param("kinds"), req.param("keys"), req.param("limit")).await?;
    serde_json::to_value(&page).map_err(|e| Error::Internal { detail: format!("encode events: {e}") })
}

/// Parses the feed's query parameters (each refused with a 400
/// `invalid_query`) and reads the page.
pub async fn events_page<B: Backend>(store: &Store<B>, since: Option<&str>, kinds: Option<&str>, keys: Option<&str>, limit: Option<&str>) -> Result<crate::core::feed::FeedPage> {
    let bad = |param: &str, reason: String| Error::InvalidQuery { param: param.into(), reason };
    let interest = crate::core::feed::Interest::parse(kinds, keys)?;
    let limit = match limit {
        None => limits::FEED_PAGE_EVENTS_DEFAULT,
        Some(v) => match v.parse::<usize>() {
            Ok(n) if (1..=limits::FEED_PAGE_EVENTS_MAX).contains(&n) => n,
            _ => return Err(bad("limit", format!("must be an integer from 1 to {}, got {v:?}", limits::FEED_PAGE_EVENTS_MAX))),
        },
    };
    let since = since.map(|v| v.parse::<u64>().map_err(|_| bad("since", format!("must be a non-negative integer, got {v:?}")))).transpose()?;
    store.events_since(since, &interest, limit).await
}

/// When the host should next wake the tenant: its next TTL expiry, a
/// background compaction pass [`limits::LTM_COMPACT_DELAY_MS`] from `now`
/// when one is due, or the next extraction pass (a session's writes quiet
/// for [`limits::EXTRACT_DEBOUNCE_MS`], or its retry), or a continuous summary
/// view's refresh ([`summary_views::next_due`]), whichever is first. Called after every write, so a
/// stream of writes keeps pushing the pass back.
pub async fn next_wake<B: Backend>(store: &Store<B>, now: Millis) -> Result<Option<Millis>> {
    let state = store
        .read(|e| {
            let pass = e.vector_compaction_due(limits::LTM_COMPACT_WORK_POINTS_PER_PASS).then(|| now.saturating_add(limits::LTM_COMPACT_DELAY_MS));
            [e.next_expiry(), pass].into_iter().flatten().min()
        })
        .await?;
    let extraction = extraction::next_due(store, now).await?;
    let views = summary_views::next_due(store, now).await?;
    Ok([state, extraction, views].into_iter().flatten().min())
}

/// The host's wake-up: expires what is due, runs the extraction passes
/// that are due, re-runs the continuous summary views whose memories
/// changed, runs one bounded background compaction pass, and returns
/// when to wake next ([`next_wake`]).
pub async fn wake<B: Backend>(store: &Store<B>, services: &dyn services::Services, now: Millis) -> Result<Option<Millis>> {
    expire(store, now).await?;
    extraction::run_due(store, services, now, false).await?;
    summary_views::run_due(store, services, now).await?;
    store.maintain(|e| e.compact_vectors(limits::LTM_COMPACT_WORK_POINTS_PER_PASS)).await??;
    next_wake(store, now).await
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod history_tests;
#[cfg(test)]
mod service_cache_tests;
#[cfg(test)]
mod operations_tests;
#[cfg(test)]
mod export_tests;
#[cfg(test)]
mod export_shard_tests;
#[cfg(test)]
mod extraction_tests;
#[cfg(test)]
mod summary_views_tests;
#[cfg(test)]
mod summary_views_shard_tests;
