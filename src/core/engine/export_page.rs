//! One shard's part of a sharded tenant's export, in pages (issue 21), so
//! that neither the shard nor the front holds a whole export: the front
//! streams the file ([`super::export_shard`] says how it is put together).
//!
//! - [`Engine::export_head`]: the header, the key counter (the export's
//!   cut: records made after it are left out, so a record deleted and
//!   made again while the export runs is never in it twice) and the state
//!   lines, each map by session id cut to the shard's own sessions.
//! - [`Engine::export_page`]: the shard's own sessions, records below the
//!   cut or histories, after a cursor, at most
//!   [`limits::SHARD_EXPORT_PAGE_BYTES`] of lines and
//!   [`limits::SHARD_EXPORT_PAGE_ITEMS_MAX`] items walked. A history whose
//!   record this shard does not own (a deleted record's, or a copy a split
//!   left behind) is an *orphan*: the front keeps it only if no shard owns
//!   the record and no shard before this one holds a history of it.
//! - [`Engine::export_holds`]: which of some ids this shard owns below its
//!   cut, and which it holds a history of (the orphans' question).
//!
//! "Own" is the [`MoveSelect`] the shard is given: its buckets under the
//! export's map.

use std::ops::Bound::{Excluded, Unbounded};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::export::{session_line, versions_line};
use super::moves::MoveSelect;
use super::*;

/// A shard's first answer to an export.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportHead {
    /// The header line.
    pub header: String,
    /// The key counter at the head: the export's cut in this shard.
    pub next_key: u64,
    /// Records held (its own and any copy left behind), for the embedder's check.
    pub records: usize,
    /// One line per state part, maps by session id cut to its own sessions.
    pub state: Vec<String>,
}

/// What a page holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExportPart {
    Sessions,
    Memories,
    Versions,
}

/// A page of a shard's export.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExportPage {
    /// The lines, in the exporter's form (records under this shard's keys).
    pub lines: Vec<String>,
    /// Histories among `lines` of records this shard does not own, as
    /// `(index in lines, id)`.
    pub orphans: Vec<(usize, String)>,
    /// The cursor of the next page; `None`: this part is done.
    pub next: Option<String>,
}

/// Which of the ids asked this shard owns below its cut, and which it
/// holds a history of.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExportHolds {
    pub held: Vec<String>,
    pub histories: Vec<String>,
}

// On the wire each answer is NDJSON: a first line of JSON with the small
// fields, then the export's own lines as they are (an export line holds no
// raw newline). No line is escaped into a JSON string and read back, and
// no serde code is generated per answer type.

fn wire(what: &str) -> Error {
    Error::Internal { detail: format!("a shard's export {what} is not in its form") }
}

/// The first line of `text` as a JSON object, and the lines after it.
fn meta<'a>(text: &'a str, what: &str) -> Result<(Value, impl Iterator<Item = String> + 'a)> {
    let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
    let v: Value = serde_json::from_str(first).map_err(|_| wire(what))?;
    Ok((v, rest.split('\n').filter(|l| !l.is_empty()).map(str::to_owned)))
}

fn ndjson(first: &Value, lines: &[String]) -> String {
    let mut out = first.to_string();
    for l in lines {
        out.push('\n');
        out.push_str(l);
    }
    out
}

impl ExportHead {
    /// Its wire form: `{next_key, records}`, the header line, the state lines.
    pub fn to_text(&self) -> String {
        let mut lines = Vec::with_capacity(self.state.len() + 1);
        lines.push(self.header.clone());
        lines.extend(self.state.iter().cloned());
        ndjson(&serde_json::json!({ "next_key": self.next_key, "records": self.records }), &lines)
    }

    /// Reads [`ExportHead::to_text`].
    pub fn from_text(text: &str) -> Result<ExportHead> {
        let (v, mut lines) = meta(text, "head")?;
        let header = lines.next().ok_or_else(|| wire("head"))?;
        let (next_key, records) = (v["next_key"].as_u64().ok_or_else(|| wire("head"))?, v["records"].as_u64().ok_or_else(|| wire("head"))?);
        Ok(ExportHead { header, next_key, records: usize::try_from(records).map_err(|_| wire("head"))?, state: lines.collect() })
    }
}

impl ExportPage {
    /// Its wire form: `{next, orphans: [[index, id], ...]}`, then the lines.
    pub fn to_text(&self) -> String {
        let orphans: Vec<Value> = self.orphans.iter().map(|(i, id)| serde_json::json!([i, id])).collect();
        ndjson(&serde_json::json!({ "next": self.next, "orphans": orphans }), &self.lines)
    }

    /// Reads [`ExportPage::to_text`].
    pub fn from_text(text: &str) -> Result<ExportPage> {
        let (v, lines) = meta(text, "page")?;
        let lines: Vec<String> = lines.collect();
        let next = match &v["next"] {
            Value::Null => None,
            Value::String(s) => Some(s.clone()),
            _ => return Err(wire("page")),
        };
        let mut orphans = Vec::new();
        for o in v["orphans"].as_array().ok_or_else(|| wire("page"))? {
            let i = o[0].as_u64().and_then(|i| usize::try_from(i).ok()).filter(|&i| i < lines.len()).ok_or_else(|| wire("page"))?;
            orphans.push((i, o[1].as_str().ok_or_else(|| wire("page"))?.to_owned()));
        }
        Ok(ExportPage { lines, orphans, next })
    }
}

