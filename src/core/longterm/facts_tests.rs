//! Fact chains (issue 20): supersession by `valid_from` whatever the arrival
//! order, ties to the later write, deletes that restore the predecessor,
//! `latest_only` / `as_of` / all in search, idempotent creates, and chains
//! that survive snapshots and replays.

use super::*;
use crate::core::retrieval::record::MemoryPatch;
use crate::core::engine::{Applied, Engine, Op};
use crate::core::retrieval::filter::Filter;
use crate::core::retrieval::record::MemoryType;

const DAY: Millis = 86_400_000;

fn fact(id: &str, user: &str, key: &str, day: Millis, text: &str) -> NewRecord {
    let mut r = MemoryRecord::new(id, text, MemoryType::Semantic, 1_000);
    r.user_id = Some(user.into());
    r.namespace = Some("ns".into());
    r.fact_key = Some(key.into());
    r.valid_from = Some(day * DAY);
    r.refresh_hash();
    let seed = id.bytes().fold(7u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
    NewRecord { record: r, vector: vec![1.0, (seed % 97) as f32 / 97.0, 0.5] }
}

fn create(lt: &mut LongTerm, records: Vec<NewRecord>) -> Vec<(String, Outcome)> {
    match lt.apply(&LtmOp::Create { records, deduplicate: true, embedder: None, actor: None }, 2_000).unwrap() {
        LtmApplied::Created { results, .. } => results,
        other => panic!("{other:?}"),
    }
}

/// (id, valid_to, superseded_by) of every record, by id.
fn links(lt: &LongTerm) -> Vec<(String, Option<Millis>, Option<String>)> {
    let mut v: Vec<_> = lt.records().map(|r| (r.id.clone(), r.valid_to, r.superseded_by.clone())).collect();
    v.sort();
    v
}

fn units() -> Vec<NewRecord> {
    vec![
        fact("jan", "ann", "user.units", 10, "Ann prefers metric units"),
        fact("mar", "ann", "user.units", 70, "Ann switched to imperial units"),
        fact("jun", "ann", "user.units", 160, "Ann is back on metric units"),
    ]
}

#[test]
fn the_later_valid_from_wins_whatever_the_arrival_order() {
    let orders: [[usize; 3]; 6] = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]];
    let mut seen = None;
    for order in orders {
        let mut lt = LongTerm::new();
        for i in order {
            create(&mut lt, vec![units()[i].clone()]);
        }
        let l = links(&lt);
        assert_eq!(
            l,
            vec![
                ("jan".into(), Some(70 * DAY), Some("mar".into())),
                ("jun".into(), None, None),
                ("mar".into(), Some(160 * DAY), Some("jun".into())),
            ],
            "order {order:?}"
        );
        assert_eq!(seen.get_or_insert(l.clone()), &l);
        assert_eq!(lt.chain(Some("ns"), Some("ann"), "user.units").iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["jan", "mar", "jun"]);
    }
}

#[test]
fn results_say_created_superseded_or_back_dated() {
    let mut lt = LongTerm::new();
    let u = units();
    assert_eq!(create(&mut lt, vec![u[1].clone()]), vec![("mar".into(), Outcome::Created { superseded: vec![], superseded_by: None })]);
    assert_eq!(create(&mut lt, vec![u[2].clone()]), vec![("jun".into(), Outcome::Created { superseded: vec!["mar".into()], superseded_by: None })]);
    // Back-dated: enters already superseded, supersedes nothing.
    assert_eq!(create(&mut lt, vec![u[0].clone()]), vec![("jan".into(), Outcome::Created { superseded: vec![], superseded_by: Some("mar".into()) })]);
}

#[test]
fn equal_valid_from_goes_to_the_later_write() {
    let mut lt = LongTerm::new();
    let a = fact("a", "ann", "wallet.primary_address", 5, "Ann's primary wallet is wal-1");
    let b = fact("b", "ann", "wallet.primary_address", 5, "Ann's primary wallet is wal-2");
    // Two racing writers, serialized by the log in either order.
    create(&mut lt, vec![a.clone(), b.clone()]);
    assert_eq!(lt.get("a").unwrap().superseded_by.as_deref(), Some("b"));
    let mut other = LongTerm::new();
    create(&mut other, vec![b, a]);
    assert_eq!(other.get("b").unwrap().superseded_by.as_deref(), Some("a"));
}

#[test]
fn chains_are_scoped_by_namespace_user_and_key() {
    let mut lt = LongTerm::new();
    let mut other_ns = fact("x", "ann", "user.units", 90, "Ann uses imperial at work");
    other_ns.record.namespace = Some("work".into());
    other_ns.record.refresh_hash();
    create(&mut lt, vec![fact("a", "ann", "user.units", 10, "Ann prefers metric"), fact("b", "bob", "user.units", 50, "Bob prefers imperial"), fact("c", "ann", "user.city", 60, "Ann lives in Porto"), other_ns]);
    assert!(lt.records().all(|r| r.superseded_by.is_none()));
}

#[test]
fn deleting_the_current_fact_makes_its_predecessor_current() {
    let mut lt = LongTerm::new();
    create(&mut lt, units());
    lt.apply(&LtmOp::Delete { ids: vec!["jun".into()], forget: false, actor: None }, 3_000).unwrap();
    let mar = lt.get("mar").unwrap();
    assert_eq!((mar.valid_to, mar.superseded_by.as_deref()), (None, None));
    assert!(!lt.is_superseded(lt.ids["mar"]));
    lt.apply(&LtmOp::Delete { ids: vec!["jan".into()], forget: false, actor: None }, 3_000).unwrap();
    assert_eq!(links(&lt), vec![("mar".into(), None, None)]);
}

