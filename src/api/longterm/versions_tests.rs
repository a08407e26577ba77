//! Versions over the routes (issue 20): list, restore after a poisoned edit
//! and after a delete, redaction that leaves no text in storage, and the
//! right to be forgotten reaching past versions.

use serde_json::json;

use crate::api::tests::Api;

/// Every byte the backend holds (op log, snapshot chunks, head).
fn storage_text(api: &Api) -> String {
    api.backend.dump().into_values().map(|v| String::from_utf8_lossy(&v).into_owned()).collect::<Vec<_>>().join("\n")
}

fn create(api: &mut Api, id: &str, text: &str) {
    let r = api.call("POST", "/v1/long-term-memory/", &json!({ "memories": [{ "id": id, "text": text, "user_id": "ana" }] }).to_string());
    assert_eq!(r.status, 200, "{}", r.body);
}

#[test]
fn versions_list_and_restore_undo_a_poisoned_write() {
    let mut api = Api::new();
    create(&mut api, "m", "Ana's wallet is wal-good");
    let e = api.call("PATCH", "/v1/long-term-memory/m", r#"{"text": "Ana's wallet is wal-evil"}"#);
    assert_eq!(e.status, 200);
    let v = api.call("GET", "/v1/long-term-memory/m/versions", "").body;
    assert_eq!(v["current"], 2);
    let listed: Vec<(u64, &str, &str)> = v["versions"].as_array().unwrap().iter().map(|x| (x["version"].as_u64().unwrap(), x["op"].as_str().unwrap(), x["actor"].as_str().unwrap())).collect();
    assert_eq!(listed, [(1, "create", "local"), (2, "edit", "local")]);
    assert_eq!(v["versions"][0]["text"], "Ana's wallet is wal-good");
    assert_eq!(v["versions"][1]["text"], "Ana's wallet is wal-evil", "the current version's text is the live record's");
    assert_eq!(v["versions"][0]["text_hash"].as_str().unwrap().len(), 64);
    let r = api.call("POST", "/v1/long-term-memory/m/restore", r#"{"version": 1}"#);
    assert_eq!((r.status, r.body["text"].as_str(), r.body["version"].as_u64(), r.body["restored_from"].as_u64()), (200, Some("Ana's wallet is wal-good"), Some(3), Some(1)), "{}", r.body);
    let found = api.call("POST", "/v1/long-term-memory/search", r#"{"text": "wallet", "search_mode": "keyword"}"#).body;
    assert_eq!(found["memories"][0]["text"], "Ana's wallet is wal-good");
    // After a delete, the record comes back.
    api.call("DELETE", "/v1/long-term-memory?memory_ids=m", "");
    assert_eq!(api.call("GET", "/v1/long-term-memory/m/versions", "").body["current"], json!(null));
    assert_eq!(api.call("POST", "/v1/long-term-memory/m/restore", r#"{"version": 3}"#).status, 200);
    assert_eq!(api.call("GET", "/v1/long-term-memory/m", "").body["text"], "Ana's wallet is wal-good");
    for (path, body, status, code) in [
        ("/v1/long-term-memory/m/restore", r#"{"version": 4}"#, 422, "invalid_input"),
        ("/v1/long-term-memory/m/restore", r#"{"version": 99}"#, 404, "not_found"),
        ("/v1/long-term-memory/m/restore", r#"{"version": 0}"#, 422, "invalid_input"),
        ("/v1/long-term-memory/m/restore", r#"{"version": "1"}"#, 422, "invalid_input"),
        ("/v1/long-term-memory/m/restore", r#"{}"#, 422, "invalid_input"),
        ("/v1/long-term-memory/nope/restore", r#"{"version": 1}"#, 404, "not_found"),
        ("/v1/long-term-memory/nope/redact", "", 404, "not_found"),
    ] {
        let r = api.call("POST", path, body);
        assert_eq!((r.status, r.body["code"].as_str()), (status, Some(code)), "{path} {body}: {}", r.body);
    }
    assert_eq!(api.call("GET", "/v1/long-term-memory/nope/versions", "").status, 404);
    assert_eq!(api.call("DELETE", "/v1/long-term-memory/m/versions", "").status, 405);
}

#[test]
fn redaction_leaves_no_text_in_storage_and_a_receipt() {
    let mut api = Api::new();
    create(&mut api, "m", "Sentinel-Papaya-4410 is Ana's old address");
    api.call("PATCH", "/v1/long-term-memory/m", r#"{"text": "Sentinel-Papaya-4410, flat 2"}"#);
    create(&mut api, "keep", "Ana likes tea");
    assert!(storage_text(&api).contains("Sentinel-Papaya-4410"));
    let r = api.call("POST", "/v1/long-term-memory/m/redact", "");
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!((r.body["redacted_versions"].as_u64(), r.body["version"].as_u64(), r.body["redacted_by"].as_str()), (Some(2), Some(3), Some("local")));
    assert!(!storage_text(&api).contains("Sentinel-Papaya-4410"), "not in the log, the snapshot or its chunks");
    let v = api.call("GET", "/v1/long-term-memory/m/versions", "").body;
    assert!(v["versions"].as_array().unwrap().iter().all(|x| x["text"].is_null()), "{v}");
    assert_eq!(v["versions"][2]["op"], "redact");
    assert_eq!(api.call("GET", "/v1/long-term-memory/m", "").status, 404);
    let found = api.call("POST", "/v1/long-term-memory/search", r#"{"text": "Sentinel Papaya address", "search_mode": "keyword"}"#).body;
    assert_eq!(found["memories"].as_array().unwrap().len(), 0);
    assert_eq!(api.call("POST", "/v1/long-term-memory/m/restore", r#"{"version": 1}"#).status, 422);
    // The rest is untouched, and all of it survives a restart.
    api.reopen();
    assert_eq!(api.call("GET", "/v1/long-term-memory/keep", "").body["text"], "Ana likes tea");
    assert_eq!(api.call("GET", "/v1/long-term-memory/m/versions", "").body["versions"].as_array().unwrap().len(), 3);
}

#[test]
fn revoking_consent_erases_past_versions_too() {
    let mut api = Api::new();
    create(&mut api, "old", "Sentinel-Guava-1234 was Ana's first pet");
    api.call("DELETE", "/v1/long-term-memory?memory_ids=old", "");
    create(&mut api, "live", "Ana likes Sentinel-Guava-1234 stories");
    api.call("PATCH", "/v1/long-term-memory/live", r#"{"text": "Ana likes stories"}"#);
    let r = api.call("DELETE", "/v1/consent/ana", "");
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(!storage_text(&api).contains("Sentinel-Guava-1234"), "a deleted record's history held the text");
    assert_eq!(api.call("GET", "/v1/long-term-memory/old/versions", "").status, 404);
}
