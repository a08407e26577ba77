use std::collections::BTreeMap;

use proptest::prelude::*;

use crate::core::limits;
use crate::core::retrieval::bm25::{idf, Bm25Index, Bm25Params, Bm25Scratch, KeyFilter};
use crate::core::retrieval::text::Analyzer;

/// BM25 by its definition, in f64, straight from the analyzer's tokens.
fn brute(docs: &BTreeMap<u64, String>, query: &str, a: Analyzer, p: Bm25Params) -> Vec<(u64, f64)> {
    let toks: BTreeMap<u64, Vec<String>> = docs.iter().map(|(&k, t)| (k, a.tokens(t))).collect();
    let n = toks.len() as f64;
    if n == 0.0 {
        return Vec::new();
    }
    let avgdl = toks.values().map(|t| t.len()).sum::<usize>() as f64 / n;
    let mut q: Vec<(String, f64)> = Vec::new();
    for t in a.tokens(query) {
        match q.iter_mut().find(|(x, _)| *x == t) {
            Some(e) => e.1 += 1.0,
            None => q.push((t, 1.0)),
        }
    }
    let (k1, b) = (f64::from(p.k1), f64::from(p.b));
    let mut out = Vec::new();
    for (&key, dt) in &toks {
        let mut score = 0.0;
        for (t, qtf) in &q {
            let df = toks.values().filter(|d| d.contains(t)).count() as f64;
            let tf = dt.iter().filter(|x| *x == t).count() as f64;
            if tf > 0.0 {
                let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                score += qtf * idf * (k1 + 1.0) * tf / (tf + k1 * (1.0 - b + b * dt.len() as f64 / avgdl));
            }
        }
        if score > 0.0 {
            out.push((key, score));
        }
    }
    out
}

fn search(index: &Bm25Index, q: &str, k: usize, filter: KeyFilter<'_>) -> Vec<(u64, f32)> {
    let mut out = Vec::new();
    index.search(q, k, filter, &mut Bm25Scratch::default(), &mut out).unwrap();
    out
}

fn assert_matches_brute(index: &Bm25Index, docs: &BTreeMap<u64, String>, q: &str) {
    let got = search(index, q, limits::KEYWORD_RESULTS_MAX, KeyFilter::All);
    let want = brute(docs, q, index.analyzer(), index.params());
    assert_eq!(got.len(), want.len(), "query {q:?}: {got:?} vs {want:?}");
    let want: BTreeMap<u64, f64> = want.into_iter().collect();
    for w in got.windows(2) {
        assert!(w[0].1 > w[1].1 || (w[0].1 == w[1].1 && w[0].0 < w[1].0), "order {got:?}");
    }
    for (key, score) in &got {
        let expect = want.get(key).copied().unwrap_or(f64::NAN);
        assert!((f64::from(*score) - expect).abs() <= 1e-4 * expect.abs().max(1.0), "query {q:?} key {key}: {score} vs {expect}");
    }
}

fn corpus() -> BTreeMap<u64, String> {
    [
        (10, "Returns the number of elements in the vector, also referred to as its length."),
        (11, "Constructs a new, empty Vec<T> with at least the specified capacity. Vec::with_capacity"),
        (12, "Returns true if the vector contains no elements."),
        (13, "A contiguous growable array type, written as Vec<T>, short for vector."),
        (14, "The borrow checker rejects a mutable borrow while an immutable borrow is alive."),
        (15, "HashMap is a hash map implemented with quadratic probing and SIMD lookup."),
        (16, "vector vector vector vector vector vector vector vector"),
    ]
    .into_iter()
    .map(|(k, t)| (k, t.to_string()))
    .collect()
}

fn build(docs: &BTreeMap<u64, String>) -> Bm25Index {
    let mut index = Bm25Index::default();
    for (&k, t) in docs {
        index.add(k, t).unwrap();
    }
    index
}

#[test]
fn scores_equal_brute_force() {
    let docs = corpus();
    let index = build(&docs);
    for q in [
        "vector length",
        "Returns the number of elements",
        "with_capacity",
        "borrow borrow checker",
        "hash map",
        "nothing matches zebra",
        "",
    ] {
        assert_matches_brute(&index, &docs, q);
    }
    let best = search(&index, "number of elements in the vector", 3, KeyFilter::All);
    assert_eq!(best.first().map(|h| h.0), Some(10));
    assert_eq!(search(&index, "Vec::with_capacity", 1, KeyFilter::All).first().map(|h| h.0), Some(11));
}

#[test]
fn removed_keys_are_never_returned_and_stats_follow() {
    let mut docs = corpus();
    let mut index = build(&docs);
    assert!(index.remove(13));
    assert!(!index.remove(13));
    docs.remove(&13);
    assert!(search(&index, "contiguous growable array", 10, KeyFilter::All).is_empty());
    assert_matches_brute(&index, &docs, "vector elements");
    // Replacing a key's text drops its old terms.
    index.add(16, "completely different words").unwrap();
    docs.insert(16, "completely different words".into());
    assert!(search(&index, "vector", 10, KeyFilter::All).iter().all(|h| h.0 != 16));
    assert_matches_brute(&index, &docs, "vector different");
    assert_eq!(index.len(), docs.len());
    for k in docs.keys().copied().collect::<Vec<_>>() {
        index.remove(k);
    }
    assert!(index.is_empty());
    assert_eq!(index.vocabulary_len(), 0, "terms are recycled");
    assert_eq!(index.postings_len(), 0);
    assert!(search(&index, "vector", 10, KeyFilter::All).is_empty());
}

