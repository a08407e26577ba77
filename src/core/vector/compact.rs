//! Compaction with bounded work per call: seal the flat segment, rebuild
//! heavily tombstoned segments, merge small ones (tiered, so each point is
//! rebuilt O(log n) times over an index's life).

use super::hnsw::{self, BuildParams, Graph};
use super::rows::Vectors;
use super::segment::Segment;
use super::{Loc, VectorIndex, FLAT_SEGMENT_ID};
use crate::core::error::Result;
use crate::core::limits;

/// What one [`VectorIndex::compact`] call did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompactReport {
    /// Points that went through graph builds (the work bounded by the call).
    pub work_points: usize,
    /// Points moved from the flat segment into a new sealed segment.
    pub sealed_points: usize,
    /// Sealed segments consumed by merges and rebuilds.
    pub merged_segments: usize,
    /// Sealed segments dropped because no live point was left.
    pub dropped_segments: usize,
    /// Graphs built.
    pub segments_built: usize,
    /// Whether due work was left because it exceeded the remaining bound.
    pub pending: bool,
}

/// One unit of compaction work.
enum Task {
    /// Seal the first `n` rows of the flat segment.
    Seal(usize),
    /// Rebuild these sealed segments (by id) into one, live points only.
    Rebuild(Vec<u32>),
}

