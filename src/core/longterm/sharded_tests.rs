//! The exact-merge property at the level of long-term search: a tenant's
//! records split over 1–8 shards by user bucket, searched in exact mode,
//! rank exactly like one index holding them all (same ids, same order,
//! scores bit for bit) in every mode, with filters, time words, recency and
//! paging.

use serde_json::{json, Map, Value};

use super::*;
use crate::core::engine::{Engine, Op};
use crate::core::retrieval::filter::Filter;
use crate::core::retrieval::rank::RecencyParams;
use crate::core::retrieval::record::{MemoryRecord, MemoryType};
use crate::core::shard::bucket_of;
use crate::core::test_rng::Rng;
use crate::core::longterm::search::{Fusion, TimeReference};
use crate::core::longterm::external::{self, ExternalHit};
use crate::core::longterm::{LtmOp, NewRecord};

const DIM: usize = 8;
const WORDS: [&str; 12] = ["otters", "granite", "tea", "sailing", "quay", "lantern", "maple", "orbit", "violin", "harbor", "cedar", "ember"];
const DAY_MS: u64 = 86_400_000;

fn vector(rng: &mut Rng) -> Vec<f32> {
    // Coarse values, so equal similarities (ties) happen.
    (0..DIM).map(|_| (rng.below(5) as f32) - 2.0).map(|x| if x == 0.0 { 0.5 } else { x }).collect()
}

fn corpus(rng: &mut Rng) -> Vec<NewRecord> {
    let n = 20 + rng.below(120);
    (0..n)
        .map(|i| {
            let words: Vec<&str> = (0..2 + rng.below(6)).map(|_| WORDS[rng.below(WORDS.len() as u64) as usize]).collect();
            let mut r = MemoryRecord::new(format!("r{i:04}"), words.join(" "), MemoryType::Semantic, 1_000 * DAY_MS + rng.below(60) * DAY_MS);
            r.user_id = (rng.below(6) != 0).then(|| format!("u{}", rng.below(9)));
            r.topics = vec![format!("t{}", rng.below(3))];
            r.last_accessed = r.created_at + rng.below(10) * DAY_MS;
            if rng.below(4) == 0 {
                r.event_date = Some(r.created_at - rng.below(5) * DAY_MS);
            }
            r.refresh_hash();
            NewRecord { record: r, vector: vector(rng) }
        })
        .collect()
}

/// An engine holding `records`, created in id order (one index's keys then
/// follow id order, which is how a merge breaks ties).
fn engine(records: Vec<NewRecord>) -> Engine {
    let mut e = Engine::new();
    for batch in records.chunks(50) {
        e.apply(&Op::Ltm(LtmOp::Create { records: batch.to_vec(), deduplicate: false, embedder: None, actor: None }), 5_000).unwrap();
    }
    e
}

fn filter(rng: &mut Rng) -> Filter {
    let mut body = Map::new();
    match rng.below(4) {
        0 => {}
        1 => {
            body.insert("user_id".into(), json!({ "eq": format!("u{}", rng.below(9)) }));
        }
        2 => {
            body.insert("topics".into(), json!({ "any": ["t0", "t2"] }));
        }
        _ => {
            body.insert("user_id".into(), json!({ "any": ["u1", "u2", "u5"] }));
        }
    }
    Filter::from_request(&body).unwrap()
}

