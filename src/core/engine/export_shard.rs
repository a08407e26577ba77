//! Exports and imports of a tenant spread over shards (issue 21), in the
//! one open format of [`super::export`]: a sharded tenant's export is one
//! file that imports into one object, and any export imports into a
//! sharded tenant.
//!
//! - [`merge`] makes one export of every shard's own: each shard's
//!   sessions and records that it owns under the map (a copy a split left
//!   behind before its collection is skipped), their keys made distinct,
//!   home's state (the ledger, agents, episodes, services, summary views,
//!   the settings every shard keeps alike) from home, and the state kept
//!   per session (archives, tool caches, decision logs, extraction
//!   watermarks) from the session's shard.
//! - [`split`] cuts one export into one per shard, each a whole export
//!   file: each shard's sessions and records with their per-session
//!   state, the settings every shard keeps alike in each, home's state at
//!   home.
//!
//! Both work line by line on the JSON text, so no state type is decoded
//! here: each shard's import checks its part as any import is checked.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::{json, Map, Value};

use super::export::EXPORT_FORMAT;
use crate::core::error::{Error, Result, VectorCode};
use crate::core::privacy::PseudonymKey;
use crate::core::shard::{bucket_of, record_bucket, ShardId, ShardMap};

/// Who owns what: the map, and the key that opens sealed user ids (a
/// record's bucket is its raw user id's).
pub struct Owners<'a> {
    pub map: &'a ShardMap,
    pub key: Option<&'a PseudonymKey>,
}

impl Owners<'_> {
    fn session(&self, id: &str) -> ShardId {
        self.map.owner(bucket_of(id))
    }

    fn record(&self, record: &Value) -> ShardId {
        let id = record.get("id").and_then(Value::as_str).unwrap_or_default();
        let user = record.get("user_id").and_then(Value::as_str).map(|u| self.key.and_then(|k| k.open_user_id(u)).unwrap_or_else(|| u.to_owned()));
        self.map.owner(record_bucket(user.as_deref(), id))
    }
}

/// State lines held at home only.
const HOME_PARTS: [&str; 5] = ["ledger", "episodes", "services", "agent_state", "summary_views"];
/// Maps by session id inside a state line: (line type, member or the
/// whole line's object).
const SESSION_MAPS: [(&str, Option<&str>); 4] = [("history", Some("archived")), ("history", Some("tool_caches")), ("decisions", None), ("extraction", None)];

fn bad(line: usize, reason: impl std::fmt::Display) -> Error {
    Error::invalid(format!("line {line}"), reason.to_string())
}

/// One line read: its number, text and object.
struct Line<'a> {
    n: usize,
    text: &'a str,
    v: Map<String, Value>,
}

impl Line<'_> {
    fn kind(&self) -> &str {
        self.v.get("type").and_then(Value::as_str).unwrap_or_default()
    }
}

/// Every non-blank line of `text` as a JSON object; the first must be an
/// export's header and the last its end line, counting the lines before
/// it (a cut file is refused whole).
fn lines(text: &str) -> Result<Vec<Line<'_>>> {
    let mut out: Vec<Line<'_>> = Vec::new();
    for (i, t) in text.split('\n').enumerate() {
        if t.trim().is_empty() {
            continue;
        }
        let Value::Object(v) = serde_json::from_str::<Value>(t).map_err(|e| bad(i + 1, format!("not JSON: {e}")))? else {
            return Err(bad(i + 1, "is not a JSON object"));
        };
        out.push(Line { n: i + 1, text: t, v });
    }
    let header = out.first().ok_or_else(|| Error::invalid("import", "is empty: no header line"))?;
    if header.v.get("format").and_then(Value::as_str) != Some(EXPORT_FORMAT) {
        return Err(bad(header.n, format!("the first line must be the header, with format {EXPORT_FORMAT:?}")));
    }
    let version = header.v.get("schema_version").and_then(Value::as_u64).ok_or_else(|| bad(header.n, "header: schema_version must be a whole number"))?;
    if version > u64::from(super::export::EXPORT_SCHEMA_VERSION) {
        return Err(Error::SchemaVersionUnsupported { found: u32::try_from(version).unwrap_or(u32::MAX), supported_max: super::export::EXPORT_SCHEMA_VERSION, input: true });
    }
    let end = out.last().filter(|l| l.kind() == "end").ok_or_else(|| Error::invalid("import", "has no end line: the file was cut short"))?;
    if end.v.get("lines").and_then(Value::as_u64) != Some(out.len() as u64 - 1) {
        return Err(bad(end.n, format!("the end line counts {} lines, the file has {}", end.v.get("lines").unwrap_or(&Value::Null), out.len() - 1)));
    }
    Ok(out)
}

