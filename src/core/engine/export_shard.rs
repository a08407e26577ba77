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
use crate::core::shard::{bucket_of, record_bucket, Bucket, ShardId, ShardMap};

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

    fn bucket(&self, record: &Value) -> Bucket {
        let id = record.get("id").and_then(Value::as_str).unwrap_or_default();
        let user = record.get("user_id").and_then(Value::as_str).map(|u| self.key.and_then(|k| k.open_user_id(u)).unwrap_or_else(|| u.to_owned()));
        record_bucket(user.as_deref(), id)
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

/// A header line's format and version (a newer one is
/// `schema_version_unsupported`).
fn check_header(header: &Line<'_>) -> Result<()> {
    if header.v.get("format").and_then(Value::as_str) != Some(EXPORT_FORMAT) {
        return Err(bad(header.n, format!("the first line must be the header, with format {EXPORT_FORMAT:?}")));
    }
    let version = header.v.get("schema_version").and_then(Value::as_u64).ok_or_else(|| bad(header.n, "header: schema_version must be a whole number"))?;
    if version > u64::from(super::export::EXPORT_SCHEMA_VERSION) {
        return Err(Error::SchemaVersionUnsupported { found: u32::try_from(version).unwrap_or(u32::MAX), supported_max: super::export::EXPORT_SCHEMA_VERSION, input: true });
    }
    Ok(())
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
    let parsed: Vec<(ShardId, usize, Value)> = heads.iter().map(|(s, h)| Ok((*s, h.records, serde_json::from_str(&h.header).map_err(|_| Error::Internal { detail: format!("shard {s}'s export header is not JSON") })?))).collect::<Result<_>>()?;
    let home = parsed.iter().find(|(s, _, _)| *s == 0).ok_or_else(|| Error::Internal { detail: "no export head from home".into() })?;
    let Value::Object(mut header) = home.2.clone() else { return Err(Error::Internal { detail: "home's export header is not an object".into() }) };
    let mut embedder: Option<&Value> = None;
    for (s, _, h) in parsed.iter().filter(|(_, records, _)| *records > 0) {
        let e = h.get("embedder").unwrap_or(&Value::Null);
        if !e.is_null() {
            match embedder {
                Some(first) if first != e => return Err(Error::vector(VectorCode::EmbedderMismatch, format!("shard {s}'s records were made by {e}, another shard's by {first}: a re-embedding is under way; export again when it is done"))),
                _ => embedder = Some(e),
            }
        }
        if header.get("dim").is_none_or(Value::is_null) {
            header.insert("dim".into(), h.get("dim").cloned().unwrap_or(Value::Null));
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
    let mut splitter = Splitter::new(owners);
    let mut parts: BTreeMap<ShardId, String> = BTreeMap::new();
    let mut add = |to: Vec<(ShardId, String)>| {
        for (s, line) in to {
            let part = parts.entry(s).or_default();
            part.push_str(&line);
            part.push('\n');
        }
    };
    for (i, t) in text.split('\n').enumerate() {
        add(splitter.line(i + 1, t)?);
    }
    add(splitter.finish()?);
    Ok(parts.into_iter().collect())
}

/// [`split`] a line at a time, for a file read as a stream: each line
/// goes to the shards that get it as it comes, so the splitter holds no
/// line, only each record's shard (a 64-bit hash of its id, for the
/// history lines after it).
pub struct Splitter<'a> {
    owners: &'a Owners<'a>,
    shards: Vec<ShardId>,
    /// The header line, once read.
    header: bool,
    /// Lines read before the end line (the header's among them), and
    /// whether the end line was.
    lines: usize,
    ended: bool,
    /// Lines each shard got (the header's among them).
    counts: BTreeMap<ShardId, usize>,
    record_shard: HashMap<u64, ShardId>,
    /// Records read since [`Splitter::take_records`] last took them.
    records: Vec<(String, Bucket)>,
}

/// A record id's key in [`Splitter`]'s map.
fn id_hash(id: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    id.hash(&mut h);
    h.finish()
}

impl<'a> Splitter<'a> {
    /// A splitter by `owners`' map.
    pub fn new(owners: &'a Owners<'a>) -> Splitter<'a> {
        let shards = owners.map.shards();
        Splitter { owners, counts: shards.iter().map(|&s| (s, 1)).collect(), shards, header: false, lines: 0, ended: false, record_shard: HashMap::new(), records: Vec::new() }
    }

    /// Line `n` of the file (its text without the newline): the lines
    /// each shard gets for it (the header to every shard; a blank line to
    /// none).
    pub fn line(&mut self, n: usize, text: &str) -> Result<Vec<(ShardId, String)>> {
        if text.trim().is_empty() {
            return Ok(Vec::new());
        }
        if self.ended {
            return Err(bad(n, "comes after the end line"));
        }
        let Value::Object(v) = serde_json::from_str::<Value>(text).map_err(|e| bad(n, format!("not JSON: {e}")))? else {
            return Err(bad(n, "is not a JSON object"));
        };
        let l = Line { n, text, v };
        if !self.header {
            check_header(&l)?;
            // Every count below includes the header, as the end line's does.
            (self.header, self.lines) = (true, 1);
            return Ok(self.shards.iter().map(|&s| (s, text.to_owned())).collect());
        }
        if l.kind() == "end" {
            if l.v.get("lines").and_then(Value::as_u64) != Some(self.lines as u64) {
                return Err(bad(n, format!("the end line counts {} lines, the file has {}", l.v.get("lines").unwrap_or(&Value::Null), self.lines)));
            }
            self.ended = true;
            return Ok(Vec::new());
        }
        self.lines += 1;
        let out = self.route(&l)?;
        for (s, _) in &out {
            *self.counts.get_mut(s).ok_or_else(|| Error::Internal { detail: format!("shard {s} is not in the map") })? += 1;
        }
        Ok(out)
    }

    fn route(&mut self, l: &Line<'_>) -> Result<Vec<(ShardId, String)>> {
        let owners = self.owners;
        let one = |s: ShardId| vec![(s, l.text.to_owned())];
        Ok(match l.kind() {
            "session" => {
                let id = l.v.get("session").and_then(|x| x.get("session_id")).and_then(Value::as_str).ok_or_else(|| bad(l.n, "a session without session_id"))?;
                one(owners.session(id))
            }
            "memory" => {
                let record = l.v.get("record").ok_or_else(|| bad(l.n, "a memory without record"))?;
                let (id, bucket) = (record.get("id").and_then(Value::as_str).unwrap_or_default(), owners.bucket(record));
                let s = owners.map.owner(bucket);
                self.record_shard.insert(id_hash(id), s);
                self.records.push((id.to_owned(), bucket));
                one(s)
            }
            // Every shard's keys stay below it.
            "longterm" => self.shards.iter().map(|&s| (s, l.text.to_owned())).collect(),
            // A history's record lives where the record does; a deleted
            // record's history at home.
            "versions" => one(l.v.get("id").and_then(Value::as_str).and_then(|id| self.record_shard.get(&id_hash(id)).copied()).unwrap_or(0)),
            k if HOME_PARTS.contains(&k) || k == "history" || k == "decisions" || k == "extraction" || k == "privacy" => {
                let part = l.v.get(k).cloned().unwrap_or(Value::Null);
                let mut out = Vec::new();
                for &s in &self.shards {
                    let mut mine = if by_session(k) { cut_sessions(k, &part, &|id: &str| owners.session(id) == s) } else { part.clone() };
                    if s != 0 {
                        if HOME_PARTS.contains(&k) {
                            continue;
                        }
                        // Agents are home's; the tool TTLs every shard's.
                        if let (true, Some(m)) = (k == "history", mine.as_object_mut()) {
                            m.remove("agents");
                        }
                    }
                    out.push((s, line_of(k, &mine)));
                }
                out
            }
            other => return Err(bad(l.n, format!("unknown type {other:?}"))),
        })
    }

    /// The records read since the last call, each id with its bucket (for
    /// the id directory).
    pub fn take_records(&mut self) -> Vec<(String, Bucket)> {
        std::mem::take(&mut self.records)
    }

    /// After the last line: each shard's end line (a file without its
    /// header or end line is refused: cut short).
    pub fn finish(self) -> Result<Vec<(ShardId, String)>> {
        if !self.header {
            return Err(Error::invalid("import", "is empty: no header line"));
        }
        if !self.ended {
            return Err(Error::invalid("import", "has no end line: the file was cut short"));
        }
        Ok(self.counts.into_iter().map(|(s, n)| (s, end_line(n))).collect())
    }
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
