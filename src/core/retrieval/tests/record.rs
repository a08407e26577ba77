use serde_json::json;

use crate::core::limits;
use crate::core::retrieval::record::{memory_hash, MemoryPatch, MemoryRecord, MemoryType};

// Fixtures computed with AMS's formula in CPython 3.11:
// hashlib.sha256(json.dumps({"text": ..., "user_id": ..., "session_id": ...,
// "namespace": ..., "memory_type": ...}, sort_keys=True).encode()).hexdigest()
#[test]
fn hash_matches_ams() {
    assert_eq!(
        memory_hash("User prefers dark mode", Some("u1"), Some("s1"), Some("ns"), MemoryType::Semantic),
        "e00fd1a2e3b01271ec28ce99137c440a4798c41acebcc9cb0a79737a0f73a480"
    );
    // Non-ASCII, an astral character (surrogate pair), short escapes,
    // a control character and DEL, which Python escapes too.
    assert_eq!(
        memory_hash("Café “naïve” \u{1F600} tab\t nl\n quote\" bs\\ ctl\u{1} del\u{7f}", None, None, None, MemoryType::Semantic),
        "0e53c5fedddbe7f4a5b4d93a0a88b1063aa5d52f4a4bb304514434fdf59aebe5"
    );
    assert_eq!(memory_hash("x", None, None, None, MemoryType::Message), "77cb2b4a6d3c4f212123214d17e007e0ceaafa7fb7a174eca33d55c7d7029e4e");
}

#[test]
fn new_record_has_ams_defaults_and_its_hash() {
    let r = MemoryRecord::new("m1", "User prefers dark mode", MemoryType::Semantic, 1_000);
    assert_eq!((r.created_at, r.updated_at, r.last_accessed), (1_000, 1_000, 1_000));
    assert_eq!(r.extraction_strategy, "discrete");
    assert_eq!(r.memory_hash, memory_hash("User prefers dark mode", None, None, None, MemoryType::Semantic));
    r.validate().unwrap();
}

#[test]
fn serde_reads_ams_shapes() {
    let v = json!({
        "id": "m1", "text": "t", "memory_type": "episodic", "memory_hash": "h",
        "created_at": 1, "updated_at": 2, "last_accessed": 3,
        "topics": null, "entities": ["Alice"], "discrete_memory_extracted": "t",
    });
    let r: MemoryRecord = serde_json::from_value(v).unwrap();
    assert!(r.topics.is_empty());
    assert_eq!(r.entities, ["Alice"]);
    assert!(r.discrete_memory_extracted);
    assert_eq!(r.memory_type, MemoryType::Episodic);
    let back = serde_json::to_value(&r).unwrap();
    assert_eq!(back["discrete_memory_extracted"], "t");
    assert_eq!(back["memory_type"], "episodic");
    let bytes = rmp_serde::to_vec_named(&r).unwrap();
    assert_eq!(rmp_serde::from_slice::<MemoryRecord>(&bytes).unwrap(), r);
    let bad = json!({"id": "m", "text": "t", "memory_type": "fact", "memory_hash": "h", "created_at": 1, "updated_at": 1, "last_accessed": 1});
    assert!(serde_json::from_value::<MemoryRecord>(bad).is_err());
}

#[test]
fn validation_rejects_each_bad_field() {
    let good = MemoryRecord::new("m1", "text", MemoryType::Semantic, 1);
    type Breaker = Box<dyn Fn(&mut MemoryRecord)>;
    let cases: Vec<(&str, Breaker)> = vec![
        ("id", Box::new(|r| r.id = String::new())),
        ("id", Box::new(|r| r.id = "a/b".into())),
        ("text", Box::new(|r| r.text = String::new())),
        ("text", Box::new(|r| r.text = "x".repeat(limits::MEMORY_TEXT_BYTES_MAX + 1))),
        ("user_id", Box::new(|r| r.user_id = Some(String::new()))),
        ("namespace", Box::new(|r| r.namespace = Some("x".repeat(limits::ID_BYTES_MAX + 1)))),
        ("topics", Box::new(|r| r.topics = vec!["a,b".into()])),
        ("topics", Box::new(|r| r.topics = vec![" ".into()])),
        ("entities", Box::new(|r| r.entities = vec!["x".repeat(limits::MEMORY_TAG_BYTES_MAX + 1)])),
        ("entities", Box::new(|r| r.entities = vec!["e".into(); limits::MEMORY_TAGS_MAX + 1])),
        ("memory_hash", Box::new(|r| r.memory_hash = String::new())),
        ("extraction_strategy", Box::new(|r| r.extraction_strategy = String::new())),
        ("metadata", Box::new(|r| {
            r.metadata.insert("k".into(), json!("x".repeat(limits::MEMORY_METADATA_BYTES_MAX)));
        })),
        ("event_date", Box::new(|r| r.event_date = Some(u64::MAX))),
    ];
    for (field, break_it) in cases {
        let mut r = good.clone();
        break_it(&mut r);
        let err = r.validate().unwrap_err();
        assert!(err.to_string().contains(field), "{field}: {err}");
    }
}

#[test]
fn patch_applies_revalidates_and_rehashes() {
    let r = MemoryRecord::new("m1", "likes tea", MemoryType::Semantic, 1);
    let p = MemoryPatch { text: Some("likes coffee".into()), pinned: Some(true), ..MemoryPatch::default() };
    let out = p.apply(&r, 50).unwrap();
    assert_eq!(out.text, "likes coffee");
    assert!(out.pinned);
    assert_eq!(out.updated_at, 50);
    assert_eq!(out.created_at, 1);
    assert_eq!(out.memory_hash, out.compute_hash());
    assert_ne!(out.memory_hash, r.memory_hash);
    // A namespace change also moves the hash (AMS would keep the stale one).
    let moved = MemoryPatch { namespace: Some("ns".into()), ..MemoryPatch::default() }.apply(&r, 2).unwrap();
    assert_eq!(moved.memory_hash, memory_hash("likes tea", None, None, Some("ns"), MemoryType::Semantic));
    // Pinning alone keeps it.
    let pinned = MemoryPatch { pinned: Some(true), ..MemoryPatch::default() }.apply(&r, 2).unwrap();
    assert_eq!(pinned.memory_hash, r.memory_hash);
    // Empty and invalid patches are refused.
    assert_eq!(MemoryPatch::default().apply(&r, 2).unwrap_err().code(), "invalid_input");
    let bad = MemoryPatch { topics: Some(vec!["a,b".into()]), ..MemoryPatch::default() };
    assert!(bad.apply(&r, 2).is_err());
    let patch: MemoryPatch = serde_json::from_value(json!({"memory_type": "episodic", "event_date": 5, "unknown": 1})).unwrap();
    assert_eq!(patch.apply(&r, 2).unwrap().event_date, Some(5));
}
