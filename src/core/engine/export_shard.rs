//! Exports and imports of a tenant spread over shards (issue 21), in the
//! one open format of [`super::export`]: a sharded tenant's export is one
//! file that imports into one object, and any export imports into a
//! sharded tenant.
//!
//! - An export streams: the front asks every shard for its head
//!   ([`super::export_page`]), writes [`merged_header`], then each shard's
//!   own sessions, the key counter, each shard's records below its cut
//!   ([`rebased`]: each shard's keys above the ones before it), the
//!   histories (a record's from the shard that owns it, a deleted
//!   record's from the first shard that holds one), the
//!   [`merged_state`] (home's state, with the state kept per session from
//!   each session's shard) and the end line.
//! - [`split`] cuts one export into one per shard, each a whole export
//!   file: each shard's sessions and records with their per-session
//!   state, the settings every shard keeps alike in each, home's state at
//!   home.
//!
//! Both work line by line on the JSON text, so no state type is decoded
//! here: each shard's import checks its part as any import is checked.

use std::collections::{BTreeMap, HashMap};

use serde_json::{json, Map, Value};

use super::export::EXPORT_FORMAT;
use super::export_page::ExportHead;
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

/// Whether state part `kind` holds maps by session id.
pub(super) fn by_session(kind: &str) -> bool {
    SESSION_MAPS.iter().any(|(k, _)| *k == kind)
}

/// State part `kind`'s JSON text with its maps by session id cut to the
/// sessions `keep` accepts.
pub(super) fn cut_text(kind: &str, json: &str, keep: &dyn Fn(&str) -> bool) -> Result<String> {
    let v: Value = serde_json::from_str(json).map_err(|e| Error::Internal { detail: format!("export {kind}: {e}") })?;
    Ok(cut_sessions(kind, &v, keep).to_string())
}

/// The merged export's header from every shard's head (home's among
/// them): home's, with the one embedder and dimension of every shard that
/// holds records (two embedders: a re-embedding under way, refused).
pub fn merged_header(heads: &[(ShardId, &ExportHead)]) -> Result<String> {
    let home = heads.iter().find(|(s, _)| *s == 0).ok_or_else(|| Error::Internal { detail: "no export head from home".into() })?;
    let Value::Object(mut header) = home.1.header.clone() else { return Err(Error::Internal { detail: "home's export header is not an object".into() }) };
    let mut embedder: Option<&Value> = None;
    for (s, h) in heads.iter().filter(|(_, h)| h.records > 0) {
        let e = h.header.get("embedder").unwrap_or(&Value::Null);
        if !e.is_null() {
            match embedder {
                Some(first) if first != e => return Err(Error::vector(VectorCode::EmbedderMismatch, format!("shard {s}'s records were made by {e}, another shard's by {first}: a re-embedding is under way; export again when it is done"))),
                _ => embedder = Some(e),
            }
        }
        if header.get("dim").is_none_or(Value::is_null) {
            header.insert("dim".into(), h.header.get("dim").cloned().unwrap_or(Value::Null));
        }
    }
    if let Some(e) = embedder {
        header.insert("embedder".into(), e.clone());
    }
    Ok(Value::Object(header).to_string())
}

/// The merged export's state lines: home's, each map by session id with
/// every shard's entries (each head's maps hold its own sessions only).
pub fn merged_state(heads: &[(ShardId, &ExportHead)]) -> Result<Vec<String>> {
    let parse = |s: ShardId, text: &str| -> Result<(String, Value)> {
        let mut v: Value = serde_json::from_str(text).map_err(|e| Error::Internal { detail: format!("shard {s}'s state line: {e}") })?;
        let kind = v.get("type").and_then(Value::as_str).unwrap_or_default().to_owned();
        let part = v.get_mut(&kind).map(Value::take).unwrap_or(Value::Null);
        Ok((kind, part))
    };
    let home = heads.iter().find(|(s, _)| *s == 0).ok_or_else(|| Error::Internal { detail: "no export head from home".into() })?;
    let mut out = Vec::with_capacity(home.1.state.len());
    for text in &home.1.state {
        let (kind, mut part) = parse(0, text)?;
        if !by_session(&kind) {
            out.push(text.clone());
            continue;
        }
        for (s, h) in heads.iter().filter(|(s, _)| *s != 0) {
            for theirs in &h.state {
                let (k, v) = parse(*s, theirs)?;
                if k == kind {
                    union_sessions(&kind, &mut part, &v);
                }
            }
        }
        out.push(line_of(&kind, &part));
    }
    Ok(out)
}

/// A shard's record line under the merged export's key (`base` + its own).
pub fn rebased(text: &str, base: u64) -> Result<String> {
    let bad_line = || Error::Internal { detail: "a shard's memory line is not in the exporter's form".into() };
    let at = text.rfind(",\"key\":").ok_or_else(bad_line)?;
    let key: u64 = text[at + 7..].bytes().take_while(u8::is_ascii_digit).try_fold(0u64, |k, d| k.checked_mul(10)?.checked_add(u64::from(d - b'0'))).ok_or_else(bad_line)?;
    with_key(text, base.checked_add(key).ok_or_else(bad_line)?).ok_or_else(bad_line)
}

/// The key counter's line.
pub fn longterm_line(next_key: u64) -> String {
    format!("{{\"type\":\"longterm\",\"next_key\":{next_key}}}")
}

/// The end line, counting the `lines` before it.
pub fn end_line(lines: usize) -> String {
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
