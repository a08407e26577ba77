//! The fuzzer's mutations: byte-level edits, interesting integers, and
//! dictionary tokens of the formats the targets decode.

use super::super::sim::Rng;
use super::INPUT_BYTES_MAX;

// ---------------------------------------------------------------------------
// Mutation.

/// MessagePack markers and lengths worth trying: big lengths, every family
/// of marker, deep nesting.
pub(super) const MSGPACK_TOKENS: &[&[u8]] = &[
    &[0xc0],
    &[0xc2],
    &[0xc3],
    &[0xcc, 0xff],
    &[0xcd, 0xff, 0xff],
    &[0xce, 0xff, 0xff, 0xff, 0xff],
    &[0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
    &[0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0],
    &[0xcb, 0x7f, 0xf8, 0, 0, 0, 0, 0, 0],
    &[0xca, 0x7f, 0xc0, 0, 0],
    &[0xd9, 0xff],
    &[0xda, 0xff, 0xff],
    &[0xdb, 0xff, 0xff, 0xff, 0xff],
    &[0xc4, 0xff],
    &[0xc6, 0xff, 0xff, 0xff, 0xff],
    &[0xdc, 0xff, 0xff],
    &[0xdd, 0xff, 0xff, 0xff, 0xff],
    &[0xde, 0xff, 0xff],
    &[0xdf, 0xff, 0xff, 0xff, 0xff],
    &[0xc7, 0x01, 0x05, 0x00],
    &[0xd4, 0x01, 0x00],
    &[0x90],
    &[0x80],
    &[0xa0],
    &[0x91, 0x91, 0x91, 0x91, 0x91, 0x91, 0x91, 0x91],
    &[0x81, 0xa1, b'a', 0x81, 0xa1, b'a', 0x81, 0xa1, b'a'],
    &[0xa3, 0xff, 0xfe, 0xfd],
    &[0xa2, 0xc3, 0x28],
    &[0xa4, 0xf0, 0x9f, 0x98, 0x80],
    &[0xd9, 0x1e, b'$', b's', b'e', b'r', b'd', b'e', b'_', b'j', b's', b'o', b'n', b':', b':', b'p', b'r', b'i', b'v', b'a', b't', b'e', b':', b':', b'N', b'u', b'm', b'b', b'e', b'r'],
];

/// JSON fragments worth trying.
pub(super) const JSON_TOKENS: &[&[u8]] = &[
    b"null",
    b"true",
    b"-1",
    b"0",
    b"1e999",
    b"-0",
    b"1.5",
    b"12345678901234567890123456789012345678901234567890",
    b"0.0000000000000000000000000001",
    b"\"\"",
    b"\"\\u0000\"",
    b"\"\\ud800\"",
    b"\"a/b\"",
    b"\"..\"",
    b"\"2026-11-18T11:00:00Z\"",
    b"\"99999999999999999999999999.999999\"",
    b"\"-1.0\"",
    b"{}",
    b"[]",
    b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
    b"{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{}}}}}}}}}}",
    b",",
    b":",
    b"\"id\"",
    b"\"amount\"",
    b"\"session_id\"",
    b"\"messages\"",
    b"\"pending\":true",
    b"\"timeout_seconds\":0",
    b"\"linked\":true",
    b"\"ttl_seconds\":18446744073709551615",
    b"\xff\xfe",
];

pub(super) const INTERESTING_U64: &[u64] = &[0, 1, 2, 7, 8, 15, 16, 31, 32, 63, 64, 127, 128, 255, 256, 0x7fff, 0x8000, 0xffff, 0x1_0000, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff, 0x1_0000_0000, u64::MAX / 2, u64::MAX - 1, u64::MAX];

/// Applies random mutations to `b`: one half of the time (so that many
/// inputs stay close enough to valid to reach deep), else two to four.
pub(super) fn mutate(rng: &mut Rng, b: &mut Vec<u8>, corpus: &[Vec<u8>], tokens: &[&[u8]]) {
    let n = if rng.chance(0.5) { 1 } else { rng.range(2, 4) };
    for _ in 0..n {
        let len = b.len();
        match rng.below(12) {
            0 | 1 if len > 0 => {
                let i = rng.below(len);
                b[i] ^= 1 << rng.below(8);
            }
            2 if len > 0 => {
                let i = rng.below(len);
                b[i] = rng.pick(&[0x00, 0x01, 0x7f, 0x80, 0xff, 0xc0, 0xc1, 0xdc, 0xdd, 0xde, 0xdf, 0x90, 0x9f, 0x80, 0x8f, 0xa0, 0xbf, 0xd9, 0xc4, b'"', b'{', b'[', b'\\', b'0', b'9', b'-', b'.', b'e']);
            }
            3 if len > 0 => {
                let w = rng.pick(&[1usize, 2, 4, 8]);
                let i = rng.below(len);
                let v = rng.pick(INTERESTING_U64);
                let bytes = if rng.chance(0.5) { v.to_le_bytes() } else { v.to_be_bytes() };
                for k in 0..w.min(len - i) {
                    b[i + k] = if rng.chance(0.5) { bytes[k] } else { bytes[8 - w + k] };
                }
            }
            4 => {
                let at = rng.below(len + 1);
                let n = rng.range(1, 8) as usize;
                let ins: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
                b.splice(at..at, ins);
            }
            5 if len > 0 => {
                let at = rng.below(len);
                let n = (rng.range(1, 16) as usize).min(len - at);
                b.drain(at..at + n);
            }
            6 if len > 1 => {
                // Duplicate a range elsewhere.
                let from = rng.below(len);
                let n = (rng.range(1, 64) as usize).min(len - from);
                let chunk = b[from..from + n].to_vec();
                let at = rng.below(len + 1);
                b.splice(at..at, chunk);
            }
            7 if !corpus.is_empty() => {
                // Splice: our prefix, another input's suffix.
                let other = &corpus[rng.below(corpus.len())];
                let cut = rng.below(len + 1);
                let from = rng.below(other.len() + 1);
                b.truncate(cut);
                b.extend_from_slice(&other[from..]);
            }
            8 if len > 0 => {
                b.truncate(rng.below(len));
            }
            9 | 10 if !tokens.is_empty() => {
                let t = rng.pick(tokens);
                let at = rng.below(len + 1);
                if rng.chance(0.5) && at < len {
                    let end = (at + t.len()).min(len);
                    b.splice(at..end, t.iter().copied());
                } else {
                    b.splice(at..at, t.iter().copied());
                }
            }
            _ if len > 0 => {
                // Swap two bytes.
                let (i, j) = (rng.below(len), rng.below(len));
                b.swap(i, j);
            }
            _ => b.push(rng.next() as u8),
        }
    }
    b.truncate(INPUT_BYTES_MAX);
}

pub(super) fn pick_mutated(rng: &mut Rng, corpus: &[Vec<u8>], tokens: &[&[u8]]) -> Vec<u8> {
    let mut b = corpus[rng.below(corpus.len())].clone();
    mutate(rng, &mut b, corpus, tokens);
    b
}
