//! The shard map, routing, the fan-out tree, and the exact-merge property:
//! BM25 over shards under tenant-wide statistics ranks exactly like one
//! index holding the same documents.

use super::*;
use crate::core::retrieval::bm25::{Bm25Index, Bm25Scratch, KeyFilter, QueryStats};
use crate::core::retrieval::filter::TagFilter;

use crate::core::test_rng::Rng;

#[test]
fn buckets_are_stable_and_spread() {
    // Pinned, computed independently (Python's hashlib:
    // `int.from_bytes(sha256(b"edgemem bucket v1\0" + key)[:2], "big") % 4096`):
    // a change of hash would move every tenant's records.
    let pinned: Vec<Bucket> = ["ana", "bo", "user-123", ""].iter().map(|k| bucket_of(k)).collect();
    assert_eq!(pinned, PINNED_BUCKETS, "the bucket hash changed");
    let mut counts = vec![0u32; limits::SHARD_BUCKETS];
    for i in 0..200_000 {
        counts[bucket_of(&format!("user-{i}")) as usize] += 1;
    }
    // 48.8 per bucket on average; a uniform hash stays well within 20..90.
    assert!(counts.iter().all(|&c| (20..90).contains(&c)), "min {} max {}", counts.iter().min().unwrap(), counts.iter().max().unwrap());
    assert_eq!(record_bucket(Some("ana"), "m1"), bucket_of("ana"));
    assert_eq!(record_bucket(None, "m1"), bucket_of("m1"));
}

const PINNED_BUCKETS: [Bucket; 4] = [PIN_ANA, PIN_BO, PIN_USER, PIN_EMPTY];
const PIN_ANA: Bucket = 1761;
const PIN_BO: Bucket = 3383;
const PIN_USER: Bucket = 1052;
const PIN_EMPTY: Bucket = 171;

#[test]
fn splits_keep_every_bucket_owned_once_and_bump_the_epoch() {
    let mut map = ShardMap::single();
    assert_eq!((map.epoch, map.shards()), (1, vec![0]));
    map = map.split(0, 1).unwrap();
    map = map.split(0, 2).unwrap();
    map = map.split(1, 3).unwrap();
    assert_eq!(map.epoch, 4);
    assert_eq!(map.shards(), vec![0, 1, 2, 3]);
    let counts: Vec<usize> = (0..4).map(|s| map.bucket_count(s)).collect();
    assert_eq!(counts.iter().sum::<usize>(), limits::SHARD_BUCKETS);
    assert_eq!(counts, vec![1024, 1024, 1024, 1024]);
    for b in 0..limits::SHARD_BUCKETS as Bucket {
        assert!(map.shards().contains(&map.owner(b)));
    }
    map.validate().unwrap();
    let json = serde_json::to_string(&map).unwrap();
    assert_eq!(serde_json::from_str::<ShardMap>(&json).unwrap(), map);
    // Refusals.
    assert_eq!(map.split(0, 1).unwrap_err().code(), "invalid_input", "shard 1 is in use");
    assert_eq!(map.split(9, 10).unwrap_err().code(), "invalid_input", "shard 9 owns nothing");
    let mut tiny = ShardMap::single();
    for to in 1..12 {
        tiny = tiny.split(0, to).unwrap();
    }
    assert_eq!(tiny.bucket_count(0), 2);
    tiny = tiny.split(0, 12).unwrap();
    assert_eq!(tiny.split(0, 13).unwrap_err().code(), "invalid_input", "one bucket cannot split");
    for broken in [r#"{"epoch":1,"runs":[[5,0,1]]}"#, r#"{"epoch":1,"runs":[[0,0,1],[9,0,1]]}"#, r#"{"epoch":1,"runs":[[0,0,2]]}"#, r#"{"epoch":3,"runs":[[0,0,0]]}"#] {
        let map: ShardMap = serde_json::from_str(broken).unwrap();
        assert_eq!(map.validate().unwrap_err().code(), "invalid_input", "{broken}");
    }
}

