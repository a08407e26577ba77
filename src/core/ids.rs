//! ULIDs, as Agent Memory Server uses for message and memory ids.
//!
//! The core has no RNG: callers pass the 80 random bits in (the JS and Worker
//! layers draw them from `crypto.getRandomValues` through getrandom).

use crate::core::time::Millis;

const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// Encodes a ULID from a 48-bit millisecond timestamp and 80 random bits.
/// Ids sort by time, then randomly, as strings.
pub fn ulid(ms: Millis, random: [u8; 10]) -> String {
    let mut value: u128 = u128::from(ms & 0xFFFF_FFFF_FFFF) << 80;
    for (i, byte) in random.iter().enumerate() {
        value |= u128::from(*byte) << (8 * (9 - i));
    }
    let mut out = [0u8; 26];
    for (i, slot) in out.iter_mut().enumerate() {
        let shift = 5 * (25 - i);
        *slot = CROCKFORD[((value >> shift) & 0x1F) as usize];
    }
    // All bytes come from CROCKFORD, which is ASCII.
    out.iter().map(|&b| b as char).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_the_spec() {
        assert_eq!(ulid(0, [0; 10]), "00000000000000000000000000");
        assert_eq!(ulid(0xFFFF_FFFF_FFFF, [0xFF; 10]), "7ZZZZZZZZZZZZZZZZZZZZZZZZZ");
        // Reference value from the ULID spec's example timestamp.
        assert!(ulid(1_469_918_176_385, [0; 10]).starts_with("01ARYZ6S41"));
    }

    #[test]
    fn sorts_by_time() {
        assert!(ulid(1000, [0xFF; 10]) < ulid(1001, [0; 10]));
    }
}
