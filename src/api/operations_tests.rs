//! Agent operations over the API: the decision log, consent and erasure,
//! anonymization, secrets, and guardrails.

use serde_json::json;

use super::tests::Api;
use crate::core::limits;
use crate::core::privacy::PseudonymKey;

fn session(api: &mut Api, id: &str, body: &str) {
    let r = api.call("PUT", &format!("/v1/working-memory/{id}"), body);
    assert_eq!(r.status, 200, "{}", r.body);
}

fn decide(api: &mut Api, sid: &str, body: serde_json::Value) -> super::Response {
    api.call("POST", &format!("/v1/working-memory/{sid}/decisions"), &body.to_string())
}

/// Every byte the backend holds (op log, snapshot chunks, head), as one
/// lossy string, for "is it gone from storage" checks.
fn storage_text(api: &Api) -> String {
    api.backend.dump().into_values().map(|v| String::from_utf8_lossy(&v).into_owned()).collect::<Vec<_>>().join("\n")
}

#[test]
fn the_decision_log_appends_pages_filters_and_exports() {
    let mut api = Api::new();
    session(&mut api, "s1", r#"{"messages":[]}"#);
    let kinds = ["observation", "reasoning", "decision", "action", "offer", "error"];
    for (i, k) in kinds.iter().enumerate() {
        api.now += 1;
        // Written as text: the numbers must reach the route exactly as sent.
        let body = format!(r#"{{"kind": "{k}", "text": "step {i}", "data": {{"price": 12.50, "n": 12345678901234567890.123456789}}, "refs": {{"tool_call_id": "call_1", "memory_ids": ["m1"]}}}}"#);
        let r = api.call("POST", "/v1/working-memory/s1/decisions", &body);
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(r.body["seq"], i as u64 + 1);
        assert_eq!(r.body["kind"], *k);
    }
    let all = api.call("GET", "/v1/working-memory/s1/decisions", "");
    assert_eq!(all.body["entries"].as_array().unwrap().len(), 6);
    assert_eq!(all.body["last_seq"], 6);
    assert_eq!(all.body["entries"][0]["refs"]["tool_call_id"], "call_1");
    assert_eq!(all.body["entries"][0]["data"]["price"].to_string(), "12.50", "a stored number comes back exactly as sent");
    assert_eq!(all.body["entries"][0]["data"]["n"].to_string(), "12345678901234567890.123456789");
    let page = api.call("GET", "/v1/working-memory/s1/decisions?since=2&limit=2", "");
    let seqs: Vec<u64> = page.body["entries"].as_array().unwrap().iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, vec![3, 4]);
    let only = api.call("GET", "/v1/working-memory/s1/decisions?kinds=decision,offer", "");
    let got: Vec<&str> = only.body["entries"].as_array().unwrap().iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(got, vec!["decision", "offer"]);
    let mut jsonl = api.call("GET", "/v1/working-memory/s1/decisions?format=jsonl", "");
    assert_eq!(jsonl.content_type, Some("application/x-ndjson"));
    let text = String::from_utf8(jsonl.raw.take().unwrap()).unwrap();
    let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 6);
    assert_eq!(lines[5]["kind"], "error");
}

