//! Byte-pair merging, exactly as tiktoken does it: repeatedly merge the
//! adjacent pair whose concatenation has the lowest rank, leftmost first on
//! ties. Copying the algorithm (rather than an equivalent one) makes the
//! output identical by construction.

use super::ranks::Ranks;

const NONE: u32 = u32::MAX;

/// Scratch space reused across pieces, so merging allocates nothing in the
/// steady state (caller-owned, as in instant-distance's `Search`).
#[derive(Default)]
pub struct Scratch {
    /// (start byte, rank of the pair starting here)
    parts: Vec<(usize, u32)>,
}

fn pair_rank(ranks: &Ranks, piece: &[u8], parts: &[(usize, u32)], i: usize) -> u32 {
    if i + 3 < parts.len() {
        ranks.get(&piece[parts[i].0..parts[i + 3].0]).unwrap_or(NONE)
    } else {
        NONE
    }
}

/// Merges `piece` (at least two bytes, not itself a token) and calls `emit`
/// with each resulting token, in order.
pub fn merge(ranks: &Ranks, piece: &[u8], scratch: &mut Scratch, mut emit: impl FnMut(u32)) {
    let parts = &mut scratch.parts;
    parts.clear();
    parts.reserve(piece.len() + 1);
    let mut min = (NONE, usize::MAX);
    for i in 0..piece.len() - 1 {
        let r = ranks.get(&piece[i..i + 2]).unwrap_or(NONE);
        if r < min.0 {
            min = (r, i);
        }
        parts.push((i, r));
    }
    parts.push((piece.len() - 1, NONE));
    parts.push((piece.len(), NONE));

    while min.0 != NONE {
        let i = min.1;
        if i > 0 {
            parts[i - 1].1 = pair_rank(ranks, piece, parts, i - 1);
        }
        parts[i].1 = pair_rank(ranks, piece, parts, i);
        parts.remove(i + 1);
        min = (NONE, usize::MAX);
        for (j, &(_, r)) in parts[..parts.len() - 1].iter().enumerate() {
            if r < min.0 {
                min = (r, j);
            }
        }
    }
    for w in parts.windows(2) {
        // Every single byte is a token in OpenAI's encodings, so every
        // remaining part has a rank; `NONE` would mean a broken table.
        emit(ranks.get(&piece[w[0].0..w[1].0]).unwrap_or(NONE));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_lowest_rank_first_leftmost_on_ties() {
        // Ranks: every byte, then "ab" < "bc" < "abc".
        let mut toks: Vec<Vec<u8>> = (0u8..=255).map(|b| vec![b]).collect();
        toks.extend([b"ab".to_vec(), b"bc".to_vec(), b"abc".to_vec(), b"aa".to_vec()]);
        let ranks = Ranks::from_tokens(toks.iter().map(Vec::as_slice)).unwrap();
        let run = |s: &[u8]| {
            let mut out = Vec::new();
            merge(&ranks, s, &mut Scratch::default(), |t| out.push(t));
            out
        };
        assert_eq!(run(b"abc"), vec![258]);
        assert_eq!(run(b"abcx"), vec![258, u32::from(b'x')]);
        // "aaa": pairs (aa, aa) tie: the leftmost merges, leaving "aa" + "a".
        assert_eq!(run(b"aaa"), vec![259, u32::from(b'a')]);
        assert_eq!(run(b"xy"), vec![u32::from(b'x'), u32::from(b'y')]);
    }
}
