//! A record's history over the routes (issue 20):
//! `GET /v1/long-term-memory/{id}/versions`,
//! `POST /v1/long-term-memory/{id}/restore {version}` and
//! `POST /v1/long-term-memory/{id}/redact`.

use serde_json::{json, Value};

use super::embed_one;
use super::json::record_json;
use crate::api::{parse_json, Ctx};
use crate::core::engine::{Applied, Op};
use crate::core::error::{Error, Result};
use crate::core::longterm::versions::Version;
use crate::core::longterm::{LtmApplied, LtmOp};
use crate::core::time::format_rfc3339;
use crate::store::{Backend, Store};

fn version_json(id: &str, v: &Version, live_text: Option<&str>) -> Value {
    // The text a version left: its body's, or the live record's for the
    // current one; null once pruned, deleted or redacted.
    let text = v.body.as_ref().map(|b| b.text.as_str()).or(live_text);
    json!({ "id": id, "version": v.version, "ts": format_rfc3339(v.ts), "op": v.op.as_str(), "text_hash": v.text_hash, "actor": v.actor, "text": text })
}

/// `{id, current, versions: [{version, ts, op, text_hash, actor, text}]}`,
/// oldest first; `current` is the live record's version, or null.
pub async fn list<B: Backend>(store: &Store<B>, id: &str) -> Result<Value> {
    store
        .read(|e| {
            let lt = e.longterm();
            let history = lt.versions(id).ok_or_else(|| Error::not_found("memory", id))?;
            let live = lt.get(id);
            let last = history.len().saturating_sub(1);
            let versions: Vec<Value> = history
                .iter()
                .enumerate()
                .map(|(i, v)| version_json(id, v, live.filter(|_| i == last && v.op.leaves_record()).map(|r| r.text.as_str())))
                .collect();
            let current = live.and(history.last()).map(|v| v.version);
            Ok(json!({ "id": id, "current": current, "versions": versions }))
        })
        .await?
}

/// Restores version `{version}` of `id` as a new version: the record as it
/// was (re-embedded), back even if it was deleted. Answers the record with
/// its new `version`.
pub async fn restore<B: Backend>(store: &Store<B>, ctx: &mut Ctx<'_>, id: &str, body: &[u8]) -> Result<Value> {
    let body: Value = parse_json(body)?;
    let o = body.as_object().ok_or_else(|| Error::invalid("body", "must be an object: {\"version\": n}"))?;
    if let Some(k) = o.keys().find(|k| *k != "version") {
        return Err(Error::invalid(k.as_str(), "is not a field of a restore (only version)"));
    }
    let version = body
        .get("version")
        .and_then(Value::as_u64)
        .and_then(|v| u32::try_from(v).ok())
        .filter(|v| *v >= 1)
        .ok_or_else(|| Error::invalid("version", "is required: a version number from 1"))?;
    let text = store.read(|e| e.longterm().version_body(id, version).map(|r| r.text)).await??;
    let (embedder, vector) = embed_one(store, ctx.services, &text).await?;
    let op = Op::Ltm(LtmOp::Restore { id: id.to_owned(), version, vector, embedder: Some(embedder), actor: Some(ctx.actor.to_owned()) });
    match store.apply(op, ctx.now).await? {
        Applied::Ltm(LtmApplied::Restored { record, version: now_at }) => {
            let mut v = record_json(&record);
            v["version"] = json!(now_at);
            v["restored_from"] = json!(version);
            Ok(v)
        }
        other => Err(Error::Internal { detail: format!("restore returned {other:?}") }),
    }
}

/// Redacts `id`: the record and the text of all its versions go, from
/// memory and from storage (the store treats it as an erasure); the hashes
/// and a receipt stay. Answers the receipt.
pub async fn redact<B: Backend>(store: &Store<B>, ctx: &mut Ctx<'_>, id: &str) -> Result<Value> {
    let op = Op::Ltm(LtmOp::Redact { id: id.to_owned(), actor: Some(ctx.actor.to_owned()) });
    match store.apply(op, ctx.now).await? {
        Applied::Ltm(LtmApplied::Redacted { id, versions, version }) => Ok(json!({
            "status": "ok",
            "id": id,
            "version": version,
            "redacted_versions": versions,
            "redacted_by": ctx.actor,
            "redacted_at": format_rfc3339(ctx.now),
            "erased": { "memories": 1 },
        })),
        other => Err(Error::Internal { detail: format!("redact returned {other:?}") }),
    }
}
