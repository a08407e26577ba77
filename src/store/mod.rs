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
//!   point), then deletes older chunks and covered log records. A crash at
//!   any step leaves either the old or the new snapshot current, and
//!   leftovers are swept by the next snapshot.
//!
//! Mutations are serialized by an async mutex, so concurrent JS calls never
//! interleave their log writes. If a write fails, the in-memory state may be
//! ahead of storage; the store is marked poisoned and reloads from storage
//! before serving anything else.

mod memory;

pub use memory::MemoryBackend;

use std::future::Future;

use futures_util::lock::Mutex;

use crate::core::codec::{self, Head};
use crate::core::engine::{decode_log_entry, encode_log_entry, Applied, Engine, LogEntry, Op};
use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::time::Millis;

/// What a backend may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// Read-your-writes and durable once `put` resolves: may hold op logs.
    Strong,
    /// Eventually consistent (Workers KV): may hold published snapshots only.
    SnapshotsOnly,
}

/// A key-value store of bytes. Adapters implement this and nothing more:
/// no parsing, no policy. `put` and `delete` must resolve only once durable.
#[allow(async_fn_in_trait)] // single-threaded wasm: futures need not be Send
pub trait Backend {
    /// Reads one value.
    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>>;
    /// Writes one value, replacing any previous one.
    async fn put(&self, key: &str, value: Vec<u8>) -> Result<()>;
    /// Deletes keys; missing keys are not an error.
    async fn delete(&self, keys: &[String]) -> Result<()>;
    /// All keys starting with `prefix`, in any order.
    async fn list(&self, prefix: &str) -> Result<Vec<String>>;
    /// What this backend may hold; [`Durability::Strong`] unless overridden.
    fn durability(&self) -> Durability {
        Durability::Strong
    }
}

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
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig {
            snapshot_every_ops: limits::SNAPSHOT_EVERY_OPS_DEFAULT,
            chunk_bytes: limits::SNAPSHOT_CHUNK_BYTES_DEFAULT,
            key_prefix: String::new(),
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
}

/// An engine made durable on a backend.
pub struct Store<B: Backend> {
    inner: Mutex<Inner<B>>,
    counters: Counters,
}

/// Counters that are not state: they start at zero with each process.
#[derive(Debug, Default)]
pub struct Counters {
    tool_cache_hits: std::cell::Cell<u64>,
    tool_cache_misses: std::cell::Cell<u64>,
}

impl Counters {
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
    poisoned: bool,
}

fn log_key(prefix: &str, seq: u64) -> String {
    format!("{prefix}log/{seq:016x}")
}

fn chunk_key(prefix: &str, gen: u64, index: u32) -> String {
    format!("{prefix}snap/{gen:016x}/{index:08x}")
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
        let (engine, head, replayed) = recover(&backend, &config.key_prefix).await?;
        let inner = Inner {
            backend,
            config,
            engine,
            head,
            log_records_since_snapshot: replayed.records,
            log_bytes_since_snapshot: replayed.bytes,
            snapshot_retry_at_records: 0,
            poisoned: false,
        };
        Ok(Store { inner: Mutex::new(inner), counters: Counters::default() })
    }

    /// Applies `op` at `now` and resolves once its log record is durable.
    /// On any error the state is as if the op was never submitted.
    pub async fn apply(&self, op: Op, now: Millis) -> Result<Applied> {
        let mut inner = self.inner.lock().await;
        inner.heal().await?;
        let seq = inner.engine.last_seq() + 1;
        // Encode first: an op too large to log is refused before it changes anything.
        let entry = LogEntry { now_ms: now, op };
        let record = encode_log_entry(seq, &entry)?;
        let applied = inner.engine.apply(&entry.op, now)?;
        let key = log_key(&inner.config.key_prefix, seq);
        let record_bytes = record.len() as u64;
        if let Err(e) = inner.backend.put(&key, record).await {
            inner.poisoned = true;
            return Err(e);
        }
        inner.log_records_since_snapshot += 1;
        inner.log_bytes_since_snapshot += record_bytes;
        if inner.snapshot_due() {
            // The op is already durable in the log; a failed snapshot never
            // fails it, and is retried only after the log has grown again.
            if inner.snapshot().await.is_err() {
                inner.snapshot_retry_at_records = inner.log_records_since_snapshot + inner.config.snapshot_every_ops.max(1_000);
            }
        }
        Ok(applied)
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
        let prev = match target.get(&format!("{}head", config.key_prefix)).await? {
            Some(b) => Head::decode(&b).map(|h| h.gen).unwrap_or(0),
            None => 0,
        };
        let head = Head { gen: prev + 1, chunk_count: 0, snapshot_bytes: bytes.len() as u64, last_seq: inner.engine.last_seq() };
        let head = write_snapshot(target, config, head, &bytes).await.map_err(|e| match e {
            SnapshotWriteError::Chunks(e) | SnapshotWriteError::Head(e) => e,
        })?;
        sweep(target, &config.key_prefix, head).await?;
        Ok(StoreStats { last_seq: head.last_seq, log_records_since_snapshot: 0, snapshot_gen: head.gen, snapshot_bytes: head.snapshot_bytes })
    }
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
                poisoned: inner.poisoned,
            }),
            counters: self.counters,
        }
    }

    /// Loads a snapshot published with [`Store::publish`] into a volatile
    /// in-memory store: a read replica that starts without replaying a log.
    pub async fn open_published<T: Backend>(source: &T, key_prefix: &str) -> Result<Store<MemoryBackend>> {
        let (engine, _, _) = recover(source, key_prefix).await?;
        let config = StoreConfig::default();
        let inner = Inner {
            backend: MemoryBackend::new(),
            config,
            engine,
            head: None,
            log_records_since_snapshot: 0,
            log_bytes_since_snapshot: 0,
            snapshot_retry_at_records: 0,
            poisoned: false,
        };
        Ok(Store { inner: Mutex::new(inner), counters: Counters::default() })
    }
}

