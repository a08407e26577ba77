//! Long-term routes natively: AMS create/get/edit/delete, the three search
//! modes with filters, forget with dry run, memory_prompt's long-term part,
//! and tenants that never see each other's records.

use serde_json::{json, Value};

use crate::api::tests::Api;

fn seed(api: &mut Api, ns: Option<&str>) {
    let day = 86_400_000u64;
    let at = |days: u64| crate::core::time::format_rfc3339(1_795_000_000_000 - days * day);
    let mems = json!({ "memories": [
        { "id": "kitchen", "text": "The user painted the kitchen teal; teal is their favourite colour.", "topics": ["preferences", "home"], "user_id": "ana", "memory_type": "semantic", "created_at": at(2), "namespace": ns },
        { "id": "peanuts", "text": "The user is allergic to peanuts and avoids satay dishes.", "topics": ["health"], "user_id": "ana", "memory_type": "semantic", "created_at": at(10), "namespace": ns },
        { "id": "lisbon", "text": "The user flew to Lisbon for a conference about distributed databases.", "topics": ["travel"], "user_id": "ana", "memory_type": "episodic", "created_at": at(40), "event_date": at(41), "namespace": ns },
        { "id": "darkmode", "text": "The user prefers dark mode in every code editor.", "topics": ["preferences"], "user_id": "rui", "memory_type": "semantic", "created_at": at(1), "namespace": ns },
        { "id": "bicycle", "text": "The user once owned a red bicycle.", "user_id": "ana", "memory_type": "semantic", "created_at": at(400), "last_accessed": at(400), "namespace": ns },
    ]});
    let r = api.call("POST", "/v1/long-term-memory/", &mems.to_string());
    assert_eq!(r.status, 200, "{}", r.body);
}

