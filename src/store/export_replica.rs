//! A replica in export form (issue 21): a sharded tenant's state, which no
//! one object holds, published to KV as its export streams out of the
//! shards, and read back by [`super::Store::open_published`] a chunk at a
//! time into one volatile store.
//!
//! The layout is a snapshot's (chunks under `snap/{gen}/`, one head record
//! as the commit point), so the sweep that retires an older generation and
//! repairs what a cut publish left works unchanged. The chunks hold the
//! NDJSON export with vectors instead of a snapshot envelope, and the head
//! is an [`ExportHead`] (its own magic, the content's length and CRC-32),
//! because the export is not bounded by [`limits::SNAPSHOT_BYTES_MAX`]:
//! neither the writer nor a chunk of the reader's work holds it whole.

use super::keys::{chunk_key, head_key};
use super::snapshot::{commit_head, next_gen};
use super::{sweep, Backend, StoreConfig, StoreStats};
use crate::core::codec::{self, Crc, ExportHead};
use crate::core::engine::export::ImportReader;
use crate::core::engine::Engine;
use crate::core::error::{Error, Result};
use crate::core::limits;

/// Where a replica in export form comes from: its export, a chunk of
/// whole lines at a time (the first chunk starts with the header line).
#[allow(async_fn_in_trait)] // single-threaded wasm: futures need not be Send
pub trait ExportSource {
    /// The next chunk, `None` after the last.
    async fn next_chunk(&mut self) -> Result<Option<String>>;
}

/// Publishes the export `first` and `source` go on with to `target` under
/// `config.key_prefix`: chunks as the lines come, then the head. Past
/// [`limits::REPLICA_EXPORT_BYTES_MAX`] it stops with `payload_too_large`
/// before the head, so readers keep the generation before; the chunks
/// written are what the next publish's sweep deletes.
pub async fn publish_export<T: Backend>(target: &T, config: &StoreConfig, first: String, source: &mut impl ExportSource) -> Result<StoreStats> {
    config.validate()?;
    let prefix = &config.key_prefix;
    let last_seq = header_last_seq(&first)?;
    // Either form may be current: a snapshot's (one object published
    // before) or an export's.
    let prev = target.get(&head_key(prefix)).await?.and_then(|b| codec::any_head(&b));
    let gen = next_gen(prev)?;
    let chunk_bytes = config.chunk_bytes.min(limits::SNAPSHOT_CHUNK_BYTES_MAX - target.value_overhead_bytes()).max(limits::SNAPSHOT_CHUNK_BYTES_MIN);
    let (mut pending, mut crc, mut bytes, mut chunk_count) = (Vec::with_capacity(chunk_bytes), Crc::default(), 0u64, 0u32);
    let mut next = Some(first);
    while let Some(text) = next {
        bytes += text.len() as u64;
        if bytes > limits::REPLICA_EXPORT_BYTES_MAX as u64 {
            return Err(Error::too_large("replica", usize::try_from(bytes).unwrap_or(usize::MAX), limits::REPLICA_EXPORT_BYTES_MAX));
        }
        crc.update(text.as_bytes());
        let mut rest = text.as_bytes();
        while !rest.is_empty() {
            let take = (chunk_bytes - pending.len()).min(rest.len());
            pending.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if pending.len() == chunk_bytes {
                target.put(&chunk_key(prefix, gen, chunk_count), std::mem::replace(&mut pending, Vec::with_capacity(chunk_bytes))).await?;
                chunk_count += 1;
            }
        }
        next = source.next_chunk().await?;
    }
    if !pending.is_empty() {
        target.put(&chunk_key(prefix, gen, chunk_count), pending).await?;
        chunk_count += 1;
    }
    let head = ExportHead { gen, chunk_count, bytes, last_seq, content_crc: crc.finish() };
    let retired = commit_head(target, prefix, head.as_head(), head.encode(), false).await?;
    // As a snapshot's publish: the retired generation by name, then a probe
    // for what a cut publish left.
    if !retired {
        sweep::retire(target, prefix, prev, head.as_head(), 0).await?;
        if sweep::leftovers(target, prefix, Some(head.as_head()), false).await? {
            sweep::repair(target, prefix, Some(head.as_head()), false).await?;
        }
    }
    Ok(StoreStats { last_seq, log_records_since_snapshot: 0, snapshot_gen: gen, snapshot_bytes: bytes, log_bytes_since_snapshot: 0 })
}

/// The header line's `last_seq` (the state the export covers).
fn header_last_seq(first: &str) -> Result<u64> {
    let line = first.split('\n').next().unwrap_or_default();
    let v: serde_json::Value = serde_json::from_str(line).map_err(|e| Error::Internal { detail: format!("an export's header: {e}") })?;
    v.get("last_seq").and_then(serde_json::Value::as_u64).ok_or_else(|| Error::Internal { detail: "an export's header has no last_seq".into() })
}

/// Reads the replica `head` names into an engine, a chunk at a time (the
/// export is never held whole): every line checked as an import checks
/// it, the content's length and CRC-32 as the head says, every record with
/// its vector. A damaged replica is `snapshot_corrupt`.
pub(super) async fn load<B: Backend>(source: &B, prefix: &str, head: ExportHead) -> Result<Engine> {
    let corrupt = |reason: String| Error::SnapshotCorrupt { reason };
    // An import's input errors are the replica's damage here.
    let damaged = |e: Error| match e {
        e @ (Error::SchemaVersionUnsupported { .. } | Error::SnapshotCorrupt { .. }) => e,
        other => corrupt(format!("export replica: {other}")),
    };
    let mut reader = ImportReader::new(limits::REPLICA_EXPORT_BYTES_MAX);
    let (mut crc, mut bytes, mut tail) = (Crc::default(), 0u64, Vec::new());
    for i in 0..head.chunk_count {
        let chunk = source.get(&chunk_key(prefix, head.gen, i)).await?.ok_or_else(|| corrupt(format!("chunk {i} of generation {} is missing", head.gen)))?;
        bytes += chunk.len() as u64;
        if bytes > head.bytes {
            return Err(corrupt("chunks are longer than the head says".into()));
        }
        crc.update(&chunk);
        tail.extend_from_slice(&chunk);
        // Whole lines only: a line may go on in the next chunk.
        if let Some(cut) = tail.iter().rposition(|&b| b == b'\n') {
            lines(&tail[..cut], &mut reader).map_err(damaged)?;
            tail.drain(..=cut);
        }
    }
    if bytes != head.bytes || crc.finish() != head.content_crc {
        return Err(corrupt(format!("export replica: {bytes} bytes read do not match the head's length or checksum")));
    }
    lines(&tail, &mut reader).map_err(damaged)?;
    let import = reader.finish().map_err(damaged)?;
    if !import.texts_to_embed().is_empty() {
        return Err(corrupt("export replica: records without their vectors".into()));
    }
    let engine = import.into_engine().map_err(damaged)?;
    if engine.last_seq() != head.last_seq {
        return Err(corrupt(format!("head says the replica covers op {} but it covers {}", head.last_seq, engine.last_seq())));
    }
    Ok(engine)
}

fn lines(bytes: &[u8], reader: &mut ImportReader) -> Result<()> {
    let text = std::str::from_utf8(bytes).map_err(|_| Error::invalid("replica", "is not UTF-8"))?;
    text.split('\n').try_for_each(|l| reader.line(l))
}
