//! AMS's long-term memory routes: create, search (semantic, keyword,
//! hybrid, auto; filters; time expressions; recency; neighbouring turns),
//! get, edit, delete and forget.

use serde_json::{json, Map, Value};

// The JSON shapes of records (AMS's MemoryRecord in and out, edits).
pub mod json;
// Moving a namespace to another embedder.
pub mod reembed;
pub mod rehome;
pub mod fanout;
pub mod forget;
mod search;
pub mod versions;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod search_tests;
#[cfg(test)]
mod facts_tests;
#[cfg(test)]
mod versions_tests;

use json::{patch_from_json, record_from_json, record_json};
pub use search::{query_vector, search, SearchBody, HIT_FIELDS};
use crate::api::services::Services;
use crate::api::privacy::{open_user_ids, report_into, seal_user_ids};
use crate::api::{parse_json, Ctx, Request};
use crate::core::privacy::Scrubbed;
use crate::core::engine::{Applied, Op};
use crate::core::error::{Error, Result, VectorCode};
use crate::core::limits;
use crate::core::longterm::{LtmApplied, LtmOp, NewRecord, Outcome};
use crate::core::retrieval::{Embedder, MixedEmbedder};
use crate::core::session::validate_id;
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
    let mut op = Op::Ltm(LtmOp::Create { records: records.into_iter().map(|record| NewRecord { record, vector: Vec::new() }).collect(), deduplicate, embedder: None, actor: None });
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
    let applied = store.apply(Op::Ltm(LtmOp::Create { records: new, deduplicate, embedder, actor: Some(ctx.actor.to_owned()) }), ctx.now).await?;
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

pub(super) fn num(o: &Map<String, Value>, name: &str) -> Result<Option<f64>> {
    match o.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n.as_f64().filter(|x| x.is_finite()).map(Some).ok_or_else(|| Error::invalid(name, "must be a finite number")),
        Some(_) => Err(Error::invalid(name, "must be a number")),
    }
}

pub(super) fn uint(o: &Map<String, Value>, name: &str, default: usize, max: usize) -> Result<usize> {
    match o.get(name) {
        None | Some(Value::Null) => Ok(default),
        Some(v) => v.as_u64().filter(|n| *n as usize <= max).map(|n| n as usize).ok_or_else(|| Error::invalid(name, format!("must be an integer from 0 to {max}"))),
    }
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
            match store.apply(Op::Ltm(LtmOp::Delete { ids, forget: false, actor: Some(ctx.actor.to_owned()) }), ctx.now).await? {
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
        (["forget"], "POST") => forget::forget(store, req, ctx.now, ctx.actor).await,
        (["reembed"], "POST") => reembed::reembed(store, ctx.services, ctx.now).await,
        ([id], "GET") => {
            validate_id("memory_id", id)?;
            store.read(|e| e.longterm().get(id).map(record_json)).await?.ok_or_else(|| Error::not_found("memory", *id))
        }
        ([id], "PATCH") => {
            validate_id("memory_id", id)?;
            let patch = patch_from_json(&parse_json::<Value>(req.body)?, ctx.namespace)?;
            let mut op = Op::Ltm(LtmOp::Update { id: (*id).to_owned(), patch, vector: None, embedder: None, actor: None });
            let scrubbed = store.scrub(&mut op).await?;
            let Op::Ltm(LtmOp::Update { patch, .. }) = op else { return Err(Error::Internal { detail: "scrub changed the op".into() }) };
            let (embedder, vector) = match &patch.text {
                Some(t) => {
                    let (name, v) = embed_one(store, ctx.services, t).await?;
                    (Some(name), Some(v))
                }
                None => (None, None),
            };
            match store.apply(Op::Ltm(LtmOp::Update { id: (*id).to_owned(), patch, vector, embedder, actor: Some(ctx.actor.to_owned()) }), ctx.now).await? {
                Applied::Ltm(LtmApplied::Updated(r)) => {
                    let mut v = record_json(&r);
                    report_into(&mut v, &scrubbed);
                    Ok(v)
                }
                other => Err(Error::Internal { detail: format!("update returned {other:?}") }),
            }
        }
        ([id, "versions"], "GET") => {
            validate_id("memory_id", id)?;
            versions::list(store, id).await
        }
        ([id, "restore"], "POST") => {
            validate_id("memory_id", id)?;
            versions::restore(store, ctx, id, req.body).await
        }
        ([id, "redact"], "POST") => {
            validate_id("memory_id", id)?;
            versions::redact(store, ctx, id).await
        }
        ([] | [""] | ["search"] | ["forget"] | [_] | [_, "versions" | "restore" | "redact"], other) => Err(Error::MethodNotAllowed { method: other.to_owned() }),
        _ => Err(Error::not_found("route", req.path)),
    }
}
