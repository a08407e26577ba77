//! Recovery: the snapshot named by the head, then the log after it.
//!
//! Every byte is read once. Chunks are read by name (the head says how many);
//! the log is read in key order with [`Backend::get_range`], a page of
//! [`limits::RECOVERY_LOG_PAGE_RECORDS`] at a time, so on Durable Object
//! storage one listing carries the records themselves and none is fetched a
//! second time with `get`. Records the snapshot covers are never read here:
//! they are garbage, and the repair deletes them.

use super::keys::{chunk_key, head_key, log_key, log_prefix, parse_seq, successor};
use super::{sweep, Backend, KeyRange};
use crate::core::codec::Head;
use crate::core::engine::{decode_log_entry, Engine};
use crate::core::feed::{event_of, Ring};
use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::vector::Quantization;

/// What recovery found.
pub(super) struct Recovered {
    pub engine: Engine,
    pub head: Option<Head>,
    /// Log records replayed after the snapshot.
    pub records: u64,
    /// Their encoded bytes.
    pub bytes: u64,
    /// Whether keys no head names are stored (see [`sweep::leftovers`]).
    pub leftovers: bool,
    /// The change-feed events of the replayed records, newest last.
    pub events: Ring,
}

impl Recovered {
    /// A state read whole from elsewhere (a replica in export form).
    pub(super) fn of(engine: Engine) -> Recovered {
        Recovered { engine, head: None, records: 0, bytes: 0, leftovers: false, events: Ring::default() }
    }
}

/// Loads the snapshot named by the head and replays the log after it.
/// Writes nothing, so a refused open leaves the store as it was. With
/// `find_leftovers`, also checks (without reading any value on a clean store)
/// whether a crash left garbage for the next snapshot to repair.
pub(super) async fn recover<B: Backend>(backend: &B, prefix: &str, find_leftovers: bool, quantization: Quantization) -> Result<Recovered> {
    let head = match backend.get(&head_key(prefix)).await? {
        Some(bytes) => Some(Head::decode(&bytes)?),
        None => None,
    };
    let mut engine = match head {
        None => Engine::new(),
        Some(h) => load_snapshot(backend, prefix, h).await?,
    };
    let leftovers = find_leftovers && sweep::leftovers(backend, prefix, head, true).await?;
    engine.set_vector_quantization(quantization);
    let mut events = Ring::default();
    let (records, bytes) = replay(backend, prefix, &mut engine, &mut events).await?;
    Ok(Recovered { engine, head, records, bytes, leftovers, events })
}

/// Replays the log after `engine`'s last op, in order, each record read once.
/// Returns how many records and bytes it replayed.
async fn replay<B: Backend>(backend: &B, prefix: &str, engine: &mut Engine, events: &mut Ring) -> Result<(u64, u64)> {
    let (mut records, mut bytes_total) = (0u64, 0u64);
    // No op can follow the last possible sequence number.
    let Some(first) = engine.last_seq().checked_add(1) else { return Ok((0, 0)) };
    let log = log_prefix(prefix);
    let mut start = log_key(prefix, first);
    loop {
        let range = KeyRange { prefix: &log, start: &start, end: None, limit: limits::RECOVERY_LOG_PAGE_RECORDS };
        let page = backend.get_range(range).await?;
        let full = page.len() >= range.limit;
        for (key, bytes) in page {
            let seq = parse_seq(prefix, &key).ok_or_else(|| Error::LogCorrupt { seq: 0, reason: format!("unexpected key {key:?}") })?;
            // Keys come in order from the first record after the snapshot, so
            // anything but the next sequence number is a gap (or a bad adapter).
            let expected = engine.last_seq().checked_add(1);
            if Some(seq) != expected {
                return Err(Error::LogCorrupt { seq, reason: format!("gap: expected record {}", engine.last_seq().saturating_add(1)) });
            }
            if records >= limits::RECOVERY_LOG_RECORDS_MAX {
                return Err(Error::LogCorrupt {
                    seq,
                    reason: format!("more than {} records to replay is past the limit", limits::RECOVERY_LOG_RECORDS_MAX),
                });
            }
            records += 1;
            bytes_total += bytes.len() as u64;
            let entry = decode_log_entry(seq, &bytes)?;
            engine.apply(&entry.op, entry.now_ms).map_err(|e| Error::LogCorrupt { seq, reason: format!("replay failed: {e}") })?;
            events.push(event_of(seq, &entry));
            start = successor(&key);
        }
        if !full {
            return Ok((records, bytes_total));
        }
    }
}

/// Reads the chunks `head` names, in order, and decodes the snapshot.
async fn load_snapshot<B: Backend>(backend: &B, prefix: &str, h: Head) -> Result<Engine> {
    let mut bytes = Vec::with_capacity(h.snapshot_bytes.min(limits::SNAPSHOT_BYTES_MAX as u64) as usize);
    for i in 0..h.chunk_count {
        let chunk = backend
            .get(&chunk_key(prefix, h.gen, i))
            .await?
            .ok_or_else(|| Error::SnapshotCorrupt { reason: format!("chunk {i} of generation {} is missing", h.gen) })?;
        bytes.extend_from_slice(&chunk);
        if bytes.len() as u64 > h.snapshot_bytes {
            return Err(Error::SnapshotCorrupt { reason: "chunks are longer than the head says".into() });
        }
    }
    let engine = Engine::decode_snapshot(&bytes)?;
    if engine.last_seq() != h.last_seq {
        return Err(Error::SnapshotCorrupt {
            reason: format!("head says the snapshot covers op {} but it covers {}", h.last_seq, engine.last_seq()),
        });
    }
    Ok(engine)
}
