use super::*;

/// SplitMix64: deterministic data without an RNG dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [-1, 1).
    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }
}

/// `n` points around 24 cluster centres, plus `q` queries from the same
/// distribution.
fn clustered(n: usize, q: usize, dim: usize, seed: u64) -> (Vec<f32>, Vec<f32>) {
    let mut rng = Rng(seed);
    let centres: Vec<f32> = (0..24 * dim).map(|_| rng.unit()).collect();
    let mut gen = |count: usize| {
        let mut out = Vec::with_capacity(count * dim);
        for _ in 0..count {
            let c = (rng.next() % 24) as usize;
            out.extend((0..dim).map(|j| centres[c * dim + j] + 0.45 * rng.unit()));
        }
        out
    };
    (gen(n), gen(q))
}

const DIM: usize = 32;

/// Test graphs are built with a narrower beam: debug builds are slow, and
/// this clustered data needs no more for recall ≥ 0.95.
fn quick(config: Config) -> Config {
    config.ef_construction(40)
}

fn index_with(config: Config, data: &[f32]) -> VectorIndex {
    let mut idx = VectorIndex::new(quick(config)).unwrap();
    let keys: Vec<u64> = (0..(data.len() / DIM) as u64).collect();
    idx.add_batch(&keys, data).unwrap();
    idx
}

/// Adds `data` in chunks of `chunk` rows, compacting with a budget of one
/// chunk after each: several sealed segments, merges left pending.
fn index_segmented(config: Config, data: &[f32], chunk: usize) -> VectorIndex {
    let mut idx = VectorIndex::new(quick(config)).unwrap();
    let n = data.len() / DIM;
    for start in (0..n).step_by(chunk) {
        let end = (start + chunk).min(n);
        idx.add_batch(&(start as u64..end as u64).collect::<Vec<_>>(), &data[start * DIM..end * DIM]).unwrap();
        let r = idx.compact(chunk).unwrap();
        assert!(r.work_points <= chunk);
    }
    idx
}

fn params(k: usize) -> SearchParams {
    SearchParams { k, ef: None }
}

fn keys_of(hits: &[Hit]) -> Vec<u64> {
    hits.iter().map(|h| h.key).collect()
}

/// Mean recall@k of `search` against `search_exact` over `queries`.
fn recall(idx: &VectorIndex, queries: &[f32], k: usize, filter: &Eligible<'_>) -> f64 {
    let (mut s, mut approx, mut exact) = (Scratch::default(), Vec::new(), Vec::new());
    let mut hit = 0usize;
    let mut total = 0usize;
    for q in queries.chunks_exact(DIM) {
        idx.search(q, &params(k), filter, &mut s, &mut approx).unwrap();
        idx.search_exact(q, &params(k), filter, &mut s, &mut exact).unwrap();
        total += exact.len();
        hit += exact.iter().filter(|e| approx.iter().any(|a| a.key == e.key)).count();
    }
    hit as f64 / total.max(1) as f64
}

#[test]
fn recall_stays_high_after_30_percent_deletes_and_deleted_keys_never_return() {
    let (data, queries) = clustered(3000, 100, DIM, 7);
    let mut idx = index_segmented(Config::new(DIM, Metric::Cosine).seal_points(700).seed(1), &data, 750);
    assert_eq!(idx.stats().builds, 4);
    assert!(idx.stats().segments.iter().filter(|s| s.kind == SegmentKind::Hnsw).count() >= 3);
    let mut rng = Rng(99);
    let mut deleted = Vec::new();
    for key in 0..3000u64 {
        if rng.next() % 10 < 3 {
            assert!(idx.remove(key));
            deleted.push(key);
        }
    }
    assert!(!idx.remove(deleted[0]), "a second delete finds nothing");
    assert_eq!(idx.len(), 3000 - deleted.len());
    let check = |idx: &VectorIndex, what: &str| {
        let r = recall(idx, &queries, 10, &Eligible::All);
        assert!(r >= 0.95, "{what}: recall@10 {r}");
        let (mut s, mut out) = (Scratch::default(), Vec::new());
        for q in queries.chunks_exact(DIM) {
            idx.search(q, &SearchParams { k: 100, ef: Some(200) }, &Eligible::All, &mut s, &mut out).unwrap();
            assert_eq!(out.len(), 100);
            assert!(out.iter().all(|h| deleted.binary_search(&h.key).is_err()), "{what}: a deleted key came back");
            assert!(out.windows(2).all(|w| w[0].score >= w[1].score), "{what}: not best first");
        }
    };
    check(&idx, "tombstoned");
    let decoded = VectorIndex::decode(&idx.encode()).unwrap();
    check(&decoded, "decoded");
    let r = idx.compact(usize::MAX).unwrap();
    assert!(r.merged_segments >= 1, "30 % tombstones trigger a rebuild: {r:?}");
    assert!(idx.stats().segments.iter().all(|s| s.tombstones * 100 < limits::VECTOR_TOMBSTONE_PERCENT_MAX * s.rows.max(1)));
    check(&idx, "compacted");
    assert_eq!(idx.live_entries(), decoded.live_entries(), "compaction changes no live point");
}

