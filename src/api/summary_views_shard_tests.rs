//! Summary-view runs of a sharded tenant: the home gathers every shard's
//! part and merges them, and the result is what one store holding every
//! record stores, partition for partition.

use serde_json::{json, Value};

use super::tests::Api;
use crate::core::limits;
use crate::store::now_or_never;

const DAY_MS: u64 = 86_400_000;

fn ok(api: &mut Api, method: &str, target: &str, body: Value) -> Value {
    let r = api.call(method, target, &body.to_string());
    assert_eq!(r.status, 200, "{method} {target}: {}", r.body);
    r.body
}

/// `n` memories over a few users, types and ages (some outside a 30-day
/// window), some with equal creation times so ties are broken by id.
fn corpus(now: u64, n: usize) -> Vec<Value> {
    let kinds = ["semantic", "episodic"];
    (0..n)
        .map(|i| {
            let days = [0, 1, 1, 3, 12, 45][i % 6];
            let at = crate::core::time::format_rfc3339(now - days * DAY_MS - (i as u64 % 4) * 1000);
            json!({"id": format!("m{i:03}"), "text": format!("Memory {i}: the user {} likes item {}.", i % 5, i * 7 % 11), "user_id": format!("user{}", i % 5), "memory_type": kinds[i % 2], "created_at": at})
        })
        .collect()
}

fn create(api: &mut Api, mems: &[Value]) {
    for chunk in mems.chunks(10) {
        ok(api, "POST", "/v1/long-term-memory", json!({ "memories": chunk, "deduplicate": false }));
    }
}

/// One store with every record, and a home with two more shards holding
/// them spread (one record held by two shards, as during a split).
fn stores(n: usize) -> (Api, Api) {
    let mut one = Api::new();
    let mems = corpus(one.now, n);
    create(&mut one, &mems);
    let mut home = Api::new();
    let mut shards = [Api::new(), Api::new()];
    let mut parts: [Vec<Value>; 3] = Default::default();
    for (i, m) in mems.iter().enumerate() {
        parts[i % 3].push(m.clone());
    }
    parts[1].push(mems[0].clone());
    create(&mut home, &parts[0]);
    for (shard, part) in shards.iter_mut().zip(&parts[1..]) {
        create(shard, part);
    }
    home.services.shards = shards.into_iter().map(|a| a.store).collect();
    (one, home)
}

/// A view's stored partitions, without the view's id.
fn partitions(api: &mut Api, view: &str) -> Vec<Value> {
    let v = ok(api, "GET", &format!("/v1/summary-views/{view}/partitions"), json!(null));
    v.as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let mut p = p.clone();
            p.as_object_mut().unwrap().remove("view_id");
            p
        })
        .collect()
}

fn run(api: &mut Api, view: &Value) -> (String, Value) {
    let id = ok(api, "POST", "/v1/summary-views", view.clone())["id"].as_str().unwrap().to_owned();
    let task = ok(api, "POST", &format!("/v1/summary-views/{id}/run"), json!({}));
    (id, task)
}

#[test]
fn a_sharded_run_stores_what_one_store_holding_every_record_stores() {
    let (mut one, mut home) = stores(120);
    let views = [
        json!({"source": "long_term", "group_by": ["user_id"]}),
        json!({"source": "long_term", "group_by": ["user_id", "memory_type"], "time_window_days": 30}),
        json!({"source": "long_term", "group_by": ["memory_type"], "filters": {"user_id": "user3"}}),
        json!({"source": "long_term", "group_by": []}),
    ];
    for view in &views {
        let (a, ta) = run(&mut one, view);
        let (b, tb) = run(&mut home, view);
        assert_eq!((ta["status"].as_str(), tb["status"].as_str()), (Some("success"), Some("success")), "{view}: {ta} {tb}");
        let (pa, pb) = (partitions(&mut one, &a), partitions(&mut home, &b));
        assert!(!pa.is_empty(), "{view}");
        assert_eq!(pa, pb, "{view}");
    }
    // The record held twice is counted once: 120 records, 24 per user.
    let (a, _) = run(&mut home, &views[0]);
    let counts: Vec<u64> = partitions(&mut home, &a).iter().map(|p| p["memory_count"].as_u64().unwrap()).collect();
    assert_eq!(counts, vec![24; 5]);
    // One partition on demand, including a group no shard has.
    for group in [json!({"user_id": "user2", "memory_type": "semantic"}), json!({"user_id": "nobody", "memory_type": "episodic"})] {
        let view = json!({"source": "long_term", "group_by": ["user_id", "memory_type"]});
        let a = ok(&mut one, "POST", "/v1/summary-views", view.clone())["id"].as_str().unwrap().to_owned();
        let b = ok(&mut home, "POST", "/v1/summary-views", view)["id"].as_str().unwrap().to_owned();
        let mut pa = ok(&mut one, "POST", &format!("/v1/summary-views/{a}/partitions/run"), json!({ "group": group }));
        let mut pb = ok(&mut home, "POST", &format!("/v1/summary-views/{b}/partitions/run"), json!({ "group": group }));
        pa.as_object_mut().unwrap().remove("view_id");
        pb.as_object_mut().unwrap().remove("view_id");
        assert_eq!(pa, pb, "{group}");
    }
}

