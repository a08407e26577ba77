//! The memory tools an LLM calls, in one table, and [`resolve`]: running a
//! model's call.
//!
//! A tool is a route. Each names the REST operation it runs as
//! ([`crate::api::schema::Op`]); its argument schema is that operation's
//! fields from the one schema table, so the tool and the route cannot
//! disagree, and running it builds the REST request and hands it to an
//! [`Exec`], which gives it the route's validation, scope and tenancy. The
//! few tools that are not routes (the clock, token counts) declare their own
//! fields in the same terms. OpenAI, Anthropic and MCP schemas are three
//! renderings of the table.
//!
//! The resolver binds a [`ToolCtx`]: the namespace, session and user the
//! caller fixed. A model's arguments may fill in what the context leaves
//! open but never contradict it, so a tool call cannot reach another
//! tenant's memory.

pub mod ceiling;
pub mod exec;
mod run;

use serde::Deserialize;
use serde_json::{json, Map, Value};

pub use exec::{Exec, Failure, StoreExec};
pub use run::allowed_names;
pub(crate) use run::enc as encode_segment;

use crate::api::schema::{self as sch, opt, req, Op, F, S};
use crate::core::error::{Error, Result};
use crate::core::limits;

/// What a tool takes, beyond nothing.
pub enum Args {
    /// The operation's path fields, the named query fields and the fields
    /// of its body object, plus `extra`.
    Route { query: &'static [&'static str], extra: &'static [F] },
    /// One item of the body's `wrap` array: the item's fields.
    One { wrap: &'static str },
    /// Its own fields (tools that are not routes, or that merge).
    Own(&'static [F]),
    /// Its own fields, then those of the object `plus` less `except` (AMS's
    /// flat `memory_prompt`: the search's filters beside the prompt's).
    OwnPlus { own: &'static [F], plus: &'static S, except: &'static [&'static str] },
}

/// One tool.
pub struct ToolSpec {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    /// The REST operation it runs as; `None` for local tools.
    pub op: Option<&'static Op>,
    pub args: Args,
    /// Reads only (MCP's `readOnlyHint`).
    pub read_only: bool,
    /// Another name it answers to (the AMS client's, or an older one).
    pub alias: Option<&'static str>,
}

/// Arguments AMS's MCP search takes that edgemem accepts and ignores: it
/// never rewrites a query, and its recency re-rank always runs server-side.
const OPTIMIZE_QUERY: F = opt("optimize_query", S::Bool, "accepted for AMS compatibility; edgemem does not rewrite queries");
const SERVER_SIDE_RECENCY: F = opt("server_side_recency", S::Bool, "accepted for AMS compatibility; the recency re-rank runs server-side");
const AMS_SEARCH_EXTRAS: &[F] = &[OPTIMIZE_QUERY, SERVER_SIDE_RECENCY];

const SESSION_ARG: F = opt("session_id", S::Id, "the session; defaults to the one the caller bound");
const MODEL_ARG: F = opt("model", S::Str(128), "count in this model's encoding (default cl100k_base)");

/// The tools, in the order models see them.
pub const TOOLS: &[ToolSpec] = &[
    ToolSpec {
        name: "search_long_term_memory",
        title: "Search long-term memory",
        description: "Search long-term memory for facts, preferences and past events: semantic, keyword or hybrid, with filters on topics, entities, memory type and time.",
        op: Some(&sch::LTM_SEARCH),
        args: Args::Route { query: &[], extra: AMS_SEARCH_EXTRAS },
        read_only: true,
        alias: None,
    },
    ToolSpec {
        name: "create_long_term_memories",
        title: "Create long-term memories",
        description: "Store facts, preferences or events in long-term memory. Each memory is one self-contained statement; duplicates are skipped.",
        op: Some(&sch::LTM_CREATE),
        args: Args::Route { query: &[], extra: &[] },
        read_only: false,
        alias: None,
    },
    ToolSpec {
        name: "get_long_term_memory",
        title: "Read a long-term memory",
        description: "Read one long-term memory by its id.",
        op: Some(&sch::LTM_GET),
        args: Args::Route { query: &[], extra: &[] },
        read_only: true,
        alias: None,
    },
    ToolSpec {
        name: "edit_long_term_memory",
        title: "Edit a long-term memory",
        description: "Correct or update one long-term memory by id: its text, topics, entities, type or event date.",
        op: Some(&sch::LTM_PATCH),
        args: Args::Route { query: &[], extra: &[] },
        read_only: false,
        alias: None,
    },
    ToolSpec {
        name: "delete_long_term_memories",
        title: "Delete long-term memories",
        description: "Delete long-term memories by id.",
        op: Some(&sch::LTM_DELETE),
        args: Args::Route { query: &["memory_ids"], extra: &[] },
        read_only: false,
        alias: None,
    },
    ToolSpec {
        name: "add_memory_to_working_memory",
        title: "Remember for later",
        description: "Remember a fact from this conversation: it is added to the session's memories and stored in long-term memory (same id), so later searches find it.",
        op: Some(&sch::SESSION_PUT_OP),
        args: Args::Own(&[
            SESSION_ARG,
            req("text", S::Str(limits::MEMORY_TEXT_BYTES_MAX), "the memory, one self-contained statement"),
            opt("memory_type", sch::MEMORY_TYPE, "default semantic"),
            opt("topics", S::Arr(&S::Str(limits::MEMORY_TAG_BYTES_MAX), limits::MEMORY_TAGS_MAX), ""),
            opt("entities", S::Arr(&S::Str(limits::MEMORY_TAG_BYTES_MAX), limits::MEMORY_TAGS_MAX), ""),
            opt("event_date", S::DateTime, "when the remembered event happened"),
        ]),
        read_only: false,
        alias: Some("lazily_create_long_term_memory"),
    },
    ToolSpec {
        name: "get_working_memory",
        title: "Read the session",
        description: "Read the current session: its running summary, recent messages, memories and data.",
        op: Some(&sch::SESSION_GET),
        args: Args::Route { query: &["model_name", "context_window_max", "recent_messages_limit", "namespace", "user_id"], extra: &[] },
        read_only: true,
        alias: None,
    },
    ToolSpec {
        name: "set_working_memory",
        title: "Replace the session",
        description: "Create or replace the session's messages, memories, summary and data (compacted past the model's window).",
        op: Some(&sch::SESSION_PUT_OP),
        args: Args::Route { query: &["model_name", "context_window_max"], extra: &[] },
        read_only: false,
        alias: None,
    },
    ToolSpec {
        name: "add_messages_to_working_memory",
        title: "Append messages",
        description: "Append messages to the session's history.",
        op: Some(&sch::MESSAGES_POST),
        args: Args::Route { query: &[], extra: &[] },
        read_only: false,
        alias: None,
    },
    ToolSpec {
        name: "update_working_memory_data",
        title: "Update session data",
        description: "Merge keys into the session's JSON data object (top-level keys are replaced).",
        op: Some(&sch::SESSION_PUT_OP),
        args: Args::Own(&[SESSION_ARG, req("data", S::Map, "keys to set")]),
        read_only: false,
        alias: None,
    },
    ToolSpec {
        name: "memory_prompt",
        title: "Build a prompt with memory",
        description: "Build the model prompt for a query: the session's summary and recent turns, then relevant long-term memories, then the query.",
        op: Some(&sch::MEMORY_PROMPT_OP),
        args: Args::OwnPlus {
            own: &[
                req("query", S::Str(limits::QUERY_TEXT_BYTES_MAX), "the user's message"),
                opt("session_id", S::OneOf(&[S::Id, S::Obj(&[req("eq", S::Id, "")], false)]), "the session whose summary and turns lead the prompt (an id, or AMS's {eq: id}); defaults to the bound one"),
                opt("model_name", S::Str(128), "fit the session into this model's window"),
                opt("context_window_max", S::Int(limits::HISTORY_WINDOW_TOKENS_MIN as i64, limits::WINDOW_TOKENS_MAX as i64), ""),
                opt("include_long_term_search", S::Bool, "search long-term memory with the query (default true)"),
                opt("long_term_search", S::OneOf(&[S::Bool, sch::SEARCH_BODY]), "edgemem's form: true, false, or a search whose text defaults to the query"),
                OPTIMIZE_QUERY,
                SERVER_SIDE_RECENCY,
            ],
            plus: &sch::SEARCH_BODY,
            except: &["text", "session_id", "fields", "ef"],
        },
        read_only: true,
        alias: None,
    },
    ToolSpec {
        name: "get_current_datetime",
        title: "Current date and time",
        description: "The current date and time (UTC), to resolve 'today', 'last week' or an event date.",
        op: None,
        args: Args::Own(&[]),
        read_only: true,
        alias: None,
    },
    ToolSpec {
        name: "count_tokens",
        title: "Count tokens",
        description: "Count a text's tokens exactly in a model's encoding.",
        op: None,
        args: Args::Own(&[req("text", S::Str(limits::TOKENIZER_INPUT_BYTES_MAX), ""), MODEL_ARG]),
        read_only: true,
        alias: None,
    },
    ToolSpec {
        name: "fits_context",
        title: "Check a context fits",
        description: "Whether chat messages fit a model's context window, less a reserve for the reply.",
        op: None,
        args: Args::Own(&[
            req("messages", S::Arr(&S::Obj(&[req("role", S::Str(limits::ROLE_BYTES_MAX), ""), req("content", S::Str(limits::MESSAGE_CONTENT_BYTES_MAX), "")], false), limits::SLOTS_MAX), ""),
            opt("model", S::Str(128), "the model whose window and encoding apply"),
            opt("max_tokens", S::Int(1, limits::WINDOW_TOKENS_MAX as i64), "the window, when no model is named"),
            opt("reserve_for_output", S::Int(0, limits::WINDOW_TOKENS_MAX as i64), "tokens kept for the reply"),
        ]),
        read_only: true,
        alias: None,
    },
    ToolSpec {
        name: "ledger_balance",
        title: "Account balance",
        description: "Read a ledger account's balances as exact decimal strings.",
        op: Some(&sch::ACCOUNT_GET),
        args: Args::Route { query: &[], extra: &[] },
        read_only: true,
        alias: Some("get_account_balance"),
    },
    ToolSpec {
        name: "ledger_transfer",
        title: "Transfer between accounts",
        description: "Move an amount between two ledger accounts. The amount is a decimal string such as \"12.50\"; the id makes a retry safe.",
        op: Some(&sch::TRANSFERS_POST),
        args: Args::One { wrap: "transfers" },
        read_only: false,
        alias: None,
    },
    ToolSpec {
        name: "decision_log_append",
        title: "Log a decision",
        description: "Append an observation, reasoning step, decision, action, offer or error to the session's decision log.",
        op: Some(&sch::DECISIONS_POST),
        args: Args::Route { query: &[], extra: &[] },
        read_only: false,
        alias: None,
    },
    ToolSpec {
        name: "get_cached_tool_result",
        title: "Cached tool result",
        description: "Look up a cached result of an earlier tool call before calling the tool again.",
        op: None,
        args: Args::Own(&[SESSION_ARG, req("tool", S::Str(limits::TOOL_NAME_BYTES_MAX), ""), opt("args", S::Map, "")]),
        read_only: true,
        alias: None,
    },
];

/// A tool by its name or alias.
pub fn find(name: &str) -> Option<&'static ToolSpec> {
    TOOLS.iter().find(|t| t.name == name || t.alias == Some(name))
}

