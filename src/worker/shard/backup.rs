//! Export and import of a sharded tenant (issue 21): one file in the open
//! export format, whatever the shard count, in and out.
//!
//! An export streams ([`crate::api::export_stream`]): every shard's head
//! first (a refusal is answered as the shard gave it, before any byte is
//! written), then page after page of each shard's own sessions, records
//! and histories, at most a page held at a time, so its size is not
//! bounded by the front's memory. An error past the first byte (a split
//! flipped the map, a shard failed) cuts the stream, which the file's end
//! line then reports to any importer. An import is split by owner
//! ([`export_shard::split`]); every shard first checks its part
//! ([`IMPORT_CHECK_PATH`]: every check an import makes, and, for a part
//! that carries its vectors, that the shard is empty or holds exactly
//! that state), and only then does each import. A shard that fails past
//! its check (storage) leaves the shards before it imported; the same
//! request again imports the rest, a no-op for those.

use futures_util::future::LocalBoxFuture;
use serde_json::{json, Value};
use worker::{Env, Headers, Method, Response};

use super::{error_from, send_to, w, Answer, Routed, Sharded};
use crate::api::export_stream::{head_ask, ExportAsk, ExportShards, Exporter};
use crate::core::engine::export_shard::{self, Owners};
use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::shard::{ShardId, ShardMap};

/// A shard's check of its part of an import, before any shard imports.
pub const IMPORT_CHECK_PATH: &str = "/_shard/import-check";
/// Home, given its shards' merged export to publish as one replica.
pub const PUBLISH_PATH: &str = "/_shard/publish";
/// A step of a shard's export ([`crate::api::export_stream::ExportAsk`]).
pub const EXPORT_STEP_PATH: &str = "/_shard/export";

/// The tenant's shards as an export asks them: everything owned, since a
/// streamed body outlives the request's borrows.
struct Asker {
    env: Env,
    base: Vec<(String, String)>,
    routed: Routed,
    url: String,
}

impl ExportShards for Asker {
    fn ask<'a>(&'a self, shard: ShardId, ask: &'a ExportAsk) -> LocalBoxFuture<'a, Result<Vec<u8>>> {
        Box::pin(async move {
            let body = serde_json::to_vec(ask).map_err(|e| Error::Internal { detail: e.to_string() })?;
            let a = send_to(&self.env, &self.base, &Routed { shard, ..self.routed.clone() }, shard, Method::Post, &self.url, &body).await?;
            if a.ok() {
                Ok(a.body)
            } else {
                Err(error_from(a.status, &a.json().unwrap_or_default()))
            }
        })
    }
}

/// An export of the shards of `map` whose heads every shard answered
/// (`Err`: the first refusal, as the shard gave it).
async fn exporter(s: &Sharded<'_>, map: &ShardMap, epoch: u64, vectors: bool) -> Result<std::result::Result<(Exporter<Asker>, String), Answer>> {
    let url = format!("{}{EXPORT_STEP_PATH}", s.forward.url.origin().ascii_serialization());
    let routed = Routed { write: false, ..s.routed(0, epoch, Vec::new()) };
    let mut heads = Vec::new();
    for shard in map.shards() {
        let body = serde_json::to_vec(&head_ask(map.buckets_of(shard), vectors)).map_err(|e| Error::Internal { detail: e.to_string() })?;
        let a = s.send(shard, &Routed { shard, ..routed.clone() }, Method::Post, &url, &body).await?;
        if !a.ok() {
            return Ok(Err(a));
        }
        heads.push((shard, a.body));
    }
    let asker = Asker { env: s.env.clone(), base: s.base.clone(), routed, url };
    Ok(Ok(Exporter::new(asker, map, vectors, heads)?))
}

/// What an export answers: a stream, or a shard's refusal before it.
pub(super) enum Exported {
    Stream(Response),
    Refused(Answer),
}

/// `GET /v1/export` of a sharded tenant (one shard: its export as it is).
pub(super) async fn export(s: &Sharded<'_>, map: &ShardMap, epoch: u64) -> Result<Exported> {
    // One shard holds everything: its export, byte for byte as unsharded.
    if let [only] = map.shards()[..] {
        return Ok(Exported::Refused(s.send(only, &Routed { write: false, ..s.routed(only, epoch, Vec::new()) }, Method::Get, s.forward.url.as_str(), &[]).await?));
    }
    let vectors = match s.forward.query.iter().find(|(k, _)| k == "vectors").map(|(_, v)| v.as_str()) {
        None | Some("none") => false,
        Some("f32") => true,
        Some(other) => return Err(Error::InvalidQuery { param: "vectors".into(), reason: format!("f32 or none, got {other:?}") }),
    };
    let (mut ex, first) = match exporter(s, map, epoch, vectors).await? {
        Ok(started) => started,
        Err(refused) => return Ok(Exported::Refused(refused)),
    };
    // A test's small pages (dev mode): many pages from a few records.
    if let Some(items) = super::super::env_string(s.env, "EDGEMEM_TEST_EXPORT_PAGE_ITEMS").filter(|_| s.settings.dev).and_then(|v| v.parse().ok()) {
        ex = ex.page_items(items);
    }
    let body = futures_util::stream::try_unfold((Some(first), ex, s.tenant.clone()), |(first, mut ex, tenant)| async move {
        let chunk = match first {
            Some(first) => Some(first),
            None => ex.next_chunk().await.map_err(|e| {
                worker::console_error!("edgemem: the export of {tenant} was cut: {e}");
                worker::Error::RustError(format!("the export was cut: {e}"))
            })?,
        };
        Ok::<_, worker::Error>(chunk.map(|c| (c.into_bytes(), (None, ex, tenant))))
    });
    let h = Headers::new();
    h.set("content-type", "application/x-ndjson").map_err(w)?;
    h.set("cache-control", "no-store").map_err(w)?;
    Ok(Exported::Stream(Response::from_stream(body).map_err(w)?.with_headers(h)))
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
    let text = match exporter(s, map, epoch, true).await? {
        Ok((ex, first)) => ex.collect(first, limits::SHARD_EXPORT_BYTES_MAX).await?,
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
