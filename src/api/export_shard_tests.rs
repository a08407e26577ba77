//! Export and import of a sharded tenant (issue 21) through the routes:
//! an export split under a map imports shard by shard, each shard holds
//! exactly what it owns, and the shards' streamed export imports into one
//! namespace that exports what the first did, page by page as well as in
//! one; a copy a split left behind and a deleted record's history are
//! exported once; records made while an export runs are left out; bad
//! files are refused whole; a replica published as the export streams
//! opens as one store holding it all.

use futures_util::future::LocalBoxFuture;
use futures_util::FutureExt;
use serde_json::{json, Value};

use super::export_stream::{export_step, head_ask, ExportAsk, ExportShards, Exporter};
use super::export_tests::seeded;
use super::tests::Api;
use crate::core::engine::export_page::{ExportHead, ExportHolds, ExportPage};
use crate::core::engine::export_shard::{split, Owners};
use crate::core::error::{Error, Result};
use crate::core::shard::{bucket_of, record_bucket, ShardId, ShardMap};

/// Shards in memory, asked as the Worker's front asks its objects.
struct Local<'a>(Vec<(ShardId, &'a Api)>);

impl ExportShards for Local<'_> {
    fn ask<'a>(&'a self, shard: ShardId, ask: &'a ExportAsk) -> LocalBoxFuture<'a, Result<Vec<u8>>> {
        Box::pin(async move {
            let api = self.0.iter().find(|(s, _)| *s == shard).expect("a shard of the map").1;
            export_step(&api.store, &serde_json::to_vec(ask).unwrap(), 0).await
        })
    }
}

/// The heads of every shard of `map`.
fn heads(src: &Local<'_>, map: &ShardMap) -> Result<Vec<(ShardId, Vec<u8>)>> {
    map.shards().into_iter().map(|s| Ok((s, src.ask(s, &head_ask(map.buckets_of(s), true)).now_or_never().unwrap()?))).collect()
}

/// The shards' export, streamed page by page (`page_items` walked at most
/// per page), as one text.
fn merge(shards: &[(ShardId, &Api)], map: &ShardMap, page_items: usize) -> Result<String> {
    let src = Local(shards.to_vec());
    let heads = heads(&src, map)?;
    let (ex, first) = Exporter::new(src, map, true, heads)?;
    ex.page_items(page_items).collect(first, usize::MAX).now_or_never().unwrap()
}

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

/// `spread()` and its export with vectors.
fn spread_exported() -> (Api, String) {
    let mut api = spread();
    let whole = export(&mut api);
    (api, whole)
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
    let (_, whole) = spread_exported();
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
    let refs: Vec<(ShardId, &Api)> = shards.iter().map(|(s, api)| (*s, api)).collect();
    let merged = merge(&refs, &map, 4096).unwrap();
    let mut back = import(&merged);
    assert_eq!(normal(&export(&mut back)), normal(&whole), "merged, imported and exported again: the original's lines");
    // Pages of one and of three items walked: the same file, byte for byte
    // but the header's time.
    for items in [1, 3] {
        assert_eq!(merged.split_once('\n').unwrap().1, merge(&refs, &map, items).unwrap().split_once('\n').unwrap().1, "pages of {items}");
    }
    // The same export again imports as a no-op.
    assert_eq!(back.call("POST", "/v1/import", &merged).body["imported"], false);
    // A deleted record's history is in it once.
    assert_eq!(merged.lines().filter(|l| l.contains("\"type\":\"versions\"") && l.contains("\"id\":\"gone\"")).count(), 1);
}

#[test]
fn a_copy_left_behind_by_a_split_and_a_deleted_records_history_are_exported_once() {
    let (source, whole) = spread_exported();
    let map = ShardMap::even(3).unwrap();
    let owners = Owners { map: &map, key: None };
    let parts = split(&whole, &owners).unwrap();
    let shards: Vec<(ShardId, Api)> = parts.iter().map(|(s, t)| (*s, import(t))).collect();
    let refs: Vec<(ShardId, &Api)> = shards.iter().map(|(s, api)| (*s, api)).collect();
    let clean = merge(&refs, &map, 2).unwrap();
    // Home still holding everything, as before a split's collection: every
    // record and history of shards 1 and 2 is in two shards.
    let stale: Vec<(ShardId, &Api)> = vec![(0, &source), refs[1], refs[2]];
    let merged = merge(&stale, &map, 2).unwrap();
    assert_eq!(normal(&merged), normal(&clean));
    assert_eq!(ids_of(&merged, "memory").len(), ids_of(&whole, "memory").len(), "each record once");
    let histories = |t: &str| t.lines().filter(|l| l.contains("\"type\":\"versions\"")).count();
    assert_eq!(histories(&merged), histories(&whole), "each history once");
    assert!(histories(&whole) > 1);
}