/// A tool's argument fields.
pub fn fields(t: &ToolSpec) -> Vec<&'static F> {
    let obj_fields = |s: Option<&'static S>| match s {
        Some(S::Obj(f, _)) => f.iter().collect(),
        _ => Vec::new(),
    };
    match (&t.args, t.op) {
        (Args::Own(f), _) => f.iter().collect(),
        (Args::OwnPlus { own, plus, except }, _) => {
            let mut out: Vec<&'static F> = own.iter().collect();
            let more: Vec<&'static F> = obj_fields(Some(plus)).into_iter().filter(|f| !except.contains(&f.name) && !own.iter().any(|o| o.name == f.name)).collect();
            out.extend(more);
            out
        }
        (Args::One { wrap }, Some(op)) => match obj_fields(op.body).into_iter().find(|f| f.name == *wrap).map(|f| &f.s) {
            Some(S::Arr(item, _)) => obj_fields(Some(item)),
            _ => Vec::new(),
        },
        (Args::Route { query, extra }, Some(op)) => op.path.iter().chain(op.query.iter().filter(|f| query.contains(&f.name))).chain(obj_fields(op.body)).chain(extra.iter()).collect(),
        _ => Vec::new(),
    }
}

/// The JSON Schema of a tool's arguments. A session id is never required:
/// the caller may bind one. Unknown arguments are refused, though AMS's
/// bodies admit them: a model's misspelt argument should come back as an
/// error it can fix.
pub fn input_schema(t: &ToolSpec) -> Value {
    let mut v = sch::object_json(fields(t).into_iter(), false);
    if let Some(Value::Array(r)) = v.get_mut("required") {
        r.retain(|n| n != "session_id");
    }
    v
}

