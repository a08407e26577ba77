//! Export and import of a sharded tenant (issue 21): one file in the open
//! export format, whatever the shard count, in and out.
//!
//! An export streams ([`crate::api::export_stream`]): every shard's head
//! first (a refusal is answered as the shard gave it, before any byte is
//! written), then page after page of each shard's own sessions, records
//! and histories, at most a page held at a time, so its size is not
//! bounded by the front's memory. An error past the first byte (a split
//! flipped the map, a shard failed) cuts the stream, which the file's end
//! line then reports to any importer. An import is split by owner as it
//! streams in ([`Splitter`]), each shard's part staged in its database;
//! every shard first checks its part
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
use crate::core::auth::parse_encryption_key;
use crate::core::engine::export_shard::{Owners, Splitter};
use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::shard::{ShardId, ShardMap};

/// A shard's check of its part of an import, before any shard imports.
pub const IMPORT_CHECK_PATH: &str = "/_shard/import-check";
/// A step of a shard's export ([`crate::api::export_stream::ExportAsk`]).
pub const EXPORT_STEP_PATH: &str = "/_shard/export";
/// A chunk of an import's part staged in its shard (`?import=ID&seq=N`).
pub const IMPORT_STAGE_PATH: &str = "/_shard/import-stage";
/// On a check or an import: the staged part it reads, `ID:CHUNKS`.
pub const IMPORT_STAGED_HEADER: &str = "x-edgemem-import-staged";

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
/// state one object holding every shard's would hold, in export form (the
/// export with its vectors, written to KV a chunk at a time as it streams
/// out of the shards, so no object holds the tenant whole), sealed under
/// the request's key, which `Memory.openPublished` reads into one memory.
/// One shard: passed on (a snapshot, as unsharded).
pub(super) async fn publish(s: &Sharded<'_>, map: &ShardMap, epoch: u64) -> Result<Answer> {
    if let [only] = map.shards()[..] {
        return s.pass(only, &Routed { home: true, ..s.routed(only, epoch, Vec::new()) }).await;
    }
    // Every shard checks the key against its own when it answers its head,
    // so a replica is sealed under the key its tenant is sealed under.
    let key = match super::super::crypt::key_in(&s.base) {
        Some(v) => Some(parse_encryption_key(v)?),
        None => None,
    };
    let (mut ex, first) = match exporter(s, map, epoch, true).await? {
        Ok(started) => started,
        Err(refused) => return Ok(refused),
    };
    let mut v = super::super::publish::publish_export(s.env, &s.tenant, key.as_ref(), first, &mut ex).await?;
    v["shards"] = json!(map.shards().len());
    v["form"] = json!("export");
    Ok(Answer::with_json(200, &v))
}

