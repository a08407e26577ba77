//! Durable state: an [`Engine`] behind an append-only op log plus periodic
//! snapshots, on any [`Backend`] that can move bytes.
//!
//! Key layout inside a backend (all under [`StoreConfig::key_prefix`]):
//!
//! | key | value |
//! |---|---|
//! | `head` | [`Head`]: current snapshot generation and the last op it covers |
//! | `snap/{gen:016x}/{chunk:08x}` | snapshot chunks, each ≤ the chunk size |
//! | `log/{seq:016x}` | one op-log record |
//!
//! Every write is a single-key put, so the protocol is crash-safe on any
//! backend, including a user's plain key-value object:
//!
//! * an op is acknowledged only after its log record's `put` resolved;
//! * a snapshot writes all its chunks first, then swaps `head` (the commit
//!   point), then deletes the previous generation's chunks and the log
//!   records it covers, by name (see [`sweep`]): the hot path lists nothing.
//!   A crash at any step leaves either the old or the new snapshot current;
//!   opening finds any leftovers with listings that are empty on a clean
//!   store, and the next snapshot deletes them, a bounded page at a time.
//!   A backend with transactions (Durable Object SQL) commits the head swap
//!   and the range deletes of everything it retires at once
//!   ([`Backend::commit_head`]), so it never holds retired keys.
//!
//! Mutations are serialized by an async mutex, so concurrent JS calls never
//! interleave their log writes. If a write fails, the in-memory state may be
//! ahead of storage; the store is marked poisoned and reloads from storage
//! before serving anything else.

mod backend;
mod flights;
mod export_replica;
mod keys;
mod memory;
mod recover;
mod rotate;
mod sealed;
mod snapshot;
mod sweep;
#[cfg(test)]
mod test_cipher;

pub use backend::{get_each, Backend, Durability, KeyRange};
pub use flights::{Flights, Leader, Turn};
pub use memory::MemoryBackend;
pub use export_replica::{publish_export, ExportSource};
pub use rotate::{publish_export_sealed, Rotation};
pub use sealed::{validate_key_id, Cipher, Header as CryptHeader, Kdf, Key, Sealed};
#[cfg(test)]
pub(crate) use test_cipher::TestCipher;

/// The key of the head record under `prefix` (whether a store or a
/// published replica exists there).
pub fn head_key(prefix: &str) -> String {
    keys::head_key(prefix)
}

use std::cell::RefCell;
use std::future::Future;

use futures_util::lock::Mutex;

use crate::core::codec::Head;
use snapshot::{next_gen, write_snapshot, SnapshotWriteError};
use crate::core::engine::{encode_log_entry, Applied, Engine, LogEntry, Op};
use crate::core::feed::{event_of, FeedEvent, FeedPage, Interest, Ring};
use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::privacy::{PseudonymKey, Scrubbed, Scrubber};
use crate::core::time::Millis;
pub use crate::core::vector::Quantization;

/// Configuration of a [`Store`], with documented defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreConfig {
    /// Fewest log records between snapshots. Default
    /// [`limits::SNAPSHOT_EVERY_OPS_DEFAULT`]; at most
    /// [`limits::SNAPSHOT_EVERY_OPS_MAX`]. A snapshot also waits until the log
    /// written since the last one is at least half that snapshot's size, so
    /// snapshotting a large state costs O(1) amortized per logged byte; a
    /// log of [`limits::SNAPSHOT_EVERY_OPS_MAX`] records forces one, which
    /// bounds recovery work.
    pub snapshot_every_ops: u64,
    /// Snapshot chunk size. Default [`limits::SNAPSHOT_CHUNK_BYTES_DEFAULT`];
    /// between [`limits::SNAPSHOT_CHUNK_BYTES_MIN`] and
    /// [`limits::SNAPSHOT_CHUNK_BYTES_MAX`].
    pub chunk_bytes: usize,
    /// Prefix of every key, so several stores can share one backend.
    /// Default empty; at most [`limits::ID_BYTES_MAX`] bytes.
    pub key_prefix: String,
    /// How a long-term vector index made from now on stores its rows.
    /// Default [`Quantization::None`] (f32); an existing index keeps its
    /// own. Set before the log is replayed, so a restart builds what the
    /// live store built.
    pub vector_quantization: Quantization,
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig {
            snapshot_every_ops: limits::SNAPSHOT_EVERY_OPS_DEFAULT,
            chunk_bytes: limits::SNAPSHOT_CHUNK_BYTES_DEFAULT,
            key_prefix: String::new(),
            vector_quantization: Quantization::None,
        }
    }
}

