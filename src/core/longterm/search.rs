//! Long-term search: semantic (the vector index), keyword (BM25), hybrid
//! (a weighted blend or reciprocal-rank fusion, see `retrieval::fuse`) and
//! auto (hybrid when the vectors can help, keyword otherwise), AMS filters,
//! time expressions in the query as a boost, a recency re-rank, paging.
//!
//! A filter is resolved to the exact set of matching keys first. A small set
//! is answered by scanning exactly those vectors and documents; a large one
//! becomes a predicate the HNSW search oversamples against. Either way a
//! record that fails the filter is never returned.

use std::collections::HashSet;

use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::retrieval::filter::Filter;
use crate::core::retrieval::fuse::{self, Norm};
use crate::core::retrieval::rank::{normalize_by_max, rerank_with_recency, RecencyHit, RecencyParams};
use crate::core::retrieval::bm25::QueryStats;
use crate::core::retrieval::{Bm25Scratch, KeyFilter};
use crate::core::time::Millis;
use crate::core::timeexpr::{self, TimeWindow};
use crate::core::vector::{self, Hit, Scratch, SearchParams};

use super::explain::{self, Explanation, FusionInputs, Signals};
use super::external::{self, ExternalHit};
use super::{Currency, LongTerm};

/// Search mode (AMS's `search_mode`, plus `auto`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Vector similarity only.
    Semantic,
    /// BM25 only.
    Keyword,
    /// Both, fused.
    Hybrid,
    /// Hybrid when there is a vector index, a query vector and an embedder
    /// that helps (not the hashed fallback, which measured worse than
    /// keyword alone on every set); keyword otherwise. What a search gets
    /// when it names no mode.
    Auto,
}

impl Mode {
    /// Reads `semantic`, `keyword`, `hybrid` or `auto`.
    pub fn parse(s: &str) -> Result<Mode> {
        match s {
            "semantic" => Ok(Mode::Semantic),
            "keyword" => Ok(Mode::Keyword),
            "hybrid" => Ok(Mode::Hybrid),
            "auto" => Ok(Mode::Auto),
            other => Err(Error::invalid("search_mode", format!("{other:?} is not semantic, keyword, hybrid or auto"))),
        }
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Semantic => "semantic",
            Mode::Keyword => "keyword",
            Mode::Hybrid => "hybrid",
            Mode::Auto => "auto",
        }
    }
}

/// How hybrid search fuses its two rankings. Either way the vector side's
/// weight is set per query from how much of the query the best keyword hit
/// covers (`fuse::coverage_weight`), starting from a prior.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fusion {
    /// A blend of min-max normalized scores; the prior is AMS's
    /// `hybrid_alpha` when given, else [`limits::HYBRID_ALPHA_PRIOR`] (0
    /// over the hashed fallback's vectors: keyword's order).
    Alpha(Option<f64>),
    /// Reciprocal-rank fusion with k = 60, each side weighted as above.
    Rrf,
}

/// What time expressions in a query are read against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeReference {
    /// "Now" for the query: "yesterday" is the local day before this one.
    pub at_ms: Millis,
    /// The caller's offset from UTC, in minutes (no DST: no tz data).
    pub tz_offset_minutes: i32,
}

/// One search.
#[derive(Debug, Clone, Copy)]
pub struct SearchRequest<'a> {
    pub text: &'a str,
    /// The query embedding; required for semantic and hybrid.
    pub vector: Option<&'a [f32]>,
    pub mode: Mode,
    pub fusion: Fusion,
    pub filter: &'a Filter,
    pub limit: usize,
    pub offset: usize,
    /// Semantic only: drop hits whose cosine distance is larger.
    pub distance_threshold: Option<f64>,
    /// AMS's recency re-rank, when enabled.
    pub recency: Option<RecencyParams>,
    /// HNSW beam width; default the index's.
    pub ef: Option<usize>,
    /// Read time expressions in `text` against this and favour records
    /// whose event date (else creation time) falls in them; `None` reads
    /// none.
    pub time: Option<TimeReference>,
    /// Which versions of facts may be found: the current ones (default),
    /// those current at a time, or all.
    pub currency: Currency,
    /// Explain each hit (see [`super::explain`]).
    pub explain: bool,
    /// Scan every vector instead of walking the graphs: slower, and the
    /// same answer however a tenant is sharded. Default `false`.
    pub exact: bool,
    /// The vector side from an external index's answer instead of this
    /// index's vectors (see [`super::external`]). Default `None`.
    pub external: Option<&'a [ExternalHit]>,
}

