//! The text analyzer shared by BM25 and the offline embedder.
//!
//! Memory texts and queries mix prose with code (`Vec::with_capacity`,
//! `snake_case`, `HashMap`, `E0308`), so a word is a run of Unicode letters,
//! digits and underscores, and an identifier made of several parts is
//! indexed both whole and as its parts: `with_capacity` yields `with`,
//! `capacity` and `with_capacity`, `HashMap` yields `hash`, `map` and
//! `hashmap`. Digits stay attached (`e0308`, `u32`, `f16`): splitting them
//! off made the rustdocs queries worse.
//!
//! Two presets exist. [`Analyzer::code`] was tuned on Rust documentation and
//! is pinned: the hashed embedder (`edgemem-hash-v1`) hashes its terms, so
//! changing it would change stored vectors. [`Analyzer::natural`] adds what
//! chat needs (Porter2 stemming, a fuller stop list, contractions, number
//! words) while keeping identifiers whole and unstemmed; BM25 uses it
//! because it measured at least as good on both chat and documentation
//! (`examples/ltm_quality.rs`, BENCHMARKS.md "Recall on conversations").

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
    /// Snowball's English (Porter2) stemmer on plain words of ASCII letters
    /// (`moved` and `moving` → `move`, `lessons` → `lesson`); the parts of
    /// a `snake_case` or `camelCase` identifier get [`Stem::Light`] and the
    /// whole identifier is never stemmed, so code terms come through as in
    /// [`Analyzer::code`].
    English,
}

/// Which function words are dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopList {
    /// Lucene's 27 English stop words plus `s` and `t`: short, because Rust
    /// keywords such as `if`, `for`, `in` or `as` can be the whole query.
    Short,
    /// Snowball's English list without personal pronouns: in chat, "my",
    /// "she" and "they" say whose fact a turn states.
    English,
}

/// Splits text into lowercase index terms. `Copy` and stateless, so the
/// index and every query use exactly the same rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Analyzer {
    /// Also emit the parts of `snake_case` and `camelCase` identifiers.
    pub split_identifiers: bool,
    /// Drop function words (which ones: `stop_list`).
    pub stop_words: bool,
    /// The stop words dropped when `stop_words` is on.
    pub stop_list: StopList,
    /// Suffix stripping applied to purely alphabetic tokens.
    pub stem: Stem,
    /// Also emit each pair of adjacent words (`"returns the"`), so text that
    /// repeats the query's phrasing outranks text that only shares words.
    pub bigrams: bool,
    /// An apostrophe between letters is part of the word, and the word is
    /// folded to its head: `Sam's` → `sam`, `I'm` → `i`, `don't` → `do`,
    /// `won't` → `will`; a pair then spans the fold (`sam's dog` → `sam dog`).
    pub contractions: bool,
    /// Number words one to twenty become digits (`two` → `2`) and ordinal
    /// suffixes go (`7th` → `7`), so a number matches however it is written.
    pub numbers: bool,
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
    /// [`Analyzer::natural`], what BM25 indexes with.
    fn default() -> Self {
        Analyzer::natural()
    }
}

impl Analyzer {
    /// The code-aware configuration measured best on the rustdocs queries
    /// before issue 19 (BM25 nDCG@10 0.809, against 0.771 for
    /// [`Analyzer::compact`]). Pinned: the hashed embedder's terms.
    pub const fn code() -> Analyzer {
        Analyzer {
            split_identifiers: true,
            stop_words: true,
            stop_list: StopList::Short,
            stem: Stem::Light,
            bigrams: true,
            contractions: false,
            numbers: false,
        }
    }

    /// [`Analyzer::code`] plus what prose needs: Porter2 stemming of plain
    /// words, Snowball's stop list without pronouns, contractions and number
    /// words. Identifiers are split and kept whole exactly as by `code()`.
    pub const fn natural() -> Analyzer {
        Analyzer { stop_list: StopList::English, stem: Stem::English, contractions: true, numbers: true, ..Analyzer::code() }
    }

