//! Agent configuration and the tool-result cache over HTTP:
//! `/v1/agents/{agent}/...`, `/v1/working-memory/{id}/tool-cache` and
//! `/v1/tool-ttls`.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{json, Value};

use crate::api::{parse_json, Request};
use crate::core::engine::{Applied, HistoryApplied, HistoryOp, Op};
use crate::core::error::{Error, Result};
use crate::api::services::{counter_for, Services};
use crate::core::budget::Counter;
use crate::core::history::{canonical_args, AgentConfig, CachedResult, Guardrails};
use crate::core::privacy::scrub::redact_json_text;
use crate::core::ids::ulid;
use crate::core::session::validate_id;
use crate::core::time::{format_rfc3339, Millis};
use crate::store::{Backend, Store};

/// An agent's configuration as JSON.
pub fn config_json(agent_id: &str, c: &AgentConfig) -> Value {
    json!({
        "agent_id": agent_id,
        "active_version": c.active,
        "prompt": c.active_prompt().map(|p| p.text.clone()),
        "versions": c.prompts.iter().map(|p| json!({
            "version": p.version, "text": p.text, "note": p.note, "created_at": format_rfc3339(p.created_at),
        })).collect::<Vec<_>>(),
        "patches": c.patches.iter().map(|p| json!({
            "id": p.id, "text": p.text, "created_at": format_rfc3339(p.created_at),
        })).collect::<Vec<_>>(),
        "tools_allowed": c.tools_allowed,
        "system_text": c.system_text(),
        "guardrails": {
            "required": c.guardrails.required,
            "forbidden": c.guardrails.forbidden,
            "tokens_max": c.guardrails.tokens_max,
        },
    })
}

/// The token ceiling of an agent's guardrails, checked against the system
/// text the change would make live (the engine checks the clauses and
/// patterns itself; counting needs the encodings, which live up here).
async fn check_ceiling<B: Backend>(store: &Store<B>, services: &dyn Services, agent: &str, change: impl FnOnce(&mut AgentConfig) -> Result<()>) -> Result<()> {
    let Some(mut config) = store.read(|e| e.agent(agent).cloned()).await? else { return Ok(()) };
    if config.guardrails.tokens_max.is_none() {
        return Ok(());
    }
    change(&mut config)?;
    let counter = counter_for(services, None).await?;
    config.guardrails.check_tokens(counter.count(&config.system_text()) as u64)
}

