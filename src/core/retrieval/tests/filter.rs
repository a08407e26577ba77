use serde_json::{json, Value};

use crate::core::limits;
use crate::core::retrieval::filter::{parse_time, Filter};
use crate::core::retrieval::record::{MemoryRecord, MemoryType};

const T0: u64 = 1_700_000_000_000; // 2023-11-14T22:13:20Z

fn record() -> MemoryRecord {
    let mut r = MemoryRecord::new("m1", "text", MemoryType::Semantic, T0);
    r.user_id = Some("alice".into());
    r.session_id = Some("s-1".into());
    r.namespace = Some("workspace:abc/session:1".into());
    r.topics = vec!["Rust".into(), "memory".into()];
    r.entities = vec!["Ferris".into()];
    r.last_accessed = T0 + 5_000;
    r
}

fn filter(v: Value) -> Filter {
    Filter::from_request(v.as_object().unwrap()).unwrap()
}

fn matches(v: Value) -> bool {
    filter(v).matches(&record())
}

fn refused(v: Value) -> String {
    Filter::from_request(v.as_object().unwrap()).unwrap_err().to_string()
}

#[test]
fn empty_request_matches_everything() {
    let f = filter(json!({"text": "q", "limit": 10, "user_id": null}));
    assert!(f.is_empty());
    assert!(f.matches(&record()));
}

#[test]
fn tag_operators() {
    assert!(matches(json!({"user_id": {"eq": "alice"}})));
    assert!(!matches(json!({"user_id": {"eq": "Alice"}})), "ids match exactly");
    assert!(!matches(json!({"user_id": {"ne": "alice"}})));
    assert!(matches(json!({"user_id": {"ne": "bob"}})));
    assert!(matches(json!({"session_id": {"any": ["x", "s-1"]}})));
    assert!(!matches(json!({"session_id": {"any": ["x", "y"]}})));
    assert!(matches(json!({"session_id": {"all": ["s-1"]}})));
    assert!(!matches(json!({"session_id": {"all": ["s-1", "x"]}})));
    assert!(matches(json!({"namespace": {"startswith": "workspace:abc"}})));
    assert!(!matches(json!({"namespace": {"startswith": "workspace:abd"}})));
    assert!(matches(json!({"extraction_strategy": {"eq": "discrete"}})));
}

#[test]
fn list_fields_and_case() {
    assert!(matches(json!({"topics": {"any": ["python", "rust"]}})), "topics ignore case");
    assert!(matches(json!({"topics": {"all": ["RUST", "Memory"]}})));
    assert!(!matches(json!({"topics": {"all": ["rust", "python"]}})));
    assert!(matches(json!({"topics": {"eq": "memory"}})));
    assert!(!matches(json!({"topics": {"ne": "memory"}})));
    assert!(matches(json!({"entities": {"startswith": "fer"}})));
    assert!(matches(json!({"topics": {"none": ["python"]}})));
    assert!(!matches(json!({"entities": {"none": ["ferris"]}})));
}

#[test]
fn client_aliases() {
    assert!(matches(json!({"user_id": {"in_": ["alice", "bob"]}})));
    assert!(!matches(json!({"user_id": {"not_eq": "alice"}})));
    assert!(!matches(json!({"user_id": {"not_in": ["alice"]}})));
    assert!(matches(json!({"memory_type": {"in_": ["semantic"]}})));
    assert!(matches(json!({"namespace": {"eq": "workspace:abc/session:1", "field": "namespace"}})));
    assert!(refused(json!({"user_id": {"any": ["a"], "in_": ["b"]}})).contains("twice"));
}

#[test]
fn absent_scalar_is_the_empty_set() {
    let mut r = record();
    r.user_id = None;
    assert!(!filter(json!({"user_id": {"eq": "alice"}})).matches(&r));
    assert!(filter(json!({"user_id": {"ne": "alice"}})).matches(&r));
    assert!(filter(json!({"user_id": {"none": ["alice"]}})).matches(&r));
    assert!(!filter(json!({"user_id": {"startswith": "a"}})).matches(&r));
}

#[test]
fn memory_type_operators() {
    assert!(matches(json!({"memory_type": {"eq": "semantic"}})));
    assert!(!matches(json!({"memory_type": {"ne": "semantic"}})));
    assert!(matches(json!({"memory_type": {"any": ["episodic", "semantic"]}})));
    assert!(!matches(json!({"memory_type": {"all": ["episodic", "semantic"]}})));
    assert!(matches(json!({"memory_type": {"none": ["message"]}})));
    assert!(refused(json!({"memory_type": {"eq": "fact"}})).contains("fact"));
    assert!(refused(json!({"memory_type": {"startswith": "sem"}})).contains("does not apply"));
}