impl StoreConfig {
    /// Checks the configuration against the limits.
    pub fn validate(&self) -> Result<()> {
        if self.snapshot_every_ops == 0 || self.snapshot_every_ops > limits::SNAPSHOT_EVERY_OPS_MAX {
            return Err(Error::invalid("snapshot_every_ops", format!("must be 1 to {}", limits::SNAPSHOT_EVERY_OPS_MAX)));
        }
        if !(limits::SNAPSHOT_CHUNK_BYTES_MIN..=limits::SNAPSHOT_CHUNK_BYTES_MAX).contains(&self.chunk_bytes) {
            return Err(Error::invalid(
                "chunk_bytes",
                format!("must be {} to {}", limits::SNAPSHOT_CHUNK_BYTES_MIN, limits::SNAPSHOT_CHUNK_BYTES_MAX),
            ));
        }
        if self.key_prefix.len() > limits::ID_BYTES_MAX {
            return Err(Error::too_large("key_prefix", self.key_prefix.len(), limits::ID_BYTES_MAX));
        }
        Ok(())
    }
}

/// Counters describing a store, for tests, the demo page and `/v1/health`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreStats {
    pub last_seq: u64,
    pub log_records_since_snapshot: u64,
    pub snapshot_gen: u64,
    pub snapshot_bytes: u64,
    /// Op-log bytes written since that snapshot.
    pub log_bytes_since_snapshot: u64,
}

/// An engine made durable on a backend.
pub struct Store<B: Backend> {
    inner: Mutex<Inner<B>>,
    counters: Counters,
    /// Told of each change once its log record is durable (the host's
    /// broadcast: npm subscribers, the Durable Object's sockets).
    listener: RefCell<Option<Listener>>,
    /// Upstream reads in flight (the service-state cache's single-flight).
    flights: Flights,
    /// The deployment's privacy key for this tenant: held in memory only,
    /// never written to the backend.
    privacy_key: RefCell<Option<PseudonymKey>>,
}

/// A change-feed listener. It runs while the store is locked, so it must
/// not call back into the store synchronously (queue, then deliver).
pub type Listener = Box<dyn Fn(&FeedEvent)>;

/// Counters that are not state: they start at zero with each process.
#[derive(Debug, Default)]
pub struct Counters {
    tool_cache_hits: std::cell::Cell<u64>,
    tool_cache_misses: std::cell::Cell<u64>,
    extraction_retries: RefCell<crate::core::extract::Retries>,
}

impl Counters {
    /// Failed extraction passes awaiting a retry.
    pub fn extraction_retries(&self) -> std::cell::RefMut<'_, crate::core::extract::Retries> {
        self.extraction_retries.borrow_mut()
    }

    /// Counts one tool-cache lookup.
    pub fn tool_cache(&self, hit: bool) {
        let c = if hit { &self.tool_cache_hits } else { &self.tool_cache_misses };
        c.set(c.get().saturating_add(1));
    }

    /// (hits, misses) since the store was opened.
    pub fn tool_cache_counts(&self) -> (u64, u64) {
        (self.tool_cache_hits.get(), self.tool_cache_misses.get())
    }
}

struct Inner<B: Backend> {
    backend: B,
    config: StoreConfig,
    engine: Engine,
    head: Option<Head>,
    log_records_since_snapshot: u64,
    log_bytes_since_snapshot: u64,
    /// After a failed snapshot (for example a state past
    /// [`limits::SNAPSHOT_BYTES_MAX`]), no retry before the log holds this
    /// many records, so a failing snapshot never costs O(state) per op.
    snapshot_retry_at_records: u64,
    /// Keys that no head names may be stored (found at recovery, or left by
    /// a failed write or delete): the next snapshot repairs instead of only
    /// deleting what it retired.
    repair_due: bool,
    poisoned: bool,
    /// Recent change-feed events, for resumes.
    events: Ring,
}

