//! The Model Context Protocol, as JSON-RPC messages in and out: written
//! once here, wrapped in Streamable HTTP by the Worker (`src/worker/mcp.rs`)
//! and in stdio by the npm package (`pkg-template/mcp.js`).
//!
//! Tools are [`super::tools`]'s table, run through the same [`Exec`] as
//! REST. Errors follow the spec's split: a tool's own failure, bad
//! arguments included, is a result with `isError: true` carrying edgemem's
//! `code`, so the model can correct itself; JSON-RPC errors are kept for
//! what is wrong with the message (an unknown method or tool, params that
//! are not an object). Nothing a client sends can panic.

use serde_json::{json, Map, Value};

use super::tools::{self, Exec, Failure, ToolCtx};
use crate::core::error::Error;
use crate::core::limits;

/// The protocol revisions served, newest first.
pub const SUPPORTED: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26"];

/// JSON-RPC error codes.
pub mod code {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL_ERROR: i64 = -32603;
    /// MCP's "resource not found".
    pub const RESOURCE_NOT_FOUND: i64 = -32002;
}

/// The revision to speak: the client's when served, else the newest.
pub fn negotiate(requested: Option<&str>) -> &'static str {
    SUPPORTED.iter().copied().find(|v| Some(*v) == requested).unwrap_or(SUPPORTED[0])
}

/// A JSON-RPC error response (`id` null when the request had none).
pub fn error(id: Value, code: i64, message: impl Into<String>, data: Option<Value>) -> Value {
    let mut e = json!({ "code": code, "message": message.into() });
    if let Some(d) = data {
        e["data"] = d;
    }
    json!({ "jsonrpc": "2.0", "id": id, "error": e })
}

fn reply(id: Value, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

/// What a message is, once its envelope has been checked.
pub enum Kind<'a> {
    /// A request: answer it.
    Request { id: Value, method: &'a str, params: Map<String, Value> },
    /// A notification or a response to us: nothing to answer.
    Notification { method: &'a str },
    /// Not valid JSON-RPC: this error answers it.
    Invalid(Value),
}

/// Checks the envelope of one message.
pub fn classify(msg: &Value) -> Kind<'_> {
    let Some(o) = msg.as_object() else { return Kind::Invalid(error(Value::Null, code::INVALID_REQUEST, "a message is one JSON-RPC object (batches are not supported)", None)) };
    let id = o.get("id").cloned();
    if o.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Kind::Invalid(error(id.unwrap_or(Value::Null), code::INVALID_REQUEST, "jsonrpc must be \"2.0\"", None));
    }
    let Some(method) = o.get("method").and_then(Value::as_str) else {
        // A response to a request of ours (we send none): accepted, ignored.
        return if o.contains_key("result") || o.contains_key("error") { Kind::Notification { method: "" } } else { Kind::Invalid(error(id.unwrap_or(Value::Null), code::INVALID_REQUEST, "no method", None)) };
    };
    let params = match o.get("params") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(p)) => p.clone(),
        Some(_) => return Kind::Invalid(error(id.unwrap_or(Value::Null), code::INVALID_PARAMS, "params must be an object", None)),
    };
    match id {
        None => Kind::Notification { method },
        Some(id @ (Value::String(_) | Value::Number(_))) => Kind::Request { id, method, params },
        Some(_) => Kind::Invalid(error(Value::Null, code::INVALID_REQUEST, "id must be a string or a number", None)),
    }
}

/// The `InitializeResult` for a requested revision.
pub fn initialize_result(requested: Option<&str>) -> Value {
    json!({
        "protocolVersion": negotiate(requested),
        "capabilities": { "tools": { "listChanged": false }, "resources": { "subscribe": false, "listChanged": false } },
        "serverInfo": { "name": "edgemem", "title": "edgemem agent memory", "version": super::VERSION },
        "instructions": "Memory for this agent: search_long_term_memory before answering questions about the user or past events; create_long_term_memories for durable facts and preferences; get_working_memory for the current session. Amounts are decimal strings.",
    })
}

