//! The OpenAPI 3.1 description of the HTTP API, generated from the route
//! table ([`super::routes::ROUTES`]: paths, methods, scopes) and the schema
//! table ([`super::schema::OPS`]: parameters, bodies, answers), never
//! written by hand. `tests/openapi.rs` renders it into `www/openapi.json`,
//! which the Worker serves as a static asset at `/openapi.json`.
//!
//! Native only: nothing of it is compiled into the wasm.

use serde_json::{json, Map, Value};

use super::routes::{Route, ROUTES};
use super::schema::{op, Op, BODY_NDJSON, BODY_NONEMPTY, BODY_OPTIONAL, F};
use crate::core::auth::Scope;
use crate::core::error::Error;

const DESCRIPTION: &str = "Agent memory in WebAssembly: working memory shaped like Redis Agent Memory Server's REST API (its clients work unchanged), \
long-term memory with semantic, keyword and hybrid search, an exact Decimal ledger, episodes, a service-state cache, agent prompts and profiles, \
and a change feed. Every error is `{detail, code}` with a stable code. Amounts are decimal strings, never JSON numbers. \
Generated from the route and schema tables of the crate (src/api/routes.rs, src/api/schema/).";

/// The error statuses every operation may answer, and what each means.
const ERRORS: &[(u16, &str)] = &[
    (400, "Malformed JSON or query (`invalid_json`, `invalid_query`, `unknown_kind`)"),
    (401, "No valid API key (`unauthorized`)"),
    (403, "The key does not cover this namespace or scope, a quota is spent, or consent is missing"),
    (404, "No such entity or route (`not_found`)"),
    (405, "The path exists, not with this method (`method_not_allowed`; see `Allow`)"),
    (409, "The change conflicts with the stored state"),
    (413, "The body is larger than the limit (`payload_too_large`)"),
    (415, "The body is not `application/json` (`unsupported_media_type`)"),
    (422, "A well-formed input with a wrong value (`invalid_input`, `limit_exceeded`, a rule or transfer rejection)"),
    (429, "Over the key's rate (`rate_limited`; see `Retry-After`)"),
    (500, "An internal failure (`internal`, `snapshot_corrupt`, ...)"),
    (502, "A host hook or upstream failed (`hook_failed`, `upstream_error`)"),
    (503, "Storage unavailable, overloaded, or auth not configured"),
    (504, "An upstream timed out (`upstream_timeout`)"),
];

fn scope_name(s: Scope) -> &'static str {
    match s {
        Scope::Read => "read",
        Scope::Write => "write",
        Scope::Admin => "admin",
    }
}

/// The OpenAPI path of a route: `{}` named from the operation's path fields.
pub fn path_of(route: &Route, op: &Op) -> String {
    let mut names = op.path.iter().map(|f| f.name);
    let segs: Vec<String> = route.pattern.split('/').map(|s| if s == "{}" { format!("{{{}}}", names.next().unwrap_or("id")) } else { s.to_owned() }).collect();
    format!("/v1/{}", segs.join("/"))
}

/// `get_ledger_accounts_by_account_id_history`; a trailing `/` is `_slash`.
fn operation_id(op: &Op) -> String {
    let mut names = op.path.iter().map(|f| f.name);
    let mut out = op.method.to_ascii_lowercase();
    for seg in op.route.split('/') {
        out.push('_');
        match seg {
            "{}" => out.push_str(&format!("by_{}", names.next().unwrap_or("id"))),
            "" => out.push_str("slash"),
            s => out.push_str(&s.replace('-', "_")),
        }
    }
    out
}

fn parameter(f: &F, place: &str) -> Value {
    let mut p = json!({ "name": f.name, "in": place, "required": f.required || place == "path", "schema": f.s.json() });
    if !f.doc.is_empty() {
        p["description"] = json!(f.doc);
    }
    p
}

/// Which error statuses an operation may answer.
fn errors_of(op: &Op) -> Vec<u16> {
    let upstream = ["services/", "long-term-memory", "summary-views/{}/", "working-memory/{}/compact", "memory/prompt", "budget/"].iter().any(|p| op.route.starts_with(p) || op.route == p.trim_end_matches('/'));
    ERRORS
        .iter()
        .map(|(s, _)| *s)
        .filter(|s| match s {
            409 => op.method != "GET",
            413 | 415 => op.body.is_some(),
            502 | 504 => upstream,
            _ => true,
        })
        .collect()
}

