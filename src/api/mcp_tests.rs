//! The MCP dispatcher over an in-memory store: each method, each error path.

use serde_json::{json, Value};

use super::*;
use crate::api::services::Offline;
use crate::api::tools::StoreExec;
use crate::store::{now_or_never, MemoryBackend, Store, StoreConfig};

fn store() -> Store<MemoryBackend> {
    now_or_never(Store::open(MemoryBackend::new(), StoreConfig::default())).unwrap().unwrap()
}

fn send(store: &Store<MemoryBackend>, ctx: &ToolCtx, msg: Value) -> Option<Value> {
    let mut random = crate::api::tools::counting_random;
    let mut exec = StoreExec { store, now: 1_700_000_000_000, random: &mut random, namespace: None, body_bytes_max: 1 << 20, services: &Offline, actor: "local" };
    now_or_never(handle(&mut exec, ctx, &msg)).expect("in-memory")
}

fn call(store: &Store<MemoryBackend>, ctx: &ToolCtx, name: &str, args: Value) -> Value {
    send(store, ctx, json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": { "name": name, "arguments": args } })).unwrap()
}

#[test]
fn initialize_negotiates_a_served_revision() {
    assert_eq!(initialize_result(Some("2025-06-18"))["protocolVersion"], "2025-06-18");
    assert_eq!(initialize_result(Some("2099-01-01"))["protocolVersion"], SUPPORTED[0]);
    assert_eq!(initialize_result(None)["capabilities"]["tools"]["listChanged"], false);
}

#[test]
fn tools_list_and_a_call_that_succeeds() {
    let s = store();
    let ctx = ToolCtx::default();
    let list = send(&s, &ctx, json!({ "jsonrpc": "2.0", "id": "a", "method": "tools/list" })).unwrap();
    assert_eq!(list["id"], "a");
    let names: Vec<&str> = list["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    for n in ["search_long_term_memory", "create_long_term_memories", "edit_long_term_memory", "delete_long_term_memories", "add_memory_to_working_memory", "get_working_memory", "set_working_memory", "memory_prompt", "get_current_datetime", "count_tokens", "fits_context", "ledger_balance", "ledger_transfer", "decision_log_append"] {
        assert!(names.contains(&n), "{n} missing from {names:?}");
    }
    let r = call(&s, &ctx, "get_current_datetime", json!({}));
    assert_eq!(r["result"]["isError"], false);
    assert_eq!(r["result"]["structuredContent"]["unix_ts"], 1_700_000_000);
    let text: Value = serde_json::from_str(r["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text, r["result"]["structuredContent"]);
}

#[test]
fn bad_tool_input_is_an_error_result_with_the_edgemem_code() {
    let s = store();
    let r = call(&s, &ToolCtx::default(), "search_long_term_memory", json!({ "limit": "lots" }));
    assert_eq!(r["result"]["isError"], true);
    assert_eq!(r["result"]["structuredContent"]["error"]["code"], "invalid_input");
    assert!(r["result"]["content"][0]["text"].as_str().unwrap().starts_with("invalid_input: "));
    let r = call(&s, &ToolCtx::default(), "ledger_transfer", json!({ "id": "t", "debit_account": "a", "credit_account": "b", "amount": 1.5 }));
    assert_eq!(r["result"]["structuredContent"]["error"]["code"], "invalid_input");
}

#[test]
fn protocol_errors_are_json_rpc_errors() {
    let s = store();
    let ctx = ToolCtx::default();
    let cases = [
        (json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "rm_rf" } }), code::INVALID_PARAMS),
        (json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {} }), code::INVALID_PARAMS),
        (json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": [1] }), code::INVALID_PARAMS),
        (json!({ "jsonrpc": "2.0", "id": 1, "method": "sampling/createMessage" }), code::METHOD_NOT_FOUND),
        (json!({ "jsonrpc": "1.0", "id": 1, "method": "ping" }), code::INVALID_REQUEST),
        (json!({ "jsonrpc": "2.0", "id": null, "method": "ping" }), code::INVALID_REQUEST),
        (json!([{ "jsonrpc": "2.0", "id": 1, "method": "ping" }]), code::INVALID_REQUEST),
        (json!("ping"), code::INVALID_REQUEST),
        (json!({ "jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": { "uri": "file:///etc/passwd" } }), code::RESOURCE_NOT_FOUND),
        (json!({ "jsonrpc": "2.0", "id": 1, "method": "resources/list", "params": { "cursor": "zz" } }), code::INTERNAL_ERROR),
    ];
    for (msg, want) in cases {
        let r = send(&s, &ctx, msg.clone()).unwrap();
        assert_eq!(r["error"]["code"], want, "{msg} -> {r}");
    }
    assert_eq!(call(&s, &ctx, "rm_rf", json!({}))["error"]["data"]["code"], "not_found");
    assert!(send(&s, &ctx, json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })).is_none());
    assert!(send(&s, &ctx, json!({ "jsonrpc": "2.0", "id": 3, "result": {} })).is_none());
    assert_eq!(send(&s, &ctx, json!({ "jsonrpc": "2.0", "id": 4, "method": "ping" })).unwrap()["result"], json!({}));
}

#[test]
fn resources_list_sessions_then_memories_and_read_them() {
    let s = store();
    let ctx = ToolCtx::default();
    let bound = ToolCtx { session_id: Some("s1".into()), ..Default::default() };
    assert_eq!(call(&s, &bound, "set_working_memory", json!({ "messages": [{ "role": "user", "content": "hello" }] }))["result"]["isError"], false);
    assert_eq!(call(&s, &ctx, "create_long_term_memories", json!({ "memories": [{ "id": "m1", "text": "likes trams" }] }))["result"]["isError"], false);
    let first = send(&s, &ctx, json!({ "jsonrpc": "2.0", "id": 1, "method": "resources/list" })).unwrap();
    assert_eq!(first["result"]["resources"][0]["uri"], "edgemem://working-memory/s1");
    let cursor = first["result"]["nextCursor"].clone();
    let second = send(&s, &ctx, json!({ "jsonrpc": "2.0", "id": 2, "method": "resources/list", "params": { "cursor": cursor } })).unwrap();
    assert_eq!(second["result"]["resources"][0]["uri"], "edgemem://long-term-memory/m1");
    assert!(second["result"].get("nextCursor").is_none());
    let read = send(&s, &ctx, json!({ "jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": { "uri": "edgemem://long-term-memory/m1" } })).unwrap();
    let text: Value = serde_json::from_str(read["result"]["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text["text"], "likes trams");
    let missing = send(&s, &ctx, json!({ "jsonrpc": "2.0", "id": 4, "method": "resources/read", "params": { "uri": "edgemem://working-memory/nope" } })).unwrap();
    assert_eq!(missing["error"]["code"], code::RESOURCE_NOT_FOUND);
    let templates = send(&s, &ctx, json!({ "jsonrpc": "2.0", "id": 5, "method": "resources/templates/list" })).unwrap();
    assert_eq!(templates["result"]["resourceTemplates"].as_array().unwrap().len(), 2);
}

#[test]
fn a_bound_namespace_refuses_a_call_naming_another() {
    let s = store();
    let ctx = ToolCtx { namespace: Some("acme".into()), ..Default::default() };
    let r = call(&s, &ctx, "create_long_term_memories", json!({ "memories": [{ "text": "x", "namespace": "globex" }] }));
    assert_eq!(r["result"]["isError"], true);
    assert_eq!(r["result"]["structuredContent"]["error"]["code"], "namespace_forbidden");
}
