//! Byte-level helpers the scanners share. Every detector works on ASCII
//! shapes, so a span starts and ends next to ASCII bytes and is always on
//! char boundaries; bytes of other scripts count as separators, which lets
//! a number written right after CJK text still be found.

/// Whether `c` may continue a word: an ASCII letter, digit or underscore.
pub(super) fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Joiners that glue two words into one identifier (`ORD-2024`, `v1.2`,
/// `a/b`): a number next to one of these and a word is part of that word.
/// Not `@`: `admin@10.0.0.1` names a host.
fn is_joiner(c: u8) -> bool {
    matches!(c, b'-' | b'.' | b'/' | b'_' | b'\\' | b'#' | b'$' | b'%' | b'+' | b'~')
}

/// Whether a match starting at `i` would be glued to what precedes it: a
/// word character, or a joiner that itself follows a word character.
pub(super) fn attached_before(b: &[u8], i: usize) -> bool {
    if i == 0 {
        return false;
    }
    let p = b[i - 1];
    is_word(p) || (is_joiner(p) && i >= 2 && is_word(b[i - 2]))
}

/// Whether a match ending at `end` would be glued to what follows it: a word
/// character, or a joiner (or a decimal comma) followed by one.
pub(super) fn attached_after(b: &[u8], end: usize) -> bool {
    let Some(&n) = b.get(end) else { return false };
    if is_word(n) {
        return true;
    }
    (is_joiner(n) || n == b',') && b.get(end + 1).is_some_and(|&c| c.is_ascii_alphanumeric())
}

/// Length of the run of ASCII digits at the front of `b`, counting at most `max + 1`.
pub(super) fn digits_len(b: &[u8], max: usize) -> usize {
    b.iter().take(max + 1).take_while(|c| c.is_ascii_digit()).count()
}

/// Whether `b` at `i` starts with `prefix`, ignoring ASCII case.
pub(super) fn starts_with_ci(b: &[u8], i: usize, prefix: &[u8]) -> bool {
    b.len() >= i + prefix.len() && b[i..i + prefix.len()].eq_ignore_ascii_case(prefix)
}

/// The non-overlapping subset of `spans` (each `(start, end, ..)`): the
/// earliest-starting span wins, and of those starting together the longest.
/// Input order breaks the remaining ties, so callers list stronger kinds first.
pub(super) fn resolve_overlaps<T>(mut spans: Vec<(usize, usize, T)>) -> Vec<(usize, usize, T)> {
    spans.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    let mut out: Vec<(usize, usize, T)> = Vec::with_capacity(spans.len());
    for s in spans {
        if out.last().is_none_or(|last| s.0 >= last.1) {
            out.push(s);
        }
    }
    out
}
