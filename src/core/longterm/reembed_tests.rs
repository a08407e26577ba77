//! Embedder identity and re-embedding: a mismatch is refused and changes
//! nothing; staging is invisible until the swap; the swap refuses to leave
//! a record behind; snapshots keep staging and identity.

use super::reembed::Row;
use super::*;
use crate::core::retrieval::record::MemoryPatch;
use crate::core::retrieval::filter::Filter;
use crate::core::retrieval::record::MemoryType;

fn rec(i: u64, dim: usize) -> NewRecord {
    let mut r = MemoryRecord::new(format!("m{i}"), format!("memory {i}"), MemoryType::Semantic, 1_000 + i);
    r.refresh_hash();
    let mut v = vec![0.1; dim];
    v[i as usize % dim] = 1.0;
    NewRecord { record: r, vector: v }
}

fn create(lt: &mut LongTerm, ids: std::ops::Range<u64>, dim: usize, embedder: &str) -> Result<LtmApplied> {
    lt.apply(&LtmOp::Create { records: ids.map(|i| rec(i, dim)).collect(), deduplicate: false, embedder: Some(embedder.into()), actor: None }, 0)
}

fn rows(lt: &LongTerm, target: &str, dim: usize) -> Vec<Row> {
    lt.reembed_pending(target, usize::MAX).into_iter().map(|(id, _)| Row { id, vector: vec![0.5; dim] }).collect()
}

#[test]
fn vectors_of_another_embedder_are_refused_and_change_nothing() {
    let mut lt = LongTerm::new();
    create(&mut lt, 0..4, 8, "a/8").unwrap();
    assert_eq!(lt.embedder(), Some("a/8"));
    let before = lt.clone();
    let err = create(&mut lt, 4..5, 8, "b/8").unwrap_err();
    assert_eq!(err.code(), "embedder_mismatch");
    assert!(err.to_string().contains("reembed"), "the error names the way out: {err}");
    assert_eq!(lt, before);
    let update = LtmOp::Update { id: "m1".into(), patch: MemoryPatch { text: Some("new".into()), ..MemoryPatch::default() }, vector: Some(vec![1.0; 8]), embedder: Some("b/8".into()), actor: None };
    assert_eq!(lt.apply(&update, 0).unwrap_err().code(), "embedder_mismatch");
    assert_eq!(lt, before);
    assert_eq!(lt.check_embedder(Some("b/8"), 8).unwrap_err().code(), "embedder_mismatch");
    lt.check_embedder(Some("a/8"), 8).unwrap();
    // Caller vectors without a name are held to the dimension only.
    lt.apply(&LtmOp::Create { records: vec![rec(9, 8)], deduplicate: false, embedder: None, actor: None }, 0).unwrap();
}

#[test]
fn an_emptied_namespace_takes_a_new_embedder_of_another_width() {
    let mut lt = LongTerm::new();
    create(&mut lt, 0..3, 8, "a/8").unwrap();
    lt.apply(&LtmOp::Delete { ids: vec!["m0".into(), "m1".into(), "m2".into()], forget: false, actor: None }, 0).unwrap();
    create(&mut lt, 0..2, 16, "b/16").unwrap();
    assert_eq!((lt.embedder(), lt.dim()), (Some("b/16"), Some(16)));
}

#[test]
fn state_from_before_identities_adopts_a_same_width_embedder_only() {
    let mut lt = LongTerm::new();
    lt.apply(&LtmOp::Create { records: (0..3).map(|i| rec(i, 8)).collect(), deduplicate: false, embedder: None, actor: None }, 0).unwrap();
    assert_eq!(lt.embedder(), None);
    assert_eq!(create(&mut lt, 3..4, 16, "wide/16").unwrap_err().code(), "embedder_mismatch");
    create(&mut lt, 3..4, 8, "a/8").unwrap();
    assert_eq!(lt.embedder(), Some("a/8"));
}