/// `v` without the entries of sessions that `keep` refuses.
fn sessions_only(v: &Value, keep: impl Fn(&str) -> bool) -> Value {
    match v {
        Value::Object(m) => Value::Object(m.iter().filter(|(id, _)| keep(id)).map(|(k, x)| (k.clone(), x.clone())).collect()),
        other => other.clone(),
    }
}

/// A state line's object with each per-session map cut to the sessions
/// `keep` accepts (`kind` names the line).
fn cut_sessions(kind: &str, part: &Value, keep: &dyn Fn(&str) -> bool) -> Value {
    let mut out = part.clone();
    for (_, member) in SESSION_MAPS.iter().filter(|(k, _)| *k == kind) {
        match member {
            Some(m) => {
                if let Some(inner) = part.get(*m) {
                    out[*m] = sessions_only(inner, keep);
                }
            }
            None => out = sessions_only(part, keep),
        }
    }
    out
}

/// `{"type": kind, kind: value}`, the type first as the exporter writes it.
fn line_of(kind: &str, value: &Value) -> String {
    format!("{{\"type\":{},{}:{value}}}", json!(kind), json!(kind))
}

/// A memory line of the exporter (`...,"key":N[,"vector":"..."]}`) with
/// its key replaced, the rest of the text kept as it is. The key is the
/// last member but the vector, whose base64url holds no `,` or `"`.
fn with_key(text: &str, key: u64) -> Option<String> {
    let at = text.rfind(",\"key\":")?;
    let digits = &text[at + 7..];
    let len = digits.bytes().take_while(u8::is_ascii_digit).count();
    (len > 0).then(|| format!("{},\"key\":{key}{}", &text[..at], &digits[len..]))
}

