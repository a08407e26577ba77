//! Versions (issue 20): one per create, edit, delete, forget, restore and
//! redaction, with the actor; restore after an edit and after a delete;
//! redaction strips every text and keeps a receipt; the pruning rule; and
//! histories that survive snapshots and replays.

use super::versions::{text_hash, VersionOp};
use super::*;
use crate::core::retrieval::record::MemoryPatch;
use crate::core::engine::{Engine, Op};
use crate::core::retrieval::record::MemoryType;

fn rec(id: &str, text: &str) -> NewRecord {
    let mut r = MemoryRecord::new(id, text, MemoryType::Semantic, 1_000);
    r.user_id = Some("ana".into());
    r.refresh_hash();
    NewRecord { record: r, vector: vec![1.0, text.len() as f32, 0.5] }
}

fn create(lt: &mut LongTerm, r: NewRecord, actor: &str, now: Millis) {
    lt.apply(&LtmOp::Create { records: vec![r], deduplicate: true, embedder: None, actor: Some(actor.into()) }, now).unwrap();
}

fn edit(lt: &mut LongTerm, id: &str, text: &str, now: Millis) {
    let patch = MemoryPatch { text: Some(text.into()), ..MemoryPatch::default() };
    lt.apply(&LtmOp::Update { id: id.into(), patch, vector: Some(vec![1.0, text.len() as f32, 0.5]), embedder: None, actor: None }, now).unwrap();
}

fn ops(lt: &LongTerm, id: &str) -> Vec<(u32, &'static str, String)> {
    lt.versions(id).unwrap().iter().map(|v| (v.version, v.op.as_str(), v.actor.clone())).collect()
}

fn restore(lt: &mut LongTerm, id: &str, version: u32, now: Millis) -> Result<LtmApplied> {
    lt.apply(&LtmOp::Restore { id: id.into(), version, vector: vec![1.0, 2.0, 0.5], embedder: None, actor: Some("key-2".into()) }, now)
}

#[test]
fn every_write_is_a_version_with_its_actor_and_hash() {
    let mut lt = LongTerm::new();
    create(&mut lt, rec("m", "Ana likes tea"), "key-1", 10);
    edit(&mut lt, "m", "Ana likes green tea", 20);
    lt.apply(&LtmOp::Delete { ids: vec!["m".into()], forget: false, actor: Some("key-1".into()) }, 30).unwrap();
    assert_eq!(ops(&lt, "m"), [(1, "create", "key-1".into()), (2, "edit", "local".into()), (3, "delete", "key-1".into())]);
    let h = lt.versions("m").unwrap();
    assert_eq!(h[0].text_hash, text_hash("Ana likes tea"));
    assert_eq!((h[1].ts, h[2].text_hash.as_str()), (20, text_hash("Ana likes green tea").as_str()));
    // The past versions keep their bodies; the deletion has none.
    assert_eq!(h[0].body.as_ref().unwrap().text, "Ana likes tea");
    assert_eq!(h[1].body.as_ref().unwrap().text, "Ana likes green tea");
    assert!(h[2].body.is_none());
    create(&mut lt, rec("f", "Ana's old phone model"), "key-1", 40);
    lt.apply(&LtmOp::Delete { ids: vec!["f".into()], forget: true, actor: None }, 50).unwrap();
    assert_eq!(ops(&lt, "f")[1].1, "forget");
    // A second create of a live id is an edit of it.
    create(&mut lt, rec("g", "one"), "key-1", 60);
    create(&mut lt, rec("g", "two"), "key-1", 70);
    assert_eq!(ops(&lt, "g").iter().map(|v| v.1).collect::<Vec<_>>(), ["create", "edit"]);
}

#[test]
fn restore_brings_back_an_old_text_or_a_deleted_record() {
    let mut lt = LongTerm::new();
    create(&mut lt, rec("m", "Ana likes tea"), "key-1", 10);
    edit(&mut lt, "m", "POISONED: Ana hates everything", 20);
    let LtmApplied::Restored { record, version } = restore(&mut lt, "m", 1, 30).unwrap() else { panic!() };
    assert_eq!((record.text.as_str(), version, record.updated_at), ("Ana likes tea", 3, 30));
    assert_eq!(lt.get("m").unwrap().text, "Ana likes tea");
    assert_eq!(ops(&lt, "m")[2], (3, "restore", "key-2".into()));
    lt.apply(&LtmOp::Delete { ids: vec!["m".into()], forget: false, actor: None }, 40).unwrap();
    assert!(lt.get("m").is_none());
    restore(&mut lt, "m", 2, 50).unwrap();
    assert_eq!(lt.get("m").unwrap().text, "POISONED: Ana hates everything");
    let before = lt.clone();
    for (v, code) in [(4, "invalid_input"), (99, "not_found")] {
        assert_eq!(restore(&mut lt, "m", v, 60).unwrap_err().code(), code, "version {v}");
    }
    assert_eq!(restore(&mut lt, "nope", 1, 60).unwrap_err().code(), "not_found");
    assert_eq!(lt, before, "a refused restore changes nothing");
}

