//! Export and import in an open format (issue 20): NDJSON, one JSON object
//! per line.
//!
//! - The first line is the header: `{format: "edgemem-export",
//!   schema_version, embedder, exported_at, last_seq, vectors, dim}`.
//! - Then one line per session (`{type: "session", session}`), one per
//!   long-term record (`{type: "memory", key, record, vector?}`; `vector`
//!   only when asked for, little-endian f32 in unpadded base64url), one per
//!   record history (`{type: "versions", id, versions}`), and one per other
//!   part of the state (`{type: "ledger" | "history" | "episodes" | ...,
//!   <type>: ...}`): the ledger with its journal, prompts, profiles and the
//!   rest. Every object is the state's own serde form: times are
//!   milliseconds since the epoch, amounts decimal strings, stored JSON
//!   exactly as sent.
//! - The last line is `{type: "end", lines}`, counting every line before
//!   it, so a cut file is refused instead of imported short.
//!
//! An import is validated whole (the same checks a snapshot load makes)
//! before anything is written: a failed import changes nothing. Records
//! exported without vectors are embedded again by the importer.

use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use super::snapshot::SnapshotV1;
use super::*;
use crate::core::longterm::versions::Version;
use crate::core::longterm::LongTermSnapshot;
use crate::core::privacy::pseudonym::{base64url_decode, base64url_encode};
use crate::core::privacy::scrub::Scrubber;
use crate::core::retrieval::record::MemoryRecord;

/// The header's `format`.
pub const EXPORT_FORMAT: &str = "edgemem-export";
/// The export format's version; an import refuses a newer one.
pub const EXPORT_SCHEMA_VERSION: u32 = 1;

/// The state parts exported as one line each, by name.
const PARTS: [&str; 9] = ["ledger", "history", "episodes", "services", "agent_state", "decisions", "privacy", "extraction", "summary_views"];

/// A state value's JSON text. Written straight to text, not through a
/// `serde_json::Value`, which would cost a second copy of every line and
/// more code per type.
fn to_json<T: Serialize>(what: &str, v: &T) -> Result<String> {
    serde_json::to_string(v).map_err(|e| Error::Internal { detail: format!("export {what}: {e}") })
}

/// `{"type": kind, name: json, ...rest}` as one line; `rest` is JSON text
/// of further members (`,"a":1`) or empty.
fn line(kind: &str, name: &str, json: &str, rest: &str) -> String {
    format!("{{\"type\":\"{kind}\",\"{name}\":{json}{rest}}}")
}

impl Engine {
    /// The whole state as NDJSON lines (see the module docs), at
    /// `exported_at`; with `vectors`, each record carries its vector.
    pub fn export_lines(&self, vectors: bool, exported_at: Millis) -> Result<Vec<String>> {
        let lt = &self.longterm;
        let mut out = Vec::with_capacity(self.sessions.len() + lt.len() * 2 + PARTS.len() + 3);
        out.push(self.export_header(vectors, exported_at).to_string());
        for s in self.sessions.values() {
            out.push(session_line(s)?);
        }
        out.push(line("longterm", "next_key", &lt.next_key().to_string(), ""));
        for (key, r) in lt.keyed_records() {
            out.push(self.memory_line(key, r, vectors)?);
        }
        for (id, versions) in lt.histories_after(None) {
            out.push(versions_line(id, versions)?);
        }
        out.extend(self.state_lines(None)?);
        let n = out.len();
        out.push(line("end", "lines", &n.to_string(), ""));
        Ok(out)
    }

    /// The header line's object.
    pub(super) fn export_header(&self, vectors: bool, exported_at: Millis) -> Value {
        let lt = &self.longterm;
        json!({
            "format": EXPORT_FORMAT,
            "schema_version": EXPORT_SCHEMA_VERSION,
            "embedder": lt.embedder(),
            "exported_at": crate::core::time::format_rfc3339(exported_at),
            "last_seq": self.last_seq,
            "vectors": if vectors { "f32" } else { "none" },
            "dim": lt.dim(),
        })
    }

    /// Record `r`'s line, under its `key`; with `vectors`, its vector too.
    pub(super) fn memory_line(&self, key: u64, r: &MemoryRecord, vectors: bool) -> Result<String> {
        let mut rest = String::new();
        if vectors {
            let vector = self.longterm.index().and_then(|i| i.get(key)).ok_or_else(|| Error::Internal { detail: format!("memory {:?} has no vector", r.id) })?;
            let bytes: Vec<u8> = vector.iter().flat_map(|x| x.to_le_bytes()).collect();
            rest.reserve(bytes.len() * 4 / 3 + 16);
            rest.push_str(",\"vector\":\"");
            base64url_encode(&bytes, &mut rest);
            rest.push('"');
        }
        Ok(line("memory", "record", &to_json("memory", r)?, &format!(",\"key\":{key}{rest}")))
    }