#[test]
fn upsert_replaces_and_the_old_vector_is_gone() {
    let (data, _) = clustered(900, 0, DIM, 3);
    let mut idx = index_with(Config::new(DIM, Metric::Dot).seal_points(300), &data);
    idx.compact(usize::MAX).unwrap();
    let target: Vec<f32> = data[5 * DIM..6 * DIM].to_vec();
    let far: Vec<f32> = target.iter().map(|x| -x).collect();
    assert!(idx.add(5, &far).unwrap(), "replaced a live key");
    let (mut s, mut out) = (Scratch::default(), Vec::new());
    idx.search(&target, &params(20), &Eligible::All, &mut s, &mut out).unwrap();
    assert!(!keys_of(&out).contains(&5), "key 5 now points away from its old vector");
    idx.search(&far, &params(1), &Eligible::All, &mut s, &mut out).unwrap();
    assert_eq!((out[0].key, out[0].kind()), (5, SegmentKind::Flat));
    assert_eq!(idx.len(), 900);
}

#[test]
fn key_subset_filters_are_exact() {
    let (data, queries) = clustered(2500, 30, DIM, 11);
    let mut idx = index_segmented(Config::new(DIM, Metric::Cosine).seal_points(600), &data, 800);
    for key in (0..2500).step_by(5) {
        idx.remove(key);
    }
    let subset: Vec<u64> = (0..2600u64).filter(|k| k % 7 == 1).collect();
    let (mut s, mut out) = (Scratch::default(), Vec::new());
    for q in queries.chunks_exact(DIM) {
        idx.search(q, &params(10), &Eligible::Keys(&subset), &mut s, &mut out).unwrap();
        // Brute force over the subset, by hand.
        let qn = norm(q);
        let mut want: Vec<(f32, u64)> = subset
            .iter()
            .filter(|k| **k < 2500 && **k % 5 != 0)
            .map(|&k| {
                let v = &data[k as usize * DIM..(k as usize + 1) * DIM];
                ((f64::from(dot_f32(q, v)) / (qn * norm(v))) as f32, k)
            })
            .collect();
        want.sort_by(|a, b| b.0.total_cmp(&a.0));
        assert_eq!(keys_of(&out), want.iter().take(10).map(|w| w.1).collect::<Vec<_>>());
        for (h, w) in out.iter().zip(&want) {
            assert!((h.score - w.0).abs() < 1e-5);
        }
    }
}

#[test]
fn selective_predicates_fall_back_to_exact() {
    let (data, queries) = clustered(2000, 20, DIM, 5);
    let mut idx = index_with(Config::new(DIM, Metric::Cosine).seal_points(500), &data);
    idx.compact(usize::MAX).unwrap();
    let rare = |k: u64| k % 97 == 3;
    let common = |k: u64| k % 2 == 0;
    let (mut s, mut a, mut e) = (Scratch::default(), Vec::new(), Vec::new());
    for q in queries.chunks_exact(DIM) {
        idx.search(q, &params(10), &Eligible::Predicate(&rare), &mut s, &mut a).unwrap();
        idx.search_exact(q, &params(10), &Eligible::Predicate(&rare), &mut s, &mut e).unwrap();
        assert_eq!(keys_of(&a), keys_of(&e));
        idx.search(q, &params(10), &Eligible::Predicate(&common), &mut s, &mut a).unwrap();
        assert_eq!(a.len(), 10);
        assert!(a.iter().all(|h| common(h.key)));
    }
    assert!(recall(&idx, &queries, 10, &Eligible::Predicate(&common)) >= 0.95);
}

