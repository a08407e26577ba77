//! tiktoken's pre-tokenizer without a regex engine.
//!
//! tiktoken splits text with a fancy-regex pattern before BPE; the token ids
//! depend on that split, so ours must be identical. A regex engine with the
//! Unicode tables the patterns need would add hundreds of KB to the wasm, so
//! each pattern is a hand-written scanner instead. Every function below
//! mirrors one alternative of the pattern, in the pattern's order, with the
//! engine's leftmost-first backtracking worked out by hand (the comments say
//! how). Characters are classified by an ASCII table and, above ASCII, by
//! the runs in [`super::unicode_table`], generated from regex-syntax
//! (Unicode 16.0), the crate fancy-regex uses; two small tables derived from
//! them at compile time make two-byte chars a direct lookup and narrow the
//! binary search for the rest to one 256-code-point block.
//!
//! The native tests compare every split with fancy-regex compiled from
//! tiktoken's own pattern strings, on the shared corpus, edge cases and a
//! fuzz run, and regenerate the Unicode table to prove it is current.

use super::unicode_table::RUNS;
use std::iter::FusedIterator;

/// Which encoding's split pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    /// `cl100k_base` (tiktoken 0.14's possessive form).
    Cl100k,
    /// `o200k_base`.
    O200k,
}

/// The pieces of `text` exactly as tiktoken's regex finds them
/// (`encode_ordinary`), in order, covering all of `text`. Special tokens are
/// the caller's business: tiktoken runs the regex on each stretch between
/// them, so the caller must too (`$` and `(?!\S)` see the stretch's end).
/// Where tiktoken itself fails (fancy-regex's backtracking stack overflows
/// on a run of about a million whitespace chars without a newline followed
/// by a non-space, or, for o200k, ending the text), this still returns the
/// split the pattern defines.
pub fn pieces(pattern: Pattern, text: &str) -> Pieces<'_> {
    Pieces { text, pos: 0, pattern }
}

/// Iterator over the pieces of a text; see [`pieces`]. Allocates nothing.
#[derive(Debug, Clone)]
pub struct Pieces<'a> {
    text: &'a str,
    pos: usize,
    pattern: Pattern,
}

impl<'a> Iterator for Pieces<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let start = self.pos;
        let b = self.text.as_bytes();
        if start >= b.len() {
            return None;
        }
        let end = match self.pattern {
            Pattern::Cl100k => cl100k_end(b, start),
            Pattern::O200k => o200k_end(b, start),
        };
        // Every alternative consumes at least one char and stays in bounds;
        // the clamp only guards against a bug turning into a hang or panic.
        debug_assert!(end > start && end <= b.len() && self.text.is_char_boundary(end));
        let end = if end > start && end <= b.len() { end } else { b.len() };
        match self.text.get(start..end) {
            Some(piece) => {
                self.pos = end;
                Some(piece)
            }
            None => {
                self.pos = b.len();
                self.text.get(start..)
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.text.len().saturating_sub(self.pos);
        (usize::from(left > 0), Some(left))
    }
}

impl FusedIterator for Pieces<'_> {}

// Character class flags. The general categories are disjoint and no
// White_Space char is a letter, mark or number (the table test checks), so a
// char's flags are one of: Lu/Lt = LETTER|UPPER, Ll = LETTER|LOWER,
// Lm/Lo = LETTER|UPPER|LOWER, M = UPPER|LOWER, N = NUMBER, White_Space =
// SPACE (plus NEWLINE for \r and \n), anything else = 0.

/// `\p{L}`.
const LETTER: u8 = 1;
/// o200k's `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`.
const UPPER: u8 = 2;
/// o200k's `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`.
const LOWER: u8 = 4;
/// `\p{N}`.
const NUMBER: u8 = 8;
/// `\s`: Unicode White_Space (includes U+0085, excludes U+FEFF).
const SPACE: u8 = 16;
/// `\r` or `\n` (ASCII only).
const NEWLINE: u8 = 32;

/// Flags of each ASCII char, so the common case needs no search.
static ASCII: [u8; 128] = ascii_flags();

const fn ascii_flags() -> [u8; 128] {
    let mut t = [0u8; 128];
    let mut c = 0;
    while c < 128 {
        t[c] = match c as u8 {
            b'A'..=b'Z' => LETTER | UPPER,
            b'a'..=b'z' => LETTER | LOWER,
            b'0'..=b'9' => NUMBER,
            b'\r' | b'\n' => SPACE | NEWLINE,
            b'\t' | 0x0b | 0x0c | b' ' => SPACE,
            _ => 0,
        };
        c += 1;
    }
    t
}