#[test]
fn sharded_search_ranks_exactly_like_one_index() {
    let mut compared = 0;
    for seed in 1..=40u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let records = corpus(&mut rng);
        let shard_count = 1 + rng.below(8) as usize;
        let mut parts: Vec<Vec<NewRecord>> = vec![Vec::new(); shard_count];
        for r in &records {
            let key = r.record.user_id.clone().unwrap_or_else(|| r.record.id.clone());
            parts[bucket_of(&key) as usize % shard_count].push(r.clone());
        }
        let all: Vec<(String, Vec<f32>)> = records.iter().map(|r| (r.record.id.clone(), r.vector.clone())).chain((0..3).map(|i| (format!("ghost{i}"), vector(&mut rng)))).collect();
        let one = engine(records);
        let shards: Vec<Engine> = parts.into_iter().map(engine).collect();
        let refs: Vec<&LongTerm> = shards.iter().map(Engine::longterm).collect();
        for q in 0..25 {
            let f = filter(&mut rng);
            let text: String = match rng.below(6) {
                0 => String::new(),
                1 => format!("{} yesterday", WORDS[rng.below(12) as usize]),
                _ => (0..1 + rng.below(3)).map(|_| WORDS[rng.below(12) as usize]).collect::<Vec<_>>().join(" "),
            };
            let v = vector(&mut rng);
            let mode = [Mode::Semantic, Mode::Keyword, Mode::Hybrid, Mode::Auto][rng.below(4) as usize];
            let fusion = if rng.below(2) == 0 { Fusion::Rrf } else { Fusion::Alpha(None) };
            let recency = (rng.below(3) == 0).then(RecencyParams::default);
            let browse = text.is_empty() && rng.below(2) == 0;
            // A third of the queries take their vector side from an
            // external index's answer (over every record and a few ids no
            // shard holds), which each shard filters to its own.
            let answer = external_answer(&all, &v);
            let req = SearchRequest {
                vector: (!browse && (mode != Mode::Keyword || rng.below(2) == 0)).then_some(v.as_slice()),
                mode,
                fusion,
                limit: 1 + rng.below(10) as usize,
                offset: rng.below(4) as usize,
                recency,
                time: Some(TimeReference { at_ms: 1_030 * DAY_MS, tz_offset_minutes: 0 }),
                exact: true,
                external: (rng.below(3) == 0).then_some(answer.as_slice()),
                ..SearchRequest::new(&text, &f)
            };
            let now = 1_070 * DAY_MS;
            let want = one.longterm().search(&req, now);
            let got = search_shards(&refs, &req, now);
            let (want, got) = match (want, got) {
                (Ok(w), Ok(g)) => (w, g),
                (Err(a), Err(b)) => {
                    assert_eq!(a.code(), b.code(), "seed {seed} query {q}");
                    continue;
                }
                (w, g) => panic!("seed {seed} query {q}: one index {w:?}, shards {g:?}"),
            };
            let want_ids: Vec<(&str, f64, f64)> = want.hits.iter().map(|h| (one.longterm().record_by_key(h.key).unwrap().id.as_str(), h.score, h.dist)).collect();
            let got_ids: Vec<(&str, f64, f64)> = got.hits.iter().map(|h| (refs[h.shard].record_by_key(h.key).unwrap().id.as_str(), h.score, h.dist)).collect();
            assert_eq!(got_ids, want_ids, "seed {seed} query {q} ({shard_count} shards, {mode:?}, text {text:?})");
            assert_eq!((got.total, got.mode), (want.total, want.mode), "seed {seed} query {q}");
            compared += 1;
        }
    }
    assert!(compared > 900, "{compared} queries compared");
}

/// What an exact external index answers for `q` over `rows`: cosine, best
/// first, ties by id, at most its top-k bound.
fn external_answer(rows: &[(String, Vec<f32>)], q: &[f32]) -> Vec<ExternalHit> {
    let unit = |v: &[f32]| {
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter().map(|x| x / n).collect::<Vec<f32>>()
    };
    let q = unit(q);
    let mut hits: Vec<ExternalHit> = rows.iter().map(|(id, v)| ExternalHit { id: id.clone(), score: unit(v).iter().zip(&q).map(|(a, b)| a * b).sum() }).collect();
    hits.sort_unstable_by(external::order);
    hits.truncate(crate::core::limits::EXTERNAL_TOP_K_MAX);
    hits
}

#[test]
fn an_external_answer_is_admitted_exactly() {
    let mut rng = Rng(7);
    let records = corpus(&mut rng);
    let rows: Vec<(String, Vec<f32>)> = records.iter().map(|r| (r.record.id.clone(), r.vector.clone())).chain([("ghost".to_owned(), vec![1.0; DIM])]).collect();
    let users: std::collections::HashMap<String, Option<String>> = records.iter().map(|r| (r.record.id.clone(), r.record.user_id.clone())).collect();
    let e = engine(records);
    let q = vec![1.0; DIM];
    let answer = external_answer(&rows, &q);
    assert_eq!(answer[0].id, "ghost", "the answer names a record the index does not hold");
    let f = Filter::from_request(&json!({ "user_id": { "eq": "u3" } }).as_object().unwrap().clone()).unwrap();
    let req = SearchRequest { vector: Some(&q), limit: 50, external: Some(&answer), ..SearchRequest::new("", &f) };
    let hits = e.longterm().search(&req, 0).unwrap().hits;
    assert!(!hits.is_empty());
    for h in &hits {
        let id = &e.longterm().record_by_key(h.key).unwrap().id;
        assert_eq!(users[id].as_deref(), Some("u3"), "{id} passed the filter");
        assert_eq!(h.segment, Some(external::EXTERNAL_SEGMENT_ID));
    }
    let want: Vec<&str> = answer.iter().filter(|h| users.get(&h.id).is_some_and(|u| u.as_deref() == Some("u3"))).map(|h| h.id.as_str()).collect();
    let got: Vec<&str> = hits.iter().map(|h| e.longterm().record_by_key(h.key).unwrap().id.as_str()).collect();
    assert_eq!(got, want, "the answer's order, filtered");
}

#[test]
fn explain_is_refused_rather_than_merged_wrongly() {
    let e = engine(vec![]);
    let f = Filter::from_request(&Map::<String, Value>::new()).unwrap();
    let req = SearchRequest { explain: true, ..SearchRequest::new("tea", &f) };
    assert_eq!(search_shards(&[e.longterm()], &req, 0).unwrap_err().code(), "invalid_input");
}