impl<'a> SearchRequest<'a> {
    /// A request with every option at its default: semantic, no vector,
    /// AMS's alpha prior, 10 hits from the first, no threshold, no recency,
    /// no time reading.
    pub fn new(text: &'a str, filter: &'a Filter) -> SearchRequest<'a> {
        SearchRequest {
            text,
            vector: None,
            mode: Mode::Semantic,
            fusion: Fusion::Alpha(None),
            filter,
            limit: 10,
            offset: 0,
            distance_threshold: None,
            recency: None,
            ef: None,
            time: None,
            currency: Currency::Latest,
            explain: false,
            exact: false,
            external: None,
        }
    }
}

/// One hit: AMS's `dist` (cosine distance, or `1 - score` for keyword and
/// hybrid), the score, and which vector segment answered (if any).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scored {
    pub key: u64,
    pub dist: f64,
    pub score: f64,
    pub segment: Option<u32>,
}

/// A page of hits plus how many matched before paging.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchResult {
    /// With `explain`, one per hit, in the same order; else empty.
    pub explanations: Vec<Explanation>,
    pub hits: Vec<Scored>,
    pub total: usize,
    /// The filter was answered by an exact scan of the matching keys.
    pub exact: bool,
    /// The mode that ran: `auto` resolves to hybrid or keyword.
    pub mode: Mode,
    /// The time expressions read from the query, as windows.
    pub time: Vec<TimeWindow>,
}

impl LongTerm {
    /// The record stored under `key`.
    pub fn record_by_key(&self, key: u64) -> Option<&crate::core::retrieval::record::MemoryRecord> {
        self.records.get(&key)
    }

    /// Runs a search at `now` (for recency): this index's candidates, then
    /// the rank step. A sharded tenant runs the same two halves
    /// ([`super::sharded`]), with the rank step once over every shard's
    /// candidates.
    pub fn search(&self, req: &SearchRequest<'_>, now: Millis) -> Result<SearchResult> {
        validate(req)?;
        let mode = self.resolve(req.mode, req.vector.is_some() && (req.external.is_some() || self.index.is_some()));
        let windows = query_windows(req);
        let cands = self.candidates(req, mode, None)?;
        let view = RankView { mode, windows, hashed: self.hashed_vectors() };
        rank(req, cands, view, |key| self.times(key), now)
    }

    /// A record's times, which the rank step reads (recency, time boost).
    pub fn times(&self, key: u64) -> Option<Times> {
        self.records.get(&key).map(|r| Times { created_at: r.created_at, last_accessed: r.last_accessed, event_date: r.event_date })
    }

