//! The vector index: an LSM-like map of `u64` keys to vectors of one fixed
//! dimension, for one namespace.
//!
//! - New points go to a mutable **flat segment**, searched exactly by a SIMD
//!   dot-product scan, so an insert is searchable at once.
//! - [`VectorIndex::compact`] seals the flat segment into an immutable
//!   **HNSW segment** (graph built by `instant-distance`) once it holds
//!   [`Config::seal_points`] points, merges small segments and rebuilds
//!   heavily tombstoned ones, never building more than the caller's bound of
//!   points in one call.
//! - Deletes and replacements are **tombstones** in sealed segments (and a
//!   swap-remove in the flat one): a deleted key is never returned.
//! - [`VectorIndex::encode`] writes one self-checking blob with the graphs as
//!   they are; [`VectorIndex::decode`] restores it without a rebuild.
//!
//! Memory (100k × 384, cosine, defaults): f32 rows take 153.6 MB and the
//! graphs about 8 MB (measured 74 bytes a point on the rustdocs set), which
//! does **not** fit a 128 MB Worker. With [`Quantization::Int8`] only int8
//! codes and one f32 scale per row are resident (38.8 MB), plus the graphs
//! (8 MB), keys (0.8 MB) and the key map (about 2.5 MB): about 50 MB, which
//! fits with room for the records themselves. The f32 originals are then not in memory at all;
//! candidates are picked on int8 codes and re-scored with the f32 query
//! against the codes (relative error ≈ 0.4 %), or exactly when the caller
//! passes the originals to [`VectorIndex::search_reranked`] (for example from
//! Durable Object storage). Keeping f32 originals resident beside the codes
//! would cost the full 153.6 MB again.

mod codec;
mod compact;
pub mod distance;
mod hnsw;
mod readout;
mod rows;
mod search;
mod segment;
#[cfg(test)]
mod tests;

use std::collections::{HashMap, HashSet};

pub use compact::CompactReport;
pub use distance::{dot_f32, dot_i8};
pub use search::{Originals, Scratch};
use search::How;

use crate::core::error::{Error, Result, VectorCode};
use crate::core::limits;
use distance::{norm, quantize};
use rows::{Query, Vectors};
use segment::Segment;

/// How similarity is measured. Scores are similarities: higher is nearer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// Cosine similarity: vectors are L2-normalized on insert, zero vectors
    /// are refused.
    Cosine,
    /// Raw dot product (for embeddings that are meant to be compared so).
    Dot,
}

/// How rows are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantization {
    /// f32 rows: exact scores, 4 bytes a component.
    None,
    /// Int8 codes with one scale per row: 1 byte a component; see the
    /// module documentation for what this keeps in memory.
    Int8,
}

/// The parameters of an index, fixed at creation. Built like
/// instant-distance's `Builder`: `Config::new(dim, metric)` then setters.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Components per vector, 1 to [`limits::VECTOR_DIM_MAX`].
    pub dim: usize,
    /// Default [`Metric::Cosine`] is the caller's choice in `new`.
    pub metric: Metric,
    /// Default [`Quantization::None`].
    pub quantization: Quantization,
    /// Flat-segment size at which compaction seals it into a graph; default
    /// [`limits::VECTOR_SEAL_POINTS_DEFAULT`].
    pub seal_points: usize,
    /// Beam width while building graphs; default
    /// [`limits::VECTOR_EF_CONSTRUCTION_DEFAULT`].
    pub ef_construction: usize,
    /// Beam width of a search that names none; default
    /// [`limits::VECTOR_EF_SEARCH_DEFAULT`].
    pub ef_search: usize,
    /// Layer-0 links kept per node (HNSW's `2·M`); default
    /// [`limits::VECTOR_LINKS_DEFAULT`], at most [`limits::VECTOR_LINKS_MAX`].
    pub links_max: usize,
    /// Whether the build keeps heuristically pruned links to fill each
    /// node's list (instant-distance's default, `true`, is 3–5× slower to
    /// build for little recall); default `false`.
    pub keep_pruned: bool,
    /// Seed of the graph builder's level draws (the core has no RNG).
    pub seed: u64,
}

