//! The extraction watermark and its commit.

use serde_json::json;

use super::*;
use crate::core::engine::{Applied, Engine, Op};
use crate::core::retrieval::record::{MemoryRecord, MemoryType};

fn msg(id: &str, at: Millis) -> Message {
    Message { id: id.into(), role: "user".into(), content: format!("turn {id}"), created_at: at, persisted_at: None, tokens: Default::default() }
}

fn put(e: &mut Engine, id: &str, messages: Vec<Message>, strategy: bool, now: Millis) {
    let mut s = Session::new(id.into(), now);
    s.messages = messages;
    s.long_term_memory_strategy = strategy.then(|| json!({"strategy": "discrete"}).as_object().unwrap().clone());
    e.apply(&Op::SessionPut { session: s }, now).unwrap();
}

fn record(id: &str, text: &str) -> NewRecord {
    let mut r = MemoryRecord::new(id, text, MemoryType::Semantic, 1_000);
    r.refresh_hash();
    NewRecord { record: r, vector: vec![1.0, 0.0, 0.0, 0.0] }
}

fn commit(session: &str, from: Option<Watermark>, through: (&str, Millis), records: Vec<NewRecord>) -> Op {
    Op::Extraction(ExtractionOp::Commit { session_id: session.into(), from, through: Watermark { id: through.0.into(), at: through.1 }, records, embedder: None })
}

#[test]
fn a_session_is_due_once_quiet_and_only_with_a_strategy() {
    let mut e = Engine::new();
    put(&mut e, "s1", vec![msg("a", 10), msg("b", 20)], true, 1_000);
    put(&mut e, "plain", vec![msg("x", 10)], false, 1_000);
    assert!(e.extraction_due(1_500, 2_000, 8).is_empty(), "writes not yet quiet");
    assert_eq!(e.next_extraction(1_500, 2_000), Some(3_000));
    let due = e.extraction_due(3_000, 2_000, 8);
    assert_eq!(due.len(), 1, "a session without a strategy is never extracted");
    assert_eq!(due[0].turns.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), vec!["a", "b"]);
    assert_eq!(due[0].from, None);
}

#[test]
fn a_commit_adds_records_and_moves_the_watermark_together() {
    let mut e = Engine::new();
    put(&mut e, "s1", vec![msg("a", 10), msg("b", 20)], true, 1_000);
    let Applied::Extracted(c) = e.apply(&commit("s1", None, ("b", 20), vec![record("r1", "User prefers tea.")]), 3_000).unwrap() else { panic!() };
    assert_eq!(c.created, vec!["r1"]);
    assert_eq!(e.extraction_watermark("s1").map(|w| w.id.as_str()), Some("b"));
    assert!(e.extraction_due(10_000, 2_000, 8).is_empty(), "nothing new after the watermark");
    assert_eq!(e.longterm().get("r1").map(|r| r.text.as_str()), Some("User prefers tea."));

    // A second pass from the old watermark (it raced, or it is a replay of
    // a pass whose commit landed) is refused and changes nothing.
    let before = e.clone();
    let stale = e.apply(&commit("s1", None, ("b", 20), vec![record("r2", "User prefers coffee.")]), 3_100).unwrap_err();
    assert_eq!(stale.code(), "extraction_stale");
    assert_eq!(e, before);

    e.apply(&Op::SessionAppend { session_id: "s1".into(), messages: vec![msg("c", 30)] }, 4_000).unwrap();
    let due = e.extraction_due(6_000, 2_000, 8);
    assert_eq!(due[0].turns.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), vec!["c"], "only the turns after the watermark");
    let from = due[0].from.clone();
    let Applied::Extracted(c) = e.apply(&commit("s1", from, ("c", 30), vec![record("r3", "User prefers tea.")]), 6_000).unwrap() else { panic!() };
    assert_eq!((c.created.len(), c.duplicates.len()), (0, 1), "deduplicated by hash");
}

#[test]
fn a_watermark_whose_turn_is_gone_counts_by_time_and_goes_with_its_session() {
    let mut e = Engine::new();
    put(&mut e, "s1", vec![msg("a", 10), msg("b", 20)], true, 1_000);
    e.apply(&commit("s1", None, ("b", 20), vec![]), 3_000).unwrap();
    // A whole-session write that dropped "b" (a compaction, a rewrite).
    put(&mut e, "s1", vec![msg("z", 15), msg("c", 30)], true, 4_000);
    let due = e.extraction_due(7_000, 2_000, 8);
    assert_eq!(due[0].turns.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), vec!["c"]);
    e.apply(&Op::SessionDelete { session_id: "s1".into() }, 8_000).unwrap();
    assert!(e.extraction_watermark("s1").is_none());
    assert!(e.apply(&commit("s1", None, ("c", 30), vec![]), 8_000).is_err(), "no commit for a missing session");
}

#[test]
fn watermarks_survive_a_snapshot() {
    let mut e = Engine::new();
    put(&mut e, "s1", vec![msg("a", 10)], true, 1_000);
    e.apply(&commit("s1", None, ("a", 10), vec![record("r1", "User likes jazz.")]), 3_000).unwrap();
    let back = Engine::decode_snapshot(&e.encode_snapshot().unwrap()).unwrap();
    assert_eq!(back.extraction_watermark("s1"), e.extraction_watermark("s1"));
    assert!(back.extraction_due(10_000, 2_000, 8).is_empty());
}

#[test]
fn a_backlog_is_read_in_bounded_passes() {
    let mut e = Engine::new();
    let n = limits::EXTRACT_TURNS_PER_PASS_MAX + 5;
    put(&mut e, "s1", (0..n).map(|i| msg(&format!("m{i:03}"), i as Millis)).collect(), true, 1_000);
    let due = e.extraction_due(3_000, 2_000, 8);
    assert_eq!(due[0].turns.len(), limits::EXTRACT_TURNS_PER_PASS_MAX);
    let last = due[0].turns.last().unwrap();
    e.apply(&commit("s1", None, (&last.id.clone(), last.created_at), vec![]), 3_000).unwrap();
    assert_eq!(e.extraction_due(3_000, 2_000, 8)[0].turns.len(), 5);
}
