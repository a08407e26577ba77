//! Summary views and tasks over the API: the AMS shapes, runs and their
//! task records, partitions, a failing summarizer, bad input, continuous
//! views on the wake-up, consent, and a restart.

use serde_json::{json, Value};

use super::tests::Api;
use crate::core::limits;
use crate::core::privacy::PseudonymKey;
use crate::store::now_or_never;

const DAY_MS: u64 = 86_400_000;

fn ok(api: &mut Api, method: &str, target: &str, body: Value) -> Value {
    let r = api.call(method, target, &body.to_string());
    assert_eq!(r.status, 200, "{method} {target}: {}", r.body);
    r.body
}

/// Long-term memories: (id, user, memory type, text, days ago).
fn memories(api: &mut Api, list: &[(&str, &str, &str, &str, u64)]) {
    let now = api.now;
    let mems: Vec<Value> = list
        .iter()
        .map(|(id, user, kind, text, days)| {
            let at = crate::core::time::format_rfc3339(now - days * DAY_MS);
            json!({"id": id, "text": text, "user_id": user, "namespace": "ns1", "memory_type": kind, "created_at": at})
        })
        .collect();
    ok(api, "POST", "/v1/long-term-memory", json!({ "memories": mems }));
}

fn seed(api: &mut Api) {
    memories(
        api,
        &[
            ("a1", "alice", "semantic", "Alice prefers dark mode in every editor.", 1),
            ("a2", "alice", "semantic", "Alice writes Rust at work on weekdays.", 3),
            ("a3", "alice", "episodic", "Alice flew to Lisbon for a conference.", 2),
            ("a4", "alice", "semantic", "Alice once owned a red bicycle.", 400),
            ("b1", "bob", "semantic", "Bob is allergic to peanuts.", 1),
        ],
    );
}

fn create(api: &mut Api, body: Value) -> String {
    let v = ok(api, "POST", "/v1/summary-views", body);
    v["id"].as_str().unwrap().to_owned()
}

fn by_user() -> Value {
    json!({"name": "by user", "source": "long_term", "group_by": ["user_id"], "filters": {"memory_type": "semantic"}, "time_window_days": 30})
}

fn wake(api: &mut Api) -> Option<u64> {
    now_or_never(super::wake(&api.store, &api.services, api.now)).unwrap().unwrap()
}

#[test]
fn views_are_created_listed_read_and_deleted_in_ams_shape() {
    let mut api = Api::new();
    let id = create(&mut api, by_user());
    assert_eq!(id.len(), 26, "a ULID");
    let got = ok(&mut api, "GET", &format!("/v1/summary-views/{id}"), json!(null));
    assert_eq!(
        got,
        json!({"id": id, "name": "by user", "source": "long_term", "group_by": ["user_id"], "filters": {"memory_type": "semantic"},
               "time_window_days": 30, "continuous": false, "prompt": null, "model_name": null})
    );
    let other = create(&mut api, json!({"source": "long_term", "group_by": []}));
    let list = ok(&mut api, "GET", "/v1/summary-views", json!(null));
    let ids: Vec<&str> = list.as_array().unwrap().iter().map(|v| v["id"].as_str().unwrap()).collect();
    assert_eq!(ids, vec![id.as_str(), other.as_str()], "in creation order");
    assert_eq!(list[1]["filters"], json!({}));
    assert_eq!(ok(&mut api, "DELETE", &format!("/v1/summary-views/{id}"), json!(null)), json!({"status": "ok"}));
    assert_eq!(api.call("GET", &format!("/v1/summary-views/{id}"), "").status, 404);
    assert_eq!(ok(&mut api, "DELETE", &format!("/v1/summary-views/{id}"), json!(null)), json!({"status": "ok"}), "AMS answers ok for a missing view");
    assert_eq!(ok(&mut api, "GET", "/v1/summary-views", json!(null)).as_array().unwrap().len(), 1);
    assert_eq!(api.call("GET", "/v1/tasks/nope", "").status, 404);
}

