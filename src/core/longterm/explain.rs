//! Why a hit ranked where it did (`explain: true`): the signals a search
//! computed anyway, kept per hit. Only numbers and names: an explanation
//! never carries another record's content.

use crate::core::limits;
use crate::core::retrieval::rank::{recency_score, RecencyParams};
use crate::core::time::Millis;

use super::search::Mode;
use super::Currency;

/// A score and its 1-based rank in one side's candidate list.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Signal {
    pub score: f64,
    pub rank: usize,
}

/// How hybrid search fused the two sides for this query.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FusionInputs {
    /// `alpha` (a blend of min-max normalized scores) or `rrf`.
    pub rrf: bool,
    /// The vector side's weight, from the three inputs below.
    pub vector_weight: f64,
    /// The prior (`hybrid_alpha`, or the default).
    pub prior: f64,
    /// Keyword coverage: the best BM25 score over the query's ceiling.
    pub coverage: f64,
    /// Vector confidence: the top similarity's standing, clipped to [0, 1].
    pub confidence: f64,
}

impl FusionInputs {
    /// The formula, written out for a reader.
    pub fn formula(&self) -> String {
        let w = self.vector_weight;
        if self.rrf {
            format!("score = 2·({:.4}/({k} + rank_bm25) + {w:.4}/({k} + rank_vector)), divided by the best", 1.0 - w, k = limits::RRF_K_DEFAULT)
        } else {
            format!("score = {:.4}·minmax(bm25) + {w:.4}·minmax(vector), mapped onto [0, 1]", 1.0 - w)
        }
    }
}

/// AMS's recency re-rank for one hit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Recency {
    pub recency_score: f64,
    pub semantic_weight: f64,
    pub recency_weight: f64,
    /// `semantic_weight·(1 - dist) + recency_weight·recency_score`: what the
    /// hits were ordered by.
    pub combined: f64,
}

/// The signals behind one hit's rank.
#[derive(Debug, Clone, PartialEq)]
pub struct Explanation {
    /// The mode that ran.
    pub mode: Mode,
    /// 1-based rank in the whole answer (before paging).
    pub rank: usize,
    pub bm25: Option<Signal>,
    pub vector: Option<Signal>,
    pub fusion: Option<FusionInputs>,
    /// The factor a time expression in the query lifted the hit's score by
    /// (1 when its date fell outside every window); `None` without one.
    pub time_boost: Option<f64>,
    pub recency: Option<Recency>,
    /// The filters applied, by request name.
    pub filters: Vec<&'static str>,
    pub currency: Currency,
}

/// What a search keeps, when asked, to explain its hits.
#[derive(Debug, Default)]
pub(super) struct Signals {
    pub keyword: Vec<(u64, f32)>,
    pub vector: Vec<(u64, f32)>,
    pub fusion: Option<FusionInputs>,
}

fn find(list: &[(u64, f32)], key: u64) -> Option<Signal> {
    list.iter().position(|h| h.0 == key).map(|i| Signal { score: f64::from(list[i].1), rank: i + 1 })
}

/// Context shared by every hit's explanation.
pub(super) struct Context<'a> {
    pub mode: Mode,
    pub filters: Vec<&'static str>,
    pub currency: Currency,
    pub recency: Option<&'a RecencyParams>,
    pub now: Millis,
    /// Whether the query named a time (so every hit has a boost factor).
    pub timed: bool,
}

impl Signals {
    /// One hit's explanation: `inside` says whether its date fell in a
    /// query window, `dist` is its reported distance, `times` its
    /// (last_accessed, created_at).
    pub fn explain(&self, cx: &Context<'_>, key: u64, rank: usize, dist: f64, inside: bool, times: (Millis, Millis)) -> Explanation {
        Explanation {
            mode: cx.mode,
            rank,
            bm25: find(&self.keyword, key),
            vector: find(&self.vector, key),
            fusion: self.fusion,
            time_boost: cx.timed.then_some(if inside { 1.0 + limits::TIME_BOOST } else { 1.0 }),
            recency: cx.recency.map(|p| {
                let r = recency_score(times.0, times.1, cx.now, p);
                Recency { recency_score: r, semantic_weight: p.semantic_weight, recency_weight: p.recency_weight, combined: p.semantic_weight * (1.0 - dist) + p.recency_weight * r }
            }),
            filters: cx.filters.clone(),
            currency: cx.currency,
        }
    }
}