impl<B: Backend> Store<B> {
    /// Opens a store: loads the current snapshot (migrating older schemas),
    /// replays the log after it, and refuses corrupt or newer-schema data
    /// with a typed error.
    pub async fn open(backend: B, config: StoreConfig) -> Result<Store<B>> {
        config.validate()?;
        if backend.durability() != Durability::Strong {
            return Err(Error::StoreUnsuitable {
                detail: "an eventually consistent backend (Workers KV) can hold published snapshots, not the op log".into(),
            });
        }
        let found = recover::recover(&backend, &config.key_prefix, true, config.vector_quantization).await?;
        let inner = Inner {
            backend,
            config,
            engine: found.engine,
            head: found.head,
            log_records_since_snapshot: found.records,
            log_bytes_since_snapshot: found.bytes,
            snapshot_retry_at_records: 0,
            repair_due: found.leftovers,
            poisoned: false,
            events: found.events,
        };
        Ok(Store { inner: Mutex::new(inner), counters: Counters::default(), listener: RefCell::new(None), flights: Flights::default(), privacy_key: RefCell::new(None) })
    }

    /// Applies `op` at `now` and resolves once its log record is durable.
    /// On any error the state is as if the op was never submitted.
    pub async fn apply(&self, op: Op, now: Millis) -> Result<Applied> {
        self.apply_reporting(op, now).await.map(|(applied, _)| applied)
    }

    /// Sets the privacy key (derived for this tenant) that pseudonymizes
    /// personal data and seals user ids; `None` uses typed placeholders and
    /// keeps user ids as given.
    pub fn set_privacy_key(&self, key: Option<PseudonymKey>) {
        *self.privacy_key.borrow_mut() = key;
    }

    /// Runs `f` with the privacy key, if one is set.
    pub fn with_privacy_key<R>(&self, f: impl FnOnce(Option<&PseudonymKey>) -> R) -> R {
        f(self.privacy_key.borrow().as_ref())
    }

