//! Row storage: the vectors of one segment (f32 or int8 with a scale per
//! row) and prepared queries. Its own module because both the segment and
//! the HNSW graph read rows; kept in `segment.rs`, the two would depend on
//! each other.

use super::distance::{dot_f32, dot_f32_i8, dot_i8};

/// The rows of one segment, stored contiguously (row-major).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Vectors {
    /// Full-precision rows (cosine rows are already unit length).
    F32 { dim: usize, data: Vec<f32> },
    /// Int8 codes and one scale per row: `row ≈ scale * codes`.
    I8 { dim: usize, codes: Vec<i8>, scales: Vec<f32> },
}

/// A prepared query: its f32 form, and its int8 form when the index is
/// quantized.
#[derive(Default)]
pub(crate) struct Query {
    pub f32: Vec<f32>,
    pub codes: Vec<i8>,
    pub scale: f32,
}

impl Vectors {
    pub fn empty(dim: usize, int8: bool) -> Vectors {
        if int8 {
            Vectors::I8 { dim, codes: Vec::new(), scales: Vec::new() }
        } else {
            Vectors::F32 { dim, data: Vec::new() }
        }
    }

    /// Empty, with room for exactly `rows` rows (sealed segments never grow,
    /// so they should not carry a doubling buffer's slack).
    pub fn with_capacity(dim: usize, int8: bool, rows: usize) -> Vectors {
        if int8 {
            Vectors::I8 { dim, codes: Vec::with_capacity(rows * dim), scales: Vec::with_capacity(rows) }
        } else {
            Vectors::F32 { dim, data: Vec::with_capacity(rows * dim) }
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Vectors::F32 { dim, data } => data.len() / (*dim).max(1),
            Vectors::I8 { scales, .. } => scales.len(),
        }
    }

    pub fn is_int8(&self) -> bool {
        matches!(self, Vectors::I8 { .. })
    }

    /// Appends a prepared row (f32 unit/raw row, or its codes and scale).
    pub fn push(&mut self, q: &Query) {
        match self {
            Vectors::F32 { data, .. } => data.extend_from_slice(&q.f32),
            Vectors::I8 { codes, scales, .. } => {
                codes.extend_from_slice(&q.codes);
                scales.push(q.scale);
            }
        }
    }

    /// Appends row `slot` of `other` (same kind and dimension).
    pub fn push_from(&mut self, other: &Vectors, slot: usize) {
        match (self, other) {
            (Vectors::F32 { dim, data }, Vectors::F32 { data: src, .. }) => {
                data.extend_from_slice(&src[slot * *dim..(slot + 1) * *dim]);
            }
            (Vectors::I8 { dim, codes, scales }, Vectors::I8 { codes: src, scales: ss, .. }) => {
                codes.extend_from_slice(&src[slot * *dim..(slot + 1) * *dim]);
                scales.push(ss[slot]);
            }
            _ => debug_assert!(false, "segments of one index share a kind"),
        }
    }

    /// Reorders the rows in place so that row `new` holds what row
    /// `order[new]` held (`order` is a permutation of `0..len()`). A graph
    /// build hands back such an order; permuting in place, one cycle at a
    /// time with a single row of scratch, saves a second copy of the segment
    /// at the peak of a build.
    pub fn permute(&mut self, order: &[u32]) {
        debug_assert_eq!(order.len(), self.len());
        let n = order.len();
        let mut done = vec![false; n];
        match self {
            Vectors::F32 { dim, data } => permute_rows(data, *dim, order, &mut done, &mut Vec::new()),
            Vectors::I8 { dim, codes, scales } => {
                permute_rows(codes, *dim, order, &mut done, &mut Vec::new());
                done.iter_mut().for_each(|d| *d = false);
                permute_rows(scales, 1, order, &mut done, &mut Vec::new());
            }
        }
    }

    pub fn swap_remove(&mut self, slot: usize) {
        let last = self.len() - 1;
        match self {
            Vectors::F32 { dim, data } => {
                let d = *dim;
                data.copy_within(last * d..(last + 1) * d, slot * d);
                data.truncate(last * d);
            }
            Vectors::I8 { dim, codes, scales } => {
                let d = *dim;
                codes.copy_within(last * d..(last + 1) * d, slot * d);
                codes.truncate(last * d);
                scales.swap_remove(slot);
            }
        }
    }

