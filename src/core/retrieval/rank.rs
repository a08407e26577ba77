//! Combining rankings: reciprocal-rank fusion, AMS's alpha-weighted hybrid
//! score, and AMS's recency re-ranking. Pure functions over slices; the
//! caller passes `now`.
//!
//! Every output is ordered by descending score, ties by ascending key, so
//! equal inputs give equal outputs.

use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::time::Millis;

fn by_score_then_key(a: &(u64, f64), b: &(u64, f64)) -> std::cmp::Ordering {
    b.1.total_cmp(&a.1).then(a.0.cmp(&b.0))
}

/// Reciprocal-rank fusion (Cormack et al. 2009): each key scores
/// `Σ 1 / (k + rank)` over the rankings it appears in, rank counted from 1.
/// A key repeated within one ranking counts at its best rank only. `k` below
/// 1 or not finite falls back to [`limits::RRF_K_DEFAULT`].
pub fn rrf(rankings: &[&[u64]], k: f64, out: &mut Vec<(u64, f64)>) {
    out.clear();
    let k = if k.is_finite() && k >= 1.0 { k } else { limits::RRF_K_DEFAULT };
    let mut all: Vec<(u64, usize, usize)> = Vec::new();
    for (list, ranking) in rankings.iter().enumerate() {
        all.extend(ranking.iter().enumerate().map(|(rank, &key)| (key, list, rank)));
    }
    // Sorting by (key, list, rank) makes each key's sum run in list order
    // and puts a repeated key's best rank first.
    all.sort_unstable();
    let mut last: Option<(u64, usize)> = None;
    for (key, list, rank) in all {
        if last == Some((key, list)) {
            continue;
        }
        let add = 1.0 / (k + rank as f64 + 1.0);
        match out.last_mut() {
            Some(entry) if entry.0 == key => entry.1 += add,
            _ => out.push((key, add)),
        }
        last = Some((key, list));
    }
    out.sort_by(by_score_then_key);
}

/// How keyword scores enter [`alpha_hybrid`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TextNorm {
    /// Raw BM25, as AMS does: redisvl's `AggregateHybridQuery` adds the raw
    /// `BM25STD` score, which is not bounded, to a similarity in [0, 1], so
    /// the keyword side usually dominates whatever the alpha.
    #[default]
    Raw,
    /// Divided by the best keyword score of the query, so both sides are in
    /// [0, 1] and alpha means what it says.
    Max,
}

/// AMS's hybrid score (redisvl `AggregateHybridQuery`, used by
/// agent_memory_server/memory_vector_db.py for `search_mode="hybrid"`):
/// `(1 - alpha) · text + alpha · (2 - cosine_distance) / 2`, then every
/// score divided by the best one (`_normalize_rank_scores`), so the top
/// result scores 1 and AMS reports `dist = 1 - score`.
///
/// `keyword` holds `(key, bm25)`, `vector` holds `(key, cosine distance)`.
/// The union of both is scored; a key missing from one side gets a zero
/// keyword score or a zero similarity (AMS scores only the vector side's
/// candidates, so pass the keyword hits restricted to those to reproduce it
/// exactly). `alpha` must lie in [0, 1] (AMS's `hybrid_alpha`, default 0.7).
pub fn alpha_hybrid(keyword: &[(u64, f32)], vector: &[(u64, f32)], alpha: f64, norm: TextNorm, out: &mut Vec<(u64, f64)>) -> Result<()> {
    out.clear();
    if !(alpha.is_finite() && (0.0..=1.0).contains(&alpha)) {
        return Err(Error::invalid("hybrid_alpha", "must be between 0 and 1"));
    }
    let text_max = keyword.iter().map(|&(_, s)| f64::from(s)).filter(|s| s.is_finite()).fold(0.0f64, f64::max);
    let text_scale = match norm {
        TextNorm::Raw => 1.0,
        TextNorm::Max if text_max > 0.0 => 1.0 / text_max,
        TextNorm::Max => 0.0,
    };
    let text = keyword.iter().map(|&(k, s)| (k, finite_or(f64::from(s), 0.0) * text_scale));
    let sim = vector.iter().map(|&(k, d)| (k, (2.0 - finite_or(f64::from(d), 2.0).clamp(0.0, 2.0)) / 2.0));
    for (key, text, sim) in by_key(text, sim) {
        out.push((key, (1.0 - alpha) * text.unwrap_or(0.0) + alpha * sim.unwrap_or(0.0)));
    }
    normalize_by_max(out);
    out.sort_by(by_score_then_key);
    Ok(())
}

/// The union of two scored lists: each key, ascending, with its value on
/// each side (`None` where that side lacks it). A key repeated within a
/// side counts at its first value. Shared by the hybrid blends.
pub(crate) fn by_key(a: impl Iterator<Item = (u64, f64)>, b: impl Iterator<Item = (u64, f64)>) -> Vec<(u64, Option<f64>, Option<f64>)> {
    // (key, side, value): side 0 = a, 1 = b. Stable, so first values stay first.
    let mut all: Vec<(u64, u8, f64)> = a.map(|(k, v)| (k, 0u8, v)).chain(b.map(|(k, v)| (k, 1u8, v))).collect();
    all.sort_by(|x, y| x.0.cmp(&y.0).then(x.1.cmp(&y.1)));
    let mut out: Vec<(u64, Option<f64>, Option<f64>)> = Vec::new();
    for (key, side, v) in all {
        if out.last().is_none_or(|e| e.0 != key) {
            out.push((key, None, None));
        }
        if let Some(e) = out.last_mut() {
            if side == 0 {
                e.1.get_or_insert(v);
            } else {
                e.2.get_or_insert(v);
            }
        }
    }
    out
}

