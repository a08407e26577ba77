//! Search over every segment: graph or exact scan per segment, filters,
//! merged top-k, int8 re-ranking.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use super::distance::{dot_f32, norm};
use super::hnsw::{self, Beam, Cand, Effort};
use super::rows::Query;
use super::segment::Segment;
use super::{Eligible, Hit, SearchParams, VectorIndex};
use crate::core::error::{Error, Result};
use crate::core::limits;

/// Supplies the original f32 vector of a key for exact re-ranking of an
/// int8 index: writes it into the buffer and returns true, or returns false
/// when it does not have it (that hit then keeps its int8 estimate).
pub type Originals<'a> = &'a mut dyn FnMut(u64, &mut Vec<f32>) -> bool;

/// Caller-owned search buffers (as instant-distance's `Search`): one per
/// thread of queries, reused, so a warm search allocates nothing.
#[derive(Default)]
pub struct Scratch {
    query: Query,
    beam: Beam,
    cands: Vec<Cand>,
    top: BinaryHeap<Reverse<Candidate>>,
    subset: Vec<u64>,
    row: Vec<f32>,
    ranked: Vec<Candidate>,
}

#[derive(Clone, Copy, Debug)]
struct Candidate {
    sim: f32,
    key: u64,
    segment: u32,
    slot: u32,
}

impl PartialEq for Candidate {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Candidate {}
impl PartialOrd for Candidate {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Candidate {
    /// Higher similarity first; equal scores prefer the lower key, so
    /// answers do not depend on the segment layout.
    fn cmp(&self, o: &Self) -> Ordering {
        self.sim.total_cmp(&o.sim).then_with(|| o.key.cmp(&self.key))
    }
}

fn offer(top: &mut BinaryHeap<Reverse<Candidate>>, cap: usize, s: Candidate) {
    if top.len() < cap {
        top.push(Reverse(s));
    } else if top.peek().is_some_and(|w| s > w.0) {
        top.pop();
        top.push(Reverse(s));
    }
}

/// Exact scan of every row of `seg` (the flat segment, unfiltered).
fn scan_all(seg: &Segment, q: &Query, cap: usize, top: &mut BinaryHeap<Reverse<Candidate>>) {
    let mut floor = f32::NEG_INFINITY;
    seg.vectors.for_each_sim(q, |slot, sim| {
        if sim >= floor {
            offer(top, cap, Candidate { sim, key: seg.keys[slot], segment: seg.id, slot: slot as u32 });
            if top.len() >= cap {
                floor = top.peek().map_or(floor, |w| w.0.sim);
            }
        }
    });
}

/// Exact scan of the rows of `seg` that `accept` admits.
fn scan(seg: &Segment, q: &Query, cap: usize, top: &mut BinaryHeap<Reverse<Candidate>>, mut accept: impl FnMut(usize) -> bool) {
    for slot in 0..seg.len() {
        if !accept(slot) {
            continue;
        }
        let sim = seg.vectors.sim(q, slot);
        if top.len() < cap || top.peek().is_some_and(|w| sim >= w.0.sim) {
            offer(top, cap, Candidate { sim, key: seg.keys[slot], segment: seg.id, slot: slot as u32 });
        }
    }
}

/// Graph search (with optional originals for int8 re-ranking) or brute force.
pub(super) enum How<'a> {
    Graph(Option<Originals<'a>>),
    Exact,
}

enum Mode<'f> {
    All,
    Pred(&'f dyn Fn(u64) -> bool),
    /// Sorted, deduplicated keys in `Scratch::subset`.
    Set,
}

impl VectorIndex {
    pub(super) fn check_params(&self, p: &SearchParams) -> Result<(usize, usize)> {
        if p.k == 0 {
            return Err(Error::invalid("k", "must be at least 1"));
        }
        if p.k > limits::VECTOR_K_MAX {
            return Err(Error::LimitExceeded { what: "k".into(), limit: limits::VECTOR_K_MAX as u64 });
        }
        let ef = p.ef.unwrap_or(self.config.ef_search);
        if ef == 0 {
            return Err(Error::invalid("ef", "must be at least 1"));
        }
        if ef > limits::VECTOR_EF_MAX {
            return Err(Error::LimitExceeded { what: "ef".into(), limit: limits::VECTOR_EF_MAX as u64 });
        }
        Ok((p.k, ef))
    }