/// Answers one request other than `initialize` (the transport owns the
/// session it opens). `None` for notifications and responses.
pub async fn handle(exec: &mut dyn Exec, ctx: &ToolCtx, msg: &Value) -> Option<Value> {
    let (id, method, params) = match classify(msg) {
        Kind::Request { id, method, params } => (id, method, params),
        Kind::Notification { .. } => return None,
        Kind::Invalid(e) => return Some(e),
    };
    let result = match method {
        "initialize" => Ok(initialize_result(params.get("protocolVersion").and_then(Value::as_str))),
        "ping" => Ok(json!({})),
        "tools/list" => tools_list(exec, ctx).await,
        "tools/call" => return Some(tools_call(exec, ctx, id, &params).await),
        "resources/list" => resources_list(exec, ctx, &params).await,
        "resources/templates/list" => Ok(json!({ "resourceTemplates": [
            { "uriTemplate": "edgemem://working-memory/{session_id}", "name": "working-memory", "title": "A working-memory session", "mimeType": "application/json" },
            { "uriTemplate": "edgemem://long-term-memory/{memory_id}", "name": "long-term-memory", "title": "A long-term memory", "mimeType": "application/json" },
        ] })),
        "resources/read" => return Some(resources_read(exec, ctx, id, &params).await),
        other => return Some(error(id, code::METHOD_NOT_FOUND, format!("method not found: {other}"), None)),
    };
    Some(match result {
        Ok(v) => reply(id, v),
        Err(f) => error(id, code::INTERNAL_ERROR, f.detail, Some(json!({ "code": f.code }))),
    })
}

async fn tools_list(exec: &mut dyn Exec, ctx: &ToolCtx) -> Result<Value, Failure> {
    let allowed = tools::allowed_names(exec, ctx).await?;
    let list = tools::schemas("mcp", |n| allowed.as_ref().is_none_or(|a| a.iter().any(|x| x == n)))?;
    Ok(json!({ "tools": list }))
}

async fn tools_call(exec: &mut dyn Exec, ctx: &ToolCtx, id: Value, params: &Map<String, Value>) -> Value {
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        return error(id, code::INVALID_PARAMS, "tools/call needs a tool name", None);
    };
    if tools::find(name).is_none() {
        return error(id, code::INVALID_PARAMS, format!("unknown tool: {name}"), Some(json!({ "code": "not_found" })));
    }
    let args = params.get("arguments").cloned().unwrap_or(Value::Null);
    match tools::resolve(exec, ctx, name, args).await {
        Ok(v) => {
            let structured = if v.is_object() { v.clone() } else { json!({ "result": v }) };
            reply(id, json!({ "content": [{ "type": "text", "text": v.to_string() }], "structuredContent": structured, "isError": false }))
        }
        Err(f) => reply(
            id,
            json!({
                "content": [{ "type": "text", "text": format!("{}: {}", f.code, f.detail) }],
                "structuredContent": { "error": { "code": f.code, "detail": f.detail } },
                "isError": true,
            }),
        ),
    }
}