/// One export from every shard's (`parts`: each shard and its export,
/// home's among them). See the module docs.
pub fn merge(parts: &[(ShardId, &str)], owners: &Owners<'_>) -> Result<String> {
    let read: Vec<(ShardId, Vec<Line<'_>>)> = parts.iter().map(|(s, t)| Ok((*s, lines(t)?))).collect::<Result<_>>()?;
    let home = read.iter().find(|(s, _)| *s == 0).ok_or_else(|| Error::Internal { detail: "no export from home".into() })?;
    let mut header = home.1[0].v.clone();
    // One embedder for every record, as one object has.
    let mut embedder: Option<&Value> = None;
    for (s, ls) in &read {
        let holds = ls.iter().any(|l| l.kind() == "memory");
        let e = &ls[0].v.get("embedder").unwrap_or(&Value::Null);
        if holds && !e.is_null() {
            match embedder {
                Some(first) if first != *e => return Err(Error::vector(VectorCode::EmbedderMismatch, format!("shard {s}'s records were made by {e}, another shard's by {first}: a re-embedding is under way; export again when it is done"))),
                _ => embedder = Some(e),
            }
        }
        if header.get("dim").is_none_or(Value::is_null) && holds {
            header.insert("dim".into(), ls[0].v.get("dim").cloned().unwrap_or(Value::Null));
        }
    }
    if let Some(e) = embedder {
        header.insert("embedder".into(), e.clone());
    }
    let mut out: Vec<String> = vec![Value::Object(header).to_string()];
    // Sessions, each from its owner.
    for (s, ls) in &read {
        for l in ls.iter().filter(|l| l.kind() == "session") {
            let id = l.v.get("session").and_then(|x| x.get("session_id")).and_then(Value::as_str).ok_or_else(|| bad(l.n, "a session without session_id"))?;
            if owners.session(id) == *s {
                out.push(l.text.to_owned());
            }
        }
    }
    // Records, each from its owner, their keys made distinct: each
    // shard's keys go above the ones before it.
    let mut memories = Vec::new();
    let mut kept: HashSet<String> = HashSet::new();
    let mut base = 0u64;
    for (s, ls) in &read {
        let mut next_key = 0u64;
        for l in ls {
            match l.kind() {
                "longterm" => next_key = l.v.get("next_key").and_then(Value::as_u64).ok_or_else(|| bad(l.n, "next_key must be a whole number"))?,
                "memory" => {
                    let record = l.v.get("record").ok_or_else(|| bad(l.n, "a memory without record"))?;
                    if owners.record(record) != *s {
                        continue;
                    }
                    let key = l.v.get("key").and_then(Value::as_u64).ok_or_else(|| bad(l.n, "key must be a whole number"))?;
                    let rebased = base.checked_add(key).ok_or_else(|| bad(l.n, "key overflows"))?;
                    kept.insert(record.get("id").and_then(Value::as_str).unwrap_or_default().to_owned());
                    memories.push(with_key(l.text, rebased).ok_or_else(|| bad(l.n, "a memory line not in the exporter's form"))?);
                }
                _ => {}
            }
        }
        base = base.checked_add(next_key).ok_or_else(|| Error::Internal { detail: "record keys overflow".into() })?;
    }
    out.push(format!("{{\"type\":\"longterm\",\"next_key\":{base}}}"));
    out.extend(memories);
    // A record's history from the shard that holds the record; a deleted
    // record's from the first shard that has one.
    let mut histories: HashSet<String> = HashSet::new();
    for (s, ls) in &read {
        let held: HashSet<&str> = ls.iter().filter(|l| l.kind() == "memory").filter(|l| l.v.get("record").is_some_and(|r| owners.record(r) == *s)).filter_map(|l| l.v.get("record")?.get("id")?.as_str()).collect();
        for l in ls.iter().filter(|l| l.kind() == "versions") {
            let id = l.v.get("id").and_then(Value::as_str).ok_or_else(|| bad(l.n, "versions without id"))?;
            let ours = held.contains(id) || (!kept.contains(id) && !histories.contains(id));
            if ours && histories.insert(id.to_owned()) {
                out.push(l.text.to_owned());
            }
        }
    }
    // State: home's, with the per-session maps from each session's shard.
    for l in home.1[1..].iter().filter(|l| !matches!(l.kind(), "session" | "longterm" | "memory" | "versions" | "end")) {
        let kind = l.kind();
        let mut part = l.v.get(kind).cloned().unwrap_or(Value::Null);
        if SESSION_MAPS.iter().any(|(k, _)| *k == kind) {
            part = cut_sessions(kind, &part, &|id: &str| owners.session(id) == 0);
            for (s, ls) in read.iter().filter(|(s, _)| *s != 0) {
                let Some(theirs) = ls.iter().find(|x| x.kind() == kind).and_then(|x| x.v.get(kind)) else { continue };
                let theirs = cut_sessions(kind, theirs, &|id: &str| owners.session(id) == *s);
                union_sessions(kind, &mut part, &theirs);
            }
        }
        out.push(line_of(kind, &part));
    }
    let n = out.len();
    out.push(end_line(n));
    let mut text = out.join("\n");
    text.push('\n');
    Ok(text)
}

fn end_line(lines: usize) -> String {
    format!("{{\"type\":\"end\",\"lines\":{lines}}}")
}

/// Adds `theirs`' per-session entries to `ours` (both cut to their own
/// sessions, so no entry is in both).
fn union_sessions(kind: &str, ours: &mut Value, theirs: &Value) {
    for (_, member) in SESSION_MAPS.iter().filter(|(k, _)| *k == kind) {
        let (dst, src) = match member {
            Some(m) => (ours.get_mut(*m), theirs.get(*m)),
            None => (Some(&mut *ours), Some(theirs)),
        };
        if let (Some(Value::Object(d)), Some(Value::Object(s))) = (dst, src) {
            d.extend(s.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
    }
}

/// One export per shard of the map from one export (see the module docs):
/// `(shard, its export)`, every shard of the map, home first.
pub fn split(text: &str, owners: &Owners<'_>) -> Result<Vec<(ShardId, String)>> {
    let ls = lines(text)?;
    let shards = owners.map.shards();
    let mut parts: BTreeMap<ShardId, Vec<String>> = shards.iter().map(|&s| (s, vec![ls[0].text.to_owned()])).collect();
    // A history's record lives where the record does; a deleted record's
    // history at home.
    let mut record_shard: HashMap<String, ShardId> = HashMap::new();
    for l in &ls[1..] {
        let kind = l.kind();
        let to: Vec<ShardId> = match kind {
            "session" => {
                let id = l.v.get("session").and_then(|x| x.get("session_id")).and_then(Value::as_str).ok_or_else(|| bad(l.n, "a session without session_id"))?;
                vec![owners.session(id)]
            }
            "memory" => {
                let record = l.v.get("record").ok_or_else(|| bad(l.n, "a memory without record"))?;
                let s = owners.record(record);
                record_shard.insert(record.get("id").and_then(Value::as_str).unwrap_or_default().to_owned(), s);
                vec![s]
            }
            // Every shard's keys stay below it.
            "longterm" => shards.clone(),
            "versions" => vec![l.v.get("id").and_then(Value::as_str).and_then(|id| record_shard.get(id).copied()).unwrap_or(0)],
            "end" => continue,
            k if HOME_PARTS.contains(&k) || k == "history" || k == "decisions" || k == "extraction" || k == "privacy" => {
                let part = l.v.get(k).cloned().unwrap_or(Value::Null);
                for &s in &shards {
                    let mut mine = if SESSION_MAPS.iter().any(|(x, _)| *x == k) { cut_sessions(k, &part, &|id: &str| owners.session(id) == s) } else { part.clone() };
                    if s != 0 {
                        if HOME_PARTS.contains(&k) {
                            continue;
                        }
                        // Agents are home's; the tool TTLs every shard's.
                        if let (true, Some(m)) = (k == "history", mine.as_object_mut()) {
                            m.remove("agents");
                        }
                    }
                    parts.get_mut(&s).expect("every shard has a part").push(line_of(k, &mine));
                }
                continue;
            }
            other => return Err(bad(l.n, format!("unknown type {other:?}"))),
        };
        for s in to {
            parts.get_mut(&s).ok_or_else(|| Error::Internal { detail: format!("shard {s} is not in the map") })?.push(l.text.to_owned());
        }
    }
    Ok(parts
        .into_iter()
        .map(|(s, mut ls)| {
            let n = ls.len();
            ls.push(end_line(n));
            let mut text = ls.join("\n");
            text.push('\n');
            (s, text)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_memory_lines_key_is_replaced_in_place() {
        let line = r#"{"type":"memory","record":{"id":"a","text":"x,\"key\":9"},"key":12,"vector":"AAAAPw"}"#;
        assert_eq!(with_key(line, 40).as_deref(), Some(r#"{"type":"memory","record":{"id":"a","text":"x,\"key\":9"},"key":40,"vector":"AAAAPw"}"#));
        assert_eq!(with_key(r#"{"type":"memory","record":{},"key":3}"#, 7).as_deref(), Some(r#"{"type":"memory","record":{},"key":7}"#));
        assert_eq!(with_key(r#"{"type":"memory","record":{}}"#, 7), None);
        assert_eq!(line_of("ledger", &json!({"a": 1})), r#"{"type":"ledger","ledger":{"a":1}}"#);
    }
}
