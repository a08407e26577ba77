//! History over HTTP and for the JS API: compaction through the summarizer
//! hook, AMS's context percentages, and prompt assembly (edgemem's
//! `/v1/prompt` and AMS's `/v1/memory/prompt`).

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::api::services::{counter_for, Services};
use crate::api::{parse_json, working_memory, Request, Response};
use crate::core::budget::models;
use crate::core::budget::Counter;
use crate::core::engine::{Applied, HistoryApplied, HistoryOp, Op};
use crate::core::error::{Error, Result};
use crate::core::history::compact::{self, check_summary, CompactionConfig, Usage};
use crate::core::history::extractive;
use crate::core::history::prompt::{assemble, openai_messages, render_anthropic, render_openai, ChatMessage, RoleContent, PromptBudget, PromptParts, SUMMARY_HEADING};
use crate::core::limits;
use crate::core::session::{validate_id, Session};
use crate::core::time::Millis;
use crate::store::{Backend, Store};

/// The window a request names: AMS's `model_name` and `context_window_max`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Window {
    #[serde(default, deserialize_with = "named_model_name")]
    pub model_name: Option<String>,
    #[serde(default, deserialize_with = "named_context_window_max")]
    pub context_window_max: Option<usize>,
}

// A flattened struct's errors carry no position, so its fields name
// themselves (`Window` is flattened into the compact and prompt bodies).
fn named_model_name<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<String>, D::Error> {
    Option::<String>::deserialize(d).map_err(|e| serde::de::Error::custom(format!("model_name: {e}")))
}

fn named_context_window_max<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<usize>, D::Error> {
    Option::<usize>::deserialize(d).map_err(|e| serde::de::Error::custom(format!("context_window_max: {e}")))
}

impl Window {
    /// From the query string, as AMS's PUT and GET take them.
    pub fn from_query(req: &Request<'_>) -> Result<Window> {
        let context_window_max = match req.param("context_window_max") {
            None => None,
            Some(_) => Some(req.param_usize("context_window_max", 0, limits::HISTORY_WINDOW_TOKENS_MIN, limits::WINDOW_TOKENS_MAX)?),
        };
        Ok(Window { model_name: req.param("model_name").map(str::to_owned), context_window_max })
    }

    /// The window in tokens, when the request named one. An explicit
    /// `context_window_max` wins over the model's published window.
    pub fn tokens(&self) -> Result<Option<usize>> {
        if let Some(n) = self.context_window_max {
            if !(limits::HISTORY_WINDOW_TOKENS_MIN..=limits::WINDOW_TOKENS_MAX).contains(&n) {
                return Err(Error::invalid("context_window_max", format!("must be {} to {}", limits::HISTORY_WINDOW_TOKENS_MIN, limits::WINDOW_TOKENS_MAX)));
            }
            return Ok(Some(n));
        }
        match &self.model_name {
            None => Ok(None),
            Some(m) => models::model(m)
                .map(|m| Some(m.context_window_tokens as usize))
                .ok_or_else(|| Error::invalid("model_name", format!("unknown model {m:?}"))),
        }
    }
}

/// What a compaction did.
#[derive(Debug, Clone, PartialEq)]
pub struct Compacted {
    pub archived: usize,
    pub tokens_before: usize,
    pub tokens_after: usize,
    pub summarizer: &'static str,
    pub session: Session,
}

impl Compacted {
    pub fn to_json(&self) -> Value {
        json!({
            "archived": self.archived,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "summarizer": self.summarizer,
        })
    }
}