fn ids(r: &Value) -> Vec<String> {
    r["memories"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn create_get_edit_delete() {
    let mut api = Api::new();
    seed(&mut api, None);
    let g = api.call("GET", "/v1/long-term-memory/lisbon", "");
    assert_eq!((g.body["memory_type"].as_str(), g.body["topics"][0].as_str()), (Some("episodic"), Some("travel")));
    assert!(g.body["event_date"].as_str().unwrap().ends_with('Z'));
    assert_eq!(api.call("GET", "/v1/long-term-memory/nope", "").status, 404);
    let e = api.call("PATCH", "/v1/long-term-memory/kitchen", r#"{"text": "The user repainted the kitchen sage green.", "topics": ["colour"]}"#);
    assert_eq!(e.body["text"], "The user repainted the kitchen sage green.", "{}", e.body);
    let s = api.call("POST", "/v1/long-term-memory/search", r#"{"text": "sage green", "search_mode": "keyword"}"#);
    assert_eq!(ids(&s.body), ["kitchen"]);
    for (body, code) in [(r#"{}"#, "invalid_input"), (r#"{"id": "x"}"#, "invalid_input"), (r#"{"pinned": "yes"}"#, "invalid_input")] {
        assert_eq!(api.call("PATCH", "/v1/long-term-memory/kitchen", body).body["code"], code, "{body}");
    }
    let d = api.call("DELETE", "/v1/long-term-memory?memory_ids=peanuts&memory_ids=nope", "");
    assert_eq!(d.body["status"], "ok, deleted 1 memories");
    assert_eq!(api.call("GET", "/v1/long-term-memory/peanuts", "").status, 404);
    let s = api.call("POST", "/v1/long-term-memory/search", r#"{"text": "peanuts satay allergy", "limit": 10}"#);
    assert!(!ids(&s.body).contains(&"peanuts".to_owned()));
    for (body, code) in [
        (r#"{"memories": [{"text": ""}]}"#, "invalid_input"),
        (r#"{"memories": [{"text": "x", "memory_type": "dream"}]}"#, "invalid_input"),
        (r#"{"memories": [{"text": "x", "created_at": "yesterday"}]}"#, "invalid_input"),
        (r#"{"memories": 5}"#, "invalid_input"),
    ] {
        assert_eq!(api.call("POST", "/v1/long-term-memory/", body).body["code"], code, "{body}");
    }
}

#[test]
fn search_modes_filters_and_scores() {
    let mut api = Api::new();
    seed(&mut api, None);
    let s = api.call("POST", "/v1/long-term-memory/search", r#"{"text": "what colour did they paint the kitchen", "search_mode": "semantic"}"#);
    assert_eq!(ids(&s.body)[0], "kitchen", "{}", s.body);
    let m = &s.body["memories"][0];
    assert!(m["dist"].as_f64().unwrap() < 1.0 && m["score_type"] == "semantic" && m["segment"] == 0);
    // No mode named: auto, which says what it ran as.
    let a = api.call("POST", "/v1/long-term-memory/search", r#"{"text": "what colour did they paint the kitchen"}"#);
    assert_eq!(ids(&a.body)[0], "kitchen", "{}", a.body);
    assert!(matches!(a.body["search_mode"].as_str(), Some("hybrid" | "keyword")), "{}", a.body);
    assert_eq!(a.body["memories"][0]["score_type"], a.body["search_mode"]);
    let f = api.call("POST", "/v1/long-term-memory/search", r#"{"text": "preferences", "topics": {"any": ["preferences"]}, "user_id": {"eq": "rui"}, "search_mode": "semantic"}"#);
    assert_eq!(ids(&f.body), ["darkmode"]);
    let t = api.call("POST", "/v1/long-term-memory/search", r#"{"text": "trip", "memory_type": {"eq": "episodic"}, "search_mode": "semantic"}"#);
    assert_eq!(ids(&t.body), ["lisbon"]);
    let k = api.call("POST", "/v1/long-term-memory/search", r#"{"text": "peanuts satay", "search_mode": "keyword"}"#);
    assert_eq!((ids(&k.body), k.body["memories"][0]["score_type"].as_str()), (vec!["peanuts".to_owned()], Some("keyword")));
    let h = api.call("POST", "/v1/long-term-memory/search", r#"{"text": "Lisbon conference", "search_mode": "hybrid", "hybrid_alpha": 0.5}"#);
    assert_eq!(ids(&h.body)[0], "lisbon");
    let r = api.call("POST", "/v1/long-term-memory/search", r#"{"text": "Lisbon conference", "search_mode": "hybrid", "fusion": "rrf"}"#);
    assert_eq!(ids(&r.body)[0], "lisbon");
    for (body, code) in [
        (r#"{"text": "x", "search_mode": "fuzzy"}"#, "invalid_input"),
        (r#"{"text": "x", "limit": 0}"#, "invalid_input"),
        (r#"{"text": "x", "limit": 101}"#, "invalid_input"),
        (r#"{"text": "x", "topics": {"like": "a"}}"#, "invalid_input"),
        (r#"{"text": "x", "hybrid_alpha": 2, "search_mode": "hybrid"}"#, "invalid_input"),
    ] {
        assert_eq!(api.call("POST", "/v1/long-term-memory/search", body).body["code"], code, "{body}");
    }
    // No text: a filter-only listing, newest first (AMS answers one too).
    let all = api.call("POST", "/v1/long-term-memory/search", r#"{"text": "", "limit": 100}"#);
    assert_eq!(all.status, 200, "{}", all.body);
    let listed = all.body["memories"].as_array().unwrap();
    assert_eq!(all.body["total"].as_u64(), Some(listed.len() as u64));
    assert!(!listed.is_empty());
    let created: Vec<&str> = listed.iter().map(|m| m["created_at"].as_str().unwrap()).collect();
    assert!(created.windows(2).all(|w| w[0] >= w[1]), "newest first: {created:?}");
    let one = api.call("POST", "/v1/long-term-memory/search", r#"{"text": "", "user_id": {"eq": "rui"}}"#);
    let ids: Vec<&str> = one.body["memories"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!(ids, vec!["darkmode"], "filters apply: {}", one.body);
}

#[test]
fn forget_defaults_to_a_dry_run_and_spares_pinned_ids() {
    let mut api = Api::new();
    seed(&mut api, None);
    let body = r#"{"policy": {"max_age_days": 365}, "pinned_ids": []}"#;
    let dry = api.call("POST", "/v1/long-term-memory/forget?user_id=ana", body);
    assert_eq!((dry.body["dry_run"].as_bool(), dry.body["deleted_ids"].clone()), (Some(true), json!(["bicycle"])));
    assert_eq!(dry.body["scanned"], 4);
    assert_eq!(api.call("GET", "/v1/long-term-memory/bicycle", "").status, 200);
    let pinned = api.call("POST", "/v1/long-term-memory/forget?dry_run=false", r#"{"policy": {"max_age_days": 365}, "pinned_ids": ["bicycle"]}"#);
    assert_eq!(pinned.body["deleted"], 0);
    let real = api.call("POST", "/v1/long-term-memory/forget?dry_run=false", body);
    assert_eq!(real.body["deleted_ids"], json!(["bicycle"]));
    assert_eq!(api.call("GET", "/v1/long-term-memory/bicycle", "").status, 404);
    let budget = api.call("POST", "/v1/long-term-memory/forget", r#"{"policy": {"budget": 2}}"#);
    assert_eq!(budget.body["deleted"], 2, "over budget: the least recently used go");
}

#[test]
fn memory_prompt_recalls_long_term_memories() {
    let mut api = Api::new();
    seed(&mut api, None);
    let r = api.call("POST", "/v1/memory/prompt", r#"{"query": "Where did the user fly for the conference?", "long_term_search": {"user_id": {"eq": "ana"}, "limit": 3}}"#);
    let m = r.body["messages"].as_array().unwrap();
    let memories = m[m.len() - 2]["content"]["text"].as_str().unwrap();
    assert!(memories.contains("Lisbon"), "{memories}");
    assert!(!memories.contains("dark mode"), "the user filter applies");
}

#[test]
fn tenants_never_see_each_other() {
    // Two tenants, as two Durable Objects: same ids, different contents.
    let mut a = Api::new();
    let mut b = Api::new();
    seed(&mut a, None);
    b.call("POST", "/v1/long-term-memory/", r#"{"memories": [{"id": "kitchen", "text": "SECRET of tenant B: the vault code is 4711.", "user_id": "ana"}]}"#);
    let probes = ["vault code", "SECRET", "4711", "kitchen", "tenant B", "the user", "teal", "code editor", "*", "ana"];
    let mut n = 0;
    for i in 0..1_000 {
        let text = probes[i % probes.len()];
        let mode = ["semantic", "keyword", "hybrid"][i % 3];
        let filter = match i % 4 {
            0 => json!({}),
            1 => json!({"user_id": {"eq": "ana"}}),
            2 => json!({"namespace": {"ne": "nobody"}}),
            _ => json!({"topics": {"any": ["preferences", "health"]}}),
        };
        let mut body = json!({ "text": text, "search_mode": mode, "limit": 100 });
        body.as_object_mut().unwrap().extend(filter.as_object().unwrap().clone());
        let r = a.call("POST", "/v1/long-term-memory/search", &body.to_string());
        assert_eq!(r.status, 200, "{}", r.body);
        for m in r.body["memories"].as_array().unwrap() {
            assert!(!m["text"].as_str().unwrap().contains("SECRET"), "query {i} leaked tenant B");
        }
        n += 1;
    }
    assert_eq!(n, 1_000);
    assert!(!a.call("GET", "/v1/long-term-memory/kitchen", "").body["text"].as_str().unwrap().contains("SECRET"));
}

#[test]
fn episodes_record_recent_summarize_cap_and_ttl() {
    let mut api = Api::new();
    assert_eq!(api.call("PUT", "/v1/episodes/config", r#"{"per_agent_max": 3, "ttl_seconds": 60}"#).status, 200);
    for (i, kind) in ["bet", "bet", "deposit", "bet"].iter().enumerate() {
        let body = json!({ "agent_id": "casino-bot", "kind": kind, "payload": { "n": i }, "outcome": if *kind == "bet" { json!("lost") } else { json!({"ok": true}) } });
        let r = api.call("POST", "/v1/episodes/", &body.to_string());
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(r.body["evicted"], u64::from(i == 3), "the cap keeps the newest");
        api.now += 1_000;
    }
    api.call("POST", "/v1/episodes", r#"{"agent_id": "other", "kind": "login"}"#);
    let recent = api.call("GET", "/v1/episodes?agent_id=casino-bot&n=10&kind=bet", "");
    let ns: Vec<u64> = recent.body["episodes"].as_array().unwrap().iter().map(|e| e["payload"]["n"].as_u64().unwrap()).collect();
    assert_eq!(ns, [3, 1], "newest first, filtered by kind, the evicted one gone");
    let s = api.call("GET", "/v1/episodes/summary?agent_id=casino-bot", "");
    assert_eq!((s.body["total"].as_u64(), s.body["by_kind"]["bet"].as_u64(), s.body["span_seconds"].as_u64()), (Some(3), Some(2), Some(2)));
    api.now += 61_000;
    assert_eq!(api.call("GET", "/v1/episodes?agent_id=casino-bot", "").body["episodes"].as_array().unwrap().len(), 0, "past the TTL: invisible at once");
    for (body, code) in [
        (r#"{"agent_id": "", "kind": "x"}"#, "invalid_input"),
        (r#"{"agent_id": "a", "kind": "x", "payload": [1]}"#, "invalid_input"),
        (r#"{"agent_id": "a", "kind": "x", "at": "not a time"}"#, "invalid_input"),
        (r#"{"agent_id": "a"}"#, "invalid_input"),
    ] {
        assert_eq!(api.call("POST", "/v1/episodes", body).body["code"], code, "{body}");
    }
    assert_eq!(api.call("PUT", "/v1/episodes/config", r#"{"per_agent_max": 0}"#).status, 422);
}

#[test]
fn search_answers_only_the_fields_asked_for() {
    let mut api = Api::new();
    seed(&mut api, None);
    let full = api.call("POST", "/v1/long-term-memory/search", r#"{"text": "peanut allergy satay", "search_mode": "keyword", "limit": 3}"#);
    let lean = api.call("POST", "/v1/long-term-memory/search", r#"{"text": "peanut allergy satay", "search_mode": "keyword", "limit": 3, "fields": ["id", "score"]}"#);
    assert_eq!(lean.status, 200, "{}", lean.body);
    assert_eq!(ids(&lean.body), ids(&full.body), "the same hits, in the same order");
    for (l, f) in lean.body["memories"].as_array().unwrap().iter().zip(full.body["memories"].as_array().unwrap()) {
        let keys: Vec<&str> = l.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["id", "score"], "{l}");
        assert_eq!(l["score"], f["score"]);
    }
    assert_eq!((lean.body["total"].clone(), lean.body["next_offset"].clone()), (full.body["total"].clone(), full.body["next_offset"].clone()));
    let whole = api.call("POST", "/v1/long-term-memory/search", r#"{"text": "peanuts", "search_mode": "keyword"}"#);
    let some = api.call("POST", "/v1/long-term-memory/search", r#"{"text": "peanuts", "search_mode": "keyword", "fields": ["text", "topics", "dist"]}"#);
    assert_eq!(some.body["memories"][0], json!({ "text": "The user is allergic to peanuts and avoids satay dishes.", "topics": ["health"], "dist": whole.body["memories"][0]["dist"] }));
    for (fields, what) in [(r#"[]"#, "empty"), (r#"["id", "id"]"#, "twice"), (r#"["id", "vector"]"#, "unknown"), (r#""id""#, "not an array"), (r#"[1]"#, "not a string")] {
        let r = api.call("POST", "/v1/long-term-memory/search", &format!(r#"{{"text": "peanuts", "search_mode": "keyword", "fields": {fields}}}"#));
        assert_eq!((r.status, r.body["code"].as_str()), (422, Some("invalid_input")), "{what}: {}", r.body);
    }
}

/// Writes seal 4,096-point segments that no write's bound can merge; the
/// host's wake-up (the Worker's alarm) merges them in a bounded background
/// pass after the writes go quiet, and then asks for no further wake.
#[test]
fn background_passes_merge_what_writes_cannot() {
    use crate::core::engine::Op;
    use crate::core::limits;
    use crate::core::longterm::{LtmOp, NewRecord};
    use crate::core::retrieval::record::{MemoryRecord, MemoryType};
    use crate::store::now_or_never;

    let mut api = Api::new();
    let n = 2 * limits::VECTOR_SEAL_POINTS_DEFAULT + 200;
    for start in (0..n).step_by(limits::LTM_CREATE_BATCH_MAX) {
        let records = (start..(start + limits::LTM_CREATE_BATCH_MAX).min(n))
            .map(|i| {
                let vector = (0..16).map(|j| if j == i % 16 { 1.0 } else { ((i * 31 + j * 7) % 97) as f32 / 970.0 }).collect();
                NewRecord { record: MemoryRecord::new(format!("m{i}"), format!("memory {i}"), MemoryType::Semantic, api.now), vector }
            })
            .collect();
        now_or_never(api.store.apply(Op::Ltm(LtmOp::Create { records, deduplicate: false, embedder: None, actor: None }), api.now)).unwrap().unwrap();
        now_or_never(api.store.maintain(|e| e.compact_vectors(limits::LTM_COMPACT_WORK_POINTS_PER_WRITE))).unwrap().unwrap().unwrap();
    }
    let segments = |api: &Api| now_or_never(api.store.read(|e| e.longterm().index().unwrap().stats().segments.len())).unwrap().unwrap();
    assert_eq!(segments(&api), 3, "two sealed segments and the flat one");
    let wake = now_or_never(crate::api::next_wake(&api.store, api.now)).unwrap().unwrap();
    assert_eq!(wake, Some(api.now + limits::LTM_COMPACT_DELAY_MS), "a merge is due: wake after the quiet time");
    api.now += limits::LTM_COMPACT_DELAY_MS;
    let next = now_or_never(crate::api::wake(&api.store, &crate::api::services::Offline, api.now)).unwrap().unwrap();
    assert_eq!(segments(&api), 2, "merged into one graph beside the flat segment");
    assert_eq!(next, None, "nothing left to do and no TTL: no further wake");
    let s = api.call("POST", "/v1/long-term-memory/search", r#"{"text": "memory 4242", "search_mode": "keyword", "limit": 1}"#);
    assert_eq!(ids(&s.body), ["m4242"], "{}", s.body);
    assert_eq!(now_or_never(api.store.read(|e| e.longterm().len())).unwrap().unwrap(), n);
}

#[test]
fn an_external_index_answers_the_vector_side_behind_the_same_route() {
    use crate::api::external_index::{ExternalIndex, ExternalItem, LocalFake};
    use crate::store::now_or_never;
    let mut api = Api::new();
    seed(&mut api, None);
    let ids_texts: Vec<(String, String)> = ["kitchen", "peanuts", "lisbon", "darkmode", "bicycle"]
        .iter()
        .map(|id| (id.to_string(), api.call("GET", &format!("/v1/long-term-memory/{id}"), "").body["text"].as_str().unwrap().to_owned()))
        .collect();
    // The fake holds the vectors the engine embedded, and one for an id no
    // tenant holds (deleted since, or another shard's).
    let texts: Vec<String> = ids_texts.iter().map(|(_, t)| t.clone()).chain(["teal kitchen colour favourite".to_owned()]).collect();
    let embedded = now_or_never(super::embed_texts(&api.store, &api.services, &texts)).unwrap().unwrap();
    let fake = LocalFake::new(embedded.vectors[0].len());
    let items: Vec<ExternalItem> = ids_texts.iter().map(|(id, _)| id.clone()).chain(["ghost".to_owned()]).zip(embedded.vectors).map(|(id, vector)| ExternalItem { id, vector }).collect();
    now_or_never(fake.upsert(&items)).unwrap().unwrap();
    let body = r#"{"text": "what colour is the kitchen", "search_mode": "semantic", "limit": 5, "user_id": {"eq": "ana"}}"#;
    let engine = api.call("POST", "/v1/long-term-memory/search", body);
    api.services.external = Some(fake);
    let external = api.call("POST", "/v1/long-term-memory/search", body);
    assert_eq!(external.status, 200, "{}", external.body);
    assert_eq!(ids(&external.body), ids(&engine.body), "the same route, the same ranking");
    assert_eq!(ids(&engine.body).len(), 4, "every one of ana's records");
    assert!(!ids(&external.body).contains(&"ghost".to_owned()), "an id the tenant does not hold is dropped");
    assert!(!ids(&external.body).contains(&"darkmode".to_owned()), "the filter is applied exactly");
    assert!(external.body["memories"].as_array().unwrap().iter().all(|m| m["segment"].is_null()), "no engine segment answered");
}
