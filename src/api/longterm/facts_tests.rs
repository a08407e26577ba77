//! Issue 20 over the routes: fact keys with per-record create results,
//! `latest_only` / `as_of` / `include_superseded`, idempotent retries, and
//! AMS's record shape untouched for records without a fact key.

use serde_json::{json, Value};

use crate::api::tests::Api;

fn facts() -> Value {
    json!({ "memories": [
        { "id": "u1", "text": "Ana prefers metric units.", "user_id": "ana", "fact_key": "user.units", "valid_from": "2025-01-10T00:00:00Z" },
        { "id": "u3", "text": "Ana is back on metric units after the move.", "user_id": "ana", "fact_key": "user.units", "valid_from": "2025-06-01T00:00:00Z" },
        { "id": "u2", "text": "Ana switched to imperial units for the US office.", "user_id": "ana", "fact_key": "user.units", "valid_from": "2025-03-01T00:00:00Z" },
        { "id": "plain", "text": "Ana likes hiking in the mountains near her units office.", "user_id": "ana" },
    ]})
}

fn ids(r: &Value) -> Vec<&str> {
    r["memories"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap()).collect()
}

fn search(api: &mut Api, extra: Value) -> Value {
    let mut body = json!({ "text": "Ana units", "search_mode": "keyword", "recency_boost": false });
    body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    let r = api.call("POST", "/v1/long-term-memory/search", &body.to_string());
    assert_eq!(r.status, 200, "{}", r.body);
    r.body
}

