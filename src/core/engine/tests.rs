//! Engine tests: ops, failures, TTL, snapshots and log records.

use super::*;

fn session(id: &str, ttl: Option<u64>) -> Session {
    Session { ttl_seconds: ttl, ..Session::new(id.into(), 0) }
}

fn msg(id: &str, content: &str) -> Message {
    Message { id: id.into(), role: "user".into(), content: content.into(), created_at: 5, persisted_at: None, tokens: Default::default() }
}

#[test]
fn put_append_get_delete() {
    let mut e = Engine::new();
    e.apply(&Op::SessionPut { session: session("a", None) }, 100).unwrap();
    let Applied::Appended(a) = e.apply(&Op::SessionAppend { session_id: "a".into(), messages: vec![msg("m1", "hi")] }, 200).unwrap() else {
        panic!("expected an append")
    };
    assert_eq!((a.updated_at, a.message_count, a.messages.len()), (200, 1, 1));
    let s = e.session("a", 200).unwrap();
    assert_eq!((s.created_at, s.updated_at, s.messages.len()), (100, 200, 1));
    assert_eq!(e.session("a", 300).unwrap().messages[0].content, "hi");
    e.apply(&Op::SessionDelete { session_id: "a".into() }, 400).unwrap();
    assert!(e.session("a", 400).is_none());
    assert_eq!(e.last_seq(), 3);
}

#[test]
fn failed_ops_change_nothing() {
    let mut e = Engine::new();
    e.apply(&Op::SessionPut { session: session("a", None) }, 1).unwrap();
    e.apply(&Op::SessionAppend { session_id: "a".into(), messages: vec![msg("m1", "x")] }, 2).unwrap();
    let before = e.clone();
    let bad = [
        Op::SessionAppend { session_id: "missing".into(), messages: vec![] },
        Op::SessionAppend { session_id: "a".into(), messages: vec![msg("m1", "duplicate id")] },
        Op::SessionDelete { session_id: "missing".into() },
        Op::SessionPut { session: session("", None) },
    ];
    for op in bad {
        assert!(e.apply(&op, 3).is_err());
        assert_eq!(e, before, "{op:?} changed the state");
    }
}

#[test]
fn create_is_get_or_create() {
    let mut e = Engine::new();
    let mut s = session("c", None);
    s.context = Some("first".into());
    assert!(matches!(e.apply(&Op::SessionCreate { session: s.clone() }, 1).unwrap(), Applied::Session(_)));
    s.context = Some("second".into());
    let Applied::Existing(got) = e.apply(&Op::SessionCreate { session: s }, 2).unwrap() else { panic!() };
    assert_eq!(got.context.as_deref(), Some("first"));
    assert_eq!(e.last_seq(), 2, "a no-op create still takes a sequence number, so replay stays aligned");
}

#[test]
fn ttl_hides_then_sweeps() {
    let mut e = Engine::new();
    e.apply(&Op::SessionPut { session: session("t", Some(10)) }, 1_000).unwrap();
    e.apply(&Op::SessionPut { session: session("d", None) }, 1_000).unwrap();
    assert_eq!(e.next_expiry(), Some(11_000));
    assert!(e.session("t", 10_999).is_some());
    assert!(e.session("t", 11_000).is_none());
    assert_eq!(e.list_sessions(11_000, None, 0, 10).sessions, vec!["d"]);
    // A write refreshes the TTL.
    let mut e2 = e.clone();
    e2.apply(&Op::SessionAppend { session_id: "t".into(), messages: vec![msg("m", "x")] }, 5_000).unwrap();
    assert_eq!(e2.next_expiry(), Some(15_000));
    let Applied::Expired { session_ids } = e.apply(&Op::SessionsExpire, 11_000).unwrap() else { panic!() };
    assert_eq!(session_ids, vec!["t"]);
    assert_eq!((e.session_count(), e.next_expiry()), (1, None));
}