#[test]
fn redaction_strips_every_text_and_keeps_hashes_and_a_receipt() {
    let mut lt = LongTerm::new();
    create(&mut lt, rec("m", "SENTINEL-1 first"), "key-1", 10);
    edit(&mut lt, "m", "SENTINEL-1 second", 20);
    let hashes: Vec<String> = lt.versions("m").unwrap().iter().map(|v| v.text_hash.clone()).collect();
    let LtmApplied::Redacted { versions, version, .. } = lt.apply(&LtmOp::Redact { id: "m".into(), actor: Some("admin".into()) }, 30).unwrap() else { panic!() };
    assert_eq!((versions, version), (2, 3));
    assert!(lt.get("m").is_none());
    let h = lt.versions("m").unwrap();
    assert!(h.iter().all(|v| v.body.is_none()));
    assert_eq!(h.iter().take(2).map(|v| v.text_hash.clone()).collect::<Vec<_>>(), hashes);
    assert_eq!((h[2].op, h[2].actor.as_str(), h[2].ts), (VersionOp::Redact, "admin", 30));
    let encoded = format!("{:?}", lt.to_snapshot());
    assert!(!encoded.contains("SENTINEL-1"), "no text left in the snapshot form");
    assert_eq!(restore(&mut lt, "m", 1, 40).unwrap_err().code(), "invalid_input");
    assert_eq!(lt.apply(&LtmOp::Redact { id: "never".into(), actor: None }, 40).unwrap_err().code(), "not_found");
    // A deleted record can still be redacted: its past texts go too.
    create(&mut lt, rec("d", "SENTINEL-2"), "key-1", 50);
    lt.apply(&LtmOp::Delete { ids: vec!["d".into()], forget: false, actor: None }, 60).unwrap();
    lt.apply(&LtmOp::Redact { id: "d".into(), actor: None }, 70).unwrap();
    assert!(!format!("{:?}", lt.to_snapshot()).contains("SENTINEL-2"));
}

#[test]
fn pruning_keeps_the_newest_versions_bodies_and_receipts() {
    let mut lt = LongTerm::new();
    create(&mut lt, rec("m", "v1"), "k", 1);
    let edits = limits::LTM_VERSIONS_PER_MEMORY_MAX + 5;
    for i in 0..edits {
        edit(&mut lt, "m", &format!("text {i}"), 2 + i as Millis);
    }
    let h = lt.versions("m").unwrap();
    assert_eq!(h.len(), limits::LTM_VERSIONS_PER_MEMORY_MAX);
    assert_eq!(h.last().unwrap().version as usize, edits + 1, "numbers are never reused");
    assert_eq!(h.iter().filter(|v| v.body.is_some()).count(), limits::LTM_VERSION_BODIES_PER_MEMORY_MAX);
    assert!(h.iter().rev().skip(1).take(limits::LTM_VERSION_BODIES_PER_MEMORY_MAX).all(|v| v.body.is_some()), "the newest past versions keep theirs");
    // The redaction receipt outlives later pruning.
    lt.apply(&LtmOp::Redact { id: "m".into(), actor: None }, 100).unwrap();
    for i in 0..limits::LTM_VERSIONS_PER_MEMORY_MAX + 3 {
        create(&mut lt, rec("m", &format!("again {i}")), "k", 200 + i as Millis);
    }
    assert!(lt.versions("m").unwrap().iter().any(|v| v.op == VersionOp::Redact));
}

#[test]
fn histories_survive_snapshots_and_replays() {
    let mut e = Engine::new();
    let script = [
        Op::Ltm(LtmOp::Create { records: vec![rec("m", "Ana likes tea")], deduplicate: true, embedder: None, actor: Some("k1".into()) }),
        Op::Ltm(LtmOp::Update { id: "m".into(), patch: MemoryPatch { text: Some("Ana likes coffee".into()), ..MemoryPatch::default() }, vector: Some(vec![1.0, 3.0, 0.5]), embedder: None, actor: None }),
        Op::Ltm(LtmOp::Delete { ids: vec!["m".into()], forget: false, actor: Some("k1".into()) }),
        Op::Ltm(LtmOp::Restore { id: "m".into(), version: 1, vector: vec![1.0, 2.0, 0.5], embedder: None, actor: Some("k2".into()) }),
        Op::Ltm(LtmOp::Create { records: vec![rec("x", "SENTINEL-3")], deduplicate: true, embedder: None, actor: None }),
        Op::Ltm(LtmOp::Redact { id: "x".into(), actor: Some("admin".into()) }),
    ];
    for (i, op) in script.iter().enumerate() {
        e.apply(op, 100 + i as Millis).unwrap();
    }
    let restored = LongTerm::from_snapshot(e.longterm().to_snapshot()).unwrap();
    assert_eq!(&restored, e.longterm());
    let mut replay = Engine::new();
    for (i, op) in script.iter().enumerate() {
        replay.apply(op, 100 + i as Millis).unwrap();
    }
    assert_eq!(replay.longterm(), e.longterm());
    assert_eq!(ops(e.longterm(), "m").iter().map(|v| v.1).collect::<Vec<_>>(), ["create", "edit", "delete", "restore"]);
}