#[test]
fn a_partition_holds_the_newest_memories_across_every_shard() {
    // More memories in one group than a partition keeps: the newest win
    // wherever they are held.
    let n = limits::SUMMARY_VIEW_MEMORIES_PER_PARTITION_MAX * 5 + 40;
    let (mut one, mut home) = stores(n);
    let view = json!({"source": "long_term", "group_by": ["user_id"]});
    let (a, _) = run(&mut one, &view);
    let (b, _) = run(&mut home, &view);
    let pb = partitions(&mut home, &b);
    assert_eq!(pb[0]["memory_count"].as_u64(), Some(limits::SUMMARY_VIEW_MEMORIES_PER_PARTITION_MAX as u64));
    assert_eq!(partitions(&mut one, &a), pb);
}

#[test]
fn too_many_groups_across_the_shards_fail_the_run_as_in_one_store() {
    // Each shard alone has fewer groups than a run allows; together more.
    let mut home = Api::new();
    let mut shard = Api::new();
    let now = home.now;
    let half = limits::SUMMARY_VIEW_PARTITIONS_PER_RUN_MAX / 2 + 1;
    let mem = |i: usize| json!({"id": format!("m{i}"), "text": "Likes tea.", "user_id": format!("user{i}"), "created_at": crate::core::time::format_rfc3339(now)});
    create(&mut home, &(0..half).map(mem).collect::<Vec<_>>());
    create(&mut shard, &(half..2 * half).map(mem).collect::<Vec<_>>());
    home.services.shards = vec![shard.store];
    let (id, task) = run(&mut home, &json!({"source": "long_term", "group_by": ["user_id"]}));
    assert_eq!(task["status"], "failed", "{task}");
    assert!(task["error_message"].as_str().unwrap().contains("partitions"), "{task}");
    assert_eq!(partitions(&mut home, &id), Vec::<Value>::new(), "nothing stored");
}

#[test]
fn a_shards_part_is_bounded_in_bytes() {
    let mut shard = Api::new();
    let now = shard.now;
    let text = "x".repeat(limits::MEMORY_TEXT_BYTES_MAX.min(64 * 1024) - 16);
    let count = limits::SHARD_SUMMARY_PART_BYTES_MAX / text.len() + 1;
    assert!(count <= limits::SUMMARY_VIEW_MEMORIES_PER_PARTITION_MAX, "one partition can exceed the bound");
    let mems: Vec<Value> = (0..count).map(|i| json!({"id": format!("m{i}"), "text": format!("{i} {text}"), "created_at": crate::core::time::format_rfc3339(now)})).collect();
    create(&mut shard, &mems);
    let view = crate::core::summary_views::SummaryView { id: "v1".into(), name: None, group_by: vec![], filters: Default::default(), time_window_days: None, continuous: false, prompt: None, model_name: None, created_at: now };
    let err = now_or_never(super::summary_views::gather(&shard.store, &view, None, now)).unwrap().unwrap_err();
    assert_eq!(err.code(), "payload_too_large", "{err}");
}

#[test]
fn a_shards_change_makes_homes_continuous_views_due_only_when_it_has_one() {
    let mut home = Api::new();
    let now = home.now;
    let due = |api: &Api| now_or_never(super::summary_views::next_due(&api.store, api.now)).unwrap().unwrap();
    assert!(!now_or_never(super::summary_views::source_changed(&home.store, now)).unwrap().unwrap(), "no continuous view: nothing logged");
    let id = ok(&mut home, "POST", "/v1/summary-views", json!({"source": "long_term", "group_by": ["user_id"], "continuous": true}))["id"].as_str().unwrap().to_owned();
    assert_eq!(due(&home), None, "no change since it was created");
    assert!(now_or_never(super::summary_views::source_changed(&home.store, now)).unwrap().unwrap());
    assert_eq!(due(&home), Some(now + limits::SUMMARY_VIEW_REFRESH_DELAY_MS), "due after a shard's change");
    // The change survives a restart: it was logged.
    home.reopen();
    assert!(due(&home).is_some());
    ok(&mut home, "DELETE", &format!("/v1/summary-views/{id}"), json!(null));
    assert_eq!(due(&home), None);
}