#[test]
fn a_sharded_tenants_replica_is_published_as_its_export_streams_and_opens_as_one_store() {
    use crate::store::{publish_export, MemoryBackend, Store, StoreConfig};
    let (source, whole) = spread_exported();
    let map = ShardMap::even(3).unwrap();
    let parts = split(&whole, &Owners { map: &map, key: None }).unwrap();
    let shards: Vec<(ShardId, Api)> = parts.iter().map(|(s, t)| (*s, import(t))).collect();
    let publish = |vectors: bool| {
        // Home still holding everything, as before a split's collection.
        let stale = Local(vec![(0, &source), (1, &shards[1].1), (2, &shards[2].1)]);
        let heads: Vec<(ShardId, Vec<u8>)> = map.shards().into_iter().map(|s| (s, stale.ask(s, &head_ask(map.buckets_of(s), vectors)).now_or_never().unwrap().unwrap())).collect();
        let (ex, first) = Exporter::new(stale, &map, vectors, heads).unwrap();
        let mirror = MemoryBackend::new();
        let config = StoreConfig { key_prefix: "kv/".into(), chunk_bytes: 1000, ..StoreConfig::default() };
        let stats = publish_export(&mirror, &config, first, &mut ex.page_items(3)).now_or_never().unwrap().unwrap();
        (mirror, stats)
    };
    let (mirror, stats) = publish(true);
    assert!(mirror.dump().keys().filter(|k| k.starts_with("kv/snap/")).count() as u64 >= stats.snapshot_bytes / 1000, "written a chunk at a time");
    let replica = Store::open_published(&mirror, "kv/").now_or_never().unwrap().unwrap();
    let lines = replica.read(|e| e.export_lines(true, 0)).now_or_never().unwrap().unwrap().unwrap();
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    assert_eq!(normal(&text), normal(&whole), "the replica holds what one store holding every shard's would, each record once");
    assert_eq!(replica.read(|e| e.last_seq()).now_or_never().unwrap().unwrap(), stats.last_seq);
    // An export without vectors is no replica: its reader would embed.
    let (mirror, _) = publish(false);
    let e = Store::open_published(&mirror, "kv/").now_or_never().unwrap().err().unwrap();
    assert_eq!((e.code(), e.to_string().contains("without their vectors")), ("snapshot_corrupt", true), "{e}");
}

#[test]
fn records_made_while_an_export_runs_are_left_out_and_none_is_in_it_twice() {
    let (_, whole) = spread_exported();
    let map = ShardMap::even(2).unwrap();
    let parts = split(&whole, &Owners { map: &map, key: None }).unwrap();
    let mut shards: Vec<(ShardId, Api)> = parts.iter().map(|(s, t)| (*s, import(t))).collect();
    // The heads are the export's cut.
    let heads = heads(&Local(shards.iter().map(|(s, api)| (*s, api)).collect()), &map).unwrap();
    // Then, in every shard: a record deleted and made again under its id
    // (a new key, above the cut) and a new record.
    let ids = ids_of(&whole, "memory");
    for (s, api) in shards.iter_mut() {
        let id = ids.iter().find(|id| map.owner(record_bucket(None, id)) == *s && whole.contains(&format!("\"id\":\"{id}\",\"text\":\"a note"))).expect("a record without a user here").clone();
        assert_eq!(api.call("DELETE", &format!("/v1/long-term-memory?memory_ids={id}"), "").status, 200);
        let again = json!({ "memories": [{ "id": id, "text": "made again" }, { "id": format!("late-{s}"), "text": "made while the export ran" }] });
        let r = api.call("POST", "/v1/long-term-memory/", &again.to_string());
        assert_eq!(r.status, 200, "{}", r.body);
    }
    let src = Local(shards.iter().map(|(s, api)| (*s, api)).collect());
    let (ex, first) = Exporter::new(src, &map, true, heads).unwrap();
    let text = ex.page_items(2).collect(first, usize::MAX).now_or_never().unwrap().unwrap();
    let got = ids_of(&text, "memory");
    let mut distinct = got.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), got.len(), "no record twice");
    assert!(!got.iter().any(|id| id.starts_with("late-")), "records made after the heads are left out");
    assert_eq!(got.len(), ids.len() - 2, "the records deleted after the heads are gone, their new copies not in");
    import(&text);
}

