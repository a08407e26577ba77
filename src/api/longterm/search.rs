//! `POST /v1/long-term-memory/search`: AMS's `SearchRequest` read into a
//! [`SearchBody`] (plus edgemem's options: `auto`, `fusion`, `ef`,
//! `fields`, `expand`, time reading, fact currency, `explain`, `exact`), run on the
//! core's search, and answered as AMS's `MemoryRecordResults`.

use serde_json::{json, Map, Value};

use super::json::{record_field, record_json, FACT_FIELDS, RECORD_FIELDS};
use super::{embed_one, num, uint};
use crate::api::services::Services;
use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::longterm::explain::{Explanation, Signal};
use crate::core::longterm::external::EXTERNAL_SEGMENT_ID;
use crate::core::longterm::search::{Fusion, TimeReference};
use crate::core::longterm::{Currency, Mode, SearchRequest};
use crate::core::retrieval::filter::Filter;
use crate::core::retrieval::rank::RecencyParams;
use crate::core::time::{format_rfc3339, Millis};
use crate::core::timeexpr;
use crate::store::{Backend, Store};

/// A parsed AMS `SearchRequest` (plus edgemem's `fusion` and `ef`).
pub struct SearchBody {
    pub text: String,
    pub mode: Mode,
    pub fusion: Fusion,
    pub filter: Filter,
    pub limit: usize,
    pub offset: usize,
    pub distance_threshold: Option<f64>,
    pub recency: Option<RecencyParams>,
    pub ef: Option<usize>,
    /// edgemem: answer only these fields of each hit (record fields and
    /// [`HIT_FIELDS`]); `None` is the whole AMS record.
    pub fields: Option<Vec<&'static str>>,
    /// edgemem: attach up to this many turns before and after each hit, from
    /// the same session, as the hit's `context` (0: none).
    pub expand: usize,
    /// edgemem: what time expressions in `text` are read against (the
    /// request's `reference_time`, else now) and the caller's UTC offset.
    pub reference_ms: Option<Millis>,
    pub tz_offset_minutes: i32,
    /// edgemem (issue 20): `latest_only` (default), `as_of` or
    /// `include_superseded`.
    pub currency: Currency,
    /// edgemem (issue 20): attach each hit's ranking signals as `explain`.
    pub explain: bool,
    /// edgemem (issue 21): scan every vector instead of walking the ANN
    /// graphs: slower, and the same answer however a tenant is sharded.
    pub exact: bool,
}

/// The per-hit fields a search adds to the record.
pub const HIT_FIELDS: [&str; 4] = ["dist", "score", "score_type", "segment"];

/// Parses `fields`: known names only, each once.
fn parse_fields(v: Option<&Value>) -> Result<Option<Vec<&'static str>>> {
    let Some(v) = v.filter(|v| !v.is_null()) else { return Ok(None) };
    let names = v.as_array().ok_or_else(|| Error::invalid("fields", "must be an array of field names"))?;
    let known_max = RECORD_FIELDS.len() + FACT_FIELDS.len() + HIT_FIELDS.len();
    if names.is_empty() || names.len() > known_max {
        return Err(Error::invalid("fields", format!("must name 1 to {known_max} fields")));
    }
    let mut out: Vec<&'static str> = Vec::with_capacity(names.len());
    for (i, n) in names.iter().enumerate() {
        let n = n.as_str().ok_or_else(|| Error::invalid(format!("fields[{i}]"), "must be a string"))?;
        let known = RECORD_FIELDS.iter().chain(FACT_FIELDS.iter()).chain(HIT_FIELDS.iter()).find(|f| **f == n).ok_or_else(|| {
            Error::invalid(format!("fields[{i}]"), format!("unknown field {n:?} (a MemoryRecord field, or dist, score, score_type, segment)"))
        })?;
        if out.contains(known) {
            return Err(Error::invalid(format!("fields[{i}]"), format!("{n:?} is named twice")));
        }
        out.push(known);
    }
    Ok(Some(out))
}