/// Compacts a session if its history passes the threshold: plan, run the
/// summarizer (the host's hook, or the extractive default), check its
/// answer, then apply the plan as one op that re-checks it. A hook that
/// fails or answers badly changes nothing (`hook_failed`).
pub async fn compact_session<B: Backend>(
    store: &Store<B>,
    services: &dyn Services,
    counter: &dyn Counter,
    session_id: &str,
    config: &CompactionConfig,
    now: Millis,
) -> Result<Option<Compacted>> {
    validate_id("session_id", session_id)?;
    config.validate()?;
    let session = store.read(|e| e.session(session_id, now).cloned()).await?.ok_or_else(|| Error::not_found("session", session_id))?;
    let Some(plan) = compact::plan(counter, config, session.context.as_deref(), &session.messages)? else {
        return Ok(None);
    };
    let turns = &session.messages[..plan.count];
    let previous = session.context.as_deref();
    let (summary, summarizer) = match services.summarize(turns, previous, config.summary_tokens_max) {
        Some(hook) => (hook.await.map_err(|e| match e {
            Error::HookFailed { .. } => e,
            other => Error::HookFailed { hook: "summarizer".into(), reason: other.to_string() },
        })?, "hook"),
        None => (extractive::summarize(counter, previous, turns, config.summary_tokens_max), "extractive"),
    };
    check_summary(counter, config, &summary)?;
    let op = Op::History(HistoryOp::Compact { session_id: session_id.to_owned(), count: plan.count, through_id: plan.through_id, summary });
    match store.apply(op, now).await? {
        Applied::History(HistoryApplied::Compacted { session, archived }) => {
            let after = compact::usage(counter, config, session.context.as_deref(), &session.messages).total_tokens();
            Ok(Some(Compacted { archived, tokens_before: plan.usage.total_tokens(), tokens_after: after, summarizer, session }))
        }
        other => Err(Error::Internal { detail: format!("compact returned {other:?}") }),
    }
}

/// AMS's two gauges, in percent of the window and of the summarization
/// threshold, rounded to two decimals.
pub fn percentages(usage: &Usage, config: &CompactionConfig) -> (f64, f64) {
    let pct = |n: usize, d: usize| ((n as f64 / d.max(1) as f64) * 10_000.0).round() / 100.0;
    let total = usage.total_tokens();
    (pct(total, config.max_tokens).min(100.0), pct(total, config.summarize_at_tokens).min(100.0))
}

/// Fills the gauges of a session JSON for a window.
pub fn with_percentages(mut body: Value, counter: &dyn Counter, config: &CompactionConfig, session: &Session) -> Value {
    let usage = compact::usage(counter, config, session.context.as_deref(), &session.messages);
    let (used, until) = percentages(&usage, config);
    body["context_percentage_total_used"] = json!(used);
    body["context_percentage_until_summarization"] = json!(until);
    body
}

/// The PUT/GET follow-up when a window is named: compact (PUT only) and
/// report the gauges, as AMS does.
pub async fn after_write<B: Backend>(
    store: &Store<B>,
    services: &dyn Services,
    window: &Window,
    session: Session,
    compact_now: bool,
    now: Millis,
) -> Result<Value> {
    let Some(window_tokens) = window.tokens()? else {
        return Ok(working_memory::session_json(&session, None));
    };
    let counter = counter_for(services, window.model_name.as_deref()).await?;
    let config = CompactionConfig::for_window(window_tokens);
    let mut session = session;
    let mut failure = None;
    if compact_now {
        // The write already succeeded; a summarizer that fails must not
        // turn it into an error, so the failure is reported beside it.
        match compact_session(store, services, &counter, &session.session_id, &config, now).await {
            Ok(Some(done)) => session = done.session,
            Ok(None) => {}
            Err(e @ Error::HookFailed { .. }) => failure = Some(e),
            Err(e) => return Err(e),
        }
    }
    let mut body = with_percentages(working_memory::session_json(&session, None), &counter, &config, &session);
    if let Some(e) = failure {
        body["compaction_error"] = json!({ "detail": e.to_string(), "code": e.code() });
    }
    Ok(body)
}

/// Body of edgemem's `POST /v1/working-memory/{id}/compact`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompactBody {
    #[serde(flatten)]
    pub window: Window,
    #[serde(default)]
    pub summarize_at_tokens: Option<usize>,
    #[serde(default)]
    pub keep_recent_tokens: Option<usize>,
    #[serde(default)]
    pub summary_tokens_max: Option<usize>,
}

impl CompactBody {
    /// The compaction config: defaults for the window, then overrides.
    pub fn config(&self) -> Result<CompactionConfig> {
        let window = self.window.tokens()?.ok_or_else(|| Error::invalid("model_name", "name a model_name or a context_window_max"))?;
        let mut c = CompactionConfig::for_window(window);
        if let Some(n) = self.summarize_at_tokens {
            c.summarize_at_tokens = n;
        }
        if let Some(n) = self.keep_recent_tokens {
            c.keep_recent_tokens = n;
        }
        if let Some(n) = self.summary_tokens_max {
            c.summary_tokens_max = n;
        }
        c.validate()?;
        Ok(c)
    }
}