#[test]
fn a_run_is_a_task_that_stores_each_partition_newest_first_within_the_window() {
    let mut api = Api::new();
    seed(&mut api);
    let id = create(&mut api, by_user());
    let task = ok(&mut api, "POST", &format!("/v1/summary-views/{id}/run"), json!({}));
    assert_eq!((task["type"].as_str(), task["status"].as_str(), task["view_id"].as_str()), (Some("summary_view_full_run"), Some("success"), Some(id.as_str())));
    assert!(task["started_at"].is_string() && task["completed_at"].is_string() && task["error_message"].is_null(), "{task}");
    let polled = ok(&mut api, "GET", &format!("/v1/tasks/{}", task["id"].as_str().unwrap()), json!(null));
    assert_eq!(polled, task, "the task record is kept");
    let parts = ok(&mut api, "GET", &format!("/v1/summary-views/{id}/partitions"), json!(null));
    let parts = parts.as_array().unwrap();
    assert_eq!(parts.len(), 2, "{parts:?}");
    let alice = parts.iter().find(|p| p["group"]["user_id"] == "alice").unwrap();
    assert_eq!(alice["memory_count"], 2, "semantic and within 30 days: a1, a2");
    assert_eq!(alice["view_id"], id.as_str());
    let summary = alice["summary"].as_str().unwrap();
    assert!(summary.contains("dark mode") && summary.contains("Rust"), "{summary}");
    assert!(!summary.contains("bicycle") && !summary.contains("Lisbon"), "outside the window or the filter: {summary}");
    assert!(!summary.contains("memory:") && !summary.starts_with(':'), "the extractive summary is not labelled: {summary}");
    // Filtering stored partitions by group field.
    let only = ok(&mut api, "GET", &format!("/v1/summary-views/{id}/partitions?user_id=bob"), json!(null));
    assert_eq!(only.as_array().unwrap().len(), 1);
    assert_eq!(only[0]["summary"], "Bob is allergic to peanuts.");
    assert_eq!(ok(&mut api, "GET", &format!("/v1/summary-views/{id}/partitions?session_id=s1"), json!(null)), json!([]), "a field the group lacks matches nothing");
    let tenant = ok(&mut api, "GET", &format!("/v1/summary-views/{id}/partitions?namespace=ns1&user_id=bob"), json!(null));
    assert_eq!(tenant.as_array().unwrap().len(), 1, "but `namespace` names the tenant too: it filters only a view grouped by it");
    // The client's `force` and AMS's `task_id` are accepted; a taken task id is refused.
    let forced = ok(&mut api, "POST", &format!("/v1/summary-views/{id}/run"), json!({"force": true, "task_id": "mine-1"}));
    assert_eq!(forced["id"], "mine-1");
    assert_eq!(api.call("POST", &format!("/v1/summary-views/{id}/run"), r#"{"task_id": "mine-1"}"#).status, 422);
}

#[test]
fn a_single_partition_runs_on_demand_and_is_merged_into_the_stored_ones() {
    let mut api = Api::new();
    seed(&mut api);
    let id = create(&mut api, json!({"source": "long_term", "group_by": ["user_id", "memory_type"]}));
    let p = ok(&mut api, "POST", &format!("/v1/summary-views/{id}/partitions/run"), json!({"group": {"user_id": "alice", "memory_type": "episodic"}}));
    assert_eq!(p["group"], json!({"user_id": "alice", "memory_type": "episodic"}));
    assert_eq!((p["memory_count"].as_u64(), p["summary"].as_str()), (Some(1), Some("Alice flew to Lisbon for a conference.")));
    assert!(p["computed_at"].as_str().unwrap().ends_with('Z'));
    let none = ok(&mut api, "POST", &format!("/v1/summary-views/{id}/partitions/run"), json!({"group": {"user_id": "carol", "memory_type": "semantic"}}));
    assert_eq!((none["memory_count"].as_u64(), none["summary"].as_str()), (Some(0), Some("")), "a group without memories is answered empty");
    let list = ok(&mut api, "GET", &format!("/v1/summary-views/{id}/partitions?user_id=alice"), json!(null));
    assert_eq!(list.as_array().unwrap().len(), 1);
    // The group must name exactly the view's fields.
    for bad in [json!({"group": {"user_id": "alice"}}), json!({"group": {"user_id": "alice", "memory_type": "episodic", "namespace": "x"}}), json!({"group": {"user_id": "alice", "memory_type": "dream"}})] {
        let r = api.call("POST", &format!("/v1/summary-views/{id}/partitions/run"), &bad.to_string());
        assert_eq!((r.status, r.body["code"].as_str()), (422, Some("invalid_input")), "{bad}: {}", r.body);
    }
    assert_eq!(api.call("POST", "/v1/summary-views/nope/partitions/run", r#"{"group": {}}"#).status, 404);
}

#[test]
fn a_failing_summarizer_fails_the_task_with_its_error_and_stores_nothing() {
    let mut api = Api::new();
    seed(&mut api);
    let id = create(&mut api, by_user());
    api.services.hook = Some(Err(()));
    let task = ok(&mut api, "POST", &format!("/v1/summary-views/{id}/run"), json!({}));
    assert_eq!(task["status"], "failed");
    let msg = task["error_message"].as_str().unwrap();
    assert!(msg.contains("summarizer") && msg.contains("model overloaded"), "{msg}");
    assert_eq!(ok(&mut api, "GET", &format!("/v1/tasks/{}", task["id"].as_str().unwrap()), json!(null))["status"], "failed");
    assert_eq!(ok(&mut api, "GET", &format!("/v1/summary-views/{id}/partitions"), json!(null)), json!([]));
    // A single partition answers the hook's error itself.
    let r = api.call("POST", &format!("/v1/summary-views/{id}/partitions/run"), r#"{"group": {"user_id": "alice"}}"#);
    assert_eq!((r.status, r.body["code"].as_str()), (502, Some("hook_failed")));
    // A hook that answers is used, told the view's prompt.
    api.services.hook = Some(Ok("Alice: dark mode, Rust.".into()));
    let task = ok(&mut api, "POST", &format!("/v1/summary-views/{id}/run"), json!({}));
    assert_eq!(task["status"], "success");
    let parts = ok(&mut api, "GET", &format!("/v1/summary-views/{id}/partitions?user_id=alice"), json!(null));
    assert_eq!(parts[0]["summary"], "Alice: dark mode, Rust.");
    // An empty answer is a failure, not a summary.
    api.services.hook = Some(Ok("  ".into()));
    let task = ok(&mut api, "POST", &format!("/v1/summary-views/{id}/run"), json!({}));
    assert_eq!(task["status"], "failed");
    assert_eq!(ok(&mut api, "GET", &format!("/v1/summary-views/{id}/partitions?user_id=alice"), json!(null))[0]["summary"], "Alice: dark mode, Rust.", "the last good results stay");
}

#[test]
fn bad_input_is_refused_with_typed_errors() {
    let mut api = Api::new();
    let cases: &[(Value, u16, &str)] = &[
        (json!({"source": "long_term", "group_by": ["user_id", "invalid"]}), 400, "unknown_kind"),
        (json!({"source": "long_term", "group_by": [], "filters": {"topics": "x"}}), 400, "unknown_kind"),
        (json!({"source": "working_memory", "group_by": []}), 400, "unknown_kind"),
        (json!({"group_by": []}), 422, "invalid_input"),
        (json!({"source": "long_term", "group_by": ["user_id", "user_id"]}), 422, "invalid_input"),
        (json!({"source": "long_term", "group_by": "user_id"}), 422, "invalid_input"),
        (json!({"source": "long_term", "filters": {"memory_type": "dream"}}), 422, "invalid_input"),
        (json!({"source": "long_term", "filters": {"user_id": 7}}), 422, "invalid_input"),
        (json!({"source": "long_term", "time_window_days": 0}), 422, "invalid_input"),
        (json!({"source": "long_term", "time_window_days": -3}), 422, "invalid_input"),
        (json!({"source": "long_term", "prompt": "x".repeat(limits::SUMMARY_VIEW_PROMPT_BYTES_MAX + 1)}), 413, "payload_too_large"),
    ];
    for (body, status, code) in cases {
        let r = api.call("POST", "/v1/summary-views", &body.to_string());
        assert_eq!((r.status, r.body["code"].as_str()), (*status, Some(*code)), "{body}: {}", r.body);
    }
    let r = api.call("POST", "/v1/summary-views", "{not json");
    assert_eq!(r.status, 400);
    assert!(api.call("POST", "/v1/summary-views", r#"{"source": "long_term", "group_by": ["bogus"]}"#).body["detail"].as_str().unwrap().contains("bogus"));
    assert_eq!(api.call("PUT", "/v1/summary-views", "{}").status, 405);
    assert_eq!(api.call("POST", "/v1/tasks/t1", "{}").status, 405);
    assert_eq!(api.call("POST", "/v1/summary-views/nope/run", "{}").status, 404);
    assert_eq!(api.call("GET", "/v1/summary-views/nope/partitions", "").status, 404);
    // The view count is bounded.
    for _ in 0..limits::SUMMARY_VIEWS_MAX {
        create(&mut api, json!({"source": "long_term"}));
    }
    let r = api.call("POST", "/v1/summary-views", r#"{"source": "long_term"}"#);
    assert_eq!((r.status, r.body["code"].as_str()), (422, Some("limit_exceeded")));
}

#[test]
fn too_many_partitions_fail_the_run_rather_than_summarize_some() {
    let mut api = Api::new();
    let list: Vec<(String, String)> = (0..=limits::SUMMARY_VIEW_PARTITIONS_PER_RUN_MAX).map(|i| (format!("m{i}"), format!("user{i}"))).collect();
    let rows: Vec<(&str, &str, &str, &str, u64)> = list.iter().map(|(id, u)| (id.as_str(), u.as_str(), "semantic", "Likes tea.", 1)).collect();
    memories(&mut api, &rows);
    let id = create(&mut api, json!({"source": "long_term", "group_by": ["user_id"]}));
    let task = ok(&mut api, "POST", &format!("/v1/summary-views/{id}/run"), json!({}));
    assert_eq!(task["status"], "failed");
    assert!(task["error_message"].as_str().unwrap().contains("partitions"), "{task}");
}

#[test]
fn continuous_views_rerun_on_the_wake_up_after_their_memories_change() {
    let mut api = Api::new();
    seed(&mut api);
    let id = create(&mut api, json!({"source": "long_term", "group_by": ["user_id"], "continuous": true}));
    let due = now_or_never(super::next_wake(&api.store, api.now)).unwrap().unwrap();
    assert_eq!(due, Some(api.now + limits::SUMMARY_VIEW_REFRESH_DELAY_MS), "never run yet, memories exist");
    api.now += limits::SUMMARY_VIEW_REFRESH_DELAY_MS;
    assert_eq!(wake(&mut api), None, "refreshed: nothing left to wake for");
    let parts = ok(&mut api, "GET", &format!("/v1/summary-views/{id}/partitions?user_id=bob"), json!(null));
    assert_eq!(parts[0]["memory_count"], 1);
    memories(&mut api, &[("b2", "bob", "semantic", "Bob plays the cello on Sundays.", 0)]);
    assert!(now_or_never(super::next_wake(&api.store, api.now)).unwrap().unwrap().is_some(), "a change makes it due");
    api.now += limits::SUMMARY_VIEW_REFRESH_DELAY_MS;
    wake(&mut api);
    let parts = ok(&mut api, "GET", &format!("/v1/summary-views/{id}/partitions?user_id=bob"), json!(null));
    assert_eq!(parts[0]["memory_count"], 2);
    assert!(parts[0]["summary"].as_str().unwrap().contains("cello"));
    // A view that is not continuous is left alone.
    let manual = create(&mut api, json!({"source": "long_term", "group_by": ["user_id"]}));
    memories(&mut api, &[("b3", "bob", "semantic", "Bob moved to Porto.", 0)]);
    api.now += limits::SUMMARY_VIEW_REFRESH_DELAY_MS;
    wake(&mut api);
    assert_eq!(ok(&mut api, "GET", &format!("/v1/summary-views/{manual}/partitions"), json!(null)), json!([]));
}

#[test]
fn views_results_and_tasks_survive_a_restart_and_a_snapshot() {
    let mut api = Api::new();
    seed(&mut api);
    let id = create(&mut api, by_user());
    let task = ok(&mut api, "POST", &format!("/v1/summary-views/{id}/run"), json!({}));
    let before = (
        ok(&mut api, "GET", &format!("/v1/summary-views/{id}"), json!(null)),
        ok(&mut api, "GET", &format!("/v1/summary-views/{id}/partitions"), json!(null)),
        ok(&mut api, "GET", &format!("/v1/tasks/{}", task["id"].as_str().unwrap()), json!(null)),
    );
    api.reopen();
    let replayed = (
        ok(&mut api, "GET", &format!("/v1/summary-views/{id}"), json!(null)),
        ok(&mut api, "GET", &format!("/v1/summary-views/{id}/partitions"), json!(null)),
        ok(&mut api, "GET", &format!("/v1/tasks/{}", task["id"].as_str().unwrap()), json!(null)),
    );
    assert_eq!(replayed, before, "from the log");
    now_or_never(api.store.snapshot()).unwrap().unwrap();
    api.reopen();
    let restored = (
        ok(&mut api, "GET", &format!("/v1/summary-views/{id}"), json!(null)),
        ok(&mut api, "GET", &format!("/v1/summary-views/{id}/partitions"), json!(null)),
        ok(&mut api, "GET", &format!("/v1/tasks/{}", task["id"].as_str().unwrap()), json!(null)),
    );
    assert_eq!(restored, before, "from the snapshot");
    let engine = now_or_never(api.store.read(|e| e.clone())).unwrap().unwrap();
    let bytes = engine.encode_snapshot().unwrap();
    assert_eq!(crate::core::engine::Engine::decode_snapshot(&bytes).unwrap(), engine);
}

#[test]
fn user_ids_are_sealed_and_a_revoked_consent_erases_the_users_summaries() {
    let mut api = Api::new();
    api.store.set_privacy_key(Some(PseudonymKey::derive(b"a test secret of enough bytes", "default").unwrap()));
    seed(&mut api);
    let id = create(&mut api, json!({"source": "long_term", "group_by": ["user_id"], "filters": {"user_id": "alice"}}));
    assert_eq!(ok(&mut api, "GET", &format!("/v1/summary-views/{id}"), json!(null))["filters"]["user_id"], "alice", "shown as written");
    let all = create(&mut api, json!({"source": "long_term", "group_by": ["user_id"]}));
    let types = create(&mut api, json!({"source": "long_term", "group_by": ["memory_type"]}));
    for v in [&id, &all, &types] {
        assert_eq!(ok(&mut api, "POST", &format!("/v1/summary-views/{v}/run"), json!({}))["status"], "success");
    }
    let parts = ok(&mut api, "GET", &format!("/v1/summary-views/{id}/partitions?user_id=alice"), json!(null));
    assert_eq!(parts.as_array().unwrap().len(), 1, "the filter matches sealed ids: {parts}");
    assert_eq!(parts[0]["group"]["user_id"], "alice");
    let stored = format!("{:?}", now_or_never(api.store.read(|e| e.summary_views().clone())).unwrap().unwrap());
    assert!(!stored.contains("\"alice\""), "no raw user id in the views' state");
    assert_eq!(ok(&mut api, "GET", &format!("/v1/summary-views/{types}/partitions"), json!(null)).as_array().unwrap().len(), 2);
    ok(&mut api, "DELETE", "/v1/consent/alice", json!(null));
    assert_eq!(ok(&mut api, "GET", &format!("/v1/summary-views/{id}/partitions"), json!(null)), json!([]), "alice's partition is erased");
    let left = ok(&mut api, "GET", &format!("/v1/summary-views/{all}/partitions"), json!(null));
    assert_eq!(left.as_array().unwrap().len(), 1, "{left}");
    assert_eq!(left[0]["group"]["user_id"], "bob");
    assert_eq!(ok(&mut api, "GET", &format!("/v1/summary-views/{types}/partitions"), json!(null)), json!([]), "so is every summary made from her memories");
}

#[test]
fn the_change_feed_reports_views_and_task_steps() {
    let mut api = Api::new();
    seed(&mut api);
    let id = create(&mut api, by_user());
    let task = ok(&mut api, "POST", &format!("/v1/summary-views/{id}/run"), json!({}));
    let page = ok(&mut api, "GET", "/v1/events?since=0&kinds=summary_view.*,task.*", json!(null));
    let got: Vec<(String, String)> = page["events"].as_array().unwrap().iter().map(|e| (e["kind"].as_str().unwrap().to_owned(), e["key"].as_str().unwrap().to_owned())).collect();
    let t = task["id"].as_str().unwrap().to_owned();
    let want = [("summary_view.created", &id), ("task.updated", &t), ("task.updated", &t), ("summary_view.refreshed", &id)];
    assert_eq!(got, want.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<Vec<_>>());
    let refreshed = page["events"].as_array().unwrap().last().unwrap().clone();
    assert_eq!((refreshed["count"].as_u64(), refreshed["ids"].clone()), (Some(2), json!([t])));
}
