//! The text analyzer shared by BM25 and the offline embedder.
//!
//! Memory texts and queries mix prose with code (`Vec::with_capacity`,
//! `snake_case`, `HashMap`, `E0308`), so a word is a run of Unicode letters,
//! digits and underscores, and an identifier made of several parts is
//! indexed both whole and as its parts: `with_capacity` yields `with`,
//! `capacity` and `with_capacity`, `HashMap` yields `hash`, `map` and
//! `hashmap`. Digits stay attached (`e0308`, `u32`, `f16`): splitting them
//! off made the rustdocs queries worse.

/// How a token is reduced before indexing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stem {
    /// Tokens are kept as they are (after lowercasing).
    None,
    /// Harman's "S" stemmer: plural endings only (`iterators` → `iterator`,
    /// `entries` → `entry`). Cheap and hard to get wrong.
    Plural,
    /// The plural rules plus `-ed`, `-ing` and `-ly` with Porter's
    /// conditions (`returned` → `return`, `borrowing` → `borrow`).
    Light,
}

/// Splits text into lowercase index terms. `Copy` and stateless, so the
/// index and every query use exactly the same rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Analyzer {
    /// Also emit the parts of `snake_case` and `camelCase` identifiers.
    pub split_identifiers: bool,
    /// Drop a small list of English function words.
    pub stop_words: bool,
    /// Suffix stripping applied to purely alphabetic tokens.
    pub stem: Stem,
    /// Also emit each pair of adjacent words (`"returns the"`), so text that
    /// repeats the query's phrasing outranks text that only shares words.
    pub bigrams: bool,
}

/// Scratch space for [`Analyzer::for_each_token`], reused across calls so
/// that analysis allocates nothing in the steady state.
#[derive(Debug, Default, Clone)]
pub struct TokenBuf {
    term: String,
    prev: String,
    pair: String,
}

impl Default for Analyzer {
    /// The configuration measured best on the rustdocs queries (see
    /// `examples/ltm_quality.rs`): BM25 nDCG@10 0.809, against 0.771 for
    /// [`Analyzer::compact`], at about four times the index memory.
    fn default() -> Self {
        Analyzer { split_identifiers: true, stop_words: true, stem: Stem::Light, bigrams: true }
    }
}

impl Analyzer {
    /// The default without word pairs: the BM25 index takes about a quarter
    /// of the memory (10.5 MB instead of 46 MB for the 12,748 rustdocs
    /// passages, 1.5 M words) and still matches minisearch's quality.
    pub const fn compact() -> Analyzer {
        Analyzer { split_identifiers: true, stop_words: true, stem: Stem::Light, bigrams: false }
    }

    /// Calls `f` with every term of `text`, in order.
    pub fn for_each_token(&self, text: &str, buf: &mut TokenBuf, mut f: impl FnMut(&str)) {
        buf.prev.clear();
        let bytes = text.as_bytes();
        let mut start = None;
        let mut i = 0;
        while let Some(&b) = bytes.get(i) {
            // ASCII is most text and all code: classify it without decoding.
            let (word_char, width) = if b.is_ascii() {
                (b.is_ascii_alphanumeric() || b == b'_', 1)
            } else {
                match text.get(i..).and_then(|s| s.chars().next()) {
                    Some(c) => (c.is_alphanumeric(), c.len_utf8()),
                    None => (false, 1),
                }
            };
            match (word_char, start) {
                (true, None) => start = Some(i),
                (false, Some(s)) => {
                    if let Some(chunk) = text.get(s..i) {
                        self.chunk(chunk, buf, &mut f);
                    }
                    start = None;
                }
                _ => {}
            }
            i += width;
        }
        if let Some(chunk) = start.and_then(|s| text.get(s..)) {
            self.chunk(chunk, buf, &mut f);
        }
    }

    /// The terms of `text` as owned strings (for tests and callers that do
    /// not care about allocation).
    pub fn tokens(&self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut buf = TokenBuf::default();
        self.for_each_token(text, &mut buf, |t| out.push(t.to_owned()));
        out
    }

    fn chunk(&self, chunk: &str, buf: &mut TokenBuf, f: &mut impl FnMut(&str)) {
        let trimmed = chunk.trim_matches('_');
        if trimmed.is_empty() {
            return;
        }
        self.parts(trimmed, &mut buf.term, f);
        if self.bigrams {
            lowercase_into(trimmed, &mut buf.term);
            let both_stop = is_stop_word(&buf.prev) && is_stop_word(&buf.term);
            if !buf.prev.is_empty() && !both_stop {
                buf.pair.clear();
                buf.pair.push_str(&buf.prev);
                buf.pair.push(' ');
                buf.pair.push_str(&buf.term);
                f(&buf.pair);
            }
            std::mem::swap(&mut buf.prev, &mut buf.term);
        }
    }

