//! Working-memory sessions, modelled on Agent Memory Server's `WorkingMemory`.
//!
//! A session holds the conversation turns verbatim, a free-form JSON `data`
//! object, an optional running summary (`context`) and an optional TTL. These
//! types are what the engine stores; the API layer maps AMS's JSON onto them.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::time::{Millis, MILLIS_MAX};

/// One conversation turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// ULID, unique within the session.
    pub id: String,
    /// `user`, `assistant`, `system`, `tool`, `function`, or a caller's own role.
    pub role: String,
    pub content: String,
    pub created_at: Millis,
    /// When the turn was promoted to long-term memory (AMS's `persisted_at`).
    #[serde(default)]
    pub persisted_at: Option<Millis>,
    /// The turn's token count in the last encoding that counted it, so a
    /// prompt over a long session counts each turn once. Derived state: never
    /// persisted, and ignored by equality.
    #[serde(skip)]
    pub tokens: TokenCount,
}

/// A remembered token count: which counter ([`crate::core::budget::Counter::cache_key`])
/// and how many tokens. Filled on first count (or by an append that names a
/// model); a count under another encoding replaces it.
#[derive(Debug, Clone, Default)]
pub struct TokenCount(std::cell::Cell<Option<(u8, u32)>>);

impl TokenCount {
    /// The count under counter `key`, computing and remembering it on a miss.
    /// A counter with no key (a caller's function) is never remembered.
    pub fn get_or(&self, key: Option<u8>, count: impl FnOnce() -> usize) -> usize {
        let Some(key) = key else { return count() };
        match self.0.get() {
            Some((k, n)) if k == key => n as usize,
            _ => {
                let n = count();
                self.0.set(Some((key, u32::try_from(n).unwrap_or(u32::MAX))));
                n
            }
        }
    }

    /// The remembered count under counter `key`, if any.
    pub fn get(&self, key: u8) -> Option<usize> {
        self.0.get().filter(|(k, _)| *k == key).map(|(_, n)| n as usize)
    }
}

impl PartialEq for TokenCount {
    fn eq(&self, _: &TokenCount) -> bool {
        true
    }
}

/// A working-memory session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    pub session_id: String,
    #[serde(default)]
    pub namespace: Option<String>,
    #[serde(default)]
    pub user_id: Option<String>,
    #[serde(default)]
    pub messages: Vec<Message>,
    /// A JSON object, or absent.
    #[serde(default)]
    #[serde(serialize_with = "crate::core::exact_json::option_map")]
    pub data: Option<Map<String, Value>>,
    /// AMS's structured memories attached to the session, held as JSON
    /// objects with an `id` until long-term memory takes them over.
    #[serde(default)]
    #[serde(serialize_with = "crate::core::exact_json::vec_map")]
    pub memories: Vec<Map<String, Value>>,
    /// AMS's `long_term_memory_strategy`, kept verbatim.
    #[serde(default)]
    #[serde(serialize_with = "crate::core::exact_json::option_map")]
    pub long_term_memory_strategy: Option<Map<String, Value>>,
    /// Token count reported by the client (AMS's `tokens`).
    #[serde(default)]
    pub tokens: u64,
    /// The running summary of turns compacted out of `messages`.
    #[serde(default)]
    pub context: Option<String>,
    /// `None` means the session is durable.
    #[serde(default)]
    pub ttl_seconds: Option<u64>,
    pub created_at: Millis,
    pub updated_at: Millis,
    /// When the TTL runs out; derived from `updated_at + ttl_seconds` on each
    /// write, so writing a session refreshes its TTL, as in AMS.
    #[serde(default)]
    pub expires_at: Option<Millis>,
    /// The user schema version `data` is in; `None` is version 1 (written
    /// before any `session_data` schema was registered).
    #[serde(default)]
    pub data_schema_version: Option<u32>,
}

impl Session {
    /// An empty durable session created at `now`.
    pub fn new(session_id: String, now: Millis) -> Session {
        Session {
            session_id,
            namespace: None,
            user_id: None,
            messages: Vec::new(),
            data: None,
            memories: Vec::new(),
            long_term_memory_strategy: None,
            tokens: 0,
            context: None,
            ttl_seconds: None,
            created_at: now,
            updated_at: now,
            expires_at: None,
            data_schema_version: None,
        }
    }

