//! Export and import of a sharded tenant (issue 21): one file in the open
//! export format, whatever the shard count, in and out.
//!
//! An export asks every shard for its own, one at a time (at most
//! [`limits::SHARD_EXPORT_BYTES_MAX`] together), and merges them
//! ([`export_shard::merge`]): what each shard owns under the map, home's
//! state from home. An import is split by owner ([`export_shard::split`]);
//! every shard first checks its part ([`IMPORT_CHECK_PATH`]: every check
//! an import makes, and, for a part that carries its vectors, that the
//! shard is empty or holds exactly that state), and only then does each
//! import. A shard that fails past its check (storage) leaves the shards
//! before it imported; the same request again imports the rest, a no-op
//! for those.

use serde_json::{json, Value};
use worker::Method;

use super::{Answer, Routed, Sharded};
use crate::core::engine::export_shard::{self, Owners};
use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::shard::{ShardId, ShardMap};

/// A shard's check of its part of an import, before any shard imports.
pub const IMPORT_CHECK_PATH: &str = "/_shard/import-check";
/// Home, given its shards' merged export to publish as one replica.
pub const PUBLISH_PATH: &str = "/_shard/publish";

/// `GET /v1/export` of a sharded tenant (one shard: its export as it is).
pub(super) async fn export(s: &Sharded<'_>, map: &ShardMap, epoch: u64) -> Result<Answer> {
    // One shard holds everything: its export, byte for byte as unsharded.
    if let [only] = map.shards()[..] {
        return s.send(only, &Routed { write: false, ..s.routed(only, epoch, Vec::new()) }, Method::Get, s.forward.url.as_str(), &[]).await;
    }
    Ok(match merged(s, map, epoch, s.forward.url.as_str()).await? {
        Ok(text) => Answer { status: 200, content_type: Some("application/x-ndjson".into()), meter: None, body: text.into_bytes() },
        Err(refused) => refused,
    })
}

/// Every shard's export (`url`, with its query), one at a time, merged
/// into one file; a shard's refusal as it answered.
async fn merged(s: &Sharded<'_>, map: &ShardMap, epoch: u64, url: &str) -> Result<std::result::Result<String, Answer>> {
    let mut texts: Vec<(ShardId, String)> = Vec::new();
    let mut total = 0usize;
    for shard in map.shards() {
        let a = s.send(shard, &Routed { write: false, ..s.routed(shard, epoch, Vec::new()) }, Method::Get, url, &[]).await?;
        if !a.ok() {
            return Ok(Err(a));
        }
        total = total.saturating_add(a.body.len());
        if total > limits::SHARD_EXPORT_BYTES_MAX {
            return Err(Error::too_large("a sharded tenant's export", total, limits::SHARD_EXPORT_BYTES_MAX));
        }
        texts.push((shard, String::from_utf8(a.body).map_err(|_| Error::Internal { detail: format!("shard {shard}'s export is not UTF-8") })?));
    }
    let key = s.privacy()?;
    let parts: Vec<(ShardId, &str)> = texts.iter().map(|(shard, t)| (*shard, t.as_str())).collect();
    Ok(Ok(export_shard::merge(&parts, &Owners { map, key: key.as_ref() })?))
}

/// `POST /v1/snapshots/publish` of a sharded tenant: one replica, the
/// state one object holding every shard's would publish (every shard's
/// export with its vectors, merged, then built and published by home,
/// sealed as home is), so a reader opens it as any replica. A replica is
/// loaded whole by its reader: at most [`limits::SHARD_EXPORT_BYTES_MAX`]
/// of export (`payload_too_large` past it). One shard: passed on.
pub(super) async fn publish(s: &Sharded<'_>, map: &ShardMap, epoch: u64) -> Result<Answer> {
    if let [only] = map.shards()[..] {
        return s.pass(only, &Routed { home: true, ..s.routed(only, epoch, Vec::new()) }).await;
    }
    let origin = s.forward.url.origin().ascii_serialization();
    let text = match merged(s, map, epoch, &format!("{origin}/v1/export?vectors=f32")).await? {
        Ok(text) => text,
        Err(refused) => return Ok(refused),
    };
    let home = Routed { home: true, ..s.routed(0, epoch, Vec::new()) };
    let a = s.send(0, &home, Method::Post, &format!("{origin}{PUBLISH_PATH}"), text.as_bytes()).await?;
    let Some(mut v) = a.json().filter(|_| a.ok()) else { return Ok(a) };
    v["shards"] = json!(map.shards().len());
    Ok(Answer::with_json(200, &v))
}

/// After an erasure (a consent revoke, a redaction) of a sharded tenant
/// that has a replica: the replica is published again, so the right to be
/// forgotten reaches it (its shards do not publish their own parts).
pub(super) async fn republish(s: &Sharded<'_>, map: &ShardMap, epoch: u64) -> Result<()> {
    let Ok(kv) = s.env.kv(super::super::SNAPSHOTS_BINDING) else { return Ok(()) };
    let head = crate::store::head_key(&format!("{}/", s.tenant));
    if kv.get(&head).bytes().await.map_err(|e| Error::storage(format!("KV: {e}")))?.is_none() {
        return Ok(());
    }
    let a = publish(s, map, epoch).await?;
    if a.ok() {
        Ok(())
    } else {
        Err(super::error_from(a.status, &a.json().unwrap_or_default()))
    }
}

/// `POST /v1/import` into a sharded tenant (one shard: as unsharded, the
/// request passed on). Answers as one object does
/// (`{status, imported, sessions, memories, last_seq}`, home's privacy
/// report), the counts summed, and each shard's own answer under `shards`.
pub(super) async fn import(s: &Sharded<'_>, map: &ShardMap, epoch: u64) -> Result<Answer> {
    if let [only] = map.shards()[..] {
        return s.pass(only, &s.routed(only, epoch, Vec::new())).await;
    }
    let text = std::str::from_utf8(&s.forward.body).map_err(|_| Error::invalid("body", "must be UTF-8 NDJSON"))?;
    let key = s.privacy()?;
    let parts = export_shard::split(text, &Owners { map, key: key.as_ref() })?;
    let check = format!("{}{IMPORT_CHECK_PATH}", s.forward.url.origin().ascii_serialization());
    for (shard, part) in &parts {
        let a = s.send(*shard, &Routed { write: false, ..s.routed(*shard, epoch, Vec::new()) }, Method::Post, &check, part.as_bytes()).await?;
        if !a.ok() {
            return Ok(a);
        }
    }
    let mut answers: Vec<(ShardId, Value)> = Vec::with_capacity(parts.len());
    for (shard, part) in &parts {
        let a = s.send(*shard, &s.routed(*shard, epoch, Vec::new()), Method::Post, s.forward.url.as_str(), part.as_bytes()).await?;
        if !a.ok() {
            return Ok(a);
        }
        answers.push((*shard, a.json().unwrap_or_default()));
    }
    let home = answers.iter().find(|(shard, _)| *shard == 0).map(|(_, v)| v.clone()).ok_or_else(|| Error::Internal { detail: "home did not import".into() })?;
    let mut out = home;
    let sum = |field: &str| answers.iter().map(|(_, v)| v[field].as_u64().unwrap_or(0)).sum::<u64>();
    out["sessions"] = json!(sum("sessions"));
    out["memories"] = json!(sum("memories"));
    out["imported"] = json!(answers.iter().any(|(_, v)| v["imported"] == true));
    out["shards"] = Value::Array(answers.iter().map(|(shard, v)| json!({ "shard": shard, "import": v })).collect());
    Ok(Answer::with_json(200, &out))
}