/// Code points per block of [`BLOCK_FIRST_RUN`].
const BLOCK_SHIFT: u32 = 8;
/// Blocks with an index entry: the first three planes. Above them (rare
/// CJK, tags, private use) the search covers all runs.
const BLOCKS_INDEXED: usize = 0x3_0000 >> BLOCK_SHIFT;

/// For each block of 256 code points, the index of the run holding its first
/// code point, so a lookup searches only the few runs inside one block.
/// Built at compile time from [`RUNS`]: 1.5 KB instead of 12 search steps.
static BLOCK_FIRST_RUN: [u16; BLOCKS_INDEXED + 1] = block_first_run();

const fn block_first_run() -> [u16; BLOCKS_INDEXED + 1] {
    assert!(RUNS.len() <= u16::MAX as usize);
    let mut out = [0u16; BLOCKS_INDEXED + 1];
    let mut run = 0;
    let mut k = 0;
    while k <= BLOCKS_INDEXED {
        let first = (k as u32) << BLOCK_SHIFT;
        while run + 1 < RUNS.len() && RUNS[run + 1] >> 8 <= first {
            run += 1;
        }
        out[k] = run as u16;
        k += 1;
    }
    out
}

/// The flag values a non-ASCII char can have, numbered for [`TWO_BYTE`].
const CLASS_FLAGS: [u8; 7] = [0, LETTER | UPPER, LETTER | LOWER, LETTER | UPPER | LOWER, UPPER | LOWER, NUMBER, SPACE];

/// Class numbers of U+0080..U+07FF (two-byte UTF-8: Latin, Greek, Cyrillic,
/// Hebrew, Arabic), two per byte, so those scripts skip the search. Built at
/// compile time from [`RUNS`]: 960 bytes.
static TWO_BYTE: [u8; 0x780 / 2] = two_byte_classes();

const fn two_byte_classes() -> [u8; 0x780 / 2] {
    let mut out = [0u8; 0x780 / 2];
    let mut run = 0;
    let mut cp = 0x80u32;
    while cp < 0x800 {
        while run + 1 < RUNS.len() && RUNS[run + 1] >> 8 <= cp {
            run += 1;
        }
        let flags = RUNS[run] as u8;
        let mut class = 0;
        while CLASS_FLAGS[class] != flags {
            class += 1; // out of bounds (a compile error) if a flag value is missing
        }
        let k = (cp - 0x80) as usize;
        out[k / 2] |= (class as u8) << ((k % 2) * 4);
        cp += 1;
    }
    out
}

/// Flags of a non-ASCII code point: those of the last run starting at or
/// below it.
fn unicode_flags(cp: u32) -> u8 {
    if let Some(k) = cp.checked_sub(0x80).map(|k| k as usize).filter(|&k| k < 0x780) {
        let class = TWO_BYTE.get(k / 2).map_or(0, |&pair| (pair >> ((k % 2) * 4)) & 0x0f);
        return CLASS_FLAGS.get(class as usize).copied().unwrap_or(0);
    }
    let k = (cp >> BLOCK_SHIFT) as usize;
    let runs = match (BLOCK_FIRST_RUN.get(k), BLOCK_FIRST_RUN.get(k + 1)) {
        (Some(&lo), Some(&hi)) => RUNS.get(lo as usize..=hi as usize).unwrap_or(&RUNS),
        _ => &RUNS,
    };
    let after = runs.partition_point(|&run| run >> 8 <= cp);
    match after.checked_sub(1).and_then(|k| runs.get(k)) {
        Some(&run) => run as u8,
        None => 0,
    }
}

/// Flags and byte length of the char at `i`, or `None` at the end. `i` is
/// always a char boundary of valid UTF-8; the decode still never indexes
/// out of bounds.
#[inline(always)]
fn char_at(b: &[u8], i: usize) -> Option<(u8, usize)> {
    let b0 = *b.get(i)?;
    if b0 < 0x80 {
        return Some((ASCII[b0 as usize], 1));
    }
    let cont = |k: usize| (b.get(i + k).copied().unwrap_or(0x80) & 0x3f) as u32;
    let (cp, n) = if b0 < 0xe0 {
        (((b0 as u32 & 0x1f) << 6) | cont(1), 2)
    } else if b0 < 0xf0 {
        (((b0 as u32 & 0x0f) << 12) | (cont(1) << 6) | cont(2), 3)
    } else {
        (((b0 as u32 & 0x07) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3), 4)
    };
    Some((unicode_flags(cp), n.min(b.len() - i)))
}