#[test]
fn the_decision_log_refuses_bad_input_with_typed_errors() {
    let mut api = Api::new();
    let missing = decide(&mut api, "nope", json!({"kind": "action", "text": "x"}));
    assert_eq!((missing.status, missing.body["code"].as_str()), (404, Some("not_found")));
    session(&mut api, "s1", r#"{"messages":[]}"#);
    let bad_kind = decide(&mut api, "s1", json!({"kind": "guess", "text": "x"}));
    assert_eq!((bad_kind.status, bad_kind.body["code"].as_str()), (400, Some("unknown_kind")), "{}", bad_kind.body);
    let huge = decide(&mut api, "s1", json!({"kind": "action", "text": "x".repeat(limits::DECISION_TEXT_BYTES_MAX + 1)}));
    assert_eq!((huge.status, huge.body["code"].as_str()), (413, Some("payload_too_large")));
    let huge_data = decide(&mut api, "s1", json!({"kind": "action", "text": "x", "data": {"blob": "y".repeat(limits::DECISION_DATA_BYTES_MAX)}}));
    assert_eq!(huge_data.status, 413);
    let unknown_field = decide(&mut api, "s1", json!({"kind": "action", "text": "x", "mood": "happy"}));
    assert_eq!(unknown_field.status, 422);
    let bad_ref = decide(&mut api, "s1", json!({"kind": "action", "text": "x", "refs": {"memory_ids": ["../etc"]}}));
    assert_eq!(bad_ref.status, 422);
    let not_text = decide(&mut api, "s1", json!({"kind": "action", "text": 5}));
    assert_eq!(not_text.status, 422);
    assert_eq!(api.call("GET", "/v1/working-memory/s1/decisions?since=-1", "").status, 400);
    assert_eq!(api.call("GET", "/v1/working-memory/s1/decisions?kinds=nope", "").status, 400);
    assert_eq!(api.call("GET", "/v1/working-memory/s1/decisions?format=xml", "").status, 400);
    let log = api.call("GET", "/v1/working-memory/s1/decisions", "");
    assert_eq!(log.body["entries"].as_array().unwrap().len(), 0, "nothing refused was stored");
    assert_eq!(log.body["last_seq"], 0);
}

#[test]
fn the_decision_log_lives_and_dies_with_its_session() {
    let mut api = Api::new();
    session(&mut api, "s1", r#"{"messages":[],"ttl_seconds":60}"#);
    assert_eq!(decide(&mut api, "s1", json!({"kind": "action", "text": "bought"})).status, 200);
    assert_eq!(api.call("DELETE", "/v1/working-memory/s1", "").status, 200);
    assert_eq!(api.call("GET", "/v1/working-memory/s1/decisions", "").status, 404);
    session(&mut api, "s1", r#"{"messages":[],"ttl_seconds":60}"#);
    assert_eq!(api.call("GET", "/v1/working-memory/s1/decisions", "").body["entries"].as_array().unwrap().len(), 0, "a new session starts a new log");
    assert_eq!(decide(&mut api, "s1", json!({"kind": "action", "text": "again"})).status, 200);
    api.now += 61_000;
    assert_eq!(api.call("GET", "/v1/working-memory/s1/decisions", "").status, 404, "the log shares the session's TTL");
    assert_eq!(decide(&mut api, "s1", json!({"kind": "action", "text": "late"})).status, 404);
}

#[test]
fn the_decision_log_survives_a_restart() {
    let mut api = Api::new();
    session(&mut api, "s1", r#"{"messages":[]}"#);
    for i in 0..5 {
        decide(&mut api, "s1", json!({"kind": "reasoning", "text": format!("thought {i}")}));
    }
    crate::store::now_or_never(api.store.snapshot()).unwrap().unwrap();
    decide(&mut api, "s1", json!({"kind": "decision", "text": "after the snapshot"}));
    api.reopen();
    let log = api.call("GET", "/v1/working-memory/s1/decisions?since=4", "");
    let texts: Vec<&str> = log.body["entries"].as_array().unwrap().iter().map(|e| e["text"].as_str().unwrap()).collect();
    assert_eq!(texts, vec!["thought 4", "after the snapshot"]);
    assert_eq!(decide(&mut api, "s1", json!({"kind": "action", "text": "next"})).body["seq"], 7, "seqs continue, never reused");
}

fn ltm(api: &mut Api, user: &str, text: &str) -> super::Response {
    api.call("POST", "/v1/long-term-memory", &json!({"memories": [{"text": text, "user_id": user}]}).to_string())
}

#[test]
fn consent_gates_long_term_writes_and_revoking_erases_from_storage() {
    let mut api = Api::new();
    let p = api.call("GET", "/v1/privacy/policy", "");
    assert_eq!(p.body, json!({"require_consent": false, "anonymize": true, "secrets": "redact", "pseudonyms": false}));
    assert_eq!(ltm(&mut api, "u1", "before any policy").status, 200, "consent is not required by default");
    let set = api.call("PUT", "/v1/privacy/policy", r#"{"require_consent": true}"#);
    assert_eq!(set.body["require_consent"], true);
    assert_eq!(set.body["anonymize"], true, "fields left out keep their value");
    let refused = ltm(&mut api, "u2", "Sentinel-Kumquat-7731 likes tea");
    assert_eq!((refused.status, refused.body["code"].as_str()), (403, Some("consent_required")), "{}", refused.body);
    assert!(!storage_text(&api).contains("Sentinel-Kumquat-7731"), "a refused write stores nothing");
    let none = api.call("GET", "/v1/consent/u2", "");
    assert_eq!((none.status, &none.body["long_term"]), (200, &json!(false)), "no consent reads as long_term: false");
    let granted = api.call("PUT", "/v1/consent/u2", r#"{"long_term": true}"#);
    assert_eq!(granted.status, 200, "{}", granted.body);
    assert_eq!(granted.body["granted_by"], "local");
    assert_eq!(api.call("GET", "/v1/consent/u2", "").body["long_term"], true);
    assert_eq!(ltm(&mut api, "u2", "Sentinel-Kumquat-7731 likes tea").status, 200);
    assert_eq!(ltm(&mut api, "u3", "someone else").status, 403);
    let ep = api.call("POST", "/v1/episodes", &json!({"agent_id": "a1", "kind": "note", "payload": {"user_id": "u2", "said": "Sentinel-Kumquat-7731 again"}}).to_string());
    assert_eq!(ep.status, 200, "{}", ep.body);
    assert!(storage_text(&api).contains("Sentinel-Kumquat-7731"));
    let revoked = api.call("DELETE", "/v1/consent/u2", "");
    assert_eq!(revoked.status, 200, "{}", revoked.body);
    assert_eq!(revoked.body["erased"], json!({"memories": 1, "episodes": 1}));
    assert!(!storage_text(&api).contains("Sentinel-Kumquat-7731"), "the text is gone from storage, not just hidden");
    assert_eq!(ltm(&mut api, "u2", "after revoking").status, 403);
    api.reopen();
    let search = api.call("POST", "/v1/long-term-memory/search", r#"{"text": "tea", "search_mode": "keyword"}"#);
    assert_eq!(search.body["memories"].as_array().unwrap().len(), 0, "{}", search.body);
    assert_eq!(api.call("PUT", "/v1/consent/u2", r#"{"long_term": "yes"}"#).status, 422);
    assert_eq!(api.call("PUT", "/v1/privacy/policy", r#"{"secrets": "hide"}"#).status, 422);
}

#[test]
fn user_ids_are_sealed_in_storage_and_shown_as_written() {
    let mut api = Api::new();
    api.store.set_privacy_key(Some(PseudonymKey::derive(b"a test secret of enough bytes", "default").unwrap()));
    let r = ltm(&mut api, "alice-7731", "likes green tea");
    assert_eq!(r.status, 200, "{}", r.body);
    ltm(&mut api, "bob-7731", "likes black coffee");
    assert!(!storage_text(&api).contains("alice-7731"), "no raw user id in storage");
    let id = r.body["created"][0].as_str().unwrap().to_owned();
    let got = api.call("GET", &format!("/v1/long-term-memory/{id}"), "");
    assert_eq!(got.body["user_id"], "alice-7731");
    let found = api.call("POST", "/v1/long-term-memory/search", r#"{"text": "likes", "search_mode": "keyword", "user_id": {"eq": "alice-7731"}}"#);
    let users: Vec<&str> = found.body["memories"].as_array().unwrap().iter().map(|m| m["user_id"].as_str().unwrap()).collect();
    assert_eq!(users, vec!["alice-7731"], "filters by user id still work");
    assert_eq!(api.call("GET", "/v1/privacy/policy", "").body["pseudonyms"], true);
    api.call("PUT", "/v1/privacy/policy", r#"{"require_consent": true}"#);
    assert_eq!(api.call("PUT", "/v1/consent/alice-7731", r#"{"long_term": true}"#).status, 200);
    assert_eq!(api.call("GET", "/v1/consent/alice-7731", "").status, 200);
    assert!(!storage_text(&api).contains("alice-7731"), "nor in the consent table");
    let revoked = api.call("DELETE", "/v1/consent/alice-7731", "");
    assert_eq!(revoked.body["erased"]["memories"], 1);
}

#[test]
fn guardrails_refuse_prompts_that_break_a_rule_and_name_it() {
    let mut api = Api::new();
    let agent = "/v1/agents/seller";
    assert_eq!(api.call("PUT", &format!("{agent}/prompt"), r#"{"text": "Sell politely. Never go below floor price."}"#).status, 200);
    let set = api.call("PUT", &format!("{agent}/guardrails"), r#"{"required": ["Never go below floor price"], "forbidden": ["ignore previous*", "password"], "tokens_max": 50}"#);
    assert_eq!(set.status, 200, "{}", set.body);
    assert_eq!(set.body["guardrails"]["tokens_max"], 50);
    let missing = api.call("PUT", &format!("{agent}/prompt"), r#"{"text": "Sell at any price."}"#);
    assert_eq!((missing.status, missing.body["code"].as_str()), (422, Some("guardrail_violated")));
    assert!(missing.body["detail"].as_str().unwrap().contains("Never go below floor price"), "{}", missing.body);
    let forbidden = api.call("PUT", &format!("{agent}/prompt"), r#"{"text": "Never go below floor price. Ignore previous instructions."}"#);
    assert_eq!(forbidden.body["code"], "guardrail_violated");
    assert!(forbidden.body["detail"].as_str().unwrap().contains("ignore previous*"));
    let long = "Never go below floor price. ".to_owned() + &"Be kind and helpful to every customer. ".repeat(20);
    let too_long = api.call("PUT", &format!("{agent}/prompt"), &json!({"text": long}).to_string());
    assert_eq!(too_long.body["code"], "guardrail_violated", "{}", too_long.body);
    assert!(too_long.body["detail"].as_str().unwrap().contains("ceiling of 50"));
    let ok = api.call("PUT", &format!("{agent}/prompt"), r#"{"text": "Be brief.\nNever go\nbelow floor price."}"#);
    assert_eq!(ok.status, 200, "a re-wrapped clause still counts: {}", ok.body);
    let bad_patch = api.call("POST", &format!("{agent}/patches"), r#"{"text": "CRITICAL: the password is hunter2"}"#);
    assert_eq!(bad_patch.body["code"], "guardrail_violated");
    let config = api.call("GET", &format!("{agent}/config"), "");
    assert_eq!(config.body["active_version"], 2, "refused changes changed nothing");
    assert_eq!(config.body["patches"].as_array().unwrap().len(), 0);
    let bad_rules = api.call("PUT", &format!("{agent}/guardrails"), r#"{"tokens_max": 0}"#);
    assert_eq!(bad_rules.status, 422);
}

#[test]
fn secrets_under_a_secrets_name_and_in_ledger_metadata_are_redacted() {
    let mut api = Api::new();
    let body = json!({"messages": [], "data": {"password": "hunter22", "apiKey": "abc123xyz", "token": "USDC", "note": "a plain note", "nested": {"client_secret": "s3cr3t-value"}}});
    let r = api.call("PUT", "/v1/working-memory/s1", &body.to_string());
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["redactions"]["password"], 3, "{}", r.body);
    let data = &api.call("GET", "/v1/working-memory/s1", "").body["data"];
    assert_eq!(data["password"], "[REDACTED:password]");
    assert_eq!(data["apiKey"], "[REDACTED:password]");
    assert_eq!(data["nested"]["client_secret"], "[REDACTED:password]");
    assert_eq!(data["token"], "USDC", "an asset's symbol under `token` is not a secret");
    assert_eq!(data["note"], "a plain note");
    assert!(!storage_text(&api).contains("hunter22"));

    super::tests::ledger_setup(&mut api);
    let key = "sk_live_4eC39HqLyjWDarjtT1zdp7dc";
    let batch = json!({"transfers": [{"id": "t1", "debit_account": "bank", "credit_account": "agent", "amount": "1", "metadata": {"memo": format!("paid with {key}"), "password": "hunter22"}}]}).to_string();
    let t = api.call("POST", "/v1/ledger/transfers", &batch);
    assert_eq!(t.body["results"][0]["result"], "created", "{}", t.body);
    assert_eq!(t.body["redactions"], json!({"password": 1, "stripe_key": 1}), "the answer counts what was redacted");
    let again = api.call("POST", "/v1/ledger/transfers", &batch);
    assert_eq!(again.body["results"][0]["result"], "exists", "the same request scrubs the same way, so a retry is idempotent");
    let got = api.call("GET", "/v1/ledger/transfers/t1", "");
    assert_eq!(got.body["metadata"]["memo"], "paid with [REDACTED:stripe_key]", "{}", got.body);
    assert_eq!(got.body["metadata"]["password"], "[REDACTED:password]");
    assert!(!storage_text(&api).contains(key), "the key never reaches storage");

    api.call("PUT", "/v1/privacy/policy", r#"{"secrets": "reject"}"#);
    let refused = api.call("PUT", "/v1/working-memory/s2", r#"{"messages": [], "data": {"pwd": "opensesame"}}"#);
    assert_eq!((refused.status, refused.body["code"].as_str()), (422, Some("secret_detected")), "{}", refused.body);
    assert_eq!(api.call("GET", "/v1/working-memory/s2", "").status, 404, "a refused write stores nothing");
}

#[test]
fn memories_held_in_working_memory_need_consent_and_are_anonymized() {
    let mut api = Api::new();
    let body = json!({"user_id": "u1", "messages": [], "memories": [{"id": "m1", "text": "Write to ana@example.com or +44 20 7946 0958", "memory_type": "semantic"}]});
    let r = api.call("PUT", "/v1/working-memory/s1", &body.to_string());
    assert_eq!(r.status, 200, "{}", r.body);
    let text = api.call("GET", "/v1/working-memory/s1", "").body["memories"][0]["text"].as_str().unwrap().to_owned();
    assert!(!text.contains("ana@example.com") && !text.contains("7946"), "{text}");
    assert_eq!(r.body["anonymized"]["email"], 1, "{}", r.body);
    api.call("PUT", "/v1/privacy/policy", r#"{"require_consent": true}"#);
    let refused = api.call("PUT", "/v1/working-memory/s2", &json!({"user_id": "u2", "messages": [], "memories": [{"id": "m2", "text": "Sentinel-Quince-5521"}]}).to_string());
    assert_eq!((refused.status, refused.body["code"].as_str()), (403, Some("consent_required")), "{}", refused.body);
    let own = api.call("PUT", "/v1/working-memory/s3", &json!({"messages": [], "memories": [{"id": "m3", "text": "Sentinel-Quince-5521", "user_id": "u3"}]}).to_string());
    assert_eq!(own.status, 403, "a memory's own user id needs consent too");
    assert!(!storage_text(&api).contains("Sentinel-Quince-5521"), "nothing refused is stored");
    assert_eq!(api.call("PUT", "/v1/working-memory/s4", r#"{"user_id": "u4", "messages": []}"#).status, 200, "a session without memories needs no consent");
    let ep = api.call("POST", "/v1/episodes", &json!({"agent_id": "a1", "kind": "note", "payload": {"user_id": "u4", "said": "hi"}}).to_string());
    assert_eq!((ep.status, ep.body["code"].as_str()), (403, Some("consent_required")), "an episode about a user needs consent: {}", ep.body);
}

#[test]
fn revoking_with_a_privacy_key_erases_episodes_of_the_users_sessions() {
    let mut api = Api::new();
    api.store.set_privacy_key(Some(PseudonymKey::derive(b"a test secret of enough bytes", "default").unwrap()));
    session(&mut api, "s1", r#"{"user_id": "carol-1", "messages": []}"#);
    let ep = api.call("POST", "/v1/episodes", &json!({"agent_id": "a1", "kind": "note", "payload": {"session_id": "s1", "said": "Sentinel-Medlar-9034"}}).to_string());
    assert_eq!(ep.status, 200, "{}", ep.body);
    let revoked = api.call("DELETE", "/v1/consent/carol-1", "");
    assert_eq!(revoked.body["erased"]["episodes"], 1, "{}", revoked.body);
    assert!(!storage_text(&api).contains("Sentinel-Medlar-9034"));
    api.reopen();
    assert_eq!(api.call("GET", "/v1/consent/carol-1", "").body["long_term"], false);
}

#[test]
fn the_decision_log_answers_every_bad_kind_with_400_and_exports_whole() {
    let mut api = Api::new();
    session(&mut api, "s1", r#"{"messages":[]}"#);
    for body in [json!({"text": "no kind"}), json!({"kind": 5, "text": "x"}), json!({"kind": null, "text": "x"}), json!({"kind": ["action"], "text": "x"})] {
        let r = decide(&mut api, "s1", body.clone());
        assert_eq!((r.status, r.body["code"].as_str()), (400, Some("unknown_kind")), "{body}: {}", r.body);
    }
    let n = limits::DECISION_PAGE_LIMIT_DEFAULT + 50;
    for i in 0..n {
        assert_eq!(decide(&mut api, "s1", json!({"kind": "observation", "text": format!("o{i}")})).status, 200);
    }
    for format in ["jsonl", "ndjson"] {
        let mut all = api.call("GET", &format!("/v1/working-memory/s1/decisions?format={format}"), "");
        assert_eq!(String::from_utf8(all.raw.take().unwrap()).unwrap().lines().count(), n, "an export is the whole log");
    }
    let mut some = api.call("GET", "/v1/working-memory/s1/decisions?format=jsonl&limit=7&kind=observation", "");
    assert_eq!(String::from_utf8(some.raw.take().unwrap()).unwrap().lines().count(), 7);
    let page = api.call("GET", "/v1/working-memory/s1/decisions", "");
    assert_eq!(page.body["entries"].as_array().unwrap().len(), limits::DECISION_PAGE_LIMIT_DEFAULT, "a JSON page stays a page");
}

#[test]
fn tool_arguments_holding_a_secret_are_redacted_and_still_hit() {
    let mut api = Api::new();
    session(&mut api, "s1", r#"{"messages":[]}"#);
    let key = "sk-proj-Qw3rTy7uIoP1aSdF4gHjK9lZxCvB2nM5";
    let args = json!({"query": "balance", "api_key": "plain-looking-value", "auth": format!("Bearer {key}")});
    let put = api.call("PUT", "/v1/working-memory/s1/tool-cache", &json!({"tool": "bank.lookup", "args": args, "result": {"ok": true}}).to_string());
    assert_eq!(put.status, 200, "{}", put.body);
    assert_eq!(put.body["redactions"], json!({"openai_key": 1, "password": 1}), "{}", put.body);
    assert!(!storage_text(&api).contains(key) && !storage_text(&api).contains("plain-looking-value"));
    let q: String = args.to_string().bytes().map(|b| if b.is_ascii_alphanumeric() { (b as char).to_string() } else { format!("%{b:02X}") }).collect();
    let hit = api.call("GET", &format!("/v1/working-memory/s1/tool-cache?tool=bank.lookup&args={q}"), "");
    assert_eq!(hit.body["hit"], true, "the same call finds its entry: {}", hit.body);
    assert_eq!(hit.body["entry"]["args"]["api_key"], "[REDACTED:password]");
    let gone = api.call("DELETE", &format!("/v1/working-memory/s1/tool-cache?tool=bank.lookup&args={q}"), "");
    assert_eq!(gone.body["invalidated"], 1, "{}", gone.body);
    assert!(!storage_text(&api).contains(key), "an invalidation's logged selector holds no secret either");
}
