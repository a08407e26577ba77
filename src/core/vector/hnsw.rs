//! HNSW graphs: built by `instant-distance`, then read out into a compact
//! CSR form that we search (per-query `ef`, tombstones, filters, int8
//! distances) and persist ourselves.
//!
//! Why not search through `instant-distance`: its `ef_search` is fixed at
//! build time, it has no filter or tombstone hook, and its graph fields are
//! private, so a restore would mean a rebuild. Its serde form is public,
//! though: [`super::readout`] serializes the built `Hnsw` straight into our
//! layers. Layer 0 links come nearest-first after the
//! selection heuristic, so truncating them to `links_max` keeps the best.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use instant_distance::{Builder, Heuristic, Point};
use serde::{Serialize, Serializer};

use super::readout::Sink;
use super::rows::{Query, Vectors};
use crate::core::error::{Error, Result};
use crate::core::limits;

/// One layer in CSR form: node `i` links to `links[offsets[i]..offsets[i+1]]`.
#[derive(Clone, Debug, PartialEq, Default)]
pub(crate) struct Layer {
    pub offsets: Vec<u32>,
    pub links: Vec<u32>,
}

impl Layer {
    pub fn nodes(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    #[inline]
    fn links_of(&self, node: usize) -> &[u32] {
        match (self.offsets.get(node), self.offsets.get(node + 1)) {
            (Some(&a), Some(&b)) => self.links.get(a as usize..b as usize).unwrap_or(&[]),
            _ => &[],
        }
    }
}

/// The graph of a sealed segment. `layers[0]` covers every row; layer `l`
/// covers rows `0..layers[l].nodes()`, and row 0 is the entry point.
#[derive(Clone, Debug, PartialEq, Default)]
pub(crate) struct Graph {
    pub layers: Vec<Layer>,
}

impl Graph {
    pub fn memory_bytes(&self) -> usize {
        self.layers.iter().map(|l| (l.offsets.capacity() + l.links.capacity()) * 4).sum()
    }

    /// Checks a decoded graph over `rows` rows, so that search never reads
    /// out of bounds.
    pub fn validate(&self, rows: usize) -> std::result::Result<(), String> {
        if rows == 0 {
            return if self.layers.is_empty() { Ok(()) } else { Err("graph over an empty segment".into()) };
        }
        let mut above = rows;
        for (i, l) in self.layers.iter().enumerate() {
            let n = l.nodes();
            if n == 0 || n > above || (i == 0 && n != rows) {
                return Err(format!("layer {i} has {n} nodes"));
            }
            if l.offsets.first() != Some(&0) || l.offsets.last().map(|&e| e as usize) != Some(l.links.len()) {
                return Err(format!("layer {i} offsets do not span its links"));
            }
            if l.offsets.windows(2).any(|w| w[1] < w[0] || (w[1] - w[0]) as usize > limits::VECTOR_LINKS_MAX) {
                return Err(format!("layer {i} offsets are not a valid degree sequence"));
            }
            if l.links.iter().any(|&t| t as usize >= n) {
                return Err(format!("layer {i} links past its nodes"));
            }
            above = n;
        }
        if self.layers.is_empty() {
            return Err("segment has no graph".into());
        }
        Ok(())
    }
}

/// Build parameters (see [`super::Config`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct BuildParams {
    pub ef_construction: usize,
    pub links_max: usize,
    pub keep_pruned: bool,
    pub seed: u64,
}

/// A row as `instant-distance` sees it: an index into the segment's rows, so
/// the vectors are stored once, contiguously, and compared with our SIMD dot.
#[derive(Clone, Copy)]
struct Row<'a> {
    idx: u32,
    rows: &'a Vectors,
}

impl Point for Row<'_> {
    fn distance(&self, other: &Self) -> f32 {
        -self.rows.sim_rows(self.idx as usize, other.idx as usize)
    }
}

impl Serialize for Row<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_u32(self.idx)
    }
}