#[test]
fn list_pages_and_filters() {
    let mut e = Engine::new();
    for i in 0..25 {
        let mut s = session(&format!("s{i:02}"), None);
        s.user_id = Some(if i % 2 == 0 { "even" } else { "odd" }.into());
        e.apply(&Op::SessionPut { session: s }, 1).unwrap();
    }
    let p = e.list_sessions(2, None, 20, 10);
    assert_eq!((p.sessions.len(), p.total, p.sessions[0].as_str()), (5, 25, "s20"));
    let p = e.list_sessions(2, Some("odd"), 0, 100);
    assert_eq!((p.sessions.len(), p.total), (12, 12));
    assert_eq!(e.list_sessions(2, None, 0, 1_000_000).sessions.len(), 25);
}

#[test]
fn snapshot_round_trip_is_exact() {
    let mut e = Engine::new();
    let mut s = session("a", Some(60));
    s.data = Some(serde_json::json!({"cart": [1, 2.5, "x"], "n": {"deep": true}}).as_object().unwrap().clone());
    s.context = Some("summary".into());
    e.apply(&Op::SessionPut { session: s }, 7).unwrap();
    e.apply(&Op::SessionAppend { session_id: "a".into(), messages: vec![msg("m", "héllo 🌍")] }, 8).unwrap();
    let back = Engine::decode_snapshot(&e.encode_snapshot().unwrap()).unwrap();
    assert_eq!(back, e);
}

/// Every number a user stores comes back as its text (issue 11, point 4):
/// through the op log and through a snapshot, in session data, a tool
/// result and an execute-once intent.
#[test]
fn stored_numbers_keep_their_text_through_the_log_and_snapshots() {
    use crate::core::ledger::LedgerOp;
    // Keys in order: a JSON object is held sorted.
    let exact = r#"{"big":123456789012345678901234567.8,"list":[1e+400,-0.0,3],"price":1234.567890123456789,"tiny":0.1}"#;
    let value: serde_json::Value = serde_json::from_str(exact).unwrap();
    let mut s = session("a", None);
    s.data = Some(value.as_object().unwrap().clone());
    let ops = [
        Op::SessionPut { session: s },
        Op::History(HistoryOp::ToolCachePut { session_id: "a".into(), tool: "quote".into(), args: "{}".into(), result: value.clone(), ttl_seconds: None }),
        Op::Ledger(LedgerOp::BeginIntent { key: "k".into(), op: "bet".into(), params: value.clone() }),
    ];
    let mut e = Engine::new();
    for (i, op) in ops.into_iter().enumerate() {
        let entry = LogEntry { now_ms: 7, op };
        let back = decode_log_entry(i as u64 + 1, &encode_log_entry(i as u64 + 1, &entry).unwrap()).unwrap();
        assert_eq!(back, entry);
        e.apply(&back.op, 7).unwrap();
    }
    let back = Engine::decode_snapshot(&e.encode_snapshot().unwrap()).unwrap();
    assert_eq!(back, e);
    let data = serde_json::to_string(back.session("a", 7).unwrap().data.as_ref().unwrap()).unwrap();
    assert_eq!(data, exact);
}

