//! Long-term memory of one tenant: AMS's MemoryRecords, their vectors in the
//! segmented index, and a BM25 index over their text.
//!
//! Records and vectors are state (logged as ops, snapshotted); the BM25
//! index is derived and rebuilt when a snapshot loads. The vector index is
//! snapshotted as its own encoded blob, graphs included, so a cold start
//! does not rebuild them. Segment compaction is maintenance outside the op
//! log: it changes the layout, never the contents, so equality is logical
//! (same records, same live vectors).

// The turns around a hit (`expand`).
mod context;
pub mod explain;
pub mod external;
pub mod facts;
pub mod forget;
mod moves;
mod ops;
#[cfg(test)]
mod facts_tests;
pub mod reembed;
#[cfg(test)]
mod reembed_tests;
pub mod search;
pub mod sharded;
mod snapshot;
#[cfg(test)]
mod tests;
pub mod versions;
#[cfg(test)]
mod versions_tests;

use std::collections::{BTreeMap, BTreeSet, HashMap};


use crate::core::error::{Error, Result, VectorCode};
use crate::core::limits;
use crate::core::retrieval::record::MemoryRecord;
use crate::core::retrieval::{Analyzer, Bm25Index, Bm25Params};
use crate::core::time::Millis;
use crate::core::vector::{self, CompactReport, VectorIndex};
use versions::VersionOp;

pub use facts::Currency;
pub use snapshot::{f32_bytes, LongTermSnapshot};
pub use ops::{LtmApplied, LtmOp, NewRecord, Outcome};
pub use search::{Mode, Scored, SearchRequest, SearchResult};

/// One tenant's long-term memory.
#[derive(Debug)]
pub struct LongTerm {
    records: BTreeMap<u64, MemoryRecord>,
    ids: HashMap<String, u64>,
    /// Every live key holding each content hash. All of them, not the last
    /// written: deduplication must decide the same in an engine restored
    /// from a snapshot as in the one that lived the history.
    hashes: HashMap<String, Vec<u64>>,
    next_key: u64,
    index: Option<VectorIndex>,
    bm25: Bm25Index,
    /// Keys of records a newer statement superseded (derived from their
    /// metadata): kept, shown by id, left out of searches and of
    /// deduplication.
    superseded: BTreeSet<u64>,
    /// The identity of the embedder that made every stored vector, so that
    /// vectors of different embedders never share an index.
    embedder: Option<String>,
    /// New vectors staged by a re-embedding, swapped in when complete.
    restage: Option<reembed::Restage>,
    /// Fact chains (derived, see [`facts`]).
    chains: facts::Chains,
    /// Every record's versions (see [`versions`]).
    histories: versions::Histories,
    /// How an index made from now on stores its rows (the first vector's,
    /// a re-embedding's): a host's setting, not state. An index keeps the
    /// quantization it was built with, in its own encoding.
    quantization: vector::Quantization,
}

/// The metadata key that marks a superseded record, naming its successor.
pub const SUPERSEDED_BY: &str = "superseded_by";
/// The metadata key of what a record is about (set by extraction), so a
/// newer record about the same subject supersedes it.
pub const SUBJECT: &str = "subject";

impl Clone for LongTerm {
    fn clone(&self) -> Self {
        // The index has no cheap clone of its graphs; its encoding is exact.
        let index = self.index.as_ref().and_then(|i| VectorIndex::decode(&i.encode()).ok());
        LongTerm {
            records: self.records.clone(),
            ids: self.ids.clone(),
            hashes: self.hashes.clone(),
            next_key: self.next_key,
            index,
            bm25: self.bm25.clone(),
            superseded: self.superseded.clone(),
            embedder: self.embedder.clone(),
            restage: self.restage.clone(),
            chains: self.chains.clone(),
            histories: self.histories.clone(),
            quantization: self.quantization,
        }
    }
}

impl PartialEq for LongTerm {
    /// Logical equality: the same records under the same keys, and the same
    /// live vectors, whatever the segment layout.
    fn eq(&self, other: &Self) -> bool {
        let vectors = |l: &LongTerm| l.index.as_ref().map(|i| i.live_entries()).unwrap_or_default();
        self.records == other.records
            && self.next_key == other.next_key
            && vectors(self) == vectors(other)
            && self.embedder == other.embedder
            && self.restage == other.restage
            && self.histories == other.histories
    }
}

