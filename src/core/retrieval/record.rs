//! Agent Memory Server's `MemoryRecord` (agent_memory_server/models.py),
//! its content hash, and its edit request.
//!
//! Field names and defaults are AMS's, so a record round-trips through its
//! JSON with only the times converted (RFC 3339 there, [`Millis`] here).

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::session::{validate_id, validate_json_object};
use crate::core::time::{Millis, MILLIS_MAX};

/// AMS's `MemoryTypeEnum`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MemoryType {
    /// A fact or preference, independent of when it was learned.
    Semantic,
    /// Something that happened at a time (`event_date`).
    Episodic,
    /// A conversation message promoted verbatim.
    Message,
}

impl MemoryType {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryType::Semantic => "semantic",
            MemoryType::Episodic => "episodic",
            MemoryType::Message => "message",
        }
    }

    /// Parses a wire name; anything else is refused with the valid names.
    pub fn parse(field: &str, s: &str) -> Result<MemoryType> {
        match s {
            "semantic" => Ok(MemoryType::Semantic),
            "episodic" => Ok(MemoryType::Episodic),
            "message" => Ok(MemoryType::Message),
            _ => Err(Error::invalid(field, format!("{s:?} is not one of semantic, episodic, message"))),
        }
    }
}

/// One long-term memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryRecord {
    /// Client-provided id; creating an existing id overwrites it (AMS).
    pub id: String,
    pub text: String,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub user_id: Option<String>,
    #[serde(default)]
    pub namespace: Option<String>,
    pub last_accessed: Millis,
    pub created_at: Millis,
    pub updated_at: Millis,
    /// Pinned memories are never removed by a forget policy.
    #[serde(default)]
    pub pinned: bool,
    /// Best-effort count of searches that returned this memory.
    #[serde(default)]
    pub access_count: u64,
    /// AMS sends `null` for none; held as empty.
    #[serde(default, deserialize_with = "null_as_empty")]
    pub topics: Vec<String>,
    #[serde(default, deserialize_with = "null_as_empty")]
    pub entities: Vec<String>,
    /// See [`memory_hash`]. Kept as given when a client supplies one, as AMS
    /// does.
    pub memory_hash: String,
    /// AMS's `discrete_memory_extracted`, `"t"` or `"f"` on the wire.
    #[serde(default, with = "tf_flag")]
    pub discrete_memory_extracted: bool,
    pub memory_type: MemoryType,
    /// When the memory reached long-term storage.
    #[serde(default)]
    pub persisted_at: Option<Millis>,
    /// Ids of the messages this memory was extracted from.
    #[serde(default, deserialize_with = "null_as_empty")]
    pub extracted_from: Vec<String>,
    /// When the event described happened (episodic memories).
    #[serde(default)]
    pub event_date: Option<Millis>,
    /// AMS default `"discrete"`.
    #[serde(default = "default_strategy")]
    pub extraction_strategy: String,
    #[serde(default)]
    #[serde(serialize_with = "crate::core::exact_json::map")]
    pub extraction_strategy_config: Map<String, Value>,
    /// Free-form, not indexed.
    #[serde(default)]
    #[serde(serialize_with = "crate::core::exact_json::map")]
    pub metadata: Map<String, Value>,
    /// What this record states the value of (`user.units`): a newer record
    /// with the same key in the same (namespace, user) supersedes it. See
    /// the chain rule in `longterm::facts`.
    #[serde(default)]
    pub fact_key: Option<String>,
    /// From when the fact holds; `created_at` when not given.
    #[serde(default)]
    pub valid_from: Option<Millis>,
    /// Until when it held: its successor's `valid_from`. Derived from the
    /// chain, never taken from a client.
    #[serde(default)]
    pub valid_to: Option<Millis>,
    /// The id of the record that superseded this one in its fact chain.
    /// Derived, like `valid_to`.
    #[serde(default)]
    pub superseded_by: Option<String>,
}