    /// Runs `f` with a scrubber under the current policy, answering what it
    /// replaced: for writes that are not ops (an import).
    pub async fn scrub_with(&self, f: impl FnOnce(&mut Scrubber<'_>) -> Result<()>) -> Result<Scrubbed> {
        let inner = self.inner.lock().await;
        let privacy = inner.engine.privacy();
        self.with_privacy_key(|key| {
            let mut s = Scrubber::new(&privacy.policy, key).with_consent(privacy);
            f(&mut s)?;
            Ok(s.finish())
        })
    }

    /// Scrubs `op` in place under the current policy (see
    /// [`crate::core::privacy::scrub`]) without applying it: for callers
    /// that derive more from the scrubbed text (embeddings) before the
    /// write. Scrubbing is idempotent, so the apply's own pass finds nothing.
    pub async fn scrub(&self, op: &mut Op) -> Result<Scrubbed> {
        let inner = self.inner.lock().await;
        let privacy = inner.engine.privacy();
        self.with_privacy_key(|key| Scrubber::new(&privacy.policy, key).with_consent(privacy).op(op))
    }

    /// [`Store::apply`], answering also what the privacy scrub replaced.
    pub async fn apply_reporting(&self, mut op: Op, now: Millis) -> Result<(Applied, Scrubbed)> {
        let mut inner = self.inner.lock().await;
        inner.heal().await?;
        // Before the log record is encoded: nothing a scrub removes is ever
        // written, not even to the log.
        let privacy = inner.engine.privacy();
        let scrubbed = self.with_privacy_key(|key| Scrubber::new(&privacy.policy, key).with_consent(privacy).op(&mut op))?;
        let seq = inner.engine.last_seq() + 1;
        // Encode first: an op too large to log is refused before it changes anything.
        let entry = LogEntry { now_ms: now, op };
        let record = encode_log_entry(seq, &entry)?;
        let applied = inner.engine.apply(&entry.op, now)?;
        let key = keys::log_key(&inner.config.key_prefix, seq);
        let record_bytes = record.len() as u64;
        if let Err(e) = inner.backend.put(&key, record).await {
            inner.poisoned = true;
            return Err(e);
        }
        inner.log_records_since_snapshot += 1;
        inner.log_bytes_since_snapshot += record_bytes;
        let event = event_of(seq, &entry);
        if let Some(listen) = self.listener.borrow().as_ref() {
            listen(&event);
        }
        inner.events.push(event);
        // Only an erasure that removed something has text to retire: a
        // repeated revoke must not cost a rewrite of the whole storage.
        // A redaction erases a record's texts the same way.
        let erasure = matches!(applied, Applied::ConsentRevoked { memories, episodes, histories, .. } if memories + episodes + histories > 0)
            || matches!(applied, Applied::Ltm(crate::core::longterm::LtmApplied::Redacted { .. }));
        if erasure {
            // The right to be forgotten: the erased text is still in the log
            // records before this one. A snapshot retires them; if it fails,
            // the erasure stands in memory and the error says storage did
            // not follow yet (the next snapshot completes it).
            inner.snapshot().await?;
            if inner.backend.deletes_leave_bytes() {
                inner.rewrite_storage().await?;
            }
        } else if inner.snapshot_due() {
            // The op is already durable in the log; a failed snapshot never
            // fails it, and is retried only after the log has grown again.
            if inner.snapshot().await.is_err() {
                inner.snapshot_retry_at_records = inner.log_records_since_snapshot + inner.config.snapshot_every_ops.max(1_000);
            }
        }
        Ok((applied, scrubbed))
    }

    /// Sets (or clears) the change-feed listener.
    pub fn set_listener(&self, listener: Option<Listener>) {
        *self.listener.borrow_mut() = listener;
    }

    /// Change-feed events after `since` (default: the last committed seq,
    /// an empty page) that `interest` admits, from the recent events kept in
    /// memory ([`limits::FEED_EVENTS_KEPT`], rebuilt from the log on open).
    pub async fn events_since(&self, since: Option<u64>, interest: &Interest, limit: usize) -> Result<FeedPage> {
        let mut inner = self.inner.lock().await;
        inner.heal().await?;
        let last = inner.engine.last_seq();
        inner.events.since(since.unwrap_or(last), last, interest, limit)
    }

    /// Upstream reads in flight, by key.
    pub fn flights(&self) -> &Flights {
        &self.flights
    }

    /// Catches up with writes another process made to the same storage (a
    /// second browser tab on one IndexedDB database): when the log holds a
    /// record after the last one applied, or the head covers more, the
    /// state is reloaded from storage. Answers the events of the writes it
    /// picked up (as far as the recent-event ring keeps them).
    pub async fn catch_up(&self) -> Result<Vec<FeedEvent>> {
        let mut inner = self.inner.lock().await;
        inner.heal().await?;
        let last = inner.engine.last_seq();
        let prefix = inner.config.key_prefix.clone();
        let ahead = inner.backend.get(&keys::log_key(&prefix, last + 1)).await?.is_some()
            || match inner.backend.get(&keys::head_key(&prefix)).await? {
                Some(bytes) => crate::core::codec::Head::decode(&bytes)?.last_seq > last,
                None => false,
            };
        if !ahead {
            return Ok(Vec::new());
        }
        inner.poisoned = true;
        inner.heal().await?;
        let now_last = inner.engine.last_seq();
        Ok(inner.events.since(last.min(now_last), now_last, &Interest::default(), limits::FEED_EVENTS_KEPT)?.events)
    }

    /// Process-local counters (tool-cache hits and misses).
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// Runs maintenance that changes the state's layout but not its
    /// contents (vector segment compaction). It is not logged: a replay
    /// reaches the same contents, and the next snapshot keeps the layout.
    pub async fn maintain<R>(&self, job: impl FnOnce(&mut Engine) -> R) -> Result<R> {
        let mut inner = self.inner.lock().await;
        inner.heal().await?;
        Ok(job(&mut inner.engine))
    }

    /// Runs a read-only query against the current state.
    pub async fn read<R>(&self, query: impl FnOnce(&Engine) -> R) -> Result<R> {
        let mut inner = self.inner.lock().await;
        inner.heal().await?;
        Ok(query(&inner.engine))
    }

    /// Replaces an empty store's state with `staged` (an import), written as
    /// one snapshot: its head swap is the commit point, so a failure leaves
    /// the store as it was. Answers false, writing nothing, when the store
    /// already holds exactly `staged` (the same import again); any other
    /// state is refused with `import_target_not_empty`.
    pub async fn import(&self, staged: Engine) -> Result<bool> {
        let mut inner = self.inner.lock().await;
        inner.heal().await?;
        if !Self::import_needed(&inner, &staged)? {
            return Ok(false);
        }
        let before = std::mem::replace(&mut inner.engine, staged);
        if let Err(e) = inner.snapshot().await {
            inner.engine = before;
            return Err(e);
        }
        Ok(true)
    }

    /// Whether [`Store::import`] of `staged` would write (an empty store),
    /// be a no-op (this very state), or be refused (other state), without
    /// writing: a sharded tenant's shards each check before any imports.
    pub async fn import_check(&self, staged: &Engine) -> Result<bool> {
        let mut inner = self.inner.lock().await;
        inner.heal().await?;
        Self::import_needed(&inner, staged)
    }

    fn import_needed(inner: &Inner<B>, staged: &Engine) -> Result<bool> {
        if inner.engine.last_seq() != 0 || inner.head.is_some() {
            // Logical equality: the same state whatever the index's layout.
            if inner.engine == *staged {
                return Ok(false);
            }
            return Err(Error::conflict(crate::core::error::ConflictCode::ImportTargetNotEmpty, "namespace"));
        }
        Ok(true)
    }

    /// Writes a snapshot now and truncates the log it covers.
    pub async fn snapshot(&self) -> Result<StoreStats> {
        let mut inner = self.inner.lock().await;
        inner.heal().await?;
        inner.snapshot().await?;
        Ok(inner.stats())
    }

    /// Current counters.
    pub async fn stats(&self) -> StoreStats {
        self.inner.lock().await.stats()
    }

    /// Publishes the current state as a snapshot on `target` (for example
    /// Workers KV, which may hold snapshots but never the log), under
    /// `config.key_prefix`, with the same chunked layout and commit point.
    pub async fn publish<T: Backend>(&self, target: &T, config: &StoreConfig) -> Result<StoreStats> {
        config.validate()?;
        let mut inner = self.inner.lock().await;
        inner.heal().await?;
        let bytes = inner.engine.encode_snapshot()?;
        publish_snapshot(target, config, bytes, inner.engine.last_seq()).await
    }
}

/// Writes a snapshot's `bytes` (of state up to `last_seq`) to `target`
/// under `config.key_prefix`, as [`Store::publish`] does: a store's own
/// state, or one assembled elsewhere (a sharded tenant's, merged).
pub async fn publish_snapshot<T: Backend>(target: &T, config: &StoreConfig, bytes: Vec<u8>, last_seq: u64) -> Result<StoreStats> {
    let prefix = &config.key_prefix;
    // An unreadable head names no chunks: the probe below finds them.
    let prev = target.get(&keys::head_key(prefix)).await?.and_then(|b| crate::core::codec::any_head(&b));
    let head = Head { gen: next_gen(prev)?, chunk_count: 0, snapshot_bytes: bytes.len() as u64, last_seq };
    let (head, retired) = write_snapshot(target, config, head, &bytes, false).await.map_err(|e| match e {
        SnapshotWriteError::Chunks(e) | SnapshotWriteError::Head(e) => e,
    })?;
    // Free the encoding before the sweep, which may read a repair page.
    drop(bytes);
    // A mirror holds no log, and this store keeps no memory of it between
    // calls: it deletes the retired generation by name, then probes (one
    // key per range, nothing on a clean mirror) for what a crashed
    // publish left. A commit with transactions already deleted both.
    if !retired {
        sweep::retire(target, prefix, prev, head, 0).await?;
        if sweep::leftovers(target, prefix, Some(head), false).await? {
            sweep::repair(target, prefix, Some(head), false).await?;
        }
    }
    Ok(StoreStats { last_seq: head.last_seq, log_records_since_snapshot: 0, snapshot_gen: head.gen, snapshot_bytes: head.snapshot_bytes, log_bytes_since_snapshot: 0 })
}

impl Store<MemoryBackend> {
    /// Re-types an in-memory store for callers that hold any backend.
    pub fn into_backend<C: Backend>(self, wrap: impl FnOnce(MemoryBackend) -> C) -> Store<C> {
        let inner = self.inner.into_inner();
        Store {
            inner: Mutex::new(Inner {
                backend: wrap(inner.backend),
                config: inner.config,
                engine: inner.engine,
                head: inner.head,
                log_records_since_snapshot: inner.log_records_since_snapshot,
                log_bytes_since_snapshot: inner.log_bytes_since_snapshot,
                snapshot_retry_at_records: inner.snapshot_retry_at_records,
                repair_due: inner.repair_due,
                poisoned: inner.poisoned,
                events: inner.events,
            }),
            counters: self.counters,
            listener: self.listener,
            flights: self.flights,
            privacy_key: self.privacy_key,
        }
    }

