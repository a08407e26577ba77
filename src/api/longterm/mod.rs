//! AMS's long-term memory routes: create, search (semantic, keyword,
//! hybrid, auto; filters; time expressions; recency; neighbouring turns),
//! get, edit, delete and forget.

use serde_json::{json, Map, Value};

// The JSON shapes of records (AMS's MemoryRecord in and out, edits).
pub mod json;
// Moving a namespace to another embedder.
pub mod reembed;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod search_tests;
#[cfg(test)]
mod facts_tests;

use json::{patch_from_json, record_field, record_from_json, record_json, FACT_FIELDS, RECORD_FIELDS};
use crate::api::services::Services;
use crate::api::privacy::{open_user_ids, report_into, seal_user_ids, stored_user_id};
use crate::api::{parse_json, Ctx, Request};
use crate::core::privacy::Scrubbed;
use crate::core::engine::{Applied, Op};
use crate::core::error::{Error, Result, VectorCode};
use crate::core::limits;
use crate::core::longterm::explain::{Explanation, Signal};
use crate::core::longterm::search::{Fusion, TimeReference};
use crate::core::longterm::{Currency, LtmApplied, LtmOp, Mode, NewRecord, Outcome, SearchRequest};
use crate::core::retrieval::filter::Filter;
use crate::core::retrieval::rank::RecencyParams;
use crate::core::retrieval::record::MemoryType;
use crate::core::retrieval::{Embedder, MixedEmbedder};
use crate::core::session::validate_id;
use crate::core::time::{format_rfc3339, Millis};
use crate::core::timeexpr;
use crate::store::{Backend, Store};

/// Vectors and the identity of what made them.
pub struct Embedded {
    pub embedder: String,
    pub vectors: Vec<Vec<f32>>,
}

/// Embeds texts with the host's hook; else, when the host has the static
/// embedder's asset, the mixed offline embedder (static and hashed side by
/// side); else the hashed n-gram embedder at the tenant's dimension (384
/// before the first vector).
pub async fn embed_texts<B: Backend>(store: &Store<B>, services: &dyn Services, texts: &[String]) -> Result<Embedded> {
    if let Some(hook) = services.embed(texts) {
        let vectors = hook.await?;
        if vectors.len() != texts.len() {
            return Err(Error::HookFailed { hook: "embedder".into(), reason: format!("returned {} vectors for {} texts", vectors.len(), texts.len()) });
        }
        return Ok(Embedded { embedder: services.embedder_name(), vectors });
    }
    if let Some(model) = services.static_embedder().await {
        let mixed = MixedEmbedder::new(model);
        let vectors = texts.iter().map(|t| mixed.embed_vec(t)).collect::<Result<_>>()?;
        return Ok(Embedded { embedder: mixed.identity(), vectors });
    }
    let dim = store.read(|e| e.longterm().dim()).await?;
    let embedder = match dim {
        Some(d) => Embedder::new(d)?,
        None => Embedder::default(),
    };
    let vectors = texts.iter().map(|t| embedder.embed_vec(t)).collect::<Result<_>>()?;
    Ok(Embedded { embedder: embedder.identity(), vectors })
}

/// Embeds one text (a query, an edited record).
async fn embed_one<B: Backend>(store: &Store<B>, services: &dyn Services, text: &str) -> Result<(String, Vec<f32>)> {
    let mut e = embed_texts(store, services, &[text.to_owned()]).await?;
    let v = e.vectors.pop().ok_or_else(|| Error::Internal { detail: "no vector for the text".into() })?;
    Ok((e.embedder, v))
}