fn default_strategy() -> String {
    "discrete".to_owned()
}

fn null_as_empty<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Vec<String>, D::Error> {
    Ok(Option::<Vec<String>>::deserialize(d)?.unwrap_or_default())
}

/// AMS spells this flag `"t"` / `"f"` (a Redis tag); booleans are accepted too.
mod tf_flag {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &bool, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(if *v { "t" } else { "f" })
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Flag {
            Bool(bool),
            Str(String),
        }
        match Flag::deserialize(d)? {
            Flag::Bool(b) => Ok(b),
            Flag::Str(s) if s == "t" => Ok(true),
            Flag::Str(s) if s == "f" => Ok(false),
            Flag::Str(s) => Err(serde::de::Error::custom(format!("expected \"t\" or \"f\", got {s:?}"))),
        }
    }
}

impl MemoryRecord {
    /// A record with AMS's defaults, created, updated and accessed at `now`,
    /// its hash computed. Call [`MemoryRecord::validate`] after setting the
    /// other fields, and [`MemoryRecord::refresh_hash`] if the hashed ones
    /// changed.
    pub fn new(id: impl Into<String>, text: impl Into<String>, memory_type: MemoryType, now: Millis) -> MemoryRecord {
        let mut r = MemoryRecord {
            id: id.into(),
            text: text.into(),
            session_id: None,
            user_id: None,
            namespace: None,
            last_accessed: now,
            created_at: now,
            updated_at: now,
            pinned: false,
            access_count: 0,
            topics: Vec::new(),
            entities: Vec::new(),
            memory_hash: String::new(),
            discrete_memory_extracted: false,
            memory_type,
            persisted_at: None,
            extracted_from: Vec::new(),
            event_date: None,
            extraction_strategy: default_strategy(),
            extraction_strategy_config: Map::new(),
            metadata: Map::new(),
            fact_key: None,
            valid_from: None,
            valid_to: None,
            superseded_by: None,
        };
        r.refresh_hash();
        r
    }

    /// AMS's hash of this record's content fields.
    pub fn compute_hash(&self) -> String {
        memory_hash(&self.text, self.user_id.as_deref(), self.session_id.as_deref(), self.namespace.as_deref(), self.memory_type)
    }

    /// Sets `memory_hash` from the content fields.
    pub fn refresh_hash(&mut self) {
        self.memory_hash = self.compute_hash();
    }

    /// Checks every limit and shape rule. Runs on input and again inside
    /// `apply`, so a record read back from storage obeys the same rules.
    pub fn validate(&self) -> Result<()> {
        validate_id("id", &self.id)?;
        if self.text.is_empty() {
            return Err(Error::invalid("text", "must not be empty"));
        }
        if self.text.len() > limits::MEMORY_TEXT_BYTES_MAX {
            return Err(Error::too_large("text", self.text.len(), limits::MEMORY_TEXT_BYTES_MAX));
        }
        for (field, v) in [("session_id", &self.session_id), ("user_id", &self.user_id), ("namespace", &self.namespace)] {
            if let Some(v) = v {
                validate_id(field, v)?;
            }
        }
        validate_tags("topics", &self.topics)?;
        validate_tags("entities", &self.entities)?;
        if self.extracted_from.len() > limits::MEMORY_EXTRACTED_FROM_MAX {
            return Err(Error::LimitExceeded { what: "extracted_from ids".into(), limit: limits::MEMORY_EXTRACTED_FROM_MAX as u64 });
        }
        for (i, id) in self.extracted_from.iter().enumerate() {
            validate_id(&format!("extracted_from[{i}]"), id)?;
            if id.contains(',') {
                return Err(Error::invalid(format!("extracted_from[{i}]"), "must not contain a comma"));
            }
        }
        if self.memory_hash.is_empty() || self.memory_hash.len() > limits::ID_BYTES_MAX || self.memory_hash.chars().any(char::is_control) {
            return Err(Error::invalid("memory_hash", format!("must be 1 to {} bytes without control characters", limits::ID_BYTES_MAX)));
        }
        let s = &self.extraction_strategy;
        if s.is_empty() || s.len() > limits::MEMORY_STRATEGY_BYTES_MAX || s.chars().any(char::is_control) {
            return Err(Error::invalid(
                "extraction_strategy",
                format!("must be 1 to {} bytes without control characters", limits::MEMORY_STRATEGY_BYTES_MAX),
            ));
        }
        if let Some(k) = &self.fact_key {
            validate_fact_key(k)?;
        }
        if let Some(by) = &self.superseded_by {
            validate_id("superseded_by", by)?;
        }
        validate_json_object("extraction_strategy_config", &self.extraction_strategy_config, limits::MEMORY_METADATA_BYTES_MAX)?;
        validate_json_object("metadata", &self.metadata, limits::MEMORY_METADATA_BYTES_MAX)?;
        let times = [
            ("last_accessed", Some(self.last_accessed)),
            ("created_at", Some(self.created_at)),
            ("updated_at", Some(self.updated_at)),
            ("persisted_at", self.persisted_at),
            ("event_date", self.event_date),
            ("valid_from", self.valid_from),
            ("valid_to", self.valid_to),
        ];
        for (field, t) in times {
            if t.is_some_and(|t| t > MILLIS_MAX) {
                return Err(Error::invalid(field, "is after 9999-12-31"));
            }
        }
        Ok(())
    }
}

