//! PII detection and anonymization: emails, phone numbers, payment cards,
//! IBANs, IP addresses and US SSNs become `[EMAIL]`… or, with a
//! [`PseudonymKey`], keyed pseudonyms `[EMAIL:ab12cd34ef]`.
//!
//! The scanners live in `pii_net` (emails, IPs) and `pii_numbers` (cards,
//! IBANs, SSNs, phones); this file runs them at every free token start,
//! resolves overlaps, and writes the replacements. Callers add detectors of
//! their own (a name recognizer, say) through [`Detector`].

use super::pii_net::{email, ipv4, ipv6};
use super::pii_numbers::{card, iban, phone, ssn, Groups};
use super::pseudonym::PseudonymKey;
use super::scan::{attached_before, resolve_overlaps};
use super::Report;

/// What kind of personal data a [`PiiSpan`] covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PiiKind {
    /// An email address.
    Email,
    /// A phone number, international or national.
    Phone,
    /// A payment card number (issuer prefix and Luhn checked).
    Card,
    /// An IBAN (country length and mod-97 checked).
    Iban,
    /// An IPv4 or IPv6 address.
    Ip,
    /// A US Social Security number.
    Ssn,
}

impl PiiKind {
    /// Every kind, in declaration order.
    pub const ALL: [PiiKind; 6] = [PiiKind::Email, PiiKind::Phone, PiiKind::Card, PiiKind::Iban, PiiKind::Ip, PiiKind::Ssn];

    /// The stable lower-case name, used in reports and pseudonym hashes.
    pub fn name(&self) -> &'static str {
        match self {
            PiiKind::Email => "email",
            PiiKind::Phone => "phone",
            PiiKind::Card => "card",
            PiiKind::Iban => "iban",
            PiiKind::Ip => "ip",
            PiiKind::Ssn => "ssn",
        }
    }

    /// The placeholder's tag: the name in capitals.
    pub fn tag(&self) -> &'static str {
        match self {
            PiiKind::Email => "EMAIL",
            PiiKind::Phone => "PHONE",
            PiiKind::Card => "CARD",
            PiiKind::Iban => "IBAN",
            PiiKind::Ip => "IP",
            PiiKind::Ssn => "SSN",
        }
    }
}

/// One piece of personal data in a text: byte offsets on char boundaries,
/// and the value normalized for hashing (lower-case email, digits of a
/// phone, card or SSN, IBAN in capitals without spaces, canonical IP).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PiiSpan {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
    /// What it is.
    pub kind: PiiKind,
    /// The normalized value.
    pub normalized: String,
}

/// Every piece of PII in `text`, in order, never overlapping.
pub fn find_pii(text: &str) -> Vec<PiiSpan> {
    let b = text.as_bytes();
    let mut found: Vec<(usize, usize, (PiiKind, String))> = Vec::new();
    for (at, _) in b.iter().enumerate().filter(|(_, &c)| c == b'@') {
        if let Some((s, e)) = email(b, at) {
            found.push((s, e, (PiiKind::Email, text[s..e].to_ascii_lowercase())));
        }
    }
    let mut i = 0;
    while i < b.len() {
        match pii_at(b, i) {
            Some((end, kind, norm)) => {
                found.push((i, end, (kind, norm)));
                i = end;
            }
            None => i += 1,
        }
    }
    resolve_overlaps(found).into_iter().map(|(start, end, (kind, normalized))| PiiSpan { start, end, kind, normalized }).collect()
}

