//! Privacy filters for text on its way into memory: secrets are redacted,
//! personal data is replaced by typed placeholders or keyed pseudonyms, and
//! user ids are sealed so storage never holds them in the clear.
//!
//! Detection is a set of hand-written scanners over bytes, not regexes: a
//! regex engine would add hundreds of KB to the wasm, and every detector
//! needs a check a regex cannot express anyway (Luhn and an issuer prefix
//! for cards, mod-97 for IBANs, octet ranges for IPv4, a real parser for
//! IPv6, forbidden ranges for SSNs, charset mix for tokens). Each scanner
//! starts only at a token boundary and looks a bounded distance ahead, so a
//! pass is linear in the text and never backtracks.
//!
//! The bias is towards precision: a memory that loses an order id, a price
//! or a version number to a false positive is damaged for good, while a
//! detector that is too eager teaches callers to switch it off. So a match
//! needs the shape, a boundary on both sides and a checksum or plausibility
//! test; numbers attached to identifiers, dates, times, versions, hashes and
//! tracking numbers are left alone.
//!
//! What is replaced: secrets ([`secrets`]: API keys and tokens of the common
//! providers, JWTs, PEM private keys, and the value of `password=`-style
//! assignments) become `[REDACTED:kind]`; PII ([`pii`]: emails, phone
//! numbers, payment cards, IBANs, IP addresses, US SSNs) becomes `[EMAIL]`
//! or, with a [`PseudonymKey`], `[EMAIL:ab12cd34ef]`, stable per namespace
//! so that "the same customer" stays recognisable across memories.
//!
//! Deliberately not detected: names, addresses and other free-text PII (no
//! scanner can find them without a model; [`pii::Detector`] is the hook for
//! one), national ids other than the US SSN, bank account numbers outside
//! IBANs, high-entropy strings without a known prefix (they are mostly
//! hashes and ids, which must survive), and anything inside binary data.

use std::collections::BTreeMap;

pub mod pii;
mod pii_net;
mod pii_numbers;
pub mod pseudonym;
mod scan;
pub mod scrub;
pub mod secrets;

#[cfg(test)]
mod eval_tests;
#[cfg(test)]
mod tests;

pub use pii::{find_pii, Anonymizer, Detector, PiiKind, PiiSpan};
pub use pseudonym::PseudonymKey;
pub use scrub::{Scrubbed, Scrubber};
pub use secrets::{find_secrets, is_secret_field, redact_secrets, SecretKind, Span};

// Every bound of the privacy filters lives in `core/limits.rs`, with the rest.
pub use crate::core::limits::{
    ANTHROPIC_KEY_BODY_CHARS_MIN,
    CARD_DIGITS_MAX,
    CARD_DIGITS_MIN,
    EMAIL_DOMAIN_BYTES_MAX,
    EMAIL_LOCAL_BYTES_MAX,
    IBAN_CHARS_MAX,
    IBAN_CHARS_MIN,
    IPV6_TEXT_BYTES_MAX,
    JWT_SEGMENT_CHARS_MIN,
    JWT_SIGNATURE_CHARS_MIN,
    OPENAI_KEY_BODY_CHARS_MIN,
    PEM_BLOCK_BYTES_MAX,
    PHONE_DIGITS_MAX,
    PHONE_DIGITS_MIN,
    PHONE_NATIONAL_DIGITS_MAX,
    PHONE_NATIONAL_DIGITS_MIN,
    PSEUDONYM_SECRET_BYTES_MIN,
    PSEUDONYM_TOKEN_HEX_LEN,
    SEALED_USER_ID_BYTES_MAX,
    SEALED_USER_ID_IV_BYTES,
    SEALED_USER_ID_PREFIX_BYTES,
    SECRET_ASSIGNMENT_VALUE_BYTES_MAX,
    SECRET_ASSIGNMENT_VALUE_CHARS_MIN,
    SECRET_FIELD_VALUE_CHARS_MIN,
    SECRET_TOKEN_BODY_CHARS_MIN,
};

/// How many of each kind a filter replaced, by kind name (`email`,
/// `stripe_key`, or an extra detector's kind).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Replacements per kind name.
    pub counts: BTreeMap<String, u32>,
}

impl Report {
    /// Counts `n` more replacements of `kind`.
    pub fn add(&mut self, kind: &str, n: u32) {
        let c = self.counts.entry(kind.to_string()).or_insert(0);
        *c = c.saturating_add(n);
    }

    /// Whether nothing was replaced.
    pub fn is_empty(&self) -> bool {
        self.counts.values().all(|&n| n == 0)
    }

    /// Adds every count of `other` to this report.
    pub fn merge(&mut self, other: &Report) {
        for (kind, &n) in &other.counts {
            self.add(kind, n);
        }
    }

    /// Replacements of every kind together.
    pub fn total(&self) -> u64 {
        self.counts.values().map(|&n| u64::from(n)).sum()
    }
}
