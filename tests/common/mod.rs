//! Test bodies shared by `tests/wasm_node.rs` and `tests/wasm_browser.rs`:
//! the same assertions run under Node and under headless Chromium.

use edgemem::api::{self, Ctx, Request};
use edgemem::core::{Engine, Op, Session};
use edgemem::js::MemoryCore;
use edgemem::store::{now_or_never, MemoryBackend, Store, StoreConfig};
use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::wasm_bindgen_test;

async fn settle(p: Promise) -> Result<JsValue, JsValue> {
    JsFuture::from(p).await
}

fn code_of(err: &JsValue) -> String {
    Reflect::get(err, &"code".into()).ok().and_then(|c| c.as_string()).unwrap_or_default()
}

/// A store written in plain JS, as a user would supply one.
fn js_map_store() -> JsValue {
    Function::new_no_args(
        "const m = new Map();
         return { m,
           get: async (k) => m.get(k),
           put: async (k, v) => { m.set(k, v.slice()); },
           delete: async (k) => { m.delete(k); },
           list: async (p) => [...m.keys()].filter((k) => k.startsWith(p)) };",
    )
    .call0(&JsValue::NULL)
    .unwrap()
}

#[wasm_bindgen_test]
fn engine_snapshot_round_trip_on_wasm32() {
    let mut e = Engine::new();
    let mut s = Session::new("w".into(), 0);
    s.context = Some("ünïcode ✓ 🌍".into());
    s.ttl_seconds = Some(5);
    e.apply(&Op::SessionPut { session: s }, 1_795_000_000_000).unwrap();
    let back = Engine::decode_snapshot(&e.encode_snapshot().unwrap()).unwrap();
    assert_eq!(back, e);
    let mut bad = e.encode_snapshot().unwrap();
    let n = bad.len();
    bad[n - 1] ^= 1;
    assert_eq!(Engine::decode_snapshot(&bad).unwrap_err().code(), "snapshot_corrupt");
}