/// End of the run of chars from `i` whose flags satisfy `pred`.
#[inline(always)]
fn run_while(b: &[u8], mut i: usize, pred: impl Fn(u8) -> bool) -> usize {
    while let Some((f, n)) = char_at(b, i) {
        if !pred(f) {
            break;
        }
        i += n;
    }
    i
}

/// `[^\s\p{L}\p{N}]`: punctuation, symbols, marks, controls.
#[inline(always)]
fn is_other(f: u8) -> bool {
    f & (SPACE | LETTER | NUMBER) == 0
}

/// Byte length of the char at `i` if it matches ASCII lowercase `letter`
/// under `(?i)`, else 0. regex-syntax's simple case folding adds one
/// non-ASCII variant to these letters: U+017F (ſ) for `s` (a test checks).
#[inline(always)]
fn fold_letter(b: &[u8], i: usize, letter: u8) -> usize {
    match b.get(i) {
        Some(&c) if c | 0x20 == letter => 1,
        Some(&0xc5) if letter == b's' && b.get(i + 1) == Some(&0xbf) => 2,
        _ => 0,
    }
}

/// Byte length of a contraction suffix right after an apostrophe at `i - 1`
/// (cl100k `(?i:[sdmt]|ll|ve|re)`, o200k `(?i:'s|'t|'re|'ve|'m|'ll|'d)`:
/// the same set; the alternatives start with different letters, so their
/// order does not matter), or 0.
fn contraction(b: &[u8], i: usize) -> usize {
    for letter in [b's', b'd', b'm', b't'] {
        let n = fold_letter(b, i, letter);
        if n > 0 {
            return n;
        }
    }
    for (first, second) in [(b'l', b'l'), (b'v', b'e'), (b'r', b'e')] {
        let n = fold_letter(b, i, first);
        if n > 0 {
            let m = fold_letter(b, i + n, second);
            if m > 0 {
                return n + m;
            }
        }
    }
    0
}

/// A whitespace run from its first char.
struct SpaceRun {
    /// First byte after the run.
    end: usize,
    /// Start of the run's last char.
    last: usize,
    /// First byte after the run's last `\r` or `\n`, if it has one.
    after_newline: Option<usize>,
}

fn space_run(b: &[u8], mut i: usize) -> SpaceRun {
    let mut last = i;
    let mut after_newline = None;
    while let Some((f, n)) = char_at(b, i) {
        if f & SPACE == 0 {
            break;
        }
        if f & NEWLINE != 0 {
            after_newline = Some(i + n);
        }
        last = i;
        i += n;
    }
    SpaceRun { end: i, last, after_newline }
}

/// End of the piece starting at `i` under cl100k:
/// `'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+|
/// ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s`.
fn cl100k_end(b: &[u8], i: usize) -> usize {
    let Some((f, n)) = char_at(b, i) else { return b.len() };
    let c = b.get(i).copied().unwrap_or(0);
    // '(?i:[sdmt]|ll|ve|re)
    if c == b'\'' {
        let m = contraction(b, i + 1);
        if m > 0 {
            return i + 1 + m;
        }
    }
    // [^\r\n\p{L}\p{N}]?+\p{L}++ (giving the optional char back cannot help:
    // then \p{L} would have to match that very non-letter)
    if f & LETTER != 0 {
        return run_while(b, i + n, |g| g & LETTER != 0);
    }
    if f & (NUMBER | NEWLINE) == 0 {
        if let Some((g, m)) = char_at(b, i + n) {
            if g & LETTER != 0 {
                return run_while(b, i + n + m, |g| g & LETTER != 0);
            }
        }
    }
    // \p{N}{1,3}+
    if f & NUMBER != 0 {
        return digits3(b, i + n);
    }
    // ` ?[^\s\p{L}\p{N}]++[\r\n]*+` (without the space, a space start fails)
    let p = if c == b' ' { i + 1 } else { i };
    if matches!(char_at(b, p), Some((g, _)) if is_other(g)) {
        let j = run_while(b, p, is_other);
        return run_while(b, j, |g| g & NEWLINE != 0);
    }
    // Only whitespace is left.
    let run = space_run(b, i);
    if run.end == b.len() {
        // \s++$
        b.len()
    } else if let Some(end) = run.after_newline {
        // \s*[\r\n]: \s* gives back chars until a newline follows.
        end
    } else if run.last > i {
        // \s+(?!\S): gives back the last space, which is not \S.
        run.last
    } else {
        // \s
        i + n
    }
}

