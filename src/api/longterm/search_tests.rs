//! Issue 19 through the route: auto mode, time expressions, neighbouring
//! turns, the speaker filter and dates read from text at write time.

use serde_json::{json, Value};

use crate::api::tests::Api;

fn ids(body: &Value) -> Vec<String> {
    body["memories"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap().to_owned()).collect()
}

/// A two-session chat: each turn an ordinary record (no memory_type), the
/// speaker and the turn's index in metadata, the session's date as
/// `created_at`.
fn seed_dialog(api: &mut Api) {
    let turns = [
        ("s1", "2023-03-02T12:00:00Z", "Ana", "I adopted a puppy called Tofu last week."),
        ("s1", "2023-03-02T12:00:00Z", "assistant", "Congratulations! How is the little one settling in?"),
        ("s1", "2023-03-02T12:00:00Z", "Ana", "Yes, really well!"),
        ("s1", "2023-03-02T12:00:00Z", "assistant", "Anything else on your mind today?"),
        ("s2", "2023-05-20T12:00:00Z", "Ana", "We moved to Lisbon on 7 May 2023."),
        ("s2", "2023-05-20T12:00:00Z", "assistant", "That is a big change."),
        ("s2", "2023-05-20T12:00:00Z", "Ben", "Ana's brother Ben here: I run marathons."),
    ];
    let memories: Vec<Value> = turns
        .iter()
        .enumerate()
        .map(|(i, (session, at, speaker, text))| {
            json!({ "id": format!("t{i}"), "text": text, "session_id": session, "created_at": at, "metadata": { "speaker": speaker, "turn": i } })
        })
        .collect();
    let r = api.call("POST", "/v1/long-term-memory/", &json!({ "memories": memories }).to_string());
    assert_eq!(r.status, 200, "{}", r.body);
}

