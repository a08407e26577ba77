//! Transfer ids: one namespace for the string ids of the JSON routes and the
//! 128-bit ids of typed batches. A string that is the canonical decimal form
//! of a 128-bit number (no sign, no leading zero) *is* that number, so
//! `transfer("42")` finds the transfer a batch created with id 42, and a
//! numeric id costs no allocation.

use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};

/// A transfer id.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TransferId {
    /// A number from 1 to 2^128 - 1 (written as its decimal digits).
    Num(u128),
    /// Any other id string.
    Text(Box<str>),
}

impl TransferId {
    /// The id a string names.
    pub fn parse(s: &str) -> TransferId {
        let canonical = !s.is_empty() && s.len() <= 39 && s.bytes().all(|b| b.is_ascii_digit()) && !s.starts_with('0');
        match canonical.then(|| s.parse::<u128>().ok()).flatten() {
            Some(n) => TransferId::Num(n),
            None => TransferId::Text(s.into()),
        }
    }

    /// Writes the id's string form into `buf` and returns it: the text the
    /// journal hashes, with no allocation for a numeric id.
    pub fn as_str<'a>(&'a self, buf: &'a mut [u8; 39]) -> &'a str {
        match self {
            TransferId::Text(s) => s,
            TransferId::Num(n) => {
                // u128 division is a library call per digit: divide by 10^19
                // at most twice, and write each chunk with u64 division.
                const CHUNK: u128 = 10_000_000_000_000_000_000;
                let (mut n, mut at) = (*n, buf.len());
                while n >= CHUNK {
                    let end = at;
                    at -= write_digits(buf, end, (n % CHUNK) as u64);
                    n /= CHUNK;
                    // A chunk below the top one keeps its leading zeros.
                    while end - at < 19 {
                        at -= 1;
                        buf[at] = b'0';
                    }
                }
                at -= write_digits(buf, at, n as u64);
                // Only ASCII digits were written.
                std::str::from_utf8(&buf[at..]).unwrap_or_default()
            }
        }
    }
}

/// Writes `n`'s decimal digits to end at `end`; returns how many.
fn write_digits(buf: &mut [u8], end: usize, mut n: u64) -> usize {
    let mut at = end;
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return end - at;
        }
    }
}

impl fmt::Display for TransferId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str(&mut [0; 39]))
    }
}

/// A fast hasher for the ledger's id maps (FxHash's multiply-rotate, with
/// a finalizer so that every input bit reaches the bucket index). Ids
/// come from the tenant's own requests, so a tenant able to craft
/// collisions could slow only its own ledger; SipHash cost more than a
/// transfer's balance checks here.
#[derive(Default, Clone, Copy)]
pub struct IdHasher(u64);

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]));
        }
        for &b in chunks.remainder() {
            self.add(u64::from(b));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }

    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    fn write_u128(&mut self, n: u128) {
        self.add(n as u64);
        self.add((n >> 64) as u64);
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        // Multiplication carries only upward, so the low bits (the bucket
        // index) would barely depend on the high input bits: fold them down
        // (murmur3's finalizer).
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    }
}

impl IdHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

/// `HashMap`s keyed by ids and names inside the ledger.
pub type IdBuild = BuildHasherDefault<IdHasher>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_decimal_strings_are_numbers_and_everything_else_text() {
        assert_eq!(TransferId::parse("42"), TransferId::Num(42));
        let max = u128::MAX.to_string();
        assert_eq!(TransferId::parse(&max), TransferId::Num(u128::MAX));
        for text in ["0", "007", "", "-1", "+1", "1e3", "t-1", "340282366920938463463374607431768211456", " 1"] {
            assert_eq!(TransferId::parse(text), TransferId::Text(text.into()), "{text:?}");
        }
        // Both digit paths: u64 and past it, around their border.
        let border = [u64::MAX.to_string(), (u128::from(u64::MAX) + 1).to_string(), 10u128.pow(19).to_string(), 10u128.pow(20).to_string()];
        for s in ["1", "42", "t-1", "007", &max].into_iter().chain(border.iter().map(String::as_str)) {
            assert_eq!(TransferId::parse(s).to_string(), s, "the string form round-trips");
        }
    }

    #[test]
    fn similar_ids_spread_over_buckets() {
        use std::hash::BuildHasher;
        // Ids differing only in their middle characters must not share the
        // low bits a hash table indexes by.
        let low: std::collections::HashSet<u64> = (0..4096).map(|i| IdBuild::default().hash_one(TransferId::parse(&format!("t{i}x"))) & 0xfff).collect();
        assert!(low.len() > 2400, "only {} of 4096 buckets used", low.len());
        let nums: std::collections::HashSet<u64> = (0..4096u128).map(|i| IdBuild::default().hash_one(TransferId::Num(i << 64)) & 0xfff).collect();
        assert!(nums.len() > 2400, "only {} of 4096 buckets used", nums.len());
    }
}
