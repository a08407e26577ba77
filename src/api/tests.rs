//! Every route, natively, on the in-memory backend.

use super::*;
use crate::core::budget::Counter;
use crate::store::{now_or_never, MemoryBackend, StoreConfig};

pub(super) struct Api {
    pub(super) store: Store<MemoryBackend>,
    pub(super) services: TestServices,
    pub(super) backend: MemoryBackend,
    pub(super) now: Millis,
    counter: u64,
}

/// Exact encodings from the pinned npm data, and a scriptable summarizer.
#[derive(Default)]
pub(super) struct TestServices {
    /// `None`: the extractive default; `Some(Ok(text))`: the hook answers
    /// `text`; `Some(Err(()))`: the hook throws.
    pub(super) hook: Option<std::result::Result<String, ()>>,
    /// The service upstream: each service's answer (absent: no upstream).
    pub(super) upstream: Option<std::collections::BTreeMap<String, Result<String>>>,
    /// Upstream calls made.
    pub(super) upstream_calls: std::cell::Cell<usize>,
    /// The extractor hook: `None` the offline rules; `Some(Ok(json))` the
    /// hook answers `json`; `Some(Err(()))` it throws.
    pub(super) extractor: Option<std::result::Result<String, ()>>,
    /// Extractor calls made.
    pub(super) extract_calls: std::cell::Cell<usize>,
    /// A tenant-wide external vector index (none by default).
    pub(super) external: Option<crate::api::external_index::LocalFake>,
    /// A sharded tenant's other shards, for summary-view runs at home
    /// (none: an unsharded store).
    pub(super) shards: Vec<Store<MemoryBackend>>,
}

impl services::Services for TestServices {
    fn encoding(&self, name: crate::core::tokenizer::EncodingName) -> futures_util::future::LocalBoxFuture<'_, Result<std::rc::Rc<crate::core::tokenizer::Encoding>>> {
        use crate::core::tokenizer::{ranks::Ranks, Encoding};
        Box::pin(async move {
            thread_local! {
                static CACHE: std::cell::RefCell<Vec<std::rc::Rc<Encoding>>> = const { std::cell::RefCell::new(Vec::new()) };
            }
            if let Some(e) = CACHE.with(|c| c.borrow().iter().find(|e| e.name() == name).cloned()) {
                return Ok(e);
            }
            let path = format!("{}/node_modules/gpt-tokenizer/data/{}.tiktoken", env!("CARGO_MANIFEST_DIR"), name.as_str());
            let text = std::fs::read_to_string(&path).map_err(|e| Error::storage(format!("{path}: {e}")))?;
            let enc = std::rc::Rc::new(Encoding::from_ranks(name, Ranks::from_tiktoken(&text)?)?);
            CACHE.with(|c| c.borrow_mut().push(enc.clone()));
            Ok(enc)
        })
    }

    fn external_index(&self) -> Option<&dyn crate::api::external_index::ExternalIndex> {
        self.external.as_ref().map(|x| x as &dyn crate::api::external_index::ExternalIndex)
    }

    fn summarize<'a>(&'a self, _: &'a [crate::core::session::Message], _: Option<&'a str>, _: usize) -> Option<futures_util::future::LocalBoxFuture<'a, Result<String>>> {
        let answer = self.hook.clone()?;
        Some(Box::pin(async move { answer.map_err(|()| Error::HookFailed { hook: "summarizer".into(), reason: "the hook threw: model overloaded".into() }) }))
    }

    fn extract<'a>(&'a self, _: &'a crate::core::extract::Strategy, turns: &'a [crate::core::session::Message]) -> Option<futures_util::future::LocalBoxFuture<'a, Result<Vec<crate::core::extract::Candidate>>>> {
        let answer = self.extractor.clone()?;
        self.extract_calls.set(self.extract_calls.get() + 1);
        Some(Box::pin(async move {
            match answer {
                Ok(json) => crate::api::extraction::candidates_from_json(&json, turns),
                Err(()) => Err(Error::HookFailed { hook: "extractor".into(), reason: "the hook threw: model overloaded".into() }),
            }
        }))
    }

    fn summary_parts<'a>(&'a self, view: &'a crate::core::summary_views::SummaryView, only: Option<&'a crate::core::summary_views::Group>, now: Millis) -> Option<futures_util::future::LocalBoxFuture<'a, Result<Vec<summary_views::GatherPart>>>> {
        if self.shards.is_empty() {
            return None;
        }
        Some(Box::pin(async move {
            let mut parts = Vec::new();
            for shard in &self.shards {
                parts.extend(summary_views::gather(shard, view, only, now).await?);
            }
            Ok(parts)
        }))
    }

    fn fetch_service<'a>(&'a self, _agent_id: &'a str, service: &'a str) -> Option<futures_util::future::LocalBoxFuture<'a, Result<String>>> {
        let answers = self.upstream.as_ref()?;
        self.upstream_calls.set(self.upstream_calls.get() + 1);
        let answer = answers.get(service).cloned().unwrap_or_else(|| Err(Error::Upstream { service: service.into(), status: 404, detail: String::new() }));
        Some(Box::pin(async move { answer }))
    }
}

