//! Hybrid fusion that does not lose to its better input.
//!
//! AMS's blend ([`super::rank::alpha_hybrid`]) adds a BM25 score divided by
//! its best to `(2 - cosine distance) / 2`. The second term sits in a narrow
//! band (about 0.5 to 0.8 for any two texts), the first spans [0, 1], so
//! whichever side varies more decides the order whatever the alpha; on chat
//! that made hybrid worse than keyword alone. Here each side is first put on
//! the same footing, its scores standardized over its own candidate list
//! (z-scores), so the weight means what it says. A record one side did not
//! return gets that side's lowest standardized score: no better than the
//! worst candidate it did return.
//!
//! Pure and deterministic: ties are broken by ascending key.

use crate::core::error::{Error, Result};
use crate::core::limits;

/// How each side's scores are made comparable before weighting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Norm {
    /// `(s - mean) / std` over the side's candidates, clipped to
    /// ±[`limits::FUSION_Z_CLIP`]. A side whose scores are all equal says
    /// nothing about order and contributes 0.
    ZScore,
    /// `(s - min) / (max - min)`; a side whose scores are all equal
    /// contributes 0.
    MinMax,
}

/// How far a side's best score stands out from its next nine, in standard
/// deviations of its whole candidate list: a rare name that one turn
/// contains sticks out of BM25's list, a paraphrase out of the vector
/// side's. 0 for fewer than two candidates or equal scores.
pub fn confidence(scores: &[f64]) -> f64 {
    let finite: Vec<f64> = scores.iter().copied().filter(|s| s.is_finite()).collect();
    if finite.len() < 2 {
        return 0.0;
    }
    let n = finite.len() as f64;
    let mean = finite.iter().sum::<f64>() / n;
    let sd = (finite.iter().map(|s| (s - mean) * (s - mean)).sum::<f64>() / n).sqrt();
    if !sd.is_finite() || sd <= f64::EPSILON {
        return 0.0;
    }
    let mut top = finite;
    top.sort_by(|a, b| b.total_cmp(a));
    top.truncate(limits::FUSION_CONFIDENCE_TOP);
    let rest = &top[1..];
    let rest_mean = rest.iter().sum::<f64>() / rest.len() as f64;
    ((top[0] - rest_mean) / sd).clamp(0.0, limits::FUSION_Z_CLIP)
}

/// The vector side's weight for one query: the prior `alpha` moved toward
/// the side whose best candidate stands out more,
/// `alpha·c_vec / (alpha·c_vec + (1 - alpha)·c_kw)`; `alpha` itself when
/// neither side stands out.
pub fn adaptive_weight(keyword: &[(u64, f32)], vector: &[(u64, f32)], alpha: f64) -> f64 {
    let c_kw = confidence(&keyword.iter().map(|h| f64::from(h.1)).collect::<Vec<_>>());
    let c_vec = confidence(&vector.iter().map(|h| f64::from(h.1)).collect::<Vec<_>>());
    let (a, b) = (alpha * c_vec, (1.0 - alpha) * c_kw);
    if a + b > f64::EPSILON {
        a / (a + b)
    } else {
        alpha
    }
}

/// Standardized scores of one side, aligned with `scores`, and the value a
/// missing key gets.
fn standardize(scores: &[f64], norm: Norm) -> (Vec<f64>, f64) {
    let finite: Vec<f64> = scores.iter().map(|&s| if s.is_finite() { s } else { 0.0 }).collect();
    if finite.is_empty() {
        return (finite, 0.0);
    }
    let n = finite.len() as f64;
    let out: Vec<f64> = match norm {
        Norm::ZScore => {
            let mean = finite.iter().sum::<f64>() / n;
            let var = finite.iter().map(|s| (s - mean) * (s - mean)).sum::<f64>() / n;
            let sd = var.sqrt();
            if !sd.is_finite() || sd <= f64::EPSILON {
                return (vec![0.0; finite.len()], 0.0);
            }
            let clip = limits::FUSION_Z_CLIP;
            finite.iter().map(|s| ((s - mean) / sd).clamp(-clip, clip)).collect()
        }
        Norm::MinMax => {
            let (lo, hi) = finite.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &s| (lo.min(s), hi.max(s)));
            if !(hi - lo).is_finite() || hi - lo <= f64::EPSILON {
                return (vec![0.0; finite.len()], 0.0);
            }
            finite.iter().map(|s| (s - lo) / (hi - lo)).collect()
        }
    };
    let floor = out.iter().copied().fold(f64::INFINITY, f64::min);
    (out, floor)
}