    /// Whether the TTL has run out at `now`.
    pub fn is_expired(&self, now: Millis) -> bool {
        self.expires_at.is_some_and(|at| at <= now)
    }

    /// Recomputes `expires_at` after a write at `now`.
    pub(crate) fn touch(&mut self, now: Millis) {
        self.updated_at = now;
        self.expires_at = self.ttl_seconds.map(|ttl| now.saturating_add(ttl.saturating_mul(1000)).min(MILLIS_MAX));
    }

    /// Checks every limit and shape rule. Runs on input and again inside
    /// `apply`, so a record read back from storage is held to the same rules.
    pub fn validate(&self) -> Result<()> {
        validate_id("session_id", &self.session_id)?;
        if let Some(ns) = &self.namespace {
            validate_id("namespace", ns)?;
        }
        if let Some(user) = &self.user_id {
            validate_id("user_id", user)?;
        }
        if self.messages.len() > limits::SESSION_MESSAGES_MAX {
            return Err(Error::LimitExceeded { what: "messages in a session".into(), limit: limits::SESSION_MESSAGES_MAX as u64 });
        }
        validate_messages(&self.messages)?;
        if let Some(ctx) = &self.context {
            if ctx.len() > limits::CONTEXT_BYTES_MAX {
                return Err(Error::too_large("context", ctx.len(), limits::CONTEXT_BYTES_MAX));
            }
        }
        if let Some(data) = &self.data {
            validate_json_object("data", data, limits::SESSION_DATA_BYTES_MAX)?;
        }
        if let Some(strategy) = &self.long_term_memory_strategy {
            validate_json_object("long_term_memory_strategy", strategy, limits::SESSION_DATA_BYTES_MAX)?;
        }
        if self.memories.len() > limits::SESSION_MEMORIES_MAX {
            return Err(Error::LimitExceeded { what: "memories in a session".into(), limit: limits::SESSION_MEMORIES_MAX as u64 });
        }
        let mut memory_bytes = 0;
        for (i, m) in self.memories.iter().enumerate() {
            match m.get("id") {
                Some(Value::String(id)) => validate_id(&format!("memories[{i}].id"), id)?,
                _ => return Err(Error::invalid(format!("memories[{i}].id"), "every memory must have a string id")),
            }
            memory_bytes += validate_json_object(&format!("memories[{i}]"), m, limits::SESSION_DATA_BYTES_MAX)?;
        }
        if memory_bytes > limits::SESSION_DATA_BYTES_MAX {
            return Err(Error::too_large("memories", memory_bytes, limits::SESSION_DATA_BYTES_MAX));
        }
        if let Some(ttl) = self.ttl_seconds {
            if ttl == 0 || ttl > limits::TTL_SECONDS_MAX {
                return Err(Error::invalid("ttl_seconds", format!("must be between 1 and {}", limits::TTL_SECONDS_MAX)));
            }
        }
        Ok(())
    }
}

/// Ids are non-empty, bounded, and free of control characters; `/` is
/// refused because ids appear in URL paths and storage keys.
pub fn validate_id(field: &str, id: &str) -> Result<()> {
    if id.is_empty() {
        return Err(Error::invalid(field, "must not be empty"));
    }
    if id.len() > limits::ID_BYTES_MAX {
        return Err(Error::too_large(field, id.len(), limits::ID_BYTES_MAX));
    }
    if id.chars().any(|c| c.is_control() || c == '/') {
        return Err(Error::invalid(field, "must not contain control characters or '/'"));
    }
    // URL path normalization would turn these into other routes, and a
    // `..` inside an id is never needed and often an attack.
    if id == "." || id.contains("..") {
        return Err(Error::invalid(field, "must not be '.' or contain '..'"));
    }
    Ok(())
}

