//! A split's state moves: digests, catch-up rounds under writes, batches
//! lost, repeated and late, collection, and bad batches.

use super::moves::*;
use super::*;
use crate::core::longterm::NewRecord;
use crate::core::retrieval::record::{MemoryRecord, MemoryType};
use crate::core::shard::{bucket_of, record_bucket};
use crate::core::test_rng::Rng;

/// The upper half of the buckets moves.
struct Upper;

fn moving(b: u16) -> bool {
    b as usize >= limits::SHARD_BUCKETS / 2
}

impl MoveSelect for Upper {
    fn session(&self, id: &str) -> bool {
        moving(bucket_of(id))
    }
    fn record(&self, r: &MemoryRecord) -> bool {
        moving(record_bucket(r.user_id.as_deref(), &r.id))
    }
}

fn record(i: u64, text: &str) -> NewRecord {
    let mut r = MemoryRecord::new(format!("m{i}"), text, MemoryType::Semantic, 1_000 + i);
    r.user_id = Some(format!("u{}", i % 7));
    r.refresh_hash();
    let v = (0..4).map(|d| if d as u64 == i % 4 { 1.0 } else { 0.1 * (i % 3) as f32 }).collect();
    NewRecord { record: r, vector: v }
}

fn create(e: &mut Engine, i: u64, text: &str, now: Millis) {
    let op = Op::Ltm(LtmOp::Create { records: vec![record(i, text)], deduplicate: false, embedder: Some("test-4".into()), actor: None });
    e.apply(&op, now).unwrap();
}

/// One random write to the old shard.
fn write(e: &mut Engine, rng: &mut Rng, now: Millis) {
    let i = rng.below(40);
    match rng.below(6) {
        0 | 1 => create(e, i, &format!("note {i} at {now}"), now),
        2 => {
            let _ = e.apply(&Op::Ltm(LtmOp::Delete { ids: vec![format!("m{i}")], forget: false, actor: None }), now);
        }
        3 => {
            let s = Session { ttl_seconds: None, ..Session::new(format!("s{}", i % 9), 0) };
            e.apply(&Op::SessionPut { session: s }, now).unwrap();
        }
        4 => {
            let m = Message { id: format!("t{now}"), role: "user".into(), content: format!("turn {now}"), created_at: now, persisted_at: None, tokens: Default::default() };
            let _ = e.apply(&Op::SessionAppend { session_id: format!("s{}", i % 9), messages: vec![m] }, now);
        }
        _ => {
            e.apply(&Op::ConsentGrant { user_id: format!("u{}", i % 7), granted_by: "test".into() }, now).unwrap();
        }
    }
}

/// One catch-up round from `from` to `to` as a directory runs it, in
/// batches with increasing sequence numbers. `lose` decides whether a
/// batch is lost on the way (a crash before it applied).
fn round(from: &Engine, to: &mut Engine, move_id: u64, seq: &mut u64, mut lose: impl FnMut() -> bool, late: &mut Vec<Op>) -> usize {
    let diff = move_diff(&from.move_digest(&Upper).unwrap(), &to.move_digest(&Upper).unwrap());
    let n = diff.len();
    let mut removes = diff.remove.chunks(limits::SHARD_MOVE_BATCH_ITEMS_MAX).map(<[String]>::to_vec).collect::<Vec<_>>().into_iter();
    let mut sends = diff.send.chunks(limits::SHARD_MOVE_BATCH_ITEMS_MAX).map(<[String]>::to_vec).collect::<Vec<_>>().into_iter();
    loop {
        let (keys, remove) = (sends.next(), removes.next());
        if keys.is_none() && remove.is_none() {
            break;
        }
        let items = keys.unwrap_or_default().iter().filter_map(|k| from.move_item(k).unwrap()).collect();
        *seq += 1;
        let op = Op::MoveIn { move_id, seq: *seq, items, remove: remove.unwrap_or_default(), embedder: Some("test-4".into()) };
        if lose() {
            late.push(op);
            continue;
        }
        to.apply(&op, 0).unwrap();
    }
    n
}

