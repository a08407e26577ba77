//! A tenant-wide search over a sharded tenant, as the parts that cross the
//! wire (issue 21). The host (the Worker) walks the fan-out tree; this
//! module says what each node computes and how answers merge, so a merge
//! over the network ranks exactly like [`crate::core::longterm::sharded`]
//! in one process, and exactly like one index holding every record.
//!
//! Two rounds, as Elasticsearch's `dfs_query_then_fetch`:
//! 1. **Statistics** ([`stats_part`], when a keyword side runs or `auto`
//!    must resolve): each shard's BM25 statistics for the query and whether
//!    it has vectors; summed up the tree ([`StatsPart::merge`]).
//! 2. **Candidates** ([`candidates_part`]): each shard's top `depth` of
//!    each side under the tenant's statistics, with every candidate's
//!    record (its AMS JSON and the times the rank step reads). A node
//!    merges its subtree's parts ([`merge_parts`]): each side by score,
//!    ties by record id, cut to `depth`, so a hop carries at most one
//!    shard's worth. A listing without text keeps each subtree's first
//!    page in rank order (the order is a per-record key: creation time,
//!    or recency against the root's clock).
//!
//! The root ranks once ([`finish`]): fusion, the time boost, recency and
//! paging over the merged lists, keyed in record id order.
//!
//! Scores cross as JSON numbers: `f32` and `f64` print in their shortest
//! round-tripping form, so they arrive bit for bit.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::json::record_json;
use super::search::{core_request, hit_json, time_query_json, SearchBody};
use crate::core::error::{Error, Result};
use crate::core::longterm::search::{self, Candidates, RankView, SearchResult, Times};
use crate::core::longterm::sharded::resolve_over;
use crate::core::longterm::{Mode, SearchRequest};
use crate::core::retrieval::bm25::QueryStats;
use crate::core::time::Millis;
use crate::core::vector::Hit;
use crate::store::{Backend, Store};

/// A subtree's answer to the statistics round.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StatsPart {
    pub docs: u64,
    pub total_len: u64,
    /// Each distinct query token in order of first appearance: its hash,
    /// its count in the query, its document frequency.
    pub terms: Vec<(u64, u32, u64)>,
    /// Some shard has a vector index.
    pub has_index: bool,
    /// Some shard's vectors are the hashed fallback's.
    pub hashed: bool,
}

impl StatsPart {
    /// Sums subtrees' statistics (they analyzed the same query alike).
    pub fn merge(parts: &[StatsPart]) -> Result<StatsPart> {
        let stats: Vec<QueryStats> = parts.iter().map(StatsPart::stats).collect();
        let m = QueryStats::merge(&stats)?;
        Ok(StatsPart { docs: m.docs, total_len: m.total_len, terms: m.terms, has_index: parts.iter().any(|p| p.has_index), hashed: parts.iter().any(|p| p.hashed) })
    }

    /// The core's statistics.
    pub fn stats(&self) -> QueryStats {
        QueryStats { docs: self.docs, total_len: self.total_len, terms: self.terms.clone() }
    }

    /// The mode the search runs as, everywhere (`auto` resolved over every
    /// shard that answered).
    pub fn resolve(&self, mode: Mode, vector: bool) -> Mode {
        resolve_over(mode, vector, self.has_index, self.hashed)
    }
}

/// A candidate's record: its AMS JSON and the times the rank step reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WireRecord {
    pub created_at: Millis,
    pub last_accessed: Millis,
    pub event_date: Option<Millis>,
    pub json: Value,
}

/// A subtree's answer to the candidates round, keyed by record id.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CandPart {
    /// No shard's filter admitted a record.
    pub empty: bool,
    /// Every shard answered its filter by an exact scan.
    pub exact: bool,
    /// A listing: `(created_at, id)`, this subtree's first page.
    pub browse: Vec<(Millis, String)>,
    /// Records the listing admits in the whole subtree.
    pub browse_total: u64,
    /// BM25 `(id, score)`, best first, ties by id.
    pub keyword: Vec<(String, f32)>,
    /// Vector `(id, similarity, segment)`, best first, ties by id.
    pub vector: Vec<(String, f32, u32)>,
    /// The best BM25 score the query could reach (tenant-wide).
    pub ceiling: f32,
    /// Some shard's vectors are the hashed fallback's.
    pub hashed: bool,
    /// Every listed candidate's record.
    pub records: BTreeMap<String, WireRecord>,
}