/// The schemas: `openai` (Chat Completions `tools`), `anthropic` or `mcp`
/// (`tools/list` entries), filtered by the agent's allow-list.
pub fn schemas(format: &str, allowed: impl Fn(&str) -> bool) -> Result<Value> {
    let tools = TOOLS.iter().filter(|t| allowed(t.name));
    let one = |t: &ToolSpec| match format {
        "openai" => json!({ "type": "function", "function": { "name": t.name, "description": t.description, "parameters": input_schema(t) } }),
        "anthropic" => json!({ "name": t.name, "description": t.description, "input_schema": input_schema(t) }),
        _ => json!({
            "name": t.name, "title": t.title, "description": t.description, "inputSchema": input_schema(t),
            "annotations": { "title": t.title, "readOnlyHint": t.read_only, "destructiveHint": !t.read_only && t.name.starts_with("delete"), "openWorldHint": false },
        }),
    };
    match format {
        "openai" | "anthropic" | "mcp" => Ok(Value::Array(tools.map(one).collect())),
        other => Err(Error::invalid("format", format!("{other:?} is not openai, anthropic or mcp"))),
    }
}

/// What the caller fixed for every call: a model's arguments may fill in
/// what this leaves open, never contradict it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCtx {
    /// The tenant namespace; a call naming another is `namespace_forbidden`.
    #[serde(default)]
    pub namespace: Option<String>,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub user_id: Option<String>,
    /// Whose tool allow-list applies.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// The ceiling on a result's tokens (default `TOOL_RESULT_TOKENS_DEFAULT`).
    #[serde(default)]
    pub result_tokens_max: Option<usize>,
}

