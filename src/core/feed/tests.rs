//! The change feed: every op has its kind, filters, and the ring's resume
//! rules (contiguous, resync when too old, bad `since` refused).

use super::*;
use crate::core::session::{Message, Session};

fn entry(op: Op) -> LogEntry {
    LogEntry { now_ms: 42, op }
}

fn msg(id: &str) -> Message {
    Message { id: id.into(), role: "user".into(), content: "hi".into(), created_at: 1, persisted_at: None, tokens: Default::default() }
}

#[test]
fn every_kind_an_op_produces_is_listed_and_named_area_dot_verb() {
    let ops = vec![
        Op::SessionPut { session: Session::new("s".into(), 0) },
        Op::SessionCreate { session: Session::new("s".into(), 0) },
        Op::SessionAppend { session_id: "s".into(), messages: vec![msg("a"), msg("b")] },
        Op::SessionDelete { session_id: "s".into() },
        Op::SessionsExpire,
        Op::Ledger(LedgerOp::CreateAsset { code: "USDC".into(), scale: 6 }),
        Op::Ledger(LedgerOp::Void { id: "t1".into() }),
        Op::Ledger(LedgerOp::Expire),
        Op::Ltm(LtmOp::Delete { ids: (0..40).map(|i| format!("m{i}")).collect(), forget: false, actor: None }),
        Op::EpisodesExpire,
    ];
    let kinds: Vec<&str> = ops.into_iter().map(|op| event_of(7, &entry(op)).kind).collect();
    assert_eq!(
        kinds,
        [
            "working_memory.updated",
            "working_memory.created",
            "working_memory.appended",
            "working_memory.deleted",
            "working_memory.expired",
            "ledger.asset_created",
            "ledger.transfer_voided",
            "ledger.transfers_expired",
            "long_term_memory.deleted",
            "episode.expired"
        ]
    );
    for k in KINDS {
        let (area, verb) = k.split_once('.').unwrap();
        assert!(!area.is_empty() && !verb.is_empty() && k.chars().all(|c| c.is_ascii_lowercase() || c == '_' || c == '.'), "{k}");
    }
}

#[test]
fn events_carry_ids_and_counts_not_bodies() {
    let e = event_of(3, &entry(Op::SessionAppend { session_id: "chat".into(), messages: vec![msg("a"), msg("b")] }));
    assert_eq!((e.seq, e.ts, e.key.as_str(), e.count, e.ids.clone()), (3, 42, "chat", Some(2), vec!["a".to_owned(), "b".to_owned()]));
    let json = serde_json::to_string(&e).unwrap();
    assert!(!json.contains("hi"), "no message content: {json}");
    let e = event_of(4, &entry(Op::Ltm(LtmOp::Delete { ids: (0..40).map(|i| format!("m{i}")).collect(), forget: false, actor: None })));
    assert_eq!((e.count, e.ids.len()), (Some(40), limits::FEED_EVENT_IDS_MAX));
}

#[test]
fn interests_filter_by_kind_area_and_key_and_refuse_unknown_kinds() {
    let e = event_of(1, &entry(Op::SessionAppend { session_id: "chat".into(), messages: vec![msg("a")] }));
    let admits = |kinds: Option<&str>, keys: Option<&str>| Interest::parse(kinds, keys).unwrap().admits(&e);
    assert!(admits(None, None));
    assert!(admits(Some("working_memory.appended"), None));
    assert!(admits(Some("ledger.*, working_memory.*"), None));
    assert!(!admits(Some("ledger.*"), None));
    assert!(admits(None, Some("chat")));
    assert!(admits(None, Some("a")), "a listed id matches");
    assert!(!admits(None, Some("other")));
    assert_eq!(Interest::parse(Some("working_memory.apended"), None).unwrap_err().code(), "invalid_query");
    assert_eq!(Interest::parse(Some("nope.*"), None).unwrap_err().code(), "invalid_query");
    let many = (0..=limits::FEED_FILTER_ITEMS_MAX).map(|i| format!("k{i}")).collect::<Vec<_>>().join(",");
    assert_eq!(Interest::parse(None, Some(&many)).unwrap_err().code(), "limit_exceeded");
}

#[test]
fn the_ring_resumes_without_gaps_and_asks_for_a_resync_when_too_old() {
    let mut ring = Ring::default();
    let all = Interest::default();
    let n = limits::FEED_EVENTS_KEPT as u64 + 10;
    for seq in 1..=n {
        ring.push(event_of(seq, &entry(Op::SessionDelete { session_id: format!("s{seq}") })));
    }
    let page = ring.since(n - 3, n, &all, 100).unwrap();
    assert_eq!(page.events.iter().map(|e| e.seq).collect::<Vec<_>>(), [n - 2, n - 1, n]);
    assert_eq!((page.resync_required, page.next_since), (false, n));
    let cut = ring.since(n - 3, n, &all, 2).unwrap();
    assert_eq!((cut.events.len(), cut.next_since), (2, n - 1), "resume after the last event returned");
    let old = ring.since(5, n, &all, 100).unwrap();
    assert!(old.resync_required && old.events.is_empty());
    assert_eq!(old.next_since, n);
    // The oldest kept event can still be resumed from just before it.
    assert!(!ring.since(11, n, &all, 1).unwrap().resync_required);
    assert_eq!(ring.since(n + 1, n, &all, 1).unwrap_err().code(), "invalid_query");
    assert!(ring.since(n, n, &all, 10).unwrap().events.is_empty());
}

#[test]
fn an_empty_ring_after_a_restart_resumes_only_from_the_present() {
    let ring = Ring::default();
    let all = Interest::default();
    assert!(ring.since(9, 9, &all, 10).unwrap().events.is_empty());
    assert!(ring.since(8, 9, &all, 10).unwrap().resync_required);
}