/// Creates records. `vectors` (one per record) come from the JS API; else
/// texts are embedded. Answers AMS's `{status}` plus the created and
/// deduplicated ids and one result per record (see [`create_json`]).
pub async fn create<B: Backend>(store: &Store<B>, ctx: &mut Ctx<'_>, memories: &[Value], vectors: Option<Vec<Vec<f32>>>, deduplicate: bool) -> Result<(Value, Scrubbed)> {
    if memories.len() > limits::LTM_CREATE_BATCH_MAX {
        return Err(Error::LimitExceeded { what: "memories in one create".into(), limit: limits::LTM_CREATE_BATCH_MAX as u64 });
    }
    let records = memories
        .iter()
        .enumerate()
        .map(|(i, m)| record_from_json(&format!("memories[{i}]"), m, ctx.namespace, ctx.now, ctx.random))
        .collect::<Result<Vec<_>>>()?;
    if let Some(v) = &vectors {
        if v.len() != records.len() {
            return Err(Error::invalid("vectors", format!("{} vectors for {} memories", v.len(), records.len())));
        }
    }
    // Scrubbed before embedding, so no vector is derived from a secret or
    // from personal data either (the apply's own pass then finds nothing).
    let mut op = Op::Ltm(LtmOp::Create { records: records.into_iter().map(|record| NewRecord { record, vector: Vec::new() }).collect(), deduplicate, embedder: None });
    let scrubbed = store.scrub(&mut op).await?;
    let Op::Ltm(LtmOp::Create { records: mut new, .. }) = op else { return Err(Error::Internal { detail: "scrub changed the op".into() }) };
    // Caller vectors carry no name: only their dimension is checked.
    let (vectors, embedder) = match vectors {
        Some(v) => (v, None),
        None => {
            let e = embed_texts(store, ctx.services, &new.iter().map(|r| r.record.text.clone()).collect::<Vec<_>>()).await?;
            (e.vectors, Some(e.embedder))
        }
    };
    for (r, v) in new.iter_mut().zip(vectors) {
        r.vector = v;
    }
    let applied = store.apply(Op::Ltm(LtmOp::Create { records: new, deduplicate, embedder }), ctx.now).await?;
    // Bounded segment maintenance after each write: no request pays for a
    // full rebuild, and the flat segment never grows without end.
    store.maintain(|e| e.compact_vectors(limits::LTM_COMPACT_WORK_POINTS_PER_WRITE)).await??;
    match applied {
        Applied::Ltm(LtmApplied::Created { created, duplicates, results }) => Ok((create_json(&created, &duplicates, &results), scrubbed)),
        other => Err(Error::Internal { detail: format!("create returned {other:?}") }),
    }
}

/// A create's answer: AMS's `status`, the id lists, and `results`, one per
/// record in request order: `{id, status: "created" | "superseded" |
/// "duplicate_of", duplicate_of?, superseded?, superseded_by?}`.
/// "superseded" means the record was written and replaced older versions
/// of its fact (named in `superseded`).
pub fn create_json(created: &[String], duplicates: &[String], results: &[(String, Outcome)]) -> Value {
    let results: Vec<Value> = results
        .iter()
        .map(|(id, o)| match o {
            Outcome::DuplicateOf(existing) => json!({ "id": id, "status": "duplicate_of", "duplicate_of": existing }),
            Outcome::Created { superseded, superseded_by } => {
                let mut v = json!({ "id": id, "status": if superseded.is_empty() { "created" } else { "superseded" } });
                if !superseded.is_empty() {
                    v["superseded"] = json!(superseded);
                }
                if let Some(by) = superseded_by {
                    v["superseded_by"] = json!(by);
                }
                v
            }
        })
        .collect();
    json!({ "status": "ok", "created": created, "duplicates": duplicates, "results": results })
}

fn num(o: &Map<String, Value>, name: &str) -> Result<Option<f64>> {
    match o.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n.as_f64().filter(|x| x.is_finite()).map(Some).ok_or_else(|| Error::invalid(name, "must be a finite number")),
        Some(_) => Err(Error::invalid(name, "must be a number")),
    }
}

fn uint(o: &Map<String, Value>, name: &str, default: usize, max: usize) -> Result<usize> {
    match o.get(name) {
        None | Some(Value::Null) => Ok(default),
        Some(v) => v.as_u64().filter(|n| *n as usize <= max).map(|n| n as usize).ok_or_else(|| Error::invalid(name, format!("must be an integer from 0 to {max}"))),
    }
}

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

/// Runs a search; `vector` is the caller's query embedding (JS API), else
/// the text is embedded. Resolves to AMS's `MemoryRecordResults`.
pub async fn search<B: Backend>(store: &Store<B>, services: &dyn Services, body: &SearchBody, vector: Option<Vec<f32>>, now: Millis) -> Result<Value> {
    let vector = match (body.mode, vector) {
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
    };
    let req = SearchRequest {
        vector: vector.as_deref(),
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
        ..SearchRequest::new(&body.text, &body.filter)
    };
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
                        let hit_field = |f: &str| match f {
                            "dist" => json!(h.dist),
                            "score" => json!(h.score),
                            "score_type" => json!(score_type),
                            "segment" => json!(h.segment),
                            _ => record_field(rec, f),
                        };
                        let mut v = match &body.fields {
                            // Only what was asked for is built at all.
                            Some(fields) => Value::Object(fields.iter().map(|f| ((*f).to_owned(), hit_field(f))).collect()),
                            None => {
                                let mut v = record_json(rec);
                                for f in HIT_FIELDS {
                                    v[f] = hit_field(f);
                                }
                                v
                            }
                        };
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
            let reference = body.reference_ms.unwrap_or(now);
            let time_query: Vec<Value> = r
                .time
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
                .collect();
            Ok(json!({
                "memories": memories,
                "total": r.total,
                "next_offset": if next < r.total { Some(next) } else { None },
                "exact_filter": r.exact,
                "search_mode": r.mode.as_str(),
                "time_query": time_query,
            }))
        })
        .await?
}

