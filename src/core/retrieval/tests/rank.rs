use crate::core::retrieval::rank::{alpha_hybrid, normalize_by_max, recency_score, rerank_with_recency, rrf, RecencyHit, RecencyParams, TextNorm};

const DAY: u64 = 86_400_000;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[test]
fn rrf_by_hand() {
    let mut out = Vec::new();
    rrf(&[&[1, 2, 3], &[3, 1]], 60.0, &mut out);
    let keys: Vec<u64> = out.iter().map(|h| h.0).collect();
    assert_eq!(keys, [1, 3, 2]);
    assert!(close(out[0].1, 1.0 / 61.0 + 1.0 / 62.0));
    assert!(close(out[1].1, 1.0 / 63.0 + 1.0 / 61.0));
    assert!(close(out[2].1, 1.0 / 62.0));
    // A repeated key counts once, at its best rank; ties go to the smaller key.
    rrf(&[&[7, 7], &[5]], 60.0, &mut out);
    assert_eq!(out, [(5, 1.0 / 61.0), (7, 1.0 / 61.0)]);
    // A bad k falls back to 60.
    rrf(&[&[9]], f64::NAN, &mut out);
    assert!(close(out[0].1, 1.0 / 61.0));
    rrf(&[], 60.0, &mut out);
    assert!(out.is_empty());
}

#[test]
fn alpha_hybrid_by_hand() {
    let kw = [(1u64, 10.0f32), (2, 5.0)];
    let vec = [(1u64, 0.4f32), (3, 0.0)];
    let mut out = Vec::new();
    // AMS: 0.3 · bm25 + 0.7 · (2 - d) / 2, divided by the best.
    alpha_hybrid(&kw, &vec, 0.7, TextNorm::Raw, &mut out).unwrap();
    let best = 0.3 * 10.0 + 0.7 * 0.8;
    assert_eq!(out.iter().map(|h| h.0).collect::<Vec<_>>(), [1, 2, 3]);
    assert!(close(out[0].1, 1.0));
    assert!((out[1].1 - 1.5 / best).abs() < 1e-6);
    assert!((out[2].1 - 0.7 / best).abs() < 1e-6);
    // Text divided by its best first: the vector-only hit now beats key 2.
    alpha_hybrid(&kw, &vec, 0.7, TextNorm::Max, &mut out).unwrap();
    assert_eq!(out.iter().map(|h| h.0).collect::<Vec<_>>(), [1, 3, 2]);
    assert!((out[1].1 - 0.7 / 0.86).abs() < 1e-6);
    assert!((out[2].1 - 0.15 / 0.86).abs() < 1e-6);
    // alpha 0 is keyword only, alpha 1 vector only.
    alpha_hybrid(&kw, &vec, 1.0, TextNorm::Raw, &mut out).unwrap();
    assert_eq!(out.first().map(|h| h.0), Some(3));
    assert!(alpha_hybrid(&kw, &vec, 1.5, TextNorm::Raw, &mut out).is_err());
    assert!(alpha_hybrid(&kw, &vec, f64::NAN, TextNorm::Raw, &mut out).is_err());
}

#[test]
fn normalize_by_max_like_ams() {
    let mut s = [(1, 4.0), (2, 2.0), (3, 0.0)];
    normalize_by_max(&mut s);
    assert_eq!(s, [(1, 1.0), (2, 0.5), (3, 0.0)]);
    let mut z = [(1, 0.0), (2, -1.0)];
    normalize_by_max(&mut z);
    assert_eq!(z, [(1, 0.0), (2, 0.0)]);
}

#[test]
fn recency_by_hand() {
    let p = RecencyParams::default();
    let now = 100 * DAY;
    assert!(close(recency_score(now, now, now, &p), 1.0));
    // One half-life each: 0.6 · 0.5 + 0.4 · 0.5.
    assert!(close(recency_score(now - 7 * DAY, now - 30 * DAY, now, &p), 0.5));
    // Times in the future count as now.
    assert!(close(recency_score(now + DAY, now + DAY, now, &p), 1.0));
    // A zero half-life is floored at 0.001 days, so anything older is ~0.
    let zero = RecencyParams { half_life_last_access_days: 0.0, half_life_created_days: 0.0, ..p };
    assert!(recency_score(now - DAY, now - DAY, now, &zero) < 1e-12);
    assert!(RecencyParams { semantic_weight: f64::INFINITY, ..p }.validate().is_err());
}

#[test]
fn rerank_by_hand() {
    let p = RecencyParams::default();
    let now = 100 * DAY;
    let mut hits = [
        RecencyHit { key: 2, dist: 0.1, last_accessed: now - 7 * DAY, created_at: now - 30 * DAY },
        RecencyHit { key: 1, dist: 0.2, last_accessed: now, created_at: now },
        RecencyHit { key: 3, dist: 0.1, last_accessed: now - 7 * DAY, created_at: now - 30 * DAY },
    ];
    let scores = rerank_with_recency(&mut hits, now, &p);
    assert_eq!(hits.iter().map(|h| h.key).collect::<Vec<_>>(), [1, 2, 3], "stable for equal scores");
    assert!((scores[0] - 0.84).abs() < 1e-12);
    assert!((scores[1] - 0.82).abs() < 1e-12);
    // Without recency weight the original order by distance wins.
    let mut hits2 = hits;
    rerank_with_recency(&mut hits2, now, &RecencyParams { recency_weight: 0.0, ..p });
    assert_eq!(hits2.iter().map(|h| h.key).collect::<Vec<_>>(), [2, 3, 1]);
}