    /// This index's side of a search in `mode` (already resolved): the
    /// records the filter and currency admit, and the top candidates of
    /// each side, at the depth the rank step fuses. `stats` replaces this
    /// index's BM25 statistics with a whole tenant's (a shard's search).
    pub fn candidates(&self, req: &SearchRequest<'_>, mode: Mode, stats: Option<&QueryStats>) -> Result<Candidates> {
        // Superseded records are kept (get by id shows them) and found only
        // as of a time when they held, or when every version is asked for.
        let everything_visible = match req.currency {
            Currency::Latest => self.superseded.is_empty(),
            Currency::All => true,
            Currency::AsOf(_) => false,
        };
        let matched: Option<Vec<u64>> = if req.filter.is_empty() && everything_visible {
            None
        } else {
            Some(self.records.iter().filter(|(k, r)| self.visible(**k, r, req.currency) && req.filter.matches(r)).map(|(k, _)| *k).collect())
        };
        if matched.as_ref().is_some_and(Vec::is_empty) || self.records.is_empty() {
            return Ok(Candidates { empty: true, exact: true, ..Candidates::default() });
        }
        let exact = matched.as_ref().is_some_and(|m| m.len() <= limits::VECTOR_FILTER_EXACT_KEYS_MAX);
        let set: Option<HashSet<u64>> = matched.as_ref().filter(|_| !exact).map(|m| m.iter().copied().collect());
        let pred = |key: u64| set.as_ref().is_none_or(|s| s.contains(&key));
        let mut out = Candidates { exact: matched.is_none() || exact, ..Candidates::default() };

        // No text and no vector: a filter-only listing, newest first, as AMS
        // answers a search without text (browsing a user's memories).
        if is_browse(req) {
            let mut keys: Vec<(Millis, &str, u64)> = match &matched {
                Some(m) => m.iter().filter_map(|k| self.records.get(k).map(|r| (r.created_at, r.id.as_str(), *k))).collect(),
                None => self.records.iter().map(|(k, r)| (r.created_at, r.id.as_str(), *k)).collect(),
            };
            keys.sort_unstable_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
            out.browse = keys.into_iter().map(|(at, _, key)| (at, key)).collect();
            return Ok(out);
        }
        let depth = depth(mode, req);
        if matches!(mode, Mode::Semantic | Mode::Hybrid | Mode::Auto) {
            let v = req.vector.ok_or_else(|| Error::invalid("vector", "semantic and hybrid search need a query embedding"))?;
            if let Some(hits) = req.external {
                // The hits this index holds, admitted exactly (`matched` is
                // in key order: the records map's).
                let admitted = |key: &u64| matched.as_ref().is_none_or(|m| m.binary_search(key).is_ok());
                out.vector = hits
                    .iter()
                    .filter_map(|h| self.ids.get(&h.id).copied().filter(admitted).map(|key| Hit { key, score: h.score, segment: external::EXTERNAL_SEGMENT_ID }))
                    .collect();
                out.vector.sort_unstable_by(|a, b| b.score.total_cmp(&a.score).then(a.key.cmp(&b.key)));
                out.vector.truncate(depth);
            } else if let Some(index) = self.index.as_ref() {
                let filter = match (&matched, exact) {
                    (None, _) => vector::Eligible::All,
                    (Some(m), true) => vector::Eligible::Keys(m),
                    (Some(_), false) => vector::Eligible::Predicate(&pred),
                };
                let (params, mut scratch) = (SearchParams { k: depth, ef: req.ef }, Scratch::default());
                if req.exact {
                    index.search_exact(v, &params, &filter, &mut scratch, &mut out.vector)?;
                } else {
                    index.search(v, &params, &filter, &mut scratch, &mut out.vector)?;
                }
            }
        }
        if matches!(mode, Mode::Keyword | Mode::Hybrid | Mode::Auto) {
            let filter = match &matched {
                None => KeyFilter::All,
                Some(m) => KeyFilter::Subset(m),
            };
            let mut scratch = Bm25Scratch::default();
            match stats {
                None => self.bm25.search(req.text, depth, filter, &mut scratch, &mut out.keyword)?,
                Some(stats) => self.bm25.search_with_stats(stats, depth, filter, &mut scratch, &mut out.keyword)?,
            }
            if mode != Mode::Keyword {
                out.ceiling = match stats {
                    None => self.bm25.score_ceiling(req.text, &mut scratch),
                    Some(stats) => self.bm25.ceiling_with_stats(stats),
                };
            }
        }
        Ok(out)
    }

    /// What `auto` runs as; other modes run as asked.
    /// `vectors`: the query has a vector and some vectors to compare it
    /// with (this index's, or an external index's answer).
    fn resolve(&self, mode: Mode, vectors: bool) -> Mode {
        if mode != Mode::Auto {
            return mode;
        }
        if vectors && !self.hashed_vectors() {
            Mode::Hybrid
        } else {
            Mode::Keyword
        }
    }


    /// Whether the stored vectors are the hashed fallback's alone.
    pub fn hashed_vectors(&self) -> bool {
        self.embedder.as_deref().is_some_and(|e| e.starts_with(crate::core::retrieval::EMBEDDER_NAME))
    }
}

/// The score a hit is ordered by when the query named a time: raised by
/// `TIME_BOOST` times its size when the record's event date (else its
/// creation time) falls in a window, so near-equals reorder and an
/// unrelated record is not lifted over a relevant one. Reported scores
/// stay the retrieval's.
fn time_boosted(h: &Scored, windows: &[TimeWindow], times: Option<Times>) -> f64 {
    let inside = times.is_some_and(|r| {
        let t = r.event_date.unwrap_or(r.created_at);
        windows.iter().any(|w| w.from_ms.is_none_or(|f| t >= f) && w.to_ms.is_none_or(|e| t < e))
    });
    if inside {
        h.score + limits::TIME_BOOST * h.score.abs()
    } else {
        h.score
    }
}

/// A record's times, all the rank step reads of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Times {
    pub created_at: Millis,
    pub last_accessed: Millis,
    pub event_date: Option<Millis>,
}