#[test]
fn staged_vectors_are_invisible_until_the_swap_which_leaves_no_record_behind() {
    let mut lt = LongTerm::new();
    create(&mut lt, 0..10, 8, "old/8").unwrap();
    let all = rows(&lt, "new/4", 4);
    assert_eq!(all.len(), 10);
    lt.apply(&LtmOp::Reembed { embedder: "new/4".into(), rows: all[..6].to_vec(), finish: false }, 0).unwrap();
    // Searches still run on the old vectors and identity.
    assert_eq!((lt.embedder(), lt.dim(), lt.restaging()), (Some("old/8"), Some(8), Some(("new/4", 6))));
    let filter = Filter::default();
    let q = vec![1.0; 8];
    let req = SearchRequest { vector: Some(&q), limit: 3, ..SearchRequest::new("", &filter) };
    assert_eq!(lt.search(&req, 0).unwrap().hits.len(), 3);
    // Finishing early is refused and changes nothing.
    let before = lt.clone();
    let err = lt.apply(&LtmOp::Reembed { embedder: "new/4".into(), rows: Vec::new(), finish: true }, 0).unwrap_err();
    assert!(err.to_string().contains("4 records have no new vector"), "{err}");
    assert_eq!(lt, before);
    // A record deleted and one whose text changed while staging.
    lt.apply(&LtmOp::Delete { ids: vec!["m9".into()], forget: false, actor: None }, 0).unwrap();
    let edit = LtmOp::Update { id: "m0".into(), patch: MemoryPatch { text: Some("changed".into()), ..MemoryPatch::default() }, vector: Some(vec![1.0; 8]), embedder: Some("old/8".into()), actor: None };
    lt.apply(&edit, 0).unwrap();
    let pending: Vec<String> = lt.reembed_pending("new/4", usize::MAX).into_iter().map(|(id, _)| id).collect();
    assert_eq!(pending, ["m0", "m6", "m7", "m8"]);
    // The snapshot keeps the staging.
    let restored = LongTerm::from_snapshot(lt.to_snapshot()).unwrap();
    assert_eq!(restored, lt);
    let rest = rows(&lt, "new/4", 4);
    let Ok(LtmApplied::Reembedded { staged, finished: true }) = lt.apply(&LtmOp::Reembed { embedder: "new/4".into(), rows: rest, finish: true }, 0) else { panic!("swap") };
    assert_eq!(staged, 9);
    assert_eq!((lt.embedder(), lt.dim(), lt.restaging(), lt.index().map(|i| i.len())), (Some("new/4"), Some(4), None, Some(9)));
    assert_eq!(create(&mut lt, 20..21, 8, "old/8").unwrap_err().code(), "embedder_mismatch");
    create(&mut lt, 20..21, 4, "new/4").unwrap();
    assert_eq!(LongTerm::from_snapshot(lt.to_snapshot()).unwrap(), lt);
}

#[test]
fn bad_reembedding_rows_are_refused() {
    let mut lt = LongTerm::new();
    create(&mut lt, 0..3, 8, "old/8").unwrap();
    let before = lt.clone();
    let bad = |v: Vec<f32>| LtmOp::Reembed { embedder: "new/4".into(), rows: vec![Row { id: "m0".into(), vector: v }], finish: false };
    assert_eq!(lt.apply(&bad(vec![f32::NAN; 4]), 0).unwrap_err().code(), "non_finite");
    assert_eq!(lt.apply(&bad(vec![0.0; 4]), 0).unwrap_err().code(), "zero_vector");
    let mixed = LtmOp::Reembed { embedder: "new/4".into(), rows: vec![Row { id: "m0".into(), vector: vec![1.0; 4] }, Row { id: "m1".into(), vector: vec![1.0; 5] }], finish: false };
    assert_eq!(lt.apply(&mixed, 0).unwrap_err().code(), "dimension_mismatch");
    let unnamed = LtmOp::Reembed { embedder: "has space".into(), rows: Vec::new(), finish: false };
    assert_eq!(lt.apply(&unnamed, 0).unwrap_err().code(), "invalid_input");
    let many = LtmOp::Reembed { embedder: "new/4".into(), rows: vec![Row { id: "m0".into(), vector: vec![1.0; 4] }; limits::LTM_REEMBED_BATCH_MAX + 1], finish: false };
    assert_eq!(many_code(&mut lt, &many), "limit_exceeded");
    assert_eq!(lt, before);
}

fn many_code(lt: &mut LongTerm, op: &LtmOp) -> &'static str {
    lt.apply(op, 0).unwrap_err().code()
}