/// Pages through live sessions, then the newest long-term memories, with
/// an opaque cursor (`s:<offset>` or `m:<offset>`).
async fn resources_list(exec: &mut dyn Exec, ctx: &ToolCtx, params: &Map<String, Value>) -> Result<Value, Failure> {
    let page = limits::MCP_RESOURCES_PAGE_MAX;
    let (kind, offset) = match params.get("cursor").and_then(Value::as_str) {
        None => ("s", 0usize),
        Some(c) => match c.split_once(':').and_then(|(k, n)| Some((k, n.parse::<usize>().ok()?))) {
            Some((k @ ("s" | "m"), n)) if n <= limits::LTM_SEARCH_OFFSET_MAX => (k, n),
            _ => return Err(Error::invalid("cursor", "not a cursor this server gave").into()),
        },
    };
    let mut resources = Vec::new();
    let next = if kind == "s" {
        let mut query = vec![("offset".to_owned(), offset.to_string()), ("limit".to_owned(), page.to_string())];
        if let Some(u) = &ctx.user_id {
            query.push(("user_id".into(), u.clone()));
        }
        let v = exec.call("GET", "/v1/working-memory/".into(), query, Vec::new()).await?;
        for s in v["sessions"].as_array().into_iter().flatten().filter_map(Value::as_str) {
            resources.push(json!({ "uri": format!("edgemem://working-memory/{s}"), "name": format!("session {s}"), "mimeType": "application/json" }));
        }
        let total = v["total"].as_u64().unwrap_or(0) as usize;
        if offset + page < total {
            format!("s:{}", offset + page)
        } else {
            "m:0".to_owned()
        }
    } else {
        let mut body = json!({ "text": "", "limit": page, "offset": offset, "recency_boost": false });
        if let Some(u) = &ctx.user_id {
            body["user_id"] = json!({ "eq": u });
        }
        let v = exec.call("POST", "/v1/long-term-memory/search".into(), Vec::new(), body.to_string().into_bytes()).await?;
        let hits = v["memories"].as_array().cloned().unwrap_or_default();
        for m in &hits {
            let (Some(id), Some(text)) = (m["id"].as_str(), m["text"].as_str()) else { continue };
            let name: String = text.chars().take(80).collect();
            resources.push(json!({ "uri": format!("edgemem://long-term-memory/{id}"), "name": name, "mimeType": "application/json" }));
        }
        if hits.len() == page && offset + page <= limits::LTM_SEARCH_OFFSET_MAX {
            format!("m:{}", offset + page)
        } else {
            String::new()
        }
    };
    let mut out = json!({ "resources": resources });
    if !next.is_empty() {
        out["nextCursor"] = json!(next);
    }
    Ok(out)
}

async fn resources_read(exec: &mut dyn Exec, ctx: &ToolCtx, id: Value, params: &Map<String, Value>) -> Value {
    let Some(uri) = params.get("uri").and_then(Value::as_str) else {
        return error(id, code::INVALID_PARAMS, "resources/read needs a uri", None);
    };
    let (tool, key, arg) = if let Some(s) = uri.strip_prefix("edgemem://working-memory/") {
        ("get_working_memory", "session_id", s)
    } else if let Some(m) = uri.strip_prefix("edgemem://long-term-memory/") {
        ("get_long_term_memory", "memory_id", m)
    } else {
        return error(id, code::RESOURCE_NOT_FOUND, format!("resource not found: {uri}"), Some(json!({ "uri": uri })));
    };
    let read = if key == "session_id" {
        // Only the bound session, if one is bound.
        if ctx.session_id.as_deref().is_some_and(|bound| bound != arg) {
            return error(id, code::RESOURCE_NOT_FOUND, format!("resource not found: {uri}"), Some(json!({ "uri": uri })));
        }
        // The route, not the tool: the tool answers a missing session as an empty one.
        read_session(exec, ctx, arg).await
    } else {
        // A memory read is its tool's call, with the same context rules.
        tools::resolve(exec, ctx, tool, json!({ key: arg })).await
    };
    match read {
        Ok(v) => reply(id, json!({ "contents": [{ "uri": uri, "mimeType": "application/json", "text": v.to_string() }] })),
        Err(f) if f.code == "not_found" => error(id, code::RESOURCE_NOT_FOUND, format!("resource not found: {uri}"), Some(json!({ "uri": uri }))),
        Err(f) => error(id, code::INVALID_PARAMS, format!("{}: {}", f.code, f.detail), Some(json!({ "code": f.code }))),
    }
}

/// A session as a resource: only one the bound user owns.
async fn read_session(exec: &mut dyn Exec, ctx: &ToolCtx, id: &str) -> Result<Value, Failure> {
    if crate::core::session::validate_id("session_id", id).is_err() {
        return Err(Error::not_found("session", id).into());
    }
    let path = format!("/v1/working-memory/{}", tools::encode_segment(id));
    let v = exec.call("GET", path, Vec::new(), Vec::new()).await?;
    match &ctx.user_id {
        Some(u) if v.get("user_id").and_then(Value::as_str) != Some(u.as_str()) => Err(Error::not_found("session", id).into()),
        _ => Ok(v),
    }
}

#[cfg(test)]
#[path = "mcp_tests.rs"]
mod tests;