fn new_bm25() -> Bm25Index {
    Bm25Index::new(Analyzer::default(), Bm25Params::default())
}

impl Default for LongTerm {
    fn default() -> Self {
        LongTerm {
            records: BTreeMap::new(),
            ids: HashMap::new(),
            hashes: HashMap::new(),
            next_key: 0,
            index: None,
            bm25: new_bm25(),
            superseded: BTreeSet::new(),
            embedder: None,
            restage: None,
            chains: facts::Chains::new(),
            histories: versions::Histories::default(),
            quantization: vector::Quantization::None,
        }
    }
}

impl LongTerm {
    pub fn new() -> LongTerm {
        LongTerm::default()
    }

    /// How indexes made from now on store their rows (default
    /// [`vector::Quantization::None`]: f32). Int8 keeps a quarter of the
    /// bytes per row, at some recall (BENCHMARKS.md).
    pub fn set_quantization(&mut self, q: vector::Quantization) {
        self.quantization = q;
    }

    /// The index configuration for `dim` under this store's setting.
    fn index_config(&self, dim: usize) -> vector::Config {
        vector::Config::new(dim, vector::Metric::Cosine).quantization(self.quantization)
    }

    /// Number of live records.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The record with this id.
    pub fn get(&self, id: &str) -> Option<&MemoryRecord> {
        self.ids.get(id).and_then(|k| self.records.get(k))
    }

    /// All records, in key (insertion) order.
    pub fn records(&self) -> impl Iterator<Item = &MemoryRecord> {
        self.records.values()
    }

    /// Records inserted at or after the key `from` (keys only grow), and
    /// the key the next insert gets: a watermark for "what is new since".
    pub fn records_since(&self, from: u64) -> (impl Iterator<Item = &MemoryRecord>, u64) {
        (self.records.range(from..).map(|(_, r)| r), self.next_key)
    }

    /// The vector dimension fixed by the first insert.
    pub fn dim(&self) -> Option<usize> {
        self.index.as_ref().map(|i| i.config().dim)
    }

    /// The vector index, for stats and the page's "which segment" display.
    pub fn index(&self) -> Option<&VectorIndex> {
        self.index.as_ref()
    }

    fn index_mut(&mut self, dim: usize) -> Result<&mut VectorIndex> {
        if self.index.is_none() {
            self.index = Some(VectorIndex::new(self.index_config(dim))?);
        }
        self.index.as_mut().ok_or_else(|| Error::Internal { detail: "index missing".into() })
    }