#[test]
fn a_stale_epoch_or_a_moved_bucket_is_shard_moved() {
    let before = ShardMap::single();
    let after = before.split(0, 1).unwrap();
    let moved = (0..limits::SHARD_BUCKETS as Bucket).find(|&b| after.owner(b) == 1).unwrap();
    before.check(1, 0, moved).unwrap();
    assert_eq!(after.check(1, 0, moved).unwrap_err(), Error::ShardMoved { epoch: 2 }, "routed under the old epoch");
    assert_eq!(after.check(2, 0, moved).unwrap_err().code(), "shard_moved", "the bucket is not this shard's any more");
    after.check(2, 1, moved).unwrap();
    assert_eq!(after.check(1, 1, moved).unwrap_err().code(), "shard_moved", "routed before shard 1 owned it");
    // A shard the next split leaves alone keeps serving requests routed
    // under the newer map, with its own older map: no broadcast needed.
    let later = after.split(1, 2).unwrap();
    let kept = (0..limits::SHARD_BUCKETS as Bucket).find(|&b| later.owner(b) == 0).unwrap();
    after.check(later.epoch, 0, kept).unwrap();
    later.check(later.epoch, 0, kept).unwrap();
}

#[test]
fn searches_pinned_to_users_go_to_their_shards_only() {
    let mut map = ShardMap::single();
    for to in 1..8 {
        map = map.split(to - 1, to).unwrap();
    }
    let user = |eq: Option<&str>, any: Option<&[&str]>| Filter {
        user_id: Some(TagFilter { eq: eq.map(str::to_owned), any: any.map(|a| a.iter().map(|s| s.to_string()).collect()), ..TagFilter::default() }),
        ..Filter::default()
    };
    assert_eq!(route_search(&user(Some("ana"), None), &map), Route::One(map.owner(bucket_of("ana"))));
    let many = ["ana", "bo", "cy", "di", "ed", "flo"];
    let mut expect: Vec<ShardId> = many.iter().map(|u| map.owner(bucket_of(u))).collect();
    expect.sort_unstable();
    expect.dedup();
    let routed = route_search(&user(None, Some(&many)), &map);
    match (&routed, expect.len()) {
        (Route::One(s), 1) => assert_eq!(vec![*s], expect),
        (Route::FanOut(s), _) => assert_eq!(*s, expect),
        other => panic!("{other:?}"),
    }
    assert_eq!(route_search(&Filter::default(), &map), Route::FanOut(map.shards()));
    // A filter on something else than the user cannot pin a shard.
    let ne = Filter { user_id: Some(TagFilter { ne: Some("ana".into()), ..TagFilter::default() }), ..Filter::default() };
    assert_eq!(route_search(&ne, &map), Route::FanOut(map.shards()));
    assert_eq!(route_search(&Filter::default(), &ShardMap::single()), Route::One(0));
}

#[test]
fn fanout_trees_are_bounded_and_cover_each_shard_once() {
    assert_eq!(fanout_tree(&[], 6), None);
    for n in 1..=400u16 {
        let shards: Vec<ShardId> = (0..n).collect();
        for b in 2..=limits::SHARD_FANOUT_BRANCHING_MAX {
            let tree = fanout_tree(&shards, b).unwrap();
            // Every shard once: n shards, n calls (the front's included).
            assert_eq!(tree.shards(), shards, "n={n} b={b}");
            fn widest(t: &FanOut) -> usize {
                t.children.iter().map(widest).max().unwrap_or(0).max(t.children.len())
            }
            assert!(widest(&tree) <= b, "n={n} b={b}");
            // The least depth whose full tree (1 + b + b² + ...) holds n.
            let (mut depth, mut capacity, mut level) = (0, 1usize, 1usize);
            while capacity < n as usize {
                level *= b;
                capacity += level;
                depth += 1;
            }
            assert_eq!(tree.depth(), depth, "n={n} b={b}");
        }
    }
    // A branching past the platform's limit is clamped to it.
    let wide = fanout_tree(&(0..36).collect::<Vec<_>>(), 50).unwrap();
    assert_eq!(wide.children.len(), limits::SHARD_FANOUT_BRANCHING_MAX);
}

