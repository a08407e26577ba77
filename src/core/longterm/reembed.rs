//! Embedder identity and re-embedding.
//!
//! Every vector in a namespace comes from one embedder, named by its
//! identity (`edgemem-hash-v1/384`, the distilled model's asset name,
//! `workers-ai:@cf/baai/bge-small-en-v1.5`, a JS hook's name, `caller`).
//! Cosine between vectors of two embedders means nothing, so a write or a
//! query from another embedder is `embedder_mismatch`, never a silent mix.
//!
//! Re-embedding is the way out: new vectors for every record are staged in
//! batches of [`limits::LTM_REEMBED_BATCH_MAX`] (each batch one logged op,
//! so a crash resumes where it stopped), while searches keep using the old
//! ones; a final op swaps the whole index and the identity at once, and
//! refuses to when any live record still lacks a new vector. A record whose
//! text changes, or that is deleted, while staging is staged again (or
//! dropped).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{check_components, f32_bytes, LongTerm, LtmApplied};
use crate::core::error::{Error, Result, VectorCode};
use crate::core::limits;
use crate::core::vector::VectorIndex;

/// One record's new vector.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub id: String,
    #[serde(with = "f32_bytes")]
    pub vector: Vec<f32>,
}

/// Vectors staged for the swap, by record key.
#[derive(Debug, Clone, PartialEq)]
pub struct Restage {
    pub embedder: String,
    pub dim: usize,
    pub vectors: BTreeMap<u64, Vec<f32>>,
}

/// The snapshot form of a [`Restage`].
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RestageSnapshot {
    pub embedder: String,
    pub dim: usize,
    pub keys: Vec<u64>,
    /// The vectors, `dim` floats per key, in key order.
    #[serde(with = "f32_bytes")]
    pub vectors: Vec<f32>,
}

impl Restage {
    pub fn to_snapshot(&self) -> RestageSnapshot {
        RestageSnapshot {
            embedder: self.embedder.clone(),
            dim: self.dim,
            keys: self.vectors.keys().copied().collect(),
            vectors: self.vectors.values().flatten().copied().collect(),
        }
    }

    pub fn from_snapshot(s: RestageSnapshot) -> Result<Restage> {
        let bad = |reason: &str| Error::SnapshotCorrupt { reason: format!("re-embedding: {reason}") };
        check_name(&s.embedder).map_err(|_| bad("bad embedder name"))?;
        if s.dim == 0 || s.dim > limits::VECTOR_DIM_MAX || s.keys.len() > limits::LTM_RECORDS_MAX || s.vectors.len() != s.keys.len() * s.dim {
            return Err(bad("sizes disagree"));
        }
        let vectors = s.keys.iter().zip(s.vectors.chunks_exact(s.dim)).map(|(k, v)| (*k, v.to_vec())).collect();
        Ok(Restage { embedder: s.embedder, dim: s.dim, vectors })
    }
}

/// Checks an embedder identity: 1 to [`limits::EMBEDDER_NAME_BYTES_MAX`]
/// bytes of printable ASCII.
pub fn check_name(name: &str) -> Result<()> {
    if name.is_empty() || name.len() > limits::EMBEDDER_NAME_BYTES_MAX || !name.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(Error::invalid("embedder", format!("must be 1 to {} printable ASCII characters", limits::EMBEDDER_NAME_BYTES_MAX)));
    }
    Ok(())
}

fn mismatch(stored: &str, given: &str) -> Error {
    Error::InvalidVector {
        code: VectorCode::EmbedderMismatch,
        detail: format!(
            "this namespace's vectors come from {stored}, and these from {given}: they cannot be compared. Re-embed the namespace (POST /v1/long-term-memory/reembed, or memory.longTerm.reembed()) to move it to {given}"
        ),
    }
}

impl LongTerm {
    /// The identity of the embedder behind every stored vector; `None`
    /// before the first vector, or in state written before identities were
    /// kept.
    pub fn embedder(&self) -> Option<&str> {
        self.embedder.as_deref()
    }

    /// The re-embedding in progress: its target and how many rows it holds.
    pub fn restaging(&self) -> Option<(&str, usize)> {
        self.restage.as_ref().map(|r| (r.embedder.as_str(), r.vectors.len()))
    }

    /// Whether vectors of `dim` components from `embedder` may meet this
    /// namespace's (a write or a query). `None` (caller vectors with no
    /// name given, old logged ops) is only held to the dimension.
    pub fn check_embedder(&self, embedder: Option<&str>, dim: usize) -> Result<()> {
        let Some(given) = embedder else { return Ok(()) };
        check_name(given)?;
        match (self.embedder.as_deref(), self.dim()) {
            (Some(stored), _) if stored != given && !self.records.is_empty() => Err(mismatch(stored, given)),
            // State from before identities: the dimension is all there is to go by.
            (None, Some(d)) if d != dim && !self.records.is_empty() => Err(mismatch(&format!("an unnamed {d}-dimensional embedder"), given)),
            _ => Ok(()),
        }
    }

