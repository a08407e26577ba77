//! Network-shaped PII: email addresses and IP addresses.

use std::net::Ipv6Addr;

use super::scan::{is_word, starts_with_ci};
use super::{EMAIL_DOMAIN_BYTES_MAX, EMAIL_LOCAL_BYTES_MAX, IPV6_TEXT_BYTES_MAX};

/// Characters of an email's local part: the dot-atom subset people use
/// (`'`, `=` and `/` are legal too, but next to an `@` in text they are
/// far more often quotes and assignments).
fn is_local(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'%' | b'+' | b'-')
}

/// The email address around the `@` at `at`, as `(start, end)`.
pub(super) fn email(b: &[u8], at: usize) -> Option<(usize, usize)> {
    let mut s = at;
    while s > 0 && is_local(b[s - 1]) {
        if at - s == EMAIL_LOCAL_BYTES_MAX {
            return None;
        }
        s -= 1;
    }
    while s < at && matches!(b[s], b'.' | b'-' | b'+') {
        s += 1;
    }
    if s == at || b[at - 1] == b'.' {
        return None;
    }
    // Labels of letters, digits and inner hyphens; the last one, the TLD,
    // letters only. A trailing dot ends the sentence, not the domain.
    let mut p = at + 1;
    let mut labels = 0;
    let mut first_label = (p, p);
    let mut last_label;
    let end = loop {
        let ls = p;
        last_label = ls;
        while p < b.len() && (b[p].is_ascii_alphanumeric() || b[p] == b'-') && p - at <= EMAIL_DOMAIN_BYTES_MAX {
            p += 1;
        }
        let label = &b[ls..p];
        if label.is_empty() || label[0] == b'-' || label[label.len() - 1] == b'-' || p - at > EMAIL_DOMAIN_BYTES_MAX {
            return None;
        }
        labels += 1;
        if labels == 1 {
            first_label = (ls, p);
        }
        if b.get(p) == Some(&b'.') && b.get(p + 1).is_some_and(u8::is_ascii_alphanumeric) {
            p += 1;
            continue;
        }
        break p;
    };
    let tld = &b[last_label..end];
    if labels < 2 || tld.len() < 2 || !tld.iter().all(u8::is_ascii_alphabetic) {
        return None;
    }
    if b.get(end).is_some_and(|&c| is_word(c) || c == b'@') {
        return None;
    }
    // `icon@2x.png` is an asset name.
    let first = &b[first_label.0..first_label.1];
    if first.len() >= 2 && first[first.len() - 1] == b'x' && first[..first.len() - 1].iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some((s, end))
}

/// An IPv4 address at `i`: four decimal octets 0–255 without leading
/// zeros. Not when it continues as a longer dotted number (`1.2.3.4.5`) or
/// follows `version `: then it is a version.
pub(super) fn ipv4(b: &[u8], i: usize) -> Option<(usize, [u8; 4])> {
    if i >= 8 && starts_with_ci(b, i - 8, b"version ") {
        return None;
    }
    let mut octets = [0u8; 4];
    let mut p = i;
    for (k, o) in octets.iter_mut().enumerate() {
        if k > 0 {
            if b.get(p) != Some(&b'.') {
                return None;
            }
            p += 1;
        }
        let len = b[p.min(b.len())..].iter().take(4).take_while(|c| c.is_ascii_digit()).count();
        if len == 0 || len > 3 || (len > 1 && b[p] == b'0') {
            return None;
        }
        let v = b[p..p + len].iter().fold(0u32, |a, &c| a * 10 + u32::from(c - b'0'));
        *o = u8::try_from(v).ok()?;
        p += len;
    }
    let glued = b.get(p).is_some_and(|&c| is_word(c))
        || (b.get(p) == Some(&b'.') && b.get(p + 1).is_some_and(u8::is_ascii_digit));
    (!glued).then_some((p, octets))
}

/// An IPv6 address at `i`, checked by the standard library's parser: at
/// least one digit and either three groups or a `::` next to a group of
/// three or more digits, so `Add::add`, `a::b`, `::` and times stay text.
pub(super) fn ipv6(b: &[u8], i: usize) -> Option<(usize, Ipv6Addr)> {
    let ok = |c: u8| c.is_ascii_hexdigit() || c == b':' || c == b'.';
    let len = b[i..].iter().take(IPV6_TEXT_BYTES_MAX + 1).take_while(|&&c| ok(c)).count();
    if len > IPV6_TEXT_BYTES_MAX {
        return None;
    }
    let mut end = i + len;
    if b.get(end).is_some_and(|&c| is_word(c)) {
        return None;
    }
    // Sentence punctuation after the address.
    if end > i && b[end - 1] == b'.' {
        end -= 1;
    }
    if end > i + 1 && b[end - 1] == b':' && b[end - 2] != b':' {
        end -= 1;
    }
    let text = std::str::from_utf8(&b[i..end]).ok()?;
    if text.bytes().filter(|&c| c == b':').count() < 2 || !text.bytes().any(|c| c.is_ascii_digit()) {
        return None;
    }
    let addr: Ipv6Addr = text.parse().ok()?;
    let groups = text.split([':', '.']).filter(|g| !g.is_empty()).count();
    let long_group = text.split(':').any(|g| g.len() >= 3);
    (groups >= 3 || (text.contains("::") && long_group)).then_some((end, addr))
}
