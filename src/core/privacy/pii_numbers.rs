//! Number-shaped PII: payment cards, IBANs, US SSNs and phone numbers.
//!
//! All four share one tokenizer, [`Groups`]: digit groups joined by single
//! separators, read at most [`GROUPS_MAX`] groups and [`CARD_DIGITS_MAX`]
//! digits ahead, so an attempt costs a bounded amount. Then each kind checks
//! the grouping it is written in and its checksum or number plan. A date,
//! a price, an order id or a tracking number fails one of those.

use super::scan::{attached_after, digits_len};
use super::{
    CARD_DIGITS_MAX, CARD_DIGITS_MIN, IBAN_CHARS_MAX, IBAN_CHARS_MIN, PHONE_DIGITS_MAX, PHONE_DIGITS_MIN,
    PHONE_NATIONAL_DIGITS_MAX, PHONE_NATIONAL_DIGITS_MIN,
};

/// Most digit groups read for one number (`+1 (415) 555-2671` has four, a
/// 19-digit card in fours five, French numbers six with the country code).
const GROUPS_MAX: usize = 8;

/// Digit groups from a start position: `+`? then groups separated by one of
/// space, `-` or `.`, a group possibly in parentheses.
#[derive(Default)]
pub(super) struct Groups {
    n: usize,
    start: [usize; GROUPS_MAX],
    len: [usize; GROUPS_MAX],
    /// The separator before each group (`0` for none, after a `)`).
    sep: [u8; GROUPS_MAX],
    paren: [bool; GROUPS_MAX],
    plus: bool,
    digits: usize,
    pub(super) end: usize,
}

impl Groups {
    /// Reads groups at `i`; `None` when there are none, or more digits than
    /// any number we look for has (the run is then some longer id).
    pub(super) fn read(b: &[u8], i: usize) -> Option<Groups> {
        let mut g = Groups { plus: b[i] == b'+', ..Groups::default() };
        let mut p = i + usize::from(g.plus);
        let mut sep = 0u8;
        loop {
            let open = b.get(p) == Some(&b'(');
            let s = p + usize::from(open);
            let len = digits_len(&b[s.min(b.len())..], CARD_DIGITS_MAX);
            let close = !open || b.get(s + len) == Some(&b')');
            if len == 0 || !close {
                break;
            }
            if len > CARD_DIGITS_MAX || g.n == GROUPS_MAX {
                return None;
            }
            g.start[g.n] = s;
            g.len[g.n] = len;
            g.sep[g.n] = sep;
            g.paren[g.n] = open;
            g.n += 1;
            g.digits += len;
            if g.digits > CARD_DIGITS_MAX {
                return None;
            }
            p = s + len + usize::from(open);
            g.end = p;
            sep = match b.get(p) {
                Some(&c @ (b' ' | b'-' | b'.')) => c,
                _ if open => 0,
                _ => break,
            };
            p += usize::from(sep != 0);
            if !(b.get(p).is_some_and(u8::is_ascii_digit) || b.get(p) == Some(&b'(')) {
                break;
            }
        }
        (g.n > 0).then_some(g)
    }

    fn group<'a>(&self, b: &'a [u8], k: usize) -> &'a [u8] {
        &b[self.start[k]..self.start[k] + self.len[k]]
    }

    fn lens(&self) -> &[usize] {
        &self.len[..self.n]
    }

    /// All separators between groups are `c`.
    fn seps_all(&self, c: u8) -> bool {
        self.sep[1..self.n].iter().all(|&s| s == c)
    }

    fn any_paren(&self) -> bool {
        self.paren[..self.n].iter().any(|&p| p)
    }

    /// The digits, in order, skipping the groups `skip` says to.
    pub(super) fn digits(&self, b: &[u8], skip: impl Fn(usize) -> bool) -> String {
        (0..self.n).filter(|&k| !skip(k)).flat_map(|k| self.group(b, k).iter().map(|&c| c as char)).collect()
    }

    fn ends_free(&self, b: &[u8]) -> bool {
        !attached_after(b, self.end)
    }
}

/// Luhn's check digit test.
pub(super) fn luhn(digits: &[u8]) -> bool {
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &c)| {
            let d = u32::from(c - b'0');
            if i % 2 == 1 {
                if d * 2 > 9 { d * 2 - 9 } else { d * 2 }
            } else {
                d
            }
        })
        .sum();
    sum % 10 == 0
}