    /// One line per part of the state ([`PARTS`]); with `keep`, each map
    /// by session id cut to the sessions it accepts.
    pub(super) fn state_lines(&self, keep: Option<&dyn Fn(&str) -> bool>) -> Result<Vec<String>> {
        let parts: [(&str, String); 9] = [
            ("ledger", to_json("ledger", &self.ledger.snapshot_ref())?),
            ("history", to_json("history", &self.history)?),
            ("episodes", to_json("episodes", &self.episodes)?),
            ("services", to_json("services", &self.services)?),
            ("agent_state", to_json("agent_state", &self.agent_state)?),
            ("decisions", to_json("decisions", &self.decisions)?),
            ("privacy", to_json("privacy", &self.privacy)?),
            ("extraction", to_json("extraction", &self.extraction)?),
            ("summary_views", to_json("summary_views", &self.summary_views)?),
        ];
        let mut out = Vec::with_capacity(parts.len());
        for (name, json) in parts {
            let json = match keep {
                Some(keep) if super::export_shard::by_session(name) => super::export_shard::cut_text(name, &json, keep)?,
                _ => json,
            };
            out.push(line(name, name, &json, ""));
        }
        Ok(out)
    }
}

/// Session `s`'s line.
pub(super) fn session_line(s: &Session) -> Result<String> {
    Ok(line("session", "session", &to_json("session", s)?, ""))
}

/// The line of record `id`'s history.
pub(super) fn versions_line(id: &str, versions: &[Version]) -> Result<String> {
    Ok(line("versions", "versions", &to_json("versions", &versions)?, &format!(",\"id\":{}", Value::String(id.to_owned()))))
}

/// A record's vector in an import: as the export carried it (stored by its
/// index, kept bit for bit), embedded again here, or still missing.
enum Vector {
    Missing,
    Exported(Vec<f32>),
    Embedded(Vec<f32>),
}

/// An export read back and checked, not yet an engine: records exported
/// without vectors wait for [`Import::set_vectors`].
pub struct Import {
    /// The header's `embedder`.
    pub embedder: Option<String>,
    last_seq: u64,
    next_key: u64,
    sessions: Vec<Session>,
    records: Vec<(u64, MemoryRecord)>,
    vectors: Vec<Vector>,
    histories: Vec<(String, Vec<Version>)>,
    parts: serde_json::Map<String, Value>,
}

fn bad(line: usize, reason: impl std::fmt::Display) -> Error {
    Error::invalid(format!("line {line}"), reason.to_string())
}

/// Reads a state type from JSON through MessagePack: the JSON value is
/// written as a stored value is (numbers exactly, see `exact_json`), then
/// read by the types' snapshot reader, which takes structs as maps. The
/// types' own readers are the only ones, so an import adds no per-type
/// decoding code (serde_json's would have added about 100 KB of wasm).
fn from_json<T: DeserializeOwned>(v: &Value) -> std::result::Result<T, String> {
    let bytes = rmp_serde::to_vec(&crate::core::exact_json::Exact(v)).map_err(|e| e.to_string())?;
    crate::core::msgpack::from_slice(&bytes).map_err(|e| e.to_string())
}

fn field<T: DeserializeOwned>(n: usize, o: &mut serde_json::Map<String, Value>, name: &str) -> Result<T> {
    let v = o.remove(name).ok_or_else(|| bad(n, format!("has no {name:?}")))?;
    from_json(&v).map_err(|e| bad(n, format!("{name}: {e}")))
}

/// An import read a line at a time (a replica in export form arrives in
/// chunks and is never held whole), under a byte bound of the caller's.
pub struct ImportReader {
    import: Option<Import>,
    /// Lines read, blank ones included (a bad line is named by its number).
    n: usize,
    /// Lines counted for the end line (the header and every typed line).
    count: usize,
    ended: bool,
    bytes: usize,
    bytes_max: usize,
}

impl ImportReader {
    /// A reader that refuses input past `bytes_max` (`payload_too_large`).
    pub fn new(bytes_max: usize) -> ImportReader {
        ImportReader { import: None, n: 0, count: 0, ended: false, bytes: 0, bytes_max }
    }