/// AMS's forget policy.
struct Policy {
    max_age_days: Option<f64>,
    max_inactive_days: Option<f64>,
    budget: Option<usize>,
    memory_type_allowlist: Option<Vec<MemoryType>>,
}

/// `POST /v1/long-term-memory/forget`: selects by AMS's rules, deletes
/// unless `dry_run` (AMS's default is a dry run).
pub async fn forget<B: Backend>(store: &Store<B>, req: &Request<'_>, now: Millis) -> Result<Value> {
    let body: Value = if req.body.is_empty() { json!({}) } else { parse_json(req.body)? };
    let p = match body.get("policy") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(p)) => p.clone(),
        Some(_) => return Err(Error::invalid("policy", "must be an object")),
    };
    let policy = Policy {
        max_age_days: num(&p, "max_age_days")?,
        max_inactive_days: num(&p, "max_inactive_days")?,
        budget: match p.get("budget") {
            None | Some(Value::Null) => None,
            Some(_) => Some(uint(&p, "budget", 0, limits::LTM_RECORDS_MAX)?),
        },
        memory_type_allowlist: match p.get("memory_type_allowlist") {
            None | Some(Value::Null) => None,
            Some(Value::Array(a)) => Some(a.iter().map(|x| x.as_str().map_or_else(|| Err(Error::invalid("memory_type_allowlist", "must be strings")), |s| MemoryType::parse("memory_type_allowlist", s))).collect::<Result<Vec<_>>>()?),
            Some(_) => return Err(Error::invalid("memory_type_allowlist", "must be an array")),
        },
    };
    let pinned: Vec<String> = match body.get("pinned_ids") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a.iter().filter_map(|x| x.as_str().map(str::to_owned)).collect(),
        Some(_) => return Err(Error::invalid("pinned_ids", "must be an array of ids")),
    };
    let dry_run = match req.param("dry_run") {
        None => true,
        Some("true" | "True" | "1") => true,
        Some("false" | "False" | "0") => false,
        Some(_) => return Err(Error::invalid("dry_run", "must be true or false")),
    };
    let limit = req.param_usize("limit", 1000, 1, limits::LTM_DELETE_BATCH_MAX)?;
    let sealed = req.param("user_id").map(|u| stored_user_id(store, u));
    let (user, session, ns) = (sealed.as_deref(), req.param("session_id"), req.param("namespace"));
    let day_ms = 86_400_000.0;
    let (scanned, ids) = store
        .read(|e| {
            let mut candidates: Vec<(Millis, String)> = Vec::new();
            let mut scanned = 0usize;
            let mut kept: Vec<(Millis, String)> = Vec::new();
            for r in e.longterm().records() {
                if user.is_some_and(|u| r.user_id.as_deref() != Some(u))
                    || session.is_some_and(|s| r.session_id.as_deref() != Some(s))
                    || ns.is_some_and(|n| r.namespace.as_deref() != Some(n))
                {
                    continue;
                }
                scanned += 1;
                if r.pinned || pinned.contains(&r.id) {
                    continue;
                }
                if policy.memory_type_allowlist.as_ref().is_some_and(|l| !l.contains(&r.memory_type)) {
                    continue;
                }
                let age = now.saturating_sub(r.created_at) as f64 / day_ms;
                let idle = now.saturating_sub(r.last_accessed) as f64 / day_ms;
                let old = match (policy.max_age_days, policy.max_inactive_days) {
                    (Some(a), Some(i)) => age > a && idle > i,
                    (Some(a), None) => age > a,
                    (None, Some(i)) => idle > i,
                    (None, None) => false,
                };
                if old {
                    candidates.push((r.last_accessed, r.id.clone()));
                } else {
                    kept.push((r.last_accessed, r.id.clone()));
                }
            }
            // Over budget: the least recently used of the rest go too.
            if let Some(budget) = policy.budget {
                if kept.len() > budget {
                    kept.sort();
                    let excess = kept.len() - budget;
                    candidates.extend(kept.drain(..excess));
                }
            }
            candidates.sort();
            candidates.truncate(limit);
            (scanned, candidates.into_iter().map(|(_, id)| id).collect::<Vec<_>>())
        })
        .await?;
    if !dry_run && !ids.is_empty() {
        store.apply(Op::Ltm(LtmOp::Delete { ids: ids.clone() }), now).await?;
    }
    Ok(json!({ "scanned": scanned, "deleted": ids.len(), "deleted_ids": ids, "dry_run": dry_run }))
}

