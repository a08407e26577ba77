//! A memo of token counts, so assembling a prompt over a long session does
//! not re-tokenize hundreds of unchanged turns on every call.
//!
//! Keys are a 64-bit hash of the text plus its length; a collision would
//! need two texts of equal length with equal SipHash under a fixed key,
//! which we accept for a count that only steers budgeting. The memo is
//! derived state: it lives beside the engine, never in snapshots.

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};

use crate::core::budget::Counter;
use crate::core::limits;

/// Remembers counts for one counter (one encoding).
#[derive(Debug, Default)]
pub struct CountCache {
    counts: RefCell<HashMap<(u64, usize), u32>>,
}

/// A [`Counter`] that consults a [`CountCache`] before counting.
pub struct Cached<'a> {
    pub inner: &'a dyn Counter,
    pub cache: &'a CountCache,
}

impl CountCache {
    pub fn new() -> CountCache {
        CountCache::default()
    }

    /// Wraps `inner` with this memo.
    pub fn counter<'a>(&'a self, inner: &'a dyn Counter) -> Cached<'a> {
        Cached { inner, cache: self }
    }

    pub fn len(&self) -> usize {
        self.counts.borrow().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Counter for Cached<'_> {
    fn cache_key(&self) -> Option<u8> {
        self.inner.cache_key()
    }

    fn count(&self, text: &str) -> usize {
        // Short texts are cheaper to count than to hash and look up.
        if text.len() < limits::COUNT_CACHE_TEXT_BYTES_MIN {
            return self.inner.count(text);
        }
        let key = (BuildHasherDefault::<DefaultHasher>::default().hash_one(text), text.len());
        if let Some(&n) = self.cache.counts.borrow().get(&key) {
            return n as usize;
        }
        let n = self.inner.count(text);
        let mut counts = self.cache.counts.borrow_mut();
        if counts.len() >= limits::COUNT_CACHE_ENTRIES_MAX {
            // Simplest bound that cannot grow: start over.
            counts.clear();
        }
        counts.insert(key, u32::try_from(n).unwrap_or(u32::MAX));
        n
    }

    fn truncate<'b>(&self, text: &'b str, tokens_max: usize) -> &'b str {
        self.inner.truncate(text, tokens_max)
    }
}