impl<B: Backend> Inner<B> {
    async fn heal(&mut self) -> Result<()> {
        if self.poisoned {
            let (engine, head, replayed) = recover(&self.backend, &self.config.key_prefix).await?;
            self.engine = engine;
            self.head = head;
            self.log_records_since_snapshot = replayed.records;
            self.log_bytes_since_snapshot = replayed.bytes;
            self.poisoned = false;
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
        }
    }

    async fn snapshot(&mut self) -> Result<()> {
        let bytes = self.engine.encode_snapshot()?;
        let gen = self.head.map_or(1, |h| h.gen + 1);
        let head = Head { gen, chunk_count: 0, snapshot_bytes: bytes.len() as u64, last_seq: self.engine.last_seq() };
        let head = match write_snapshot(&self.backend, &self.config, head, &bytes).await {
            Ok(head) => head,
            Err(SnapshotWriteError::Chunks(e)) => return Err(e),
            Err(SnapshotWriteError::Head(e)) => {
                // The head put may or may not have landed: reload before serving.
                self.poisoned = true;
                return Err(e);
            }
        };
        self.head = Some(head);
        self.log_records_since_snapshot = 0;
        self.log_bytes_since_snapshot = 0;
        sweep(&self.backend, &self.config.key_prefix, head).await
    }
}

/// Which write of a snapshot failed: before the commit point nothing visible
/// changed; at the commit point the outcome is unknown.
enum SnapshotWriteError {
    Chunks(Error),
    Head(Error),
}

/// Writes the chunks of `bytes`, then the head (the commit point).
async fn write_snapshot<B: Backend>(backend: &B, config: &StoreConfig, mut head: Head, bytes: &[u8]) -> std::result::Result<Head, SnapshotWriteError> {
    let prefix = &config.key_prefix;
    for (i, chunk) in codec::chunks(bytes, config.chunk_bytes).enumerate() {
        backend.put(&chunk_key(prefix, head.gen, i as u32), chunk.to_vec()).await.map_err(SnapshotWriteError::Chunks)?;
        head.chunk_count += 1;
    }
    backend.put(&format!("{prefix}head"), head.encode()).await.map_err(SnapshotWriteError::Head)?;
    Ok(head)
}

/// Deletes what `head` made unreachable: older chunk generations and the log
/// records it covers. Failures only leave garbage the next sweep removes.
async fn sweep<B: Backend>(backend: &B, prefix: &str, head: Head) -> Result<()> {
    let current = format!("{prefix}snap/{:016x}/", head.gen);
    let stale_chunks: Vec<String> =
        backend.list(&format!("{prefix}snap/")).await?.into_iter().filter(|k| !k.starts_with(&current)).collect();
    let covered_logs: Vec<String> = backend
        .list(&format!("{prefix}log/"))
        .await?
        .into_iter()
        .filter(|k| parse_seq(prefix, k).is_some_and(|seq| seq <= head.last_seq))
        .collect();
    for batch in stale_chunks.chunks(DELETE_BATCH_KEYS).chain(covered_logs.chunks(DELETE_BATCH_KEYS)) {
        backend.delete(batch).await?;
    }
    Ok(())
}

/// Keys per delete call (Durable Object storage takes at most 128).
const DELETE_BATCH_KEYS: usize = 128;

fn parse_seq(prefix: &str, key: &str) -> Option<u64> {
    let hex = key.strip_prefix(prefix)?.strip_prefix("log/")?;
    if hex.len() != 16 {
        return None;
    }
    u64::from_str_radix(hex, 16).ok()
}

/// What recovery replayed from the log.
struct Replayed {
    records: u64,
    bytes: u64,
}

/// Loads the snapshot named by `head` and replays the log after it.
async fn recover<B: Backend>(backend: &B, prefix: &str) -> Result<(Engine, Option<Head>, Replayed)> {
    let head = match backend.get(&format!("{prefix}head")).await? {
        Some(bytes) => Some(Head::decode(&bytes)?),
        None => None,
    };
    let mut engine = match head {
        None => Engine::new(),
        Some(h) => {
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
            engine
        }
    };
    let mut seqs: Vec<u64> = Vec::new();
    for key in backend.list(&format!("{prefix}log/")).await? {
        let seq = parse_seq(prefix, &key).ok_or_else(|| Error::LogCorrupt { seq: 0, reason: format!("unexpected key {key:?}") })?;
        if seq > engine.last_seq() {
            seqs.push(seq);
        }
    }
    if seqs.len() as u64 > limits::RECOVERY_LOG_RECORDS_MAX {
        return Err(Error::LogCorrupt { seq: 0, reason: format!("{} records to replay is past the limit", seqs.len()) });
    }
    seqs.sort_unstable();
    let mut replayed = Replayed { records: seqs.len() as u64, bytes: 0 };
    for seq in seqs {
        if seq != engine.last_seq() + 1 {
            return Err(Error::LogCorrupt { seq, reason: format!("gap: expected record {}", engine.last_seq() + 1) });
        }
        let bytes = backend.get(&log_key(prefix, seq)).await?.ok_or_else(|| Error::LogCorrupt { seq, reason: "listed but missing".into() })?;
        replayed.bytes += bytes.len() as u64;
        let entry = decode_log_entry(seq, &bytes)?;
        engine.apply(&entry.op, entry.now_ms).map_err(|e| Error::LogCorrupt { seq, reason: format!("replay failed: {e}") })?;
    }
    Ok((engine, head, replayed))
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