impl Config {
    /// A configuration with the documented defaults.
    pub fn new(dim: usize, metric: Metric) -> Config {
        Config {
            dim,
            metric,
            quantization: Quantization::None,
            seal_points: limits::VECTOR_SEAL_POINTS_DEFAULT,
            ef_construction: limits::VECTOR_EF_CONSTRUCTION_DEFAULT,
            ef_search: limits::VECTOR_EF_SEARCH_DEFAULT,
            links_max: limits::VECTOR_LINKS_DEFAULT,
            keep_pruned: false,
            seed: 0,
        }
    }

    /// Sets [`Config::quantization`].
    pub fn quantization(mut self, q: Quantization) -> Config {
        self.quantization = q;
        self
    }

    /// Sets [`Config::seal_points`].
    pub fn seal_points(mut self, n: usize) -> Config {
        self.seal_points = n;
        self
    }

    /// Sets [`Config::ef_construction`].
    pub fn ef_construction(mut self, ef: usize) -> Config {
        self.ef_construction = ef;
        self
    }

    /// Sets [`Config::ef_search`].
    pub fn ef_search(mut self, ef: usize) -> Config {
        self.ef_search = ef;
        self
    }

    /// Sets [`Config::links_max`].
    pub fn links_max(mut self, n: usize) -> Config {
        self.links_max = n;
        self
    }

    /// Sets [`Config::keep_pruned`].
    pub fn keep_pruned(mut self, keep: bool) -> Config {
        self.keep_pruned = keep;
        self
    }

    /// Sets [`Config::seed`].
    pub fn seed(mut self, seed: u64) -> Config {
        self.seed = seed;
        self
    }

    /// Checks every field against its bounds.
    pub fn validate(&self) -> Result<()> {
        let range = |field: &str, v: usize, lo: usize, hi: usize| {
            if v < lo || v > hi {
                Err(Error::invalid(field, format!("must be {lo} to {hi}, got {v}")))
            } else {
                Ok(())
            }
        };
        range("dim", self.dim, 1, limits::VECTOR_DIM_MAX)?;
        range("seal_points", self.seal_points, limits::VECTOR_SEAL_POINTS_MIN, limits::VECTOR_SEGMENT_POINTS_MAX)?;
        range("ef_construction", self.ef_construction, 1, limits::VECTOR_EF_MAX)?;
        range("ef_search", self.ef_search, 1, limits::VECTOR_EF_MAX)?;
        range("links_max", self.links_max, 2, limits::VECTOR_LINKS_MAX)
    }
}

/// Parameters of one search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchParams {
    /// Results wanted, 1 to [`limits::VECTOR_K_MAX`].
    pub k: usize,
    /// HNSW beam width (raised to `k` if smaller); `None` uses
    /// [`Config::ef_search`]. At most [`limits::VECTOR_EF_MAX`].
    pub ef: Option<usize>,
}

/// Which keys a search may return.
#[derive(Clone, Copy)]
pub enum Eligible<'a> {
    /// Every live key.
    All,
    /// Keys the predicate accepts: graph search with oversampling, redone
    /// as an exact scan when the graph cannot fill `k`.
    Predicate(&'a dyn Fn(u64) -> bool),
    /// Exactly these keys (unknown ones are ignored). Up to
    /// [`limits::VECTOR_FILTER_EXACT_KEYS_MAX`] keys are answered exactly by
    /// reading only their rows; larger sets act as a predicate.
    Keys(&'a [u64]),
}

/// The kind of a segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SegmentKind {
    /// The mutable segment, searched exactly.
    Flat,
    /// An immutable segment with an HNSW graph.
    Hnsw,
}

/// Id of the flat segment; sealed segments count up from 1.
pub const FLAT_SEGMENT_ID: u32 = 0;

/// One search result.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hit {
    pub key: u64,
    /// Similarity (cosine or dot): higher is better.
    pub score: f32,
    /// The segment that answered ([`FLAT_SEGMENT_ID`] or a sealed id).
    pub segment: u32,
}

