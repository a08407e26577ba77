//! Export and import of a sharded tenant (issue 21) through the routes:
//! an export split under a map imports shard by shard, each shard holds
//! exactly what it owns, and the shards' exports merged import into one
//! namespace that exports what the first did; a copy a split left behind
//! is not exported twice; bad files are refused whole.

use serde_json::{json, Value};

use super::export_tests::seeded;
use super::tests::Api;
use crate::core::engine::export_shard::{merge, split, Owners};
use crate::core::error::Error;
use crate::core::shard::{bucket_of, record_bucket, ShardId, ShardMap};

/// `seeded()` with sessions, decision logs and records over many users.
fn spread() -> Api {
    let mut api = seeded();
    for i in 0..16 {
        let r = api.call("PUT", &format!("/v1/working-memory/trip-{i}"), &json!({ "messages": [{ "role": "user", "content": format!("leg {i} to Porto") }], "user_id": format!("user-{}", i % 5) }).to_string());
        assert_eq!(r.status, 200, "{}", r.body);
        let r = api.call("POST", &format!("/v1/working-memory/trip-{i}/decisions"), &json!({ "kind": "decision", "text": format!("booked leg {i}") }).to_string());
        assert_eq!(r.status, 200, "{}", r.body);
    }
    let memories: Vec<Value> = (0..40).map(|i| if i % 7 == 0 { json!({ "id": format!("n{i}"), "text": format!("a note without a user, {i}") }) } else { json!({ "id": format!("n{i}"), "text": format!("user note {i} about Porto"), "user_id": format!("user-{}", i % 5) }) }).collect();
    let r = api.call("POST", "/v1/long-term-memory/", &json!({ "memories": memories }).to_string());
    assert_eq!(r.status, 200, "{}", r.body);
    api
}

fn export(api: &mut Api) -> String {
    let mut r = api.call("GET", "/v1/export?vectors=f32", "");
    assert_eq!(r.status, 200, "{}", r.body);
    String::from_utf8(r.raw.take().unwrap()).unwrap()
}

fn import(text: &str) -> Api {
    let mut api = Api::new();
    let r = api.call("POST", "/v1/import", text);
    assert_eq!(r.status, 200, "{}", r.body);
    api
}

/// An export's lines compared as sets: the header's time, records' keys
/// and the key counter are a store's own.
fn normal(text: &str) -> Vec<String> {
    let mut out: Vec<String> = text
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] != "longterm" && v["type"] != "end")
        .map(|mut v| {
            if let Some(m) = v.as_object_mut() {
                m.remove("key");
            }
            v.to_string()
        })
        .collect();
    out.sort();
    out
}

fn ids_of(text: &str, kind: &str) -> Vec<String> {
    text.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == kind)
        .map(|v| if kind == "session" { v["session"]["session_id"].as_str().unwrap().to_owned() } else { v["record"]["id"].as_str().unwrap().to_owned() })
        .collect()
}

#[test]
fn an_export_split_by_shard_and_merged_back_imports_as_the_original() {
    let mut source = spread();
    let whole = export(&mut source);
    let map = ShardMap::even(3).unwrap();
    let owners = Owners { map: &map, key: None };
    let parts = split(&whole, &owners).unwrap();
    assert_eq!(parts.iter().map(|(s, _)| *s).collect::<Vec<_>>(), vec![0, 1, 2]);
    let mut shards: Vec<(ShardId, Api)> = parts.iter().map(|(s, t)| (*s, import(t))).collect();
    let exports: Vec<(ShardId, String)> = shards.iter_mut().map(|(s, api)| (*s, export(api))).collect();
    // Each shard holds exactly what it owns, and together everything.
    let (mut sessions, mut records) = (0, 0);
    for (s, t) in &exports {
        for id in ids_of(t, "session") {
            assert_eq!(map.owner(bucket_of(&id)), *s, "session {id}");
            sessions += 1;
        }
        for l in t.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()).filter(|v| v["type"] == "memory") {
            assert_eq!(map.owner(record_bucket(l["record"]["user_id"].as_str(), l["record"]["id"].as_str().unwrap())), *s, "{}", l["record"]["id"]);
            records += 1;
        }
        let has_ledger = t.lines().any(|l| l.contains("\"type\":\"ledger\"") && l.contains("\"t1\""));
        assert_eq!(has_ledger, *s == 0, "the ledger lives at home only");
    }
    assert_eq!((sessions, records), (ids_of(&whole, "session").len(), ids_of(&whole, "memory").len()));
    assert!(exports.iter().all(|(_, t)| !ids_of(t, "session").is_empty()), "every shard holds sessions");
    let texts: Vec<(ShardId, &str)> = exports.iter().map(|(s, t)| (*s, t.as_str())).collect();
    let merged = merge(&texts, &owners).unwrap();
    let mut back = import(&merged);
    assert_eq!(normal(&export(&mut back)), normal(&whole), "merged, imported and exported again: the original's lines");
    // The same merge again is the same file (a retried import is a no-op).
    assert_eq!(merge(&texts, &owners).unwrap(), merged);
    assert_eq!(back.call("POST", "/v1/import", &merged).body["imported"], false);
}

