//! BPE rank tables: loaded from a compact asset, looked up by token bytes.
//!
//! The asset is made by `examples/gen_ranks.rs` from OpenAI's `.tiktoken`
//! file (verified against its published SHA-256). Its layout, little-endian:
//!
//! ```text
//! magic "EMBPE1\0\0" | n_tokens u32 | body_bytes u32 | crc32 u32 | reserved u32
//! | len u8 × n_tokens | token bytes × n_tokens (concatenated, in rank order)
//! ```
//!
//! A token's rank is its position, so the file stores no ranks at all. At
//! load time an open-addressing hash table of ranks is built over the bytes;
//! a lookup hashes the piece once and compares bytes on a hit.

use crate::core::error::{Error, Result};

const MAGIC: &[u8; 8] = b"EMBPE1\0\0";
const HEADER_BYTES: usize = 8 + 4 * 4;
const EMPTY: u32 = u32::MAX;

/// Token bytes by rank, and rank by token bytes.
pub struct Ranks {
    body: Box<[u8]>,
    /// `offsets[r]..offsets[r + 1]` are the bytes of rank `r`.
    offsets: Box<[u32]>,
    table: Box<[u32]>,
    mask: usize,
}

fn corrupt(reason: impl Into<String>) -> Error {
    Error::invalid("encoding asset", reason.into())
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// FNV-1a over 8-byte words then the tail: cheap for the 1–16 byte pieces
/// that dominate text, and good enough spread for a power-of-two table.
#[inline]
pub(crate) fn hash(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ (bytes.len() as u64);
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        h = (h ^ w).wrapping_mul(0x0000_0100_0000_01b3).rotate_left(29);
    }
    for &b in chunks.remainder() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h ^ (h >> 32)
}

/// Standard base64 with padding, as `.tiktoken` files use.
fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let val = |c: u8| -> Option<u32> {
        Some(u32::from(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        }))
    };
    let digits = s.trim_end_matches('=').as_bytes();
    if digits.len() % 4 == 1 || s.len() % 4 != 0 {
        return None;
    }
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for chunk in digits.chunks(4) {
        let mut acc = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            acc |= val(c)? << (18 - 6 * i);
        }
        for i in 0..chunk.len() - 1 {
            out.push((acc >> (16 - 8 * i)) as u8);
        }
    }
    Some(out)
}