#[test]
fn catch_up_converges_under_writes_lost_and_late_batches() {
    // `make soak` runs more (EDGEMEM_MOVE_SEEDS).
    let seeds: u64 = std::env::var("EDGEMEM_MOVE_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(60);
    for seed in 1..=seeds {
        let mut rng = Rng(seed);
        let mut from = Engine::new();
        for t in 0..80 {
            write(&mut from, &mut rng, 10 + t);
        }
        let mut to = Engine::new();
        let (mut seq, mut late) = (0, Vec::new());
        // Rounds while writes go on; some batches are lost.
        for r in 0..4 {
            round(&from, &mut to, 7, &mut seq, || rng.below(5) == 0, &mut late);
            for t in 0..rng.below(20) {
                write(&mut from, &mut rng, 1_000 * (r + 1) + t);
            }
        }
        // The fence: no more writes; rounds until nothing differs.
        let mut rounds = 0;
        while round(&from, &mut to, 7, &mut seq, || rng.below(4) == 0, &mut late) > 0 {
            rounds += 1;
            assert!(rounds < 50, "seed {seed}: catch-up does not converge");
        }
        // Batches delivered late (after newer ones) change nothing.
        let settled = to.clone();
        for op in late.drain(..) {
            assert!(matches!(to.apply(&op, 0).unwrap(), Applied::Moved { applied: false, .. }), "seed {seed}");
        }
        to.last_seq = settled.last_seq;
        assert_eq!(to, settled, "seed {seed}: a late batch changed the new shard");
        let hashes = |e: &Engine| e.move_digest(&Upper).unwrap().into_iter().map(|(k, h, _)| (k, h)).collect::<Vec<_>>();
        assert_eq!(hashes(&from), hashes(&to), "seed {seed}");
        // The new shard holds exactly the moving part, item for item.
        let keys = from.move_keys(&Upper);
        let sorted = |mut v: Vec<String>| {
            v.sort();
            v
        };
        assert_eq!(sorted(to.move_keys(&Upper)), sorted(keys.clone()), "seed {seed}: the new shard holds items outside the move");
        for k in &keys {
            assert_eq!(from.move_item(k).unwrap(), to.move_item(k).unwrap(), "seed {seed}: {k}");
        }
        // Collection at the old shard: the moving part goes, the rest stays.
        let kept: Vec<String> = from.longterm.records().filter(|r| !Upper.record(r)).map(|r| r.id.clone()).collect();
        for batch in keys.chunks(limits::SHARD_MOVE_BATCH_ITEMS_MAX) {
            from.apply(&Op::MoveOut { keys: batch.to_vec() }, 0).unwrap();
        }
        assert!(from.move_keys(&Upper).is_empty(), "seed {seed}");
        assert_eq!(from.longterm.records().map(|r| r.id.clone()).collect::<Vec<_>>(), kept, "seed {seed}");
        // Every record is in exactly one of the two.
        for r in to.longterm.records() {
            assert!(from.longterm.get(&r.id).is_none(), "seed {seed}: {} in both", r.id);
        }
    }
}

/// A round as the directory runs it once it knows the new shard's digest:
/// the source alone is digested, and each batch's answer
/// ([`Engine::move_digest_of`] of its keys) keeps the known digest.
fn round_known(from: &Engine, to: &mut Engine, seq: &mut u64, known: &mut MoveDigest) -> usize {
    let diff = move_diff(&from.move_digest(&Upper).unwrap(), known);
    let mut map: BTreeMap<String, (u64, u64)> = known.drain(..).map(|(k, h, o)| (k, (h, o))).collect();
    let batch = |v: &[String], i: usize| v.iter().skip(i * 7).take(7).cloned().collect::<Vec<_>>();
    for i in 0..diff.send.len().div_ceil(7).max(diff.remove.len().div_ceil(7)) {
        let (keys, remove) = (batch(&diff.send, i), batch(&diff.remove, i));
        let items: Vec<MoveItem> = keys.iter().filter_map(|k| from.move_item(k).unwrap()).collect();
        let stored_keys: Vec<String> = items.iter().map(MoveItem::key).chain(remove.iter().cloned()).collect();
        *seq += 1;
        to.apply(&Op::MoveIn { move_id: 3, seq: *seq, items, remove: remove.clone(), embedder: Some("test-4".into()) }, 0).unwrap();
        for k in &remove {
            map.remove(k);
        }
        map.extend(to.move_digest_of(&stored_keys).unwrap().into_iter().map(|(k, h, o)| (k, (h, o))));
    }
    *known = map.into_iter().map(|(k, (h, o))| (k, h, o)).collect();
    diff.len()
}

#[test]
fn the_digest_batches_answer_keeps_the_new_shards_digest_exact() {
    let key_hash = |d: &MoveDigest| d.iter().map(|(k, h, _)| (k.clone(), *h)).collect::<Vec<_>>();
    for seed in 1..=40 {
        let mut rng = Rng(seed);
        let mut from = Engine::new();
        for t in 0..80 {
            write(&mut from, &mut rng, 10 + t);
        }
        let mut to = Engine::new();
        let mut seq = 0;
        let mut known = to.move_digest(&Upper).unwrap();
        for r in 0..4 {
            round_known(&from, &mut to, &mut seq, &mut known);
            assert_eq!(key_hash(&known), key_hash(&to.move_digest(&Upper).unwrap()), "seed {seed}, round {r}: the known digest is the new shard's");
            for t in 0..rng.below(20) {
                write(&mut from, &mut rng, 1_000 * (r + 1) + t);
            }
        }
        // Under the fence: rounds digesting the source alone converge.
        let mut rounds = 0;
        while round_known(&from, &mut to, &mut seq, &mut known) > 0 {
            rounds += 1;
            assert!(rounds < 3, "seed {seed}: a fenced round with a known digest leaves nothing");
        }
        assert_eq!(key_hash(&known), key_hash(&to.move_digest(&Upper).unwrap()), "seed {seed}");
        assert_eq!(key_hash(&from.move_digest(&Upper).unwrap()), key_hash(&to.move_digest(&Upper).unwrap()), "seed {seed}: the two sides agree");
        for k in from.move_keys(&Upper) {
            assert_eq!(from.move_item(&k).unwrap(), to.move_item(&k).unwrap(), "seed {seed}: {k}");
        }
    }
}

#[test]
fn records_arrive_in_the_old_shards_order() {
    let mut from = Engine::new();
    for i in (0..60).rev() {
        create(&mut from, i, &format!("text {i}"), 10);
    }
    let mut to = Engine::new();
    let (mut seq, mut late) = (0, Vec::new());
    round(&from, &mut to, 1, &mut seq, || false, &mut late);
    let order = |e: &Engine| e.longterm.records().filter(|r| Upper.record(r)).map(|r| r.id.clone()).collect::<Vec<_>>();
    assert_eq!(order(&to), order(&from));
    assert!(!order(&to).is_empty());
}

#[test]
fn a_moved_record_keeps_its_history_vector_and_search() {
    let mut from = Engine::new();
    // Find a record id whose user moves.
    let i = (0..100).find(|&i| Upper.record(&record(i, "x").record)).unwrap();
    create(&mut from, i, "first text", 10);
    create(&mut from, i, "second text", 20);
    let mut to = Engine::new();
    let item = from.move_item(&format!("m/m{i}")).unwrap().unwrap();
    to.apply(&Op::MoveIn { move_id: 1, seq: 1, items: vec![item], remove: vec![], embedder: Some("test-4".into()) }, 30).unwrap();
    let (a, b) = (from.longterm.get(&format!("m{i}")).unwrap(), to.longterm.get(&format!("m{i}")).unwrap());
    assert_eq!(a, b);
    assert_eq!(from.longterm.versions(&format!("m{i}")), to.longterm.versions(&format!("m{i}")));
    assert_eq!(to.longterm.versions(&format!("m{i}")).unwrap().len(), 2, "created, then edited");
    assert_eq!(from.longterm.vector_of(&format!("m{i}")), to.longterm.vector_of(&format!("m{i}")));
    assert_eq!(to.longterm.embedder(), Some("test-4"));
    // The moved state survives a snapshot, with its watermark.
    let back = Engine::decode_snapshot(&to.encode_snapshot().unwrap()).unwrap();
    assert_eq!(back, to);
    assert_eq!(back.move_watermark(1), 1);
}

#[test]
fn an_adopted_record_arrives_once_whole_and_never_over_another() {
    // A record edited to a user of another shard: its holder's item is
    // adopted by the new shard, with its history and vector.
    let mut from = Engine::new();
    create(&mut from, 3, "first text", 10);
    create(&mut from, 3, "second text", 20);
    let item = from.move_item("m/m3").unwrap().unwrap();
    let mut to = Engine::new();
    create(&mut to, 4, "held here", 5);
    let adopt = Op::Adopt { item: Box::new(item.clone()), embedder: Some("test-4".into()) };
    assert!(matches!(to.apply(&adopt, 30).unwrap(), Applied::Moved { applied: true, items: 1, .. }));
    assert_eq!(to.longterm.get("m3"), from.longterm.get("m3"));
    assert_eq!(to.longterm.versions("m3").unwrap().len(), 2, "created, then edited");
    assert_eq!(to.longterm.vector_of("m3"), from.longterm.vector_of("m3"));
    // The same hand-over again (a retry after a crash) changes nothing.
    let held = |e: &Engine| (e.longterm.records().cloned().collect::<Vec<_>>(), e.longterm.versions("m3").map(<[_]>::to_vec), e.longterm.vector_of("m3"));
    let after = held(&to);
    assert!(matches!(to.apply(&adopt, 31).unwrap(), Applied::Moved { applied: false, .. }));
    assert_eq!(held(&to), after);
    // An edit made at the new shard is never rolled back by a late retry.
    let patch = crate::core::retrieval::record::MemoryPatch { text: Some("edited at its new shard".into()), ..Default::default() };
    to.apply(&Op::Ltm(LtmOp::Update { id: "m3".into(), patch, vector: Some(vec![0.0, 1.0, 0.0, 0.0]), embedder: Some("test-4".into()), actor: None }), 40).unwrap();
    let edited = held(&to);
    assert!(matches!(to.apply(&adopt, 41).unwrap(), Applied::Moved { applied: false, .. }));
    assert_eq!(held(&to), edited);
    // Only a record is adopted; a bad vector is refused.
    let session = MoveItem::Session { session: Session::new("s1".into(), 0), archived: vec![], tool_cache: None, decisions: None, extraction: None };
    assert!(to.apply(&Op::Adopt { item: Box::new(session), embedder: None }, 42).is_err());
    let nan = MoveItem::Memory { record: record(5, "x").record, vector: vec![f32::NAN, 0.0, 0.0, 0.0], versions: vec![] };
    assert!(to.apply(&Op::Adopt { item: Box::new(nan), embedder: Some("test-4".into()) }, 43).is_err());
    let short = MoveItem::Memory { record: record(5, "x").record, vector: vec![1.0, 0.0], versions: vec![] };
    assert!(to.apply(&Op::Adopt { item: Box::new(short), embedder: Some("test-4".into()) }, 44).is_err());
    assert_eq!(held(&to), edited);
    // The old shard drops its copy only at the version adopted: an edit
    // made there meanwhile keeps it, and is adopted over the first copy.
    let version = memory_version(from.longterm.get("m3").unwrap(), from.longterm.versions("m3").unwrap()).unwrap();
    assert_eq!(from.memory_version_of("m3").unwrap(), Some(version));
    let mut raced = from.clone();
    let patch = crate::core::retrieval::record::MemoryPatch { text: Some("edited at its old shard".into()), ..Default::default() };
    raced.apply(&Op::Ltm(LtmOp::Update { id: "m3".into(), patch, vector: Some(vec![0.0, 0.0, 1.0, 0.0]), embedder: Some("test-4".into()), actor: None }), 45).unwrap();
    assert!(matches!(raced.apply(&Op::HandedOver { id: "m3".into(), version }, 46).unwrap(), Applied::Moved { applied: false, removed: 0, .. }));
    assert!(raced.longterm.get("m3").is_some(), "an edit made meanwhile is kept");
    let mut fresh = Engine::new();
    fresh.apply(&Op::Adopt { item: Box::new(item.clone()), embedder: Some("test-4".into()) }, 47).unwrap();
    let newer = raced.move_item("m/m3").unwrap().unwrap();
    fresh.apply(&Op::Adopt { item: Box::new(newer.clone()), embedder: Some("test-4".into()) }, 48).unwrap();
    assert_eq!(fresh.longterm.get("m3").unwrap().text, "edited at its old shard", "the later state replaces the earlier");
    // The earlier state arriving late changes nothing.
    assert!(matches!(fresh.apply(&Op::Adopt { item: Box::new(item.clone()), embedder: Some("test-4".into()) }, 49).unwrap(), Applied::Moved { applied: false, .. }));
    assert_eq!(fresh.longterm.get("m3").unwrap().text, "edited at its old shard");
    // Another record under the same id (another creation) is never
    // replaced (refused whole), nor dropped.
    let mut other = Engine::new();
    let mut r = record(3, "another record, same id");
    r.record.created_at += 1;
    other.apply(&Op::Ltm(LtmOp::Create { records: vec![r], deduplicate: false, embedder: Some("test-4".into()), actor: None }), 50).unwrap();
    assert!(other.apply(&Op::Adopt { item: Box::new(item.clone()), embedder: Some("test-4".into()) }, 51).is_err());
    assert!(matches!(other.apply(&Op::HandedOver { id: "m3".into(), version }, 52).unwrap(), Applied::Moved { applied: false, .. }));
    assert_eq!(other.longterm.get("m3").unwrap().text, "another record, same id");
    assert!(matches!(from.apply(&Op::HandedOver { id: "m3".into(), version }, 53).unwrap(), Applied::Moved { applied: true, removed: 1, .. }));
    assert!(from.longterm.get("m3").is_none() && from.longterm.versions("m3").is_none());
    // The log carries the ops.
    let entry = LogEntry { now_ms: 30, op: Op::HandedOver { id: "m3".into(), version } };
    assert_eq!(decode_log_entry(7, &encode_log_entry(7, &entry).unwrap()).unwrap(), entry);
    let entry = LogEntry { now_ms: 30, op: adopt };
    assert_eq!(decode_log_entry(7, &encode_log_entry(7, &entry).unwrap()).unwrap(), entry);
}

#[test]
fn a_bad_batch_is_refused_whole() {
    let mut to = Engine::new();
    create(&mut to, 1, "held here", 5);
    let good = MoveItem::Memory { record: record(2, "good").record, vector: vec![1.0, 0.0, 0.0, 0.0], versions: vec![] };
    let before = to.clone();
    let bad = [
        ("wrong dimensions", MoveItem::Memory { record: record(3, "x").record, vector: vec![1.0, 0.0], versions: vec![] }),
        ("NaN", MoveItem::Memory { record: record(3, "x").record, vector: vec![f32::NAN, 0.0, 0.0, 0.0], versions: vec![] }),
        ("empty id", MoveItem::Memory { record: MemoryRecord::new("", "x", MemoryType::Semantic, 1), vector: vec![1.0, 0.0, 0.0, 0.0], versions: vec![] }),
        ("bad session", MoveItem::Session { session: Session::new(String::new(), 0), archived: vec![], tool_cache: None, decisions: None, extraction: None }),
    ];
    for (what, item) in bad {
        let op = Op::MoveIn { move_id: 1, seq: 1, items: vec![good.clone(), item], remove: vec!["m/m1".into()], embedder: Some("test-4".into()) };
        assert!(to.apply(&op, 9).is_err(), "{what} was taken");
        assert_eq!(to, before, "{what}: a refused batch changed the state");
    }
    let big = Op::MoveOut { keys: vec!["m/x".into(); limits::SHARD_MOVE_BATCH_ITEMS_MAX + 1] };
    assert!(matches!(to.apply(&big, 9), Err(Error::LimitExceeded { .. })));
    assert!(to.move_item("x/what").is_err(), "an unknown key kind is an error");
}

#[test]
fn diff_names_what_to_send_and_drop() {
    let d = |v: &[(&str, u64)]| v.iter().enumerate().map(|(i, (k, h))| (k.to_string(), *h, 10 - i as u64)).collect::<Vec<_>>();
    let diff = move_diff(&d(&[("b", 1), ("m/a", 2), ("m/c", 3), ("s/x", 4)]), &d(&[("b", 1), ("m/a", 9), ("m/b", 5), ("s/x", 4), ("s/y", 6)]));
    assert_eq!(diff.send, vec!["m/c", "m/a"], "in the old shard's order");
    assert_eq!(diff.remove, vec!["m/b", "s/y"]);
    assert!(move_diff(&d(&[("b", 1)]), &d(&[("b", 1)])).is_empty());
}

#[test]
fn a_moving_vector_is_base64_in_json_and_the_f32_sequence_in_the_log() {
    let mut r = MemoryRecord::new("m1".to_owned(), "a note", MemoryType::Semantic, 1_000);
    r.refresh_hash();
    let vector = vec![0.25f32, -1.5, 3.0e-7, f32::MAX];
    let item = MoveItem::Memory { record: r, vector: vector.clone(), versions: Vec::new() };
    let json = serde_json::to_value(&item).unwrap();
    let text = json["Memory"]["vector"].as_str().expect("a string in JSON");
    assert_eq!(text.len(), 22, "16 bytes as unpadded base64url");
    let back: MoveItem = serde_json::from_value(json.clone()).unwrap();
    assert_eq!(back, item, "bit for bit");
    // The op log's MessagePack keeps the number sequence: a batch logged by
    // an earlier release replays, and this one's reads back.
    let op = Op::MoveIn { move_id: 1, seq: 1, items: vec![item.clone()], remove: Vec::new(), embedder: None };
    let entry = LogEntry { now_ms: 5, op };
    let logged = encode_log_entry(1, &entry).unwrap();
    assert_eq!(decode_log_entry(1, &logged).unwrap(), entry);
    let positional = rmp_serde::to_vec(&item).unwrap();
    let as_numbers = rmp_serde::to_vec(&(&vector,)).unwrap();
    assert!(positional.windows(as_numbers.len() - 1).any(|w| w == &as_numbers[1..]), "the vector is an array of f32 in MessagePack");
    // A batch written with a number array (an earlier release's) is read.
    let mut legacy = json.clone();
    legacy["Memory"]["vector"] = serde_json::json!([0.25, -1.5, 3.0e-7, f32::MAX]);
    assert_eq!(serde_json::from_value::<MoveItem>(legacy).unwrap(), item);
    // Bad vectors are refused: NaN, a cut f32, not base64, too long.
    let nan = {
        let mut out = String::new();
        crate::core::privacy::pseudonym::base64url_encode(&f32::NAN.to_le_bytes(), &mut out);
        out
    };
    let long = {
        let mut out = String::new();
        crate::core::privacy::pseudonym::base64url_encode(&vec![0u8; 4 * (limits::VECTOR_DIM_MAX + 1)], &mut out);
        out
    };
    for bad in [nan.as_str(), "AAA", "not base64!", long.as_str()] {
        let mut j = json.clone();
        j["Memory"]["vector"] = serde_json::json!(bad);
        assert!(serde_json::from_value::<MoveItem>(j).is_err(), "{bad:.20}");
    }
}
