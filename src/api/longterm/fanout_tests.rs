//! The fan-out's wire protocol against one index: the same records in one
//! store and spread over 1–5 shard stores by bucket; every part crosses
//! JSON and merges up an uneven tree; the answer must equal the one
//! store's search route hit for hit, scores and distances bit for bit.

use serde_json::{json, Value};

use super::*;
use crate::api::longterm::query_vector;
use crate::api::tests::Api;
use crate::core::shard::{record_bucket, ShardMap};
use crate::core::test_rng::Rng;
use crate::store::now_or_never;

const WORDS: [&str; 16] = ["tofu", "puppy", "lisbon", "marathon", "coffee", "invoice", "rent", "garden", "piano", "train", "sister", "allergy", "peanut", "budget", "flight", "vegan"];

fn seed(rng: &mut Rng, n: usize) -> Vec<Value> {
    let mut below = |k: usize| rng.below(k as u64) as usize;
    (0..n)
        .map(|i| {
            let count = 3 + below(6);
            let words: Vec<&str> = (0..count).map(|_| WORDS[below(WORDS.len())]).collect();
            let mut m = json!({ "id": format!("r{i:04}"), "text": words.join(" "), "created_at": format!("2024-0{}-1{}T10:00:00Z", 1 + below(9), below(10)), "topics": [WORDS[below(4)]] });
            if below(5) > 0 {
                m["user_id"] = json!(format!("u{}", below(7)));
            }
            m
        })
        .collect()
}

fn round_trip<T: serde::Serialize + serde::de::DeserializeOwned>(v: &T) -> T {
    serde_json::from_str(&serde_json::to_string(v).unwrap()).unwrap()
}

/// Merges `parts` as a tree would: in groups of up to three, then again.
fn tree_merge(body: &SearchBody, round: &Round, mut parts: Vec<CandPart>) -> CandPart {
    while parts.len() > 1 {
        parts = parts.chunks(3).map(|g| round_trip(&merge_parts(body, round, g.to_vec()).unwrap())).collect();
    }
    parts.pop().unwrap()
}

fn sharded_search(shards: &mut [Api], raw: &Value, now: Millis) -> Value {
    let root = &shards[0];
    let body = parse_body(&root.store, raw).unwrap();
    let vector = now_or_never(query_vector(&root.store, &root.services, &body, None)).unwrap().unwrap();
    let stats = if needs_stats(&body, vector.is_some()) {
        let parts: Vec<StatsPart> = shards.iter().map(|s| round_trip(&now_or_never(stats_part(&s.store, &body)).unwrap().unwrap())).collect();
        Some(StatsPart::merge(&parts).unwrap())
    } else {
        None
    };
    let mode = stats.as_ref().map_or(body.mode, |s| s.resolve(body.mode, vector.is_some()));
    let mode = if mode == Mode::Auto { Mode::Keyword } else { mode };
    let round = round_trip(&Round { now, mode: Some(mode.as_str().to_owned()), vector, stats });
    let parts: Vec<CandPart> = shards.iter().map(|s| round_trip(&now_or_never(candidates_part(&s.store, &body, &round)).unwrap().unwrap())).collect();
    let merged = tree_merge(&body, &round, parts);
    finish(&body, &round, &merged).unwrap()
}

#[test]
fn a_fanout_over_the_wire_answers_exactly_like_one_index() {
    let mut rng = Rng(21);
    let queries = [
        json!({ "text": "tofu puppy", "search_mode": "keyword", "limit": 5 }),
        json!({ "text": "rent budget invoice", "search_mode": "keyword", "limit": 7, "offset": 3, "recency_boost": false }),
        json!({ "text": "coffee garden", "search_mode": "semantic", "limit": 6 }),
        json!({ "text": "flight lisbon", "search_mode": "hybrid", "limit": 4 }),
        json!({ "text": "flight lisbon", "search_mode": "hybrid", "fusion": "rrf", "limit": 4, "offset": 2 }),
        json!({ "text": "peanut allergy", "limit": 5 }),
        json!({ "text": "", "limit": 8, "offset": 4 }),
        json!({ "text": "", "limit": 5, "recency_boost": false, "topics": { "any": ["tofu", "puppy"] } }),
        json!({ "text": "piano sister", "search_mode": "keyword", "limit": 5, "user_id": { "any": ["u1", "u2", "u3"] } }),
        json!({ "text": "train marathon in March 2024", "search_mode": "keyword", "limit": 5, "reference_time": "2024-06-01T00:00:00Z" }),
        json!({ "text": "vegan", "search_mode": "keyword", "limit": 5, "fields": ["id", "score", "user_id"] }),
        json!({ "text": "nothing matches this", "search_mode": "keyword", "limit": 5, "user_id": { "eq": "nobody" } }),
    ];
    for case in 0..6 {
        let count = 30 + rng.below(60) as usize;
        let records = seed(&mut rng, count);
        let n = 1 + case % 5;
        let map = ShardMap::even(n).unwrap();
        let mut one = Api::new();
        let mut shards: Vec<Api> = (0..n).map(|_| Api::new()).collect();
        let r = one.call("POST", "/v1/long-term-memory/", &json!({ "memories": records }).to_string());
        assert_eq!(r.status, 200, "{}", r.body);
        for (s, shard) in shards.iter_mut().enumerate() {
            let mine: Vec<&Value> = records.iter().filter(|m| map.owner(record_bucket(m["user_id"].as_str(), m["id"].as_str().unwrap())) as usize == s).collect();
            if !mine.is_empty() {
                let r = shard.call("POST", "/v1/long-term-memory/", &json!({ "memories": mine }).to_string());
                assert_eq!(r.status, 200, "{}", r.body);
            }
        }
        for q in &queries {
            let want = one.call("POST", "/v1/long-term-memory/search", &q.to_string());
            assert_eq!(want.status, 200, "{}", want.body);
            let got = sharded_search(&mut shards, q, one.now);
            for field in ["total", "next_offset", "search_mode", "exact_filter", "time_query"] {
                assert_eq!(got[field], want.body[field], "case {case}, {n} shards, {q}: {field}");
            }
            assert_eq!(got["memories"], want.body["memories"], "case {case}, {n} shards, {q}");
        }
    }
}

#[test]
fn a_fanout_refuses_what_it_does_not_merge() {
    let api = Api::new();
    for (body, field) in [(json!({ "text": "x", "explain": true }), "explain"), (json!({ "text": "x", "expand": 2 }), "expand")] {
        let e = parse_body(&api.store, &body).err().unwrap();
        assert_eq!(e.code(), "invalid_input");
        assert!(e.to_string().contains(field), "{e}");
    }
    let parts = [StatsPart { terms: vec![(1, 1, 2)], ..StatsPart::default() }, StatsPart { terms: vec![(2, 1, 2)], ..StatsPart::default() }];
    assert_eq!(StatsPart::merge(&parts).unwrap_err().code(), "invalid_input", "differently analyzed queries");
    let body = SearchBody::parse(&json!({ "text": "x", "search_mode": "keyword" })).unwrap();
    let round = Round { now: 0, mode: Some("keyword".into()), vector: None, stats: None };
    let ghost = CandPart { keyword: vec![("ghost".into(), 1.0)], ..CandPart::default() };
    assert_eq!(finish(&body, &round, &ghost).unwrap_err().code(), "invalid_input", "a candidate without its record");
}
