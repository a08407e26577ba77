use serde_json::json;

use super::*;

const DAY: Millis = 86_400_000;

fn ep(id: &str, agent: &str, kind: &str, at: Millis) -> Episode {
    Episode {
        id: id.into(),
        agent_id: agent.into(),
        kind: kind.into(),
        at,
        payload: json!({"n": id}).as_object().cloned().unwrap_or_default(),
        outcome: None,
        seq: 0,
    }
}

fn ids(v: &[&Episode]) -> Vec<String> {
    v.iter().map(|e| e.id.clone()).collect()
}

#[test]
fn cap_keeps_the_newest_and_reports_evictions() {
    let mut log = EpisodicLog::new(EpisodicConfig { per_agent_max: 3, ..EpisodicConfig::default() });
    for i in 0..5u64 {
        let r = log.record(ep(&format!("e{i}"), "a", "k", 1000 + i), 2000).unwrap();
        assert_eq!(r.evicted, usize::from(i >= 3));
    }
    log.record(ep("other", "b", "k", 1), 2000).unwrap();
    assert_eq!(log.len(), 4);
    assert_eq!(ids(&log.recent(Some("a"), 10, None, 2000)), ["e4", "e3", "e2"]);
    // An event older than everything kept is itself the one dropped.
    let r = log.record(ep("ancient", "a", "k", 5), 2000).unwrap();
    assert_eq!(r.evicted, 1);
    assert_eq!(ids(&log.recent(Some("a"), 10, None, 2000)), ["e4", "e3", "e2"]);
}

#[test]
fn refuse_policy_changes_nothing_at_the_cap() {
    let mut log = EpisodicLog::new(EpisodicConfig { per_agent_max: 2, at_cap: AtCap::Refuse, ..EpisodicConfig::default() });
    log.record(ep("1", "a", TURN_ARCHIVED, 1), 10).unwrap();
    log.record(ep("2", "a", TURN_ARCHIVED, 2), 10).unwrap();
    let before = log.clone();
    let err = log.record(ep("3", "a", TURN_ARCHIVED, 3), 10).unwrap_err();
    assert_eq!(err.code(), "limit_exceeded");
    assert_eq!(log, before);
    // Other agents are unaffected.
    log.record(ep("4", "b", TURN_ARCHIVED, 3), 10).unwrap();
}

#[test]
fn lowering_the_cap_evicts_oldest() {
    let mut log = EpisodicLog::default();
    for i in 0..10u64 {
        log.record(ep(&format!("e{i}"), "a", "k", i), 100).unwrap();
    }
    let evicted = log.configure(EpisodicConfig { per_agent_max: 4, ..EpisodicConfig::default() }).unwrap();
    assert_eq!(evicted, 6);
    assert_eq!(log.len(), 4);
    assert_eq!(ids(&log.recent(None, 10, None, 100)), ["e9", "e8", "e7", "e6"]);
    assert!(log.configure(EpisodicConfig { per_agent_max: 0, ..EpisodicConfig::default() }).is_err());
}

#[test]
fn ttl_hides_then_expire_sweeps() {
    let mut log = EpisodicLog::new(EpisodicConfig { ttl_seconds: Some(86_400), ..EpisodicConfig::default() });
    log.record(ep("old", "a", "k", 0), 0).unwrap();
    log.record(ep("new", "a", "k", DAY / 2), DAY / 2).unwrap();
    assert_eq!(ids(&log.recent(Some("a"), 10, None, DAY - 1)), ["new", "old"]);
    // At exactly at + ttl the event is expired.
    assert_eq!(ids(&log.recent(Some("a"), 10, None, DAY)), ["new"]);
    assert_eq!(log.summarize_window(None, 0, DAY).total, 1);
    assert_eq!(log.next_expiry(), Some(DAY));
    assert_eq!(log.len(), 2, "invisible until swept");
    assert_eq!(log.expire(DAY), 1);
    assert_eq!(log.len(), 1);
    assert_eq!(log.next_expiry(), Some(DAY + DAY / 2));
    assert_eq!(log.expire(10 * DAY), 1);
    assert!(log.is_empty());
    // Recording an event already past the TTL is refused.
    assert_eq!(log.record(ep("late", "a", "k", 0), 10 * DAY).unwrap_err().code(), "invalid_input");
}

