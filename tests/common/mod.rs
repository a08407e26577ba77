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
        let mut ctx = Ctx { now: 1_795_000_000_000, random: &mut rand, namespace: None, body_bytes_max: 1 << 20 };
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
    let core: MemoryCore = MemoryCore::open_async(store.clone(), opts.clone(), JsValue::UNDEFINED).await.unwrap();
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

    let again: MemoryCore = MemoryCore::open_async(store, opts, JsValue::UNDEFINED).await.unwrap();
    let text = settle(again.get_session("s".into(), None, None)).await.unwrap().as_string().unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["context"], "kept");
    assert_eq!(v["messages"].as_array().unwrap().len(), 5);
}

#[wasm_bindgen_test]
async fn errors_cross_as_js_errors_with_codes() {
    let core: MemoryCore = MemoryCore::open_async(JsValue::UNDEFINED, "{}".into(), JsValue::UNDEFINED).await.unwrap();
    let err = settle(core.put_session("s".into(), r#"{"ttl_seconds":"soon"}"#.into())).await.unwrap_err();
    assert!(err.is_instance_of::<js_sys::Error>());
    assert_eq!(code_of(&err), "invalid_input");
    let err = settle(core.append_messages("nope".into(), r#"{"messages":[{"role":"user","content":"x"}]}"#.into())).await.unwrap_err();
    assert_eq!(code_of(&err), "not_found");
    let err = MemoryCore::open_async(JsValue::from(42), "{}".into(), JsValue::UNDEFINED).await.err().unwrap();
    assert_eq!(code_of(&err), "invalid_input");
    let err = MemoryCore::open_async(JsValue::UNDEFINED, r#"{"chunk_bytes":1}"#.into(), JsValue::UNDEFINED).await.err().unwrap();
    assert_eq!(code_of(&err), "invalid_input");
}
