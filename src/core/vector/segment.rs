//! Segments: rows of vectors with their keys and tombstones, plus (for
//! sealed segments) an HNSW graph over the same rows.

use super::hnsw::Graph;
use super::rows::Vectors;

/// A segment: the flat one (no graph, deletes swap-remove) or a sealed one
/// (graph over its rows, deletes are tombstones).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Segment {
    /// Stable id: 0 is the flat segment, sealed segments count up from 1.
    pub id: u32,
    pub keys: Vec<u64>,
    /// Tombstone bitset, one bit per row.
    pub dead: Vec<u64>,
    pub dead_count: usize,
    pub vectors: Vectors,
    pub graph: Option<Graph>,
}

impl Segment {
    pub fn new(id: u32, vectors: Vectors) -> Segment {
        Segment { id, keys: Vec::new(), dead: Vec::new(), dead_count: 0, vectors, graph: None }
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn live(&self) -> usize {
        self.keys.len() - self.dead_count
    }

    #[inline]
    pub fn is_dead(&self, slot: usize) -> bool {
        self.dead.get(slot / 64).is_some_and(|w| w & (1 << (slot % 64)) != 0)
    }

    /// Marks `slot` dead; returns false if it already was.
    pub fn kill(&mut self, slot: usize) -> bool {
        if self.dead.len() < self.keys.len().div_ceil(64) {
            self.dead.resize(self.keys.len().div_ceil(64), 0);
        }
        if slot >= self.keys.len() || self.is_dead(slot) {
            return false;
        }
        self.dead[slot / 64] |= 1 << (slot % 64);
        self.dead_count += 1;
        true
    }

    pub fn memory_bytes(&self) -> usize {
        self.keys.capacity() * 8 + self.dead.capacity() * 8 + self.vectors.memory_bytes() + self.graph.as_ref().map_or(0, Graph::memory_bytes)
    }
}
