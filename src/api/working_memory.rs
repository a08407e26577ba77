//! Agent Memory Server's working-memory JSON, mapped onto the core's
//! [`Session`]. Field names, defaults and timestamp formats follow AMS 0.13
//! as its Python client 0.14 expects them.

use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::core::engine::Appended;
use crate::core::error::{Error, Result};
use crate::core::ids::ulid;
use crate::core::session::{Message, Session};
use crate::core::time::{format_rfc3339, parse_rfc3339, Millis};

/// AMS refuses message timestamps further than this in the future.
const MESSAGE_FUTURE_SKEW_MS: Millis = 300_000;

/// A message as AMS clients send it: only `role` and `content` are required.
#[derive(Debug, Deserialize)]
pub struct MessageIn {
    pub role: String,
    pub content: String,
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub created_at: Option<String>,
    #[serde(default)]
    pub persisted_at: Option<String>,
}

/// The body of `PUT /v1/working-memory/{session_id}` (AMS's
/// `UpdateWorkingMemory`). Unknown fields are ignored, as Pydantic does.
#[derive(Debug, Default, Deserialize)]
pub struct PutBody {
    #[serde(default)]
    pub messages: Vec<MessageIn>,
    #[serde(default)]
    pub memories: Vec<Map<String, Value>>,
    #[serde(default)]
    pub data: Option<Map<String, Value>>,
    #[serde(default)]
    pub context: Option<String>,
    #[serde(default)]
    pub user_id: Option<String>,
    #[serde(default)]
    pub tokens: Option<u64>,
    #[serde(default)]
    pub namespace: Option<String>,
    #[serde(default)]
    pub long_term_memory_strategy: Option<Map<String, Value>>,
    #[serde(default)]
    pub ttl_seconds: Option<u64>,
    /// The user schema version `data` is in (default: the newest registered).
    #[serde(default)]
    pub data_schema_version: Option<u32>,
}

/// The body of edgemem's `POST /v1/working-memory/{session_id}/messages`.
#[derive(Debug, Deserialize)]
pub struct AppendBody {
    pub messages: Vec<MessageIn>,
    /// Counts the new turns in this model's encoding: the answer reports
    /// them, and each turn remembers its count for later prompts.
    #[serde(default)]
    pub model_name: Option<String>,
}

/// Turns incoming messages into core messages: fills ids and times, and
/// applies AMS's rules (non-blank content, no timestamps from the future).
pub fn messages_from(input: Vec<MessageIn>, now: Millis, random: &mut dyn FnMut() -> [u8; 10]) -> Result<Vec<Message>> {
    input
        .into_iter()
        .enumerate()
        .map(|(i, m)| {
            if m.content.trim().is_empty() {
                return Err(Error::invalid(format!("messages[{i}].content"), "must not be empty"));
            }
            let created_at = match &m.created_at {
                Some(s) => parse_rfc3339(&format!("messages[{i}].created_at"), s)?,
                None => now,
            };
            if created_at > now.saturating_add(MESSAGE_FUTURE_SKEW_MS) {
                return Err(Error::invalid(format!("messages[{i}].created_at"), "is more than 5 minutes in the future"));
            }
            let persisted_at = match &m.persisted_at {
                Some(s) => Some(parse_rfc3339(&format!("messages[{i}].persisted_at"), s)?),
                None => None,
            };
            let id = m.id.unwrap_or_else(|| ulid(now, random()));
            Ok(Message { id, role: m.role, content: m.content, created_at, persisted_at, tokens: Default::default() })
        })
        .collect()
}

/// Builds the session a PUT stores. `namespace` is the tenant the request was
/// routed to; a body naming another namespace is refused.
pub fn session_from_put(
    session_id: &str,
    body: PutBody,
    namespace: Option<&str>,
    now: Millis,
    random: &mut dyn FnMut() -> [u8; 10],
) -> Result<Session> {
    if let (Some(routed), Some(given)) = (namespace, body.namespace.as_deref()) {
        if routed != given {
            return Err(Error::invalid("namespace", format!("body says {given:?} but the request is for {routed:?}")));
        }
    }
    let mut s = Session::new(session_id.to_owned(), now);
    s.namespace = namespace.map(str::to_owned).or(body.namespace);
    s.user_id = body.user_id;
    s.messages = messages_from(body.messages, now, random)?;
    s.memories = body.memories;
    s.data = body.data;
    s.context = body.context;
    s.tokens = body.tokens.unwrap_or(0);
    // Checked here, where a bad one can be answered; background extraction
    // then never meets a strategy it cannot run.
    crate::core::extract::Strategy::parse(body.long_term_memory_strategy.as_ref())?;
    s.long_term_memory_strategy = body.long_term_memory_strategy;
    s.ttl_seconds = body.ttl_seconds;
    s.data_schema_version = body.data_schema_version;
    s.validate()?;
    Ok(s)
}

/// AMS's `MemoryMessage` JSON.
pub fn message_json(m: &Message) -> Value {
    json!({
        "id": m.id,
        "role": m.role,
        "content": m.content,
        "created_at": format_rfc3339(m.created_at),
        "persisted_at": m.persisted_at.map(format_rfc3339),
        "discrete_memory_extracted": "f",
    })
}

/// The answer of an append: the new turns as stored (ids and times filled),
/// the session's turn count after it, and its times. Not the session: the
/// answer's size follows the append, not the conversation.
/// What an append answers; with a counter (`model_name` was given), the
/// new turns' token counts and how they were counted.
pub fn appended_json(a: &Appended, counted: Option<(&[usize], String)>) -> Value {
    let mut v = json!({
        "session_id": a.session_id,
        "appended": a.messages.iter().map(message_json).collect::<Vec<_>>(),
        "message_count": a.message_count,
        "updated_at": format_rfc3339(a.updated_at),
        "expires_at": a.expires_at.map(format_rfc3339),
    });
    if let Some((tokens, counting)) = counted {
        v["tokens"] = json!(tokens);
        v["counting"] = json!(counting);
    }
    v
}

/// AMS's `WorkingMemoryResponse`. `recent_messages_limit` keeps only the
/// newest N turns, as AMS's GET does.
pub fn session_json(s: &Session, recent_messages_limit: Option<usize>) -> Value {
    let skip = recent_messages_limit.map_or(0, |n| s.messages.len().saturating_sub(n));
    let strategy = s.long_term_memory_strategy.clone().unwrap_or_else(|| {
        let mut m = Map::new();
        m.insert("strategy".into(), Value::from("discrete"));
        m.insert("config".into(), Value::Object(Map::new()));
        m
    });
    json!({
        "session_id": s.session_id,
        "namespace": s.namespace,
        "user_id": s.user_id,
        "messages": s.messages[skip..].iter().map(message_json).collect::<Vec<_>>(),
        "memories": s.memories,
        "data": s.data.clone().unwrap_or_default(),
        "context": s.context,
        "tokens": s.tokens,
        "ttl_seconds": s.ttl_seconds,
        "long_term_memory_strategy": strategy,
        "last_accessed": format_rfc3339(s.updated_at),
        "created_at": format_rfc3339(s.created_at),
        "updated_at": format_rfc3339(s.updated_at),
        "expires_at": s.expires_at.map(format_rfc3339),
        "data_schema_version": s.data_schema_version,
        "context_percentage_total_used": Value::Null,
        "context_percentage_until_summarization": Value::Null,
        "new_session": Value::Null,
        "unsaved": Value::Null,
    })
}