impl ExportHolds {
    /// Its wire form: `{held, histories}`.
    pub fn to_text(&self) -> String {
        serde_json::json!({ "held": self.held, "histories": self.histories }).to_string()
    }

    /// Reads [`ExportHolds::to_text`].
    pub fn from_text(text: &str) -> Result<ExportHolds> {
        let v: Value = serde_json::from_str(text).map_err(|_| wire("holds"))?;
        let ids = |k: &str| -> Result<Vec<String>> { v[k].as_array().ok_or_else(|| wire("holds"))?.iter().map(|x| x.as_str().map(str::to_owned).ok_or_else(|| wire("holds"))).collect() };
        Ok(ExportHolds { held: ids("held")?, histories: ids("histories")? })
    }
}

/// A page's bounds: bytes of lines and items walked.
struct Budget {
    bytes: usize,
    walked: usize,
    items_max: usize,
}

impl Budget {
    fn full(&self) -> bool {
        self.bytes >= limits::SHARD_EXPORT_PAGE_BYTES || self.walked >= self.items_max
    }

    fn add(&mut self, line: &str) {
        self.bytes = self.bytes.saturating_add(line.len() + 1);
    }
}

impl Engine {
    /// The head of this shard's export (see the module docs).
    pub fn export_head(&self, own: &dyn MoveSelect, vectors: bool, exported_at: Millis) -> Result<ExportHead> {
        Ok(ExportHead { header: self.export_header(vectors, exported_at).to_string(), next_key: self.longterm.next_key(), records: self.longterm.len(), state: self.state_lines(Some(&|id: &str| own.session(id)))? })
    }

    /// The page of `part` after `after` (the last page's `next`; `None`
    /// for the first), records below `keys_below` only, walking at most
    /// `items_max` items (at least 1, at most
    /// [`limits::SHARD_EXPORT_PAGE_ITEMS_MAX`]).
    pub fn export_page(&self, own: &dyn MoveSelect, part: ExportPart, after: Option<&str>, keys_below: u64, vectors: bool, items_max: usize) -> Result<ExportPage> {
        let mut page = ExportPage::default();
        let mut budget = Budget { bytes: 0, walked: 0, items_max: items_max.clamp(1, limits::SHARD_EXPORT_PAGE_ITEMS_MAX) };
        match part {
            ExportPart::Sessions => {
                let from = after.map_or(Unbounded, Excluded);
                for (id, s) in self.sessions.range::<str, _>((from, Unbounded)) {
                    if budget.full() {
                        break;
                    }
                    budget.walked += 1;
                    page.next = Some(id.clone());
                    if own.session(id) {
                        let line = session_line(s)?;
                        budget.add(&line);
                        page.lines.push(line);
                    }
                }
            }
            ExportPart::Memories => {
                let after = after.map(|a| a.parse::<u64>().map_err(|_| Error::invalid("after", "a record key"))).transpose()?;
                for (key, r) in self.longterm.keyed_records_between(after, keys_below) {
                    if budget.full() {
                        break;
                    }
                    budget.walked += 1;
                    page.next = Some(key.to_string());
                    if own.record(r) {
                        let line = self.memory_line(key, r, vectors)?;
                        budget.add(&line);
                        page.lines.push(line);
                    }
                }
            }
            ExportPart::Versions => {
                let lt = &self.longterm;
                for (id, versions) in lt.histories_after(after) {
                    if budget.full() {
                        break;
                    }
                    budget.walked += 1;
                    page.next = Some(id.to_owned());
                    let owned = lt.get(id).filter(|r| own.record(r)).and_then(|_| lt.key_of(id).copied());
                    match owned {
                        // A record made after the cut is not exported, nor its history.
                        Some(key) if key >= keys_below => {}
                        held => {
                            if held.is_none() {
                                page.orphans.push((page.lines.len(), id.to_owned()));
                            }
                            let line = versions_line(id, versions)?;
                            budget.add(&line);
                            page.lines.push(line);
                        }
                    }
                }
            }
        }
        // The walk stopped before the end: the next page starts after it.
        if !budget.full() {
            page.next = None;
        }
        Ok(page)
    }

    /// Which of `ids` this shard owns below `keys_below`, and which it
    /// holds a history of.
    pub fn export_holds(&self, own: &dyn MoveSelect, ids: &[String], keys_below: u64) -> ExportHolds {
        let lt = &self.longterm;
        let held = ids.iter().filter(|id| lt.get(id).is_some_and(|r| own.record(r)) && lt.key_of(id).is_some_and(|&k| k < keys_below)).cloned().collect();
        let histories = ids.iter().filter(|id| lt.versions(id).is_some()).cloned().collect();
        ExportHolds { held, histories }
    }
}