/// Whether `d` starts with a card issuer's prefix and has a length that
/// issuer uses: without this, a tracking number that passes Luhn by chance
/// (one in ten do) would be taken for a card.
fn card_issuer(d: &[u8]) -> bool {
    let n = d.len();
    let prefix = |k: usize| d[..k].iter().fold(0u32, |a, &c| a * 10 + u32::from(c - b'0'));
    let (p2, p3, p4) = (prefix(2), prefix(3), prefix(4));
    match d[0] {
        b'4' => matches!(n, 13 | 16 | 19),
        b'5' => (51..=55).contains(&p2) && n == 16,
        b'2' => (2221..=2720).contains(&p4) && n == 16,
        b'3' => match p2 {
            34 | 37 => n == 15,
            35 => (3528..=3589).contains(&p4) && (16..=19).contains(&n),
            36 | 38 | 39 => (14..=19).contains(&n),
            30 => (300..=305).contains(&p3) && (14..=19).contains(&n),
            _ => false,
        },
        b'6' => (p4 == 6011 || p2 == 65 || (644..=649).contains(&p3)) && (16..=19).contains(&n),
        _ => false,
    }
}

/// A payment card: 13–19 digits, contiguous or in groups of four (Amex and
/// Diners 4-6-5 and 4-6-4) joined by one kind of separator, a known issuer
/// prefix and a valid Luhn digit.
pub(super) fn card(b: &[u8], g: &Groups) -> bool {
    if g.plus || g.any_paren() || !(CARD_DIGITS_MIN..=CARD_DIGITS_MAX).contains(&g.digits) || !g.ends_free(b) {
        return false;
    }
    let lens = g.lens();
    let grouped = match g.n {
        1 => true,
        _ if !(g.seps_all(b' ') || g.seps_all(b'-')) => false,
        3 if lens[0] == 4 && lens[1] == 6 && (lens[2] == 4 || lens[2] == 5) => true,
        _ => g.n >= 3 && lens[..g.n - 1].iter().all(|&l| l == 4) && lens[g.n - 1] <= 4,
    };
    let d = g.digits(b, |_| false);
    grouped && card_issuer(d.as_bytes()) && luhn(d.as_bytes())
}

/// A US Social Security number `AAA-GG-SSSS` outside the never-issued
/// ranges: area 000, 666 and 900–999, group 00, serial 0000.
pub(super) fn ssn(b: &[u8], g: &Groups) -> bool {
    if g.plus || g.any_paren() || g.lens() != [3, 2, 4] || !g.seps_all(b'-') || !g.ends_free(b) {
        return false;
    }
    let (area, group, serial) = (g.group(b, 0), g.group(b, 1), g.group(b, 2));
    area != b"000" && area != b"666" && area[0] != b'9' && group != b"00" && serial != b"0000"
}

/// A phone number: international (`+`, a country code, 8–15 digits, a
/// `(0)` trunk prefix allowed), North American (`(415) 555-2671`,
/// `415-555-2671`, `415.555.2671`, `1-415-555-2671`) or national with a
/// trunk zero (`020 7946 0958`, `030 1234567`, `01 23 45 67 89`).
/// Undelimited national numbers are not taken: they look like any id.
pub(super) fn phone(b: &[u8], g: &Groups) -> bool {
    if !g.ends_free(b) {
        return false;
    }
    let lens = g.lens();
    if g.plus {
        let trunk = |k: usize| k == 1 && g.paren[1] && g.group(b, 1) == b"0";
        let digits = g.digits - if g.n > 1 && trunk(1) { 1 } else { 0 };
        let cc_ok = lens[0] <= 3 || g.n == 1;
        let parens_ok = !g.paren[0] && (1..g.n).filter(|&k| g.paren[k]).count() <= 1;
        return cc_ok && parens_ok && (PHONE_DIGITS_MIN..=PHONE_DIGITS_MAX).contains(&digits) && b[g.start[0]] != b'0';
    }
    nanp(b, g) || trunk_national(b, g)
}

fn nanp(b: &[u8], g: &Groups) -> bool {
    let lens = g.lens();
    let first = match lens {
        [3, 3, 4] => 0,
        [1, 3, 3, 4] if g.group(b, 0) == b"1" && !g.paren[0] => 1,
        _ => return false,
    };
    let (area, exchange) = (g.group(b, first), g.group(b, first + 1));
    if !(b'2'..=b'9').contains(&area[0]) || !(b'2'..=b'9').contains(&exchange[0]) {
        return false;
    }
    if g.paren[first + 1] || g.paren[first + 2] || (first == 1 && g.sep[1] == 0) {
        return false;
    }
    if g.paren[first] {
        // `(415) 555-2671`, `(415)555-2671`, `1 (415) 555 2671`.
        matches!(g.sep[first + 1], 0 | b' ') && matches!(g.sep[first + 2], b'-' | b' ' | b'.')
    } else {
        let s = g.sep[first + 1];
        s != 0 && g.sep[first + 1..g.n].iter().all(|&x| x == s) && (first == 0 || g.sep[1] == s)
    }
}

fn trunk_national(b: &[u8], g: &Groups) -> bool {
    let lens = g.lens();
    let first = g.group(b, 0);
    if g.any_paren() || !(2..=6).contains(&g.n) || first[0] != b'0' || first.get(1) == Some(&b'0') || !(2..=5).contains(&lens[0]) {
        return false;
    }
    if !(PHONE_NATIONAL_DIGITS_MIN..=PHONE_NATIONAL_DIGITS_MAX).contains(&g.digits) || lens.iter().any(|&l| l < 2) {
        return false;
    }
    // Dots only in the French pairs (`01.23.45.67.89`), where no date fits.
    g.seps_all(b' ') || g.seps_all(b'-') || (g.seps_all(b'.') && g.n == 5 && lens.iter().all(|&l| l == 2))
}