#[test]
fn recent_filters_by_kind_and_merges_agents() {
    let mut log = EpisodicLog::default();
    log.record(ep("a1", "a", "tool_call", 10), 100).unwrap();
    log.record(ep("b1", "b", "tool_call", 20), 100).unwrap();
    log.record(ep("a2", "a", "error", 30), 100).unwrap();
    log.record(ep("b2", "b", "tool_call", 30), 100).unwrap();
    // Same time: reverse recording order.
    assert_eq!(ids(&log.recent(None, 10, None, 100)), ["b2", "a2", "b1", "a1"]);
    assert_eq!(ids(&log.recent(None, 2, Some("tool_call"), 100)), ["b2", "b1"]);
    assert_eq!(ids(&log.recent(Some("a"), 10, Some("tool_call"), 100)), ["a1"]);
    assert!(log.recent(Some("nobody"), 10, None, 100).is_empty());
    assert!(log.recent(None, 0, None, 100).is_empty());
    // Out-of-order arrival is placed by time.
    log.record(ep("a0", "a", "tool_call", 5), 100).unwrap();
    assert_eq!(ids(&log.recent(Some("a"), 10, None, 100)), ["a2", "a1", "a0"]);
}

#[test]
fn summarize_window_counts_kinds_and_span() {
    let mut log = EpisodicLog::default();
    for (i, (kind, at)) in [("tool_call", 5), ("tool_call", 10), ("error", 15), ("tool_call", 20), ("error", 25)].into_iter().enumerate() {
        log.record(ep(&format!("e{i}"), if i % 2 == 0 { "a" } else { "b" }, kind, at), 100).unwrap();
    }
    let s = log.summarize_window(None, 10, 20);
    assert_eq!(s.total, 3);
    assert_eq!(s.by_kind.get("tool_call"), Some(&2));
    assert_eq!(s.by_kind.get("error"), Some(&1));
    assert_eq!((s.first_at, s.last_at), (Some(10), Some(20)));
    let a = log.summarize_window(Some("a"), 0, 100);
    assert_eq!(a.total, 3);
    assert_eq!((a.first_at, a.last_at), (Some(5), Some(25)));
    assert_eq!(log.summarize_window(None, 30, 100), WindowSummary::default());
}

#[test]
fn invalid_events_are_refused_without_change() {
    let mut log = EpisodicLog::default();
    let mut bad = ep("x", "a", "", 1);
    assert_eq!(log.record(bad.clone(), 2).unwrap_err().code(), "invalid_input");
    bad.kind = "k".repeat(limits::EPISODE_KIND_BYTES_MAX + 1);
    assert!(log.record(bad.clone(), 2).is_err());
    bad.kind = "k".into();
    bad.agent_id = String::new();
    assert!(log.record(bad.clone(), 2).is_err());
    bad.agent_id = "a".into();
    bad.outcome = Some(Value::String("x".repeat(limits::EPISODE_OUTCOME_BYTES_MAX)));
    assert_eq!(log.record(bad, 2).unwrap_err().code(), "payload_too_large");
    assert!(log.is_empty());
}

#[test]
fn archived_turns_round_trip_through_a_snapshot() {
    let mut log = EpisodicLog::new(EpisodicConfig { per_agent_max: 50_000, ttl_seconds: Some(3600), at_cap: AtCap::Refuse });
    let m = Message { id: "m1".into(), role: "user".into(), content: "hello".into(), created_at: 7, persisted_at: None, tokens: Default::default() };
    let e = Episode::archived_turn("t1".into(), "agent".into(), 7, "s1", &m).unwrap();
    assert_eq!(e.payload.get("message").and_then(|v| v.get("content")), Some(&json!("hello")));
    log.record(e, 8).unwrap();
    let mut done = ep("t2", "agent", "tool_call", 9);
    done.outcome = Some(json!({"ok": true}));
    log.record(done, 9).unwrap();
    let bytes = rmp_serde::to_vec_named(&log).unwrap();
    let back: EpisodicLog = rmp_serde::from_slice(&bytes).unwrap();
    assert_eq!(back, log);
    // The sequence continues after a reload.
    let mut back = back;
    assert_eq!(back.record(ep("t3", "agent", "k", 9), 9).unwrap().seq, 2);
}

#[test]
fn corrupt_snapshots_are_refused() {
    let over_cap = json!({
        "config": {"per_agent_max": 1, "ttl_seconds": null, "at_cap": "evict_oldest"},
        "episodes": [
            {"id": "1", "agent_id": "a", "kind": "k", "at": 1, "seq": 0},
            {"id": "2", "agent_id": "a", "kind": "k", "at": 2, "seq": 1}
        ]
    });
    let err = serde_json::from_value::<EpisodicLog>(over_cap).unwrap_err();
    assert!(err.to_string().contains("snapshot is corrupt"), "{err}");
    let bad_event = json!({
        "config": {"per_agent_max": 10, "ttl_seconds": null, "at_cap": "refuse"},
        "episodes": [{"id": "", "agent_id": "a", "kind": "k", "at": 1}]
    });
    assert!(serde_json::from_value::<EpisodicLog>(bad_event).is_err());
}