/// What a node of the tree is asked, beside the search body.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Round {
    /// The root's clock: every shard reads time words and recency by it.
    pub now: Millis,
    /// The candidates round: the mode resolved at the root.
    #[serde(default)]
    pub mode: Option<String>,
    /// The query's embedding, computed once at the root.
    #[serde(default)]
    pub vector: Option<Vec<f32>>,
    /// The candidates round: the tenant's merged statistics.
    #[serde(default)]
    pub stats: Option<StatsPart>,
}

/// Reads a search body as the search route does (user ids sealed under
/// the tenant's key) and refuses what a fan-out does not merge yet.
pub fn parse_body<B: Backend>(store: &Store<B>, raw: &Value) -> Result<SearchBody> {
    let mut raw = raw.clone();
    store.with_privacy_key(|k| crate::api::privacy::seal_user_ids(&mut raw, k));
    let body = SearchBody::parse(&raw)?;
    if body.explain {
        return Err(Error::invalid("explain", "a search across a sharded tenant's shards does not explain its hits yet; pin it to one user"));
    }
    if body.expand > 0 {
        return Err(Error::invalid("expand", "a search across a sharded tenant's shards does not expand hits yet; pin it to one user"));
    }
    Ok(body)
}

/// Whether the search needs the statistics round: a keyword side may run,
/// or `auto` must learn whether any shard has vectors.
pub fn needs_stats(body: &SearchBody, vector: bool) -> bool {
    let listing = body.text.trim().is_empty() && !vector;
    !listing && matches!(body.mode, Mode::Keyword | Mode::Hybrid | Mode::Auto)
}

/// This shard's part of the statistics round.
pub async fn stats_part<B: Backend>(store: &Store<B>, body: &SearchBody) -> Result<StatsPart> {
    let s = store.read(|e| e.longterm().shard_stats(&body.text)).await??;
    Ok(StatsPart { docs: s.stats.docs, total_len: s.stats.total_len, terms: s.stats.terms, has_index: s.has_index, hashed: s.hashed })
}

/// The request each node builds for the same search.
fn request<'a>(body: &'a SearchBody, round: &'a Round) -> SearchRequest<'a> {
    core_request(body, round.vector.as_deref(), None, round.now)
}

/// The mode a candidates round runs as.
pub fn round_mode(round: &Round) -> Result<Mode> {
    let m = round.mode.as_deref().ok_or_else(|| Error::invalid("mode", "the candidates round names its mode"))?;
    Mode::parse(m)
}

/// A request for the first page (`offset + limit` hits from the top): what
/// a subtree's listing must keep.
fn first_page<'a>(req: &SearchRequest<'a>) -> SearchRequest<'a> {
    SearchRequest { limit: search::page_k(req), offset: 0, explain: false, ..*req }
}

/// This shard's part of the candidates round.
pub async fn candidates_part<B: Backend>(store: &Store<B>, body: &SearchBody, round: &Round) -> Result<CandPart> {
    let mode = round_mode(round)?;
    let stats = round.stats.as_ref().map(StatsPart::stats);
    store
        .read(|e| {
            let lt = e.longterm();
            let req = request(body, round);
            let mut c = lt.candidates(&req, mode, stats.as_ref())?;
            let browse_total = c.browse.len() as u64;
            if search::is_browse(&req) && !c.browse.is_empty() {
                // Only this shard's first page can reach the tenant's.
                let view = RankView { mode, windows: search::query_windows(&req), hashed: lt.hashed_vectors() };
                let top: HashSet<u64> = search::rank(&first_page(&req), c.clone(), view, |k| lt.times(k), round.now)?.hits.iter().map(|h| h.key).collect();
                c.browse.retain(|(_, k)| top.contains(k));
            }
            let id = |k: u64| lt.record_by_key(k).map(|r| r.id.clone()).ok_or_else(|| Error::Internal { detail: format!("a candidate key {k} has no record") });
            let mut part = CandPart { empty: c.empty, exact: c.exact, browse_total, ceiling: c.ceiling, hashed: lt.hashed_vectors(), ..CandPart::default() };
            for &(at, k) in &c.browse {
                part.browse.push((at, id(k)?));
            }
            for &(k, s) in &c.keyword {
                part.keyword.push((id(k)?, s));
            }
            for h in &c.vector {
                part.vector.push((id(h.key)?, h.score, h.segment));
            }
            let keys = c.browse.iter().map(|b| b.1).chain(c.keyword.iter().map(|k| k.0)).chain(c.vector.iter().map(|h| h.key));
            for k in keys {
                let (Some(rec), Some(t)) = (lt.record_by_key(k), lt.times(k)) else { continue };
                part.records.insert(rec.id.clone(), WireRecord { created_at: t.created_at, last_accessed: t.last_accessed, event_date: t.event_date, json: record_json(rec) });
            }
            Ok(part)
        })
        .await?
}