    /// Similarity between two stored rows (used while building graphs).
    #[inline]
    pub fn sim_rows(&self, a: usize, b: usize) -> f32 {
        match self {
            Vectors::F32 { dim, data } => dot_f32(&data[a * dim..(a + 1) * dim], &data[b * dim..(b + 1) * dim]),
            Vectors::I8 { dim, codes, scales } => {
                scales[a] * scales[b] * dot_i8(&codes[a * dim..(a + 1) * dim], &codes[b * dim..(b + 1) * dim]) as f32
            }
        }
    }

    /// The fast similarity of the query to row `slot`: exact for f32, both
    /// sides quantized for int8 (candidate selection only).
    #[inline]
    pub fn sim(&self, q: &Query, slot: usize) -> f32 {
        match self {
            Vectors::F32 { dim, data } => dot_f32(&q.f32, &data[slot * dim..(slot + 1) * dim]),
            Vectors::I8 { dim, codes, scales } => q.scale * scales[slot] * dot_i8(&q.codes, &codes[slot * dim..(slot + 1) * dim]) as f32,
        }
    }

    /// `f(slot, sim)` for every row, in order: the flat-scan loop, walking
    /// the rows by chunks so there is no per-row dispatch or bounds check.
    #[inline]
    pub fn for_each_sim(&self, q: &Query, mut f: impl FnMut(usize, f32)) {
        match self {
            Vectors::F32 { dim, data } => {
                for (slot, row) in data.chunks_exact(*dim).enumerate() {
                    f(slot, dot_f32(&q.f32, row));
                }
            }
            Vectors::I8 { dim, codes, scales } => {
                for (slot, (row, s)) in codes.chunks_exact(*dim).zip(scales).enumerate() {
                    f(slot, q.scale * s * dot_i8(&q.codes, row) as f32);
                }
            }
        }
    }

    /// The best similarity the index can give without the original: exact
    /// for f32, f32 query against the int8 row otherwise.
    pub fn sim_fine(&self, q: &Query, slot: usize) -> f32 {
        match self {
            Vectors::F32 { .. } => self.sim(q, slot),
            Vectors::I8 { dim, codes, scales } => scales[slot] * dot_f32_i8(&q.f32, &codes[slot * dim..(slot + 1) * dim]),
        }
    }

    /// Row `slot` as f32 (dequantized for int8).
    pub fn row_f32(&self, slot: usize, out: &mut Vec<f32>) {
        out.clear();
        match self {
            Vectors::F32 { dim, data } => out.extend_from_slice(&data[slot * dim..(slot + 1) * dim]),
            Vectors::I8 { dim, codes, scales } => {
                let s = scales[slot];
                out.extend(codes[slot * dim..(slot + 1) * dim].iter().map(|c| s * f32::from(*c)));
            }
        }
    }

    pub fn memory_bytes(&self) -> usize {
        match self {
            Vectors::F32 { data, .. } => data.capacity() * 4,
            Vectors::I8 { codes, scales, .. } => codes.capacity() + scales.capacity() * 4,
        }
    }
}

/// Gathers `data`'s rows of `dim` items by `order`, in place: follows each
/// cycle of the permutation once. An `order` that is not a permutation leaves
/// rows unmoved rather than reading out of bounds.
fn permute_rows<T: Copy>(data: &mut [T], dim: usize, order: &[u32], done: &mut [bool], tmp: &mut Vec<T>) {
    let n = order.len().min(done.len());
    for start in 0..n {
        if done[start] {
            continue;
        }
        tmp.clear();
        tmp.extend_from_slice(&data[start * dim..(start + 1) * dim]);
        let mut at = start;
        loop {
            done[at] = true;
            let from = order[at] as usize;
            if from == start || from >= n || done[from] {
                data[at * dim..(at + 1) * dim].copy_from_slice(tmp);
                break;
            }
            data.copy_within(from * dim..(from + 1) * dim, at * dim);
            at = from;
        }
    }
}