    /// Whether storing `dim`-wide vectors from `embedder` starts the
    /// namespace afresh: it is empty and they differ from its old ones.
    pub(super) fn starts_afresh(&self, embedder: Option<&str>, dim: usize) -> bool {
        embedder.is_some() && self.records.is_empty() && (self.embedder.as_deref() != embedder || self.dim() != Some(dim))
    }

    /// Records the identity of vectors about to be stored (checked by
    /// [`LongTerm::check_embedder`]). An empty namespace takes any
    /// embedder, and its old index (perhaps of another width) goes.
    pub(super) fn claim_embedder(&mut self, embedder: Option<&str>, dim: usize) {
        let Some(given) = embedder else { return };
        if self.starts_afresh(embedder, dim) {
            self.index = None;
            self.restage = None;
        }
        self.embedder = Some(given.to_owned());
    }

    /// Drops a record's staged vector (its text changed, or it went).
    pub(super) fn unstage(&mut self, key: u64) {
        if let Some(r) = self.restage.as_mut() {
            r.vectors.remove(&key);
        }
    }

    /// Live records that a re-embedding to `embedder` has not staged yet,
    /// as `(id, text)`, at most `limit` of them, in key order.
    pub fn reembed_pending(&self, embedder: &str, limit: usize) -> Vec<(String, String)> {
        let staged = self.restage.as_ref().filter(|r| r.embedder == embedder).map(|r| &r.vectors);
        self.records.iter().filter(|(k, _)| !staged.is_some_and(|s| s.contains_key(k))).take(limit).map(|(_, r)| (r.id.clone(), r.text.clone())).collect()
    }

    pub(super) fn apply_reembed(&mut self, embedder: &str, rows: &[Row], finish: bool) -> Result<LtmApplied> {
        check_name(embedder)?;
        if rows.len() > limits::LTM_REEMBED_BATCH_MAX {
            return Err(Error::LimitExceeded { what: "rows in one re-embedding op".into(), limit: limits::LTM_REEMBED_BATCH_MAX as u64 });
        }
        let staged_dim = self.restage.as_ref().filter(|r| r.embedder == embedder).map(|r| r.dim);
        let dim = rows.first().map(|r| r.vector.len()).or(staged_dim);
        for (i, r) in rows.iter().enumerate() {
            if Some(r.vector.len()) != dim {
                return Err(Error::InvalidVector { code: VectorCode::DimensionMismatch, detail: format!("rows[{i}] has {} dimensions, the re-embedding {}", r.vector.len(), dim.unwrap_or(0)) });
            }
            check_components(&r.vector).map_err(|e| match e {
                Error::InvalidVector { code, detail } => Error::InvalidVector { code, detail: format!("rows[{i}]: {detail}") },
                other => other,
            })?;
        }
        // A new target (another embedder or dimension) starts over.
        if let Some(d) = dim {
            if self.restage.as_ref().is_none_or(|r| r.embedder != embedder || r.dim != d) {
                self.restage = Some(Restage { embedder: embedder.to_owned(), dim: d, vectors: BTreeMap::new() });
            }
        }
        if let Some(stage) = self.restage.as_mut() {
            for r in rows {
                // A record deleted since its text was read is simply gone.
                if let Some(&k) = self.ids.get(&r.id) {
                    stage.vectors.insert(k, r.vector.clone());
                }
            }
        }
        let staged = self.restage.as_ref().map_or(0, |r| r.vectors.len());
        if !finish {
            return Ok(LtmApplied::Reembedded { staged, finished: false });
        }
        if self.records.is_empty() {
            self.embedder = Some(embedder.to_owned());
            self.index = None;
            self.restage = None;
            return Ok(LtmApplied::Reembedded { staged: 0, finished: true });
        }
        let missing = self.reembed_pending(embedder, usize::MAX).len();
        if missing > 0 {
            return Err(Error::invalid("finish", format!("{missing} records have no new vector yet: stage them before finishing")));
        }
        let Some(stage) = self.restage.take() else { return Err(Error::Internal { detail: "no staging to finish".into() }) };
        // Build the whole new index before touching the old one, so a
        // failure leaves the namespace as it was.
        let mut index = VectorIndex::new(self.index_config(stage.dim))?;
        for k in self.records.keys() {
            let v = stage.vectors.get(k).ok_or_else(|| Error::Internal { detail: format!("key {k} not staged") })?;
            index.add(*k, v)?;
        }
        self.index = Some(index);
        self.embedder = Some(stage.embedder);
        Ok(LtmApplied::Reembedded { staged: self.records.len(), finished: true })
    }
}