/// After an erasure (a consent revoke, a redaction) of a sharded tenant
/// that has a replica: the replica is published again, so the right to be
/// forgotten reaches it.
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
/// request passed on, its body read whole). Answers as one object does
/// (`{status, imported, sessions, memories, last_seq}`, home's privacy
/// report), the counts summed, and each shard's own answer under `shards`.
///
/// The body is read as it comes (`body`: its chunks) and each line sent to
/// the shards that get it ([`Splitter`]), staged in each shard's database
/// a chunk at a time ([`IMPORT_STAGE_PATH`]), so a file past
/// [`limits::IMPORT_BYTES_MAX`] imports as long as no shard's part is past
/// it. Then every shard checks its staged part, and only then does each
/// import it. A split that flips the map meanwhile is answered
/// `shard_moved`: import again.
pub(super) async fn import<S>(s: &Sharded<'_>, map: &ShardMap, epoch: u64, mut body: S) -> Result<Answer>
where
    S: futures_util::Stream<Item = std::result::Result<Vec<u8>, worker::Error>> + Unpin,
{
    use futures_util::StreamExt;
    if let [only] = map.shards()[..] {
        let mut whole = Vec::new();
        while let Some(chunk) = body.next().await {
            whole.extend(chunk.map_err(w)?);
            if whole.len() > limits::IMPORT_BYTES_MAX {
                return Err(Error::too_large("import", whole.len(), limits::IMPORT_BYTES_MAX));
            }
        }
        let f = &s.forward;
        let a = s.send(only, &s.routed(only, epoch, Vec::new()), f.method.clone(), f.url.as_str(), &whole).await?;
        // The body is read: the front cannot send it again.
        if a.moved() {
            return Err(error_from(a.status, &a.json().unwrap_or_default()));
        }
        return Ok(a);
    }
    let key = s.privacy()?;
    let owners = Owners { map, key: key.as_ref() };
    let mut splitter = Splitter::new(&owners);
    let id: String = super::super::random_bits().iter().map(|b| format!("{b:02x}")).collect();
    let origin = s.forward.url.origin().ascii_serialization();
    let mut staging = Staging { s, epoch, id: &id, url: format!("{origin}{IMPORT_STAGE_PATH}"), parts: map.shards().into_iter().map(|shard| (shard, Vec::new(), 0)).collect(), chunk_bytes: chunk_bytes(s), records: Vec::new() };
    // Lines are cut at newlines in the bytes, so a character split across
    // two chunks of the body is whole in its line.
    let (mut pending, mut n, mut total) = (Vec::<u8>::new(), 0usize, 0usize);
    loop {
        let chunk = body.next().await.transpose().map_err(w)?;
        let last = chunk.is_none();
        if let Some(c) = chunk {
            total = total.saturating_add(c.len());
            if total > limits::SHARD_IMPORT_BYTES_MAX {
                return Err(Error::too_large("import", total, limits::SHARD_IMPORT_BYTES_MAX));
            }
            pending.extend(c);
        }
        // The whole lines read so far: up to the last newline (left out, so
        // no empty line is counted after it), or all that is left at the end.
        let newline = pending.iter().rposition(|&b| b == b'\n');
        let (lines, cut) = match (last, newline) {
            (true, _) => (pending.len(), pending.len()),
            (false, Some(i)) => (i, i + 1),
            (false, None) if pending.len() > limits::IMPORT_BYTES_MAX => return Err(Error::too_large("one line of an import", pending.len(), limits::IMPORT_BYTES_MAX)),
            (false, None) => continue,
        };
        for line in pending[..lines].split(|&b| b == b'\n') {
            n += 1;
            let text = std::str::from_utf8(line).map_err(|_| Error::invalid(format!("line {n}"), "must be UTF-8"))?;
            for (shard, l) in splitter.line(n, text)? {
                staging.add(shard, &l).await?;
            }
            staging.found(splitter.take_records(), false).await?;
        }
        pending.drain(..cut);
        if last {
            break;
        }
    }
    for (shard, l) in splitter.finish()? {
        staging.add(shard, &l).await?;
    }
    staging.found(Vec::new(), true).await?;
    let chunks = staging.flush_all().await?;
    let staged = |shard: ShardId| (IMPORT_STAGED_HEADER.to_owned(), format!("{id}:{}", chunks.iter().find(|(s, _)| *s == shard).map_or(0, |(_, c)| *c)));
    let check = format!("{origin}{IMPORT_CHECK_PATH}");
    for shard in map.shards() {
        let a = staging.send(shard, false, &check, staged(shard)).await?;
        if !a.ok() {
            return Ok(a);
        }
    }
    let mut answers: Vec<(ShardId, Value)> = Vec::new();
    for shard in map.shards() {
        let a = staging.send(shard, true, s.forward.url.as_str(), staged(shard)).await?;
        if !a.ok() {
            return Ok(a);
        }
        answers.push((shard, a.json().unwrap_or_default()));
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

/// Bytes of lines a shard's staged chunk holds at most: the limit, or a
/// test's small chunks (dev mode, `EDGEMEM_TEST_IMPORT_CHUNK_BYTES`).
fn chunk_bytes(s: &Sharded<'_>) -> usize {
    let test = super::super::env_string(s.env, "EDGEMEM_TEST_IMPORT_CHUNK_BYTES").filter(|_| s.settings.dev).and_then(|v| v.parse().ok());
    test.unwrap_or(limits::SHARD_IMPORT_CHUNK_BYTES).clamp(1, limits::SHARD_IMPORT_CHUNK_BYTES)
}

/// Each shard's lines of an import on their way to its staging: at most a
/// chunk held per shard.
struct Staging<'a, 'b> {
    s: &'a Sharded<'b>,
    epoch: u64,
    id: &'a str,
    url: String,
    /// Each shard, its lines not yet sent, and the chunks it was sent.
    parts: Vec<(ShardId, Vec<u8>, u64)>,
    chunk_bytes: usize,
    /// Records read and not yet in the id directory, with their buckets.
    records: Vec<(String, crate::core::shard::Bucket)>,
}

impl Staging<'_, '_> {
    async fn add(&mut self, shard: ShardId, line: &str) -> Result<()> {
        let i = self.parts.iter().position(|(s, _, _)| *s == shard).ok_or_else(|| Error::Internal { detail: format!("shard {shard} is not in the map") })?;
        self.parts[i].1.extend_from_slice(line.as_bytes());
        self.parts[i].1.push(b'\n');
        if self.parts[i].1.len() >= self.chunk_bytes {
            self.flush(i).await?;
        }
        Ok(())
    }

    async fn flush(&mut self, i: usize) -> Result<()> {
        let (shard, chunk, seq) = (self.parts[i].0, std::mem::take(&mut self.parts[i].1), self.parts[i].2);
        let url = format!("{}?import={}&seq={seq}", self.url, self.id);
        let routed = Routed { write: false, ..self.s.routed(shard, self.epoch, Vec::new()) };
        let a = self.s.send(shard, &routed, Method::Post, &url, &chunk).await?;
        if !a.ok() {
            return Err(error_from(a.status, &a.json().unwrap_or_default()));
        }
        self.parts[i].2 += 1;
        Ok(())
    }

    /// Records read (`found`), entered in the id directory by the batch
    /// (all of them when `last`) before any shard imports, so each is
    /// found by id in its bucket's shard, as a created record is.
    async fn found(&mut self, found: Vec<(String, crate::core::shard::Bucket)>, last: bool) -> Result<()> {
        self.records.extend(found);
        if self.s.tenant == super::super::DEFAULT_NAMESPACE || (!last && self.records.len() < limits::LTM_CREATE_BATCH_MAX) {
            return Ok(());
        }
        for batch in std::mem::take(&mut self.records).chunks(limits::LTM_CREATE_BATCH_MAX) {
            let (ids, buckets): (Vec<String>, Vec<_>) = batch.iter().cloned().unzip();
            super::super::routing::register(self.s.env, &self.s.tenant, &ids, Some(&buckets), self.s.now).await?;
        }
        Ok(())
    }

    /// Sends what is left; answers each shard's chunk count.
    async fn flush_all(&mut self) -> Result<Vec<(ShardId, u64)>> {
        for i in 0..self.parts.len() {
            if !self.parts[i].1.is_empty() {
                self.flush(i).await?;
            }
        }
        Ok(self.parts.iter().map(|(s, _, n)| (*s, *n)).collect())
    }

    /// A step of the staged import at `shard` (`write`: the import itself).
    async fn send(&self, shard: ShardId, write: bool, url: &str, staged: (String, String)) -> Result<Answer> {
        let mut base = self.s.base.clone();
        base.push(staged);
        let routed = Routed { write, ..self.s.routed(shard, self.epoch, Vec::new()) };
        let a = send_to(self.s.env, &base, &routed, shard, Method::Post, url, &[]).await?;
        if a.moved() {
            return Err(error_from(a.status, &a.json().unwrap_or_default()));
        }
        Ok(a)
    }
}