/// Seeds differ per segment, deterministically (SplitMix64 of seed and id).
fn segment_seed(seed: u64, id: u32) -> u64 {
    let mut z = seed ^ (u64::from(id)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl VectorIndex {
    /// Does due compaction work, building graphs over at most
    /// `work_points_max` points in total (one build is one unit, and no
    /// build exceeds [`limits::VECTOR_SEGMENT_POINTS_MAX`] points, so a
    /// caller can bound the time of one call). Work that does not fit is left
    /// for a later call and reported as `pending`.
    ///
    /// Order of priority: seal a full flat segment, rebuild segments with
    /// [`limits::VECTOR_TOMBSTONE_PERCENT_MAX`] % or more tombstones, merge
    /// the two smallest segments when they are within a factor of two.
    pub fn compact(&mut self, work_points_max: usize) -> Result<CompactReport> {
        let mut report = CompactReport::default();
        let before = self.sealed.len();
        self.sealed.retain(|s| s.live() > 0);
        report.dropped_segments = before - self.sealed.len();
        loop {
            let budget = work_points_max - report.work_points;
            let due = self.due(budget);
            report.pending = due.iter().any(|(_, cost)| *cost > budget);
            let Some((task, cost)) = due.into_iter().find(|(_, cost)| *cost <= budget) else { break };
            match task {
                Task::Seal(n) => {
                    self.seal(n)?;
                    report.sealed_points += n;
                }
                Task::Rebuild(ids) => {
                    self.rebuild(&ids)?;
                    report.merged_segments += ids.len();
                }
            }
            report.work_points += cost;
            report.segments_built += 1;
        }
        Ok(report)
    }

    /// Whether [`VectorIndex::compact`] with this bound would build
    /// anything: a caller schedules background passes by it.
    pub fn compaction_due(&self, work_points_max: usize) -> bool {
        self.due(work_points_max).iter().any(|(_, cost)| *cost <= work_points_max)
    }

    /// Due tasks in priority order, each with its cost in points. A full
    /// flat segment is sealed whole when the budget allows, else in a prefix
    /// of at least `seal_points`, so it never outgrows every budget.
    fn due(&self, budget: usize) -> Vec<(Task, usize)> {
        let mut tasks = Vec::new();
        if self.flat.len() >= self.config.seal_points {
            let n = self.flat.len().min(limits::VECTOR_SEGMENT_POINTS_MAX).min(budget.max(self.config.seal_points));
            tasks.push((Task::Seal(n), n));
        }
        for s in &self.sealed {
            if s.dead_count * 100 >= limits::VECTOR_TOMBSTONE_PERCENT_MAX * s.len() {
                tasks.push((Task::Rebuild(vec![s.id]), s.live()));
            }
        }
        let mut by_live: Vec<(usize, u32)> = self.sealed.iter().map(|s| (s.live(), s.id)).collect();
        by_live.sort_unstable();
        if let [(a, ida), (b, idb), ..] = by_live[..] {
            if b < 2 * a && a + b <= limits::VECTOR_SEGMENT_POINTS_MAX {
                tasks.push((Task::Rebuild(vec![ida, idb]), a + b));
            }
        }
        tasks
    }

    fn seal(&mut self, n: usize) -> Result<()> {
        let mut rows = Vectors::with_capacity(self.config.dim, self.flat.vectors.is_int8(), n);
        for slot in 0..n {
            rows.push_from(&self.flat.vectors, slot);
        }
        let keys = self.flat.keys[..n].to_vec();
        // On failure the flat segment is untouched: these were copies.
        let (graph, order) = self.build_graph(&rows)?;
        let seg = self.assemble(keys, rows, graph, &order);
        // The build succeeded: now change state.
        let mut rest = Vectors::empty(self.config.dim, self.flat.vectors.is_int8());
        for slot in n..self.flat.len() {
            rest.push_from(&self.flat.vectors, slot);
        }
        self.flat.vectors = rest;
        self.flat.keys.drain(..n);
        for (slot, key) in self.flat.keys.iter().enumerate() {
            self.locs.insert(*key, Loc { segment: FLAT_SEGMENT_ID, slot: slot as u32 });
        }
        self.install(seg);
        Ok(())
    }

    /// Rebuilds segments `ids` into one, from their live rows. The sources
    /// leave the index first and each is freed as soon as its rows are
    /// copied, so the peak is the new segment plus its graph build, not
    /// sources, copy and build together. If the build fails, the rows go to
    /// the flat segment: the contents never change, only where they live.
    fn rebuild(&mut self, ids: &[u32]) -> Result<()> {
        let int8 = self.flat.vectors.is_int8();
        let (taken, kept): (Vec<Segment>, Vec<Segment>) = std::mem::take(&mut self.sealed).into_iter().partition(|s| ids.contains(&s.id));
        self.sealed = kept;
        let live = taken.iter().map(Segment::live).sum();
        let mut rows = Vectors::with_capacity(self.config.dim, int8, live);
        let mut keys = Vec::with_capacity(live);
        for s in taken {
            for slot in (0..s.len()).filter(|&slot| !s.is_dead(slot)) {
                keys.push(s.keys[slot]);
                rows.push_from(&s.vectors, slot);
            }
        }
        match self.build_graph(&rows) {
            Ok((graph, order)) => {
                let seg = self.assemble(keys, rows, graph, &order);
                self.install(seg);
                Ok(())
            }
            Err(e) => {
                for (slot, key) in keys.iter().enumerate() {
                    self.flat.keys.push(*key);
                    self.flat.vectors.push_from(&rows, slot);
                    self.locs.insert(*key, Loc { segment: FLAT_SEGMENT_ID, slot: (self.flat.len() - 1) as u32 });
                }
                Err(e)
            }
        }
    }

    /// Builds the graph of the next segment over `rows`; changes nothing.
    fn build_graph(&self, rows: &Vectors) -> Result<(Graph, Vec<u32>)> {
        let params = BuildParams {
            ef_construction: self.config.ef_construction,
            links_max: self.config.links_max,
            keep_pruned: self.config.keep_pruned,
            seed: segment_seed(self.config.seed, self.next_id),
        };
        hnsw::build(rows, &params)
    }

    /// The next sealed segment: `rows` and `keys` reordered (in place, for
    /// the rows) so that graph ids and row slots coincide.
    fn assemble(&mut self, keys: Vec<u64>, mut rows: Vectors, graph: Graph, order: &[u32]) -> Segment {
        rows.permute(order);
        let mut seg = Segment::new(self.next_id, rows);
        seg.keys = order.iter().map(|&old| keys[old as usize]).collect();
        seg.graph = Some(graph);
        self.builds += 1;
        seg
    }

    /// Adds `seg` (its id is the newest, so `sealed` stays sorted) and
    /// points its keys at it.
    fn install(&mut self, seg: Segment) {
        for (slot, key) in seg.keys.iter().enumerate() {
            self.locs.insert(*key, Loc { segment: seg.id, slot: slot as u32 });
        }
        self.next_id = seg.id.saturating_add(1);
        self.sealed.push(seg);
    }
}