impl Hit {
    /// Which kind of segment answered.
    pub fn kind(&self) -> SegmentKind {
        if self.segment == FLAT_SEGMENT_ID {
            SegmentKind::Flat
        } else {
            SegmentKind::Hnsw
        }
    }
}

/// One segment in [`Stats`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentStats {
    pub id: u32,
    pub kind: SegmentKind,
    /// Rows stored, live or tombstoned.
    pub rows: usize,
    pub tombstones: usize,
    /// HNSW layers (0 for the flat segment).
    pub layers: usize,
    pub memory_bytes: usize,
}

/// A summary of the index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stats {
    /// Live points.
    pub points: usize,
    /// The flat segment first, then sealed segments by id.
    pub segments: Vec<SegmentStats>,
    /// Graphs built by this value since it was created or decoded (a decode
    /// builds none).
    pub builds: u64,
    pub memory_bytes: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Loc {
    segment: u32,
    slot: u32,
}

/// The index. See the module documentation.
#[derive(Clone, Debug)]
pub struct VectorIndex {
    config: Config,
    flat: Segment,
    /// Sorted by id.
    sealed: Vec<Segment>,
    locs: HashMap<u64, Loc>,
    next_id: u32,
    builds: u64,
}

impl VectorIndex {
    /// An empty index.
    pub fn new(config: Config) -> Result<VectorIndex> {
        config.validate()?;
        let flat = Segment::new(FLAT_SEGMENT_ID, Vectors::empty(config.dim, config.quantization == Quantization::Int8));
        Ok(VectorIndex { config, flat, sealed: Vec::new(), locs: HashMap::new(), next_id: 1, builds: 0 })
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Live points.
    pub fn len(&self) -> usize {
        self.locs.len()
    }

    /// Whether no point is live.
    pub fn is_empty(&self) -> bool {
        self.locs.is_empty()
    }

    /// Whether `key` is live.
    pub fn contains(&self, key: u64) -> bool {
        self.locs.contains_key(&key)
    }

    fn rows(&self) -> usize {
        self.flat.len() + self.sealed.iter().map(Segment::len).sum::<usize>()
    }

    /// Refuses a vector that is not of this index: wrong length, NaN or
    /// infinite (or absurdly large) components, all zeros under cosine.
    fn check(&self, v: &[f32]) -> Result<()> {
        if v.len() != self.config.dim {
            return Err(Error::InvalidVector { code: VectorCode::DimensionMismatch, detail: format!("expected {} components, got {}", self.config.dim, v.len()) });
        }
        if let Some(i) = v.iter().position(|x| !x.is_finite()) {
            return Err(Error::InvalidVector { code: VectorCode::NonFinite, detail: format!("component {i} is not finite") });
        }
        if let Some(i) = v.iter().position(|x| x.abs() > limits::VECTOR_COMPONENT_ABS_MAX) {
            return Err(Error::InvalidVector {
                code: VectorCode::NonFinite,
                detail: format!("component {i} exceeds {:e}, so dot products would overflow", limits::VECTOR_COMPONENT_ABS_MAX),
            });
        }
        if self.config.metric == Metric::Cosine && v.iter().all(|x| *x == 0.0) {
            return Err(Error::InvalidVector { code: VectorCode::ZeroVector, detail: "cosine needs a vector with a direction".into() });
        }
        Ok(())
    }

    /// Checks `v` and writes its stored form into `q`.
    fn prepare(&self, v: &[f32], q: &mut Query) -> Result<()> {
        self.check(v)?;
        q.f32.clear();
        match self.config.metric {
            Metric::Dot => q.f32.extend_from_slice(v),
            Metric::Cosine => {
                let n = norm(v);
                q.f32.extend(v.iter().map(|x| (f64::from(*x) / n) as f32));
            }
        }
        if self.config.quantization == Quantization::Int8 {
            q.codes.resize(self.config.dim, 0);
            q.scale = quantize(&q.f32, &mut q.codes);
        }
        Ok(())
    }

    fn check_room(&self, new_keys: usize, new_rows: usize) -> Result<()> {
        if self.len() + new_keys > limits::VECTOR_POINTS_MAX {
            return Err(Error::LimitExceeded { what: "vector index points".into(), limit: limits::VECTOR_POINTS_MAX as u64 });
        }
        if self.rows() + new_rows > limits::VECTOR_ROWS_MAX {
            return Err(Error::LimitExceeded { what: "vector index rows (compact to drop tombstones)".into(), limit: limits::VECTOR_ROWS_MAX as u64 });
        }
        Ok(())
    }

    /// Inserts or replaces `key`. Returns whether it replaced a live point.
    pub fn add(&mut self, key: u64, vector: &[f32]) -> Result<bool> {
        let mut q = Query::default();
        self.prepare(vector, &mut q)?;
        self.check_room(usize::from(!self.contains(key)), 1)?;
        let replaced = self.remove(key);
        self.push_flat(key, &q);
        Ok(replaced)
    }

    /// [`VectorIndex::add`] for a vector this index stored before (as
    /// [`VectorIndex::get`] answers it), kept bit for bit: normalizing a
    /// unit vector again moves its last bits, so an export imported
    /// elsewhere would not hold the vectors it carried. A vector that is
    /// not unit length (within f32 precision) is normalized as `add` does.
    pub fn add_stored(&mut self, key: u64, vector: &[f32]) -> Result<bool> {
        let unit = self.config.metric == Metric::Cosine && (norm(vector) - 1.0).abs() <= 4.0 * f64::from(f32::EPSILON);
        if !unit {
            return self.add(key, vector);
        }
        self.check(vector)?;
        let mut q = Query::default();
        q.f32.extend_from_slice(vector);
        if self.config.quantization == Quantization::Int8 {
            q.codes.resize(self.config.dim, 0);
            q.scale = quantize(&q.f32, &mut q.codes);
        }
        self.check_room(usize::from(!self.contains(key)), 1)?;
        let replaced = self.remove(key);
        self.push_flat(key, &q);
        Ok(replaced)
    }

    /// Inserts or replaces many points: `vectors` is `keys.len()` rows,
    /// row-major. Every row is checked before any is inserted, so a refused
    /// batch changes nothing. A key repeated in the batch keeps its last row.
    pub fn add_batch(&mut self, keys: &[u64], vectors: &[f32]) -> Result<()> {
        if keys.len() > limits::VECTOR_BATCH_POINTS_MAX {
            return Err(Error::LimitExceeded { what: "points in one batch".into(), limit: limits::VECTOR_BATCH_POINTS_MAX as u64 });
        }
        let dim = self.config.dim;
        if Some(vectors.len()) != keys.len().checked_mul(dim) {
            return Err(Error::InvalidVector {
                code: VectorCode::DimensionMismatch,
                detail: format!("{} keys need {} components of dimension {dim}, got {}", keys.len(), keys.len().saturating_mul(dim), vectors.len()),
            });
        }
        for (i, row) in vectors.chunks_exact(dim).enumerate() {
            self.check(row).map_err(|e| match e {
                Error::InvalidVector { code, detail } => Error::InvalidVector { code, detail: format!("row {i}: {detail}") },
                other => other,
            })?;
        }
        let distinct: HashSet<u64> = keys.iter().copied().collect();
        let new = distinct.iter().filter(|k| !self.contains(**k)).count();
        self.check_room(new, keys.len())?;
        let mut q = Query::default();
        for (key, row) in keys.iter().zip(vectors.chunks_exact(dim)) {
            self.prepare(row, &mut q)?;
            self.remove(*key);
            self.push_flat(*key, &q);
        }
        Ok(())
    }

    fn push_flat(&mut self, key: u64, q: &Query) {
        let slot = self.flat.len() as u32;
        self.flat.keys.push(key);
        self.flat.vectors.push(q);
        self.locs.insert(key, Loc { segment: FLAT_SEGMENT_ID, slot });
    }

    /// Deletes `key`; returns whether it was live.
    pub fn remove(&mut self, key: u64) -> bool {
        let Some(loc) = self.locs.remove(&key) else { return false };
        let slot = loc.slot as usize;
        if loc.segment == FLAT_SEGMENT_ID {
            if slot >= self.flat.len() {
                return true;
            }
            self.flat.keys.swap_remove(slot);
            self.flat.vectors.swap_remove(slot);
            if let Some(&moved) = self.flat.keys.get(slot) {
                self.locs.insert(moved, Loc { segment: FLAT_SEGMENT_ID, slot: loc.slot });
            }
        } else if let Ok(i) = self.sealed.binary_search_by_key(&loc.segment, |s| s.id) {
            self.sealed[i].kill(slot);
        }
        true
    }

    fn segment(&self, id: u32) -> Option<&Segment> {
        if id == FLAT_SEGMENT_ID {
            return Some(&self.flat);
        }
        self.sealed.binary_search_by_key(&id, |s| s.id).ok().map(|i| &self.sealed[i])
    }

    fn locate(&self, key: u64) -> Option<(&Segment, usize)> {
        let loc = self.locs.get(&key)?;
        let seg = self.segment(loc.segment)?;
        ((loc.slot as usize) < seg.len()).then_some((seg, loc.slot as usize))
    }

    /// The stored vector of `key`: unit length under cosine, dequantized
    /// under int8.
    pub fn get(&self, key: u64) -> Option<Vec<f32>> {
        let (seg, slot) = self.locate(key)?;
        let mut v = Vec::new();
        seg.vectors.row_f32(slot, &mut v);
        Some(v)
    }

    /// Every live `(key, stored vector)` in key order: two indexes holding
    /// the same points compare equal here whatever their segment layout.
    pub fn live_entries(&self) -> Vec<(u64, Vec<f32>)> {
        let mut keys: Vec<u64> = self.locs.keys().copied().collect();
        keys.sort_unstable();
        keys.into_iter().filter_map(|k| self.get(k).map(|v| (k, v))).collect()
    }

    /// Approximate search over every segment (graphs for sealed segments,
    /// an exact scan of the flat one). Results go to `out`, best first.
    pub fn search(&self, query: &[f32], params: &SearchParams, filter: &Eligible<'_>, scratch: &mut Scratch, out: &mut Vec<Hit>) -> Result<()> {
        self.run(query, params, filter, How::Graph(None), scratch, out)
    }

    /// [`VectorIndex::search`], re-ranking int8 candidates exactly with the
    /// caller's original vectors. Same as `search` for an f32 index.
    pub fn search_reranked(
        &self,
        query: &[f32],
        params: &SearchParams,
        filter: &Eligible<'_>,
        originals: Originals<'_>,
        scratch: &mut Scratch,
        out: &mut Vec<Hit>,
    ) -> Result<()> {
        self.run(query, params, filter, How::Graph(Some(originals)), scratch, out)
    }

    /// Brute force over every live row (ground truth, small sets). `ef` is
    /// checked but unused.
    pub fn search_exact(&self, query: &[f32], params: &SearchParams, filter: &Eligible<'_>, scratch: &mut Scratch, out: &mut Vec<Hit>) -> Result<()> {
        self.run(query, params, filter, How::Exact, scratch, out)
    }

    /// Bytes held by the index's buffers.
    pub fn memory_bytes(&self) -> usize {
        let locs = self.locs.capacity() * (std::mem::size_of::<(u64, Loc)>() + 1);
        self.flat.memory_bytes() + self.sealed.iter().map(Segment::memory_bytes).sum::<usize>() + locs
    }

    /// Segments, points and memory.
    pub fn stats(&self) -> Stats {
        let segments = std::iter::once(&self.flat)
            .chain(&self.sealed)
            .map(|s| SegmentStats {
                id: s.id,
                kind: if s.graph.is_some() { SegmentKind::Hnsw } else { SegmentKind::Flat },
                rows: s.len(),
                tombstones: s.dead_count,
                layers: s.graph.as_ref().map_or(0, |g| g.layers.len()),
                memory_bytes: s.memory_bytes(),
            })
            .collect();
        Stats { points: self.len(), segments, builds: self.builds, memory_bytes: self.memory_bytes() }
    }
}