impl SearchBody {
    pub fn parse(v: &Value) -> Result<SearchBody> {
        let o = v.as_object().ok_or_else(|| Error::invalid("body", "must be an object"))?;
        let text = match o.get("text") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(_) => return Err(Error::invalid("text", "must be a string")),
        };
        let typed = |name: &str, ok: fn(&Value) -> bool, what: &str| match o.get(name) {
            Some(v) if !v.is_null() && !ok(v) => Err(Error::invalid(name, format!("must be {what}"))),
            _ => Ok(()),
        };
        typed("search_mode", Value::is_string, "a string")?;
        typed("fusion", Value::is_string, "a string")?;
        typed("recency_boost", Value::is_boolean, "a boolean")?;
        typed("reference_time", Value::is_string, "an RFC 3339 date-time string")?;
        typed("tz", Value::is_string, "a UTC offset such as \"+01:00\"")?;
        typed("latest_only", Value::is_boolean, "a boolean")?;
        typed("include_superseded", Value::is_boolean, "a boolean")?;
        typed("as_of", Value::is_string, "an RFC 3339 date-time string")?;
        typed("explain", Value::is_boolean, "a boolean")?;
        typed("exact", Value::is_boolean, "a boolean")?;
        // No mode named: auto (hybrid when the vectors can help, else
        // keyword). AMS defaults to semantic, but its client always names
        // the mode it wants, so only callers that leave it out see this.
        let mode = match o.get("search_mode").and_then(Value::as_str) {
            None => Mode::Auto,
            Some(m) => Mode::parse(m)?,
        };
        let alpha = num(o, "hybrid_alpha")?;
        if let Some(a) = alpha {
            if !(a.is_finite() && (0.0..=1.0).contains(&a)) {
                return Err(Error::invalid("hybrid_alpha", "must be between 0 and 1"));
            }
        }
        let reference = o.get("reference_time").and_then(Value::as_str);
        let reference_ms = reference.map(|s| crate::core::time::parse_rfc3339("reference_time", s)).transpose()?;
        let tz_offset_minutes = match o.get("tz").and_then(Value::as_str) {
            Some(tz) => timeexpr::parse_tz_offset(tz).ok_or_else(|| Error::invalid("tz", format!("{tz:?} is not a UTC offset such as \"+01:00\" or \"Z\"")))?,
            // The offset written in the reference time, if any.
            None => reference.and_then(|s| s.get(s.len().saturating_sub(6)..)).and_then(timeexpr::parse_tz_offset).unwrap_or(0),
        };
        let fusion = match o.get("fusion").and_then(Value::as_str) {
            None | Some("alpha") => Fusion::Alpha(alpha),
            Some("rrf") => Fusion::Rrf,
            Some(other) => return Err(Error::invalid("fusion", format!("{other:?} is not alpha or rrf"))),
        };
        // AMS applies its recency re-rank unless `recency_boost` is false.
        let recency = if matches!(o.get("recency_boost"), Some(Value::Bool(false))) {
            None
        } else {
            let d = RecencyParams::default();
            Some(RecencyParams {
                semantic_weight: num(o, "recency_semantic_weight")?.unwrap_or(d.semantic_weight),
                recency_weight: num(o, "recency_recency_weight")?.unwrap_or(d.recency_weight),
                freshness_weight: num(o, "recency_freshness_weight")?.unwrap_or(d.freshness_weight),
                novelty_weight: num(o, "recency_novelty_weight")?.unwrap_or(d.novelty_weight),
                half_life_last_access_days: num(o, "recency_half_life_last_access_days")?.unwrap_or(d.half_life_last_access_days),
                half_life_created_days: num(o, "recency_half_life_created_days")?.unwrap_or(d.half_life_created_days),
            })
        };
        let limit = uint(o, "limit", 10, limits::VECTOR_K_MAX)?;
        if limit == 0 {
            return Err(Error::invalid("limit", format!("must be 1 to {}", limits::VECTOR_K_MAX)));
        }
        Ok(SearchBody {
            text,
            mode,
            fusion,
            filter: Filter::from_request(o)?,
            limit,
            offset: uint(o, "offset", 0, limits::LTM_SEARCH_OFFSET_MAX)?,
            distance_threshold: num(o, "distance_threshold")?,
            recency,
            ef: match o.get("ef") {
                None | Some(Value::Null) => None,
                Some(_) => Some(uint(o, "ef", 0, limits::VECTOR_EF_MAX)?),
            },
            fields: parse_fields(o.get("fields"))?,
            expand: uint(o, "expand", 0, limits::LTM_EXPAND_MAX)?,
            reference_ms,
            tz_offset_minutes,
            currency: currency(o)?,
            explain: o.get("explain").and_then(Value::as_bool).unwrap_or(false),
            exact: o.get("exact").and_then(Value::as_bool).unwrap_or(false),
        })
    }
}