    /// Loads a snapshot published with [`Store::publish`] (or a sharded
    /// tenant's replica in export form, [`publish_export`]) into a volatile
    /// in-memory store: a read replica that starts without replaying a log.
    pub async fn open_published<T: Backend>(source: &T, key_prefix: &str) -> Result<Store<MemoryBackend>> {
        // A sharded tenant's replica is its export: read a chunk at a time.
        let export_head = match source.get(&keys::head_key(key_prefix)).await? {
            Some(bytes) => crate::core::codec::ExportHead::decode(&bytes)?,
            None => None,
        };
        // A replica never writes to its source, so it does not look for leftovers there.
        let found = match export_head {
            Some(head) => recover::Recovered::of(export_replica::load(source, key_prefix, head).await?),
            None => recover::recover(source, key_prefix, false, Quantization::None).await?,
        };
        let config = StoreConfig::default();
        let inner = Inner {
            backend: MemoryBackend::new(),
            config,
            engine: found.engine,
            head: None,
            log_records_since_snapshot: 0,
            log_bytes_since_snapshot: 0,
            snapshot_retry_at_records: 0,
            repair_due: false,
            poisoned: false,
            events: found.events,
        };
        Ok(Store { inner: Mutex::new(inner), counters: Counters::default(), listener: RefCell::new(None), flights: Flights::default(), privacy_key: RefCell::new(None) })
    }
}

impl<B: Backend> Inner<B> {
    async fn heal(&mut self) -> Result<()> {
        if self.poisoned {
            let found = recover::recover(&self.backend, &self.config.key_prefix, true, self.config.vector_quantization).await?;
            self.engine = found.engine;
            self.head = found.head;
            self.log_records_since_snapshot = found.records;
            self.log_bytes_since_snapshot = found.bytes;
            self.repair_due |= found.leftovers;
            self.poisoned = false;
            // The ring only ever held durable changes; keep it unless the
            // reloaded state disagrees with it.
            if self.events.newest_seq().unwrap_or(0) != self.engine.last_seq() {
                self.events = found.events;
            }
        }
        Ok(())
    }