    /// The shared body of `search` and `search_exact`.
    pub(super) fn run(
        &self,
        query: &[f32],
        p: &SearchParams,
        filter: &Eligible<'_>,
        how: How<'_>,
        s: &mut Scratch,
        out: &mut Vec<Hit>,
    ) -> Result<()> {
        let (k, ef) = self.check_params(p)?;
        let (exact, originals) = match how {
            How::Exact => (true, None),
            How::Graph(originals) => (false, originals),
        };
        self.prepare(query, &mut s.query)?;
        out.clear();
        s.top.clear();
        let int8 = self.flat.vectors.is_int8();
        let cap = if int8 { k * limits::VECTOR_RERANK_OVERSAMPLE } else { k };
        let mode = match filter {
            Eligible::All => Mode::All,
            Eligible::Predicate(f) => Mode::Pred(*f),
            Eligible::Keys(keys) => {
                s.subset.clear();
                s.subset.extend_from_slice(keys);
                s.subset.sort_unstable();
                s.subset.dedup();
                if exact || s.subset.len() <= limits::VECTOR_FILTER_EXACT_KEYS_MAX {
                    self.scan_keys(s, cap);
                    return self.finish(k, originals, s, out);
                }
                Mode::Set
            }
        };
        let filtered = !matches!(mode, Mode::All);
        let (subset, query) = (&s.subset, &s.query);
        let admits = |key: u64| match &mode {
            Mode::All => true,
            Mode::Pred(f) => f(key),
            Mode::Set => subset.binary_search(&key).is_ok(),
        };
        let mut complete = true;
        for seg in std::iter::once(&self.flat).chain(&self.sealed) {
            let accept = |slot: usize| !seg.is_dead(slot) && admits(seg.keys[slot]);
            match (&seg.graph, exact) {
                (Some(graph), false) => {
                    let visits_max = if filtered { ef.max(cap).saturating_mul(limits::VECTOR_FILTER_VISITS_PER_EF) } else { usize::MAX };
                    s.cands.clear();
                    let mut accept = accept;
                    complete &= hnsw::search(graph, &seg.vectors, query, Effort { ef: ef.max(cap), visits_max }, &mut accept, &mut s.beam, &mut s.cands);
                    for c in &s.cands {
                        offer(&mut s.top, cap, Candidate { sim: c.sim, key: seg.keys[c.slot as usize], segment: seg.id, slot: c.slot });
                    }
                }
                _ if seg.graph.is_none() && !filtered => scan_all(seg, query, cap, &mut s.top),
                _ => scan(seg, query, cap, &mut s.top, accept),
            }
        }
        // A filtered graph search that gave up, or could not fill k, is
        // redone exactly: a filter must never hide matches that exist.
        if filtered && !exact && (!complete || s.top.len() < k) {
            s.top.clear();
            for seg in std::iter::once(&self.flat).chain(&self.sealed) {
                scan(seg, query, cap, &mut s.top, |slot| !seg.is_dead(slot) && admits(seg.keys[slot]));
            }
        }
        self.finish(k, originals, s, out)
    }

    /// Exact answer over an explicit key subset: only those rows are read.
    fn scan_keys(&self, s: &mut Scratch, cap: usize) {
        for &key in &s.subset {
            let Some((seg, slot)) = self.locate(key) else { continue };
            let sim = seg.vectors.sim(&s.query, slot);
            offer(&mut s.top, cap, Candidate { sim, key, segment: seg.id, slot: slot as u32 });
        }
    }

    /// Final scores (exact for f32; originals or the f32-query estimate for
    /// int8), best first, cut to `k`.
    fn finish(&self, k: usize, mut originals: Option<Originals<'_>>, s: &mut Scratch, out: &mut Vec<Hit>) -> Result<()> {
        s.ranked.clear();
        s.ranked.extend(s.top.drain().map(|r| r.0));
        if self.flat.vectors.is_int8() {
            for c in s.ranked.iter_mut() {
                let Some(seg) = self.segment(c.segment) else { continue };
                c.sim = seg.vectors.sim_fine(&s.query, c.slot as usize);
                if let Some(get) = originals.as_mut() {
                    if get(c.key, &mut s.row) && s.row.len() == self.config.dim && s.row.iter().all(|x| x.is_finite()) {
                        let d = dot_f32(&s.query.f32, &s.row);
                        c.sim = match self.config.metric {
                            super::Metric::Dot => d,
                            super::Metric::Cosine => {
                                let n = norm(&s.row);
                                if n > 0.0 { (f64::from(d) / n) as f32 } else { c.sim }
                            }
                        };
                    }
                }
            }
        }
        s.ranked.sort_unstable_by(|a, b| b.cmp(a));
        out.extend(s.ranked.iter().take(k).map(|c| Hit { key: c.key, score: c.sim, segment: c.segment }));
        Ok(())
    }
}
