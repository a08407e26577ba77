//! LLM tool schemas for the memory operations, in OpenAI's and Anthropic's
//! shapes, and [`resolve`]: executing a model's function call with the same
//! validation as the HTTP routes, after the agent's allow-list.

use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::api::agents::tool_cache_get;
use crate::api::working_memory;
use crate::core::engine::{Applied, Op};
use crate::core::error::{Error, Result, Rejection, RuleCode};
use crate::core::session::{validate_id, validate_json_object};
use crate::core::time::{format_rfc3339, Millis};
use crate::core::limits;
use crate::store::{Backend, Store};

/// One tool: name, description, JSON Schema of its arguments.
pub struct ToolSpec {
    pub name: &'static str,
    pub description: &'static str,
    pub parameters: fn() -> Value,
}

fn obj(props: Value, required: &[&str]) -> Value {
    json!({ "type": "object", "properties": props, "required": required, "additionalProperties": false })
}

/// The tools edgemem offers a model.
pub const TOOLS: &[ToolSpec] = &[
    ToolSpec {
        name: "get_working_memory",
        description: "Read the current session: its running summary, recent messages and data.",
        parameters: || obj(json!({ "session_id": { "type": "string" }, "recent_messages_limit": { "type": "integer", "minimum": 0 } }), &["session_id"]),
    },
    ToolSpec {
        name: "add_messages_to_working_memory",
        description: "Append messages to the session's history.",
        parameters: || obj(json!({
            "session_id": { "type": "string" },
            "messages": { "type": "array", "items": obj(json!({ "role": { "type": "string" }, "content": { "type": "string" } }), &["role", "content"]) },
        }), &["session_id", "messages"]),
    },
    ToolSpec {
        name: "update_working_memory_data",
        description: "Merge keys into the session's JSON data object (top-level keys are replaced).",
        parameters: || obj(json!({ "session_id": { "type": "string" }, "data": { "type": "object" } }), &["session_id", "data"]),
    },
    ToolSpec {
        name: "get_cached_tool_result",
        description: "Look up a cached result of an earlier tool call before calling the tool again.",
        parameters: || obj(json!({ "session_id": { "type": "string" }, "tool": { "type": "string" }, "args": { "type": "object" } }), &["session_id", "tool"]),
    },
    ToolSpec {
        name: "get_account_balance",
        description: "Read a ledger account's balances as exact decimal strings.",
        parameters: || obj(json!({ "account_id": { "type": "string" } }), &["account_id"]),
    },
    ToolSpec {
        name: "get_current_datetime",
        description: "The current date and time (UTC, RFC 3339).",
        parameters: || obj(json!({}), &[]),
    },
];

/// The schemas: `openai` (Chat Completions `tools`) or `anthropic`.
pub fn schemas(format: &str, allowed: impl Fn(&str) -> bool) -> Result<Value> {
    let tools = TOOLS.iter().filter(|t| allowed(t.name));
    match format {
        "openai" => Ok(Value::Array(
            tools.map(|t| json!({ "type": "function", "function": { "name": t.name, "description": t.description, "parameters": (t.parameters)() } })).collect(),
        )),
        "anthropic" => Ok(Value::Array(tools.map(|t| json!({ "name": t.name, "description": t.description, "input_schema": (t.parameters)() })).collect())),
        other => Err(Error::invalid("format", format!("{other:?} is not openai or anthropic"))),
    }
}

fn args<T: DeserializeOwned>(v: Value) -> Result<T> {
    serde_json::from_value(v).map_err(|e| Error::invalid("arguments", e.to_string()))
}

/// A function call as a model produced it: `arguments` is an object or the
/// JSON text of one (OpenAI sends a string).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Call {
    pub name: String,
    #[serde(default)]
    pub arguments: Value,
    /// Whose allow-list applies.
    #[serde(default)]
    pub agent_id: Option<String>,
}