#[test]
fn an_edit_that_moves_a_record_relinks_both_chains() {
    let mut lt = LongTerm::new();
    create(&mut lt, units());
    let patch = MemoryPatch { user_id: Some("bob".into()), ..MemoryPatch::default() };
    let LtmApplied::Updated(moved) = lt.apply(&LtmOp::Update { id: "jun".into(), patch, vector: None, embedder: None, actor: None }, 3_000).unwrap() else { panic!() };
    assert_eq!((moved.valid_to, moved.superseded_by), (None, None));
    assert_eq!(lt.get("mar").unwrap().superseded_by, None, "ann's chain ends at mar again");
    assert!(!lt.is_superseded(lt.ids["mar"]));
}

fn found(lt: &LongTerm, text: &str, currency: Currency) -> Vec<String> {
    let filter = Filter::default();
    let req = SearchRequest { mode: Mode::Keyword, currency, limit: 10, ..SearchRequest::new(text, &filter) };
    let mut ids: Vec<String> = lt.search(&req, 0).unwrap().hits.iter().map(|h| lt.record_by_key(h.key).unwrap().id.clone()).collect();
    ids.sort();
    ids
}

#[test]
fn search_sees_the_latest_a_past_version_or_all() {
    let mut lt = LongTerm::new();
    create(&mut lt, units());
    assert_eq!(found(&lt, "Ann units", Currency::Latest), ["jun"]);
    assert_eq!(found(&lt, "Ann units", Currency::AsOf(69 * DAY)), ["jan"]);
    assert_eq!(found(&lt, "Ann units", Currency::AsOf(70 * DAY)), ["mar"], "valid_to is exclusive");
    assert_eq!(found(&lt, "Ann units", Currency::AsOf(400 * DAY)), ["jun"]);
    assert!(found(&lt, "Ann units", Currency::AsOf(DAY)).is_empty(), "before the first version nothing held");
    assert_eq!(found(&lt, "Ann units", Currency::All), ["jan", "jun", "mar"]);
}

#[test]
fn a_retried_batch_writes_nothing_twice() {
    let mut lt = LongTerm::new();
    create(&mut lt, units());
    let before = lt.clone();
    // The retry comes later, so its times differ: still the same content.
    let retry: Vec<NewRecord> = units()
        .into_iter()
        .map(|mut r| {
            r.record.created_at += 60_000;
            r.record.updated_at += 60_000;
            r
        })
        .collect();
    let results = create(&mut lt, retry);
    assert!(results.iter().all(|(id, o)| *o == Outcome::DuplicateOf(id.clone())), "{results:?}");
    assert_eq!(lt, before);
    // Without ids (fresh ones each time), content dedup converges too.
    let mut fresh = units()[2].clone();
    fresh.record.id = "other".into();
    assert_eq!(create(&mut lt, vec![fresh]), vec![("other".into(), Outcome::DuplicateOf("jun".into()))]);
    // A changed record under the same id is still AMS's overwrite.
    let mut changed = units()[2].clone();
    changed.record.topics = vec!["units".into()];
    assert!(matches!(create(&mut lt, vec![changed])[0].1, Outcome::Created { .. }));
    assert_eq!(lt.get("jun").unwrap().topics, ["units"]);
}

#[test]
fn chains_survive_snapshots_and_replays() {
    let mut e = Engine::new();
    let mut ops = Vec::new();
    for r in [units()[2].clone(), units()[0].clone(), units()[1].clone()] {
        let op = Op::Ltm(LtmOp::Create { records: vec![r], deduplicate: true, embedder: None, actor: None });
        e.apply(&op, 2_000).unwrap();
        ops.push(op);
    }
    ops.push(Op::Ltm(LtmOp::Delete { ids: vec!["mar".into()], forget: false, actor: None }));
    assert!(matches!(e.apply(ops.last().unwrap(), 3_000).unwrap(), Applied::Ltm(LtmApplied::Deleted { .. })));
    let restored = LongTerm::from_snapshot(e.longterm().to_snapshot()).unwrap();
    assert_eq!(links(&restored), links(e.longterm()));
    assert_eq!(restored.chains, e.longterm().chains);
    assert_eq!(links(&restored), vec![("jan".into(), Some(160 * DAY), Some("jun".into())), ("jun".into(), None, None)]);
    let mut replay = Engine::new();
    for (i, op) in ops.iter().enumerate() {
        replay.apply(op, if i < 3 { 2_000 } else { 3_000 }).unwrap();
    }
    assert_eq!(replay.longterm(), e.longterm());
    assert_eq!(links(replay.longterm()), links(e.longterm()));
}

#[test]
fn a_bad_fact_key_is_refused_and_changes_nothing() {
    let mut lt = LongTerm::new();
    create(&mut lt, units());
    let before = lt.clone();
    for key in ["", "  ", "a\nb", &"k".repeat(limits::LTM_FACT_KEY_BYTES_MAX + 1)] {
        let mut r = fact("bad", "ann", "x", 1, "text");
        r.record.fact_key = Some(key.to_owned());
        let err = lt.apply(&LtmOp::Create { records: vec![units()[0].clone(), r], deduplicate: true, embedder: None, actor: None }, 2_000).unwrap_err();
        assert_eq!(err.code(), "invalid_input", "{key:?}");
        assert_eq!(lt, before);
    }
}
