use crate::core::retrieval::text::{Analyzer, Stem};

fn words(text: &str) -> Vec<String> {
    Analyzer { bigrams: false, ..Analyzer::default() }.tokens(text)
}

#[test]
fn lowercases_and_splits_on_punctuation() {
    assert_eq!(words("Hello, WORLD! foo-bar"), ["hello", "world", "foo", "bar"]);
    assert_eq!(words(""), Vec::<String>::new());
    assert_eq!(words("  ...  "), Vec::<String>::new());
}

#[test]
fn unicode_letters_are_words() {
    assert_eq!(words("Grüße ÉCOLE straße"), ["grüße", "école", "straße"]);
    assert_eq!(words("東京タワー"), ["東京タワー"]);
    // The curly apostrophe splits, and the leftover `s` is a stop word.
    assert_eq!(words("thread’s token"), ["thread", "token"]);
}

#[test]
fn identifiers_yield_parts_and_whole() {
    assert_eq!(words("Vec::with_capacity"), ["vec", "capacity", "with_capacity"]);
    assert_eq!(words("HashMap"), ["hash", "map", "hashmap"]);
    assert_eq!(words("HTTPServer"), ["http", "server", "httpserver"]);
    assert_eq!(words("__init__"), ["init"]);
    // Digits stay attached: error codes and integer types are whole terms.
    assert_eq!(words("E0308 u32 f16"), ["e0308", "u32", "f16"]);
}

#[test]
fn splitting_can_be_turned_off() {
    let a = Analyzer { split_identifiers: false, bigrams: false, ..Analyzer::default() };
    assert_eq!(a.tokens("snake_case HashMap"), ["snake_case", "hashmap"]);
}

#[test]
fn stop_words_are_dropped_unless_disabled() {
    assert_eq!(words("the value of it"), ["value"]);
    // Rust keywords are not stop words.
    assert_eq!(words("if for in as"), ["if", "for", "in", "as"]);
    let keep = Analyzer { stop_words: false, bigrams: false, stem: Stem::None, ..Analyzer::default() };
    assert_eq!(keep.tokens("the value"), ["the", "value"]);
}

#[test]
fn stemming_variants() {
    let plural = Analyzer { stem: Stem::Plural, bigrams: false, ..Analyzer::default() };
    assert_eq!(plural.tokens("iterators entries boxes glass status"), ["iterator", "entry", "boxe", "glass", "status"]);
    let light = Analyzer { bigrams: false, ..Analyzer::default() };
    assert_eq!(light.tokens("returned borrowing stopped created quickly"), ["return", "borrow", "stop", "create", "quick"]);
    // Too short, or no vowel left: unchanged.
    assert_eq!(light.tokens("bed sing"), ["bed", "sing"]);
    let none = Analyzer { stem: Stem::None, bigrams: false, ..Analyzer::default() };
    assert_eq!(none.tokens("returned"), ["returned"]);
}

#[test]
fn bigrams_join_adjacent_words_but_not_two_stop_words() {
    let a = Analyzer::default();
    assert_eq!(a.tokens("Returns the value"), ["return", "returns the", "value", "the value"]);
    assert_eq!(a.tokens("of the end"), ["end", "the end"]);
    // Each call starts afresh: no pair across texts.
    let mut buf = crate::core::retrieval::text::TokenBuf::default();
    let mut seen = Vec::new();
    a.for_each_token("alpha", &mut buf, |t| seen.push(t.to_owned()));
    a.for_each_token("beta", &mut buf, |t| seen.push(t.to_owned()));
    assert_eq!(seen, ["alpha", "beta"]);
}

#[test]
fn never_panics_on_odd_input() {
    let a = Analyzer::default();
    for s in ["\u{0}\u{ffff}é_", "_", "a_", "_A_b_", "ǅungla", "İstanbul", "ⅫⅫ", "\u{301}e", "x\u{10ffff}y"] {
        for t in a.tokens(s) {
            assert!(!t.is_empty());
        }
    }
}