    /// Applies an op at `now`. On error nothing has changed.
    pub fn apply(&mut self, op: &LtmOp, now: Millis) -> Result<LtmApplied> {
        match op {
            LtmOp::Create { records, deduplicate, embedder, actor } => {
                if records.len() > limits::LTM_CREATE_BATCH_MAX {
                    return Err(Error::LimitExceeded { what: "memories in one create".into(), limit: limits::LTM_CREATE_BATCH_MAX as u64 });
                }
                let dim = records.first().map(|r| r.vector.len());
                if let Some(d) = dim {
                    self.check_embedder(embedder.as_deref(), d)?;
                }
                // An empty namespace taking another embedder is held to the new width.
                let held_to = if dim.is_some_and(|d| self.starts_afresh(embedder.as_deref(), d)) { dim } else { self.dim() };
                let mut seen = std::collections::HashSet::new();
                for (i, r) in records.iter().enumerate() {
                    r.record.validate().map_err(|e| prefix(&format!("memories[{i}]"), e))?;
                    if Some(r.vector.len()) != dim {
                        return Err(Error::InvalidVector { code: VectorCode::DimensionMismatch, detail: format!("memories[{i}] has {} dimensions, memories[0] {}", r.vector.len(), dim.unwrap_or(0)) });
                    }
                    check_vector(held_to, &r.vector).map_err(|e| prefix(&format!("memories[{i}].vector"), e))?;
                    if !seen.insert(r.record.id.as_str()) {
                        return Err(Error::invalid(format!("memories[{i}].id"), "duplicate id in one request"));
                    }
                }
                let new_ids = records.iter().filter(|r| !self.ids.contains_key(&r.record.id)).count();
                if self.records.len() + new_ids > limits::LTM_RECORDS_MAX {
                    return Err(Error::LimitExceeded { what: "long-term memories".into(), limit: limits::LTM_RECORDS_MAX as u64 });
                }
                let Some(dim) = dim else {
                    return Ok(LtmApplied::Created { created: Vec::new(), duplicates: Vec::new(), results: Vec::new() });
                };
                self.claim_embedder(embedder.as_deref(), dim);
                // Everything is checked; from here the op cannot fail halfway.
                self.index_mut(dim)?;
                let (mut created, mut duplicates, mut results) = (Vec::new(), Vec::new(), Vec::with_capacity(records.len()));
                for r in records {
                    if let Some(existing) = self.already_stored(&r.record, *deduplicate) {
                        duplicates.push(r.record.id.clone());
                        results.push((r.record.id.clone(), Outcome::DuplicateOf(existing)));
                        continue;
                    }
                    let existed = self.ids.contains_key(&r.record.id);
                    self.archive(&r.record.id);
                    let superseded = self.put(r.record.clone(), &r.vector, now)?;
                    self.versioned(&r.record.id, if existed { VersionOp::Edit } else { VersionOp::Create }, now, &r.record.text, actor.as_deref());
                    let superseded_by = self.get(&r.record.id).and_then(|x| x.superseded_by.clone());
                    created.push(r.record.id.clone());
                    results.push((r.record.id.clone(), Outcome::Created { superseded, superseded_by }));
                }
                Ok(LtmApplied::Created { created, duplicates, results })
            }
            LtmOp::Update { id, patch, vector, embedder, actor } => {
                let old = self.get(id).ok_or_else(|| Error::not_found("memory", id))?;
                let next = patch.apply(old, now)?;
                if let Some(v) = vector {
                    self.check_embedder(embedder.as_deref(), v.len())?;
                    check_vector(self.dim(), v)?;
                }
                let key = self.ids[id];
                let text_changed = next.text != old.text;
                let old_hash = old.memory_hash.clone();
                // The patch may move the record to another user's chain.
                self.unlink(key);
                let mut next = next;
                next.valid_to = None;
                next.superseded_by = None;
                self.unhash(&old_hash, key);
                self.bm25.remove(key);
                self.bm25.add(key, &next.text)?;
                if let (Some(v), Some(index)) = (vector, self.index.as_mut()) {
                    index.add(key, v)?;
                }
                self.hashes.entry(next.memory_hash.clone()).or_default().push(key);
                if text_changed {
                    self.unstage(key);
                }
                self.archive(id);
                self.records.insert(key, next);
                self.link(key);
                let next = self.records.get(&key).cloned().ok_or_else(|| Error::Internal { detail: "updated record missing".into() })?;
                self.mark(key, &next);
                self.versioned(id, VersionOp::Edit, now, &next.text, actor.as_deref());
                Ok(LtmApplied::Updated(Box::new(next)))
            }
            LtmOp::Delete { ids, forget, actor } => {
                if ids.len() > limits::LTM_DELETE_BATCH_MAX {
                    return Err(Error::LimitExceeded { what: "ids in one delete".into(), limit: limits::LTM_DELETE_BATCH_MAX as u64 });
                }
                let mut deleted = Vec::new();
                for id in ids {
                    self.archive(id);
                    if let Some(r) = self.remove(id) {
                        self.versioned(id, if *forget { VersionOp::Forget } else { VersionOp::Delete }, now, &r.text, actor.as_deref());
                        deleted.push(id.clone());
                    }
                }
                Ok(LtmApplied::Deleted { deleted })
            }
            LtmOp::Reembed { embedder, rows, finish } => self.apply_reembed(embedder, rows, *finish),
            LtmOp::Restore { id, version, vector, embedder, actor } => {
                let mut record = self.version_body(id, *version)?;
                self.check_embedder(embedder.as_deref(), vector.len())?;
                check_vector(self.dim(), vector)?;
                if !self.ids.contains_key(id) && self.records.len() >= limits::LTM_RECORDS_MAX {
                    return Err(Error::LimitExceeded { what: "long-term memories".into(), limit: limits::LTM_RECORDS_MAX as u64 });
                }
                record.updated_at = now;
                record.validate()?;
                self.claim_embedder(embedder.as_deref(), vector.len());
                // Everything is checked; from here the op cannot fail halfway.
                self.index_mut(vector.len())?;
                self.archive(id);
                let text = record.text.clone();
                self.put(record, vector, now)?;
                let v = self.versioned(id, VersionOp::Restore, now, &text, actor.as_deref());
                let record = self.get(id).cloned().ok_or_else(|| Error::Internal { detail: "restored record missing".into() })?;
                Ok(LtmApplied::Restored { record: Box::new(record), version: v })
            }
            LtmOp::Redact { id, actor } => {
                let last_text = match (self.get(id), self.versions(id)) {
                    (Some(r), _) => r.text.clone(),
                    (None, Some(h)) => h.iter().rev().find_map(|v| v.body.as_ref().map(|b| b.text.clone())).unwrap_or_default(),
                    (None, None) => return Err(Error::not_found("memory", id)),
                };
                self.remove(id);
                let versions = self.redact_history(id);
                // The receipt hashes the last text known, never keeps it.
                let version = self.versioned(id, VersionOp::Redact, now, &last_text, actor.as_deref());
                Ok(LtmApplied::Redacted { id: id.clone(), versions, version })
            }
        }
    }