/// The merged lists keyed in record id order, ready for the rank step.
fn keyed(part: &CandPart) -> Result<(Vec<&str>, Candidates)> {
    let ids: Vec<&str> = part.records.keys().map(String::as_str).collect();
    let key_of: HashMap<&str, u64> = ids.iter().enumerate().map(|(i, id)| (*id, i as u64)).collect();
    let key = |id: &str| key_of.get(id).copied().ok_or_else(|| Error::invalid("part", format!("candidate {id:?} has no record")));
    let mut c = Candidates { empty: part.empty, exact: part.exact, ceiling: part.ceiling, ..Candidates::default() };
    for (at, id) in &part.browse {
        c.browse.push((*at, key(id)?));
    }
    for (id, s) in &part.keyword {
        c.keyword.push((key(id)?, *s));
    }
    for (id, s, seg) in &part.vector {
        c.vector.push(Hit { key: key(id)?, score: *s, segment: *seg });
    }
    Ok((ids, c))
}

fn rank_part<'p>(req: &SearchRequest<'_>, part: &'p CandPart, mode: Mode, now: Millis) -> Result<(Vec<&'p str>, SearchResult)> {
    let (ids, cands) = keyed(part)?;
    let times = |k: u64| ids.get(k as usize).and_then(|id| part.records.get(*id)).map(|r| Times { created_at: r.created_at, last_accessed: r.last_accessed, event_date: r.event_date });
    let view = RankView { mode, windows: search::query_windows(req), hashed: part.hashed };
    let r = search::rank(req, cands, view, times, now)?;
    Ok((ids, r))
}

/// Merges a node's part with its subtree's: each side by score, ties by
/// record id, cut to the depth the rank step fuses; a listing keeps the
/// first page in rank order. Records no kept entry names are dropped.
pub fn merge_parts(body: &SearchBody, round: &Round, parts: Vec<CandPart>) -> Result<CandPart> {
    let mode = round_mode(round)?;
    let req = request(body, round);
    let mut out = CandPart { empty: parts.iter().all(|p| p.empty), exact: parts.iter().all(|p| p.exact), ..CandPart::default() };
    for p in parts {
        out.browse.extend(p.browse);
        out.browse_total = out.browse_total.saturating_add(p.browse_total);
        out.keyword.extend(p.keyword);
        out.vector.extend(p.vector);
        // Every shard computes the same ceiling from the same statistics.
        out.ceiling = out.ceiling.max(p.ceiling);
        out.hashed |= p.hashed;
        out.records.extend(p.records);
    }
    out.browse.sort_unstable_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    out.keyword.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    out.vector.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let depth = search::depth(mode, &req);
    out.keyword.truncate(depth);
    out.vector.truncate(depth);
    if search::is_browse(&req) && !out.browse.is_empty() {
        let (ids, r) = rank_part(&first_page(&req), &out, mode, round.now)?;
        let top: HashSet<String> = r.hits.iter().filter_map(|h| ids.get(h.key as usize).map(|id| (*id).to_owned())).collect();
        out.browse.retain(|(_, id)| top.contains(id));
    }
    let kept: HashSet<String> = out.browse.iter().map(|b| &b.1).chain(out.keyword.iter().map(|k| &k.0)).chain(out.vector.iter().map(|v| &v.0)).cloned().collect();
    out.records.retain(|id, _| kept.contains(id));
    Ok(out)
}

/// The root's answer from the tenant's merged part: AMS's
/// `MemoryRecordResults`, as one index would answer it (user ids still
/// sealed; the caller opens them as the search route does).
pub fn finish(body: &SearchBody, round: &Round, part: &CandPart) -> Result<Value> {
    let mode = round_mode(round)?;
    let req = request(body, round);
    let (ids, r) = rank_part(&req, part, mode, round.now)?;
    let total = if search::is_browse(&req) && !part.empty { part.browse_total as usize } else { r.total };
    let score_type = r.mode.as_str();
    let memories: Vec<Value> = r
        .hits
        .iter()
        .filter_map(|h| {
            let rec = part.records.get(*ids.get(h.key as usize)?)?;
            Some(hit_json(body, &|f| rec.json.get(f).cloned().unwrap_or(Value::Null), || rec.json.clone(), h.dist, h.score, score_type, h.segment))
        })
        .collect();
    let next = body.offset + memories.len();
    Ok(json!({
        "memories": memories,
        "total": total,
        "next_offset": if next < total { Some(next) } else { None },
        "exact_filter": r.exact,
        "search_mode": r.mode.as_str(),
        "time_query": time_query_json(body, &r.time, round.now),
    }))
}

#[cfg(test)]
#[path = "fanout_tests.rs"]
mod tests;