#[test]
fn create_answers_one_result_per_record_and_a_retry_creates_nothing() {
    let mut api = Api::new();
    let r = api.call("POST", "/v1/long-term-memory/", &facts().to_string());
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["status"], "ok");
    assert_eq!(
        r.body["results"],
        json!([
            { "id": "u1", "status": "created" },
            { "id": "u3", "status": "superseded", "superseded": ["u1"] },
            // Back-dated between the two: replaces u1, already replaced by u3.
            { "id": "u2", "status": "superseded", "superseded": ["u1"], "superseded_by": "u3" },
            { "id": "plain", "status": "created" },
        ])
    );
    // The retry after a timeout: nothing is written twice.
    let again = api.call("POST", "/v1/long-term-memory/", &facts().to_string());
    assert_eq!(again.body["created"], json!([]), "{}", again.body);
    assert_eq!(again.body["results"][1], json!({ "id": "u3", "status": "duplicate_of", "duplicate_of": "u3" }));
    // Same content under a fresh id: deduplicated to the current record...
    let dup = api.call("POST", "/v1/long-term-memory/", r#"{"memories": [{"text": "Ana is back on metric units after the move.", "user_id": "ana", "fact_key": "user.units"}]}"#);
    assert_eq!(dup.body["results"][0]["duplicate_of"], "u3", "{}", dup.body);
    // ...but not to a superseded one: saying an old value again is news.
    let old = api.call("POST", "/v1/long-term-memory/", r#"{"memories": [{"text": "Ana prefers metric units.", "user_id": "ana"}]}"#);
    assert_eq!(old.body["results"][0]["status"], "created", "{}", old.body);
}

#[test]
fn searches_see_the_current_fact_a_past_one_or_the_chain() {
    let mut api = Api::new();
    api.call("POST", "/v1/long-term-memory/", &facts().to_string());
    let latest = search(&mut api, json!({}));
    let mut found = ids(&latest);
    found.sort_unstable();
    assert_eq!(found, ["plain", "u3"]);
    let hit = latest["memories"].as_array().unwrap().iter().find(|m| m["id"] == "u3").unwrap();
    assert_eq!((hit["fact_key"].as_str(), hit["valid_from"].as_str(), hit["valid_to"].clone(), hit["superseded_by"].clone()), (Some("user.units"), Some("2025-06-01T00:00:00.000Z"), Value::Null, Value::Null));
    assert_eq!(search(&mut api, json!({ "latest_only": true })), latest);
    let march = search(&mut api, json!({ "as_of": "2025-04-01T00:00:00Z", "fact_key": { "eq": "user.units" } }));
    assert_eq!(ids(&march), ["u2"]);
    assert_eq!(march["memories"][0]["valid_to"], "2025-06-01T00:00:00.000Z");
    assert_eq!(march["memories"][0]["superseded_by"], "u3");
    let chain = search(&mut api, json!({ "include_superseded": true, "fact_key": { "eq": "user.units" }, "limit": 10 }));
    let mut all = ids(&chain);
    all.sort_unstable();
    assert_eq!(all, ["u1", "u2", "u3"]);
    assert_eq!(search(&mut api, json!({ "latest_only": false, "fact_key": { "eq": "user.units" } }))["memories"].as_array().unwrap().len(), 3);
    // The superseded record is still readable by id.
    assert_eq!(api.call("GET", "/v1/long-term-memory/u1", "").body["superseded_by"], "u2");
}

#[test]
fn contradictory_or_malformed_options_are_refused() {
    let mut api = Api::new();
    api.call("POST", "/v1/long-term-memory/", &facts().to_string());
    for body in [
        json!({ "text": "x", "as_of": "2025-01-01T00:00:00Z", "include_superseded": true }),
        json!({ "text": "x", "as_of": "2025-01-01T00:00:00Z", "latest_only": false }),
        json!({ "text": "x", "include_superseded": true, "latest_only": true }),
        json!({ "text": "x", "as_of": "last week" }),
        json!({ "text": "x", "as_of": 1_700_000_000 }),
        json!({ "text": "x", "latest_only": "yes" }),
    ] {
        let r = api.call("POST", "/v1/long-term-memory/search", &body.to_string());
        assert_eq!((r.status, r.body["code"].as_str()), (422, Some("invalid_input")), "{body}: {}", r.body);
    }
    for m in [
        json!({ "text": "x", "fact_key": "" }),
        json!({ "text": "x", "fact_key": 5 }),
        json!({ "text": "x", "fact_key": "k".repeat(300) }),
        json!({ "text": "x", "valid_from": "2025-01-01T00:00:00Z" }),
        json!({ "text": "x", "fact_key": "a.b", "valid_from": "soon" }),
    ] {
        let r = api.call("POST", "/v1/long-term-memory/", &json!({ "memories": [m.clone()] }).to_string());
        assert_eq!((r.status, r.body["code"].as_str()), (422, Some("invalid_input")), "{m}: {}", r.body);
    }
}

#[test]
fn records_without_a_fact_key_keep_ams_shape() {
    let mut api = Api::new();
    api.call("POST", "/v1/long-term-memory/", &facts().to_string());
    let plain = api.call("GET", "/v1/long-term-memory/plain", "").body;
    assert_eq!(plain.as_object().unwrap().len(), super::json::RECORD_FIELDS.len());
    assert!(plain.get("fact_key").is_none() && plain.get("valid_to").is_none());
    // Sent back as read (valid_to and superseded_by included): accepted,
    // and the derived fields are recomputed, not taken.
    let mut u1 = api.call("GET", "/v1/long-term-memory/u1", "").body;
    u1["superseded_by"] = json!("forged");
    let r = api.call("POST", "/v1/long-term-memory/", &json!({ "memories": [u1] }).to_string());
    assert_eq!(r.body["results"][0]["status"], "duplicate_of", "{}", r.body);
    assert_eq!(api.call("GET", "/v1/long-term-memory/u1", "").body["superseded_by"], "u2");
}

#[test]
fn explain_gives_each_hits_signals_and_no_other_records_text() {
    let mut api = Api::new();
    api.call("POST", "/v1/long-term-memory/", &facts().to_string());
    let hybrid = search(&mut api, json!({ "search_mode": "hybrid", "explain": true, "recency_boost": true, "user_id": { "eq": "ana" }, "text": "Ana units in March 2025", "reference_time": "2025-12-01T00:00:00Z" }));
    let hits = hybrid["memories"].as_array().unwrap();
    assert!(!hits.is_empty());
    for (i, h) in hits.iter().enumerate() {
        let x = &h["explain"];
        assert_eq!(x["rank"], i + 1, "{x}");
        assert_eq!(x["search_mode"], "hybrid");
        assert_eq!(x["fusion"]["kind"], "alpha");
        assert!(x["fusion"]["formula"].as_str().unwrap().contains("minmax(bm25)"), "{x}");
        for k in ["vector_weight", "prior", "coverage", "confidence"] {
            assert!(x["fusion"][k].is_number(), "{k}: {x}");
        }
        assert!(x["bm25"].is_null() || x["bm25"]["rank"].as_u64().unwrap() >= 1);
        assert!(x["vector"]["score"].is_number(), "every candidate has a similarity: {x}");
        assert!(x["recency"]["combined"].is_number(), "{x}");
        assert!(x["time_boost"].is_number(), "the query names a month: {x}");
        assert_eq!(x["filters"], json!(["user_id"]));
        assert_eq!(x["versions"], "latest_only");
        // Numbers and names only: no record's text, not even its own.
        let words = x.to_string();
        for m in facts()["memories"].as_array().unwrap() {
            assert!(!words.contains(m["text"].as_str().unwrap()), "{words}");
        }
    }
    let kw = search(&mut api, json!({ "explain": true, "as_of": "2025-04-01T00:00:00Z" }));
    let x = &kw["memories"][0]["explain"];
    assert_eq!((x["fusion"].clone(), x["vector"].clone()), (Value::Null, Value::Null), "{x}");
    assert_eq!(x["bm25"]["rank"], 1);
    assert_eq!(x["versions"]["as_of"], "2025-04-01T00:00:00.000Z");
    assert!(search(&mut api, json!({}))["memories"][0].get("explain").is_none(), "only when asked");
    let lean = search(&mut api, json!({ "explain": true, "fields": ["id"] }));
    assert_eq!(lean["memories"][0].as_object().unwrap().keys().collect::<Vec<_>>(), ["explain", "id"]);
}