/// A hit's `explain`: its rank, each side's score and rank, the fusion
/// formula with its inputs, the time and recency factors, the filters.
/// Numbers and names only, never another record's content.
fn explanation_json(x: &Explanation) -> Value {
    let signal = |s: Option<Signal>| s.map(|s| json!({ "score": s.score, "rank": s.rank }));
    json!({
        "search_mode": x.mode.as_str(),
        "rank": x.rank,
        "bm25": signal(x.bm25),
        "vector": signal(x.vector),
        "fusion": x.fusion.map(|f| json!({
            "kind": if f.rrf { "rrf" } else { "alpha" },
            "formula": f.formula(),
            "vector_weight": f.vector_weight,
            "prior": f.prior,
            "coverage": f.coverage,
            "confidence": f.confidence,
            "rrf_k": f.rrf.then_some(limits::RRF_K_DEFAULT),
        })),
        "time_boost": x.time_boost,
        "recency": x.recency.map(|r| json!({ "recency_score": r.recency_score, "semantic_weight": r.semantic_weight, "recency_weight": r.recency_weight, "combined": r.combined })),
        "filters": x.filters,
        "versions": match x.currency {
            Currency::Latest => json!("latest_only"),
            Currency::All => json!("include_superseded"),
            Currency::AsOf(t) => json!({ "as_of": format_rfc3339(t) }),
        },
    })
}

/// Reads `latest_only` (default true), `as_of` and `include_superseded`;
/// contradictory combinations are refused rather than guessed at.
fn currency(o: &Map<String, Value>) -> Result<Currency> {
    let flag = |name: &str| o.get(name).and_then(Value::as_bool);
    let as_of = o.get("as_of").and_then(Value::as_str).map(|s| crate::core::time::parse_rfc3339("as_of", s)).transpose()?;
    let all = flag("include_superseded") == Some(true);
    let latest = flag("latest_only");
    match (as_of, all, latest) {
        (Some(_), true, _) => Err(Error::invalid("as_of", "cannot be combined with include_superseded (as_of picks one version of each fact)")),
        (Some(_), _, Some(false)) => Err(Error::invalid("as_of", "cannot be combined with latest_only: false (as_of picks one version of each fact)")),
        (Some(t), false, _) => Ok(Currency::AsOf(t)),
        (None, true, Some(true)) => Err(Error::invalid("include_superseded", "contradicts latest_only: true")),
        (None, true, _) | (None, false, Some(false)) => Ok(Currency::All),
        (None, false, _) => Ok(Currency::Latest),
    }
}

/// The query's embedding: the caller's (`vector`, JS API), else the text
/// embedded by the tenant's embedder; none for keyword mode, a listing
/// without text, or `auto` when the embedding does not fit the stored
/// vectors.
pub async fn query_vector<B: Backend>(store: &Store<B>, services: &dyn Services, body: &SearchBody, vector: Option<Vec<f32>>) -> Result<Option<Vec<f32>>> {
    Ok(match (body.mode, vector) {
        (Mode::Keyword, _) => None,
        (_, Some(v)) => Some(v),
        // No text: a filter-only listing (AMS answers one too), nothing to embed.
        (_, None) if body.text.trim().is_empty() => None,
        // Auto uses the vectors only where the query's embedding fits them.
        (Mode::Auto, None) => {
            let (embedder, v) = embed_one(store, services, &body.text).await?;
            store.read(|e| e.longterm().check_embedder(Some(&embedder), v.len()).is_ok()).await?.then_some(v)
        }
        (_, None) => {
            let (embedder, v) = embed_one(store, services, &body.text).await?;
            store.read(|e| e.longterm().check_embedder(Some(&embedder), v.len())).await??;
            Some(v)
        }
    })
}

