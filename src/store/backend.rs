//! The backend contract: what a [`super::Store`] asks of the bytes under
//! it, and nothing more (no parsing, no policy).

use crate::core::error::{Error, Result};

/// What a backend may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// Read-your-writes and durable once `put` resolves: may hold op logs.
    Strong,
    /// Eventually consistent (Workers KV): may hold published snapshots only.
    SnapshotsOnly,
}

/// Keys that start with `prefix` and sort (byte order) at or after `start`
/// and before `end`; `""` and `None` leave that side open. A listing returns
/// the `limit` smallest of them, in ascending order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyRange<'a> {
    pub prefix: &'a str,
    pub start: &'a str,
    pub end: Option<&'a str>,
    pub limit: usize,
}

impl KeyRange<'_> {
    /// Whether `key` lies in the range (the limit aside). Adapters whose
    /// store cannot seek filter with it.
    pub fn contains(&self, key: &str) -> bool {
        key.starts_with(self.prefix) && key >= self.start && self.end.is_none_or(|end| key < end)
    }

    /// The same keys as one half-open interval `[lo, hi)` (`None`: no upper
    /// bound), for stores that seek by comparison (SQL): at or after the
    /// larger of prefix and start, before the smaller of end and the first
    /// key past the prefix. Store keys are ASCII, so "past the prefix" is
    /// its last byte plus one; a prefix ending in another byte is refused.
    pub fn bounds(&self) -> Result<(String, Option<String>)> {
        let lo = self.prefix.max(self.start).to_owned();
        let past_prefix = match self.prefix.as_bytes().last() {
            None => None,
            Some(&b) if b < 0x7f => {
                let mut s = self.prefix[..self.prefix.len() - 1].to_owned();
                s.push(char::from(b + 1));
                Some(s)
            }
            Some(_) => return Err(Error::Internal { detail: format!("key prefix {:?} does not end in ASCII", self.prefix) }),
        };
        let hi = match (past_prefix, self.end) {
            (Some(p), Some(e)) => Some(if e < p.as_str() { e.to_owned() } else { p }),
            (p, e) => p.or(e.map(str::to_owned)),
        };
        Ok((lo, hi))
    }
}

/// A key-value store of bytes. Adapters implement this and nothing more:
/// no parsing, no policy. `put` and `delete` must resolve only once durable.
///
/// Listing is the costly call: Durable Object storage has no keys-only
/// listing, so every listed key's value crosses into the isolate. The store
/// therefore lists only at recovery (the log, once, with its values; and
/// one-key probes of ranges that are empty on a clean store) and while it
/// repairs what a crash left behind. Snapshots delete by name.
#[allow(async_fn_in_trait)] // single-threaded wasm: futures need not be Send
pub trait Backend {
    /// Reads one value.
    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>>;
    /// Writes one value, replacing any previous one.
    async fn put(&self, key: &str, value: Vec<u8>) -> Result<()>;
    /// Deletes keys; missing keys are not an error.
    async fn delete(&self, keys: &[String]) -> Result<()>;
    /// The keys in `range`, ascending, at most `range.limit`.
    async fn list(&self, range: KeyRange<'_>) -> Result<Vec<String>>;
    /// The keys in `range` with their values, ascending, at most
    /// `range.limit`. Adapters whose listing returns values anyway (Durable
    /// Object storage) override it, so that each value is read once; the
    /// default lists keys, then gets each.
    async fn get_range(&self, range: KeyRange<'_>) -> Result<Vec<(String, Vec<u8>)>> {
        get_each(self, range).await
    }
    /// What this backend may hold; [`Durability::Strong`] unless overridden.
    fn durability(&self) -> Durability {
        Durability::Strong
    }
    /// Whether a delete may leave the deleted bytes readable in the
    /// backend's files (SQLite free pages and write-ahead log: Durable
    /// Object storage). Such a backend must implement
    /// [`Backend::replace_all`], which an erasure uses. Default `false`.
    fn deletes_leave_bytes(&self) -> bool {
        false
    }
    /// Bytes this backend adds to each value it stores (a sealed envelope),
    /// so snapshot chunks shrink by it and still fit one value. Default 0.
    fn value_overhead_bytes(&self) -> usize {
        0
    }
    /// Replaces everything the backend holds with `entries`, leaving no
    /// byte of what was there before (the right to be forgotten). Only
    /// called when [`Backend::deletes_leave_bytes`]; the default refuses.
    async fn replace_all(&self, entries: Vec<(String, Vec<u8>)>) -> Result<()> {
        let _ = entries;
        Err(Error::StoreUnsuitable { detail: "this backend cannot replace all of its contents".into() })
    }
    /// Puts `value` under `key` and deletes every key in `retire` (their
    /// limits ignored) as one atomic commit, if this backend has
    /// transactions: `Ok(true)`. `Ok(false)`: it has none and nothing was
    /// written; the store then puts the head alone and deletes by name
    /// after it. A snapshot's head swap uses it, so that on such a backend
    /// a crash never leaves a retired generation or covered log behind.
    async fn commit_head(&self, key: &str, value: &[u8], retire: &[KeyRange<'_>]) -> Result<bool> {
        let _ = (key, value, retire);
        Ok(false)
    }
}

/// [`Backend::get_range`] for stores that list keys only: a listing, then
/// one `get` per key (a key deleted in between is skipped).
pub async fn get_each<B: Backend + ?Sized>(backend: &B, range: KeyRange<'_>) -> Result<Vec<(String, Vec<u8>)>> {
    let mut keys: Vec<String> = backend.list(range).await?.into_iter().filter(|k| range.contains(k)).collect();
    keys.sort_unstable();
    keys.truncate(range.limit);
    let mut entries = Vec::with_capacity(keys.len());
    for key in keys {
        if let Some(value) = backend.get(&key).await? {
            entries.push((key, value));
        }
    }
    Ok(entries)
}