impl Api {
    pub(super) fn new() -> Api {
        let backend = MemoryBackend::new();
        let store = now_or_never(Store::open(backend.clone(), StoreConfig::default())).unwrap().unwrap();
        Api { store, services: TestServices::default(), backend, now: 1_795_000_000_000, counter: 0 }
    }

    /// Opens the store again from the same backend (a restart), with the
    /// same privacy key.
    pub(super) fn reopen(&mut self) {
        let key = self.store.with_privacy_key(|k| k.cloned());
        self.store = now_or_never(Store::open(self.backend.clone(), StoreConfig::default())).unwrap().unwrap();
        self.store.set_privacy_key(key);
    }

    pub(super) fn call(&mut self, method: &str, target: &str, body: &str) -> Response {
        let (path, query) = split_target(target);
        let req = Request { method, path, query, body: body.as_bytes() };
        let counter = &mut self.counter;
        let mut random = || {
            *counter += 1;
            let mut r = [0u8; 10];
            r[2..].copy_from_slice(&counter.to_be_bytes());
            r
        };
        let mut ctx = Ctx::new(self.now, &mut random, None, 1024 * 1024, &self.services);
        let mut r = now_or_never(handle(&self.store, &req, &mut ctx)).expect("in-memory routes complete at once");
        // A body written as bytes must be valid JSON: read it back for the assertions.
        if r.content_type.is_none() {
            if let Some(raw) = r.raw.take() {
                r.body = serde_json::from_slice(&raw).expect("a written body is JSON");
            }
        }
        r
    }
}

#[test]
fn health_reports_time_in_ms() {
    let mut api = Api::new();
    let r = api.call("GET", "/v1/health", "");
    assert_eq!((r.status, r.body["now"].as_u64()), (200, Some(api.now)));
}

