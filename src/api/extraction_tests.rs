//! Background extraction over the API: timing, exactly-once commits,
//! failing hooks, consent, and the strategies.

use serde_json::{json, Value};

use super::tests::Api;
use crate::core::limits;
use crate::store::now_or_never;

fn put(api: &mut Api, id: &str, body: Value) {
    let r = api.call("PUT", &format!("/v1/working-memory/{id}"), &body.to_string());
    assert_eq!(r.status, 200, "{}", r.body);
}

fn wake(api: &mut Api) -> Option<u64> {
    now_or_never(super::wake(&api.store, &api.services, api.now)).unwrap().unwrap()
}

fn next(api: &Api) -> Option<u64> {
    now_or_never(super::next_wake(&api.store, api.now)).unwrap().unwrap()
}

/// Every long-term record, as the API writes one.
fn memories(api: &mut Api) -> Vec<Value> {
    now_or_never(api.store.read(|e| e.longterm().records().map(super::longterm::json::record_json).collect())).unwrap().unwrap()
}

fn chat(strategy: Option<&str>, turns: &[(&str, &str)]) -> Value {
    let messages: Vec<Value> = turns.iter().enumerate().map(|(i, (role, content))| json!({"id": format!("m{i}"), "role": role, "content": content})).collect();
    let mut v = json!({"user_id": "ana", "messages": messages});
    if let Some(s) = strategy {
        v["long_term_memory_strategy"] = json!({"strategy": s, "config": {}});
    }
    v
}

const HOOK: &str = r#"[{"text": "User prefers metric units.", "kind": "preference", "topics": ["units"], "subject": "units"},
    {"text": "User visited Paris in March 2024.", "kind": "event", "entities": ["Paris"], "event_date": "2024-03-01T00:00:00Z", "extracted_from": ["m0"]}]"#;