#[test]
fn filters_and_k() {
    let docs = corpus();
    let index = build(&docs);
    let all = search(&index, "vector elements", 100, KeyFilter::All);
    assert!(all.len() >= 4);
    assert_eq!(search(&index, "vector elements", 2, KeyFilter::All), all[..2]);
    assert!(search(&index, "vector elements", 0, KeyFilter::All).is_empty());
    let odd = |k: u64| k % 2 == 1;
    let want: Vec<_> = all.iter().copied().filter(|h| odd(h.0)).collect();
    assert_eq!(search(&index, "vector elements", 100, KeyFilter::Predicate(&odd)), want);
    let subset = [12u64, 13, 99];
    let want: Vec<_> = all.iter().copied().filter(|h| subset.contains(&h.0)).collect();
    assert_eq!(search(&index, "vector elements", 100, KeyFilter::Subset(&subset)), want);
    let mut out = Vec::new();
    let err = index.search("vector", 10, KeyFilter::Subset(&[3, 2]), &mut Bm25Scratch::default(), &mut out).unwrap_err();
    assert_eq!(err.code(), "invalid_input");
    let long = "a".repeat(limits::QUERY_TEXT_BYTES_MAX + 1);
    assert_eq!(index.search(&long, 10, KeyFilter::All, &mut Bm25Scratch::default(), &mut out).unwrap_err().code(), "payload_too_large");
}

#[test]
fn ties_break_by_key() {
    let mut index = Bm25Index::default();
    for k in [5u64, 3, 9, 1] {
        index.add(k, "equal text").unwrap();
    }
    let keys: Vec<u64> = search(&index, "equal", 10, KeyFilter::All).iter().map(|h| h.0).collect();
    assert_eq!(keys, [1, 3, 5, 9]);
}

#[test]
fn limits_and_params() {
    let mut index = Bm25Index::default();
    let big = "x".repeat(limits::MEMORY_TEXT_BYTES_MAX + 1);
    assert_eq!(index.add(1, &big).unwrap_err().code(), "payload_too_large");
    assert!(index.is_empty());
    assert!(Bm25Params { k1: f32::NAN, b: 0.5 }.validate().is_err());
    assert!(Bm25Params { k1: 1.0, b: 1.5 }.validate().is_err());
    assert!(Bm25Params::default().validate().is_ok());
    assert!(idf(10.0, 10.0) > 0.0, "Lucene's IDF stays positive");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Random adds, replacements and removals keep the index equal to brute
    /// force, removed keys never come back, and the subset path gives
    /// bit-identical scores to the postings path.
    #[test]
    fn random_edits_match_brute_force(
        ops in prop::collection::vec((0u64..12, prop::collection::vec(0usize..10, 0..8), any::<bool>()), 1..40),
        query in prop::collection::vec(0usize..10, 1..5),
    ) {
        const WORDS: [&str; 10] = ["alpha", "beta", "gamma", "delta", "snake_case", "Vec", "the", "returns", "value", "E0308"];
        let mut index = Bm25Index::default();
        let mut docs = BTreeMap::new();
        for (key, words, remove) in ops {
            if remove {
                prop_assert_eq!(index.remove(key), docs.remove(&key).is_some());
            } else {
                let text: Vec<&str> = words.iter().map(|&w| WORDS[w]).collect();
                let text = text.join(" ");
                index.add(key, &text).unwrap();
                docs.insert(key, text);
            }
        }
        let q: Vec<&str> = query.iter().map(|&w| WORDS[w]).collect();
        let q = q.join(" ");
        assert_matches_brute(&index, &docs, &q);
        let all = search(&index, &q, 100, KeyFilter::All);
        prop_assert!(all.iter().all(|h| docs.contains_key(&h.0)));
        let subset: Vec<u64> = (0..12).filter(|k| k % 3 == 0).collect();
        let want: Vec<_> = all.iter().copied().filter(|h| subset.contains(&h.0)).collect();
        prop_assert_eq!(search(&index, &q, 100, KeyFilter::Subset(&subset)), want);
    }
}

#[test]
fn small_subset_scored_directly_equals_postings_walk() {
    let mut index = Bm25Index::default();
    for k in 0..200u64 {
        let extra = if k % 7 == 0 { "growable growable" } else { "fixed" };
        index.add(k, &format!("vector number {k} {extra} capacity")).unwrap();
    }
    let q = "growable vector capacity";
    let all = search(&index, q, 1000, KeyFilter::All);
    // Two keys against hundreds of postings: the direct path.
    let subset = [14u64, 15, 400];
    let want: Vec<_> = all.iter().copied().filter(|h| subset.contains(&h.0)).collect();
    let got = search(&index, q, 10, KeyFilter::Subset(&subset));
    assert_eq!(got.len(), 2);
    assert_eq!(got, want, "bit-identical scores on both paths");
    assert_eq!(got[0].0, 14);
}

#[test]
fn term_frequency_saturates_at_255() {
    let mut index = Bm25Index::new(Analyzer::compact(), Bm25Params::default());
    index.add(1, &"zeta ".repeat(255)).unwrap();
    index.add(2, &"zeta ".repeat(400)).unwrap();
    index.add(3, "other words here").unwrap();
    let hits = search(&index, "zeta", 10, KeyFilter::All);
    // Same (saturated) tf, but the longer document is normalized down.
    assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), [1, 2]);
    let mut docs = BTreeMap::new();
    docs.insert(1u64, "zeta ".repeat(255));
    docs.insert(2, "zeta ".repeat(400));
    docs.insert(3, "other words here".to_string());
    let want = brute(&docs, "zeta", index.analyzer(), index.params());
    let w1 = want.iter().find(|w| w.0 == 1).map(|w| w.1).unwrap();
    assert!((f64::from(hits[0].1) - w1).abs() < 1e-4 * w1);
}