#[test]
fn put_get_round_trip_in_ams_shape() {
    let mut api = Api::new();
    let body = r#"{"messages":[{"role":"user","content":"hello"},{"role":"assistant","content":"hi","id":"m2","created_at":"2026-11-18T11:00:00Z"}],
        "data":{"cart":["apple"],"budget":"12.50"},"context":"earlier: greeted","user_id":"u1","ttl_seconds":60,"session_id":"ignored","unknown_field":1}"#;
    let r = api.call("PUT", "/v1/working-memory/chat-1", body);
    assert_eq!(r.status, 200, "{}", r.body);
    let got = api.call("GET", "/v1/working-memory/chat-1", "");
    assert_eq!(got.status, 200);
    let b = &got.body;
    assert_eq!(b["session_id"], "chat-1");
    assert_eq!(b["messages"].as_array().unwrap().len(), 2);
    assert_eq!(b["messages"][0]["id"].as_str().unwrap().len(), 26, "a ULID was assigned");
    assert_eq!(b["messages"][1]["id"], "m2");
    assert_eq!(b["messages"][1]["created_at"], "2026-11-18T11:00:00.000Z");
    assert_eq!(b["messages"][0]["discrete_memory_extracted"], "f");
    assert_eq!(b["data"]["budget"], "12.50");
    assert_eq!(b["context"], "earlier: greeted");
    assert_eq!(b["ttl_seconds"], 60);
    assert_eq!(b["long_term_memory_strategy"]["strategy"], "discrete");
    assert_eq!(b["created_at"], "2026-11-18T11:06:40.000Z");
    let recent = api.call("GET", "/v1/working-memory/chat-1?recent_messages_limit=1", "");
    assert_eq!(recent.body["messages"].as_array().unwrap().len(), 1);
    assert_eq!(recent.body["messages"][0]["id"], "m2");
    // user_id is part of the identity, as in AMS.
    assert_eq!(api.call("GET", "/v1/working-memory/chat-1?user_id=other", "").status, 404);
    assert_eq!(api.call("GET", "/v1/working-memory/chat-1?user_id=u1", "").status, 200);
}

#[test]
fn missing_session_is_404_with_code() {
    let mut api = Api::new();
    let r = api.call("GET", "/v1/working-memory/nope", "");
    assert_eq!(r.status, 404);
    assert_eq!(r.body["code"], "not_found");
    assert!(r.body["detail"].as_str().unwrap().contains("nope"));
}