#[test]
fn encode_decode_round_trips_without_a_rebuild() {
    for quant in [Quantization::None, Quantization::Int8] {
        let (data, queries) = clustered(1500, 20, DIM, 21);
        let mut idx = index_segmented(Config::new(DIM, Metric::Cosine).quantization(quant).seal_points(400).seed(9), &data, 500);
        idx.add_batch(&[5000, 5001], &data[..2 * DIM]).unwrap();
        idx.remove(17);
        assert!(idx.stats().builds >= 3);
        let bytes = idx.encode();
        let back = VectorIndex::decode(&bytes).unwrap();
        assert_eq!(back.stats().builds, 0, "decode built no graph");
        assert_eq!(back.encode(), bytes, "graphs and rows restored bit for bit");
        assert_eq!(back.live_entries(), idx.live_entries());
        assert_eq!(back.config(), idx.config());
        let (mut s, mut a, mut b) = (Scratch::default(), Vec::new(), Vec::new());
        for q in queries.chunks_exact(DIM) {
            idx.search(q, &params(10), &Eligible::All, &mut s, &mut a).unwrap();
            back.search(q, &params(10), &Eligible::All, &mut s, &mut b).unwrap();
            assert_eq!(a, b);
        }
    }
}

#[test]
fn bad_vectors_and_parameters_are_refused_and_change_nothing() {
    let (data, _) = clustered(200, 0, DIM, 2);
    let mut idx = index_with(Config::new(DIM, Metric::Cosine), &data);
    let before = idx.live_entries();
    let code = |r: Result<bool>| r.unwrap_err().code();
    assert_eq!(code(idx.add(1, &[1.0; DIM - 1])), "dimension_mismatch");
    let mut v = vec![0.5; DIM];
    v[3] = f32::NAN;
    assert_eq!(code(idx.add(1, &v)), "non_finite");
    v[3] = f32::INFINITY;
    assert_eq!(code(idx.add(1, &v)), "non_finite");
    v[3] = 1e20;
    assert_eq!(code(idx.add(1, &v)), "non_finite");
    assert_eq!(code(idx.add(1, &[0.0; DIM])), "zero_vector");
    // A batch with one bad row inserts nothing.
    let mut batch = data[..3 * DIM].to_vec();
    batch[2 * DIM + 1] = f32::NEG_INFINITY;
    assert_eq!(idx.add_batch(&[900, 901, 902], &batch).unwrap_err().code(), "non_finite");
    assert_eq!(idx.add_batch(&[900, 901], &batch).unwrap_err().code(), "dimension_mismatch");
    assert_eq!(idx.live_entries(), before);
    let (mut s, mut out) = (Scratch::default(), vec![Hit { key: 1, score: 0.0, segment: 0 }]);
    let q = &data[..DIM];
    let err = |p: SearchParams, q: &[f32], s: &mut Scratch, out: &mut Vec<Hit>| idx.search(q, &p, &Eligible::All, s, out).unwrap_err();
    assert_eq!(err(SearchParams { k: 0, ef: None }, q, &mut s, &mut out).code(), "invalid_input");
    assert_eq!(err(SearchParams { k: 101, ef: None }, q, &mut s, &mut out).code(), "limit_exceeded");
    assert_eq!(err(SearchParams { k: 10, ef: Some(0) }, q, &mut s, &mut out).code(), "invalid_input");
    assert_eq!(err(SearchParams { k: 10, ef: Some(1001) }, q, &mut s, &mut out).code(), "limit_exceeded");
    assert_eq!(err(params(10), &[0.0; DIM], &mut s, &mut out).code(), "zero_vector");
    assert_eq!(err(params(10), &[1.0; 3], &mut s, &mut out).code(), "dimension_mismatch");
    assert_eq!(idx.live_entries(), before);
    // Under the dot metric a zero vector is a valid point.
    let mut dot = VectorIndex::new(Config::new(DIM, Metric::Dot)).unwrap();
    assert!(!dot.add(1, &[0.0; DIM]).unwrap());
    for bad in [Config::new(0, Metric::Dot), Config::new(4097, Metric::Dot), Config::new(8, Metric::Dot).links_max(65), Config::new(8, Metric::Dot).seal_points(1)] {
        assert_eq!(VectorIndex::new(bad).unwrap_err().code(), "invalid_input");
    }
}