#[test]
fn time_operators() {
    let iso = "2023-11-14T22:13:20Z";
    assert!(matches(json!({"created_at": {"eq": iso}})));
    assert!(matches(json!({"created_at": {"eq": 1_700_000_000}})), "epoch seconds");
    assert!(matches(json!({"created_at": {"eq": 1_700_000_000_000u64}})), "epoch milliseconds past 2e10");
    assert!(matches(json!({"created_at": {"gte": iso}})));
    assert!(!matches(json!({"created_at": {"gt": iso}})));
    assert!(matches(json!({"created_at": {"lte": iso, "gt": "2023-11-14T22:13:19.999+00:00"}})));
    assert!(!matches(json!({"created_at": {"lt": iso}})));
    assert!(matches(json!({"created_at": {"ne": "2023-11-15T00:00:00"}})));
    assert!(matches(json!({"last_accessed": {"gt": iso}})));
    assert!(matches(json!({"created_at": {"gte": "2023-11-14"}})), "bare date is midnight UTC");
}

#[test]
fn between_and_inclusive() {
    let (lo, hi) = ("2023-11-14T22:13:20Z", "2023-11-14T22:13:25Z");
    // created_at == lo, last_accessed == hi
    assert!(matches(json!({"created_at": {"between": [lo, hi]}})));
    assert!(matches(json!({"last_accessed": {"between": [lo, hi], "inclusive": "both"}})));
    assert!(!matches(json!({"created_at": {"between": [lo, hi], "inclusive": "neither"}})));
    assert!(!matches(json!({"last_accessed": {"between": [lo, hi], "inclusive": "left"}})));
    assert!(matches(json!({"created_at": {"between": [lo, hi], "inclusive": "left"}})));
    assert!(matches(json!({"last_accessed": {"between": [lo, hi], "inclusive": "right"}})));
    assert!(!matches(json!({"created_at": {"between": [lo, hi], "inclusive": "right"}})));
    assert!(refused(json!({"created_at": {"between": [lo]}})).contains("two"));
    assert!(refused(json!({"created_at": {"between": [lo, hi], "gt": lo}})).contains("between"));
    assert!(refused(json!({"created_at": {"between": [lo, hi], "inclusive": "most"}})).contains("inclusive"));
    assert!(refused(json!({"created_at": {"inclusive": "both"}})).contains("between"));
}

#[test]
fn unset_event_date() {
    assert!(!matches(json!({"event_date": {"gte": "1970-01-01T00:00:00Z"}})));
    assert!(matches(json!({"event_date": {"ne": "2020-01-01T00:00:00Z"}})));
    let mut r = record();
    r.event_date = Some(T0);
    assert!(filter(json!({"event_date": {"lte": 1_700_000_000}})).matches(&r));
}

#[test]
fn all_filters_must_hold() {
    assert!(matches(json!({"user_id": {"eq": "alice"}, "topics": {"any": ["rust"]}, "created_at": {"gte": T0 / 1000}})));
    assert!(!matches(json!({"user_id": {"eq": "alice"}, "topics": {"any": ["go"]}})));
}

#[test]
fn bad_operators_and_values_are_typed_errors() {
    for (body, says) in [
        (json!({"user_id": {"like": "a%"}}), "unknown filter operator"),
        (json!({"user_id": "alice"}), "object"),
        (json!({"user_id": {}}), "no filter operator"),
        (json!({"user_id": {"eq": "a", "ne": "b"}}), "eq and ne"),
        (json!({"topics": {"any": ["a"], "all": ["b"]}}), "any and all"),
        (json!({"namespace": {"startswith": "a", "eq": "b"}}), "startswith"),
        (json!({"topics": {"any": []}}), "empty list"),
        (json!({"topics": {"any": "rust"}}), "list"),
        (json!({"user_id": {"eq": 5}}), "string"),
        (json!({"user_id": {"eq": ""}}), "empty"),
        (json!({"created_at": {"gt": "yesterday"}}), "RFC 3339"),
        (json!({"created_at": {"gt": -5}}), "1970"),
        (json!({"created_at": {"gt": true}}), "RFC 3339"),
        (json!({"created_at": {"startswith": "2023"}}), "does not apply"),
    ] {
        let err = Filter::from_request(body.as_object().unwrap()).unwrap_err();
        assert_eq!(err.code(), "invalid_input", "{body}");
        assert!(err.to_string().contains(says), "{body}: {err}");
    }
    let many: Vec<String> = (0..=limits::FILTER_VALUES_MAX).map(|i| i.to_string()).collect();
    let err = Filter::from_request(json!({"topics": {"any": many}}).as_object().unwrap()).unwrap_err();
    assert_eq!(err.code(), "limit_exceeded");
    let long = "x".repeat(limits::FILTER_VALUE_BYTES_MAX + 1);
    let err = Filter::from_request(json!({"user_id": {"eq": long}}).as_object().unwrap()).unwrap_err();
    assert_eq!(err.code(), "payload_too_large");
}

#[test]
fn time_values() {
    assert_eq!(parse_time("t", &json!(1.5)).unwrap(), 1_500);
    assert_eq!(parse_time("t", &json!("1970-01-01T00:00:01.250Z")).unwrap(), 1_250);
    assert!(parse_time("t", &json!(f64::MAX)).is_err());
    assert!(parse_time("t", &json!(null)).is_err());
}