    /// Reads and checks one line (without its newline).
    pub fn line(&mut self, text: &str) -> Result<()> {
        self.n += 1;
        let n = self.n;
        self.bytes += text.len() + 1;
        if self.bytes > self.bytes_max {
            return Err(Error::too_large("import", self.bytes, self.bytes_max));
        }
        if text.trim().is_empty() {
            return Ok(());
        }
        if self.ended {
            return Err(bad(n, "comes after the end line"));
        }
        let Value::Object(mut o) = serde_json::from_str::<Value>(text).map_err(|e| bad(n, format!("not JSON: {e}")))? else {
            return Err(bad(n, "is not a JSON object"));
        };
        let Some(im) = self.import.as_mut() else {
            self.import = Some(Import::header(n, &o)?);
            self.count = 1;
            return Ok(());
        };
        let kind: String = field(n, &mut o, "type")?;
        match kind.as_str() {
            "session" => im.sessions.push(field(n, &mut o, "session")?),
            "longterm" => im.next_key = field(n, &mut o, "next_key")?,
            "memory" => {
                let key: u64 = field(n, &mut o, "key")?;
                let record: MemoryRecord = field(n, &mut o, "record")?;
                let vector = match o.remove("vector") {
                    None | Some(Value::Null) => Vector::Missing,
                    Some(Value::String(b64)) => Vector::Exported(f32s(n, &b64)?),
                    Some(_) => return Err(bad(n, "vector: must be base64url of little-endian f32s")),
                };
                im.records.push((key, record));
                im.vectors.push(vector);
            }
            "versions" => im.histories.push((field(n, &mut o, "id")?, field(n, &mut o, "versions")?)),
            "end" => {
                let lines: usize = field(n, &mut o, "lines")?;
                if lines != self.count {
                    return Err(bad(n, format!("the end line counts {lines} lines, the file has {}", self.count)));
                }
                self.ended = true;
            }
            part if PARTS.contains(&part) => {
                let v = o.remove(part).ok_or_else(|| bad(n, format!("has no {part:?}")))?;
                if im.parts.insert(part.to_owned(), v).is_some() {
                    return Err(bad(n, format!("a second {part:?} line")));
                }
            }
            other => return Err(bad(n, format!("unknown type {other:?}"))),
        }
        // Checked as they come, so a file past the limits stops early.
        if im.sessions.len() > limits::SESSIONS_MAX || im.records.len() > limits::LTM_RECORDS_MAX {
            return Err(Error::invalid("import", "holds more sessions or memories than a namespace may"));
        }
        self.count += 1;
        Ok(())
    }

    /// The import read: refused without a header or an end line.
    pub fn finish(self) -> Result<Import> {
        let im = self.import.ok_or_else(|| Error::invalid("import", "is empty: no header line"))?;
        if !self.ended {
            return Err(Error::invalid("import", "has no end line: the file was cut short"));
        }
        Ok(im)
    }
}