#[test]
fn extraction_waits_for_quiet_writes_then_runs_once() {
    let mut api = Api::new();
    api.services.extractor = Some(Ok(HOOK.into()));
    put(&mut api, "s1", chat(Some("discrete"), &[("user", "I went to Paris in March 2024 and I prefer metric units."), ("assistant", "Noted!")]));
    assert_eq!(next(&api), Some(api.now + limits::EXTRACT_DEBOUNCE_MS), "due once the writes are quiet");
    assert!(memories(&mut api).is_empty(), "the request itself extracted nothing");
    wake(&mut api);
    assert_eq!(api.services.extract_calls.get(), 0, "not before the debounce");
    api.now += limits::EXTRACT_DEBOUNCE_MS;
    assert_eq!(wake(&mut api), None, "nothing left to wake for");
    let got = memories(&mut api);
    assert_eq!(got.len(), 2, "{got:?}");
    let event = got.iter().find(|m| m["memory_type"] == "episodic").unwrap();
    assert_eq!(event["text"], "User visited Paris in March 2024.");
    assert_eq!(event["event_date"], "2024-03-01T00:00:00.000Z");
    assert_eq!(event["extracted_from"], json!(["m0"]));
    let pref = got.iter().find(|m| m["memory_type"] == "semantic").unwrap();
    assert_eq!((pref["session_id"].as_str(), pref["user_id"].as_str(), pref["extraction_strategy"].as_str()), (Some("s1"), Some("ana"), Some("discrete")));
    assert_eq!(pref["extracted_from"], json!(["m0", "m1"]), "by default a memory names every turn of its pass");
    api.now += 60_000;
    wake(&mut api);
    assert_eq!(api.services.extract_calls.get(), 1, "the same turns are never extracted twice");
    // New turns: only they go to the hook, and a repeated memory is a duplicate.
    let r = api.call("POST", "/v1/working-memory/s1/messages", r#"{"messages": [{"id": "m2", "role": "user", "content": "Metric, as I said."}]}"#);
    assert_eq!(r.status, 200, "{}", r.body);
    api.now += limits::EXTRACT_DEBOUNCE_MS;
    wake(&mut api);
    assert_eq!(api.services.extract_calls.get(), 2);
    assert_eq!(memories(&mut api).len(), 2, "deduplicated by hash");
}

#[test]
fn a_session_without_a_strategy_is_never_extracted_and_a_bad_strategy_is_refused() {
    let mut api = Api::new();
    api.services.extractor = Some(Ok(HOOK.into()));
    put(&mut api, "s1", chat(None, &[("user", "I prefer metric units.")]));
    api.now += 60_000;
    wake(&mut api);
    assert_eq!((api.services.extract_calls.get(), memories(&mut api).len()), (0, 0));
    let bad = api.call("PUT", "/v1/working-memory/s2", &chat(Some("telepathy"), &[("user", "x")]).to_string());
    assert_eq!((bad.status, bad.body["code"].as_str()), (422, Some("invalid_input")), "{}", bad.body);
    let custom = api.call("PUT", "/v1/working-memory/s3", r#"{"messages": [], "long_term_memory_strategy": {"strategy": "custom", "config": {}}}"#);
    assert_eq!(custom.status, 422, "a custom strategy needs its prompt");
}

#[test]
fn a_crash_before_the_commit_resumes_with_no_gap_and_no_duplicate() {
    let mut api = Api::new();
    api.services.extractor = Some(Ok(HOOK.into()));
    put(&mut api, "s1", chat(Some("discrete"), &[("user", "I prefer metric units.")]));
    api.now += limits::EXTRACT_DEBOUNCE_MS;
    // The commit's log write fails: the process dies with nothing committed.
    api.backend.fail_writes_after(Some(0));
    let _ = now_or_never(super::wake(&api.store, &api.services, api.now)).unwrap();
    assert_eq!(api.services.extract_calls.get(), 1, "the hook ran; its commit did not land");
    api.backend.fail_writes_after(None);
    api.reopen();
    assert_eq!(memories(&mut api).len(), 0, "nothing half-written");
    wake(&mut api);
    assert_eq!(memories(&mut api).len(), 2, "the pass ran again from the same watermark");
    api.reopen();
    api.now += 60_000;
    wake(&mut api);
    assert_eq!(memories(&mut api).len(), 2, "and after a restart it is not run a third time");
    assert_eq!(api.services.extract_calls.get(), 2);
}

#[test]
fn a_failing_hook_is_retried_with_backoff_then_surfaced() {
    let mut api = Api::new();
    api.services.extractor = Some(Err(()));
    put(&mut api, "s1", chat(Some("discrete"), &[("user", "I prefer metric units.")]));
    api.now += limits::EXTRACT_DEBOUNCE_MS;
    let mut delays = Vec::new();
    for _ in 0..limits::EXTRACT_ATTEMPTS_MAX {
        let before = api.now;
        match wake(&mut api) {
            Some(at) => {
                delays.push(at - before);
                api.now = at;
            }
            None => break,
        }
    }
    assert_eq!(api.services.extract_calls.get() as u32, limits::EXTRACT_ATTEMPTS_MAX);
    assert_eq!(delays, vec![1_000, 2_000, 4_000, 8_000], "a doubling delay, then no more wake-ups");
    assert!(memories(&mut api).is_empty());
    let eps = api.call("GET", "/v1/episodes?agent_id=edgemem&kind=extraction_failed", "");
    let ep = &eps.body["episodes"][0];
    assert_eq!((ep["payload"]["session_id"].as_str(), ep["payload"]["code"].as_str()), (Some("s1"), Some("hook_failed")), "{}", eps.body);
    // The session's next write starts a new round, and a working hook catches up on every turn.
    api.services.extractor = Some(Ok(HOOK.into()));
    let r = api.call("POST", "/v1/working-memory/s1/messages", r#"{"messages": [{"id": "m9", "role": "user", "content": "still metric"}]}"#);
    assert_eq!(r.status, 200);
    api.now += limits::EXTRACT_DEBOUNCE_MS;
    wake(&mut api);
    let got = memories(&mut api);
    assert_eq!(got.len(), 2);
    assert!(got.iter().any(|m| m["extracted_from"] == json!(["m0", "m9"])), "no gap: the failed turns are in the pass");
}

#[test]
fn extraction_respects_consent_and_scrubs_what_it_stores() {
    let mut api = Api::new();
    api.services.extractor = Some(Ok(r#"[{"text": "User's email is ana@example.com and the key is sk-proj-Qw3rTy7uIoP1aSdF4gHjK9lZxCvB2nM5"}]"#.into()));
    api.call("PUT", "/v1/privacy/policy", r#"{"require_consent": true}"#);
    put(&mut api, "s1", chat(Some("discrete"), &[("user", "my email is ana@example.com")]));
    api.now += limits::EXTRACT_DEBOUNCE_MS;
    assert_eq!(wake(&mut api), None, "the turns without consent are passed over, not retried");
    assert!(memories(&mut api).is_empty());
    assert_eq!(api.call("PUT", "/v1/consent/ana", r#"{"long_term": true}"#).status, 200);
    api.call("POST", "/v1/working-memory/s1/messages", r#"{"messages": [{"id": "m5", "role": "user", "content": "again"}]}"#);
    api.now += limits::EXTRACT_DEBOUNCE_MS;
    wake(&mut api);
    let got = memories(&mut api);
    assert_eq!(got.len(), 1);
    let text = got[0]["text"].as_str().unwrap();
    assert!(!text.contains("ana@example.com") && !text.contains("sk-proj-"), "{text}");
    assert_eq!(got[0]["extracted_from"], json!(["m5"]), "consent is not retroactive");
}

#[test]
fn the_summary_strategy_keeps_one_rolling_summary_per_session() {
    let mut api = Api::new();
    put(&mut api, "s1", chat(Some("summary"), &[("user", "We need a hotel in Lisbon for the conference."), ("assistant", "I found three hotels near the venue.")]));
    api.now += limits::EXTRACT_DEBOUNCE_MS;
    wake(&mut api);
    let first = memories(&mut api);
    assert_eq!(first.len(), 1, "{first:?}");
    assert_eq!(first[0]["id"], "summary:s1");
    assert_eq!(first[0]["extraction_strategy"], "summary");
    assert!(first[0]["text"].as_str().unwrap().contains("Lisbon"), "{}", first[0]["text"]);
    api.call("POST", "/v1/working-memory/s1/messages", r#"{"messages": [{"id": "m7", "role": "user", "content": "Book the one with a pool for three nights."}]}"#);
    api.now += limits::EXTRACT_DEBOUNCE_MS;
    wake(&mut api);
    let second = memories(&mut api);
    assert_eq!(second.len(), 1, "replaced, not added");
    assert!(second[0]["text"].as_str().unwrap().contains("pool"), "{}", second[0]["text"]);
}

#[test]
fn a_contradicting_preference_supersedes_the_old_one_which_stays_in_history() {
    let mut api = Api::new();
    let say = |api: &mut Api, id: &str, text: &str| {
        let body = json!({"messages": [{"id": id, "role": "user", "content": text}]}).to_string();
        assert_eq!(api.call("POST", "/v1/working-memory/s1/messages", &body).status, 200);
        api.now += limits::EXTRACT_DEBOUNCE_MS;
        wake(api);
    };
    put(&mut api, "s1", chat(Some("preferences"), &[]));
    api.call("PUT", "/v1/working-memory/other", &chat(Some("preferences"), &[]).to_string().replace("\"ana\"", "\"rui\""));
    say(&mut api, "m1", "I prefer metric units.");
    let first = memories(&mut api);
    assert_eq!(first.len(), 1, "{first:?}");
    assert_eq!(first[0]["metadata"]["subject"], "units");
    let metric = first[0]["id"].as_str().unwrap().to_owned();
    // Another user's preference about the same subject is no contradiction.
    api.call("POST", "/v1/working-memory/other/messages", r#"{"messages": [{"id": "o1", "role": "user", "content": "I prefer imperial units."}]}"#);
    say(&mut api, "m2", "Actually, I prefer imperial units.");
    let search = |api: &mut Api| -> Vec<String> {
        let r = api.call("POST", "/v1/long-term-memory/search", r#"{"text": "units", "search_mode": "keyword", "user_id": {"eq": "ana"}}"#);
        r.body["memories"].as_array().unwrap().iter().map(|m| m["text"].as_str().unwrap().to_owned()).collect()
    };
    assert_eq!(search(&mut api), vec!["User prefers imperial units."], "the old preference is not returned");
    let old = api.call("GET", &format!("/v1/long-term-memory/{metric}"), "");
    assert_eq!(old.status, 200, "kept in history");
    assert!(old.body["metadata"]["superseded_by"].is_string(), "{}", old.body);
    let rui = api.call("POST", "/v1/long-term-memory/search", r#"{"text": "units", "search_mode": "keyword", "user_id": {"eq": "rui"}}"#);
    assert_eq!(rui.body["memories"].as_array().unwrap().len(), 1, "the other user's memory stands: {}", rui.body);
    // Saying the old preference again makes it current again: not a duplicate of the superseded record.
    say(&mut api, "m3", "I prefer metric units.");
    assert_eq!(search(&mut api), vec!["User prefers metric units."]);
    api.reopen();
    assert_eq!(search(&mut api), vec!["User prefers metric units."], "the marks survive a restart");
}

#[test]
fn message_memories_index_the_turns_themselves_when_asked() {
    let mut api = Api::new();
    let mut body = chat(Some("discrete"), &[("user", "I prefer metric units."), ("assistant", "Noted: metric."), ("tool", "{}")]);
    body["long_term_memory_strategy"]["config"] = json!({"index_messages": true});
    put(&mut api, "s1", body);
    api.now += limits::EXTRACT_DEBOUNCE_MS;
    wake(&mut api);
    let r = api.call("POST", "/v1/long-term-memory/search", r#"{"text": "", "memory_type": {"eq": "message"}}"#);
    let got: Vec<(String, String)> = r.body["memories"].as_array().unwrap().iter().map(|m| (m["text"].as_str().unwrap().to_owned(), m["extracted_from"][0].as_str().unwrap().to_owned())).collect();
    assert_eq!(got.len(), 2, "user and assistant turns, not tool output: {got:?}");
    assert!(got.contains(&("I prefer metric units.".to_owned(), "m0".to_owned())));
    assert!(got.contains(&("Noted: metric.".to_owned(), "m1".to_owned())));
    let semantic = api.call("POST", "/v1/long-term-memory/search", r#"{"text": "", "memory_type": {"eq": "semantic"}}"#);
    assert_eq!(semantic.body["memories"].as_array().unwrap().len(), 1, "the extracted preference beside them");
    // Without the flag, no message memories.
    put(&mut api, "s2", chat(Some("discrete"), &[("user", "hello there")]));
    api.now += limits::EXTRACT_DEBOUNCE_MS;
    wake(&mut api);
    let r = api.call("POST", "/v1/long-term-memory/search", r#"{"text": "", "session_id": {"eq": "s2"}}"#);
    assert_eq!(r.body["memories"].as_array().unwrap().len(), 0);
}

#[test]
fn a_paraphrase_of_a_known_memory_is_a_duplicate() {
    let mut api = Api::new();
    api.services.extractor = Some(Ok(r#"[{"text": "User is allergic to peanuts."}]"#.into()));
    put(&mut api, "s1", chat(Some("discrete"), &[("user", "peanuts make me ill")]));
    api.now += limits::EXTRACT_DEBOUNCE_MS;
    wake(&mut api);
    assert_eq!(memories(&mut api).len(), 1);
    // The same fact, worded a little differently, in the next pass and twice within one.
    api.services.extractor = Some(Ok(r#"[{"text": "The user is allergic to peanuts!"}, {"text": "the user is allergic to peanuts"}, {"text": "User lives in Porto."}]"#.into()));
    api.call("POST", "/v1/working-memory/s1/messages", r#"{"messages": [{"id": "m5", "role": "user", "content": "again, peanuts"}]}"#);
    api.now += limits::EXTRACT_DEBOUNCE_MS;
    let report = now_or_never(super::extraction::run_due(&api.store, &api.services, api.now, false)).unwrap().unwrap();
    let texts: Vec<String> = memories(&mut api).iter().map(|m| m["text"].as_str().unwrap().to_owned()).collect();
    assert_eq!(texts.len(), 2, "only the new fact is stored: {texts:?}");
    assert!(texts.contains(&"User lives in Porto.".to_owned()));
    assert_eq!((report.created, report.duplicates), (1, 2), "{report:?}");
}