    /// Removes the live record `id` from every index; answers it.
    fn remove(&mut self, id: &str) -> Option<MemoryRecord> {
        let key = *self.ids.get(id)?;
        self.unlink(key);
        self.ids.remove(id);
        self.superseded.remove(&key);
        let r = self.records.remove(&key);
        if let Some(r) = &r {
            self.unhash(&r.memory_hash, key);
        }
        self.bm25.remove(key);
        if let Some(i) = self.index.as_mut() {
            i.remove(key);
        }
        self.unstage(key);
        r
    }

    /// The id of a stored record that makes creating `r` a no-op: `r`'s own
    /// id holding the same content (a retry), or, with `deduplicate`, a
    /// current record with the same content hash. A superseded record does
    /// not count: saying an old preference again makes it current again.
    fn already_stored(&self, r: &MemoryRecord, deduplicate: bool) -> Option<String> {
        if self.get(&r.id).is_some_and(|old| same_content(old, r)) {
            return Some(r.id.clone());
        }
        if !deduplicate {
            return None;
        }
        let keys = self.hashes.get(&r.memory_hash)?;
        keys.iter().filter(|k| !self.superseded.contains(k)).find_map(|k| self.records.get(k).filter(|x| x.id != r.id)).map(|x| x.id.clone())
    }

    /// Inserts or overwrites one validated record with its vector; answers
    /// the ids of the versions it superseded in its fact chain.
    fn put(&mut self, mut record: MemoryRecord, v: &[f32], _now: Millis) -> Result<Vec<String>> {
        // Derived by the chain, never taken from the caller.
        record.valid_to = None;
        record.superseded_by = None;
        let key = match self.ids.get(&record.id) {
            Some(&k) => {
                self.unlink(k);
                if let Some(old_hash) = self.records.get(&k).map(|old| old.memory_hash.clone()) {
                    self.unhash(&old_hash, k);
                }
                self.bm25.remove(k);
                self.unstage(k);
                k
            }
            None => {
                let k = self.next_key;
                self.next_key += 1;
                self.ids.insert(record.id.clone(), k);
                k
            }
        };
        self.bm25.add(key, &record.text)?;
        if let Some(index) = self.index.as_mut() {
            index.add(key, v)?;
        }
        self.hashes.entry(record.memory_hash.clone()).or_default().push(key);
        self.mark(key, &record);
        self.records.insert(key, record);
        Ok(self.link(key))
    }

    /// Keeps the superseded set in step with a record's chain fields and
    /// metadata.
    fn mark(&mut self, key: u64, record: &MemoryRecord) {
        if Self::superseded_mark(record) {
            self.superseded.insert(key);
        } else {
            self.superseded.remove(&key);
        }
    }

    /// Whether the record under `key` was superseded.
    pub fn is_superseded(&self, key: u64) -> bool {
        self.superseded.contains(&key)
    }