const WORDS: [&str; 24] = [
    "metric", "units", "lisbon", "flight", "budget", "vegan", "wallet", "address", "plan", "team", "timezone", "berlin", "coffee", "jazz", "marathon",
    "allergy", "peanut", "invoice", "refund", "window", "seat", "friday", "hotel", "museum",
];

fn text(rng: &mut Rng) -> String {
    let n = 1 + rng.below(12) as usize;
    (0..n).map(|_| WORDS[rng.below(WORDS.len() as u64) as usize]).collect::<Vec<_>>().join(" ")
}

/// The exact-merge property: for random corpora split over 1–16 shards by
/// user bucket, every query's merged top k under summed statistics equals
/// one index's top k, ids and scores bit for bit. Each shard numbers its
/// documents itself (the keys collide across shards, as engines' do) and
/// the merge breaks ties by record id.
#[test]
fn sharded_bm25_under_tenant_wide_statistics_ranks_exactly_like_one_index() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut checked = 0;
    for case in 0..60 {
        let shard_count = 1 + (case % 16) as u16;
        let mut map = ShardMap::single();
        for to in 1..shard_count {
            let biggest = map.shards().into_iter().max_by_key(|&s| map.bucket_count(s)).unwrap();
            map = map.split(biggest, to).unwrap();
        }
        let docs = 20 + rng.below(300);
        let mut one = Bm25Index::default();
        let mut shards: Vec<Bm25Index> = (0..shard_count).map(|_| Bm25Index::default()).collect();
        // Per shard, its local key → the record id; per record, (shard, local key).
        let mut ids: Vec<Vec<String>> = vec![Vec::new(); shard_count as usize];
        let mut placed = Vec::new();
        // Zero-padded, so ordering by id is ordering by the single index's key.
        let id_of = |key: u64| format!("m{key:06}");
        for key in 0..docs {
            let body = text(&mut rng);
            let user = format!("user-{}", rng.below(40));
            one.add(key, &body).unwrap();
            let s = map.owner(record_bucket(Some(&user), &id_of(key))) as usize;
            let local = ids[s].len() as u64;
            shards[s].add(local, &body).unwrap();
            ids[s].push(id_of(key));
            placed.push((s, local));
        }
        // Some removals, as a live index has.
        for _ in 0..docs / 10 {
            let key = rng.below(docs);
            if one.remove(key) {
                let (s, local) = placed[key as usize];
                assert!(shards[s].remove(local));
            }
        }
        let mut scratch = Bm25Scratch::default();
        for _ in 0..10 {
            let query = format!("{} unknownword {}", text(&mut rng), WORDS[rng.below(24) as usize]);
            let k = 1 + rng.below(25) as usize;
            let mut expected = Vec::new();
            one.search(&query, k, KeyFilter::All, &mut scratch, &mut expected).unwrap();
            let stats: Vec<QueryStats> = shards.iter().map(|s| s.query_stats(&query, &mut scratch).unwrap()).collect();
            let global = QueryStats::merge(&stats).unwrap();
            let lists: Vec<Vec<(String, f32)>> = shards
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    let mut out = Vec::new();
                    s.search_with_stats(&global, k, KeyFilter::All, &mut scratch, &mut out).unwrap();
                    out.into_iter().map(|(local, score)| (ids[i][local as usize].clone(), score)).collect()
                })
                .collect();
            let merged: Vec<(String, u32)> = merge_top_k(&lists, k).into_iter().map(|(id, s)| (id, s.to_bits())).collect();
            let expected: Vec<(String, u32)> = expected.into_iter().map(|(key, s)| (id_of(key), s.to_bits())).collect();
            assert_eq!(merged, expected, "case {case}, {shard_count} shards, query {query:?}");
            checked += 1;
        }
    }
    assert_eq!(checked, 600);
}