#[test]
fn bad_files_are_refused_before_any_shard_is_written() {
    let (_, whole) = spread_exported();
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
    let shards: Vec<(ShardId, Api)> = parts.iter().map(|(s, t)| (*s, import(t))).collect();
    let src = Local(shards.iter().map(|(s, api)| (*s, api)).collect());
    let mut heads = heads(&src, &map).unwrap();
    let mut head = ExportHead::from_text(std::str::from_utf8(&heads[1].1).unwrap()).unwrap();
    let mut header: Value = serde_json::from_str(&head.header).unwrap();
    assert_eq!(header["embedder"], whole_embedder(&whole));
    header["embedder"] = json!("another-embedder");
    head.header = header.to_string();
    heads[1].1 = head.to_text().into_bytes();
    let err = Exporter::new(src, &map, true, heads).err().expect("refused");
    assert_eq!(err.code(), "embedder_mismatch", "{err}");
    // A shard asked for too many ids at once, or a page after a bad key.
    let api = &shards[0].1;
    let ask = |body: Value| export_step(&api.store, body.to_string().as_bytes(), 0).now_or_never().unwrap();
    let ids: Vec<String> = (0..=crate::core::limits::SHARD_EXPORT_PAGE_ITEMS_MAX).map(|i| i.to_string()).collect();
    assert_eq!(ask(json!({ "buckets": [], "step": "holds", "ids": ids, "keys_below": 1 })).unwrap_err().code(), "limit_exceeded");
    assert_eq!(ask(json!({ "buckets": [], "step": "page", "part": "memories", "after": "x", "keys_below": 9 })).unwrap_err().code(), "invalid_input");
    assert_eq!(ask(json!({ "buckets": [], "step": "page" })).unwrap_err().code(), "invalid_input", "a page without its part");
    assert_eq!(ask(json!({ "buckets": [99999], "vectors": false, "step": "head" })).unwrap_err().code(), "invalid_input");
}

fn whole_embedder(text: &str) -> Value {
    serde_json::from_str::<Value>(text.lines().next().unwrap()).unwrap()["embedder"].clone()
}

#[test]
fn a_shard_checks_its_part_without_writing_and_refuses_other_state() {
    let (mut source, whole) = spread_exported();
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

#[test]
fn a_file_streamed_line_by_line_splits_as_the_whole_file_and_a_line_after_its_end_is_refused() {
    use crate::core::engine::export_shard::Splitter;
    let (_, whole) = spread_exported();
    let map = ShardMap::even(3).unwrap();
    let owners = Owners { map: &map, key: None };
    let mut splitter = Splitter::new(&owners);
    let mut parts: std::collections::BTreeMap<ShardId, String> = Default::default();
    // Blank lines between, as a hand-edited file may have.
    for (i, line) in whole.replace("\n{\"type\":\"memory\"", "\n\n{\"type\":\"memory\"").split('\n').enumerate() {
        for (s, l) in splitter.line(i + 1, line).unwrap() {
            parts.entry(s).or_default().push_str(&format!("{l}\n"));
        }
    }
    for (s, l) in splitter.finish().unwrap() {
        parts.entry(s).or_default().push_str(&format!("{l}\n"));
    }
    assert_eq!(parts.into_iter().collect::<Vec<_>>(), split(&whole, &owners).unwrap());
    // Each part imports (its end line counts its lines, the header's among them).
    for (_, part) in split(&whole, &owners).unwrap() {
        import(&part);
    }
    let mut after = Splitter::new(&owners);
    let n = whole.lines().count();
    for (i, line) in whole.lines().enumerate() {
        after.line(i + 1, line).unwrap();
    }
    assert_eq!(after.line(n + 1, "{\"type\":\"ledger\",\"ledger\":null}").unwrap_err().code(), "invalid_input");
    assert!(Splitter::new(&owners).finish().is_err(), "no header");
}

#[test]
fn a_shards_answers_read_back_as_written_and_bad_ones_are_refused() {
    let head = ExportHead { header: "{\"format\":\"edgemem-export\"}".into(), next_key: 7, records: 3, state: vec!["{\"type\":\"ledger\",\"ledger\":null}".into()] };
    assert_eq!(ExportHead::from_text(&head.to_text()).unwrap(), head);
    let page = ExportPage { lines: vec!["{\"a\":1}".into(), "{\"b\":\"x\\ny\"}".into()], orphans: vec![(1, "b".into())], next: Some("k9".into()) };
    assert_eq!(ExportPage::from_text(&page.to_text()).unwrap(), page);
    let empty = ExportPage::default();
    assert_eq!(ExportPage::from_text(&empty.to_text()).unwrap(), empty);
    let holds = ExportHolds { held: vec!["a".into()], histories: vec![] };
    assert_eq!(ExportHolds::from_text(&holds.to_text()).unwrap(), holds);
    // An orphan past the page's lines, a head without its header, not JSON.
    assert!(ExportPage::from_text("{\"next\":null,\"orphans\":[[2,\"x\"]]}\n{}").is_err());
    assert!(ExportHead::from_text("{\"next_key\":1,\"records\":0}").is_err());
    assert!(ExportHolds::from_text("held").is_err());
}