    /// [`Analyzer::code`] without word pairs: the BM25 index takes about a
    /// quarter of the memory (10.5 MB instead of 46 MB for the 12,748
    /// rustdocs passages, 1.5 M words) and still matches minisearch's quality.
    pub const fn compact() -> Analyzer {
        Analyzer { bigrams: false, ..Analyzer::code() }
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
                (b.is_ascii_alphanumeric() || b == b'_' || (b == b'\'' && self.inner_apostrophe(text, start, i, 1)), 1)
            } else {
                match text.get(i..).and_then(|s| s.chars().next()) {
                    Some('\u{2019}') => (self.inner_apostrophe(text, start, i, 3), 3),
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

    /// An apostrophe of `width` bytes at `i` joins a word when contractions
    /// are folded and a letter follows it inside a word.
    fn inner_apostrophe(&self, text: &str, start: Option<usize>, i: usize, width: usize) -> bool {
        self.contractions && start.is_some() && text.get(i + width..).and_then(|s| s.chars().next()).is_some_and(char::is_alphabetic)
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
        let chunk = if self.contractions { fold_contraction(chunk) } else { chunk };
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
            self.emit_word(trimmed, buf, f);
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

    /// A plain word (not an identifier part): the one place Porter2 and
    /// number words apply.
    fn emit_word(&self, word: &str, buf: &mut String, f: &mut impl FnMut(&str)) {
        if self.stem != Stem::English && !self.numbers {
            return self.emit(word, buf, f);
        }
        lowercase_into(word, buf);
        if self.stop_words && self.is_stop(buf) {
            return;
        }
        if self.numbers && number_into(buf) {
            return f(buf);
        }
        if self.stem == Stem::English && only_letters(buf) {
            if let std::borrow::Cow::Owned(stemmed) = english_stemmer().stem(buf) {
                *buf = stemmed;
            }
        } else {
            self.stem_into(buf);
        }
        if !buf.is_empty() {
            f(buf);
        }
    }

    /// An identifier part, or any word of an analyzer without Porter2 or
    /// number words: the short stop list always, so `impl_trait_for_type`
    /// keeps its `for` under either preset.
    fn emit(&self, word: &str, buf: &mut String, f: &mut impl FnMut(&str)) {
        lowercase_into(word, buf);
        let stop = if self.stem == Stem::English || self.numbers { is_stop_word(buf) } else { self.is_stop(buf) };
        if self.stop_words && stop {
            return;
        }
        self.stem_into(buf);
        if !buf.is_empty() {
            f(buf);
        }
    }

    fn stem_into(&self, buf: &mut String) {
        match self.stem {
            Stem::None => {}
            Stem::Plural => stem_plural(buf),
            Stem::Light | Stem::English => stem_light(buf),
        }
    }

    /// Whether `w` (lowercase) is one of this analyzer's stop words.
    pub fn is_stop(&self, w: &str) -> bool {
        match self.stop_list {
            StopList::Short => is_stop_word(w),
            StopList::English => is_english_stop_word(w),
        }
    }
}

/// Only `English` is ever named, so the other algorithms are dead code.
fn english_stemmer() -> rust_stemmers::Stemmer {
    rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English)
}

/// `Sam's` → `Sam`, `don't` → `do`, `won't` → `will`, `can't` → `can`;
/// a word whose apostrophe is not a contraction (`O'Brien`) keeps both parts.
fn fold_contraction(chunk: &str) -> &str {
    let Some((at, width)) = chunk.find('\'').map(|i| (i, 1)).or_else(|| chunk.find('\u{2019}').map(|i| (i, 3))) else {
        return chunk;
    };
    let (head, tail) = (&chunk[..at], &chunk[at + width..]);
    let tail_is = |s: &str| tail.eq_ignore_ascii_case(s);
    if tail_is("t") {
        if head.eq_ignore_ascii_case("won") {
            return "will";
        }
        if head.eq_ignore_ascii_case("can") || head.eq_ignore_ascii_case("ain") {
            return head;
        }
        return head.strip_suffix(['n', 'N']).filter(|h| !h.is_empty()).unwrap_or(head);
    }
    if ["s", "re", "ve", "ll", "d", "m"].iter().any(|s| tail_is(s)) {
        return head;
    }
    chunk
}

/// Replaces a number word (`one` … `twenty`) or an ordinal (`7th`, `21st`)
/// with its digits; true if it did.
fn number_into(w: &mut String) -> bool {
    const WORDS: [&str; 20] = [
        "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen",
        "sixteen", "seventeen", "eighteen", "nineteen", "twenty",
    ];
    if let Some(n) = WORDS.iter().position(|x| *x == w.as_str()) {
        w.clear();
        w.push_str(&(n + 1).to_string());
        return true;
    }
    let digits = w.trim_end_matches(|c: char| c.is_ascii_lowercase());
    let suffix = &w[digits.len()..];
    if !digits.is_empty() && digits.len() <= 4 && digits.bytes().all(|b| b.is_ascii_digit()) && matches!(suffix, "st" | "nd" | "rd" | "th") {
        w.truncate(digits.len());
        return true;
    }
    false
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

/// Snowball's English stop words (snowballstem.org, BSD-3) with the
/// personal pronouns taken out and contractions folded to their heads.
fn is_english_stop_word(w: &str) -> bool {
    matches!(
        w,
        "a" | "about" | "above" | "after" | "again" | "against" | "all" | "am" | "an" | "and" | "any" | "are" | "as" | "at" | "be"
            | "because" | "been" | "before" | "being" | "below" | "between" | "both" | "but" | "by" | "cannot" | "could" | "did" | "do"
            | "does" | "doing" | "down" | "during" | "each" | "few" | "for" | "from" | "further" | "had" | "has" | "have" | "having"
            | "here" | "how" | "if" | "in" | "into" | "is" | "let" | "more" | "most" | "no" | "nor" | "not" | "of" | "off" | "on"
            | "once" | "only" | "or" | "other" | "ought" | "out" | "over" | "own" | "same" | "should" | "so" | "some" | "such"
            | "than" | "that" | "the" | "then" | "there" | "these" | "this" | "those" | "through" | "to" | "too" | "under" | "until"
            | "up" | "very" | "was" | "were" | "what" | "when" | "where" | "which" | "while" | "who" | "whom" | "why" | "with"
            | "would" | "s" | "t"
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