async fn apply_agent<B: Backend>(store: &Store<B>, op: HistoryOp, now: Millis) -> Result<Value> {
    let (applied, scrubbed) = store.apply_reporting(Op::History(op), now).await?;
    match applied {
        Applied::History(HistoryApplied::Agent { agent_id, config, version, removed }) => {
            let mut v = config_json(&agent_id, &config);
            v["version"] = json!(version);
            v["removed"] = json!(removed);
            super::privacy::report_into(&mut v, &scrubbed);
            Ok(v)
        }
        other => Err(Error::Internal { detail: format!("agent op returned {other:?}") }),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PromptSetBody {
    text: String,
    #[serde(default)]
    note: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RollbackBody {
    version: u32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PatchBody {
    text: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GuardrailsBody {
    #[serde(default)]
    required: Vec<String>,
    #[serde(default)]
    forbidden: Vec<String>,
    #[serde(default)]
    tokens_max: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolsBody {
    tools: Option<Vec<String>>,
}

/// `/v1/agents/{agent}/...`.
pub async fn route<B: Backend>(
    store: &Store<B>,
    req: &Request<'_>,
    now: Millis,
    random: &mut dyn FnMut() -> [u8; 10],
    services: &dyn Services,
    agent: &str,
    rest: &[&str],
) -> Result<Value> {
    validate_id("agent_id", agent)?;
    let a = agent.to_owned();
    match (rest, req.method) {
        (["config"], "GET") => {
            let c = store.read(|e| e.agent(agent).cloned()).await?.ok_or_else(|| Error::not_found("agent", agent))?;
            Ok(config_json(agent, &c))
        }
        (["prompt"], "PUT") => {
            let b: PromptSetBody = parse_json(req.body)?;
            check_ceiling(store, services, agent, |c| c.set_prompt(&b.text, None, now).map(drop)).await?;
            apply_agent(store, HistoryOp::PromptSet { agent_id: a, text: b.text, note: b.note }, now).await
        }
        (["prompt", "rollback"], "POST") => {
            let b: RollbackBody = parse_json(req.body)?;
            check_ceiling(store, services, agent, |c| c.rollback(b.version)).await?;
            apply_agent(store, HistoryOp::PromptRollback { agent_id: a, version: b.version }, now).await
        }
        (["patches"], "POST") => {
            let b: PatchBody = parse_json(req.body)?;
            let patch_id = ulid(now, random());
            check_ceiling(store, services, agent, |c| c.append_patch(patch_id.clone(), &b.text, now)).await?;
            apply_agent(store, HistoryOp::PatchAppend { agent_id: a, patch_id, text: b.text }, now).await
        }
        (["patches"], "DELETE") => {
            let glob = req.param("glob").ok_or_else(|| Error::invalid("glob", "required, e.g. ?glob=CRITICAL:*"))?;
            apply_agent(store, HistoryOp::PatchRemove { agent_id: a, glob: glob.to_owned() }, now).await
        }
        (["guardrails"], "PUT") => {
            let b: GuardrailsBody = parse_json(req.body)?;
            let guardrails = Guardrails { required: b.required, forbidden: b.forbidden, tokens_max: b.tokens_max };
            apply_agent(store, HistoryOp::GuardrailsSet { agent_id: a, guardrails }, now).await
        }
        (["tools"], "PUT") => {
            let b: ToolsBody = parse_json(req.body)?;
            apply_agent(store, HistoryOp::ToolsAllow { agent_id: a, tools: b.tools }, now).await
        }
        (["config"] | ["prompt"] | ["prompt", "rollback"] | ["patches"] | ["tools"] | ["guardrails"], other) => Err(Error::MethodNotAllowed { method: other.to_owned() }),
        _ => Err(Error::not_found("route", req.path)),
    }
}

fn cached_json(e: &CachedResult) -> Value {
    json!({
        "tool": e.tool,
        "args": serde_json::from_str::<Value>(&e.args).unwrap_or(Value::Null),
        "result": e.result,
        "stored_at": format_rfc3339(e.stored_at),
        "expires_at": format_rfc3339(e.expires_at),
    })
}

/// Looks up a cached tool result and counts the hit or miss.
pub async fn tool_cache_get<B: Backend>(store: &Store<B>, session_id: &str, tool: &str, args: &Value, now: Millis) -> Result<Option<Value>> {
    validate_id("session_id", session_id)?;
    let mut key = canonical_args(args)?;
    redact_json_text(&mut key)?;
    let (live, hit) = store
        .read(|e| (e.session(session_id, now).is_some(), e.tool_cached(session_id, tool, &key, now).map(cached_json)))
        .await?;
    if !live {
        return Err(Error::not_found("session", session_id));
    }
    store.counters().tool_cache(hit.is_some());
    Ok(hit)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CachePutBody {
    tool: String,
    #[serde(default)]
    args: Value,
    result: Value,
    #[serde(default)]
    ttl_seconds: Option<u64>,
}

/// Stores a tool result.
pub async fn tool_cache_put<B: Backend>(store: &Store<B>, session_id: &str, tool: String, args: &Value, result: Value, ttl_seconds: Option<u64>, now: Millis) -> Result<Value> {
    validate_id("session_id", session_id)?;
    let args = canonical_args(args)?;
    match store.apply_reporting(Op::History(HistoryOp::ToolCachePut { session_id: session_id.to_owned(), tool, args, result, ttl_seconds }), now).await? {
        (Applied::History(HistoryApplied::ToolCached(e)), scrubbed) => {
            let mut v = cached_json(&e);
            super::privacy::report_into(&mut v, &scrubbed);
            Ok(v)
        }
        (other, _) => Err(Error::Internal { detail: format!("cache put returned {other:?}") }),
    }
}

/// `/v1/working-memory/{id}/tool-cache`: GET `?tool=&args=<json>` looks one
/// up (`{"hit", "entry"}`), GET without `tool` lists live entries and the
/// store's hit/miss counters, PUT stores, DELETE invalidates.
pub async fn tool_cache_route<B: Backend>(store: &Store<B>, req: &Request<'_>, id: &str, now: Millis) -> Result<Value> {
    let args_param = || -> Result<Option<Value>> {
        req.param("args").map(|a| serde_json::from_str(a).map_err(|e| Error::invalid("args", format!("not JSON: {e}")))).transpose()
    };
    match req.method {
        "GET" => match req.param("tool") {
            Some(tool) => {
                let args = args_param()?.unwrap_or(Value::Object(Default::default()));
                let entry = tool_cache_get(store, id, tool, &args, now).await?;
                Ok(json!({ "hit": entry.is_some(), "entry": entry }))
            }
            None => {
                validate_id("session_id", id)?;
                let entries = store.read(|e| e.session(id, now).map(|_| e.tool_cache_entries(id, now).into_iter().map(cached_json).collect::<Vec<_>>())).await?;
                let entries = entries.ok_or_else(|| Error::not_found("session", id))?;
                let (hits, misses) = store.counters().tool_cache_counts();
                Ok(json!({ "entries": entries, "hits": hits, "misses": misses }))
            }
        },
        "PUT" => {
            let b: CachePutBody = parse_json(req.body)?;
            let args = if b.args.is_null() { Value::Object(Default::default()) } else { b.args };
            tool_cache_put(store, id, b.tool, &args, b.result, b.ttl_seconds, now).await
        }
        "DELETE" => {
            validate_id("session_id", id)?;
            let args = args_param()?.map(|a| canonical_args(&a)).transpose()?;
            let op = HistoryOp::ToolCacheInvalidate { session_id: id.to_owned(), tool: req.param("tool").map(str::to_owned), args };
            match store.apply(Op::History(op), now).await? {
                Applied::History(HistoryApplied::Invalidated { count }) => Ok(json!({ "invalidated": count })),
                other => Err(Error::Internal { detail: format!("invalidate returned {other:?}") }),
            }
        }
        other => Err(Error::MethodNotAllowed { method: other.to_owned() }),
    }
}

/// `/v1/tool-ttls`: GET the per-tool TTL table, PUT `{"ttls": {tool: seconds}}`.
pub async fn tool_ttls_route<B: Backend>(store: &Store<B>, req: &Request<'_>, now: Millis) -> Result<Value> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Body {
        ttls: BTreeMap<String, u64>,
    }
    match req.method {
        "GET" => Ok(json!({ "ttls": store.read(|e| e.tool_ttls().clone()).await? })),
        "PUT" => {
            let b: Body = parse_json(req.body)?;
            match store.apply(Op::History(HistoryOp::ToolTtlsSet { ttls: b.ttls }), now).await? {
                Applied::History(HistoryApplied::ToolTtls(t)) => Ok(json!({ "ttls": t })),
                other => Err(Error::Internal { detail: format!("ttls returned {other:?}") }),
            }
        }
        other => Err(Error::MethodNotAllowed { method: other.to_owned() }),
    }
}