/// A fact key: a dotted name such as `user.units` or `wallet.primary_address`,
/// compared byte for byte.
pub fn validate_fact_key(k: &str) -> Result<()> {
    if k.trim().is_empty() || k.len() > limits::LTM_FACT_KEY_BYTES_MAX || k.chars().any(char::is_control) {
        return Err(Error::invalid("fact_key", format!("must be 1 to {} bytes, not blank, without control characters", limits::LTM_FACT_KEY_BYTES_MAX)));
    }
    Ok(())
}

/// Topics and entities: AMS stores them as a comma-separated Redis tag, so
/// it refuses commas; we also refuse empty and control-character values and
/// bound count and length.
fn validate_tags(field: &str, tags: &[String]) -> Result<()> {
    if tags.len() > limits::MEMORY_TAGS_MAX {
        return Err(Error::LimitExceeded { what: field.into(), limit: limits::MEMORY_TAGS_MAX as u64 });
    }
    for (i, t) in tags.iter().enumerate() {
        if t.trim().is_empty() {
            return Err(Error::invalid(format!("{field}[{i}]"), "must not be empty"));
        }
        if t.len() > limits::MEMORY_TAG_BYTES_MAX {
            return Err(Error::too_large(format!("{field}[{i}]"), t.len(), limits::MEMORY_TAG_BYTES_MAX));
        }
        if t.contains(',') {
            return Err(Error::invalid(format!("{field}[{i}]"), "must not contain a comma (AMS stores tags comma-separated)"));
        }
        if t.chars().any(char::is_control) {
            return Err(Error::invalid(format!("{field}[{i}]"), "must not contain control characters"));
        }
    }
    Ok(())
}