#[test]
fn ledger_ops_round_trip_through_snapshot_and_log() {
    use crate::core::ledger::{LedgerOp, TransferRequest};
    let mut e = Engine::new();
    let ops = [
        LedgerOp::CreateAsset { code: "USDC".into(), scale: 6 },
        LedgerOp::CreateAccount { id: "a".into(), asset: "USDC".into(), flags: Default::default(), max_transfer: None },
        LedgerOp::CreateAccount { id: "b".into(), asset: "USDC".into(), flags: Default::default(), max_transfer: Some("50".into()) },
        LedgerOp::CreateTransfers {
            transfers: vec![TransferRequest {
                id: "t".into(),
                debit_account: "a".into(),
                credit_account: "b".into(),
                // Past u64 in minor units: exercises u128 in MessagePack.
                amount: "99999999999999999999.5".into(),
                pending: true,
                timeout_seconds: Some(60),
                linked: false,
                metadata: serde_json::json!({"memo": "escrow"}).as_object().cloned(),
            }],
        },
    ];
    for (i, op) in ops.iter().enumerate() {
        let op = Op::Ledger(op.clone());
        let entry = LogEntry { now_ms: i as u64, op: op.clone() };
        assert_eq!(decode_log_entry(1, &encode_log_entry(1, &entry).unwrap()).unwrap(), entry);
        e.apply(&op, i as u64).unwrap();
    }
    assert_eq!(e.ledger().account("b").unwrap().credits_pending, 99_999_999_999_999_999_999_500_000);
    assert_eq!(e.next_expiry(), Some(3 + 60_000));
    let back = Engine::decode_snapshot(&e.encode_snapshot().unwrap()).unwrap();
    assert_eq!(back, e);
    let before = e.clone();
    let bad = Op::Ledger(LedgerOp::Post { id: "t".into(), amount: Some("1.0000001".into()) });
    assert_eq!(e.apply(&bad, 10).unwrap_err().code(), "invalid_input");
    let bad = Op::Ledger(LedgerOp::Void { id: "missing".into() });
    assert_eq!(e.apply(&bad, 10).unwrap_err().code(), "not_found");
    assert_eq!(e, before);
    e.apply(&Op::Ledger(LedgerOp::Void { id: "t".into() }), 11).unwrap();
    let again = e.apply(&Op::Ledger(LedgerOp::Void { id: "t".into() }), 12).unwrap_err();
    assert_eq!(again.code(), "pending_transfer_already_voided");
}

#[test]
fn log_entry_round_trip() {
    let entry = LogEntry { now_ms: 9, op: Op::SessionAppend { session_id: "a".into(), messages: vec![msg("m", "x")] } };
    let rec = encode_log_entry(4, &entry).unwrap();
    assert_eq!(decode_log_entry(4, &rec).unwrap(), entry);
}

#[test]
fn named_log_bodies_from_before_the_positional_format_still_replay() {
    use crate::core::codec::{encode_log_record, Bytes, SCHEMA_VERSION};
    use crate::core::ledger::batch::Amounts;
    use crate::core::ledger::TransferColumns;
    let entries = [
        LogEntry { now_ms: 9, op: Op::SessionAppend { session_id: "a".into(), messages: vec![msg("m", "x")] } },
        LogEntry { now_ms: 10, op: Op::Ledger(LedgerOp::CreateAsset { code: "USDC".into(), scale: 6 }) },
        LogEntry { now_ms: 11, op: Op::SessionsExpire },
    ];
    for (seq, entry) in entries.iter().enumerate() {
        let seq = seq as u64 + 1;
        let named = rmp_serde::to_vec_named(entry).unwrap();
        assert!(matches!(named[0], 0x80..=0x8f), "a named body starts with a map marker");
        assert_eq!(decode_log_entry(seq, &encode_log_record(SCHEMA_VERSION, seq, &named).unwrap()).unwrap(), *entry);
        let positional = encode_log_entry(seq, entry).unwrap();
        assert!(positional.len() < encode_log_record(SCHEMA_VERSION, seq, &named).unwrap().len(), "no field names");
        assert_eq!(decode_log_entry(seq, &positional).unwrap(), *entry);
    }
    let cols = TransferColumns {
        ids: Bytes(vec![7; 32]),
        debit: Bytes(vec![0; 8]),
        credit: Bytes(vec![1, 0, 0, 0, 1, 0, 0, 0]),
        amounts: Amounts::Decimal("1.5,2".into()),
        flags: Bytes(vec![0, 1]),
        timeouts: Bytes::default(),
    };
    let entry = LogEntry { now_ms: 12, op: Op::Ledger(LedgerOp::CreateTransferColumns(cols)) };
    let rec = encode_log_entry(5, &entry).unwrap();
    assert!(rec.len() < 150, "a two-transfer column batch logs as its bytes: {} B", rec.len());
    assert_eq!(decode_log_entry(5, &rec).unwrap(), entry);
}

