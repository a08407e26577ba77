//! Deleting what a committed snapshot made unreachable.
//!
//! The hot path lists nothing. The keys one snapshot retires follow from the
//! previous head (its generation and chunk count) and from the log records
//! written since it (a contiguous run of sequence numbers ending at the new
//! head's last op), so [`retire`] deletes them by name and reads no byte.
//! This matters on Durable Object storage, whose `list()` returns every value
//! it lists: listing `snap/` after each snapshot would read the live snapshot
//! back into the isolate while its encoding is still alive.
//!
//! A crash or a failed delete can leave keys that no head names: an older
//! generation, chunks of a snapshot whose head never landed, covered log
//! records. [`leftovers`] finds them with one-key listings of the ranges that
//! may hold garbage (empty, hence free, on a clean store), and [`repair`]
//! deletes them a bounded page at a time. Neither ever lists the live
//! snapshot or the live log.

use super::keys::{chunk_key, gen_prefix, log_key, log_prefix, snap_prefix, successor};
use super::{Backend, KeyRange};
use crate::core::codec::Head;
use crate::core::error::Result;
use crate::core::limits;

/// Keys per delete call (Durable Object storage takes at most 128).
const DELETE_BATCH_KEYS: usize = limits::DELETE_BATCH_KEYS_MAX;

/// Deletes, by name, what committing `head` retired: the chunks of `prev`
/// and the `log_records` records up to `head.last_seq`, which the new
/// snapshot covers. Reads and lists nothing.
pub(super) async fn retire<B: Backend>(backend: &B, prefix: &str, prev: Option<Head>, head: Head, log_records: u64) -> Result<()> {
    // A previous head of the same generation would name the live chunks.
    if let Some(prev) = prev.filter(|p| p.gen != head.gen) {
        let keys: Vec<String> = (0..prev.chunk_count).map(|i| chunk_key(prefix, prev.gen, i)).collect();
        for batch in keys.chunks(DELETE_BATCH_KEYS) {
            backend.delete(batch).await?;
        }
    }
    // Built a batch at a time: a long log never becomes one huge key list.
    let mut seq = head.last_seq.saturating_sub(log_records).saturating_add(1);
    while seq <= head.last_seq {
        let end = seq.saturating_add(DELETE_BATCH_KEYS as u64 - 1).min(head.last_seq);
        let batch: Vec<String> = (seq..=end).map(|s| log_key(prefix, s)).collect();
        backend.delete(&batch).await?;
        if end == u64::MAX {
            break;
        }
        seq = end + 1;
    }
    Ok(())
}

/// A range of keys that only garbage can occupy while `head` is current.
pub(super) struct Garbage {
    prefix: String,
    pub(super) start: String,
    end: Option<String>,
}

impl Garbage {
    pub(super) fn range<'a>(&'a self, start: &'a str, limit: usize) -> KeyRange<'a> {
        KeyRange { prefix: &self.prefix, start, end: self.end.as_deref(), limit }
    }
}

/// The ranges outside the live snapshot of `head` and, if `with_log`, outside
/// the log after it. Together they cover every stale key the store could
/// have written, and none of them holds a live key.
pub(super) fn garbage(prefix: &str, head: Option<Head>, with_log: bool) -> Vec<Garbage> {
    let snap = snap_prefix(prefix);
    let mut ranges = match head {
        // No snapshot was ever committed: any chunk is an orphan.
        None => vec![Garbage { prefix: snap, start: String::new(), end: None }],
        Some(h) => {
            let live = gen_prefix(prefix, h.gen);
            let after_live = match h.chunk_count.checked_sub(1) {
                Some(last) => successor(&chunk_key(prefix, h.gen, last)),
                None => live.clone(),
            };
            vec![
                // Older generations sort before the live one.
                Garbage { prefix: snap.clone(), start: String::new(), end: Some(live) },
                // Chunks past the live count (a longer snapshot whose head
                // never landed) and newer generations sort after it.
                Garbage { prefix: snap, start: after_live, end: None },
            ]
        }
    };
    if with_log {
        let last_seq = head.map_or(0, |h| h.last_seq);
        let end = last_seq.checked_add(1).map(|next| log_key(prefix, next));
        ranges.push(Garbage { prefix: log_prefix(prefix), start: String::new(), end });
    }
    ranges
}

/// Whether any garbage is stored: at most one key per range, and no key at
/// all on a clean store, so on Durable Object storage this reads no value.
pub(super) async fn leftovers<B: Backend>(backend: &B, prefix: &str, head: Option<Head>, with_log: bool) -> Result<bool> {
    for g in garbage(prefix, head, with_log) {
        let range = g.range(&g.start, 1);
        if backend.list(range).await?.iter().any(|k| range.contains(k)) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Deletes garbage a page of [`limits::STORE_REPAIR_PAGE_KEYS`] at a time,
/// at most [`limits::STORE_REPAIR_KEYS_MAX`] keys in all. `Ok(true)` once
/// nothing is left; `Ok(false)` if the bound stopped it, and the next repair
/// goes on.
pub(super) async fn repair<B: Backend>(backend: &B, prefix: &str, head: Option<Head>, with_log: bool) -> Result<bool> {
    let mut budget = limits::STORE_REPAIR_KEYS_MAX;
    for g in garbage(prefix, head, with_log) {
        let mut start = g.start.clone();
        loop {
            if budget == 0 {
                return Ok(false);
            }
            let range = g.range(&start, limits::STORE_REPAIR_PAGE_KEYS.min(budget));
            // Only keys inside the range are deleted, whatever an adapter
            // returns: a live key is never at risk.
            let mut keys: Vec<String> = backend.list(range).await?.into_iter().filter(|k| range.contains(k)).collect();
            keys.sort_unstable();
            keys.truncate(range.limit);
            let Some(last) = keys.last() else { break };
            // Go on after the last key rather than from the start again, so a
            // listing that still shows deleted keys (KV is eventually
            // consistent) cannot spin.
            start = successor(last);
            budget -= keys.len();
            backend.delete(&keys).await?;
        }
    }
    Ok(true)
}