/// Routes `/v1/long-term-memory...`.
/// Splits one flat array of caller vectors into one per memory.
fn split_vectors(flat: Option<Vec<f32>>, memories: usize) -> Result<Option<Vec<Vec<f32>>>> {
    let Some(flat) = flat else { return Ok(None) };
    let n = memories.max(1);
    if flat.is_empty() || flat.len() % n != 0 {
        return Err(Error::vector(VectorCode::DimensionMismatch, format!("{} components do not split into {} vectors", flat.len(), memories)));
    }
    Ok(Some(flat.chunks(flat.len() / n).map(<[f32]>::to_vec).collect()))
}

/// `/v1/long-term-memory/...`. Sealed user ids are opened in every answer,
/// so callers see the ids they wrote.
pub async fn route<B: Backend>(store: &Store<B>, req: &Request<'_>, ctx: &mut Ctx<'_>, rest: &[&str]) -> Result<Value> {
    let mut v = route_inner(store, req, ctx, rest).await?;
    store.with_privacy_key(|k| open_user_ids(&mut v, k));
    Ok(v)
}

async fn route_inner<B: Backend>(store: &Store<B>, req: &Request<'_>, ctx: &mut Ctx<'_>, rest: &[&str]) -> Result<Value> {
    match (rest, req.method) {
        ([] | [""], "POST") => {
            let body: Value = parse_json(req.body)?;
            let memories = body.get("memories").and_then(Value::as_array).ok_or_else(|| Error::invalid("memories", "is required: an array"))?;
            let dedup = match body.get("deduplicate") {
                None | Some(Value::Null) => true,
                Some(Value::Bool(b)) => *b,
                Some(_) => return Err(Error::invalid("deduplicate", "must be a boolean")),
            };
            let vectors = split_vectors(ctx.vectors.take(), memories.len())?;
            let (mut v, scrubbed) = create(store, ctx, memories, vectors, dedup).await?;
            report_into(&mut v, &scrubbed);
            Ok(v)
        }
        ([] | [""], "DELETE") => {
            let ids: Vec<String> = req.query.iter().filter(|(k, _)| k == "memory_ids").map(|(_, v)| v.clone()).collect();
            if ids.is_empty() {
                return Err(Error::invalid("memory_ids", "name at least one id"));
            }
            for id in &ids {
                validate_id("memory_ids", id)?;
            }
            match store.apply(Op::Ltm(LtmOp::Delete { ids }), ctx.now).await? {
                Applied::Ltm(LtmApplied::Deleted { deleted }) => Ok(json!({ "status": format!("ok, deleted {} memories", deleted.len()) })),
                other => Err(Error::Internal { detail: format!("delete returned {other:?}") }),
            }
        }
        (["search"], "POST") => {
            let mut raw = parse_json::<Value>(req.body)?;
            store.with_privacy_key(|k| seal_user_ids(&mut raw, k));
            let body = SearchBody::parse(&raw)?;
            let vector = ctx.vectors.take();
            search(store, ctx.services, &body, vector, ctx.now).await
        }
        (["forget"], "POST") => forget(store, req, ctx.now).await,
        (["reembed"], "POST") => reembed::reembed(store, ctx.services, ctx.now).await,
        ([id], "GET") => {
            validate_id("memory_id", id)?;
            store.read(|e| e.longterm().get(id).map(record_json)).await?.ok_or_else(|| Error::not_found("memory", *id))
        }
        ([id], "PATCH") => {
            validate_id("memory_id", id)?;
            let patch = patch_from_json(&parse_json::<Value>(req.body)?, ctx.namespace)?;
            let mut op = Op::Ltm(LtmOp::Update { id: (*id).to_owned(), patch, vector: None, embedder: None });
            let scrubbed = store.scrub(&mut op).await?;
            let Op::Ltm(LtmOp::Update { patch, .. }) = op else { return Err(Error::Internal { detail: "scrub changed the op".into() }) };
            let (embedder, vector) = match &patch.text {
                Some(t) => {
                    let (name, v) = embed_one(store, ctx.services, t).await?;
                    (Some(name), Some(v))
                }
                None => (None, None),
            };
            match store.apply(Op::Ltm(LtmOp::Update { id: (*id).to_owned(), patch, vector, embedder }), ctx.now).await? {
                Applied::Ltm(LtmApplied::Updated(r)) => {
                    let mut v = record_json(&r);
                    report_into(&mut v, &scrubbed);
                    Ok(v)
                }
                other => Err(Error::Internal { detail: format!("update returned {other:?}") }),
            }
        }
        ([] | [""] | ["search"] | ["forget"] | [_], other) => Err(Error::MethodNotAllowed { method: other.to_owned() }),
        _ => Err(Error::not_found("route", req.path)),
    }
}