/// The number- or address-shaped PII starting at `i`, if any.
fn pii_at(b: &[u8], i: usize) -> Option<(usize, PiiKind, String)> {
    let c = b[i];
    if !(c.is_ascii_alphanumeric() || matches!(c, b'+' | b'(' | b':')) || attached_before(b, i) {
        return None;
    }
    // An IBAN opens with a country (two capitals) and two check digits.
    let iban_shape = b.len() >= i + 4 && b[i + 1].is_ascii_uppercase() && b[i + 2].is_ascii_digit() && b[i + 3].is_ascii_digit();
    if c.is_ascii_uppercase() && iban_shape {
        if let Some((end, chars)) = iban(b, i) {
            return Some((end, PiiKind::Iban, String::from_utf8(chars).expect("ASCII")));
        }
    }
    // Inside a longer hex-and-colon run is no start (`a:db8::1` holds `db8::1`).
    // An IPv6 address has a colon within its first five bytes.
    let colon_near = b[i..].iter().take(5).take_while(|&&h| h.is_ascii_hexdigit() || h == b':').any(|&h| h == b':');
    if (c.is_ascii_hexdigit() || c == b':') && colon_near && (i == 0 || b[i - 1] != b':') {
        if let Some((end, addr)) = ipv6(b, i) {
            return Some((end, PiiKind::Ip, addr.to_string()));
        }
    }
    if !(c.is_ascii_digit() || c == b'+' || c == b'(') {
        return None;
    }
    if c.is_ascii_digit() {
        if let Some((end, o)) = ipv4(b, i) {
            return Some((end, PiiKind::Ip, format!("{}.{}.{}.{}", o[0], o[1], o[2], o[3])));
        }
    }
    // The middle of a longer space-grouped number (`9400 4141 0294 1387`).
    if i >= 2 && b[i - 1] == b' ' && b[i - 2].is_ascii_digit() {
        return None;
    }
    let g = Groups::read(b, i)?;
    let kind = if ssn(b, &g) {
        PiiKind::Ssn
    } else if card(b, &g) {
        PiiKind::Card
    } else if phone(b, &g) {
        PiiKind::Phone
    } else {
        return None;
    };
    Some((g.end, kind, g.digits(b, |_| false)))
}

/// A detector the caller adds to [`Anonymizer::anonymize_with`], such as
/// a name recognizer. Spans are byte offsets; ones out of range, empty or
/// off char boundaries are ignored.
pub trait Detector {
    /// Pushes `(start, end, kind)` for each hit in `text`; `kind` names the
    /// placeholder (`person` becomes `[PERSON]`).
    fn detect(&self, text: &str, out: &mut Vec<(usize, usize, String)>);
}

/// Replaces PII with placeholders, or with keyed pseudonyms when it has a key.
#[derive(Debug, Clone, Copy, Default)]
pub struct Anonymizer<'k> {
    key: Option<&'k PseudonymKey>,
}

/// A hit's kind while replacements are written.
enum Hit {
    Pii(PiiKind, String),
    Extra(String),
}

impl<'k> Anonymizer<'k> {
    /// An anonymizer writing pseudonyms under `key`, or plain placeholders
    /// without one.
    pub fn new(key: Option<&'k PseudonymKey>) -> Anonymizer<'k> {
        Anonymizer { key }
    }

    /// `text` with its PII replaced, counted in `report`; `None` when it has none.
    pub fn anonymize(&self, text: &str, report: &mut Report) -> Option<String> {
        self.anonymize_with(text, &[], report)
    }

    /// Like [`Anonymizer::anonymize`], also replacing what the `extra`
    /// detectors find. Where hits overlap, the earliest-starting, longest
    /// one is kept; on a tie the built-in kinds win.
    pub fn anonymize_with(&self, text: &str, extra: &[&dyn Detector], report: &mut Report) -> Option<String> {
        let mut hits: Vec<(usize, usize, Hit)> =
            find_pii(text).into_iter().map(|s| (s.start, s.end, Hit::Pii(s.kind, s.normalized))).collect();
        let mut raw = Vec::new();
        for d in extra {
            d.detect(text, &mut raw);
        }
        for (s, e, kind) in raw.drain(..) {
            if s < e && e <= text.len() && text.is_char_boundary(s) && text.is_char_boundary(e) {
                hits.push((s, e, Hit::Extra(kind)));
            }
        }
        if hits.is_empty() {
            return None;
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for (s, e, hit) in resolve_overlaps(hits) {
            out.push_str(&text[at..s]);
            match hit {
                Hit::Pii(kind, norm) => {
                    self.placeholder(&mut out, kind.tag(), kind.name(), &norm);
                    report.add(kind.name(), 1);
                }
                Hit::Extra(kind) => {
                    let tag: String = kind.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '_').map(|c| c.to_ascii_uppercase()).collect();
                    let tag = if tag.is_empty() { "PII".to_string() } else { tag };
                    let name = tag.to_ascii_lowercase();
                    self.placeholder(&mut out, &tag, &name, &text[s..e]);
                    report.add(&name, 1);
                }
            }
            at = e;
        }
        out.push_str(&text[at..]);
        Some(out)
    }

    fn placeholder(&self, out: &mut String, tag: &str, name: &str, normalized: &str) {
        out.push('[');
        out.push_str(tag);
        if let Some(key) = self.key {
            out.push(':');
            out.push_str(&key.token(name, normalized));
        }
        out.push(']');
    }
}