/// The core's request for `body`, read against `now`.
pub fn core_request<'a>(body: &'a SearchBody, vector: Option<&'a [f32]>, external: Option<&'a [crate::core::longterm::external::ExternalHit]>, now: Millis) -> SearchRequest<'a> {
    SearchRequest {
        vector,
        external,
        mode: body.mode,
        fusion: body.fusion,
        limit: body.limit,
        offset: body.offset,
        distance_threshold: body.distance_threshold,
        recency: body.recency,
        ef: body.ef,
        time: Some(TimeReference { at_ms: body.reference_ms.unwrap_or(now), tz_offset_minutes: body.tz_offset_minutes }),
        currency: body.currency,
        explain: body.explain,
        exact: body.exact,
        ..SearchRequest::new(&body.text, &body.filter)
    }
}

/// One hit as answered: the whole record (`record`, its AMS JSON) with the
/// hit fields, or only the `fields` asked for.
pub fn hit_json(body: &SearchBody, record: &dyn Fn(&str) -> Value, whole: impl FnOnce() -> Value, dist: f64, score: f64, score_type: &str, segment: Option<u32>) -> Value {
    let hit_field = |f: &str| match f {
        "dist" => json!(dist),
        "score" => json!(score),
        "score_type" => json!(score_type),
        // An external index's hit came from no engine segment.
        "segment" => json!(segment.filter(|&s| s != EXTERNAL_SEGMENT_ID)),
        _ => record(f),
    };
    match &body.fields {
        // Only what was asked for is built at all.
        Some(fields) => Value::Object(fields.iter().map(|f| ((*f).to_owned(), hit_field(f))).collect()),
        None => {
            let mut v = whole();
            for f in HIT_FIELDS {
                v[f] = hit_field(f);
            }
            v
        }
    }
}

/// The answer's `time_query`: each time expression read in the text.
pub fn time_query_json(body: &SearchBody, windows: &[crate::core::timeexpr::TimeWindow], now: Millis) -> Value {
    let reference = body.reference_ms.unwrap_or(now);
    windows
        .iter()
        .map(|w| {
            json!({
                "text": body.text.get(w.start..w.end).unwrap_or_default(),
                "from": w.from_ms.map(format_rfc3339),
                "to": w.to_ms.map(format_rfc3339),
                "grain": w.grain.as_str(),
                "reference_time": format_rfc3339(reference),
                "tz_offset_minutes": body.tz_offset_minutes,
            })
        })
        .collect()
}

/// Runs a search; `vector` is the caller's query embedding (JS API), else
/// the text is embedded. Resolves to AMS's `MemoryRecordResults`.
pub async fn search<B: Backend>(store: &Store<B>, services: &dyn Services, body: &SearchBody, vector: Option<Vec<f32>>, now: Millis) -> Result<Value> {
    let vector = query_vector(store, services, body, vector).await?;
    // A tenant-wide external index answers the vector side when the host
    // has one: the engine keeps the hits it holds, admitted exactly.
    let external = match (services.external_index(), vector.as_deref()) {
        (Some(index), Some(v)) => Some(index.query(v, limits::EXTERNAL_TOP_K_MAX).await?),
        _ => None,
    };
    let req = core_request(body, vector.as_deref(), external.as_deref(), now);
    store
        .read(|e| {
            let lt = e.longterm();
            let r = lt.search(&req, now)?;
            let score_type = r.mode.as_str();
            let keys: Vec<u64> = r.hits.iter().map(|h| h.key).collect();
            let contexts = if body.expand > 0 { lt.neighbours(&keys, body.expand) } else { Vec::new() };
            let memories: Vec<Value> = r
                .hits
                .iter()
                .enumerate()
                .filter_map(|(i, h)| {
                    lt.record_by_key(h.key).map(|rec| {
                        let mut v = hit_json(body, &|f| record_field(rec, f), || record_json(rec), h.dist, h.score, score_type, h.segment);
                        if let Some(ctx) = contexts.get(i) {
                            v["context"] = ctx.iter().filter_map(|k| lt.record_by_key(*k)).map(record_json).collect();
                        }
                        if let Some(x) = r.explanations.get(i) {
                            v["explain"] = explanation_json(x);
                        }
                        v
                    })
                })
                .collect();
            let next = body.offset + memories.len();
            Ok(json!({
                "memories": memories,
                "total": r.total,
                "next_offset": if next < r.total { Some(next) } else { None },
                "exact_filter": r.exact,
                "search_mode": r.mode.as_str(),
                "time_query": time_query_json(body, &r.time, now),
            }))
        })
        .await?
}