#[test]
fn corrupt_truncated_and_newer_blobs_are_refused() {
    let (data, _) = clustered(600, 0, DIM, 4);
    let mut idx = index_with(Config::new(DIM, Metric::Cosine).seal_points(300), &data);
    idx.compact(usize::MAX).unwrap();
    idx.remove(3);
    let bytes = idx.encode();
    for cut in [0, 3, 16, 40, bytes.len() / 2, bytes.len() - 1] {
        assert_eq!(VectorIndex::decode(&bytes[..cut]).unwrap_err().code(), "snapshot_corrupt", "cut at {cut}");
    }
    for at in (0..bytes.len()).step_by(bytes.len() / 97) {
        let mut b = bytes.clone();
        b[at] ^= 0x20;
        let e = VectorIndex::decode(&b).unwrap_err();
        assert!(matches!(e.code(), "snapshot_corrupt" | "schema_version_unsupported"), "flip at {at}: {e}");
    }
    let mut newer = bytes.clone();
    newer[4..8].copy_from_slice(&2u32.to_le_bytes());
    assert_eq!(VectorIndex::decode(&newer).unwrap_err().code(), "schema_version_unsupported");
    // Well-checksummed but inconsistent content: a link past its layer.
    let mut forged = bytes.clone();
    let body = forged.len() - 4;
    forged[body - 4..body].copy_from_slice(&u32::MAX.to_le_bytes());
    let crc = crc32fast::hash(&forged[..body]);
    forged[body..].copy_from_slice(&crc.to_le_bytes());
    assert_eq!(VectorIndex::decode(&forged).unwrap_err().code(), "snapshot_corrupt");
}

#[test]
fn compaction_respects_its_work_bound() {
    let (data, queries) = clustered(2000, 20, DIM, 8);
    let mut idx = index_with(Config::new(DIM, Metric::Cosine).seal_points(256), &data);
    let r = idx.compact(100).unwrap();
    assert_eq!((r.work_points, r.segments_built), (0, 0));
    assert!(r.pending, "a 2000-point flat segment is due but exceeds 100");
    let mut calls = 0;
    loop {
        let r = idx.compact(1200).unwrap();
        assert!(r.work_points <= 1200, "{r:?}");
        calls += 1;
        if r.work_points == 0 {
            break;
        }
        assert!(calls < 20);
    }
    let stats = idx.stats();
    assert!(stats.segments.iter().all(|s| s.rows <= limits::VECTOR_SEGMENT_POINTS_MAX));
    assert!(stats.segments[0].rows < 256, "flat sealed: {stats:?}");
    assert_eq!(idx.len(), 2000);
    assert!(recall(&idx, &queries, 10, &Eligible::All) >= 0.95);
}

#[test]
fn int8_recall_and_exact_rerank_with_originals() {
    let (data, queries) = clustered(2000, 40, DIM, 13);
    let mut q8 = index_with(Config::new(DIM, Metric::Cosine).quantization(Quantization::Int8).seal_points(500), &data);
    q8.compact(usize::MAX).unwrap();
    let f32idx = index_with(Config::new(DIM, Metric::Cosine), &data);
    let (mut s, mut a, mut e) = (Scratch::default(), Vec::new(), Vec::new());
    let (mut hit, mut total) = (0, 0);
    for q in queries.chunks_exact(DIM) {
        let mut originals = |key: u64, out: &mut Vec<f32>| {
            out.clear();
            out.extend_from_slice(&data[key as usize * DIM..(key as usize + 1) * DIM]);
            true
        };
        q8.search_reranked(q, &params(10), &Eligible::All, &mut originals, &mut s, &mut a).unwrap();
        f32idx.search_exact(q, &params(10), &Eligible::All, &mut s, &mut e).unwrap();
        total += 10;
        hit += e.iter().filter(|x| a.iter().any(|y| y.key == x.key)).count();
        for h in &a {
            let v = &data[h.key as usize * DIM..(h.key as usize + 1) * DIM];
            let exact = (f64::from(dot_f32(q, v)) / (norm(q) * norm(v))) as f32;
            assert!((h.score - exact).abs() < 1e-5, "re-ranked scores are exact");
        }
    }
    assert!(hit as f64 / total as f64 >= 0.95, "int8 + re-rank recall {hit}/{total}");
    // Flat rows alone: 36 bytes a row (codes and scale) against 128.
    let flat8 = index_with(Config::new(DIM, Metric::Cosine).quantization(Quantization::Int8), &data);
    assert!(flat8.memory_bytes() * 2 < f32idx.memory_bytes(), "{} vs {}", flat8.memory_bytes(), f32idx.memory_bytes());
}

#[test]
fn int8_dot_matches_scalar_and_f32_kernel_is_exact_enough() {
    let mut rng = Rng(1);
    for n in [0, 1, 15, 16, 17, 384, 1000] {
        let a: Vec<i8> = (0..n).map(|_| (rng.next() % 255) as i8).map(|x| x.max(-127)).collect();
        let b: Vec<i8> = (0..n).map(|_| (rng.next() % 255) as i8).map(|x| x.max(-127)).collect();
        assert_eq!(dot_i8(&a, &b), distance::scalar_dot_i8(&a, &b));
        let x: Vec<f32> = (0..n).map(|_| rng.unit()).collect();
        let y: Vec<f32> = (0..n).map(|_| rng.unit()).collect();
        let want: f64 = x.iter().zip(&y).map(|(p, q)| f64::from(*p) * f64::from(*q)).sum();
        assert!((f64::from(dot_f32(&x, &y)) - want).abs() < 1e-4, "n={n}");
    }
}