fn operation(route: &Route, op: &Op, scope: Scope) -> Value {
    let mut o = Map::new();
    o.insert("operationId".into(), json!(operation_id(op)));
    o.insert("summary".into(), json!(op.summary));
    o.insert("tags".into(), json!([route.pattern.split('/').next().unwrap_or("")]));
    o.insert("x-edgemem-scope".into(), json!(scope_name(scope)));
    if route.worker_only {
        o.insert("x-edgemem-worker-only".into(), json!(true));
    }
    let params: Vec<Value> = op.path.iter().map(|f| parameter(f, "path")).chain(op.query.iter().map(|f| parameter(f, "query"))).collect();
    if !params.is_empty() {
        o.insert("parameters".into(), Value::Array(params));
    }
    if let Some(body) = op.body {
        let mut schema = body.json();
        if BODY_NONEMPTY.contains(&(op.route, op.method)) {
            schema["minProperties"] = json!(1);
        }
        let required = !BODY_OPTIONAL.contains(&(op.route, op.method));
        o.insert("requestBody".into(), json!({ "required": required, "content": { "application/json": { "schema": schema } } }));
    }
    let mut responses = Map::new();
    responses.insert("200".into(), json!({ "description": "OK", "content": { "application/json": { "schema": op.ok.json() } } }));
    if op.route == "working-memory/{}/decisions" && op.method == "GET" {
        responses["200"]["content"]["application/x-ndjson"] = json!({ "schema": { "type": "string", "description": "one entry per line, with format=jsonl" } });
    }
    // The export format is NDJSON both ways, not one JSON document.
    if op.route == "export" {
        responses["200"]["content"] = json!({ "application/x-ndjson": { "schema": { "type": "string", "description": "one JSON object per line: a header, the state, an end line" } } });
    }
    if BODY_NDJSON.contains(&(op.route, op.method)) {
        o.insert("requestBody".into(), json!({ "required": true, "content": { "application/x-ndjson": { "schema": { "type": "string", "description": "an export, as GET /v1/export answers it" } } } }));
    }
    for status in errors_of(op) {
        responses.insert(status.to_string(), json!({ "$ref": format!("#/components/responses/E{status}") }));
    }
    o.insert("responses".into(), Value::Object(responses));
    Value::Object(o)
}

/// The document.
pub fn document() -> Value {
    let mut paths = Map::new();
    for route in ROUTES {
        let mut item = Map::new();
        let mut key = None;
        for (method, scope) in route.methods {
            let op = op(route.pattern, method).unwrap_or_else(|| panic!("no schema op for {method} {}", route.pattern));
            key.get_or_insert_with(|| path_of(route, op));
            item.insert(method.to_ascii_lowercase(), operation(route, op, *scope));
        }
        if let Some(k) = key {
            paths.insert(k, Value::Object(item));
        }
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "edgemem",
            "version": super::VERSION,
            "description": DESCRIPTION,
            "license": { "name": "MIT OR Apache-2.0", "identifier": "MIT OR Apache-2.0" },
        },
        "jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
        "servers": [{ "url": "/" }],
        "security": [{ "bearer": [] }],
        "paths": paths,
        "components": {
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "A tenant API key (`emk_...`, from POST /v1/admin/keys) or the operator's admin token. The key's namespace routes the request; each operation names the scope it needs in `x-edgemem-scope`.",
                },
            },
            "responses": ERRORS.iter().map(|(status, why)| (format!("E{status}"), json!({ "description": why, "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Error" } } } }))).collect::<Map<String, Value>>(),
            "schemas": {
                "Error": {
                    "type": "object",
                    "properties": {
                        "detail": { "type": "string", "description": "what went wrong, for people" },
                        "code": { "type": "string", "enum": Error::codes(), "description": "stable, for programs" },
                    },
                    "required": ["detail", "code"],
                },
            },
        },
    })
}