/// `POST /v1/working-memory/{id}/compact`: compacts now if over the
/// threshold; `{"compacted": false}` when there was nothing to do.
pub async fn compact_route<B: Backend>(store: &Store<B>, services: &dyn Services, id: &str, body: &[u8], now: Millis) -> Result<Value> {
    let body: CompactBody = if body.is_empty() { CompactBody::default() } else { parse_json(body)? };
    let config = body.config()?;
    let counter = counter_for(services, body.window.model_name.as_deref()).await?;
    match compact_session(store, services, &counter, id, &config, now).await? {
        None => Ok(json!({ "compacted": false, "counting": counter.describe() })),
        Some(done) => {
            let mut r = done.to_json();
            r["compacted"] = json!(true);
            r["counting"] = json!(counter.describe());
            r["session"] = with_percentages(working_memory::session_json(&done.session, None), &counter, &config, &done.session);
            Ok(r)
        }
    }
}

/// `GET /v1/working-memory/{id}/archive`: compacted turns, oldest first.
pub async fn archive_route<B: Backend>(store: &Store<B>, req: &Request<'_>, id: &str, now: Millis) -> Result<Value> {
    validate_id("session_id", id)?;
    let offset = req.param_usize("offset", 0, 0, limits::ARCHIVED_MESSAGES_MAX)?;
    let limit = req.param_usize("limit", 100, 1, limits::ARCHIVE_PAGE_LIMIT_MAX)?;
    let (page, total) = store
        .read(|e| e.session(id, now).map(|_| e.archived(id, offset, limit)))
        .await?
        .ok_or_else(|| Error::not_found("session", id))?;
    Ok(json!({ "messages": page.iter().map(working_memory::message_json).collect::<Vec<_>>(), "total": total }))
}

/// Body of edgemem's `POST /v1/prompt`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PromptBody {
    #[serde(default)]
    pub query: Option<String>,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub agent_id: Option<String>,
    /// A model from the table: its window, output limit and tokenizer.
    #[serde(default)]
    pub model: Option<String>,
    /// Overrides the model's window.
    #[serde(default)]
    pub window_tokens: Option<usize>,
    /// Defaults to the model's output limit (capped at a quarter of the
    /// window), or 0 without a model.
    #[serde(default)]
    pub reserve_for_output: Option<usize>,
    #[serde(default)]
    pub tools_tokens: Option<usize>,
    /// Recalled memories, best first (until long-term memory fills them).
    #[serde(default)]
    pub memories: Vec<String>,
    /// `openai` (default), `anthropic` or `neutral`.
    #[serde(default)]
    pub format: Option<String>,
    /// `object` (default): the messages and the report. `plan`: the report
    /// and what to send, by reference (the kept turns' ids, the summary, how
    /// many memories), for callers that hold the messages themselves.
    #[serde(default, rename = "as")]
    pub shape: Option<String>,
    /// The agent's system text, when the agent lives in another object
    /// than the session (a sharded tenant's home): never from the client.
    #[serde(skip)]
    pub agent_system: Option<Option<String>>,
}

/// An assembled prompt plus how it was counted.
pub struct PromptOut {
    pub messages: Vec<ChatMessage>,
    pub report: Value,
    /// Ids of the session turns kept, oldest first (a suffix of the session).
    pub turn_ids: Vec<String>,
    /// The summary as it went into the prompt (possibly cut), if it did.
    pub summary: Option<String>,
}