/// A tenant with sessions, a ledger (numeric, huge and text ids, metadata,
/// pending and posted transfers), history and episodes.
fn full_engine() -> Engine {
    use crate::core::ledger::{LedgerOp, TransferRequest};
    let mut e = Engine::new();
    let mut s = session("a", Some(60));
    s.data = Some(serde_json::json!({"cart": [1, 2.5, "x"]}).as_object().unwrap().clone());
    e.apply(&Op::SessionPut { session: s }, 7).unwrap();
    e.apply(&Op::SessionAppend { session_id: "a".into(), messages: vec![msg("m", "héllo")] }, 8).unwrap();
    e.apply(&Op::Ledger(LedgerOp::CreateAsset { code: "USDC".into(), scale: 6 }), 9).unwrap();
    for id in ["alice", "bob"] {
        e.apply(&Op::Ledger(LedgerOp::CreateAccount { id: id.into(), asset: "USDC".into(), flags: Default::default(), max_transfer: None }), 9).unwrap();
    }
    let t = |id: &str, pending: bool| TransferRequest {
        id: id.into(),
        debit_account: "alice".into(),
        credit_account: "bob".into(),
        amount: "1.25".into(),
        pending,
        timeout_seconds: pending.then_some(60),
        linked: false,
        metadata: serde_json::json!({"memo": id}).as_object().cloned(),
    };
    let transfers = vec![t("1", false), t("340282366920938463463374607431768211455", true), t("order-7", false), t("18446744073709551616", false)];
    e.apply(&Op::Ledger(LedgerOp::CreateTransfers { transfers }), 10).unwrap();
    e.apply(&Op::Ledger(LedgerOp::Post { id: "340282366920938463463374607431768211455".into(), amount: Some("1".into()) }), 11).unwrap();
    // A sharded home's place in another shard's feed.
    let relayed = crate::core::feed::relay::Relayed { shard: 3, after: 0, shard_seq: 7, ts: 9, kind: "working_memory.created".into(), key: "s".into(), count: None, ids: Vec::new() };
    e.apply(&Op::FeedRelay(relayed), 12).unwrap();
    e
}

/// The snapshot body as owned values (the form snapshots are read into).
fn owned_snapshot(e: &Engine) -> SnapshotV1 {
    SnapshotV1 {
        last_seq: e.last_seq,
        sessions: e.sessions.values().cloned().collect(),
        ledger: e.ledger.to_snapshot(),
        history: e.history.clone(),
        longterm: e.longterm.to_snapshot(),
        episodes: e.episodes.clone(),
        services: e.services.clone(),
        agent_state: e.agent_state.clone(),
        decisions: e.decisions.clone(),
        privacy: e.privacy.clone(),
        extraction: e.extraction.clone(),
        summary_views: e.summary_views.clone(),
        moves_in: e.moves_in.clone(),
        feed_relay: e.feed_relay.clone(),
    }
}

#[test]
fn the_borrowed_snapshot_writes_the_owned_form_byte_for_byte() {
    let e = full_engine();
    let owned = owned_snapshot(&e);
    let body = codec::decode_snapshot(&e.encode_snapshot().unwrap()).unwrap().1.to_vec();
    assert_eq!(body, rmp_serde::to_vec(&owned).unwrap());
    assert!(matches!(body[0], 0x90..=0x9f), "positional: the body is an array");
}

#[test]
fn snapshots_written_with_field_names_still_load() {
    let e = full_engine();
    let owned = owned_snapshot(&e);
    let named = codec::encode_snapshot(codec::SCHEMA_VERSION, &rmp_serde::to_vec_named(&owned).unwrap());
    assert_eq!(Engine::decode_snapshot(&named).unwrap(), e);
    let positional = e.encode_snapshot().unwrap();
    assert!(positional.len() < named.len(), "{} >= {}", positional.len(), named.len());
    assert_eq!(Engine::decode_snapshot(&positional).unwrap(), e);
}