#[test]
fn statistics_from_differently_analyzed_queries_do_not_merge() {
    let mut a = Bm25Index::default();
    a.add(1, "metric units").unwrap();
    let mut scratch = Bm25Scratch::default();
    let x = a.query_stats("metric units", &mut scratch).unwrap();
    let y = a.query_stats("units metric", &mut scratch).unwrap();
    assert_eq!(QueryStats::merge(&[x.clone(), y]).unwrap_err().code(), "invalid_input");
    assert_eq!(QueryStats::merge(&[x.clone(), x.clone()]).unwrap().docs, 2);
    assert_eq!(a.query_stats(&"x".repeat(limits::QUERY_TEXT_BYTES_MAX + 1), &mut scratch).unwrap_err().code(), "payload_too_large");
}

#[test]
fn an_even_map_gives_every_shard_a_run_from_epoch_one() {
    for n in [1usize, 2, 3, 4, 7, 64, limits::SHARDS_MAX] {
        let map = ShardMap::even(n).unwrap();
        assert_eq!(map.epoch, 1);
        assert_eq!(map.shards(), (0..n as ShardId).collect::<Vec<_>>());
        let counts: Vec<usize> = (0..n as ShardId).map(|s| map.bucket_count(s)).collect();
        assert_eq!(counts.iter().sum::<usize>(), limits::SHARD_BUCKETS);
        assert!(counts.iter().max().unwrap() - counts.iter().min().unwrap() <= 1, "{n}: {counts:?}");
        for s in 0..n as ShardId {
            map.check_shard(1, s).unwrap();
            assert!(matches!(map.check_shard(0, s), Err(Error::ShardMoved { epoch: 1 })), "a request routed before the map existed");
        }
        assert!(map.check_shard(1, n as ShardId).is_err(), "a shard that owns nothing");
    }
    assert_eq!(ShardMap::even(1).unwrap(), ShardMap::single());
    assert!(ShardMap::even(0).is_err());
    assert!(ShardMap::even(limits::SHARDS_MAX + 1).is_err());
}

#[test]
fn a_split_leaves_the_other_shards_serving_older_maps_and_fences_the_moved_runs() {
    let map = ShardMap::even(4).unwrap();
    let next = map.split(1, 4).unwrap();
    // Shards the split left alone serve requests routed under either map.
    for s in [0, 2, 3] {
        next.check_shard(1, s).unwrap();
        next.check_shard(2, s).unwrap();
    }
    // The shard that gave buckets away still owns the rest since epoch 1,
    // so a request for one of them routed under either map is served; but
    // a fan-out routed under the old map would miss what it gave away.
    let kept = next.buckets_of(1)[0];
    next.check(1, 1, kept).unwrap();
    assert!(matches!(next.check_shard(1, 1), Err(Error::ShardMoved { epoch: 2 })));
    next.check_shard(2, 1).unwrap();
    // The new shard owns its buckets only from epoch 2.
    assert!(next.check_shard(1, 4).is_err());
    next.check_shard(2, 4).unwrap();
    // Half of shard 1's buckets moved, and every one has one owner.
    assert_eq!(next.buckets_of(1).len() + next.buckets_of(4).len(), map.buckets_of(1).len());
    assert_eq!(next.buckets_of(4).len(), map.buckets_of(1).len() / 2 + map.buckets_of(1).len() % 2);
    // Shard ids are never reused.
    assert_eq!(map.next_shard(), Some(4));
    assert_eq!(next.next_shard(), Some(5));
    let again = next.split(4, 5).unwrap();
    assert_eq!(again.next_shard(), Some(6));
    // The map survives JSON, losses included, and a map from before losses loads.
    let back: ShardMap = serde_json::from_str(&serde_json::to_string(&again).unwrap()).unwrap();
    assert_eq!(back, again);
    back.validate().unwrap();
    let old: ShardMap = serde_json::from_str(r#"{"epoch":1,"runs":[[0,0,1]]}"#).unwrap();
    assert_eq!(old, ShardMap::single());
}