    fn snapshot_due(&self) -> bool {
        let records = self.log_records_since_snapshot;
        if records < self.snapshot_retry_at_records {
            return false;
        }
        let last_bytes = self.head.map_or(0, |h| h.snapshot_bytes);
        records >= limits::SNAPSHOT_EVERY_OPS_MAX
            || (records >= self.config.snapshot_every_ops && self.log_bytes_since_snapshot.saturating_mul(2) >= last_bytes)
    }

    fn stats(&self) -> StoreStats {
        StoreStats {
            last_seq: self.engine.last_seq(),
            log_records_since_snapshot: self.log_records_since_snapshot,
            snapshot_gen: self.head.map_or(0, |h| h.gen),
            snapshot_bytes: self.head.map_or(0, |h| h.snapshot_bytes),
            log_bytes_since_snapshot: self.log_bytes_since_snapshot,
        }
    }
}

/// Polls a future that is known to complete without waiting (the in-memory
/// backend). Used by native tests and by synchronous callers of
/// [`MemoryBackend`]; returns `None` if the future would block.
pub fn now_or_never<F: Future>(fut: F) -> Option<F::Output> {
    let mut fut = std::pin::pin!(fut);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match fut.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(v) => Some(v),
        std::task::Poll::Pending => None,
    }
}

#[cfg(test)]
mod tests;