/// What an index (or a tenant's shards together) offers one search, before
/// fusion, the time boost, recency and paging. Keys are the index's own;
/// a merge of shards renumbers them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Candidates {
    /// The filter admits no record (or the index is empty).
    pub empty: bool,
    /// The filter was answered by an exact scan of the matching keys.
    pub exact: bool,
    /// A listing without text or vector: every admitted record, newest
    /// first, ties by id.
    pub browse: Vec<(Millis, u64)>,
    /// BM25, best first, ties by key.
    pub keyword: Vec<(u64, f32)>,
    /// Vector similarities, best first, ties by key.
    pub vector: Vec<Hit>,
    /// The best BM25 score the query could reach (hybrid's coverage).
    pub ceiling: f32,
}

/// What the rank step knows besides the candidates.
#[derive(Debug, Clone)]
pub struct RankView {
    /// The mode that runs (`auto` resolved).
    pub mode: Mode,
    /// The time expressions read from the query.
    pub windows: Vec<TimeWindow>,
    /// The stored vectors are the hashed fallback's.
    pub hashed: bool,
}

/// Checks a request's bounds before any index is asked.
pub fn validate(req: &SearchRequest<'_>) -> Result<()> {
    if req.limit == 0 || req.limit > limits::VECTOR_K_MAX {
        return Err(Error::invalid("limit", format!("must be 1 to {}", limits::VECTOR_K_MAX)));
    }
    if req.offset > limits::LTM_SEARCH_OFFSET_MAX {
        return Err(Error::invalid("offset", format!("must be at most {}", limits::LTM_SEARCH_OFFSET_MAX)));
    }
    if req.text.len() > limits::QUERY_TEXT_BYTES_MAX {
        return Err(Error::too_large("text", req.text.len(), limits::QUERY_TEXT_BYTES_MAX));
    }
    if let Some(t) = req.distance_threshold {
        if !(t.is_finite() && (0.0..=2.0).contains(&t)) {
            return Err(Error::invalid("distance_threshold", "must be between 0 and 2"));
        }
    }
    if let Some(p) = &req.recency {
        p.validate()?;
    }
    Ok(())
}

/// The time expressions of the query, as windows (none without a reference).
pub fn query_windows(req: &SearchRequest<'_>) -> Vec<TimeWindow> {
    // The expression's words stay in the keyword query: "on Monday" in
    // "what do I do on Monday evenings" is the topic (taking them out cost
    // 0.05 nDCG@10 on convbench's keyword mode).
    req.time.map(|t| timeexpr::parse_query(req.text, t.at_ms, t.tz_offset_minutes)).unwrap_or_default()
}

pub fn is_browse(req: &SearchRequest<'_>) -> bool {
    req.text.trim().is_empty() && req.vector.is_none()
}

/// Candidates enough for the page, capped by the index's k bound.
pub fn page_k(req: &SearchRequest<'_>) -> usize {
    (req.offset + req.limit).min(limits::VECTOR_K_MAX)
}

/// How deep each side's list goes. Hybrid fuses deeper lists than it
/// returns: a record ranked 30th by one side and 3rd by the other must
/// still be seen by both.
pub fn depth(mode: Mode, req: &SearchRequest<'_>) -> usize {
    let k = page_k(req);
    if mode == Mode::Hybrid {
        (k * limits::LTM_HYBRID_DEPTH_FACTOR).clamp(limits::LTM_HYBRID_DEPTH_MIN, limits::VECTOR_K_MAX)
    } else {
        k
    }
}