#[test]
fn a_date_in_the_text_becomes_the_event_date_unless_one_is_given() {
    let mut api = Api::new();
    seed_dialog(&mut api);
    let g = api.call("GET", "/v1/long-term-memory/t4", "");
    assert_eq!(g.body["event_date"], "2023-05-07T00:00:00.000Z", "{}", g.body);
    // Relative dates are not read at write time; creation time covers them.
    let g = api.call("GET", "/v1/long-term-memory/t0", "");
    assert!(g.body["event_date"].is_null(), "{}", g.body);
    let r = api.call("POST", "/v1/long-term-memory/", r#"{"memories": [{"id": "given", "text": "On 7 May 2023 we moved.", "event_date": "2020-01-01T00:00:00Z"}]}"#);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(api.call("GET", "/v1/long-term-memory/given", "").body["event_date"], "2020-01-01T00:00:00.000Z");
}

#[test]
fn time_expressions_are_read_shown_and_favour_their_window() {
    let mut api = Api::new();
    seed_dialog(&mut api);
    let body = json!({ "text": "where did we move in May 2023", "search_mode": "keyword", "reference_time": "2024-01-10T09:00:00+01:00" });
    let s = api.call("POST", "/v1/long-term-memory/search", &body.to_string());
    assert_eq!(s.status, 200, "{}", s.body);
    assert_eq!(ids(&s.body)[0], "t4", "{}", s.body);
    let tq = &s.body["time_query"][0];
    assert_eq!(tq["text"], "in May 2023");
    assert_eq!(tq["grain"], "month");
    // May in the caller's zone (+01:00): from the local midnight of 1 May.
    assert_eq!(tq["from"], "2023-04-30T23:00:00.000Z");
    assert_eq!(tq["to"], "2023-05-31T23:00:00.000Z");
    assert_eq!(tq["tz_offset_minutes"], 60);
    // An expression that cannot be read is ignored, never an error.
    let s = api.call("POST", "/v1/long-term-memory/search", r#"{"text": "what happened before the trip", "search_mode": "keyword"}"#);
    assert_eq!((s.status, s.body["time_query"].as_array().map(Vec::len)), (200, Some(0)), "{}", s.body);
    // Bad reference times and offsets are typed errors.
    for bad in [r#"{"text": "x", "reference_time": "last Tuesday"}"#, r#"{"text": "x", "tz": "Europe/Lisbon"}"#, r#"{"text": "x", "tz": 60}"#] {
        let r = api.call("POST", "/v1/long-term-memory/search", bad);
        assert_eq!((r.status, r.body["code"].as_str()), (422, Some("invalid_input")), "{bad}: {}", r.body);
    }
}

#[test]
fn expand_attaches_the_turns_around_each_hit_in_order() {
    let mut api = Api::new();
    seed_dialog(&mut api);
    let s = api.call("POST", "/v1/long-term-memory/search", r#"{"text": "puppy Tofu", "search_mode": "keyword", "expand": 2, "limit": 1}"#);
    assert_eq!(ids(&s.body), ["t0"], "{}", s.body);
    let ctx: Vec<&str> = s.body["memories"][0]["context"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap()).collect();
    // The first turn has nothing before it; two after, same session only.
    assert_eq!(ctx, ["t1", "t2"]);
    let s = api.call("POST", "/v1/long-term-memory/search", r#"{"text": "Lisbon", "search_mode": "keyword", "expand": 1, "limit": 1}"#);
    let ctx: Vec<&str> = s.body["memories"][0]["context"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!(ctx, ["t5"], "{}", s.body);
    // Without expand there is no context at all.
    let s = api.call("POST", "/v1/long-term-memory/search", r#"{"text": "Lisbon", "search_mode": "keyword"}"#);
    assert!(s.body["memories"][0].get("context").is_none());
    for bad in [r#"{"text": "x", "expand": 6}"#, r#"{"text": "x", "expand": -1}"#, r#"{"text": "x", "expand": "2"}"#] {
        let r = api.call("POST", "/v1/long-term-memory/search", bad);
        assert_eq!((r.status, r.body["code"].as_str()), (422, Some("invalid_input")), "{bad}: {}", r.body);
    }
}

#[test]
fn speaker_and_session_are_filters() {
    let mut api = Api::new();
    seed_dialog(&mut api);
    let s = api.call("POST", "/v1/long-term-memory/search", r#"{"text": "marathons Lisbon", "search_mode": "keyword", "speaker": {"eq": "Ana"}}"#);
    assert_eq!(ids(&s.body), ["t4"], "{}", s.body);
    let s = api.call("POST", "/v1/long-term-memory/search", r#"{"text": "marathons Lisbon", "search_mode": "keyword", "speaker": {"eq": "Ben"}}"#);
    assert_eq!(ids(&s.body), ["t6"], "{}", s.body);
    let s = api.call("POST", "/v1/long-term-memory/search", r#"{"text": "", "session_id": {"eq": "s1"}, "speaker": {"any": ["assistant"]}}"#);
    let mut got = ids(&s.body);
    got.sort();
    assert_eq!(got, ["t1", "t3"], "{}", s.body);
}

#[test]
fn auto_runs_hybrid_with_vectors_and_keyword_without() {
    let mut api = Api::new();
    seed_dialog(&mut api);
    let s = api.call("POST", "/v1/long-term-memory/search", r#"{"text": "who runs marathons"}"#);
    assert_eq!(s.status, 200, "{}", s.body);
    assert_eq!(ids(&s.body)[0], "t6", "{}", s.body);
    let mode = s.body["search_mode"].as_str().unwrap();
    assert!(mode == "hybrid" || mode == "keyword", "{mode}");
    for bad in [r#"{"text": "x", "search_mode": "fuzzy"}"#, r#"{"text": "x", "search_mode": "hybrid", "hybrid_alpha": 1.5}"#] {
        let r = api.call("POST", "/v1/long-term-memory/search", bad);
        assert_eq!((r.status, r.body["code"].as_str()), (422, Some("invalid_input")), "{bad}: {}", r.body);
    }
}

#[test]
fn the_window_decides_between_equal_texts() {
    let mut api = Api::new();
    let r = api.call(
        "POST",
        "/v1/long-term-memory/",
        r#"{"memories": [{"id": "tuesday", "text": "Went to the gym.", "created_at": "2024-01-09T18:00:00Z"}, {"id": "friday", "text": "Went to the gym.", "created_at": "2024-01-05T18:00:00Z"}], "deduplicate": false}"#,
    );
    assert_eq!(r.status, 200, "{}", r.body);
    for (reference, first) in [("2024-01-10T08:00:00Z", "tuesday"), ("2024-01-06T08:00:00Z", "friday")] {
        let body = json!({ "text": "gym yesterday", "search_mode": "keyword", "reference_time": reference });
        let s = api.call("POST", "/v1/long-term-memory/search", &body.to_string());
        assert_eq!(ids(&s.body)[0], first, "{reference}: {}", s.body);
        // Reported scores are the retrieval's: the boost only orders.
        assert_eq!(s.body["memories"][0]["score"], s.body["memories"][1]["score"]);
    }
}

#[test]
fn event_at_is_an_alias_of_event_date() {
    let mut api = Api::new();
    let r = api.call("POST", "/v1/long-term-memory/", r#"{"memories": [{"id": "a", "text": "Moved.", "event_at": "2023-05-07T00:00:00Z"}, {"id": "b", "text": "Stayed.", "event_date": "2023-06-07T00:00:00Z", "event_at": "2023-06-07T00:00:00Z"}]}"#);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(api.call("GET", "/v1/long-term-memory/a", "").body["event_date"], "2023-05-07T00:00:00.000Z");
    let s = api.call("POST", "/v1/long-term-memory/search", r#"{"text": "", "event_at": {"lt": "2023-06-01T00:00:00Z"}}"#);
    assert_eq!(ids(&s.body), ["a"], "{}", s.body);
    let e = api.call("PATCH", "/v1/long-term-memory/b", r#"{"event_at": "2023-06-08T00:00:00Z"}"#);
    assert_eq!(e.body["event_date"], "2023-06-08T00:00:00.000Z", "{}", e.body);
    // Two different values for the one field are refused, and nothing is written.
    let bad = api.call("POST", "/v1/long-term-memory/", r#"{"memories": [{"id": "c", "text": "x", "event_date": "2023-01-01T00:00:00Z", "event_at": "2024-01-01T00:00:00Z"}]}"#);
    assert_eq!((bad.status, bad.body["code"].as_str()), (422, Some("invalid_input")), "{}", bad.body);
    assert_eq!(api.call("GET", "/v1/long-term-memory/c", "").status, 404);
}

#[test]
fn exact_scans_every_vector_and_is_refused_when_not_a_boolean() {
    let mut api = Api::new();
    // More records than the flat segment holds (VECTOR_SEAL_POINTS_DEFAULT):
    // most are in an HNSW graph, which a search walks unless asked to scan.
    let words = ["otter", "quay", "granite", "tea", "lisbon", "kayak", "sourdough", "piano", "marathon", "garden", "flight", "coffee"];
    let memories: Vec<Value> = (0..crate::core::limits::VECTOR_SEAL_POINTS_DEFAULT + 200).map(|i| json!({ "id": format!("m{i}"), "text": format!("{} {} {} {i}", words[i % 12], words[i * 7 % 12], words[i * 5 % 11]) })).collect();
    for chunk in memories.chunks(100) {
        let r = api.call("POST", "/v1/long-term-memory/", &json!({ "memories": chunk }).to_string());
        assert_eq!(r.status, 200, "{}", r.body);
    }
    for text in ["otter tea", "kayak on the quay", "granite piano 17"] {
        let exact = api.call("POST", "/v1/long-term-memory/search", &json!({ "text": text, "search_mode": "semantic", "exact": true, "limit": 10, "recency_boost": false }).to_string());
        assert_eq!(exact.status, 200, "{}", exact.body);
        // The nearest ten by the answer's own distances: every record's
        // distance, from a search as wide as the tenant.
        let all = api.call("POST", "/v1/long-term-memory/search", &json!({ "text": text, "search_mode": "semantic", "exact": true, "limit": 100, "recency_boost": false }).to_string());
        let dists: Vec<f64> = exact.body["memories"].as_array().unwrap().iter().map(|m| m["dist"].as_f64().unwrap()).collect();
        assert!(dists.windows(2).all(|w| w[0] <= w[1]), "{dists:?}");
        let wider: Vec<f64> = all.body["memories"].as_array().unwrap().iter().map(|m| m["dist"].as_f64().unwrap()).collect();
        assert_eq!(dists[..], wider[..10], "{text}: the first ten of a wider exact search");
        // The graph's search breadth does not narrow a scan.
        let narrow = api.call("POST", "/v1/long-term-memory/search", &json!({ "text": text, "search_mode": "semantic", "exact": true, "ef": 1, "limit": 10, "recency_boost": false }).to_string());
        assert_eq!(ids(&narrow.body), ids(&exact.body), "{text}");
    }
    let bad = api.call("POST", "/v1/long-term-memory/search", &json!({ "text": "tea", "exact": "yes" }).to_string());
    assert_eq!((bad.status, bad.body["code"].as_str()), (422, Some("invalid_input")), "{}", bad.body);
}
