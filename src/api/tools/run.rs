//! Running each tool: its REST request built from checked arguments and
//! the bound context.

use serde_json::{json, Map, Value};

use super::{Exec, Failure, ToolCtx, ToolSpec};
use crate::api::{services::counter_for, tenancy};
use crate::core::budget::models::{self, Counting};
use crate::core::error::{Error, Rejection, Result, RuleCode};
use crate::core::session::validate_id;
use crate::core::time::format_rfc3339;

type R<T> = std::result::Result<T, Failure>;

/// The agent's allow-list, read through the agent config route: `None`
/// when every tool is allowed (no agent, no config, or no list).
pub async fn allowed_names(exec: &mut dyn Exec, ctx: &ToolCtx) -> R<Option<Vec<String>>> {
    let Some(agent) = &ctx.agent_id else { return Ok(None) };
    validate_id("agent_id", agent)?;
    let config = match exec.call("GET", format!("/v1/agents/{}/config", enc(agent)), Vec::new(), Vec::new()).await {
        Ok(c) => c,
        Err(f) if f.code == "not_found" => return Ok(None),
        Err(f) => return Err(f),
    };
    Ok(config.get("tools_allowed").and_then(Value::as_array).map(|l| l.iter().filter_map(|n| n.as_str().map(str::to_owned)).collect()))
}

/// Refuses a tool outside the agent's allow-list.
pub async fn allowed(exec: &mut dyn Exec, ctx: &ToolCtx, t: &ToolSpec) -> R<()> {
    match allowed_names(exec, ctx).await? {
        Some(list) if !list.iter().any(|n| n == t.name) => Err(Error::Rejected { code: Rejection::Rule(RuleCode::ToolNotAllowed), id: t.name.to_owned() }.into()),
        _ => Ok(()),
    }
}

/// Percent-encodes a path segment.
pub(crate) fn enc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn body(v: &Value) -> Vec<u8> {
    v.to_string().into_bytes()
}

/// The session: the argument, else the bound one; never a different one.
fn session(args: &mut Map<String, Value>, ctx: &ToolCtx) -> Result<String> {
    // An id, or AMS's filter form `{"eq": id}`.
    let given = args.remove("session_id").and_then(|v| v.as_str().or_else(|| v["eq"].as_str()).map(str::to_owned));
    match (given, &ctx.session_id) {
        (Some(g), Some(bound)) if &g != bound => Err(Error::invalid("session_id", format!("this tool is bound to session {bound:?}"))),
        (Some(g), _) => Ok(g),
        (None, Some(bound)) => Ok(bound.clone()),
        (None, None) => Err(Error::invalid("session_id", "is required (no session is bound)")),
    }
}

/// A record's owner: the bound user fills a missing `user_id` and refuses
/// another; the bound namespace likewise.
fn own_record(m: &mut Map<String, Value>, ctx: &ToolCtx, field: &str) -> Result<()> {
    for (key, bound) in [("user_id", &ctx.user_id), ("namespace", &ctx.namespace)] {
        let Some(bound) = bound else { continue };
        match m.get(key) {
            None | Some(Value::Null) => {
                m.insert(key.into(), json!(bound));
            }
            Some(Value::String(s)) if s == bound => {}
            Some(_) if key == "namespace" => return Err(Error::NamespaceForbidden { namespace: m[key].as_str().unwrap_or("?").to_owned() }),
            Some(_) => return Err(Error::invalid(format!("{field}.user_id"), format!("this tool is bound to user {bound:?}"))),
        }
    }
    Ok(())
}

/// A search's filters: the bound user and namespace are `eq` filters a
/// model cannot widen.
fn own_search(s: &mut Map<String, Value>, ctx: &ToolCtx) -> Result<()> {
    for (key, bound) in [("user_id", &ctx.user_id), ("namespace", &ctx.namespace)] {
        let Some(bound) = bound else { continue };
        let want = json!({ "eq": bound });
        match s.get(key) {
            None | Some(Value::Null) => {
                s.insert(key.into(), want);
            }
            Some(v) if *v == want => {}
            Some(_) if key == "namespace" => return Err(Error::NamespaceForbidden { namespace: "(a namespace filter)".into() }),
            Some(_) => return Err(Error::invalid("user_id", format!("this tool is bound to user {bound:?}"))),
        }
    }
    Ok(())
}