/// Executes a call: allow-list, argument validation, then the operation.
pub async fn resolve<B: Backend>(store: &Store<B>, call: Call, now: Millis, random: &mut dyn FnMut() -> [u8; 10]) -> Result<Value> {
    let spec = TOOLS.iter().find(|t| t.name == call.name).ok_or_else(|| Error::not_found("tool", &call.name))?;
    if let Some(agent) = &call.agent_id {
        validate_id("agent_id", agent)?;
        let allowed = store.read(|e| e.agent(agent).is_none_or(|c| c.tool_allowed(spec.name))).await?;
        if !allowed {
            return Err(Error::Rejected { code: Rejection::Rule(RuleCode::ToolNotAllowed), id: spec.name.to_owned() });
        }
    }
    let arguments = match call.arguments {
        Value::String(s) if s.len() > limits::TOOL_ARGS_BYTES_MAX => return Err(Error::too_large("arguments", s.len(), limits::TOOL_ARGS_BYTES_MAX)),
        Value::String(s) => serde_json::from_str(&s).map_err(|e| Error::invalid("arguments", format!("not JSON: {e}")))?,
        Value::Null => Value::Object(Map::new()),
        v => v,
    };
    match spec.name {
        "get_working_memory" => {
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields)]
            struct A {
                session_id: String,
                #[serde(default)]
                recent_messages_limit: Option<usize>,
            }
            let a: A = args(arguments)?;
            crate::api::get_session(store, now, &a.session_id, None, a.recent_messages_limit).await?.ok_or_else(|| Error::not_found("session", &a.session_id))
        }
        "add_messages_to_working_memory" => {
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields)]
            struct A {
                session_id: String,
                messages: Vec<working_memory::MessageIn>,
            }
            let a: A = args(arguments)?;
            validate_id("session_id", &a.session_id)?;
            if a.messages.len() > limits::APPEND_MESSAGES_MAX {
                return Err(Error::LimitExceeded { what: "messages in one append".into(), limit: limits::APPEND_MESSAGES_MAX as u64 });
            }
            let messages = working_memory::messages_from(a.messages, now, random)?;
            match store.apply(Op::SessionAppend { session_id: a.session_id, messages }, now).await? {
                Applied::Appended(a) => Ok(json!({ "session_id": a.session_id, "messages": a.message_count })),
                other => Err(Error::Internal { detail: format!("append returned {other:?}") }),
            }
        }
        "update_working_memory_data" => {
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields)]
            struct A {
                session_id: String,
                data: Map<String, Value>,
            }
            let a: A = args(arguments)?;
            validate_id("session_id", &a.session_id)?;
            validate_json_object("data", &a.data, limits::SESSION_DATA_BYTES_MAX)?;
            let mut s = store.read(|e| e.session(&a.session_id, now).cloned()).await?.ok_or_else(|| Error::not_found("session", &a.session_id))?;
            let mut data = s.data.take().unwrap_or_default();
            data.extend(a.data);
            s.data = Some(data);
            // The put re-checks every limit, so an oversized merge is refused whole.
            match store.apply(Op::SessionPut { session: s }, now).await? {
                Applied::Session(s) => Ok(json!({ "session_id": s.session_id, "data": s.data })),
                other => Err(Error::Internal { detail: format!("put returned {other:?}") }),
            }
        }
        "get_cached_tool_result" => {
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields)]
            struct A {
                session_id: String,
                tool: String,
                #[serde(default)]
                args: Option<Value>,
            }
            let a: A = args(arguments)?;
            let entry = tool_cache_get(store, &a.session_id, &a.tool, &a.args.unwrap_or(Value::Object(Map::new())), now).await?;
            Ok(json!({ "hit": entry.is_some(), "entry": entry }))
        }
        "get_account_balance" => {
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields)]
            struct A {
                account_id: String,
            }
            let a: A = args(arguments)?;
            crate::core::ledger::validate_ledger_id("account_id", &a.account_id)?;
            store
                .read(|e| e.ledger().account(&a.account_id).map(|acc| crate::api::ledger::account_json(e.ledger(), acc)))
                .await?
                .ok_or_else(|| Error::not_found("account", &a.account_id))
        }
        "get_current_datetime" => {
            let _: Map<String, Value> = args(arguments)?;
            Ok(json!({ "now": format_rfc3339(now), "now_ms": now }))
        }
        other => Err(Error::Internal { detail: format!("tool {other} has no executor") }),
    }
}
