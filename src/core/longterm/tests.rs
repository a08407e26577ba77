//! Long-term memory: ops, deduplication, refusals that change nothing,
//! exact filters, deletes never returned, snapshots without a rebuild.


use super::*;
use crate::core::retrieval::record::MemoryPatch;
use super::search::Fusion;
use crate::core::engine::{Applied, Engine, Op};
use crate::core::retrieval::filter::Filter;
use crate::core::retrieval::record::MemoryType;
use serde_json::json;

const DIM: usize = 16;

/// Deterministic pseudo-random unit-ish vectors around a few centres.
fn vector(seed: u64) -> Vec<f32> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..DIM)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let centre = if (seed % 4) as usize == i % 4 { 1.0 } else { 0.0 };
            centre + ((x % 1000) as f32 / 1000.0 - 0.5) * 0.6
        })
        .collect()
}

fn record(i: u64) -> NewRecord {
    let mut r = MemoryRecord::new(format!("m{i}"), format!("memory number {i} about topic {}", i % 5), MemoryType::Semantic, 1_000 + i);
    r.user_id = Some(format!("u{}", i % 3));
    r.topics = vec![format!("t{}", i % 5)];
    r.refresh_hash();
    NewRecord { record: r, vector: vector(i) }
}

fn engine(n: u64) -> Engine {
    let mut e = Engine::new();
    for chunk in (0..n).collect::<Vec<_>>().chunks(100) {
        let records = chunk.iter().map(|&i| record(i)).collect();
        e.apply(&Op::Ltm(LtmOp::Create { records, deduplicate: true, embedder: None, actor: None }), 5_000).unwrap();
    }
    e
}

fn req<'a>(v: &'a [f32], filter: &'a Filter, limit: usize) -> SearchRequest<'a> {
    SearchRequest { vector: Some(v), limit, ..SearchRequest::new("", filter) }
}

#[test]
fn bad_vectors_and_records_are_refused_and_change_nothing() {
    let mut e = engine(10);
    let before = e.clone();
    let mut nan = record(100);
    nan.vector[3] = f32::NAN;
    let mut zero = record(101);
    zero.vector = vec![0.0; DIM];
    let mut short = record(102);
    short.vector.pop();
    let mut inf = record(103);
    inf.vector[0] = f32::INFINITY;
    let mut empty_text = record(104);
    empty_text.record.text.clear();
    for (bad, code) in [(nan, "non_finite"), (zero, "zero_vector"), (short, "dimension_mismatch"), (inf, "non_finite"), (empty_text, "invalid_input")] {
        // A bad record among good ones: the whole batch is refused.
        let op = Op::Ltm(LtmOp::Create { records: vec![record(200), bad], deduplicate: false, embedder: None, actor: None });
        assert_eq!(e.apply(&op, 6_000).unwrap_err().code(), code);
        assert_eq!(e, before, "{code}: nothing half-written");
    }
    let op = Op::Ltm(LtmOp::Update { id: "m1".into(), patch: MemoryPatch { text: Some("x".into()), ..MemoryPatch::default() }, vector: Some(vec![1.0; DIM + 1]), embedder: None, actor: None });
    assert_eq!(e.apply(&op, 6_000).unwrap_err().code(), "dimension_mismatch");
    assert_eq!(e, before);
}

#[test]
fn duplicates_by_hash_are_skipped_and_ids_overwrite() {
    let mut e = engine(5);
    let mut dup = record(0);
    dup.record.id = "copy".into();
    let Applied::Ltm(LtmApplied::Created { created, duplicates, .. }) = e.apply(&Op::Ltm(LtmOp::Create { records: vec![dup.clone()], deduplicate: true, embedder: None, actor: None }), 6_000).unwrap() else { panic!() };
    assert_eq!((created.len(), duplicates), (0, vec!["copy".to_owned()]));
    e.apply(&Op::Ltm(LtmOp::Create { records: vec![dup], deduplicate: false, embedder: None, actor: None }), 6_000).unwrap();
    assert_eq!(e.longterm().len(), 6);
    let mut again = record(1);
    again.record.text = "rewritten".into();
    again.record.refresh_hash();
    e.apply(&Op::Ltm(LtmOp::Create { records: vec![again], deduplicate: true, embedder: None, actor: None }), 6_000).unwrap();
    assert_eq!(e.longterm().get("m1").unwrap().text, "rewritten");
    assert_eq!(e.longterm().len(), 6, "same id overwrites");
}