fn finite_or(x: f64, fallback: f64) -> f64 {
    if x.is_finite() {
        x
    } else {
        fallback
    }
}

/// AMS's `_normalize_rank_scores`: every score divided by the largest and
/// clamped to [0, 1]; all zero when the largest is not positive. AMS uses
/// it for keyword and hybrid scores and reports `dist = 1 - score`.
pub fn normalize_by_max(scores: &mut [(u64, f64)]) {
    let max = scores.iter().map(|s| s.1).filter(|s| s.is_finite()).fold(f64::NEG_INFINITY, f64::max);
    for s in scores.iter_mut() {
        s.1 = if max > 0.0 && s.1.is_finite() { (s.1 / max).clamp(0.0, 1.0) } else { 0.0 };
    }
}

/// AMS's recency parameters, with its server defaults
/// (`_build_recency_params` in agent_memory_server/api.py, the same values
/// as `score_recency` in agent_memory_server/utils/recency.py).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecencyParams {
    /// Weight of `1 - dist`. Default 0.8.
    pub semantic_weight: f64,
    /// Weight of the recency score. Default 0.2.
    pub recency_weight: f64,
    /// Share of freshness (decay since last access) in recency. Default 0.6.
    pub freshness_weight: f64,
    /// Share of novelty (decay since creation) in recency. Default 0.4.
    pub novelty_weight: f64,
    /// Days for freshness to halve. Default 7.
    pub half_life_last_access_days: f64,
    /// Days for novelty to halve. Default 30.
    pub half_life_created_days: f64,
}

impl Default for RecencyParams {
    fn default() -> Self {
        RecencyParams {
            semantic_weight: 0.8,
            recency_weight: 0.2,
            freshness_weight: 0.6,
            novelty_weight: 0.4,
            half_life_last_access_days: 7.0,
            half_life_created_days: 30.0,
        }
    }
}

impl RecencyParams {
    /// Every parameter must be finite (AMS accepts any float; a NaN would
    /// make the order meaningless).
    pub fn validate(&self) -> Result<()> {
        let all = [
            ("recency_semantic_weight", self.semantic_weight),
            ("recency_recency_weight", self.recency_weight),
            ("recency_freshness_weight", self.freshness_weight),
            ("recency_novelty_weight", self.novelty_weight),
            ("recency_half_life_last_access_days", self.half_life_last_access_days),
            ("recency_half_life_created_days", self.half_life_created_days),
        ];
        for (field, v) in all {
            if !v.is_finite() {
                return Err(Error::invalid(field, "must be a finite number"));
            }
        }
        Ok(())
    }
}

const MILLIS_PER_DAY: f64 = 86_400_000.0;

fn days_since(now: Millis, then: Millis) -> f64 {
    now.saturating_sub(then) as f64 / MILLIS_PER_DAY
}

/// AMS's `score_recency`: `freshness_weight · 2^(-days since last access /
/// half-life) + novelty_weight · 2^(-days since creation / half-life)`,
/// clamped to [0, 1]. Times after `now` count as now; half-lives below
/// 0.001 days count as 0.001, as in AMS.
pub fn recency_score(last_accessed: Millis, created_at: Millis, now: Millis, p: &RecencyParams) -> f64 {
    let hl_access = p.half_life_last_access_days.max(0.001);
    let hl_created = p.half_life_created_days.max(0.001);
    let freshness = (-std::f64::consts::LN_2 / hl_access * days_since(now, last_accessed)).exp();
    let novelty = (-std::f64::consts::LN_2 / hl_created * days_since(now, created_at)).exp();
    let r = p.freshness_weight * freshness + p.novelty_weight * novelty;
    if r.is_nan() {
        0.0
    } else {
        r.clamp(0.0, 1.0)
    }
}

/// One search hit as recency re-ranking sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecencyHit {
    pub key: u64,
    /// The hit's distance as reported (`1 - score` for keyword and hybrid).
    pub dist: f64,
    pub last_accessed: Millis,
    pub created_at: Millis,
}

/// AMS's `rerank_with_recency`: orders `hits` by
/// `semantic_weight · (1 - dist) + recency_weight · recency_score`,
/// descending; a stable sort, so equal scores keep their order. Returns the
/// combined scores, aligned with the reordered hits. AMS reports the hits'
/// original `dist` and `score`, not this combination.
pub fn rerank_with_recency(hits: &mut [RecencyHit], now: Millis, p: &RecencyParams) -> Vec<f64> {
    let combined = |h: &RecencyHit| {
        let s = p.semantic_weight * (1.0 - h.dist) + p.recency_weight * recency_score(h.last_accessed, h.created_at, now, p);
        if s.is_nan() {
            f64::NEG_INFINITY
        } else {
            s
        }
    };
    let mut scored: Vec<(f64, RecencyHit)> = hits.iter().map(|h| (combined(h), *h)).collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (slot, (_, h)) in hits.iter_mut().zip(&scored) {
        *slot = *h;
    }
    scored.into_iter().map(|(s, _)| s).collect()
}