/// The end of up to two more `\p{N}` after one (`\p{N}{1,3}`).
fn digits3(b: &[u8], mut j: usize) -> usize {
    for _ in 0..2 {
        match char_at(b, j) {
            Some((g, m)) if g & NUMBER != 0 => j += m,
            _ => break,
        }
    }
    j
}

/// End of the piece starting at `i` under o200k, the `|`-join of
/// `[^\r\n\p{L}\p{N}]?[UPPER]*[LOWER]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
/// `[^\r\n\p{L}\p{N}]?[UPPER]+[LOWER]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
/// `\p{N}{1,3}`, ` ?[^\s\p{L}\p{N}]+[\r\n/]*`, `\s*[\r\n]+`, `\s+(?!\S)`,
/// `\s+`, where UPPER = `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]` and LOWER =
/// `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`.
fn o200k_end(b: &[u8], i: usize) -> usize {
    let Some((f, n)) = char_at(b, i) else { return b.len() };
    // Both word alternatives need an UPPER or LOWER char right at the start
    // or after the optional first char; checking that first keeps spaces
    // and punctuation off the slow path.
    let prefix = f & (LETTER | NUMBER | NEWLINE) == 0;
    let word_char = |g: u8| g & (UPPER | LOWER) != 0;
    if word_char(f) || (prefix && matches!(char_at(b, i + n), Some((g, _)) if word_char(g))) {
        // The optional first char is tried taken, then not taken; the first
        // alternative is tried both ways before the second.
        let word = (if prefix { upper_lower(b, i + n) } else { None })
            .or_else(|| upper_lower(b, i))
            .or_else(|| if prefix { upper_then_lower(b, i + n) } else { None })
            .or_else(|| upper_then_lower(b, i));
        if let Some(end) = word {
            // (?i:'s|'t|'re|'ve|'m|'ll|'d)?
            if b.get(end) == Some(&b'\'') {
                let m = contraction(b, end + 1);
                if m > 0 {
                    return end + 1 + m;
                }
            }
            return end;
        }
    }
    // \p{N}{1,3}
    if f & NUMBER != 0 {
        return digits3(b, i + n);
    }
    // ` ?[^\s\p{L}\p{N}]+[\r\n/]*`
    let c = b.get(i).copied().unwrap_or(0);
    let p = if c == b' ' { i + 1 } else { i };
    if matches!(char_at(b, p), Some((g, _)) if is_other(g)) {
        let j = run_while(b, p, is_other);
        let mut k = j;
        while matches!(b.get(k), Some(b'\r' | b'\n' | b'/')) {
            k += 1;
        }
        return k;
    }
    // Only whitespace is left.
    let run = space_run(b, i);
    if let Some(end) = run.after_newline {
        // \s*[\r\n]+: \s* gives back chars until a newline follows; the
        // newline is the run's last, so [\r\n]+ takes just it.
        end
    } else if run.end == b.len() {
        // \s+(?!\S) at the end of the text.
        b.len()
    } else if run.last > i {
        // \s+(?!\S): gives back the last space, which is not \S.
        run.last
    } else {
        // \s+ of one char (a longer run matched the alternative before).
        i + n
    }
}

/// `[UPPER]*[LOWER]+` from `s`, if it matches. The greedy `[UPPER]*` gives
/// chars back until `[LOWER]+` can start: right after the UPPER run if a
/// lowercase letter follows, else at the run's last char that is in both
/// sets (Lm, Lo, M).
fn upper_lower(b: &[u8], s: usize) -> Option<usize> {
    let mut j = s;
    let mut last_both = None;
    let lower_from = loop {
        match char_at(b, j) {
            Some((f, n)) if f & UPPER != 0 => {
                if f & LOWER != 0 {
                    last_both = Some(j);
                }
                j += n;
            }
            Some((f, _)) if f & LOWER != 0 => break j,
            _ => break last_both?,
        }
    };
    Some(run_while(b, lower_from, |f| f & LOWER != 0))
}

/// `[UPPER]+[LOWER]*` from `s`, if it matches.
fn upper_then_lower(b: &[u8], s: usize) -> Option<usize> {
    let j = run_while(b, s, |f| f & UPPER != 0);
    if j == s {
        return None;
    }
    Some(run_while(b, j, |f| f & LOWER != 0))
}

#[cfg(all(test, not(target_arch = "wasm32")))]
#[path = "pretok_tests.rs"]
mod tests;
