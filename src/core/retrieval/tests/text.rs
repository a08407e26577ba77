use crate::core::retrieval::text::{Analyzer, Stem};

fn words(text: &str) -> Vec<String> {
    Analyzer { bigrams: false, ..Analyzer::code() }.tokens(text)
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
    let a = Analyzer { split_identifiers: false, bigrams: false, ..Analyzer::code() };
    assert_eq!(a.tokens("snake_case HashMap"), ["snake_case", "hashmap"]);
}

#[test]
fn stop_words_are_dropped_unless_disabled() {
    assert_eq!(words("the value of it"), ["value"]);
    // Rust keywords are not stop words.
    assert_eq!(words("if for in as"), ["if", "for", "in", "as"]);
    let keep = Analyzer { stop_words: false, bigrams: false, stem: Stem::None, ..Analyzer::code() };
    assert_eq!(keep.tokens("the value"), ["the", "value"]);
}

#[test]
fn stemming_variants() {
    let plural = Analyzer { stem: Stem::Plural, bigrams: false, ..Analyzer::code() };
    assert_eq!(plural.tokens("iterators entries boxes glass status"), ["iterator", "entry", "boxe", "glass", "status"]);
    let light = Analyzer { bigrams: false, ..Analyzer::code() };
    assert_eq!(light.tokens("returned borrowing stopped created quickly"), ["return", "borrow", "stop", "create", "quick"]);
    // Too short, or no vowel left: unchanged.
    assert_eq!(light.tokens("bed sing"), ["bed", "sing"]);
    let none = Analyzer { stem: Stem::None, bigrams: false, ..Analyzer::code() };
    assert_eq!(none.tokens("returned"), ["returned"]);
}

#[test]
fn bigrams_join_adjacent_words_but_not_two_stop_words() {
    let a = Analyzer::code();
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
    let a = Analyzer::code();
    for s in ["\u{0}\u{ffff}é_", "_", "a_", "_A_b_", "ǅungla", "İstanbul", "ⅫⅫ", "\u{301}e", "x\u{10ffff}y"] {
        for t in a.tokens(s) {
            assert!(!t.is_empty());
        }
    }
}

fn natural(text: &str) -> Vec<String> {
    Analyzer { bigrams: false, ..Analyzer::natural() }.tokens(text)
}

#[test]
fn natural_stems_plain_words_with_porter2() {
    assert_eq!(natural("moved moving lessons generously"), ["move", "move", "lesson", "generous"]);
    // Porter2, not the light stemmer: -ation, -ness and -ful go too.
    assert_eq!(natural("celebration happiness"), ["celebr", "happi"]);
    // Capitalised at a sentence start is still a plain word.
    assert_eq!(natural("Running"), ["run"]);
}

#[test]
fn natural_keeps_code_identifiers_as_the_code_analyzer_does() {
    let code = Analyzer { bigrams: false, ..Analyzer::code() };
    for text in ["Vec::with_capacity", "HashMap", "HTTPServer", "E0308 u32 f16", "impl_trait_for_type", "__init__"] {
        assert_eq!(natural(text), code.tokens(text), "{text}");
    }
    // A whole identifier is never stemmed, and digits keep words whole.
    assert!(natural("into_iterator_impls").contains(&"into_iterator_impls".to_string()));
    assert_eq!(natural("utf8_chunks"), ["utf8", "chunk", "utf8_chunks"]);
    // A plain word is Porter2's, where the code analyzer's light stemmer
    // leaves it.
    assert_eq!(natural("entry"), ["entri"]);
}

#[test]
fn natural_stop_words_keep_pronouns() {
    assert_eq!(natural("What did she say about her dog?"), ["she", "say", "her", "dog"]);
    assert_eq!(natural("I told them where they were"), ["i", "told", "them", "they"]);
    // The code list keeps words the English list drops.
    assert_eq!(Analyzer { bigrams: false, ..Analyzer::code() }.tokens("when for"), ["when", "for"]);
}

#[test]
fn contractions_and_possessives_fold_to_their_head() {
    assert_eq!(natural("Sam's dog"), ["sam", "dog"]);
    assert_eq!(natural("Sam’s dog"), ["sam", "dog"]);
    assert_eq!(natural("I'm sure we'll go"), ["i", "sure", "we", "go"]);
    assert_eq!(natural("won't can't isn't"), ["will", "can"]);
    // Not a contraction: the word stays whole, apostrophe and all.
    assert_eq!(natural("O'Brien"), ["o'brien"]);
    // Quotes around a word are not apostrophes inside it.
    assert_eq!(natural("'quoted' words'"), ["quot", "word"]);
    // Pairs span the fold.
    assert_eq!(Analyzer::natural().tokens("Sam's dog"), ["sam", "dog", "sam dog"]);
}

#[test]
fn number_words_and_ordinals_become_digits() {
    assert_eq!(natural("two dogs and 2 cats"), ["2", "dog", "2", "cat"]);
    assert_eq!(natural("on the 7th, 21st and 3rd"), ["7", "21", "3"]);
    assert_eq!(natural("twenty twentyone 12345th"), ["20", "twentyon", "12345th"]);
}

#[test]
fn natural_never_panics_on_odd_input() {
    let a = Analyzer::natural();
    for s in ["'", "''", "a'", "'a", "a'b'c", "’", "x’", "’y", "don’", "n't", "\u{0}'\u{ffff}", "é'é", "1'2", "_'_", "won't'"] {
        for t in a.tokens(s) {
            assert!(!t.is_empty(), "{s:?}");
        }
    }
}
