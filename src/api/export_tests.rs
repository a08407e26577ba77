//! Export and import (issue 20) through the routes: a namespace with every
//! kind of state goes out as NDJSON and comes back identical, with or
//! without vectors; a future format, a cut file, a bad line or a non-empty
//! target is refused and writes nothing; the same import twice is a no-op.

use serde_json::{json, Value};

use super::tests::Api;

/// A namespace with sessions, a decision log, long-term records with a
/// fact chain and versions, a ledger with transfers, episodes, prompts and
/// a profile.
pub(super) fn seeded() -> Api {
    let mut api = Api::new();
    let ok = |api: &mut Api, method: &str, path: &str, body: Value| {
        let r = api.call(method, path, &body.to_string());
        assert_eq!(r.status, 200, "{method} {path}: {}", r.body);
    };
    ok(&mut api, "PUT", "/v1/working-memory/s1", json!({ "messages": [{ "role": "user", "content": "hello, I am Ana" }], "user_id": "ana", "data": serde_json::from_str::<Value>(r#"{"price": 1234.567890123456789}"#).unwrap() }));
    ok(&mut api, "POST", "/v1/working-memory/s1/decisions", json!({ "kind": "offer", "text": "offered 42.00" }));
    ok(&mut api, "POST", "/v1/long-term-memory/", json!({ "memories": [
        { "id": "u1", "text": "Ana prefers metric units", "user_id": "ana", "fact_key": "user.units", "valid_from": "2025-01-01T00:00:00Z", "metadata": serde_json::from_str::<Value>(r#"{"n": 1e400}"#).unwrap() },
        { "id": "u2", "text": "Ana switched to imperial units", "user_id": "ana", "fact_key": "user.units", "valid_from": "2025-03-01T00:00:00Z" },
        { "id": "p", "text": "Ana hikes on Sundays", "user_id": "ana", "topics": ["hobby"] },
    ]}));
    ok(&mut api, "PATCH", "/v1/long-term-memory/p", json!({ "text": "Ana hikes on Saturdays" }));
    ok(&mut api, "POST", "/v1/long-term-memory/", json!({ "memories": [{ "id": "gone", "text": "a record deleted later" }] }));
    api.call("DELETE", "/v1/long-term-memory?memory_ids=gone", "");
    super::tests::ledger_setup(&mut api);
    ok(&mut api, "POST", "/v1/ledger/transfers", json!({ "transfers": [{ "id": "t1", "debit_account": "bank", "credit_account": "agent", "amount": "12.50" }] }));
    ok(&mut api, "POST", "/v1/episodes", json!({ "agent_id": "a1", "kind": "note", "payload": { "said": "hi" } }));
    ok(&mut api, "PUT", "/v1/agents/seller/prompt", json!({ "text": "Negotiate politely." }));
    ok(&mut api, "PUT", "/v1/agents/seller/profile", json!({ "fields": { "tone": "warm", "budget": "250.00" } }));
    api
}

fn export(api: &mut Api, query: &str) -> Vec<Value> {
    let mut r = api.call("GET", &format!("/v1/export{query}"), "");
    assert_eq!((r.status, r.content_type), (200, Some("application/x-ndjson")), "{}", r.body);
    String::from_utf8(r.raw.take().unwrap()).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn text(lines: &[Value]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// The lines with the header's `exported_at` blanked.
fn timeless(mut lines: Vec<Value>) -> Vec<Value> {
    lines[0]["exported_at"] = Value::Null;
    lines
}

#[test]
fn an_export_imports_into_an_empty_namespace_and_exports_the_same() {
    let mut source = seeded();
    let lines = export(&mut source, "?vectors=f32");
    let header = &lines[0];
    assert_eq!((header["format"].as_str(), header["schema_version"].as_u64(), header["vectors"].as_str()), (Some("edgemem-export"), Some(1), Some("f32")));
    assert!(header["embedder"].is_string() && header["exported_at"].is_string());
    let kinds: Vec<&str> = lines[1..].iter().map(|l| l["type"].as_str().unwrap()).collect();
    for k in ["session", "memory", "versions", "ledger", "history", "episodes", "agent_state", "decisions", "end"] {
        assert!(kinds.contains(&k), "{k} in {kinds:?}");
    }
    assert_eq!(lines.last().unwrap()["lines"].as_u64(), Some(lines.len() as u64 - 1));
    // Exact numbers survive the trip.
    let all = text(&lines);
    assert!(all.contains("1234.567890123456789"), "{all}");
    let stored = source.call("GET", "/v1/long-term-memory/u1", "").body["metadata"]["n"].to_string();
    assert!(stored.contains("e") && all.contains(&format!("\"n\":{stored}")), "{stored} in {all}");

    let mut target = Api::new();
    target.now += 86_400_000;
    let r = target.call("POST", "/v1/import", &text(&lines));
    assert_eq!((r.status, r.body["imported"].as_bool(), r.body["memories"].as_u64()), (200, Some(true), Some(3)), "{}", r.body);
    assert_eq!(timeless(export(&mut target, "?vectors=f32")), timeless(lines.clone()), "the same state, byte for byte");
    // What was imported works: the ledger reconciles, search and versions answer.
    assert_eq!(target.call("GET", "/v1/ledger/accounts/agent", "").body, source.call("GET", "/v1/ledger/accounts/agent", "").body);
    assert_eq!(target.call("POST", "/v1/ledger/reconcile", "{}").status, 200);
    let found = target.call("POST", "/v1/long-term-memory/search", r#"{"text": "units", "search_mode": "keyword"}"#).body;
    assert_eq!(found["memories"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap()).collect::<Vec<_>>(), ["u2"]);
    assert_eq!(target.call("GET", "/v1/long-term-memory/gone/versions", "").body["versions"].as_array().unwrap().len(), 2);
    // The same file again: a no-op. After another write: refused.
    let again = target.call("POST", "/v1/import", &text(&lines));
    assert_eq!((again.status, again.body["imported"].as_bool()), (200, Some(false)), "{}", again.body);
    target.call("DELETE", "/v1/long-term-memory?memory_ids=p", "");
    let busy = target.call("POST", "/v1/import", &text(&lines));
    assert_eq!((busy.status, busy.body["code"].as_str()), (409, Some("import_target_not_empty")));
    // And the import survives a restart.
    target.reopen();
    assert_eq!(target.call("GET", "/v1/long-term-memory/u1", "").body["superseded_by"], "u2");
}

#[test]
fn without_vectors_the_importer_embeds_the_texts_again() {
    let mut source = seeded();
    let lines = export(&mut source, "");
    assert!(lines.iter().all(|l| l.get("vector").is_none()));
    let mut target = Api::new();
    let r = target.call("POST", "/v1/import", &text(&lines));
    assert_eq!(r.status, 200, "{}", r.body);
    // The same embedder makes the same vectors: the full exports agree.
    assert_eq!(timeless(export(&mut target, "?vectors=f32")), timeless(export(&mut source, "?vectors=f32")));
}

#[test]
fn bad_imports_are_refused_and_write_nothing() {
    let mut source = seeded();
    let lines = export(&mut source, "?vectors=f32");
    let mut future = lines.clone();
    future[0]["schema_version"] = json!(2);
    let mut cut = lines.clone();
    cut.pop();
    let mut bad_record = lines.clone();
    let i = bad_record.iter().position(|l| l["type"] == "memory").unwrap();
    bad_record[i]["record"]["text"] = json!("");
    let mut bad_vector = lines.clone();
    bad_vector[i]["vector"] = json!("not base64!");
    let mut nan = lines.clone();
    nan[i]["vector"] = json!("AADAfwAAgD8AAIA_"); // NaN, 1, 1
    let mut unknown = lines.clone();
    unknown.insert(1, json!({ "type": "mystery" }));
    let n = unknown.len() - 1;
    unknown[n]["lines"] = json!(n);
    let cases: [(&str, String, u16, &str); 7] = [
        ("a future format", text(&future), 422, "schema_version_unsupported"),
        ("a cut file", text(&cut), 422, "invalid_input"),
        ("an invalid record", text(&bad_record), 422, "invalid_input"),
        ("a bad vector", text(&bad_vector), 422, "invalid_input"),
        ("a NaN vector", text(&nan), 422, "non_finite"),
        ("an unknown line", text(&unknown), 422, "invalid_input"),
        ("not JSON", "{\"format\": \"edgemem-export\"\n{oops\n".to_owned(), 422, "invalid_input"),
    ];
    let mut target = Api::new();
    for (what, body, status, code) in cases {
        let r = target.call("POST", "/v1/import", &body);
        assert_eq!((r.status, r.body["code"].as_str()), (status, Some(code)), "{what}: {}", r.body);
        assert!(target.backend.dump().is_empty(), "{what}: nothing written");
    }
    assert_eq!(target.call("POST", "/v1/import", &text(&lines)).status, 200, "the good file still imports");
    assert_eq!(target.call("GET", "/v1/export?vectors=f64", "").status, 400);
}

#[test]
fn an_import_is_a_write_path_secrets_are_redacted() {
    let mut source = seeded();
    let mut lines = export(&mut source, "?vectors=f32");
    let key = format!("sk-proj-{}", "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8Ba7");
    let i = lines.iter().position(|l| l["type"] == "memory").unwrap();
    lines[i]["record"]["text"] = json!(format!("the deploy key is {key}"));
    let id = lines[i]["record"]["id"].as_str().unwrap().to_owned();
    let mut target = Api::new();
    let r = target.call("POST", "/v1/import", &text(&lines));
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["redactions"]["openai_key"], 1, "{}", r.body);
    let got = target.call("GET", &format!("/v1/long-term-memory/{id}"), "").body;
    assert!(got["text"].as_str().unwrap().contains("[REDACTED:openai_key]"), "{got}");
    let stored: String = target.backend.dump().into_values().map(|v| String::from_utf8_lossy(&v).into_owned()).collect();
    assert!(!stored.contains(&key));
}