    fn parts(&self, trimmed: &str, buf: &mut String, f: &mut impl FnMut(&str)) {
        if !self.split_identifiers {
            self.emit(trimmed, buf, f);
            return;
        }
        let mut parts = 0usize;
        let mut part_start = 0usize;
        let mut prev: Option<char> = None;
        let mut iter = trimmed.char_indices().peekable();
        while let Some((i, c)) = iter.next() {
            if c == '_' {
                if i > part_start {
                    self.emit(&trimmed[part_start..i], buf, f);
                    parts += 1;
                }
                part_start = i + 1;
                prev = None;
                continue;
            }
            let next = iter.peek().map(|&(_, n)| n);
            let boundary = match prev {
                // fooBar
                Some(p) if p.is_lowercase() && c.is_uppercase() => true,
                // HTTPServer: the S starts a new part
                Some(p) if p.is_uppercase() && c.is_uppercase() && next.is_some_and(char::is_lowercase) => true,
                _ => false,
            };
            if boundary && i > part_start {
                self.emit(&trimmed[part_start..i], buf, f);
                parts += 1;
                part_start = i;
            }
            prev = Some(c);
        }
        if parts == 0 {
            // A plain word: emit it once.
            self.emit(trimmed, buf, f);
            return;
        }
        if part_start < trimmed.len() {
            self.emit(&trimmed[part_start..], buf, f);
        }
        // The whole identifier, so an exact identifier query outranks a
        // passage that merely mentions its parts.
        self.emit_whole(trimmed, buf, f);
    }

    fn emit_whole(&self, word: &str, buf: &mut String, f: &mut impl FnMut(&str)) {
        lowercase_into(word, buf);
        if !buf.is_empty() {
            f(buf);
        }
    }

    fn emit(&self, word: &str, buf: &mut String, f: &mut impl FnMut(&str)) {
        lowercase_into(word, buf);
        if self.stop_words && is_stop_word(buf) {
            return;
        }
        match self.stem {
            Stem::None => {}
            Stem::Plural => stem_plural(buf),
            Stem::Light => stem_light(buf),
        }
        if !buf.is_empty() {
            f(buf);
        }
    }
}

fn lowercase_into(word: &str, buf: &mut String) {
    buf.clear();
    if word.is_ascii() {
        buf.push_str(word);
        buf.make_ascii_lowercase();
    } else {
        buf.extend(word.chars().flat_map(char::to_lowercase));
    }
}

/// Lucene's English stop words plus the possessive and contraction leftovers
/// (`s`, `t`) that splitting on apostrophes produces. Deliberately short:
/// BM25's IDF already discounts common words, and Rust keywords such as `if`,
/// `for`, `in` or `as` are sometimes the whole point of a query.
pub fn is_stop_word(w: &str) -> bool {
    matches!(
        w,
        "a" | "an"
            | "and"
            | "are"
            | "at"
            | "be"
            | "but"
            | "by"
            | "into"
            | "is"
            | "it"
            | "of"
            | "on"
            | "or"
            | "such"
            | "that"
            | "the"
            | "their"
            | "then"
            | "there"
            | "these"
            | "they"
            | "this"
            | "to"
            | "was"
            | "will"
            | "with"
            | "s"
            | "t"
    )
}

fn only_letters(w: &str) -> bool {
    w.bytes().all(|b| b.is_ascii_lowercase())
}

/// Harman's S stemmer, on ASCII-letter words of four letters or more.
fn stem_plural(w: &mut String) {
    if w.len() < 4 || !only_letters(w) {
        return;
    }
    if w.ends_with("ies") && !w.ends_with("eies") && !w.ends_with("aies") {
        w.truncate(w.len() - 3);
        w.push('y');
    } else if w.ends_with('s') && !w.ends_with("us") && !w.ends_with("ss") {
        // Harman's `-es` → `-e` rule drops the same single `s`.
        w.truncate(w.len() - 1);
    }
}

fn is_vowel(b: u8) -> bool {
    matches!(b, b'a' | b'e' | b'i' | b'o' | b'u')
}

/// The plural rules, then `-ed` / `-ing` when the stem keeps a vowel
/// (Porter's step 1b condition) and `-ly` on longer words, with Porter's
/// clean-ups: a doubled final consonant is undoubled (`stopped` → `stop`)
/// and `-at`, `-bl`, `-iz` get their `e` back (`created` → `create`).
fn stem_light(w: &mut String) {
    stem_plural(w);
    if w.len() < 5 || !only_letters(w) {
        return;
    }
    let cut = if w.ends_with("ing") {
        3
    } else if w.ends_with("ed") && !w.ends_with("eed") {
        2
    } else if w.ends_with("ly") && w.len() >= 6 {
        w.truncate(w.len() - 2);
        return;
    } else {
        return;
    };
    let stem_len = w.len() - cut;
    if !w.as_bytes()[..stem_len].iter().copied().any(is_vowel) || stem_len < 3 {
        return;
    }
    w.truncate(stem_len);
    let b = w.as_bytes();
    let n = b.len();
    if w.ends_with("at") || w.ends_with("bl") || w.ends_with("iz") {
        w.push('e');
    } else if n >= 2 && b[n - 1] == b[n - 2] && !is_vowel(b[n - 1]) && !matches!(b[n - 1], b'l' | b's' | b'z') {
        w.truncate(n - 1);
    }
}