/// A function call as a model produced it: `arguments` is an object or the
/// JSON text of one (OpenAI sends a string).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Call {
    pub name: String,
    #[serde(default)]
    pub arguments: Value,
    #[serde(default)]
    pub agent_id: Option<String>,
    #[serde(default)]
    pub namespace: Option<String>,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub user_id: Option<String>,
    #[serde(default)]
    pub result_tokens_max: Option<usize>,
}

impl Call {
    /// The call's name and arguments, and its context.
    pub fn split(self) -> (String, Value, ToolCtx) {
        let ctx = ToolCtx { namespace: self.namespace, session_id: self.session_id, user_id: self.user_id, agent_id: self.agent_id, result_tokens_max: self.result_tokens_max };
        (self.name, self.arguments, ctx)
    }
}

/// Parses and checks a call's arguments against the tool's schema.
fn arguments(t: &ToolSpec, raw: Value) -> Result<Map<String, Value>> {
    let v = match raw {
        Value::String(s) if s.len() > limits::TOOL_CALL_ARGS_BYTES_MAX => return Err(Error::too_large("arguments", s.len(), limits::TOOL_CALL_ARGS_BYTES_MAX)),
        Value::String(s) if s.trim().is_empty() => Value::Object(Map::new()),
        Value::String(s) => serde_json::from_str(&s).map_err(|e| Error::invalid("arguments", format!("not JSON: {e}")))?,
        Value::Null => Value::Object(Map::new()),
        v => {
            let len = v.to_string().len();
            if len > limits::TOOL_CALL_ARGS_BYTES_MAX {
                return Err(Error::too_large("arguments", len, limits::TOOL_CALL_ARGS_BYTES_MAX));
            }
            v
        }
    };
    let Value::Object(o) = v else { return Err(Error::invalid("arguments", "must be a JSON object")) };
    let fields = fields(t);
    for f in &fields {
        match o.get(f.name) {
            None if f.required && f.name != "session_id" => return Err(Error::invalid(f.name, "is required")),
            None => {}
            Some(v) => f.s.check(v, f.name)?,
        }
    }
    if let Some(k) = o.keys().find(|k| !fields.iter().any(|f| f.name == k.as_str())) {
        return Err(Error::invalid(k.as_str(), format!("is not an argument of {}", t.name)));
    }
    Ok(o)
}