impl Ranks {
    /// Builds the tables from token byte strings in rank order.
    pub fn from_tokens<'a>(tokens: impl IntoIterator<Item = &'a [u8]>) -> Result<Ranks> {
        let mut body = Vec::new();
        let mut offsets = vec![0u32];
        for t in tokens {
            if t.is_empty() || t.len() > u8::MAX as usize {
                return Err(corrupt("a token is empty or longer than 255 bytes"));
            }
            body.extend_from_slice(t);
            offsets.push(body.len() as u32);
        }
        Ranks::build(body.into_boxed_slice(), offsets.into_boxed_slice())
    }

    fn build(body: Box<[u8]>, offsets: Box<[u32]>) -> Result<Ranks> {
        let n = offsets.len() - 1;
        // Load factor ≤ 0.5 keeps probe chains short.
        let size = (n * 2).next_power_of_two().max(16);
        let mut ranks = Ranks { body, offsets, table: vec![EMPTY; size].into_boxed_slice(), mask: size - 1 };
        for r in 0..n as u32 {
            let bytes = ranks.token(r);
            let mut i = hash(bytes) as usize & ranks.mask;
            loop {
                match ranks.table[i] {
                    EMPTY => {
                        ranks.table[i] = r;
                        break;
                    }
                    other if ranks.token(other) == bytes => return Err(corrupt(format!("duplicate token at ranks {other} and {r}"))),
                    _ => i = (i + 1) & ranks.mask,
                }
            }
        }
        Ok(ranks)
    }

    /// Parses OpenAI's `.tiktoken` text: one `base64 rank` per line, ranks
    /// contiguous from 0. Used by the asset generator and the tests.
    pub fn from_tiktoken(text: &str) -> Result<Ranks> {
        let mut tokens = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let (b64, rank) = line.split_once(' ').ok_or_else(|| corrupt(format!("line {i}: expected `token rank`")))?;
            if rank.parse::<usize>().ok() != Some(i) {
                return Err(corrupt(format!("line {i}: ranks must be contiguous from 0")));
            }
            tokens.push(base64_decode(b64).ok_or_else(|| corrupt(format!("line {i}: bad base64")))?);
        }
        Ranks::from_tokens(tokens.iter().map(Vec::as_slice))
    }

    /// Loads an asset made by `examples/gen_ranks.rs`, checking its magic,
    /// lengths, checksum and token count.
    pub fn from_asset(bytes: &[u8], expected_tokens: usize) -> Result<Ranks> {
        if bytes.len() < HEADER_BYTES || &bytes[..8] != MAGIC {
            return Err(corrupt("not an edgemem BPE asset (bad magic)"));
        }
        let n = u32_at(bytes, 8) as usize;
        let body_bytes = u32_at(bytes, 12) as usize;
        if n != expected_tokens {
            return Err(corrupt(format!("holds {n} tokens, expected {expected_tokens}: wrong encoding?")));
        }
        if bytes.len() != HEADER_BYTES + n + body_bytes {
            return Err(corrupt("length does not match its header (truncated?)"));
        }
        let mut crc = crc32fast::Hasher::new();
        crc.update(&bytes[HEADER_BYTES..]);
        if crc.finalize() != u32_at(bytes, 16) {
            return Err(corrupt("checksum mismatch"));
        }
        let lens = &bytes[HEADER_BYTES..HEADER_BYTES + n];
        let body = &bytes[HEADER_BYTES + n..];
        let mut offsets = Vec::with_capacity(n + 1);
        let mut at = 0u32;
        offsets.push(0);
        for &l in lens {
            if l == 0 {
                return Err(corrupt("a token is empty"));
            }
            at += u32::from(l);
            offsets.push(at);
        }
        if at as usize != body.len() {
            return Err(corrupt("token lengths do not add up to the body"));
        }
        Ranks::build(body.to_vec().into_boxed_slice(), offsets.into_boxed_slice())
    }

    /// Serializes the tables as an asset (what the generator writes).
    pub fn to_asset(&self) -> Vec<u8> {
        let n = self.len();
        let mut out = Vec::with_capacity(HEADER_BYTES + n + self.body.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(n as u32).to_le_bytes());
        out.extend_from_slice(&(self.body.len() as u32).to_le_bytes());
        out.extend_from_slice(&[0; 8]);
        for r in 0..n as u32 {
            out.push(self.token(r).len() as u8);
        }
        out.extend_from_slice(&self.body);
        let mut crc = crc32fast::Hasher::new();
        crc.update(&out[HEADER_BYTES..]);
        let c = crc.finalize().to_le_bytes();
        out[16..20].copy_from_slice(&c);
        out
    }

    /// Number of ranked tokens.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes of rank `r` (which must be below `len()`).
    #[inline]
    pub fn token(&self, r: u32) -> &[u8] {
        let r = r as usize;
        &self.body[self.offsets[r] as usize..self.offsets[r + 1] as usize]
    }

    /// The rank of exactly these bytes.
    #[inline]
    pub fn get(&self, bytes: &[u8]) -> Option<u32> {
        let mut i = hash(bytes) as usize & self.mask;
        loop {
            let r = self.table[i];
            if r == EMPTY {
                return None;
            }
            if self.token(r) == bytes {
                return Some(r);
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Bytes held in memory by the tables.
    pub fn heap_bytes(&self) -> usize {
        self.body.len() + self.offsets.len() * 4 + self.table.len() * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Ranks {
        let toks: Vec<Vec<u8>> = (0u8..=255).map(|b| vec![b]).chain([b"ab".to_vec(), b"abc".to_vec(), b" the".to_vec()]).collect();
        Ranks::from_tokens(toks.iter().map(Vec::as_slice)).unwrap()
    }

    #[test]
    fn lookups_and_asset_round_trip() {
        let r = small();
        assert_eq!((r.get(b"a"), r.get(b"ab"), r.get(b"abc"), r.get(b" the"), r.get(b"abcd")), (Some(97), Some(256), Some(257), Some(258), None));
        let asset = r.to_asset();
        let back = Ranks::from_asset(&asset, 259).unwrap();
        assert_eq!(back.get(b" the"), Some(258));
        assert_eq!(back.to_asset(), asset);
    }

    #[test]
    fn parses_tiktoken_text() {
        let r = Ranks::from_tiktoken("IQ== 0\nIg== 1\nIyQ= 2\n").unwrap();
        assert_eq!((r.get(b"!"), r.get(b"\""), r.get(b"#$")), (Some(0), Some(1), Some(2)));
        for bad in ["IQ== 1\n", "IQ==\n", "I*== 0\n", "IQ= 0\n"] {
            assert!(Ranks::from_tiktoken(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn damaged_assets_are_refused() {
        let asset = small().to_asset();
        assert!(Ranks::from_asset(&asset, 100).is_err(), "wrong token count");
        assert!(Ranks::from_asset(&asset[..asset.len() - 1], 259).is_err(), "truncated");
        let mut bad = asset.clone();
        *bad.last_mut().unwrap() ^= 1;
        assert_eq!(Ranks::from_asset(&bad, 259).err().unwrap().code(), "invalid_input", "checksum");
        assert!(Ranks::from_asset(b"not an asset at all, just text", 259).is_err());
        assert!(Ranks::from_tokens([&b"a"[..], b"a"]).is_err(), "duplicates");
    }
}