/// The real MiniLM set, when `../shared/data` is present: recall of the
/// default configuration on a prefix (debug builds are slow; the full set
/// is measured by `examples/vector_probe.rs`).
#[test]
fn rustdocs_prefix_recall() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/rustdocs");
    let (Ok(p), Ok(q)) = (std::fs::read(dir.join("passages.f32")), std::fs::read(dir.join("queries.f32"))) else {
        eprintln!("skipped: ../shared/data/rustdocs is absent");
        return;
    };
    let f = |b: &[u8]| b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect::<Vec<f32>>();
    let (p, q) = (f(&p), f(&q));
    let n = 1000;
    let mut idx = VectorIndex::new(quick(Config::new(384, Metric::Cosine).seal_points(500))).unwrap();
    idx.add_batch(&(0..n as u64).collect::<Vec<_>>(), &p[..n * 384]).unwrap();
    idx.compact(usize::MAX).unwrap();
    let (mut s, mut a, mut e) = (Scratch::default(), Vec::new(), Vec::new());
    let (mut hit, mut total) = (0, 0);
    for qv in q.chunks_exact(384).take(200) {
        idx.search(qv, &params(10), &Eligible::All, &mut s, &mut a).unwrap();
        idx.search_exact(qv, &params(10), &Eligible::All, &mut s, &mut e).unwrap();
        total += e.len();
        hit += e.iter().filter(|x| a.iter().any(|y| y.key == x.key)).count();
    }
    assert!(hit as f64 / total as f64 >= 0.95, "recall {hit}/{total}");
}

#[test]
fn permuting_rows_in_place_gathers_by_order() {
    let dim = 5;
    for int8 in [false, true] {
        for n in [0usize, 1, 2, 7, 64] {
            let mut rows = Vectors::with_capacity(dim, int8, n);
            let mut q = rows::Query::default();
            for i in 0..n {
                q.f32 = (0..dim).map(|j| (i * dim + j) as f32 + 1.0).collect();
                q.codes = (0..dim).map(|j| ((i * 7 + j) % 120) as i8).collect();
                q.scale = i as f32 + 0.5;
                rows.push(&q);
            }
            // A deterministic shuffle with long and short cycles.
            let mut order: Vec<u32> = (0..n as u32).collect();
            for i in (1..n).rev() {
                order.swap(i, (i * 31 + 7) % (i + 1));
            }
            let mut want = Vectors::with_capacity(dim, int8, n);
            for &old in &order {
                want.push_from(&rows, old as usize);
            }
            rows.permute(&order);
            assert_eq!(rows, want, "n {n}, int8 {int8}");
        }
    }
}

#[test]
fn a_stored_vector_added_back_is_kept_bit_for_bit() {
    let dim = DIM;
    let (data, _) = clustered(50, 0, dim, 7);
    let source = index_with(Config::new(dim, Metric::Cosine), &data);
    let mut moved = 0;
    for key in 0..50u64 {
        // A stored vector as another build may hold it: unit length within
        // f32 precision, not exactly (wasm's stored vectors measured 6.6e-8
        // off in squared norm).
        let v: Vec<f32> = source.get(key).unwrap().iter().map(|x| x * (1.0 + 2.0 * f32::EPSILON)).collect();
        let mut kept = VectorIndex::new(Config::new(dim, Metric::Cosine)).unwrap();
        kept.add_stored(key, &v).unwrap();
        assert_eq!(kept.get(key).unwrap(), v, "key {key}");
        // `add` normalizes it again, which moves some components.
        let mut again = VectorIndex::new(Config::new(dim, Metric::Cosine)).unwrap();
        again.add(key, &v).unwrap();
        moved += usize::from(again.get(key).unwrap() != v);
    }
    assert!(moved > 0, "the test needs vectors that re-normalizing moves");
    // A vector that is not unit length is normalized as `add` does.
    let raw: Vec<f32> = data[..dim].iter().map(|x| x * 3.0).collect();
    let (mut target, mut plain) = (VectorIndex::new(Config::new(dim, Metric::Cosine)).unwrap(), VectorIndex::new(Config::new(dim, Metric::Cosine)).unwrap());
    target.add_stored(99, &raw).unwrap();
    plain.add(99, &raw).unwrap();
    assert_eq!(target.get(99), plain.get(99));
}