impl Import {
    /// Reads and checks every line; nothing is built until all are read.
    /// A header of a newer format is refused with
    /// `schema_version_unsupported`.
    pub fn parse<'a>(lines: impl IntoIterator<Item = &'a str>) -> Result<Import> {
        let mut reader = ImportReader::new(limits::IMPORT_BYTES_MAX);
        for text in lines {
            reader.line(text)?;
        }
        reader.finish()
    }

    fn header(n: usize, o: &serde_json::Map<String, Value>) -> Result<Import> {
        if o.get("format").and_then(Value::as_str) != Some(EXPORT_FORMAT) {
            return Err(bad(n, format!("the first line must be the header, with format {EXPORT_FORMAT:?}")));
        }
        let version = o.get("schema_version").and_then(Value::as_u64).ok_or_else(|| bad(n, "header: schema_version must be a whole number"))?;
        if version > u64::from(EXPORT_SCHEMA_VERSION) {
            return Err(Error::SchemaVersionUnsupported { found: u32::try_from(version).unwrap_or(u32::MAX), supported_max: EXPORT_SCHEMA_VERSION, input: true });
        }
        let embedder = match o.get("embedder") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Err(bad(n, "header: embedder must be a string or null")),
        };
        let last_seq = o.get("last_seq").and_then(Value::as_u64).ok_or_else(|| bad(n, "header: last_seq must be a whole number"))?;
        Ok(Import { embedder, last_seq, next_key: 0, sessions: Vec::new(), records: Vec::new(), vectors: Vec::new(), histories: Vec::new(), parts: serde_json::Map::new() })
    }

    /// Redacts (or, under the `reject` policy, refuses) secrets in every
    /// free text the import carries: messages, running summaries, record
    /// texts and past versions. An import is a write like any other; a
    /// clean export passes unchanged, so it still round-trips exactly.
    pub fn scrub_secrets(&mut self, scrubber: &mut Scrubber<'_>) -> Result<()> {
        for s in &mut self.sessions {
            for m in &mut s.messages {
                let before = m.content.len();
                scrubber.secrets("messages.content", &mut m.content)?;
                if m.content.len() != before {
                    m.tokens = Default::default();
                }
            }
            if let Some(c) = &mut s.context {
                scrubber.secrets("context", c)?;
            }
        }
        for (_, r) in &mut self.records {
            let before = r.text.clone();
            scrubber.secrets("memory.text", &mut r.text)?;
            if r.text != before {
                r.refresh_hash();
            }
        }
        for (_, versions) in &mut self.histories {
            for b in versions.iter_mut().filter_map(|v| v.body.as_mut()) {
                scrubber.secrets("versions.text", &mut b.text)?;
            }
        }
        Ok(())
    }

    /// The records exported without a vector, as (index, text), in order.
    pub fn texts_to_embed(&self) -> Vec<(usize, &str)> {
        self.vectors.iter().enumerate().filter(|(_, v)| matches!(v, Vector::Missing)).map(|(i, _)| (i, self.records[i].1.text.as_str())).collect()
    }

    /// Gives the records listed by [`Import::texts_to_embed`] their vectors,
    /// made by `embedder` (which the namespace then records).
    pub fn set_vectors(&mut self, embedder: String, vectors: Vec<(usize, Vec<f32>)>) {
        for (i, v) in vectors {
            if let Some(slot) = self.vectors.get_mut(i) {
                *slot = Vector::Embedded(v);
            }
        }
        self.embedder = Some(embedder);
    }

    /// Builds the engine, validated as a snapshot load is.
    pub fn into_engine(mut self) -> Result<Engine> {
        let mut part = |name: &str| self.parts.remove(name).unwrap_or(Value::Null);
        fn take<T: DeserializeOwned + Default>(name: &str, v: Value) -> Result<T> {
            if v.is_null() {
                return Ok(T::default());
            }
            from_json(&v).map_err(|e| Error::invalid(name, e))
        }
        let (ledger, history, episodes, services, agent_state) = (part("ledger"), part("history"), part("episodes"), part("services"), part("agent_state"));
        let (decisions, privacy, extraction, summary_views) = (part("decisions"), part("privacy"), part("extraction"), part("summary_views"));
        let index = build_index(&self.records, &self.vectors)?;
        let v1 = SnapshotV1 {
            last_seq: self.last_seq,
            sessions: self.sessions,
            ledger: take("ledger", ledger)?,
            history: take("history", history)?,
            longterm: LongTermSnapshot { next_key: self.next_key, records: self.records, index, embedder: self.embedder, restage: None, versions: self.histories },
            episodes: take("episodes", episodes)?,
            services: take("services", services)?,
            agent_state: take("agent_state", agent_state)?,
            decisions: take("decisions", decisions)?,
            privacy: take("privacy", privacy)?,
            extraction: take("extraction", extraction)?,
            summary_views: take("summary_views", summary_views)?,
            // A split's watermarks are a shard's own, never exported.
            moves_in: BTreeMap::new(),
            // Home's places in its shards' logs: this deployment's only.
            feed_relay: Default::default(),
        };
        // A snapshot load's checks, reported as the input's fault.
        Engine::from_v1(v1).map_err(|e| match e {
            Error::SnapshotCorrupt { reason } => Error::invalid("import", reason),
            other => other,
        })
    }
}

fn f32s(n: usize, b64: &str) -> Result<Vec<f32>> {
    let bytes = base64url_decode(b64).filter(|b| !b.is_empty() && b.len() % 4 == 0).ok_or_else(|| bad(n, "vector: must be base64url of little-endian f32s"))?;
    Ok(bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
}

/// The vector index of the imported records, encoded as a snapshot holds it.
fn build_index(records: &[(u64, MemoryRecord)], vectors: &[Vector]) -> Result<crate::core::codec::Bytes> {
    let row = |v: &Vector| match v {
        Vector::Exported(v) | Vector::Embedded(v) => Some(v.len()),
        Vector::Missing => None,
    };
    let Some(first) = vectors.first() else { return Ok(crate::core::codec::Bytes(Vec::new())) };
    let dim = row(first).unwrap_or(0);
    let mut index = crate::core::vector::VectorIndex::new(crate::core::vector::Config::new(dim, crate::core::vector::Metric::Cosine)).map_err(|e| Error::invalid("vector", e.to_string()))?;
    for ((key, r), v) in records.iter().zip(vectors) {
        let (Vector::Exported(values) | Vector::Embedded(values)) = v else {
            return Err(Error::invalid("import", format!("memory {:?} has no vector", r.id)));
        };
        crate::core::longterm::check_components(values).map_err(|e| match e {
            Error::InvalidVector { code, detail } => Error::InvalidVector { code, detail: format!("memory {:?}: {detail}", r.id) },
            other => other,
        })?;
        if values.len() != dim {
            return Err(Error::vector(crate::core::error::VectorCode::DimensionMismatch, format!("memory {:?} has {} dimensions, the first {dim}", r.id, values.len())));
        }
        match v {
            // Bit for bit as exported: an import gives back the vectors it carried.
            Vector::Exported(_) => index.add_stored(*key, values)?,
            _ => index.add(*key, values)?,
        };
    }
    Ok(crate::core::codec::Bytes(index.encode()))
}