/// Assembles a prompt from stored state: the agent's system text, the
/// session's summary and turns, the given memories and the query.
pub async fn prompt<B: Backend>(store: &Store<B>, services: &dyn Services, body: &PromptBody, now: Millis) -> Result<PromptOut> {
    if body.query.as_ref().is_some_and(|q| q.len() > limits::MESSAGE_CONTENT_BYTES_MAX) {
        return Err(Error::too_large("query", body.query.as_ref().map_or(0, String::len), limits::MESSAGE_CONTENT_BYTES_MAX));
    }
    let model = match &body.model {
        Some(m) => Some(models::model(m).ok_or_else(|| Error::invalid("model", format!("unknown model {m:?}")))?),
        None => None,
    };
    let window = body.window_tokens.or(model.map(|m| m.context_window_tokens as usize)).ok_or_else(|| Error::invalid("model", "name a model or a window_tokens"))?;
    let reserve = body.reserve_for_output.unwrap_or_else(|| model.map_or(0, |m| (m.output_tokens_max as usize).min(window / 4)));
    let mut budget = PromptBudget::new(window);
    budget.reserve_for_output_tokens = reserve;
    budget.tools_tokens = body.tools_tokens.unwrap_or(0);
    let counter = counter_for(services, body.model.as_deref()).await?;
    if let Some(a) = &body.agent_id {
        validate_id("agent_id", a)?;
    }
    // Assembled where the session lives: it is read, never copied.
    let (a, turn_ids, summary) = store
        .read(|e| -> Result<_> {
            let system = match &body.agent_system {
                Some(given) => given.clone(),
                None => body.agent_id.as_deref().and_then(|a| e.agent(a)).map(|c| c.system_text()),
            }
            .filter(|s| !s.is_empty());
            let session = match body.session_id.as_deref() {
                Some(id) => Some(e.session(id, now).ok_or_else(|| Error::not_found("session", id))?),
                None => None,
            };
            let turns = session.map_or(&[][..], |s| s.messages.as_slice());
            let parts = PromptParts {
                system: system.as_deref(),
                summary: session.and_then(|s| s.context.as_deref()),
                turns,
                memories: &body.memories,
                query: body.query.as_deref(),
            };
            let a = assemble(&counter, &budget, &parts)?;
            let turn_ids: Vec<String> = turns[turns.len() - a.turns_kept.min(turns.len())..].iter().map(|m| m.id.clone()).collect();
            let heading = format!("{SUMMARY_HEADING}\n");
            let summary = a.messages.iter().find(|m| m.role == "system" && m.content.starts_with(&heading)).map(|m| m.content[heading.len()..].to_owned());
            Ok((a, turn_ids, summary))
        })
        .await??;
    let report = json!({
        "used_tokens": a.used_tokens,
        "left_tokens": a.left_tokens,
        "window_tokens": a.window_tokens,
        "reserve_for_output_tokens": reserve,
        "turns_kept": a.turns_kept,
        "memories_kept": a.memories_kept,
        "dropped": a.dropped,
        "counting": counter.describe(),
    });
    Ok(PromptOut { messages: a.messages, report, turn_ids, summary })
}