    /// Marks the current records of `user_id` in `namespace` about
    /// `subject`, other than `by`, as superseded by `by` (at `now`); answers
    /// their ids. Part of applying an extraction commit, so a replay marks
    /// the same records. Records written before extraction set `fact_key`
    /// are only reached this way; newer ones are also in a fact chain. The
    /// mark is permanent: deleting the newer record does not lift it.
    pub fn supersede(&mut self, namespace: Option<&str>, user_id: Option<&str>, subject: &str, by: &str, now: Millis) -> Vec<String> {
        let keys: Vec<u64> = self
            .records
            .iter()
            // Every record without the mark, including those the fact chain
            // already superseded: extraction's documented mark is
            // `metadata.superseded_by`.
            .filter(|(_, r)| {
                !r.metadata.contains_key(SUPERSEDED_BY)
                    && r.id != by
                    && r.user_id.as_deref() == user_id
                    && r.namespace.as_deref() == namespace
                    && r.metadata.get(SUBJECT).and_then(serde_json::Value::as_str) == Some(subject)
            })
            .map(|(k, _)| *k)
            .collect();
        let mut ids = Vec::with_capacity(keys.len());
        for k in keys {
            if let Some(r) = self.records.get_mut(&k) {
                r.metadata.insert(SUPERSEDED_BY.into(), serde_json::Value::String(by.to_owned()));
                r.metadata.insert("superseded_at".into(), serde_json::Value::String(crate::core::time::format_rfc3339(now)));
                ids.push(r.id.clone());
                self.superseded.insert(k);
            }
        }
        ids
    }

    /// Drops `key` from the keys holding `hash`.
    fn unhash(&mut self, hash: &str, key: u64) {
        if let Some(keys) = self.hashes.get_mut(hash) {
            keys.retain(|k| *k != key);
            if keys.is_empty() {
                self.hashes.remove(hash);
            }
        }
    }

    /// Seals and merges vector segments, building at most `work_points_max`
    /// points. Maintenance: the contents do not change.
    pub fn compact(&mut self, work_points_max: usize) -> Result<Option<CompactReport>> {
        match self.index.as_mut() {
            Some(i) => i.compact(work_points_max).map(Some),
            None => Ok(None),
        }
    }

    /// Whether [`LongTerm::compact`] with this bound would build anything.
    pub fn compaction_due(&self, work_points_max: usize) -> bool {
        self.index.as_ref().is_some_and(|i| i.compaction_due(work_points_max))
    }

}

/// Validates a vector for a namespace of width `dim` (none yet: any).
fn check_vector(dim: Option<usize>, v: &[f32]) -> Result<()> {
    if let Some(d) = dim {
        if v.len() != d {
            return Err(Error::InvalidVector { code: VectorCode::DimensionMismatch, detail: format!("this namespace holds {d}-dimensional vectors, got {}", v.len()) });
        }
    }
    check_components(v)
}

/// A vector's own checks: a sane length, finite components of sane size,
/// and a direction (cosine needs one).
pub(crate) fn check_components(v: &[f32]) -> Result<()> {
    if v.is_empty() || v.len() > limits::VECTOR_DIM_MAX {
        return Err(Error::InvalidVector { code: VectorCode::DimensionMismatch, detail: format!("vectors have 1 to {} components, got {}", limits::VECTOR_DIM_MAX, v.len()) });
    }
    if let Some(i) = v.iter().position(|x| !x.is_finite() || x.abs() > limits::VECTOR_COMPONENT_ABS_MAX) {
        return Err(Error::InvalidVector { code: VectorCode::NonFinite, detail: format!("component {i} is not a finite number of sane size") });
    }
    if v.iter().all(|x| *x == 0.0) {
        return Err(Error::InvalidVector { code: VectorCode::ZeroVector, detail: "cosine needs a vector with a direction".into() });
    }
    Ok(())
}

/// Whether two records say the same: equal but for the times a write sets
/// and the fields the chain derives.
fn same_content(a: &MemoryRecord, b: &MemoryRecord) -> bool {
    let strip = |r: &MemoryRecord| {
        let mut r = r.clone();
        (r.last_accessed, r.created_at, r.updated_at, r.persisted_at, r.access_count) = (0, 0, 0, None, 0);
        (r.valid_to, r.superseded_by) = (None, None);
        r
    };
    a.memory_hash == b.memory_hash && strip(a) == strip(b)
}

fn prefix(field: &str, e: Error) -> Error {
    match e {
        Error::InvalidInput { field: f, reason } => Error::InvalidInput { field: format!("{field}.{f}"), reason },
        other => other,
    }
}
