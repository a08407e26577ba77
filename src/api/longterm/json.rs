//! AMS's MemoryRecord JSON ↔ the core's [`MemoryRecord`]: times as RFC 3339
//! strings (or null), `discrete_memory_extracted` as `"t"`/`"f"`, defaults
//! filled as AMS fills them.

use serde_json::{json, Map, Value};

use crate::core::error::{Error, Result};
use crate::core::ids::ulid;
use crate::core::retrieval::filter::parse_time;
use crate::core::retrieval::record::{MemoryPatch, MemoryRecord, MemoryType};
use crate::core::time::{format_rfc3339, Millis};

fn string(field: &str, v: Option<&Value>) -> Result<Option<String>> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(Error::invalid(field, "must be a string")),
    }
}

fn strings(field: &str, v: Option<&Value>) -> Result<Option<Vec<String>>> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| x.as_str().map(str::to_owned).ok_or_else(|| Error::invalid(field, "must be an array of strings")))
            .collect::<Result<Vec<_>>>()
            .map(Some),
        Some(_) => Err(Error::invalid(field, "must be an array of strings")),
    }
}

fn time(field: &str, v: Option<&Value>) -> Result<Option<Millis>> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(v) => parse_time(field, v).map(Some),
    }
}

/// A record from AMS JSON (`ClientMemoryRecord` or `MemoryRecord`), for the
/// tenant `namespace`. Missing ids get a ULID; missing times are `now`; the
/// hash is computed unless the client sent one (as AMS keeps it).
pub fn record_from_json(field: &str, v: &Value, namespace: Option<&str>, now: Millis, random: &mut dyn FnMut() -> [u8; 10]) -> Result<MemoryRecord> {
    let o = v.as_object().ok_or_else(|| Error::invalid(field, "must be an object"))?;
    let f = |name: &str| format!("{field}.{name}");
    let text = string(&f("text"), o.get("text"))?.ok_or_else(|| Error::invalid(f("text"), "is required"))?;
    let id = string(&f("id"), o.get("id"))?.unwrap_or_else(|| ulid(now, random()));
    // AMS's ClientMemoryRecord defaults memory_type to "message".
    let memory_type = match string(&f("memory_type"), o.get("memory_type"))? {
        None => MemoryType::Message,
        Some(s) => MemoryType::parse(&f("memory_type"), &s)?,
    };
    let mut r = MemoryRecord::new(id, text, memory_type, now);
    r.session_id = string(&f("session_id"), o.get("session_id"))?;
    r.user_id = string(&f("user_id"), o.get("user_id"))?;
    r.namespace = string(&f("namespace"), o.get("namespace"))?;
    if let (Some(routed), Some(given)) = (namespace, r.namespace.as_deref()) {
        if routed != given {
            return Err(Error::invalid(f("namespace"), format!("says {given:?} but the request is for {routed:?}")));
        }
    }
    if r.namespace.is_none() {
        r.namespace = namespace.map(str::to_owned);
    }
    r.topics = strings(&f("topics"), o.get("topics"))?.unwrap_or_default();
    r.entities = strings(&f("entities"), o.get("entities"))?.unwrap_or_default();
    r.extracted_from = strings(&f("extracted_from"), o.get("extracted_from"))?.unwrap_or_default();
    r.created_at = time(&f("created_at"), o.get("created_at"))?.unwrap_or(now);
    r.last_accessed = time(&f("last_accessed"), o.get("last_accessed"))?.unwrap_or(r.created_at);
    r.updated_at = time(&f("updated_at"), o.get("updated_at"))?.unwrap_or(now).max(r.created_at);
    r.event_date = event_time(o, field)?;
    if r.event_date.is_none() {
        // A date written in the text ("on 7 May 2023") is when the record's
        // event happened; relative ones ("yesterday") are not read here, as
        // the creation time already says when the text was written.
        r.event_date = crate::core::timeexpr::first_date(&r.text, r.created_at, 0, false);
    }
    r.persisted_at = Some(time(&f("persisted_at"), o.get("persisted_at"))?.unwrap_or(now));
    r.pinned = match o.get("pinned") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(Error::invalid(f("pinned"), "must be a boolean")),
    };
    match o.get("metadata") {
        None | Some(Value::Null) => {}
        Some(Value::Object(m)) => r.metadata = m.clone(),
        Some(_) => return Err(Error::invalid(f("metadata"), "must be an object")),
    }
    if let Some(s) = string(&f("extraction_strategy"), o.get("extraction_strategy"))? {
        r.extraction_strategy = s;
    }
    r.discrete_memory_extracted = matches!(o.get("discrete_memory_extracted"), Some(Value::String(s)) if s == "t") || matches!(o.get("discrete_memory_extracted"), Some(Value::Bool(true)));
    // Issue 20's fact fields. `valid_to` and `superseded_by` are derived by
    // the fact chain, so a record read back and sent again is accepted and
    // they are recomputed, never taken from the client.
    r.fact_key = string(&f("fact_key"), o.get("fact_key"))?;
    if let Some(k) = &r.fact_key {
        crate::core::retrieval::record::validate_fact_key(k).map_err(|e| prefix_field(field, e))?;
    }
    r.valid_from = time(&f("valid_from"), o.get("valid_from"))?;
    if r.valid_from.is_some() && r.fact_key.is_none() {
        return Err(Error::invalid(f("valid_from"), "needs a fact_key: only facts have validity"));
    }
    match string(&f("memory_hash"), o.get("memory_hash"))? {
        Some(h) if !h.is_empty() => r.memory_hash = h,
        _ => r.refresh_hash(),
    }
    r.validate()?;
    Ok(r)
}

