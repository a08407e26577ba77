//! The tool table against the router: schemas, bad input, the bound
//! context and the token ceiling.

use serde_json::{json, Value};

use super::*;
use crate::core::budget::Counter;
use crate::api::services::Offline;
use crate::store::{now_or_never, MemoryBackend, Store, StoreConfig};

fn store() -> Store<MemoryBackend> {
    now_or_never(Store::open(MemoryBackend::new(), StoreConfig::default())).unwrap().unwrap()
}

fn call(store: &Store<MemoryBackend>, ctx: &ToolCtx, name: &str, args: Value) -> std::result::Result<Value, Failure> {
    let mut random = crate::api::tools::counting_random;
    let mut exec = StoreExec { store, now: 1_700_000_000_000, random: &mut random, namespace: None, body_bytes_max: 1 << 20, services: &Offline, actor: "local" };
    now_or_never(resolve(&mut exec, ctx, name, args)).expect("in-memory")
}

#[test]
fn every_tool_renders_in_every_format_with_a_closed_object_schema() {
    for format in ["openai", "anthropic", "mcp"] {
        let v = schemas(format, |_| true).unwrap();
        assert_eq!(v.as_array().unwrap().len(), TOOLS.len());
    }
    for t in TOOLS {
        let s = input_schema(t);
        assert_eq!(s["type"], "object", "{}", t.name);
        assert_eq!(s["additionalProperties"], false, "{}", t.name);
        assert!(t.name.len() <= 64 && t.name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'), "{}", t.name);
        assert!(t.op.is_none() || !fields(t).is_empty() || t.name == "get_current_datetime", "{} has no fields", t.name);
    }
    let mcp = schemas("mcp", |_| true).unwrap();
    let search = mcp.as_array().unwrap().iter().find(|t| t["name"] == "search_long_term_memory").unwrap();
    assert_eq!(search["inputSchema"]["properties"]["search_mode"]["enum"], json!(["auto", "semantic", "keyword", "hybrid"]));
    // AMS's argument names and shapes: filters as objects, its extras accepted.
    assert_eq!(search["inputSchema"]["properties"]["namespace"]["type"], json!(["object", "null"]));
    assert_eq!(search["inputSchema"]["properties"]["optimize_query"]["type"], "boolean");
    let prompt = mcp.as_array().unwrap().iter().find(|t| t["name"] == "memory_prompt").unwrap();
    for flat in ["topics", "user_id", "search_mode", "limit", "include_long_term_search", "created_at"] {
        assert!(prompt["inputSchema"]["properties"].get(flat).is_some(), "memory_prompt lacks AMS's flat {flat}");
    }
    assert_eq!(prompt["inputSchema"]["required"], json!(["query"]));
    let transfer = mcp.as_array().unwrap().iter().find(|t| t["name"] == "ledger_transfer").unwrap();
    assert_eq!(transfer["inputSchema"]["properties"]["amount"]["type"], "string");
    assert!(schemas("gemini", |_| true).is_err());
}

#[test]
fn memories_round_trip_through_the_tools() {
    let s = store();
    let ctx = ToolCtx { user_id: Some("u1".into()), session_id: Some("s1".into()), ..Default::default() };
    let created = call(&s, &ctx, "create_long_term_memories", json!({ "memories": [{ "text": "Sam moved to Lisbon in 2024", "topics": ["moves"] }] })).unwrap();
    assert_eq!(created["created"].as_array().unwrap().len(), 1);
    let found = call(&s, &ctx, "search_long_term_memory", json!({ "text": "Lisbon", "search_mode": "keyword" })).unwrap();
    let hit = &found["memories"][0];
    assert_eq!(hit["text"], "Sam moved to Lisbon in 2024");
    assert_eq!(hit["user_id"], "u1", "the bound user was filled in");
    let id = hit["id"].as_str().unwrap().to_owned();
    let edited = call(&s, &ctx, "edit_long_term_memory", json!({ "memory_id": id, "text": "Sam moved to Porto in 2024" })).unwrap();
    assert_eq!(edited["text"], "Sam moved to Porto in 2024");
    assert_eq!(call(&s, &ctx, "get_long_term_memory", json!({ "memory_id": id })).unwrap()["id"], json!(id));
    call(&s, &ctx, "delete_long_term_memories", json!({ "memory_ids": [id] })).unwrap();
    assert_eq!(call(&s, &ctx, "get_long_term_memory", json!({ "memory_id": id })).unwrap_err().code, "not_found");
}

#[test]
fn sessions_prompts_decisions_and_the_ledger_through_the_tools() {
    let s = store();
    let ctx = ToolCtx { session_id: Some("s1".into()), ..Default::default() };
    call(&s, &ctx, "set_working_memory", json!({ "messages": [{ "role": "user", "content": "hi, I like trams" }] })).unwrap();
    call(&s, &ctx, "add_messages_to_working_memory", json!({ "messages": [{ "role": "assistant", "content": "noted" }] })).unwrap();
    let added = call(&s, &ctx, "add_memory_to_working_memory", json!({ "text": "The user likes trams" })).unwrap();
    assert_eq!(added["memories"], 1);
    let found = call(&s, &ctx, "search_long_term_memory", json!({ "text": "trams", "search_mode": "keyword" })).unwrap();
    assert_eq!(found["memories"][0]["text"], "The user likes trams", "promoted to long-term memory");
    assert_eq!(found["memories"][0]["session_id"], "s1");
    call(&s, &ctx, "update_working_memory_data", json!({ "data": { "city": "Lisbon" } })).unwrap();
    let wm = call(&s, &ctx, "get_working_memory", json!({})).unwrap();
    assert_eq!(wm["messages"].as_array().unwrap().len(), 2);
    assert_eq!(wm["data"]["city"], "Lisbon");
    let prompt = call(&s, &ctx, "memory_prompt", json!({ "query": "what do I like?" })).unwrap();
    assert!(prompt["messages"].as_array().unwrap().len() >= 2);
    let d = call(&s, &ctx, "decision_log_append", json!({ "kind": "decision", "text": "recommend tram 28" })).unwrap();
    assert_eq!(d["seq"], 1, "{d}");
    let t = call(&s, &ctx, "get_current_datetime", json!({})).unwrap();
    assert_eq!(t["unix_ts"], 1_700_000_000);
    let c = call(&s, &ctx, "count_tokens", json!({ "text": "hello world" })).unwrap();
    assert!(c["tokens"].as_u64().unwrap() > 0);
    let f = call(&s, &ctx, "fits_context", json!({ "messages": [{ "role": "user", "content": "hello" }], "max_tokens": 100 })).unwrap();
    assert_eq!(f["fits"], true);

    // The ledger: decimal strings only.
    let api = |m: &str, p: &str, b: Value| {
        let body = b.to_string();
        let req = crate::api::Request { method: m, path: p, query: Vec::new(), body: body.as_bytes() };
        let mut r = || [1u8; 10];
        let mut c = crate::api::Ctx::new(1_700_000_000_000, &mut r, None, 1 << 20, &Offline);
        now_or_never(crate::api::handle(&s, &req, &mut c)).unwrap()
    };
    assert_eq!(api("POST", "/v1/ledger/assets", json!({ "code": "USD", "scale": 2 })).status, 200);
    assert_eq!(api("POST", "/v1/ledger/accounts", json!({ "id": "a", "asset": "USD" })).status, 200);
    assert_eq!(api("POST", "/v1/ledger/accounts", json!({ "id": "b", "asset": "USD" })).status, 200);
    let ok = call(&s, &ctx, "ledger_transfer", json!({ "id": "t1", "debit_account": "b", "credit_account": "a", "amount": "12.50" }));
    let ok = ok.unwrap();
    assert_eq!(ok["result"], "created");
    assert_eq!(call(&s, &ctx, "ledger_balance", json!({ "account_id": "a" })).unwrap()["id"], "a");
    let number = call(&s, &ctx, "ledger_transfer", json!({ "id": "t2", "debit_account": "b", "credit_account": "a", "amount": 12.5 })).unwrap_err();
    assert_eq!(number.code, "invalid_input");
    assert!(number.detail.contains("amount"), "{}", number.detail);
}

#[test]
fn bad_input_is_a_typed_error_naming_the_field() {
    let s = store();
    let ctx = ToolCtx::default();
    let cases = [
        ("search_long_term_memory", json!({ "search_mode": "fuzzy" }), "search_mode"),
        ("search_long_term_memory", json!({ "limit": "ten" }), "limit"),
        ("search_long_term_memory", json!({ "limit": 0 }), "limit"),
        ("search_long_term_memory", json!({ "txet": "typo" }), "txet"),
        ("create_long_term_memories", json!({ "memories": [{ "topics": ["x"] }] }), "text"),
        ("create_long_term_memories", json!({}), "memories"),
        ("get_working_memory", json!({}), "session_id"),
        ("get_working_memory", json!({ "session_id": "a/b" }), "session_id"),
        ("count_tokens", json!({ "text": 5 }), "text"),
        ("edit_long_term_memory", json!({ "memory_id": "", "text": "x" }), "memory_id"),
    ];
    for (tool, args, field) in cases {
        let e = call(&s, &ctx, tool, args.clone()).unwrap_err();
        assert!(e.code == "invalid_input" || e.code == "limit_exceeded", "{tool} {args}: {e:?}");
        assert!(e.detail.contains(field), "{tool} {args}: {}", e.detail);
    }
    assert_eq!(call(&s, &ctx, "no_such_tool", json!({})).unwrap_err().code, "not_found");
    assert_eq!(call(&s, &ctx, "count_tokens", json!("{not json")).unwrap_err().code, "invalid_input");
    assert_eq!(call(&s, &ctx, "count_tokens", json!([1, 2])).unwrap_err().code, "invalid_input");
    let huge = json!({ "text": "x".repeat(limits::TOOL_CALL_ARGS_BYTES_MAX + 1) });
    assert_eq!(call(&s, &ctx, "count_tokens", huge).unwrap_err().code, "payload_too_large");
}

#[test]
fn a_call_cannot_leave_its_bound_namespace_session_or_user() {
    let s = store();
    let ctx = ToolCtx { namespace: Some("acme".into()), session_id: Some("s1".into()), user_id: Some("u1".into()), ..Default::default() };
    let other_ns = call(&s, &ctx, "create_long_term_memories", json!({ "memories": [{ "text": "x", "namespace": "globex" }] })).unwrap_err();
    assert_eq!(other_ns.code, "namespace_forbidden");
    assert_eq!(other_ns.status, 403);
    let other_user = call(&s, &ctx, "create_long_term_memories", json!({ "memories": [{ "text": "x", "user_id": "u2" }] })).unwrap_err();
    assert_eq!(other_user.code, "invalid_input");
    let other_session = call(&s, &ctx, "get_working_memory", json!({ "session_id": "s2" })).unwrap_err();
    assert_eq!(other_session.code, "invalid_input");
    let widen = call(&s, &ctx, "search_long_term_memory", json!({ "text": "x", "user_id": { "any": ["u1", "u2"] } })).unwrap_err();
    assert_eq!(widen.code, "invalid_input");
    // Another user's record is not there for this context.
    let open = ToolCtx::default();
    call(&s, &open, "create_long_term_memories", json!({ "memories": [{ "id": "m-u2", "text": "secret plans", "user_id": "u2", "namespace": "acme" }] })).unwrap();
    assert_eq!(call(&s, &ctx, "get_long_term_memory", json!({ "memory_id": "m-u2" })).unwrap_err().code, "not_found");
    assert_eq!(call(&s, &ctx, "delete_long_term_memories", json!({ "memory_ids": ["m-u2"] })).unwrap_err().code, "not_found");
    let found = call(&s, &ctx, "search_long_term_memory", json!({ "text": "secret plans", "search_mode": "keyword" })).unwrap();
    assert_eq!(found["memories"], json!([]));
}

#[test]
fn a_long_search_result_is_cut_by_whole_items_under_the_ceiling() {
    let s = store();
    let ctx = ToolCtx { result_tokens_max: Some(300), ..Default::default() };
    let memories: Vec<Value> = (0..50).map(|i| json!({ "text": format!("note {i} about the Lisbon tram network and its yellow cars") })).collect();
    call(&s, &ToolCtx::default(), "create_long_term_memories", json!({ "memories": memories, "deduplicate": false })).unwrap();
    let v = call(&s, &ctx, "search_long_term_memory", json!({ "text": "Lisbon tram", "search_mode": "keyword", "limit": 50 })).unwrap();
    let kept = v["memories"].as_array().unwrap().len();
    assert!(kept > 0 && kept < 50, "{kept}");
    assert_eq!(v["truncated"]["total"], 50);
    assert_eq!(v["truncated"]["omitted"], 50 - kept);
    assert!(crate::core::budget::Estimator.count(&v.to_string()) <= 300);
    let bad = ToolCtx { result_tokens_max: Some(1), ..Default::default() };
    assert_eq!(call(&s, &bad, "get_current_datetime", json!({})).unwrap_err().code, "invalid_input");
}

#[test]
fn the_allow_list_applies_to_the_bound_agent() {
    let s = store();
    let body = json!({ "tools": ["get_current_datetime"] }).to_string();
    let req = crate::api::Request { method: "PUT", path: "/v1/agents/a1/tools", query: Vec::new(), body: body.as_bytes() };
    let mut r = || [1u8; 10];
    let mut c = crate::api::Ctx::new(1_000, &mut r, None, 1 << 20, &Offline);
    assert_eq!(now_or_never(crate::api::handle(&s, &req, &mut c)).unwrap().status, 200);
    let ctx = ToolCtx { agent_id: Some("a1".into()), ..Default::default() };
    assert!(call(&s, &ctx, "get_current_datetime", json!({})).is_ok());
    assert_eq!(call(&s, &ctx, "count_tokens", json!({ "text": "x" })).unwrap_err().code, "tool_not_allowed");
}

#[test]
fn ams_shaped_calls_work_as_ams_documents_them() {
    let s = store();
    let ctx = ToolCtx::default();
    // A session never written reads as an empty one, as AMS's tool answers.
    let empty = call(&s, &ctx, "get_working_memory", json!({ "session_id": "fresh" })).unwrap();
    assert_eq!((empty["session_id"].as_str(), empty["messages"].as_array().map(Vec::len)), (Some("fresh"), Some(0)));
    call(&s, &ctx, "create_long_term_memories", json!({ "memories": [{ "text": "Ana's favourite colour is teal", "user_id": "ana", "topics": ["preferences"] }] })).unwrap();
    call(&s, &ctx, "set_working_memory", json!({ "session_id": "s9", "messages": [{ "role": "user", "content": "hello" }], "namespace": null, "user_id": "ana", "ttl_seconds": 3600 })).unwrap();
    // memory_prompt with AMS's flat filters and its {eq} session.
    let p = call(&s, &ctx, "memory_prompt", json!({ "query": "what is my favourite colour?", "session_id": { "eq": "s9" }, "user_id": { "eq": "ana" }, "topics": { "any": ["preferences"] }, "search_mode": "keyword", "limit": 5, "optimize_query": false })).unwrap();
    assert!(p.to_string().contains("teal"), "{p}");
    let session_only = call(&s, &ctx, "memory_prompt", json!({ "query": "hi", "session_id": "s9", "include_long_term_search": false })).unwrap();
    assert!(!session_only.to_string().contains("teal"));
    assert_eq!(call(&s, &ctx, "memory_prompt", json!({ "query": "hi", "include_long_term_search": false })).unwrap_err().code, "invalid_input");
    let found = call(&s, &ctx, "search_long_term_memory", json!({ "text": "colour", "search_mode": "keyword", "optimize_query": true, "user_id": { "eq": "ana" } })).unwrap();
    assert_eq!(found["memories"][0]["text"], "Ana's favourite colour is teal");
}