/// Builds a graph over `rows`. Returns it with `order`, where `order[new]` is
/// the old index of the row the graph calls `new`: the caller permutes its
/// rows and keys by `order` so graph ids and row slots coincide.
pub(crate) fn build(rows: &Vectors, p: &BuildParams) -> Result<(Graph, Vec<u32>)> {
    let n = rows.len();
    if n == 0 {
        return Ok((Graph::default(), Vec::new()));
    }
    let points: Vec<Row<'_>> = (0..n as u32).map(|idx| Row { idx, rows }).collect();
    let heuristic = Heuristic { extend_candidates: false, keep_pruned: p.keep_pruned };
    let (hnsw, _) = Builder::default()
        .ef_construction(p.ef_construction)
        .ef_search(p.ef_construction)
        .select_heuristic(Some(heuristic))
        .seed(p.seed)
        .build_hnsw(points);
    let internal = |e: String| Error::Internal { detail: format!("reading the HNSW graph out: {e}") };
    let mut sink = Sink::new(n, p.links_max, limits::VECTOR_LINKS_MAX / 2);
    hnsw.serialize(&mut sink).map_err(|e| internal(e.to_string()))?;
    drop(hnsw);
    let (layers, order) = sink.finish();
    if order.len() != n || layers[0].nodes() != n {
        return Err(internal(format!("{} points, {} nodes for {n} rows", order.len(), layers[0].nodes())));
    }
    let graph = Graph { layers };
    graph.validate(n).map_err(internal)?;
    Ok((graph, order))
}

/// A candidate: similarity (higher is nearer) and row.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cand {
    pub sim: f32,
    pub slot: u32,
}

impl PartialEq for Cand {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Cand {}
impl PartialOrd for Cand {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Cand {
    /// By similarity, ties broken toward the lower row so results are stable.
    fn cmp(&self, o: &Self) -> Ordering {
        self.sim.total_cmp(&o.sim).then_with(|| o.slot.cmp(&self.slot))
    }
}

/// Caller-owned search state for one graph at a time (as instant-distance's
/// `Search`): reused across queries, so a search allocates nothing once warm.
#[derive(Default)]
pub(crate) struct Beam {
    visited: Vec<u32>,
    stamp: u32,
    candidates: BinaryHeap<Cand>,
    results: BinaryHeap<Reverse<Cand>>,
}

impl Beam {
    fn reset(&mut self, n: usize) {
        if self.visited.len() < n {
            self.visited.resize(n, 0);
        }
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.visited.iter_mut().for_each(|v| *v = 0);
            self.stamp = 1;
        }
        self.candidates.clear();
        self.results.clear();
    }

    #[inline]
    fn first_visit(&mut self, slot: u32) -> bool {
        match self.visited.get_mut(slot as usize) {
            Some(v) if *v != self.stamp => {
                *v = self.stamp;
                true
            }
            _ => false,
        }
    }
}

/// How far one graph search may go.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Effort {
    /// Beam width on layer 0.
    pub ef: usize,
    /// Distance computations before giving up.
    pub visits_max: usize,
}

/// Searches one graph: greedy descent through the upper layers, then a beam
/// of width `ef` over layer 0. Rows that `accept` refuses (tombstones,
/// filters) still guide the walk but never enter the results. Stops after
/// `visits_max` distance computations; returns false if it stopped early
/// that way. The accepted rows are appended to `out`, in no order.
pub(crate) fn search(
    graph: &Graph,
    rows: &Vectors,
    q: &Query,
    Effort { ef, visits_max }: Effort,
    accept: &mut dyn FnMut(usize) -> bool,
    beam: &mut Beam,
    out: &mut Vec<Cand>,
) -> bool {
    let Some(base) = graph.layers.first() else { return true };
    let n = base.nodes();
    if n == 0 {
        return true;
    }
    let mut ep = Cand { sim: rows.sim(q, 0), slot: 0 };
    for layer in graph.layers.iter().skip(1).rev() {
        loop {
            let mut moved = false;
            for &t in layer.links_of(ep.slot as usize) {
                let s = rows.sim(q, t as usize);
                if s > ep.sim {
                    ep = Cand { sim: s, slot: t };
                    moved = true;
                }
            }
            if !moved {
                break;
            }
        }
    }
    beam.reset(n);
    beam.first_visit(ep.slot);
    beam.candidates.push(ep);
    if accept(ep.slot as usize) {
        beam.results.push(Reverse(ep));
    }
    let mut visits = 1usize;
    let mut complete = true;
    while let Some(c) = beam.candidates.pop() {
        if beam.results.len() >= ef && beam.results.peek().is_some_and(|w| c.sim < w.0.sim) {
            break;
        }
        for &t in base.links_of(c.slot as usize) {
            if !beam.first_visit(t) {
                continue;
            }
            visits += 1;
            let s = rows.sim(q, t as usize);
            let full = beam.results.len() >= ef;
            if !full || beam.results.peek().is_some_and(|w| s > w.0.sim) {
                let cand = Cand { sim: s, slot: t };
                beam.candidates.push(cand);
                if accept(t as usize) {
                    beam.results.push(Reverse(cand));
                    if beam.results.len() > ef {
                        beam.results.pop();
                    }
                }
            }
        }
        if visits >= visits_max {
            complete = false;
            break;
        }
    }
    out.extend(beam.results.drain().map(|r| r.0));
    complete
}