/// AMS's `MemoryRecord` JSON, plus [`FACT_FIELDS`] when the record states
/// a fact (so AMS clients, which never send `fact_key`, see AMS's shape).
pub fn record_json(r: &MemoryRecord) -> Value {
    let facts = if r.fact_key.is_some() { &FACT_FIELDS[..] } else { &[] };
    Value::Object(RECORD_FIELDS.iter().chain(facts).map(|&f| (f.to_owned(), record_field(r, f))).collect())
}

/// edgemem's fact fields (issue 20), answered for records with a `fact_key`.
pub const FACT_FIELDS: [&str; 4] = ["fact_key", "valid_from", "valid_to", "superseded_by"];

fn prefix_field(field: &str, e: Error) -> Error {
    match e {
        Error::InvalidInput { field: f, reason } => Error::InvalidInput { field: format!("{field}.{f}"), reason },
        other => other,
    }
}

/// The fields of AMS's `MemoryRecord`, in its order.
pub const RECORD_FIELDS: [&str; 21] = [
    "id",
    "text",
    "session_id",
    "user_id",
    "namespace",
    "last_accessed",
    "created_at",
    "updated_at",
    "pinned",
    "access_count",
    "topics",
    "entities",
    "memory_hash",
    "discrete_memory_extracted",
    "memory_type",
    "persisted_at",
    "extracted_from",
    "event_date",
    "extraction_strategy",
    "extraction_strategy_config",
    "metadata",
];

/// One field of a record as JSON, so a lean answer builds only the fields
/// asked for. `field` is one of [`RECORD_FIELDS`] or [`FACT_FIELDS`]; any
/// other is `null`.
pub fn record_field(r: &MemoryRecord, field: &str) -> Value {
    match field {
        "id" => json!(r.id),
        "text" => json!(r.text),
        "session_id" => json!(r.session_id),
        "user_id" => json!(r.user_id),
        "namespace" => json!(r.namespace),
        "last_accessed" => json!(format_rfc3339(r.last_accessed)),
        "created_at" => json!(format_rfc3339(r.created_at)),
        "updated_at" => json!(format_rfc3339(r.updated_at)),
        "pinned" => json!(r.pinned),
        "access_count" => json!(r.access_count),
        "topics" => json!(r.topics),
        "entities" => json!(r.entities),
        "memory_hash" => json!(r.memory_hash),
        "discrete_memory_extracted" => json!(if r.discrete_memory_extracted { "t" } else { "f" }),
        "memory_type" => json!(r.memory_type.as_str()),
        "persisted_at" => json!(r.persisted_at.map(format_rfc3339)),
        "extracted_from" => json!(r.extracted_from),
        "event_date" => json!(r.event_date.map(format_rfc3339)),
        "extraction_strategy" => json!(r.extraction_strategy),
        "extraction_strategy_config" => json!(r.extraction_strategy_config),
        "metadata" => json!(r.metadata),
        "fact_key" => json!(r.fact_key),
        "valid_from" => json!(r.fact_key.as_ref().map(|_| format_rfc3339(crate::core::longterm::facts::valid_from(r)))),
        "valid_to" => json!(r.valid_to.map(format_rfc3339)),
        "superseded_by" => json!(r.superseded_by),
        _ => Value::Null,
    }
}

/// AMS's `event_date`, or `event_at` (issue 19's name for it, accepted as
/// an alias and stored as `event_date`); both given must agree.
fn event_time(o: &Map<String, Value>, prefix: &str) -> Result<Option<Millis>> {
    let name = |f: &str| if prefix.is_empty() { f.to_owned() } else { format!("{prefix}.{f}") };
    let date = time(&name("event_date"), o.get("event_date"))?;
    let at = time(&name("event_at"), o.get("event_at"))?;
    match (date, at) {
        (Some(d), Some(a)) if d != a => Err(Error::invalid(name("event_at"), "differs from event_date (they name the same field)")),
        (d, a) => Ok(d.or(a)),
    }
}

/// AMS's `EditMemoryRecordRequest`: nulls and absent fields change nothing.
pub fn patch_from_json(v: &Value, namespace: Option<&str>) -> Result<MemoryPatch> {
    let o: &Map<String, Value> = v.as_object().ok_or_else(|| Error::invalid("body", "must be an object"))?;
    const KNOWN: [&str; 10] = ["text", "topics", "entities", "memory_type", "namespace", "user_id", "session_id", "event_date", "event_at", "pinned"];
    if let Some(k) = o.keys().find(|k| !KNOWN.contains(&k.as_str())) {
        return Err(Error::invalid(k.as_str(), "is not an editable field"));
    }
    let ns = string("namespace", o.get("namespace"))?;
    if let (Some(routed), Some(given)) = (namespace, ns.as_deref()) {
        if routed != given {
            return Err(Error::invalid("namespace", "a memory cannot move to another namespace (tenant)"));
        }
    }
    Ok(MemoryPatch {
        text: string("text", o.get("text"))?,
        topics: strings("topics", o.get("topics"))?,
        entities: strings("entities", o.get("entities"))?,
        memory_type: string("memory_type", o.get("memory_type"))?.map(|s| MemoryType::parse("memory_type", &s)).transpose()?,
        namespace: ns,
        user_id: string("user_id", o.get("user_id"))?,
        session_id: string("session_id", o.get("session_id"))?,
        event_date: event_time(o, "")?,
        pinned: match o.get("pinned") {
            None | Some(Value::Null) => None,
            Some(Value::Bool(b)) => Some(*b),
            Some(_) => return Err(Error::invalid("pinned", "must be a boolean")),
        },
    })
}