/// AMS's `generate_memory_hash` (agent_memory_server/utils/recency.py):
/// the SHA-256, in lowercase hex, of Python's
/// `json.dumps({"text", "user_id", "session_id", "namespace", "memory_type"},
/// sort_keys=True)`, i.e. keys in sorted order, `", "` and `": "`
/// separators, `null` for a missing value and every non-printable-ASCII
/// character escaped (`ensure_ascii`). Equal content gives equal hashes in
/// both servers, so deduplication agrees.
pub fn memory_hash(text: &str, user_id: Option<&str>, session_id: Option<&str>, namespace: Option<&str>, memory_type: MemoryType) -> String {
    let mut json = String::with_capacity(text.len() + 128);
    json.push_str("{\"memory_type\": ");
    push_py_json_str(&mut json, Some(memory_type.as_str()));
    json.push_str(", \"namespace\": ");
    push_py_json_str(&mut json, namespace);
    json.push_str(", \"session_id\": ");
    push_py_json_str(&mut json, session_id);
    json.push_str(", \"text\": ");
    push_py_json_str(&mut json, Some(text));
    json.push_str(", \"user_id\": ");
    push_py_json_str(&mut json, user_id);
    json.push('}');
    let digest = Sha256::digest(json.as_bytes());
    let mut hex = String::with_capacity(64);
    for b in digest {
        hex.push(char::from(HEX[usize::from(b >> 4)]));
        hex.push(char::from(HEX[usize::from(b & 15)]));
    }
    hex
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Python's `json.dumps` string encoding with `ensure_ascii=True`: printable
/// ASCII (space to `~`) as is except `"` and `\`; `\n \r \t \b \f` short;
/// everything else as `\uXXXX` in lowercase hex, astral characters as a
/// surrogate pair.
fn push_py_json_str(out: &mut String, s: Option<&str>) {
    let Some(s) = s else {
        out.push_str("null");
        return;
    };
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units).iter() {
                    out.push_str("\\u");
                    for shift in [12u16, 8, 4, 0] {
                        out.push(char::from(HEX[usize::from((u >> shift) & 15)]));
                    }
                }
            }
        }
    }
    out.push('"');
}

/// AMS's `EditMemoryRecordRequest`: the fields PATCH may change. A `None`
/// leaves the field as it is (AMS drops nulls, so a PATCH cannot clear a
/// field either).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryPatch {
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub topics: Option<Vec<String>>,
    #[serde(default)]
    pub entities: Option<Vec<String>>,
    #[serde(default)]
    pub memory_type: Option<MemoryType>,
    #[serde(default)]
    pub namespace: Option<String>,
    #[serde(default)]
    pub user_id: Option<String>,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub event_date: Option<Millis>,
    #[serde(default)]
    pub pinned: Option<bool>,
}

impl MemoryPatch {
    /// Whether the patch changes nothing (AMS answers "No fields provided
    /// for update").
    pub fn is_empty(&self) -> bool {
        *self == MemoryPatch::default()
    }

    /// The record with the patch applied at `now`, validated; `record` is
    /// not touched, so a refused patch changes nothing.
    ///
    /// `updated_at` becomes `now`. The hash is recomputed whenever a hashed
    /// field changes; AMS recomputes it only when `text` is in the patch,
    /// which leaves a stale hash after, say, a namespace change.
    pub fn apply(&self, record: &MemoryRecord, now: Millis) -> Result<MemoryRecord> {
        if self.is_empty() {
            return Err(Error::invalid("body", "no fields provided for update"));
        }
        let mut r = record.clone();
        if let Some(v) = &self.text {
            r.text.clone_from(v);
        }
        if let Some(v) = &self.topics {
            r.topics.clone_from(v);
        }
        if let Some(v) = &self.entities {
            r.entities.clone_from(v);
        }
        if let Some(v) = self.memory_type {
            r.memory_type = v;
        }
        if let Some(v) = &self.namespace {
            r.namespace = Some(v.clone());
        }
        if let Some(v) = &self.user_id {
            r.user_id = Some(v.clone());
        }
        if let Some(v) = &self.session_id {
            r.session_id = Some(v.clone());
        }
        if let Some(v) = self.event_date {
            r.event_date = Some(v);
        }
        if let Some(v) = self.pinned {
            r.pinned = v;
        }
        r.updated_at = now;
        let hashed_changed = r.text != record.text
            || r.user_id != record.user_id
            || r.session_id != record.session_id
            || r.namespace != record.namespace
            || r.memory_type != record.memory_type;
        if hashed_changed {
            r.refresh_hash();
        }
        r.validate()?;
        Ok(r)
    }
}