/// Fuses `keyword` (`(key, bm25)`) and `vector` (`(key, cosine
/// similarity)`): `(1 - vector_weight) · kw' + vector_weight · vec'` over
/// the union of keys, where `'` is `norm` per side. The fused scores are
/// then mapped onto [0, 1] (best 1, worst 0; all 1 when they are equal), so
/// `1 - score` can be reported as AMS's `dist`. A key repeated within a side
/// counts at its first score. `vector_weight` must lie in [0, 1].
pub fn fuse(keyword: &[(u64, f32)], vector: &[(u64, f32)], vector_weight: f64, norm: Norm, out: &mut Vec<(u64, f64)>) -> Result<()> {
    out.clear();
    if !(vector_weight.is_finite() && (0.0..=1.0).contains(&vector_weight)) {
        return Err(Error::invalid("hybrid_alpha", "must be between 0 and 1"));
    }
    let (kw, kw_floor) = standardize(&keyword.iter().map(|h| f64::from(h.1)).collect::<Vec<_>>(), norm);
    let (vec, vec_floor) = standardize(&vector.iter().map(|h| f64::from(h.1)).collect::<Vec<_>>(), norm);
    let kw = keyword.iter().zip(kw).map(|(h, z)| (h.0, z));
    let vec = vector.iter().zip(vec).map(|(h, z)| (h.0, z));
    for (key, k, v) in super::rank::by_key(kw, vec) {
        out.push((key, (1.0 - vector_weight) * k.unwrap_or(kw_floor) + vector_weight * v.unwrap_or(vec_floor)));
    }
    to_unit(out);
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    Ok(())
}

/// Maps scores onto [0, 1] by min and max; all 1 when they are equal.
fn to_unit(scores: &mut [(u64, f64)]) {
    let (lo, hi) = scores.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), s| (lo.min(s.1), hi.max(s.1)));
    for s in scores.iter_mut() {
        s.1 = if hi - lo > f64::EPSILON { ((s.1 - lo) / (hi - lo)).clamp(0.0, 1.0) } else { 1.0 };
    }
}

/// Reciprocal-rank fusion with a weight per side:
/// `2 · ((1 - vector_weight) / (k + r_kw) + vector_weight / (k + r_vec))`,
/// ranks from 1; a key missing from a side gets nothing from it. At weight
/// 0.5 this is plain RRF. Scores are then divided by the best, as AMS does.
pub fn weighted_rrf(keyword: &[u64], vector: &[u64], vector_weight: f64, k: f64, out: &mut Vec<(u64, f64)>) -> Result<()> {
    out.clear();
    if !(vector_weight.is_finite() && (0.0..=1.0).contains(&vector_weight)) {
        return Err(Error::invalid("hybrid_alpha", "must be between 0 and 1"));
    }
    let k = if k.is_finite() && k >= 1.0 { k } else { limits::RRF_K_DEFAULT };
    let mut all: Vec<(u64, u8, usize)> = Vec::with_capacity(keyword.len() + vector.len());
    all.extend(keyword.iter().enumerate().map(|(r, &key)| (key, 0u8, r)));
    all.extend(vector.iter().enumerate().map(|(r, &key)| (key, 1u8, r)));
    // A repeated key counts at its best rank within a side.
    all.sort_unstable();
    let mut last: Option<(u64, u8)> = None;
    for (key, side, rank) in all {
        if last == Some((key, side)) {
            continue;
        }
        let w = if side == 0 { 1.0 - vector_weight } else { vector_weight };
        let add = 2.0 * w / (k + rank as f64 + 1.0);
        match out.last_mut() {
            Some(e) if e.0 == key => e.1 += add,
            _ => out.push((key, add)),
        }
        last = Some((key, side));
    }
    super::rank::normalize_by_max(out);
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    Ok(())
}

/// How much of the query the best keyword hit covers: its BM25 score over
/// the score ceiling of the query (`Bm25Index::score_ceiling`), in [0, 1];
/// 0 when nothing matched.
pub fn coverage(best_score: f32, ceiling: f32) -> f64 {
    if ceiling > 0.0 && best_score.is_finite() {
        f64::from(best_score / ceiling).clamp(0.0, 1.0)
    } else {
        0.0
    }
}

/// The vector side's weight for one query, from the prior `alpha`, the
/// keyword coverage `c` and the vector side's confidence `v` (its
/// [`confidence`] over [`limits::FUSION_Z_CLIP`], in [0, 1]):
/// `alpha·((1-c)·v)^(p/2) / (alpha·((1-c)·v)^(p/2) + (1-alpha)·c^p)` with
/// p = [`limits::FUSION_COVERAGE_POWER`]. A query whose words one record
/// holds almost all of (a name, an error code) leans on keyword search; a
/// paraphrase that matches few words leans on the vectors, the more so when
/// their best hit stands out. The prior itself when both terms vanish.
/// `alpha` must lie in [0, 1].
pub fn coverage_weight(c: f64, v: f64, alpha: f64) -> Result<f64> {
    if !(alpha.is_finite() && (0.0..=1.0).contains(&alpha)) {
        return Err(Error::invalid("hybrid_alpha", "must be between 0 and 1"));
    }
    let unit = |x: f64| if x.is_finite() { x.clamp(0.0, 1.0) } else { 0.0 };
    let (c, v) = (unit(c), unit(v));
    let p = limits::FUSION_COVERAGE_POWER;
    let (vec, kw) = (alpha * ((1.0 - c) * v).powf(p / 2.0), (1.0 - alpha) * c.powf(p));
    Ok(if vec + kw > f64::EPSILON { vec / (vec + kw) } else { alpha })
}