/// Runs a model's call: the allow-list, the arguments against the schema,
/// the context, then the request through `exec`; the result is held under
/// the token ceiling. Unknown tools are `not_found`, refused ones
/// `tool_not_allowed`.
pub async fn resolve(exec: &mut dyn Exec, ctx: &ToolCtx, name: &str, raw: Value) -> std::result::Result<Value, Failure> {
    let t = find(name).ok_or_else(|| Error::not_found("tool", name))?;
    if let Some(n) = ctx.result_tokens_max {
        if !(limits::TOOL_RESULT_TOKENS_MIN..=limits::TOOL_RESULT_TOKENS_MAX).contains(&n) {
            return Err(Error::invalid("result_tokens_max", format!("must be {} to {}", limits::TOOL_RESULT_TOKENS_MIN, limits::TOOL_RESULT_TOKENS_MAX)).into());
        }
    }
    run::allowed(exec, ctx, t).await?;
    let args = arguments(t, raw)?;
    let mut v = run::run(exec, ctx, t, args).await?;
    let tokens_max = ctx.result_tokens_max.unwrap_or(limits::TOOL_RESULT_TOKENS_DEFAULT);
    // A BPE token is at least one byte: a short answer fits without loading an encoding.
    if v.to_string().len() <= tokens_max {
        return Ok(v);
    }
    match crate::api::services::counter_for(exec.services(), None).await {
        Ok(c) => ceiling::fit(&mut v, tokens_max, &c),
        Err(_) => ceiling::fit(&mut v, tokens_max, &crate::core::budget::Estimator),
    };
    Ok(v)
}

/// Ids for tests: a counter, so every ULID of a test differs.
#[cfg(test)]
pub(crate) fn counting_random() -> [u8; 10] {
    thread_local!(static N: std::cell::Cell<u64> = const { std::cell::Cell::new(0) });
    let n = N.with(|c| {
        c.set(c.get() + 1);
        c.get()
    });
    let mut b = [0u8; 10];
    b[..8].copy_from_slice(&n.to_be_bytes());
    b
}

#[cfg(test)]
mod tests;
