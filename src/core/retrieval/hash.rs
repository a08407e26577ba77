//! Hashing for the in-memory indexes and the embedder.
//!
//! [`FxHasher`] is rustc's multiply-rotate hash: several times faster than
//! SipHash on short keys such as terms. It is not DoS-resistant; a tenant
//! who crafts colliding terms only slows down its own index, since every
//! tenant has its own.
//!
//! [`stable_hash`] is a fixed, documented function of the bytes alone (no
//! `Hasher` plumbing, no platform dependence), because the embedder's
//! vectors are persisted and must come out identical on every build.

use std::hash::{BuildHasherDefault, Hasher};

const FX_SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

/// rustc's FxHasher.
#[derive(Debug, Default, Clone, Copy)]
pub struct FxHasher {
    hash: u64,
}

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(FX_SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w) ^ ((rest.len() as u64) << 59));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

/// `HashMap`/`HashSet` builder using [`FxHasher`].
pub type FxBuildHasher = BuildHasherDefault<FxHasher>;
/// A `HashMap` with [`FxHasher`].
pub type FxHashMap<K, V> = std::collections::HashMap<K, V, FxBuildHasher>;

/// A 64-bit hash of `bytes` under `seed` that never changes: eight bytes
/// at a time through a multiply-xorshift step, with the length mixed in
/// first (so zero padding is unambiguous), then the SplitMix64 finalizer so
/// that every output bit depends on every input bit.
pub fn stable_hash(seed: u64, bytes: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h = seed ^ (bytes.len() as u64).wrapping_mul(K);
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = (h ^ u64::from_le_bytes(w)).wrapping_mul(K);
        h ^= h >> 29;
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        h = (h ^ u64::from_le_bytes(w)).wrapping_mul(K);
        h ^= h >> 29;
    }
    h ^= h >> 30;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^= h >> 27;
    h = h.wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

/// The key of an index term. Terms are held by their 64-bit hash, not their
/// text: a collision needs about four billion distinct terms to become
/// likely, and would only merge two terms' postings (a ranking blip; filters
/// never depend on it).
pub fn term_hash(term: &str) -> u64 {
    stable_hash(0x6564_6765_6d65_6d21, term.as_bytes())
}