#[test]
fn a_copy_left_behind_by_a_split_is_exported_once() {
    let mut source = spread();
    let whole = export(&mut source);
    let map = ShardMap::even(3).unwrap();
    let owners = Owners { map: &map, key: None };
    let parts = split(&whole, &owners).unwrap();
    let exports: Vec<(ShardId, String)> = parts.iter().map(|(s, t)| (*s, export(&mut import(t)))).collect();
    let clean = merge(&exports.iter().map(|(s, t)| (*s, t.as_str())).collect::<Vec<_>>(), &owners).unwrap();
    // Home still holding everything, as before a split's collection.
    let stale: Vec<(ShardId, &str)> = vec![(0, whole.as_str()), (1, exports[1].1.as_str()), (2, exports[2].1.as_str())];
    let merged = merge(&stale, &owners).unwrap();
    assert_eq!(normal(&merged), normal(&clean));
    assert_eq!(ids_of(&merged, "memory").len(), ids_of(&whole, "memory").len(), "each record once");
}

#[test]
fn bad_files_are_refused_before_any_shard_is_written() {
    let mut source = spread();
    let whole = export(&mut source);
    let map = ShardMap::even(2).unwrap();
    let owners = Owners { map: &map, key: None };
    let cut: String = whole.lines().take(5).map(|l| format!("{l}\n")).collect();
    assert!(matches!(split(&cut, &owners), Err(Error::InvalidInput { .. })), "a cut file");
    let future = whole.replacen("\"schema_version\":1", "\"schema_version\":99", 1);
    assert!(matches!(split(&future, &owners), Err(Error::SchemaVersionUnsupported { found: 99, .. })));
    let unknown = whole.replacen("{\"type\":\"ledger\"", "{\"type\":\"surprise\"", 1);
    assert!(split(&unknown, &owners).is_err());
    assert!(split("not json\n", &owners).is_err());
    assert!(split("", &owners).is_err());
    // Two shards' records made by different embedders: refused, typed.
    let parts = split(&whole, &owners).unwrap();
    let other = parts[1].1.replacen(&format!("\"embedder\":{}", serde_json::to_string(&whole_embedder(&whole)).unwrap()), "\"embedder\":\"another-embedder\"", 1);
    let err = merge(&[(0, parts[0].1.as_str()), (1, other.as_str())], &owners).unwrap_err();
    assert_eq!(err.code(), "embedder_mismatch", "{err}");
}

fn whole_embedder(text: &str) -> Value {
    serde_json::from_str::<Value>(text.lines().next().unwrap()).unwrap()["embedder"].clone()
}

#[test]
fn a_shard_checks_its_part_without_writing_and_refuses_other_state() {
    let mut source = spread();
    let whole = export(&mut source);
    let map = ShardMap::even(2).unwrap();
    let parts = split(&whole, &Owners { map: &map, key: None }).unwrap();
    let check = |api: &Api, text: &str| futures_util::FutureExt::now_or_never(super::export::check(&api.store, text.as_bytes())).unwrap();
    let mut empty = Api::new();
    assert_eq!(check(&empty, &parts[1].1).unwrap()["import"], "write");
    assert_eq!(empty.call("GET", "/v1/stats", "").body["long_term_memories"], 0, "a check writes nothing");
    let imported = import(&parts[1].1);
    assert_eq!(check(&imported, &parts[1].1).unwrap()["import"], "no-op", "the same part again");
    assert_eq!(check(&imported, &parts[0].1).unwrap_err().code(), "import_target_not_empty");
    // A part without vectors is checked line by line (embedded on import).
    let mut plain = source.call("GET", "/v1/export", "");
    let plain = String::from_utf8(plain.raw.take().unwrap()).unwrap();
    let parts = split(&plain, &Owners { map: &map, key: None }).unwrap();
    assert_eq!(check(&imported, &parts[0].1).unwrap()["import"], "unchecked");
    assert!(check(&empty, "{\"format\":\"edgemem-export\",\"schema_version\":1,\"last_seq\":1}\n").is_err(), "a cut part");
}
