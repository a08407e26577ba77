//! Writing a snapshot: chunks first, then the head (the commit point),
//! then retiring what it covers; and the rewrite that an erasure needs on
//! backends whose deletes leave bytes behind.

use super::{keys, sweep, Backend, Inner, KeyRange, StoreConfig};
use crate::core::codec::{self, Head};
use crate::core::error::{Error, Result};
use crate::core::limits;

impl<B: Backend> Inner<B> {
    /// Rewrites the backend with only the current snapshot (head and
    /// chunks), for backends whose deletes leave bytes behind. A failure
    /// poisons the store, which then reloads from what storage holds.
    pub(super) async fn rewrite_storage(&mut self) -> Result<()> {
        let prefix = self.config.key_prefix.clone();
        let head = self.head.ok_or_else(|| Error::Internal { detail: "no head after a snapshot".into() })?;
        let mut entries = Vec::with_capacity(head.chunk_count as usize + 1);
        for i in 0..head.chunk_count {
            let key = keys::chunk_key(&prefix, head.gen, i);
            let value = self.backend.get(&key).await?.ok_or_else(|| Error::storage(format!("chunk {i} of the new snapshot is missing")))?;
            entries.push((key, value));
        }
        entries.push((keys::head_key(&prefix), head.encode()));
        if let Err(e) = self.backend.replace_all(entries).await {
            self.poisoned = true;
            return Err(e);
        }
        Ok(())
    }

    pub(super) async fn snapshot(&mut self) -> Result<()> {
        let bytes = self.engine.encode_snapshot()?;
        let prev = self.head;
        let head = Head { gen: next_gen(prev)?, chunk_count: 0, snapshot_bytes: bytes.len() as u64, last_seq: self.engine.last_seq() };
        let (head, retired) = match write_snapshot(&self.backend, &self.config, head, &bytes, true).await {
            Ok(done) => done,
            Err(SnapshotWriteError::Chunks(e)) => {
                // Some chunks of the unborn generation may be stored; a
                // later, shorter snapshot would not overwrite them all.
                self.repair_due = true;
                return Err(e);
            }
            Err(SnapshotWriteError::Head(e)) => {
                // The head put may or may not have landed: reload before
                // serving (recovery then looks for leftovers either way).
                self.poisoned = true;
                return Err(e);
            }
        };
        // Free the encoding before the sweep, which may read a repair page.
        drop(bytes);
        // The log is contiguous up to the new head, so these are exactly the
        // records it covers.
        let covered = self.log_records_since_snapshot;
        self.head = Some(head);
        self.log_records_since_snapshot = 0;
        self.log_bytes_since_snapshot = 0;
        let prefix = &self.config.key_prefix;
        let swept = if retired {
            // The head's commit deleted every key outside the live state.
            Ok(true)
        } else if self.repair_due {
            sweep::repair(&self.backend, prefix, Some(head), true).await
        } else {
            sweep::retire(&self.backend, prefix, prev, head, covered).await.map(|()| true)
        };
        // The snapshot is committed whatever the deletes did: a failed or
        // unfinished sweep only leaves garbage, which the next one repairs.
        self.repair_due = !matches!(swept, Ok(true));
        Ok(())
    }
}


/// Which write of a snapshot failed: before the commit point nothing visible
/// changed; at the commit point the outcome is unknown.
pub(super) enum SnapshotWriteError {
    Chunks(Error),
    Head(Error),
}

/// The generation after `prev` (generations start at 1).
pub(super) fn next_gen(prev: Option<Head>) -> Result<u64> {
    match prev {
        None => Ok(1),
        Some(h) => h.gen.checked_add(1).ok_or_else(|| Error::SnapshotCorrupt { reason: "the head's generation cannot grow".into() }),
    }
}

/// Writes the chunks of `bytes`, then the head (the commit point). On a
/// backend with transactions the head's commit also deletes everything
/// outside the new live state (and the log after it, if `with_log`):
/// answers whether it did.
pub(super) async fn write_snapshot<B: Backend>(backend: &B, config: &StoreConfig, mut head: Head, bytes: &[u8], with_log: bool) -> std::result::Result<(Head, bool), SnapshotWriteError> {
    let prefix = &config.key_prefix;
    let chunk_bytes = config.chunk_bytes.min(limits::SNAPSHOT_CHUNK_BYTES_MAX - backend.value_overhead_bytes()).max(limits::SNAPSHOT_CHUNK_BYTES_MIN);
    for (i, chunk) in codec::chunks(bytes, chunk_bytes).enumerate() {
        backend.put(&keys::chunk_key(prefix, head.gen, i as u32), chunk.to_vec()).await.map_err(SnapshotWriteError::Chunks)?;
        head.chunk_count += 1;
    }
    let retired = commit_head(backend, prefix, head, head.encode(), with_log).await.map_err(SnapshotWriteError::Head)?;
    Ok((head, retired))
}

/// Writes the head record `encoded` (naming the chunks `head` names): on a
/// backend with transactions in one commit with the deletion of everything
/// outside the new live state (and the log after it, if `with_log`),
/// answering whether it did.
pub(super) async fn commit_head<B: Backend>(backend: &B, prefix: &str, head: Head, encoded: Vec<u8>, with_log: bool) -> Result<bool> {
    let garbage = sweep::garbage(prefix, Some(head), with_log);
    let retire: Vec<KeyRange<'_>> = garbage.iter().map(|g| g.range(&g.start, usize::MAX)).collect();
    if backend.commit_head(&keys::head_key(prefix), &encoded, &retire).await? {
        return Ok(true);
    }
    backend.put(&keys::head_key(prefix), encoded).await?;
    Ok(false)
}
