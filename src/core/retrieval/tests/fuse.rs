use crate::core::retrieval::fuse::{fuse, weighted_rrf, Norm};

fn keys(out: &[(u64, f64)]) -> Vec<u64> {
    out.iter().map(|h| h.0).collect()
}

#[test]
fn z_scores_put_both_sides_on_one_footing() {
    // Keyword is sure about 1; the vector side barely separates 2 from 1.
    let kw = [(1, 12.0), (3, 2.0), (4, 1.0)];
    let vec = [(2, 0.62), (1, 0.61), (3, 0.30)];
    let mut out = Vec::new();
    fuse(&kw, &vec, 0.5, Norm::ZScore, &mut out).unwrap();
    assert_eq!(keys(&out)[0], 1);
    // Scores are on [0, 1]: the best 1, the worst 0.
    assert_eq!(out[0].1, 1.0);
    assert_eq!(out.last().unwrap().1, 0.0);
    assert!(out.windows(2).all(|w| w[0].1 >= w[1].1));
}

#[test]
fn the_weight_moves_the_order_to_one_side() {
    let kw = [(1, 3.0), (2, 2.0), (3, 1.0)];
    let vec = [(3, 0.9), (2, 0.5), (1, 0.1)];
    let mut out = Vec::new();
    for norm in [Norm::ZScore, Norm::MinMax] {
        fuse(&kw, &vec, 0.0, norm, &mut out).unwrap();
        assert_eq!(keys(&out), [1, 2, 3]);
        fuse(&kw, &vec, 1.0, norm, &mut out).unwrap();
        assert_eq!(keys(&out), [3, 2, 1]);
    }
}

#[test]
fn a_missing_side_gets_its_lowest_score_and_empty_sides_work() {
    let kw = [(1, 5.0), (2, 1.0)];
    let vec = [(3, 0.9), (1, 0.5)];
    let mut out = Vec::new();
    fuse(&kw, &vec, 0.5, Norm::ZScore, &mut out).unwrap();
    // 1 is found by both; 3 only by the vector side, 2 only by keyword.
    assert_eq!(keys(&out)[0], 1);
    assert_eq!(out.len(), 3);
    fuse(&[], &vec, 0.5, Norm::ZScore, &mut out).unwrap();
    assert_eq!(keys(&out), [3, 1]);
    fuse(&kw, &[], 0.5, Norm::MinMax, &mut out).unwrap();
    assert_eq!(keys(&out), [1, 2]);
    fuse(&[], &[], 0.5, Norm::ZScore, &mut out).unwrap();
    assert!(out.is_empty());
}

#[test]
fn equal_scores_say_nothing_and_ties_go_to_the_lower_key() {
    // The keyword side is flat: the order is the vector side's.
    let kw = [(5, 2.0), (4, 2.0), (6, 2.0)];
    let vec = [(6, 0.9), (5, 0.4), (4, 0.2)];
    let mut out = Vec::new();
    fuse(&kw, &vec, 0.1, Norm::ZScore, &mut out).unwrap();
    assert_eq!(keys(&out), [6, 5, 4]);
    // Everything equal: all score 1, ordered by key.
    fuse(&[(9, 1.0), (8, 1.0)], &[], 0.5, Norm::ZScore, &mut out).unwrap();
    assert_eq!(out, [(8, 1.0), (9, 1.0)]);
}

#[test]
fn non_finite_scores_and_weights_are_handled() {
    let mut out = Vec::new();
    fuse(&[(1, f32::NAN), (2, 1.0)], &[(1, f32::INFINITY)], 0.5, Norm::ZScore, &mut out).unwrap();
    assert!(out.iter().all(|h| h.1.is_finite() && (0.0..=1.0).contains(&h.1)));
    for bad in [f64::NAN, -0.1, 1.5] {
        assert_eq!(fuse(&[], &[], bad, Norm::ZScore, &mut out).unwrap_err().code(), "invalid_input");
        assert_eq!(weighted_rrf(&[], &[], bad, 60.0, &mut out).unwrap_err().code(), "invalid_input");
    }
}

#[test]
fn weighted_rrf_at_half_is_plain_rrf() {
    let mut a = Vec::new();
    let mut b = Vec::new();
    weighted_rrf(&[1, 2, 3], &[3, 4, 1], 0.5, 60.0, &mut a).unwrap();
    crate::core::retrieval::rank::rrf(&[&[1, 2, 3], &[3, 4, 1]], 60.0, &mut b);
    crate::core::retrieval::rank::normalize_by_max(&mut b);
    b.sort_by(|x, y| y.1.total_cmp(&x.1).then(x.0.cmp(&y.0)));
    assert_eq!(keys(&a), keys(&b));
    for (x, y) in a.iter().zip(&b) {
        assert!((x.1 - y.1).abs() < 1e-12);
    }
    // All weight on keyword: the keyword order.
    weighted_rrf(&[1, 2, 3], &[3, 4, 1], 0.0, 60.0, &mut a).unwrap();
    assert_eq!(keys(&a)[..3], [1, 2, 3]);
}

#[test]
fn coverage_moves_the_weight_between_the_sides() {
    use crate::core::retrieval::fuse::{coverage, coverage_weight};
    assert_eq!(coverage(5.0, 10.0), 0.5);
    assert_eq!(coverage(0.0, 0.0), 0.0);
    assert_eq!(coverage(f32::NAN, 1.0), 0.0);
    assert_eq!(coverage(20.0, 10.0), 1.0);
    // Every query word in the best keyword hit: all keyword.
    assert_eq!(coverage_weight(1.0, 1.0, 0.5).unwrap(), 0.0);
    // None of them, and a vector hit that stands out: all vector.
    assert_eq!(coverage_weight(0.0, 1.0, 0.5).unwrap(), 1.0);
    // Nothing to go on: the prior.
    assert_eq!(coverage_weight(0.0, 0.0, 0.3).unwrap(), 0.3);
    // Monotonic in coverage.
    let w: Vec<f64> = [0.1, 0.3, 0.5, 0.7, 0.9].iter().map(|&c| coverage_weight(c, 0.5, 0.5).unwrap()).collect();
    assert!(w.windows(2).all(|p| p[0] > p[1]), "{w:?}");
    assert!(coverage_weight(0.5, 0.5, f64::NAN).is_err());
    assert!(coverage_weight(f64::NAN, f64::INFINITY, 0.5).unwrap().is_finite());
}