#[test]
fn bad_input_gets_typed_errors_and_changes_nothing() {
    let mut api = Api::new();
    api.call("PUT", "/v1/working-memory/keep", r#"{"messages":[{"role":"user","content":"original"}]}"#);
    let before = api.backend.dump();
    let huge = format!(r#"{{"context":"{}"}}"#, "x".repeat(1024 * 1024));
    let cases = [
        ("PUT", "/v1/working-memory/keep", "{not json", 400, "invalid_json"),
        ("PUT", "/v1/working-memory/keep", "", 400, "invalid_json"),
        ("PUT", "/v1/working-memory/keep", "[1,2]", 422, "invalid_input"),
        ("PUT", "/v1/working-memory/keep", r#"{"messages":"not a list"}"#, 422, "invalid_input"),
        ("PUT", "/v1/working-memory/keep", r#"{"ttl_seconds":1.5}"#, 422, "invalid_input"),
        ("PUT", "/v1/working-memory/keep", r#"{"ttl_seconds":-1}"#, 422, "invalid_input"),
        ("PUT", "/v1/working-memory/keep", r#"{"data":[1]}"#, 422, "invalid_input"),
        ("PUT", "/v1/working-memory/keep", r#"{"messages":[{"role":"user","content":"  "}]}"#, 422, "invalid_input"),
        ("PUT", "/v1/working-memory/keep", r#"{"messages":[{"role":"user"}]}"#, 422, "invalid_input"),
        ("PUT", "/v1/working-memory/keep", r#"{"messages":[{"role":"user","content":"x","created_at":"yesterday"}]}"#, 422, "invalid_input"),
        ("PUT", "/v1/working-memory/keep", r#"{"messages":[{"role":"user","content":"x","created_at":"2099-01-01T00:00:00Z"}]}"#, 422, "invalid_input"),
        ("PUT", "/v1/working-memory/keep", r#"{"memories":[{"text":"no id"}]}"#, 422, "invalid_input"),
        ("PUT", "/v1/working-memory/keep", &huge, 413, "payload_too_large"),
        ("GET", "/v1/working-memory/?limit=0", "", 422, "invalid_input"),
        ("GET", "/v1/working-memory/?limit=101", "", 422, "invalid_input"),
        ("GET", "/v1/working-memory/?offset=-1", "", 422, "invalid_input"),
        ("PATCH", "/v1/working-memory/keep", "{}", 405, "method_not_allowed"),
        ("GET", "/v1/nothing-here", "", 404, "not_found"),
        ("GET", "/elsewhere", "", 404, "not_found"),
        ("POST", "/v1/working-memory/missing/messages", r#"{"messages":[{"role":"user","content":"x"}]}"#, 404, "not_found"),
    ];
    for (method, target, body, status, code) in cases {
        let r = api.call(method, target, body);
        assert_eq!((r.status, r.body["code"].as_str().unwrap_or("")), (status, code), "{method} {target} {}", &body[..body.len().min(80)]);
        assert_eq!(api.backend.dump(), before, "{method} {target} changed the store");
    }
    let got = api.call("GET", "/v1/working-memory/keep", "");
    assert_eq!(got.body["messages"][0]["content"], "original");
}

#[test]
fn list_pages_sessions() {
    let mut api = Api::new();
    for i in 0..25 {
        api.call("PUT", &format!("/v1/working-memory/s{i:02}"), "{}");
    }
    let r = api.call("GET", "/v1/working-memory/", "");
    assert_eq!((r.body["total"].as_u64(), r.body["sessions"].as_array().unwrap().len()), (Some(25), 20));
    let r = api.call("GET", "/v1/working-memory/?limit=10&offset=20", "");
    assert_eq!(r.body["sessions"], json!(["s20", "s21", "s22", "s23", "s24"]));
}

#[test]
fn delete_is_idempotent_like_ams() {
    let mut api = Api::new();
    api.call("PUT", "/v1/working-memory/gone", "{}");
    assert_eq!(api.call("DELETE", "/v1/working-memory/gone", "").body, json!({"status": "ok"}));
    assert_eq!(api.call("GET", "/v1/working-memory/gone", "").status, 404);
    let seq = now_or_never(api.store.stats()).unwrap().last_seq;
    assert_eq!(api.call("DELETE", "/v1/working-memory/gone", "").status, 200);
    assert_eq!(now_or_never(api.store.stats()).unwrap().last_seq, seq, "deleting nothing logs nothing");
}

#[test]
fn append_and_ttl_expiry() {
    let mut api = Api::new();
    api.call("PUT", "/v1/working-memory/t", r#"{"ttl_seconds":10}"#);
    let r = api.call("POST", "/v1/working-memory/t/messages", r#"{"messages":[{"role":"user","content":"one"},{"role":"assistant","content":"two"}]}"#);
    assert_eq!(r.status, 200, "{}", r.body);
    // Only what the append added, with the ids and times it was stored with.
    let appended = r.body["appended"].as_array().unwrap();
    assert_eq!(appended.iter().map(|m| m["content"].as_str().unwrap()).collect::<Vec<_>>(), ["one", "two"]);
    assert!(appended.iter().all(|m| m["id"].as_str().is_some_and(|id| !id.is_empty())));
    assert_eq!(r.body["message_count"], 2);
    assert!(r.body.get("messages").is_none(), "the session is not echoed: {}", r.body);
    let dup = format!(r#"{{"messages":[{{"id":{},"role":"user","content":"again"}}]}}"#, appended[0]["id"]);
    assert_eq!(api.call("POST", "/v1/working-memory/t/messages", &dup).status, 422, "an id already in the session");
    assert_eq!(api.call("GET", "/v1/working-memory/t", "").body["messages"].as_array().unwrap().len(), 2, "a refused append adds nothing");
    // An append refreshes the TTL, and the expiry index follows it.
    let start = api.now;
    api.now = start + 5_000;
    let r = api.call("POST", "/v1/working-memory/t/messages", r#"{"messages":[{"role":"user","content":"three"}]}"#);
    assert_eq!((r.status, r.body["message_count"].as_u64()), (200, Some(3)), "{}", r.body);
    assert_eq!(now_or_never(expire(&api.store, api.now)).unwrap().unwrap(), Some(start + 15_000));
    api.now = start + 15_000;
    assert_eq!(api.call("GET", "/v1/working-memory/t", "").status, 404, "expired sessions are invisible");
    assert_eq!(now_or_never(expire(&api.store, api.now)).unwrap().unwrap(), None);
    assert_eq!(now_or_never(api.store.read(|e| e.session_count())).unwrap().unwrap(), 0, "and swept");
}

#[test]
fn an_append_with_a_model_counts_its_turns_once_and_exactly() {
    let mut api = Api::new();
    api.call("PUT", "/v1/working-memory/c", "{}");
    let r = api.call("POST", "/v1/working-memory/c/messages", r#"{"model_name":"gpt-4o","messages":[{"role":"user","content":"hello world"},{"role":"assistant","content":"ünïcödé ok"}]}"#);
    assert_eq!(r.status, 200, "{}", r.body);
    let enc = now_or_never(services::Services::encoding(&api.services, crate::core::tokenizer::EncodingName::O200kBase)).unwrap().unwrap();
    let want: Vec<usize> = ["hello world", "ünïcödé ok"].iter().map(|t| Counter::count(enc.as_ref(), t)).collect();
    assert_eq!(r.body["tokens"], json!(want), "{}", r.body);
    assert_eq!(r.body["counting"], "exact:o200k_base");
    // The turns remember the counts: the prompt reads them back.
    let key = Counter::cache_key(enc.as_ref()).unwrap();
    let kept = now_or_never(api.store.read(|e| e.session("c", api.now).unwrap().messages.iter().map(|m| m.tokens.get(key)).collect::<Vec<_>>())).unwrap().unwrap();
    assert_eq!(kept, want.iter().map(|&n| Some(n)).collect::<Vec<_>>());
    // Without a model the answer stays lean; an unknown model is refused, nothing appended.
    let r = api.call("POST", "/v1/working-memory/c/messages", r#"{"messages":[{"role":"user","content":"x"}]}"#);
    assert!(r.body.get("tokens").is_none(), "{}", r.body);
    let r = api.call("POST", "/v1/working-memory/c/messages", r#"{"model_name":"gpt-99","messages":[{"role":"user","content":"x"}]}"#);
    assert_eq!((r.status, r.body["code"].as_str()), (422, Some("invalid_input")), "{}", r.body);
    assert_eq!(api.call("GET", "/v1/working-memory/c", "").body["messages"].as_array().unwrap().len(), 3);
}

#[test]
fn percent_encoded_ids_and_queries() {
    let mut api = Api::new();
    assert_eq!(api.call("PUT", "/v1/working-memory/a%20b%C3%A9", "{}").status, 200);
    assert_eq!(api.call("GET", "/v1/working-memory/a%20b%C3%A9", "").body["session_id"], "a bé");
    assert_eq!(api.call("GET", "/v1/working-memory/a%2Fb", "").status, 422, "'/' is not allowed in ids");
    assert_eq!(parse_query("a=1&b=x%20y+z&c"), vec![("a".into(), "1".into()), ("b".into(), "x y z".into()), ("c".into(), "".into())]);
    assert_eq!(percent_decode("%zz%4"), "%zz%4");
}


pub(super) fn ledger_setup(api: &mut Api) {
    assert_eq!(api.call("POST", "/v1/ledger/assets", r#"{"code":"USDC","scale":6}"#).status, 200);
    for body in [
        r#"{"id":"bank","asset":"USDC"}"#,
        r#"{"id":"agent","asset":"USDC","flags":["debits_must_not_exceed_credits"],"max_transfer":"50"}"#,
        r#"{"id":"casino","asset":"USDC"}"#,
    ] {
        let r = api.call("POST", "/v1/ledger/accounts", body);
        assert_eq!(r.status, 200, "{}", r.body);
    }
}

#[test]
fn ledger_transfers_are_exact_and_idempotent_over_http() {
    let mut api = Api::new();
    ledger_setup(&mut api);
    let batch = r#"{"transfers":[
        {"id":"fund","debit_account":"bank","credit_account":"agent","amount":"100.25"},
        {"id":"bet","debit_account":"agent","credit_account":"casino","amount":"50.000001"},
        {"id":"bet2","debit_account":"agent","credit_account":"casino","amount":"0.1","metadata":{"service":"casino","memo":"spin"}}]}"#;
    let r = api.call("POST", "/v1/ledger/transfers", batch);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["results"], json!([{"id":"fund","result":"created"},{"id":"bet","result":"exceeds_max_transfer"},{"id":"bet2","result":"created"}]));
    let again = api.call("POST", "/v1/ledger/transfers", batch);
    assert_eq!(again.body["results"][0]["result"], "exists");
    let changed = api.call("POST", "/v1/ledger/transfers", r#"{"transfers":[{"id":"fund","debit_account":"bank","credit_account":"agent","amount":"100.26"}]}"#);
    assert_eq!(changed.body["results"][0]["result"], "exists_with_different_amount");
    let a = api.call("GET", "/v1/ledger/accounts/agent", "");
    assert_eq!(a.body["balance"], "100.150000");
    assert_eq!(a.body["credits_posted"], "100.250000");
    assert_eq!(a.body["max_transfer"], "50.000000");
    assert_eq!(api.call("GET", "/v1/ledger/accounts/bank", "").body["balance"], "-100.250000");
    let t = api.call("GET", "/v1/ledger/transfers/bet2", "");
    assert_eq!((t.body["amount"].as_str(), t.body["state"].as_str(), t.body["metadata"]["memo"].as_str()), (Some("0.100000"), Some("posted"), Some("spin")));
}

#[test]
fn ledger_refuses_floats_typos_and_bad_amounts_without_changing_anything() {
    let mut api = Api::new();
    ledger_setup(&mut api);
    let before = api.backend.dump();
    let t = |amount: &str| format!(r#"{{"transfers":[{{"id":"x","debit_account":"bank","credit_account":"agent","amount":{amount}}}]}}"#);
    for (body, status, code) in [
        (t("12.5"), 422, "invalid_input"),
        (t("1e3"), 422, "invalid_input"),
        (t(r#""1e3""#), 422, "invalid_input"),
        (t(r#""NaN""#), 422, "invalid_input"),
        (t(r#""-5""#), 422, "invalid_input"),
        (t(r#""0""#), 422, "invalid_input"),
        (t(r#""1.0000001""#), 422, "invalid_input"),
        (t(r#""99999999999999999999999999999""#), 422, "invalid_input"),
        (r#"{"transfers":[{"id":"x","debit_account":"bank","credit_account":"agent","ammount":"1"}]}"#.to_owned(), 422, "invalid_input"),
        (r#"{"transfers":[]}"#.to_owned(), 422, "invalid_input"),
        (r#"{"transfers":[{"id":"x","debit_account":"bank","credit_account":"agent","amount":"1","timeout_seconds":5}]}"#.to_owned(), 200, ""),
        ("{oops".to_owned(), 400, "invalid_json"),
    ] {
        let r = api.call("POST", "/v1/ledger/transfers", &body);
        if status == 200 {
            // A timeout without `pending` is a per-transfer result, not a request error.
            assert_eq!(r.body["results"][0]["result"], "timeout_reserved_for_pending_transfer");
            continue;
        }
        assert_eq!((r.status, r.body["code"].as_str().unwrap_or("")), (status, code), "{body}");
    }
    for (target, body, status, code) in [
        ("/v1/ledger/assets", r#"{"code":"USDC","scale":2}"#, 409, "asset_exists_with_different_scale"),
        ("/v1/ledger/assets", r#"{"code":"X","scale":1.5}"#, 422, "invalid_input"),
        ("/v1/ledger/accounts", r#"{"id":"bank","asset":"USDC","flags":["debits_must_not_exceed_credits"]}"#, 409, "account_exists_with_different_fields"),
        ("/v1/ledger/accounts", r#"{"id":"n","asset":"USDC","flags":["no_such_flag"]}"#, 422, "invalid_input"),
        ("/v1/ledger/accounts", r#"{"id":"n","asset":"USDC","max_transfer":50}"#, 422, "invalid_input"),
        ("/v1/ledger/accounts", r#"{"id":"n","asset":"GBP"}"#, 404, "not_found"),
    ] {
        let r = api.call("POST", target, body);
        assert_eq!((r.status, r.body["code"].as_str().unwrap_or("")), (status, code), "{target} {body}");
    }
    assert_eq!(api.backend.dump().keys().filter(|k| k.starts_with("log/")).count(), before.keys().filter(|k| k.starts_with("log/")).count() + 1, "only the valid batch was logged");
}

#[test]
fn ledger_holds_post_void_expire_reconcile_history() {
    let mut api = Api::new();
    ledger_setup(&mut api);
    api.call("POST", "/v1/ledger/transfers", r#"{"transfers":[{"id":"fund","debit_account":"bank","credit_account":"agent","amount":"40"}]}"#);
    let r = api.call("POST", "/v1/ledger/transfers", r#"{"transfers":[
        {"id":"h1","debit_account":"agent","credit_account":"casino","amount":"30","pending":true,"timeout_seconds":60},
        {"id":"h2","debit_account":"agent","credit_account":"casino","amount":"5","pending":true}]}"#);
    assert_eq!(r.body["results"][1]["result"], "created");
    assert_eq!(api.call("GET", "/v1/ledger/accounts/agent", "").body["debits_pending"], "35.000000");
    let p = api.call("POST", "/v1/ledger/transfers/h1/post", r#"{"amount":"25.5"}"#);
    assert_eq!((p.status, p.body["transfer"]["state"].as_str(), p.body["transfer"]["posted_amount"].as_str()), (200, Some("pending_posted"), Some("25.500000")));
    let twice = api.call("POST", "/v1/ledger/transfers/h1/post", "");
    assert_eq!((twice.status, twice.body["code"].as_str()), (422, Some("pending_transfer_already_posted")));
    assert_eq!(api.call("POST", "/v1/ledger/transfers/nope/void", "").status, 404);
    assert_eq!(api.call("POST", "/v1/ledger/transfers/h2/void", "").status, 200);
    api.call("POST", "/v1/ledger/transfers", r#"{"transfers":[{"id":"h3","debit_account":"agent","credit_account":"casino","amount":"1","pending":true,"timeout_seconds":2}]}"#);
    api.now += 2_000;
    assert_eq!(now_or_never(expire(&api.store, api.now)).unwrap().unwrap(), None);
    assert_eq!(api.call("GET", "/v1/ledger/transfers/h3", "").body["state"], "pending_expired");
    let a = api.call("GET", "/v1/ledger/accounts/agent", "").body;
    assert_eq!((a["balance"].as_str(), a["debits_pending"].as_str()), (Some("14.500000"), Some("0.000000")));

    let rec = api.call("POST", "/v1/ledger/reconcile", r#"{"statement":[{"account":"agent","balance":"14.5"},{"account":"casino","balance":"25"}]}"#);
    assert_eq!(rec.status, 200, "{}", rec.body);
    assert_eq!(rec.body["differences"], json!([]));
    assert_eq!(rec.body["statement_differences"], json!([{"account":"casino","field":"balance","expected":"25.000000","found":"25.500000"}]));
    assert_eq!(rec.body["ok"], false);
    assert_eq!(rec.body["journal_head"].as_str().unwrap().len(), 64);

    let h = api.call("GET", "/v1/ledger/accounts/agent/history?limit=3", "").body;
    assert_eq!(h["entries"].as_array().unwrap().len(), 3);
    let next = h["next_cursor"].as_u64().unwrap();
    let h2 = api.call("GET", &format!("/v1/ledger/accounts/agent/history?limit=100&cursor={next}"), "").body;
    let kinds: Vec<&str> = h2["entries"].as_array().unwrap().iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["posted", "voided", "created", "expired"]);
    assert_eq!(h2["next_cursor"], Value::Null);
    // A time window: only what happened after the clock moved on.
    let since = crate::core::time::format_rfc3339(api.now);
    let late = api.call("GET", &format!("/v1/ledger/accounts/agent/history?since={since}"), "").body;
    assert_eq!(late["entries"].as_array().unwrap().iter().map(|e| e["kind"].as_str().unwrap()).collect::<Vec<_>>(), ["expired"]);
    assert_eq!(api.call("GET", "/v1/ledger/accounts/agent/history?since=yesterday", "").status, 422);
}

#[test]
fn execute_once_intents_over_http() {
    let mut api = Api::new();
    let begin = r#"{"op":"place_bet","params":{"market":"m1","stake":"5.00"}}"#;
    let r = api.call("POST", "/v1/ledger/intents", begin);
    assert_eq!(r.body["status"], "started");
    let key = r.body["key"].as_str().unwrap().to_owned();
    assert_eq!(api.call("POST", "/v1/ledger/intents", begin).body["status"], "open");
    assert_eq!(api.call("GET", "/v1/ledger/intents", "").body["open"].as_array().unwrap().len(), 1);
    let done = api.call("POST", &format!("/v1/ledger/intents/{key}/complete"), r#"{"outcome":{"bet_id":"b-77"}}"#);
    assert_eq!(done.body["status"], "done");
    let again = api.call("POST", "/v1/ledger/intents", begin);
    assert_eq!((again.body["status"].as_str(), again.body["outcome"]["bet_id"].as_str()), (Some("done"), Some("b-77")));
    let clash = api.call("POST", &format!("/v1/ledger/intents/{key}/complete"), r#"{"outcome":{"bet_id":"other"}}"#);
    assert_eq!((clash.status, clash.body["code"].as_str()), (409, Some("intent_completed_with_different_outcome")));
    assert_eq!(api.call("GET", "/v1/ledger/intents", "").body["open"], json!([]));
}

#[test]
fn the_change_feed_route_pages_resumes_and_refuses_bad_queries() {
    let mut api = Api::new();
    let start = api.call("GET", "/v1/events", "");
    assert_eq!((start.status, start.body["last_seq"].as_u64(), start.body["events"].as_array().map(Vec::len)), (200, Some(0), Some(0)), "{}", start.body);
    api.call("PUT", "/v1/working-memory/a", r#"{"messages":[]}"#);
    api.call("POST", "/v1/working-memory/a/messages", r#"{"messages":[{"role":"user","content":"secret plan"}]}"#);
    assert_eq!(api.call("POST", "/v1/working-memory/missing/messages", r#"{"messages":[{"role":"user","content":"x"}]}"#).status, 404);
    api.call("DELETE", "/v1/working-memory/a", "");
    let page = api.call("GET", "/v1/events?since=0", "");
    let kinds: Vec<&str> = page.body["events"].as_array().unwrap().iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["working_memory.updated", "working_memory.appended", "working_memory.deleted"], "{}", page.body);
    assert!(!page.body.to_string().contains("secret plan"), "ids and counts, not bodies");
    let seqs: Vec<u64> = page.body["events"].as_array().unwrap().iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, [1, 2, 3]);
    let only = api.call("GET", "/v1/events?since=1&kinds=working_memory.deleted", "");
    assert_eq!(only.body["events"].as_array().unwrap().len(), 1);
    let cut = api.call("GET", "/v1/events?since=0&limit=2", "");
    assert_eq!(cut.body["next_since"], 2);
    for q in ["since=-1", "since=abc", "since=4", "since=1.5", "limit=0", "limit=1001", "kinds=working_memory.nope"] {
        let r = api.call("GET", &format!("/v1/events?{q}"), "");
        assert_eq!((r.status, r.body["code"].as_str()), (400, Some("invalid_query")), "{q}: {}", r.body);
    }
}
