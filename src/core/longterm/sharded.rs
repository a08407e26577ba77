//! One tenant's long-term memory split over shards, searched as one index
//! (issue 21). Each shard runs [`LongTerm::candidates`] under the tenant's
//! BM25 statistics (summed over the shards, as Elasticsearch's
//! `dfs_query_then_fetch` does) and the tenant's hybrid ceiling; the lists
//! are merged by score, ties by record id, cut to the depth one index would
//! fuse; the rank step (fusion, time boost, recency, paging) runs once over
//! the merge. A shard's top `depth` of each side holds its members of the
//! tenant's top `depth`, so the merged lists are one index's whenever the
//! scores are: keyword scores are bit for bit (`bm25::QueryStats`), vector
//! scores are per row (exact mode scans every vector, so the lists match;
//! otherwise each shard's graph is as approximate as one index's).
//!
//! Ties: one index orders equal scores by its own keys, which follow
//! insertion order; a merge orders them by record id. The two agree when
//! records were inserted in id order, which the property test does; an
//! unsharded tenant keeps its key order, unchanged.

use std::collections::HashMap;

use crate::core::error::{Error, Result};
use crate::core::retrieval::bm25::QueryStats;
use crate::core::retrieval::Bm25Scratch;
use crate::core::time::Millis;
use crate::core::vector::Hit;

use super::search::{self, Candidates, Mode, RankView, SearchRequest, SearchResult};
use super::LongTerm;

/// A hit of a sharded search: the shard that holds it and its key there.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShardHit {
    pub shard: usize,
    pub key: u64,
    pub dist: f64,
    pub score: f64,
}

/// A sharded search's page: hits in rank order, and the result's totals
/// (its `hits` keyed by the merge's own numbering).
#[derive(Debug, Clone, PartialEq)]
pub struct ShardedResult {
    pub hits: Vec<ShardHit>,
    pub total: usize,
    pub mode: Mode,
}

/// What a shard tells a fan-out's first round: its BM25 statistics for
/// the query and what `auto` resolves by.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ShardStats {
    pub stats: QueryStats,
    /// The shard has a vector index.
    pub has_index: bool,
    /// Its vectors are the hashed fallback's.
    pub hashed: bool,
}

impl LongTerm {
    /// This index's part of a fan-out's statistics round.
    pub fn shard_stats(&self, text: &str) -> Result<ShardStats> {
        let mut scratch = Bm25Scratch::default();
        Ok(ShardStats { stats: self.bm25.query_stats(text, &mut scratch)?, has_index: self.index.is_some(), hashed: self.hashed_vectors() })
    }
}

/// The mode `auto` runs as over a tenant's shards: hybrid when the query
/// has a vector and some shard has vectors (or an external index answers),
/// none of them the hashed fallback's; else keyword. Other modes run as
/// asked.
pub fn resolve_over(mode: Mode, vector: bool, any_index: bool, any_hashed: bool) -> Mode {
    if mode != Mode::Auto {
        return mode;
    }
    if vector && any_index && !any_hashed {
        Mode::Hybrid
    } else {
        Mode::Keyword
    }
}

fn resolve(shards: &[&LongTerm], req: &SearchRequest<'_>) -> Mode {
    let any_index = req.external.is_some() || shards.iter().any(|s| s.index.is_some());
    resolve_over(req.mode, req.vector.is_some(), any_index, shards.iter().any(|s| s.hashed_vectors()))
}

/// Searches `shards` as one index of all their records. Explanations are
/// not merged (`explain` is refused).
pub fn search_shards(shards: &[&LongTerm], req: &SearchRequest<'_>, now: Millis) -> Result<ShardedResult> {
    search::validate(req)?;
    if req.explain {
        return Err(Error::invalid("explain", "a sharded search does not explain its hits yet"));
    }
    let mode = resolve(shards, req);
    // The statistics round only when a keyword side runs.
    let stats = if matches!(mode, Mode::Keyword | Mode::Hybrid) {
        let mut scratch = Bm25Scratch::default();
        let parts: Vec<QueryStats> = shards.iter().map(|s| s.bm25.query_stats(req.text, &mut scratch)).collect::<Result<_>>()?;
        QueryStats::merge(&parts)?
    } else {
        QueryStats::default()
    };
    let cands: Vec<Candidates> = shards.iter().map(|s| s.candidates(req, mode, Some(&stats))).collect::<Result<_>>()?;

    // The merge's keys: every candidate, numbered in record id order.
    let mut members: Vec<(&str, usize, u64)> = Vec::new();
    for (i, c) in cands.iter().enumerate() {
        let keys = c.browse.iter().map(|b| b.1).chain(c.keyword.iter().map(|k| k.0)).chain(c.vector.iter().map(|h| h.key));
        for key in keys {
            let id = shards[i].records.get(&key).map(|r| r.id.as_str()).ok_or_else(|| Error::Internal { detail: format!("shard {i} named key {key} it does not hold") })?;
            members.push((id, i, key));
        }
    }
    members.sort_unstable();
    members.dedup();
    let global: HashMap<(usize, u64), u64> = members.iter().enumerate().map(|(g, &(_, i, key))| ((i, key), g as u64)).collect();
    let local: Vec<(usize, u64)> = members.iter().map(|&(_, i, key)| (i, key)).collect();
    let to_global = |i: usize, key: u64| global.get(&(i, key)).copied().unwrap_or(u64::MAX);

    let depth = search::depth(mode, req);
    let mut merged = Candidates { empty: cands.iter().all(|c| c.empty), exact: cands.iter().all(|c| c.exact), ..Candidates::default() };
    for (i, c) in cands.iter().enumerate() {
        merged.browse.extend(c.browse.iter().map(|&(at, key)| (at, to_global(i, key))));
        merged.keyword.extend(c.keyword.iter().map(|&(key, s)| (to_global(i, key), s)));
        merged.vector.extend(c.vector.iter().map(|h| Hit { key: to_global(i, h.key), ..*h }));
    }
    merged.browse.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    merged.keyword.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    merged.keyword.truncate(depth);
    merged.vector.sort_unstable_by(|a, b| b.score.total_cmp(&a.score).then(a.key.cmp(&b.key)));
    merged.vector.truncate(depth);
    if mode == Mode::Hybrid {
        merged.ceiling = shards.first().map_or(0.0, |s| s.bm25.ceiling_with_stats(&stats));
    }
    let times = |g: u64| local.get(g as usize).and_then(|&(i, key)| shards[i].times(key));
    let view = RankView { mode, windows: search::query_windows(req), hashed: shards.iter().any(|s| s.hashed_vectors()) };
    let r: SearchResult = search::rank(req, merged, view, times, now)?;
    let hits = r
        .hits
        .iter()
        .filter_map(|h| local.get(h.key as usize).map(|&(shard, key)| ShardHit { shard, key, dist: h.dist, score: h.score }))
        .collect();
    Ok(ShardedResult { hits, total: r.total, mode: r.mode })
}

#[cfg(test)]
#[path = "sharded_tests.rs"]
mod tests;