/// Every namespace the request names must be the bound one.
fn check_tenancy(ctx: &ToolCtx, query: &[(String, String)], body: &[u8]) -> Result<()> {
    let Some(bound) = &ctx.namespace else { return Ok(()) };
    match tenancy::named_namespaces(query, body).into_iter().find(|n| n != bound) {
        Some(other) => Err(Error::NamespaceForbidden { namespace: other }),
        None => Ok(()),
    }
}

async fn send(exec: &mut dyn Exec, ctx: &ToolCtx, method: &'static str, path: String, query: Vec<(String, String)>, v: Option<Value>) -> R<Value> {
    let bytes = v.as_ref().map(body).unwrap_or_default();
    check_tenancy(ctx, &query, &bytes)?;
    exec.call(method, path, query, bytes).await
}

fn str_arg(args: &Map<String, Value>, name: &str) -> String {
    args.get(name).and_then(Value::as_str).unwrap_or_default().to_owned()
}

/// Runs a tool whose arguments passed its schema.
pub async fn run(exec: &mut dyn Exec, ctx: &ToolCtx, t: &ToolSpec, mut args: Map<String, Value>) -> R<Value> {
    match t.name {
        "search_long_term_memory" => {
            strip_ams_extras(&mut args);
            own_search(&mut args, ctx)?;
            send(exec, ctx, "POST", "/v1/long-term-memory/search".into(), Vec::new(), Some(Value::Object(args))).await
        }
        "create_long_term_memories" => {
            if let Some(Value::Array(list)) = args.get_mut("memories") {
                for (i, m) in list.iter_mut().enumerate() {
                    if let Value::Object(m) = m {
                        own_record(m, ctx, &format!("memories[{i}]"))?;
                    }
                }
            }
            send(exec, ctx, "POST", "/v1/long-term-memory".into(), Vec::new(), Some(Value::Object(args))).await
        }
        "get_long_term_memory" => {
            let v = send(exec, ctx, "GET", format!("/v1/long-term-memory/{}", enc(&str_arg(&args, "memory_id"))), Vec::new(), None).await?;
            owned_by_ctx(v, ctx, &str_arg(&args, "memory_id"))
        }
        "edit_long_term_memory" => {
            let id = str_arg(&args, "memory_id");
            // Only the bound user's records: read first, as the caller.
            let current = send(exec, ctx, "GET", format!("/v1/long-term-memory/{}", enc(&id)), Vec::new(), None).await?;
            owned_by_ctx(current, ctx, &id)?;
            args.remove("memory_id");
            if let (Some(bound), Some(given)) = (&ctx.user_id, args.get("user_id")) {
                if given.as_str() != Some(bound) {
                    return Err(Error::invalid("user_id", format!("this tool is bound to user {bound:?}")).into());
                }
            }
            send(exec, ctx, "PATCH", format!("/v1/long-term-memory/{}", enc(&id)), Vec::new(), Some(Value::Object(args))).await
        }
        "delete_long_term_memories" => {
            let ids: Vec<String> = args.get("memory_ids").and_then(Value::as_array).map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_owned)).collect()).unwrap_or_default();
            if ids.is_empty() {
                return Err(Error::invalid("memory_ids", "name at least one id").into());
            }
            if ctx.user_id.is_some() {
                for id in &ids {
                    let v = send(exec, ctx, "GET", format!("/v1/long-term-memory/{}", enc(id)), Vec::new(), None).await?;
                    owned_by_ctx(v, ctx, id)?;
                }
            }
            let query = ids.into_iter().map(|id| ("memory_ids".to_owned(), id)).collect();
            send(exec, ctx, "DELETE", "/v1/long-term-memory".into(), query, None).await
        }
        "get_working_memory" => {
            let sid = session(&mut args, ctx)?;
            if let (Some(bound), Some(given)) = (&ctx.user_id, args.get("user_id")) {
                if given.as_str() != Some(bound) {
                    return Err(Error::invalid("user_id", format!("this tool is bound to user {bound:?}")).into());
                }
            }
            let query = query_of(&args);
            match send(exec, ctx, "GET", format!("/v1/working-memory/{}", enc(&sid)), query, None).await {
                // AMS's tool answers a session not yet written as an empty one.
                Err(f) if f.code == "not_found" => Ok(json!({ "session_id": sid, "messages": [], "memories": [], "context": null, "data": null })),
                other => other,
            }
        }
        "set_working_memory" => {
            let sid = session(&mut args, ctx)?;
            let mut query = Vec::new();
            for k in ["model_name", "context_window_max"] {
                if let Some(v) = args.remove(k) {
                    query.push((k.to_owned(), scalar(&v)));
                }
            }
            own_session_body(&mut args, ctx)?;
            send(exec, ctx, "PUT", format!("/v1/working-memory/{}", enc(&sid)), query, Some(Value::Object(args))).await
        }
        "add_messages_to_working_memory" => {
            let sid = session(&mut args, ctx)?;
            let v = send(exec, ctx, "POST", format!("/v1/working-memory/{}/messages", enc(&sid)), Vec::new(), Some(Value::Object(args))).await?;
            Ok(json!({ "session_id": v["session_id"], "messages": v["message_count"] }))
        }
        "add_memory_to_working_memory" | "update_working_memory_data" => {
            let sid = session(&mut args, ctx)?;
            let path = format!("/v1/working-memory/{}", enc(&sid));
            // Read, change, write: the put re-checks every limit, so an
            // oversized change is refused whole. A write between the two
            // requests is lost (last writer wins), as with AMS's tool.
            let mut s = match send(exec, ctx, "GET", path.clone(), Vec::new(), None).await {
                Ok(v) => v,
                Err(f) if f.code == "not_found" && t.name == "add_memory_to_working_memory" => json!({ "messages": [], "memories": [] }),
                Err(f) => return Err(f),
            };
            let mut put = Map::new();
            let mut promote = None;
            for k in ["messages", "memories", "data", "context", "user_id", "namespace", "ttl_seconds"] {
                if let Some(v) = s.get_mut(k).map(Value::take).filter(|v| !v.is_null()) {
                    put.insert(k.into(), v);
                }
            }
            if t.name == "update_working_memory_data" {
                let mut data = put.remove("data").and_then(|d| if let Value::Object(o) = d { Some(o) } else { None }).unwrap_or_default();
                if let Some(Value::Object(new)) = args.remove("data") {
                    data.extend(new);
                }
                put.insert("data".into(), Value::Object(data));
            } else {
                args.entry("memory_type").or_insert(json!("semantic"));
                args.insert("id".into(), json!(exec.new_id()));
                own_record(&mut args, ctx, "memory")?;
                if put.get("memories").is_none() {
                    put.insert("memories".into(), json!([]));
                }
                let mut record = args.clone();
                record.insert("session_id".into(), json!(sid));
                promote = Some(record);
                if let Some(Value::Array(list)) = put.get_mut("memories") {
                    list.push(Value::Object(args));
                }
            }
            own_session_body(&mut put, ctx)?;
            let v = send(exec, ctx, "PUT", path, Vec::new(), Some(Value::Object(put))).await?;
            // Promoted at once, under the same id: a retry overwrites, never doubles.
            if let Some(record) = promote {
                send(exec, ctx, "POST", "/v1/long-term-memory".into(), Vec::new(), Some(json!({ "memories": [record], "deduplicate": false }))).await?;
            }
            Ok(if t.name == "update_working_memory_data" {
                json!({ "session_id": v["session_id"], "data": v["data"] })
            } else {
                json!({ "session_id": v["session_id"], "memories": v["memories"].as_array().map_or(0, Vec::len) })
            })
        }
        "memory_prompt" => {
            let query = args.remove("query").unwrap_or(Value::Null);
            let mut b = json!({ "query": query });
            let sid = match (args.get("session_id"), &ctx.session_id) {
                (None, None) => None,
                _ => Some(session(&mut args, ctx)?),
            };
            let include = !matches!(args.remove("include_long_term_search"), Some(Value::Bool(false)));
            let given = args.remove("long_term_search");
            let mut session_fields = Map::new();
            for k in ["model_name", "context_window_max"] {
                if let Some(v) = args.remove(k) {
                    session_fields.insert(k.into(), v);
                }
            }
            strip_ams_extras(&mut args);
            // What is left are AMS's flat search fields.
            let mut search = match given {
                Some(Value::Bool(false)) => None,
                Some(Value::Object(o)) => Some(o),
                _ => Some(Map::new()),
            };
            if !include {
                search = None;
            }
            if let Some(s) = &mut search {
                for (k, v) in std::mem::take(&mut args) {
                    s.insert(k, v);
                }
                own_search(s, ctx)?;
            }
            if let Some(sid) = sid {
                let mut s = json!({ "session_id": sid });
                for (k, v) in session_fields {
                    s[k] = v;
                }
                let user = ctx.user_id.clone().or_else(|| search.as_ref().and_then(|q| q.get("user_id")).and_then(|u| u["eq"].as_str()).map(str::to_owned));
                if let Some(u) = user {
                    s["user_id"] = json!(u);
                }
                if let Some(n) = &ctx.namespace {
                    s["namespace"] = json!(n);
                }
                b["session"] = s;
            } else if search.is_none() {
                return Err(Error::invalid("session_id", "name a session or keep include_long_term_search").into());
            }
            if let Some(s) = search {
                b["long_term_search"] = Value::Object(s);
            }
            send(exec, ctx, "POST", "/v1/memory/prompt".into(), Vec::new(), Some(b)).await
        }
        "get_current_datetime" => {
            let now = exec.now();
            let iso = format_rfc3339(now);
            Ok(json!({ "now": iso, "iso_utc": iso, "now_ms": now, "unix_ts": now / 1000 }))
        }
        "count_tokens" => {
            let text = str_arg(&args, "text");
            let model = args.get("model").and_then(Value::as_str);
            if let Some(m) = model {
                if models::model(m).is_none() {
                    return Err(Error::invalid("model", format!("unknown model {m:?}")).into());
                }
            }
            let counter = counter_for(exec.services(), model).await?;
            Ok(json!({ "tokens": crate::core::budget::Counter::count(&counter, &text), "counting": counter.describe() }))
        }
        "fits_context" => {
            let b = crate::api::budget::FitBody::parse(&body(&Value::Object(args)))?;
            let counting = b.counting()?;
            match counting {
                Counting::Exact(name) => {
                    let enc = exec.services().encoding(name).await?;
                    Ok(b.check(enc.as_ref(), counting)?)
                }
                Counting::Estimate | Counting::Custom => Ok(b.check(&crate::core::budget::Estimator, Counting::Estimate)?),
            }
        }
        "ledger_balance" => send(exec, ctx, "GET", format!("/v1/ledger/accounts/{}", enc(&str_arg(&args, "account_id"))), Vec::new(), None).await,
        "ledger_transfer" => {
            let id = str_arg(&args, "id");
            let v = send(exec, ctx, "POST", "/v1/ledger/transfers".into(), Vec::new(), Some(json!({ "transfers": [Value::Object(args)] }))).await?;
            let result = v["results"][0]["result"].as_str().unwrap_or("internal").to_owned();
            if result == "created" || result == "exists" {
                Ok(json!({ "id": id, "result": result }))
            } else {
                let r = crate::core::ledger::TransferResult::ALL.iter().find(|r| r.as_str() == result).copied();
                Err(match r {
                    Some(r) => Error::Rejected { code: Rejection::Transfer(r), id }.into(),
                    None => Error::Internal { detail: format!("transfer {id}: {result}") }.into(),
                })
            }
        }
        "decision_log_append" => {
            let sid = session(&mut args, ctx)?;
            send(exec, ctx, "POST", format!("/v1/working-memory/{}/decisions", enc(&sid)), Vec::new(), Some(Value::Object(args))).await
        }
        "get_cached_tool_result" => {
            let sid = session(&mut args, ctx)?;
            let mut query = vec![("tool".to_owned(), str_arg(&args, "tool"))];
            query.push(("args".to_owned(), args.get("args").cloned().unwrap_or(json!({})).to_string()));
            send(exec, ctx, "GET", format!("/v1/working-memory/{}/tool-cache", enc(&sid)), query, None).await
        }
        other => Err(Error::Internal { detail: format!("tool {other} has no executor") }.into()),
    }
}

/// Drops the AMS search arguments edgemem accepts and ignores.
fn strip_ams_extras(args: &mut Map<String, Value>) {
    args.remove("optimize_query");
    args.remove("server_side_recency");
}

/// A session body's owner fields under the bound context.
fn own_session_body(b: &mut Map<String, Value>, ctx: &ToolCtx) -> Result<()> {
    own_record(b, ctx, "session")?;
    if let Some(Value::Array(list)) = b.get_mut("memories") {
        for (i, m) in list.iter_mut().enumerate() {
            if let Value::Object(m) = m {
                own_record(m, ctx, &format!("memories[{i}]"))?;
            }
        }
    }
    Ok(())
}

/// A record read by id must belong to the bound user: another user's is
/// answered as missing, as another tenant's is.
fn owned_by_ctx(v: Value, ctx: &ToolCtx, id: &str) -> R<Value> {
    match &ctx.user_id {
        Some(u) if v.get("user_id").and_then(Value::as_str) != Some(u.as_str()) => Err(Error::not_found("memory", id).into()),
        _ => Ok(v),
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn query_of(args: &Map<String, Value>) -> Vec<(String, String)> {
    args.iter().map(|(k, v)| (k.clone(), scalar(v))).collect()
}