/// Checks messages for shape and size, and that ids are unique among them.
pub fn validate_messages(messages: &[Message]) -> Result<()> {
    let mut ids = std::collections::HashSet::with_capacity(messages.len());
    for (i, m) in messages.iter().enumerate() {
        validate_id(&format!("messages[{i}].id"), &m.id)?;
        if !ids.insert(m.id.as_str()) {
            return Err(Error::invalid(format!("messages[{i}].id"), format!("duplicate message id {:?}", m.id)));
        }
        if m.role.is_empty() || m.role.len() > limits::ROLE_BYTES_MAX || !m.role.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(Error::invalid(
                format!("messages[{i}].role"),
                format!("must be 1 to {} printable ASCII characters", limits::ROLE_BYTES_MAX),
            ));
        }
        if m.content.len() > limits::MESSAGE_CONTENT_BYTES_MAX {
            return Err(Error::too_large(format!("messages[{i}].content"), m.content.len(), limits::MESSAGE_CONTENT_BYTES_MAX));
        }
        if m.created_at > MILLIS_MAX {
            return Err(Error::invalid(format!("messages[{i}].created_at"), "after year 9999"));
        }
    }
    Ok(())
}

/// A JSON object must stay within the size and depth limits. Returns its
/// serialized size.
pub fn validate_json_object(field: &str, data: &Map<String, Value>, bytes_max: usize) -> Result<usize> {
    fn depth_ok(v: &Value, depth: usize) -> bool {
        if depth > limits::JSON_DEPTH_MAX {
            return false;
        }
        match v {
            Value::Array(a) => a.iter().all(|x| depth_ok(x, depth + 1)),
            Value::Object(o) => o.values().all(|x| depth_ok(x, depth + 1)),
            _ => true,
        }
    }
    if !data.values().all(|v| depth_ok(v, 2)) {
        return Err(Error::invalid(field, format!("nested deeper than {} levels", limits::JSON_DEPTH_MAX)));
    }
    let bytes = serde_json::to_vec(data).map_err(|e| Error::invalid(field, e.to_string()))?.len();
    if bytes > bytes_max {
        return Err(Error::too_large(field, bytes, bytes_max));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(id: &str) -> Message {
        Message { id: id.into(), role: "user".into(), content: "hi".into(), created_at: 1, persisted_at: None, tokens: Default::default() }
    }

    #[test]
    fn ttl_sets_expiry_on_touch() {
        let mut s = Session::new("s".into(), 1000);
        s.ttl_seconds = Some(5);
        s.touch(2000);
        assert_eq!(s.expires_at, Some(7000));
        assert!(!s.is_expired(6999));
        assert!(s.is_expired(7000));
    }

    #[test]
    fn validation_rejects_bad_shapes() {
        let base = Session::new("s".into(), 0);
        type Mutate = Box<dyn Fn(&mut Session)>;
        let cases: Vec<(&str, Mutate)> = vec![
            ("invalid_input", Box::new(|s| s.session_id.clear())),
            ("invalid_input", Box::new(|s| s.session_id = "a/b".into())),
            ("invalid_input", Box::new(|s| s.session_id = "..".into())),
            ("invalid_input", Box::new(|s| s.session_id = "tab\there".into())),
            ("payload_too_large", Box::new(|s| s.session_id = "x".repeat(limits::ID_BYTES_MAX + 1))),
            ("invalid_input", Box::new(|s| s.messages = vec![msg("a"), msg("a")])),
            ("invalid_input", Box::new(|s| s.messages = vec![Message { role: "".into(), ..msg("a") }])),
            ("payload_too_large", Box::new(|s| s.messages = vec![Message { content: "x".repeat(limits::MESSAGE_CONTENT_BYTES_MAX + 1), ..msg("a") }])),
            ("invalid_input", Box::new(|s| s.ttl_seconds = Some(0))),
            ("invalid_input", Box::new(|s| s.ttl_seconds = Some(limits::TTL_SECONDS_MAX + 1))),
            ("payload_too_large", Box::new(|s| s.context = Some("x".repeat(limits::CONTEXT_BYTES_MAX + 1)))),
            ("invalid_input", Box::new(|s| {
                let mut v = Value::Null;
                for _ in 0..limits::JSON_DEPTH_MAX + 2 {
                    v = Value::Array(vec![v]);
                }
                let mut m = Map::new();
                m.insert("deep".into(), v);
                s.data = Some(m);
            })),
        ];
        for (code, mutate) in cases {
            let mut s = base.clone();
            mutate(&mut s);
            assert_eq!(s.validate().unwrap_err().code(), code, "{s:?}");
        }
        assert!(base.validate().is_ok());
    }
}