/// The rank step: fusion, the time boost, recency, paging and
/// explanations over `cands`, reading each hit's record times through
/// `times`. Depends on nothing else, so one index and a merge of shards
/// rank alike.
pub fn rank(req: &SearchRequest<'_>, cands: Candidates, view: RankView, times: impl Fn(u64) -> Option<Times>, now: Millis) -> Result<SearchResult> {
    let RankView { mode, windows, hashed } = view;
    if cands.empty {
        return Ok(SearchResult { hits: Vec::new(), total: 0, exact: true, mode, time: windows, explanations: Vec::new() });
    }
    let k = page_k(req);
    let browse = is_browse(req);
    // Kept only when asked: the signals behind each hit's rank.
    let mut signals = Signals::default();
    let Candidates { browse: listing, keyword: kw, vector: v, ceiling, exact, .. } = cands;
    let mut hits: Vec<Scored> = match mode {
        _ if browse => listing.into_iter().map(|(_, key)| Scored { key, dist: 0.0, score: 0.0, segment: None }).collect(),
        Mode::Semantic => {
            if req.explain {
                signals.vector = v.iter().map(|h| (h.key, h.score)).collect();
            }
            v.iter()
                .map(|h| Scored { key: h.key, dist: 1.0 - f64::from(h.score), score: f64::from(h.score), segment: Some(h.segment) })
                .filter(|s| req.distance_threshold.is_none_or(|t| s.dist <= t))
                .collect()
        }
        Mode::Keyword => {
            let mut scored: Vec<(u64, f64)> = kw.iter().map(|&(k, s)| (k, f64::from(s))).collect();
            if req.explain {
                signals.keyword = kw;
            }
            normalize_by_max(&mut scored);
            scored.into_iter().map(|(key, score)| Scored { key, dist: 1.0 - score, score, segment: None }).collect()
        }
        Mode::Hybrid | Mode::Auto => {
            // (`resolve` never leaves Auto; the arm keeps the match total.)
            let segments: std::collections::HashMap<u64, u32> = v.iter().map(|h| (h.key, h.segment)).collect();
            let sims: Vec<(u64, f32)> = v.iter().map(|h| (h.key, h.score)).collect();
            let coverage = fuse::coverage(kw.first().map_or(0.0, |h| h.1), ceiling);
            let prior = match req.fusion {
                Fusion::Alpha(Some(a)) => a,
                // Hashed vectors measured worse than keyword alone on
                // every set, fused in any way: hybrid keeps keyword's
                // order unless the caller names a weight.
                _ if hashed => 0.0,
                _ => limits::HYBRID_ALPHA_PRIOR,
            };
            let sure = fuse::confidence(&sims.iter().map(|h| f64::from(h.1)).collect::<Vec<_>>()) / limits::FUSION_Z_CLIP;
            let weight = fuse::coverage_weight(coverage, sure, prior)?;
            let mut fused = Vec::new();
            match req.fusion {
                Fusion::Alpha(_) => fuse::fuse(&kw, &sims, weight, Norm::MinMax, &mut fused)?,
                Fusion::Rrf => {
                    let a: Vec<u64> = kw.iter().map(|h| h.0).collect();
                    let b: Vec<u64> = v.iter().map(|h| h.key).collect();
                    fuse::weighted_rrf(&a, &b, weight, limits::RRF_K_DEFAULT, &mut fused)?;
                }
            }
            fused.truncate(k);
            if req.explain {
                signals = Signals {
                    fusion: Some(FusionInputs { rrf: req.fusion == Fusion::Rrf, vector_weight: weight, prior, coverage, confidence: sure }),
                    keyword: kw,
                    vector: sims,
                };
            }
            fused.into_iter().map(|(key, score)| Scored { key, dist: 1.0 - score, score, segment: segments.get(&key).copied() }).collect()
        }
    };
    let boosted = |h: &Scored| time_boosted(h, &windows, times(h.key));
    if !windows.is_empty() && !browse {
        hits.sort_by(|a, b| boosted(b).total_cmp(&boosted(a)));
    }
    // The time boost orders the recency re-rank too, or recency would undo it.
    let order_dist = |h: &Scored| if windows.is_empty() { h.dist } else { h.dist - (boosted(h) - h.score) };
    if let Some(p) = &req.recency {
        let mut rh: Vec<RecencyHit> = hits
            .iter()
            .filter_map(|h| times(h.key).map(|r| RecencyHit { key: h.key, dist: order_dist(h), last_accessed: r.last_accessed, created_at: r.created_at }))
            .collect();
        rerank_with_recency(&mut rh, now, p);
        let by_key: std::collections::HashMap<u64, Scored> = hits.iter().map(|h| (h.key, *h)).collect();
        hits = rh.iter().filter_map(|h| by_key.get(&h.key).copied()).collect();
    }
    let total = hits.len();
    let page: Vec<Scored> = hits.into_iter().skip(req.offset).take(req.limit).collect();
    let explanations = if req.explain {
        let cx = explain::Context { mode, filters: req.filter.names(), currency: req.currency, recency: req.recency.as_ref(), now, timed: !windows.is_empty() && !browse };
        page.iter()
            .enumerate()
            .map(|(i, h)| {
                let t = times(h.key).map_or((0, 0), |r| (r.last_accessed, r.created_at));
                let inside = cx.timed && boosted(h) != h.score;
                signals.explain(&cx, h.key, req.offset + i + 1, order_dist(h), inside, t)
            })
            .collect()
    } else {
        Vec::new()
    };
    Ok(SearchResult { hits: page, total, exact, mode, time: windows, explanations })
}