/// The prompt answer as it is written: the report's fields plus the
/// messages (and Anthropic's `system`), serialized once, straight to bytes,
/// borrowing the assembled text rather than copying it into a `Value`.
#[derive(Serialize)]
struct Answer<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<&'a Value>,
    messages: Messages<'a>,
    #[serde(flatten)]
    report: &'a Value,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Messages<'a> {
    OpenAi(Vec<RoleContent<'a>>),
    Neutral(&'a [ChatMessage]),
    Value(&'a Value),
}

/// `POST /v1/prompt` for its body, read: the messages in the requested
/// vendor shape plus the report, written as UTF-8 JSON once; or, `as:
/// "plan"`, what to send by reference.
pub async fn prompt_answer<B: Backend>(store: &Store<B>, services: &dyn Services, body: PromptBody, now: Millis) -> Result<Response> {
    let plan = match body.shape.as_deref() {
        None | Some("object") => false,
        Some("plan") => true,
        Some(other) => return Err(Error::invalid("as", format!("{other:?} is not object or plan"))),
    };
    let format = body.format.as_deref().unwrap_or("openai");
    if !matches!(format, "openai" | "anthropic" | "neutral") {
        return Err(Error::invalid("format", format!("{format:?} is not openai, anthropic or neutral")));
    }
    let out = prompt(store, services, &body, now).await?;
    let mut r = out.report;
    if plan {
        // No message is built or sent: the caller holds the turns.
        r["plan"] = json!({ "turn_ids": out.turn_ids, "summary": out.summary, "memories_kept": r["memories_kept"] });
        return Ok(Response { status: 200, body: r, raw: None, content_type: None });
    }
    let anthropic = (format == "anthropic").then(|| render_anthropic(&out.messages));
    let answer = Answer {
        system: anthropic.as_ref().map(|a| &a["system"]),
        messages: match (&anthropic, format) {
            (Some(a), _) => Messages::Value(&a["messages"]),
            (None, "neutral") => Messages::Neutral(&out.messages),
            (None, _) => Messages::OpenAi(openai_messages(&out.messages)),
        },
        report: &r,
    };
    let bytes = serde_json::to_vec(&answer).map_err(|e| Error::Internal { detail: format!("encode prompt: {e}") })?;
    Ok(Response::ok_bytes(bytes))
}

/// AMS's `MemoryPromptRequest`.
#[derive(Debug, Deserialize)]
pub struct MemoryPromptBody {
    pub query: String,
    #[serde(default)]
    pub session: Option<MemoryPromptSession>,
    #[serde(default)]
    pub long_term_search: Option<Value>,
}

/// AMS's `WorkingMemoryRequest` inside a memory prompt.
#[derive(Debug, Deserialize)]
pub struct MemoryPromptSession {
    pub session_id: String,
    #[serde(default)]
    pub namespace: Option<String>,
    #[serde(default)]
    pub user_id: Option<String>,
    #[serde(flatten)]
    pub window: Window,
}

/// `POST /v1/memory/prompt`, AMS's shape: `{"messages": [{role, content:
/// {type: "text", text}}]}`, summary first, query last. `memories` are the
/// long-term results, when the caller has searched them.
pub async fn memory_prompt<B: Backend>(store: &Store<B>, services: &dyn Services, body: &MemoryPromptBody, memories: Vec<String>, now: Millis) -> Result<Value> {
    if body.query.trim().is_empty() {
        return Err(Error::invalid("query", "must not be empty"));
    }
    let window = body.session.as_ref().map(|s| s.window.tokens()).transpose()?.flatten();
    let session_id = body.session.as_ref().map(|s| s.session_id.clone());
    if let (Some(s), Some(id)) = (&body.session, &session_id) {
        validate_id("session_id", id)?;
        // AMS scopes the read to the user when one is named.
        if let Some(user) = &s.user_id {
            let owner = store.read(|e| e.session(id, now).map(|x| x.user_id.clone())).await?;
            if let Some(Some(o)) = owner {
                if &o != user {
                    return Err(Error::not_found("session", id));
                }
            }
        }
    }
    let exists = match &session_id {
        Some(id) => store.read(|e| e.session(id, now).is_some()).await?,
        None => false,
    };
    let pb = PromptBody {
        query: Some(body.query.clone()),
        // AMS answers a prompt for a missing session with the query alone.
        session_id: session_id.filter(|_| exists),
        model: body.session.as_ref().and_then(|s| s.window.model_name.clone()),
        window_tokens: Some(window.unwrap_or(limits::WINDOW_TOKENS_MAX)),
        reserve_for_output: Some(0),
        memories,
        ..PromptBody::default()
    };
    let pb = PromptBody { model: pb.model.filter(|m| models::model(m).is_some()), ..pb };
    let out = prompt(store, services, &pb, now).await?;
    let messages: Vec<Value> = out
        .messages
        .iter()
        .map(|m| {
            let role = match m.role.as_str() {
                "system" | "user" | "assistant" => m.role.as_str(),
                _ => "user",
            };
            json!({ "role": role, "content": { "type": "text", "text": m.content } })
        })
        .collect();
    Ok(json!({ "messages": messages }))
}

/// `GET /v1/working-memory/{id}/messages?format=`: the summary first, then
/// the verbatim turns, in OpenAI's (default) or Anthropic's shape.
pub async fn to_messages_route<B: Backend>(store: &Store<B>, req: &Request<'_>, id: &str, now: Millis) -> Result<Value> {
    validate_id("session_id", id)?;
    let s = store.read(|e| e.session(id, now).cloned()).await?.ok_or_else(|| Error::not_found("session", id))?;
    let messages = crate::core::history::to_messages(s.context.as_deref(), &s.messages);
    match req.param("format").unwrap_or("openai") {
        "openai" => Ok(json!({ "messages": render_openai(&messages) })),
        "anthropic" => Ok(render_anthropic(&messages)),
        "neutral" => Ok(json!({ "messages": messages })),
        other => Err(Error::invalid("format", format!("{other:?} is not openai, anthropic or neutral"))),
    }
}