#[wasm_bindgen_test]
fn api_routes_answer_on_wasm32() {
    let store = now_or_never(Store::open(MemoryBackend::new(), StoreConfig::default())).unwrap().unwrap();
    let mut rand = || [7u8; 10];
    let mut call = |method: &str, target: &str, body: &str| {
        let (path, query) = api::split_target(target);
        let req = Request { method, path, query, body: body.as_bytes() };
        let mut ctx = Ctx::new(1_795_000_000_000, &mut rand, None, 1 << 20, &api::services::Offline);
        now_or_never(api::handle(&store, &req, &mut ctx)).unwrap()
    };
    assert_eq!(call("PUT", "/v1/working-memory/x", r#"{"messages":[{"role":"user","content":"hi"}]}"#).status, 200);
    assert_eq!(call("GET", "/v1/working-memory/x", "").body["messages"][0]["created_at"], "2026-11-18T11:06:40.000Z");
    assert_eq!(call("PUT", "/v1/working-memory/x", "{oops").status, 400);
    assert_eq!(call("GET", "/v1/working-memory/y", "").status, 404);
}

#[wasm_bindgen_test]
async fn memory_core_persists_on_a_js_store_and_reopens() {
    let store = js_map_store();
    let opts = r#"{"snapshot_every_ops":3,"chunk_bytes":64}"#.to_owned();
    let core: MemoryCore = MemoryCore::open_async(store.clone(), opts.clone(), JsValue::UNDEFINED, JsValue::UNDEFINED).await.unwrap();
    settle(core.put_session("s".into(), r#"{"context":"kept"}"#.into())).await.unwrap();
    for i in 0..5 {
        let body = format!(r#"{{"messages":[{{"role":"user","content":"m{i}"}}]}}"#);
        settle(core.append_messages("s".into(), body)).await.unwrap();
    }
    // getrandom works here: the generated message ids are distinct ULIDs.
    let text = settle(core.get_session("s".into(), None, None)).await.unwrap().as_string().unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let ids: std::collections::HashSet<&str> = v["messages"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 5);

    let again: MemoryCore = MemoryCore::open_async(store, opts, JsValue::UNDEFINED, JsValue::UNDEFINED).await.unwrap();
    let text = settle(again.get_session("s".into(), None, None)).await.unwrap().as_string().unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["context"], "kept");
    assert_eq!(v["messages"].as_array().unwrap().len(), 5);
}

fn entry(key_id: &str, passphrase: &str) -> JsValue {
    let list = js_sys::Array::new();
    let e = js_sys::Object::new();
    Reflect::set(&e, &"keyId".into(), &key_id.into()).unwrap();
    Reflect::set(&e, &"passphrase".into(), &passphrase.into()).unwrap();
    list.push(&e);
    list.into()
}

/// Whether any value of a `js_map_store` holds `needle`.
fn store_holds(store: &JsValue, needle: &[u8]) -> bool {
    let map: js_sys::Map = Reflect::get(store, &"m".into()).unwrap().unchecked_into();
    let mut found = false;
    map.for_each(&mut |v, _k| {
        let bytes = js_sys::Uint8Array::new(&v).to_vec();
        found |= bytes.windows(needle.len()).any(|w| w == needle);
    });
    found
}

/// AES-256-GCM through this host's real WebCrypto (Node's, then
/// Chromium's): nothing stored holds the plaintext, a wrong passphrase is
/// `decryption_failed`, no key is `key_required`, and the right one reopens.
#[wasm_bindgen_test]
async fn webcrypto_seals_every_stored_value() {
    let store = js_map_store();
    let opts = r#"{"snapshot_every_ops":3,"chunk_bytes":64}"#.to_owned();
    let core = MemoryCore::open_async(store.clone(), opts.clone(), JsValue::UNDEFINED, entry("k1", "correct horse battery")).await.unwrap();
    for i in 0..5 {
        let body = format!(r#"{{"context":"okapi-sentinel {i}"}}"#);
        settle(core.put_session(format!("s{i}"), body)).await.unwrap();
    }
    assert!(!store_holds(&store, b"okapi-sentinel"), "plaintext reached the store");
    assert!(store_holds(&store, b"EMX1"), "values are sealed envelopes");
    let err = MemoryCore::open_async(store.clone(), opts.clone(), JsValue::UNDEFINED, JsValue::UNDEFINED).await.err().unwrap();
    assert_eq!(code_of(&err), "key_required");
    let err = MemoryCore::open_async(store.clone(), opts.clone(), JsValue::UNDEFINED, entry("k1", "wrong horse battery")).await.err().unwrap();
    assert_eq!(code_of(&err), "decryption_failed");
    let again = MemoryCore::open_async(store, opts, JsValue::UNDEFINED, entry("k1", "correct horse battery")).await.unwrap();
    let text = settle(again.get_session("s4".into(), None, None)).await.unwrap().as_string().unwrap();
    assert!(text.contains("okapi-sentinel 4"), "{text}");
}

#[wasm_bindgen_test]
async fn errors_cross_as_js_errors_with_codes() {
    let core: MemoryCore = MemoryCore::open_async(JsValue::UNDEFINED, "{}".into(), JsValue::UNDEFINED, JsValue::UNDEFINED).await.unwrap();
    let err = settle(core.put_session("s".into(), r#"{"ttl_seconds":"soon"}"#.into())).await.unwrap_err();
    assert!(err.is_instance_of::<js_sys::Error>());
    assert_eq!(code_of(&err), "invalid_input");
    let err = settle(core.append_messages("nope".into(), r#"{"messages":[{"role":"user","content":"x"}]}"#.into())).await.unwrap_err();
    assert_eq!(code_of(&err), "not_found");
    let err = MemoryCore::open_async(JsValue::from(42), "{}".into(), JsValue::UNDEFINED, JsValue::UNDEFINED).await.err().unwrap();
    assert_eq!(code_of(&err), "invalid_input");
    let err = MemoryCore::open_async(JsValue::UNDEFINED, r#"{"chunk_bytes":1}"#.into(), JsValue::UNDEFINED, JsValue::UNDEFINED).await.err().unwrap();
    assert_eq!(code_of(&err), "invalid_input");
}

/// The vector index's wasm SIMD path (this build has `+simd128`) must agree
/// with exact search, survive a round trip, and refuse bad vectors.
#[wasm_bindgen_test]
fn vector_index_simd_search_on_wasm32() {
    use edgemem::core::vector::{Config, Eligible, Metric, Scratch, SearchParams, VectorIndex};
    let dim = 48;
    let mut index = VectorIndex::new(Config::new(dim, Metric::Cosine).seal_points(512)).unwrap();
    let mut x = 1u32;
    let mut next = || {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        (x >> 8) as f32 / (1 << 24) as f32 - 0.5
    };
    let rows: Vec<f32> = (0..1_500 * dim).map(|_| next()).collect();
    let keys: Vec<u64> = (0..1_500).collect();
    index.add_batch(&keys, &rows).unwrap();
    index.compact(4_096).unwrap();
    let (mut scratch, mut got, mut want) = (Scratch::default(), Vec::new(), Vec::new());
    let mut hits = 0;
    for q in 0..50 {
        let query = &rows[q * dim..(q + 1) * dim];
        let p = SearchParams { k: 10, ef: Some(128) };
        index.search(query, &p, &Eligible::All, &mut scratch, &mut got).unwrap();
        index.search_exact(query, &p, &Eligible::All, &mut scratch, &mut want).unwrap();
        assert_eq!(got[0].key, q as u64, "a stored vector finds itself");
        hits += got.iter().filter(|h| want.iter().any(|w| w.key == h.key)).count();
    }
    assert!(hits as f64 / 500.0 >= 0.95, "recall@10 {hits}/500");
    let back = VectorIndex::decode(&index.encode()).unwrap();
    back.search(&rows[..dim], &SearchParams { k: 10, ef: Some(128) }, &Eligible::All, &mut scratch, &mut want).unwrap();
    index.search(&rows[..dim], &SearchParams { k: 10, ef: Some(128) }, &Eligible::All, &mut scratch, &mut got).unwrap();
    assert_eq!(got, want);
    let mut bad = rows[..dim].to_vec();
    bad[3] = f32::NAN;
    assert_eq!(index.add(9_999, &bad).unwrap_err().code(), "non_finite");
    assert_eq!(index.add(9_999, &rows[..dim - 1]).unwrap_err().code(), "dimension_mismatch");
}

/// Compaction through the extractive summarizer and long-term recall, in
/// process on wasm32, through the same API functions as the Worker.
#[wasm_bindgen_test]
fn history_and_long_term_routes_on_wasm32() {
    let store = now_or_never(Store::open(MemoryBackend::new(), StoreConfig::default())).unwrap().unwrap();
    let mut n = 0u8;
    let mut rand = || {
        n = n.wrapping_add(1);
        [n; 10]
    };
    let mut call = |method: &str, target: &str, body: &str| {
        let (path, query) = api::split_target(target);
        let req = Request { method, path, query, body: body.as_bytes() };
        let mut ctx = Ctx::new(1_795_000_000_000, &mut rand, None, 1 << 20, &api::services::Offline);
        now_or_never(api::handle(&store, &req, &mut ctx)).unwrap()
    };
    let turns: Vec<String> = (0..60).map(|i| format!(r#"{{"role":"user","content":"Turn {i}: parcel P-{i} ships to Porto."}}"#)).collect();
    let r = call("PUT", "/v1/working-memory/s?context_window_max=600", &format!(r#"{{"messages":[{}]}}"#, turns.join(",")));
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body["messages"].as_array().unwrap().len() < 60);
    assert!(r.body["context"].as_str().unwrap().contains("P-"));
    let mems = r#"{"memories":[{"id":"a","text":"The user is allergic to peanuts."},{"id":"b","text":"The user flew to Lisbon."}]}"#;
    assert_eq!(call("POST", "/v1/long-term-memory/", mems).status, 200);
    let s = call("POST", "/v1/long-term-memory/search", r#"{"text":"peanuts","search_mode":"hybrid"}"#);
    assert_eq!(s.body["memories"][0]["id"], "a", "{}", s.body);
}
