//! The snapshot form of long-term memory: records with their keys, the
//! encoded vector index, histories; and vectors as bytes inside ops and
//! snapshots. Derived state (BM25, hashes, fact chains, the superseded
//! set) is rebuilt on load, never stored.

use serde::{Deserialize, Serialize};

use super::{facts, reembed, versions, LongTerm};
use crate::core::codec::Bytes;
use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::retrieval::record::MemoryRecord;
use crate::core::vector::VectorIndex;

/// Vectors as little-endian bytes inside ops and snapshots: MessagePack
/// `bin`, copied in bulk rather than one float at a time.
pub mod f32_bytes {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &[f32], s: S) -> Result<S::Ok, S::Error> {
        let mut b = Vec::with_capacity(v.len() * 4);
        for x in v {
            b.extend_from_slice(&x.to_le_bytes());
        }
        s.serialize_bytes(&b)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f32>, D::Error> {
        let b: crate::core::codec::Bytes = Deserialize::deserialize(d)?;
        if b.0.len() % 4 != 0 {
            return Err(serde::de::Error::custom("vector bytes not a multiple of 4"));
        }
        Ok(b.0.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
    }
}

pub(super) mod opt_f32_bytes {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &Option<Vec<f32>>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(v) => super::f32_bytes::serialize(v, s),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<f32>>, D::Error> {
        let b: Option<super::Bytes> = Option::deserialize(d)?;
        match b {
            None => Ok(None),
            Some(b) if b.0.len() % 4 != 0 => Err(serde::de::Error::custom("vector bytes not a multiple of 4")),
            Some(b) => Ok(Some(b.0.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())),
        }
    }
}

/// The snapshot form: records with their keys, and the encoded index.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LongTermSnapshot {
    pub next_key: u64,
    pub records: Vec<(u64, MemoryRecord)>,
    /// [`VectorIndex::encode`], or empty before the first vector.
    pub index: Bytes,
    /// What made the vectors; `None` in snapshots from before identities.
    #[serde(default)]
    pub embedder: Option<String>,
    /// A re-embedding in progress.
    #[serde(default)]
    pub restage: Option<reembed::RestageSnapshot>,
    /// Every record's history (see [`versions`]); empty in snapshots from
    /// before versions.
    #[serde(default)]
    pub versions: Vec<(String, Vec<versions::Version>)>,
}

impl LongTerm {
    /// The snapshot form.
    pub fn to_snapshot(&self) -> LongTermSnapshot {
        LongTermSnapshot {
            next_key: self.next_key,
            records: self.records.iter().map(|(k, r)| (*k, r.clone())).collect(),
            index: Bytes(self.index.as_ref().map(VectorIndex::encode).unwrap_or_default()),
            embedder: self.embedder.clone(),
            restage: self.restage.as_ref().map(reembed::Restage::to_snapshot),
            versions: self.histories.to_snapshot(),
        }
    }

    /// Rebuilds from a snapshot: records validated, the index decoded as is
    /// (no graph rebuild), BM25 re-derived from the texts.
    pub fn from_snapshot(s: LongTermSnapshot) -> Result<LongTerm> {
        if s.records.len() > limits::LTM_RECORDS_MAX {
            return Err(Error::SnapshotCorrupt { reason: "more long-term memories than the limit".into() });
        }
        let mut lt = LongTerm::new();
        lt.next_key = s.next_key;
        if let Some(name) = &s.embedder {
            reembed::check_name(name).map_err(|e| Error::SnapshotCorrupt { reason: e.to_string() })?;
        }
        lt.embedder = s.embedder;
        lt.restage = s.restage.map(reembed::Restage::from_snapshot).transpose()?;
        if !s.index.0.is_empty() {
            lt.index = Some(VectorIndex::decode(&s.index.0)?);
        }
        for (k, r) in s.records {
            r.validate().map_err(|e| Error::SnapshotCorrupt { reason: format!("memory {:?}: {e}", r.id) })?;
            let live = lt.index.as_ref().is_some_and(|i| i.contains(k));
            if k >= lt.next_key || !live || lt.ids.insert(r.id.clone(), k).is_some() {
                return Err(Error::SnapshotCorrupt { reason: format!("memory {:?}: key {k} inconsistent", r.id) });
            }
            lt.bm25.add(k, &r.text).map_err(|e| Error::SnapshotCorrupt { reason: e.to_string() })?;
            lt.hashes.entry(r.memory_hash.clone()).or_default().push(k);
            lt.mark(k, &r);
            if let Some(chain) = facts::chain_key(&r) {
                lt.chains.entry(chain).or_default().insert((facts::valid_from(&r), k));
            }
            lt.records.insert(k, r);
        }
        let ids = &lt.ids;
        lt.histories = versions::Histories::from_snapshot(s.versions, |id| ids.contains_key(id))?;
        // The stored chain fields are the rule's output; applying it again
        // changes nothing in a sound snapshot and repairs a hand-made one.
        for chain in lt.chains.keys().cloned().collect::<Vec<_>>() {
            lt.relink(&chain);
        }
        if lt.index.as_ref().map_or(0, VectorIndex::len) != lt.records.len() {
            return Err(Error::SnapshotCorrupt { reason: "vector index and records disagree".into() });
        }
        Ok(lt)
    }

    /// The next key a record would get (export).
    pub fn next_key(&self) -> u64 {
        self.next_key
    }

    /// Every record with its key, in key order (export).
    pub fn keyed_records(&self) -> impl Iterator<Item = (u64, &MemoryRecord)> {
        self.records.iter().map(|(k, r)| (*k, r))
    }

    /// The records with keys after `after` and below `below`, in key order
    /// (a page of a shard's export).
    pub fn keyed_records_between(&self, after: Option<u64>, below: u64) -> impl Iterator<Item = (u64, &MemoryRecord)> {
        use std::ops::Bound::{Excluded, Unbounded};
        // BTreeMap::range panics on an empty range with both ends excluded.
        let bounds = match after {
            Some(a) if a.saturating_add(1) < below => (Excluded(a), Excluded(below)),
            Some(_) => (Unbounded, Excluded(0)),
            None => (Unbounded, Excluded(below)),
        };
        self.records.range(bounds).map(|(k, r)| (*k, r))
    }

    /// The internal key of record `id` (its place in this store).
    pub fn key_of(&self, id: &str) -> Option<&u64> {
        self.ids.get(id)
    }

    /// The histories of ids after `after` (all: `None`), in id order: an
    /// export's, whole or a page of a shard's.
    pub fn histories_after<'a>(&'a self, after: Option<&'a str>) -> impl Iterator<Item = (&'a str, &'a [versions::Version])> + 'a {
        self.histories.after(after)
    }
}