/// Expected IBAN length by country (ISO 13616 registry, the countries most
/// often seen); other countries are accepted only in printed form.
fn iban_len(cc: &[u8]) -> Option<usize> {
    const LENS: &[(&[u8; 2], usize)] = &[
        (b"AD", 24), (b"AE", 23), (b"AL", 28), (b"AT", 20), (b"AZ", 28), (b"BA", 20), (b"BE", 16), (b"BG", 22),
        (b"BH", 22), (b"BR", 29), (b"CH", 21), (b"CR", 22), (b"CY", 28), (b"CZ", 24), (b"DE", 22), (b"DK", 18),
        (b"DO", 28), (b"EE", 20), (b"EG", 29), (b"ES", 24), (b"FI", 18), (b"FO", 18), (b"FR", 27), (b"GB", 22),
        (b"GE", 22), (b"GI", 23), (b"GL", 18), (b"GR", 27), (b"GT", 28), (b"HR", 21), (b"HU", 28), (b"IE", 22),
        (b"IL", 23), (b"IS", 26), (b"IT", 27), (b"JO", 30), (b"KW", 30), (b"KZ", 20), (b"LB", 28), (b"LI", 21),
        (b"LT", 20), (b"LU", 20), (b"LV", 21), (b"MC", 27), (b"MD", 24), (b"ME", 22), (b"MK", 19), (b"MR", 27),
        (b"MT", 31), (b"MU", 30), (b"NL", 18), (b"NO", 15), (b"PK", 24), (b"PL", 28), (b"PS", 29), (b"PT", 25),
        (b"QA", 29), (b"RO", 24), (b"RS", 22), (b"SA", 24), (b"SE", 24), (b"SI", 19), (b"SK", 24), (b"SM", 27),
        (b"TN", 24), (b"TR", 26), (b"UA", 29), (b"VA", 22), (b"VG", 24), (b"XK", 20),
    ];
    LENS.iter().find(|(c, _)| c[..] == *cc).map(|&(_, n)| n)
}

/// ISO 7064 mod 97-10 over an IBAN's characters: valid when 1.
fn mod97(iban: &[u8]) -> bool {
    let rotated = iban[4..].iter().chain(&iban[..4]);
    let rem = rotated.fold(0u32, |r, &c| match c {
        b'0'..=b'9' => (r * 10 + u32::from(c - b'0')) % 97,
        _ => (r * 100 + u32::from(c - b'A') + 10) % 97,
    });
    rem == 1
}

/// An IBAN starting at `i` (two capitals, two digits), contiguous or in
/// printed groups of four; returns its end and its characters.
pub(super) fn iban(b: &[u8], i: usize) -> Option<(usize, Vec<u8>)> {
    let head = b.get(i..i + 4)?;
    if !head[..2].iter().all(u8::is_ascii_uppercase) || !head[2..].iter().all(u8::is_ascii_digit) {
        return None;
    }
    let want = iban_len(&head[..2]);
    let is_char = |c: &u8| c.is_ascii_uppercase() || c.is_ascii_digit();
    let mut chars = head.to_vec();
    // Each candidate end: (end offset, chars so far), at group boundaries.
    let mut ends: Vec<(usize, usize)> = Vec::new();
    let mut p = i + 4;
    if b.get(p) == Some(&b' ') {
        while b.get(p) == Some(&b' ') && chars.len() < IBAN_CHARS_MAX {
            let len = b[p + 1..].iter().take(5).take_while(|c| is_char(c)).count();
            if len == 0 || len > 4 || b.get(p + 1 + len).is_some_and(|c| c.is_ascii_alphanumeric()) {
                break;
            }
            chars.extend_from_slice(&b[p + 1..p + 1 + len]);
            p += 1 + len;
            ends.push((p, chars.len()));
            if len < 4 {
                break;
            }
        }
    } else {
        let len = b[p..].iter().take(IBAN_CHARS_MAX).take_while(|c| is_char(c)).count();
        if want.is_none() || b.get(p + len).is_some_and(|c| c.is_ascii_alphanumeric()) {
            return None;
        }
        chars.extend_from_slice(&b[p..p + len]);
        ends.push((p + len, chars.len()));
    }
    // The longest candidate that has the country's length (or, for others,
    // a plausible one) and a valid checksum.
    ends.iter().rev().find_map(|&(end, n)| {
        let len_ok = want.map_or((IBAN_CHARS_MIN..=IBAN_CHARS_MAX).contains(&n), |w| w == n);
        (len_ok && mod97(&chars[..n])).then(|| (end, chars[..n].to_vec()))
    })
}