#[test]
fn filters_are_exact_and_deleted_ids_never_come_back() {
    let mut e = engine(5_000);
    // Compact so HNSW segments answer the unfiltered and large-filter cases.
    while e.compact_vectors(4_096).unwrap().is_some_and(|r| r.work_points > 0) {}
    let gone: Vec<String> = (0..5_000).step_by(3).map(|i| format!("m{i}")).collect();
    for ids in gone.chunks(1_000) {
        e.apply(&Op::Ltm(LtmOp::Delete { ids: ids.to_vec(), forget: false, actor: None }), 7_000).unwrap();
    }
    let lt = e.longterm();
    for q in 0..40u64 {
        let v = vector(10_000 + q);
        let filter = Filter::from_request(json!({"user_id": {"eq": "u1"}, "topics": {"any": ["t2", "t3"]}}).as_object().unwrap()).unwrap();
        let got = lt.search(&req(&v, &filter, 10), 0).unwrap();
        assert!(got.exact, "a selective filter is answered by an exact scan");
        // Brute force over the matching set.
        let mut want: Vec<(f32, u64)> = lt
            .records
            .iter()
            .filter(|(_, r)| filter.matches(r))
            .map(|(k, _)| {
                let x = lt.index().unwrap().get(*k).unwrap();
                let n = v.iter().map(|a| a * a).sum::<f32>().sqrt();
                (x.iter().zip(&v).map(|(a, b)| a * b / n).sum::<f32>(), *k)
            })
            .collect();
        want.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let want: Vec<u64> = want.iter().take(10).map(|x| x.1).collect();
        let got_keys: Vec<u64> = got.hits.iter().map(|h| h.key).collect();
        assert_eq!(got_keys, want, "query {q}");
        for h in &got.hits {
            let r = lt.record_by_key(h.key).unwrap();
            assert!(filter.matches(r));
            assert!(!gone.contains(&r.id));
        }
        let all = lt.search(&req(&v, &Filter::default(), 50), 0).unwrap();
        assert!(all.hits.iter().all(|h| !gone.contains(&lt.record_by_key(h.key).unwrap().id)), "deleted ids are never returned");
        let none = Filter::default();
        let kw = SearchRequest { text: "memory number topic", mode: Mode::Keyword, vector: None, ..req(&v, &none, 50) };
        assert!(lt.search(&kw, 0).unwrap().hits.iter().all(|h| !gone.contains(&lt.record_by_key(h.key).unwrap().id)));
    }
}

#[test]
fn snapshot_round_trip_keeps_the_graphs() {
    let mut e = engine(4_500);
    while e.compact_vectors(limits::LTM_COMPACT_WORK_POINTS_PER_WRITE).unwrap().is_some_and(|r| r.work_points > 0) {}
    let stats = e.longterm().index().unwrap().stats();
    assert!(stats.segments.iter().any(|s| s.kind == crate::core::vector::SegmentKind::Hnsw), "{stats:?}");
    let back = Engine::decode_snapshot(&e.encode_snapshot().unwrap()).unwrap();
    assert_eq!(back, e);
    let shape = |s: &crate::core::vector::Stats| s.segments.iter().map(|g| (g.id, g.kind, g.rows, g.tombstones, g.layers)).collect::<Vec<_>>();
    assert_eq!(shape(&back.longterm().index().unwrap().stats()), shape(&stats), "same segments and graphs: nothing was re-sealed");
    let v = vector(77);
    let f = Filter::default();
    assert_eq!(back.longterm().search(&req(&v, &f, 10), 0).unwrap(), e.longterm().search(&req(&v, &f, 10), 0).unwrap());
}

/// The store's own per-write bound seals the flat segment: a bound below the
/// seal size once left every tenant on an ever-growing exact scan.
#[test]
fn the_per_write_bound_seals_the_flat_segment() {
    let mut e = Engine::new();
    let n = limits::VECTOR_SEAL_POINTS_DEFAULT as u64 + 300;
    for chunk in (0..n).collect::<Vec<_>>().chunks(limits::LTM_CREATE_BATCH_MAX) {
        let records = chunk.iter().map(|&i| record(i)).collect();
        e.apply(&Op::Ltm(LtmOp::Create { records, deduplicate: true, embedder: None, actor: None }), 5_000).unwrap();
        let r = e.compact_vectors(limits::LTM_COMPACT_WORK_POINTS_PER_WRITE).unwrap().unwrap();
        assert!(r.work_points <= limits::LTM_COMPACT_WORK_POINTS_PER_WRITE, "{r:?}");
    }
    let stats = e.longterm().index().unwrap().stats();
    let flat = stats.segments.iter().find(|s| s.kind == crate::core::vector::SegmentKind::Flat).map_or(0, |s| s.rows);
    assert!(flat < limits::VECTOR_SEAL_POINTS_DEFAULT, "flat segment still holds {flat} rows: {stats:?}");
    assert!(stats.segments.iter().any(|s| s.kind == crate::core::vector::SegmentKind::Hnsw), "{stats:?}");
}

#[test]
fn keyword_and_hybrid_modes() {
    let mut e = engine(50);
    let mut special = record(999);
    special.record.text = "The user is allergic to peanuts and avoids satay".into();
    special.record.refresh_hash();
    e.apply(&Op::Ltm(LtmOp::Create { records: vec![special], deduplicate: true, embedder: None, actor: None }), 6_000).unwrap();
    let lt = e.longterm();
    let f = Filter::default();
    let v = vector(999);
    let kw = SearchRequest { text: "peanuts satay", mode: Mode::Keyword, vector: None, ..req(&v, &f, 5) };
    let r = lt.search(&kw, 0).unwrap();
    assert_eq!(lt.record_by_key(r.hits[0].key).unwrap().id, "m999");
    assert!((r.hits[0].score - 1.0).abs() < 1e-9 && r.hits.len() == 1);
    for fusion in [Fusion::Alpha(Some(0.5)), Fusion::Rrf] {
        let h = SearchRequest { text: "peanuts satay", mode: Mode::Hybrid, fusion, ..req(&v, &f, 5) };
        let r = lt.search(&h, 0).unwrap();
        assert_eq!(lt.record_by_key(r.hits[0].key).unwrap().id, "m999", "{fusion:?}");
    }
    assert_eq!(lt.search(&SearchRequest { limit: 0, ..req(&v, &f, 5) }, 0).unwrap_err().code(), "invalid_input");
    assert_eq!(lt.search(&SearchRequest { vector: Some(&[1.0, 2.0]), ..req(&v, &f, 5) }, 0).unwrap_err().code(), "dimension_mismatch");
}
