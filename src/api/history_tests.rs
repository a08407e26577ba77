//! History routes natively: AMS's PUT with a window (compaction and the
//! gauges), hook failures, the archive, memory_prompt, edgemem's prompt,
//! agent configuration, the tool cache and tool calls.

use serde_json::{json, Value};

use super::tests::Api;

fn turns(n: usize) -> Value {
    let msgs: Vec<Value> = (0..n)
        .map(|i| json!({ "role": if i % 2 == 0 { "user" } else { "assistant" }, "content": format!("Turn {i}: order #{} ships to Lyon on day {}.", 1000 + i, i % 30) }))
        .collect();
    json!({ "messages": msgs, "data": { "cart": ["a"] } })
}

#[test]
fn put_with_a_window_compacts_and_reports_the_gauges() {
    let mut api = Api::new();
    let r = api.call("PUT", "/v1/working-memory/s1?context_window_max=1000", &turns(80).to_string());
    assert_eq!(r.status, 200, "{}", r.body);
    let b = &r.body;
    let kept = b["messages"].as_array().unwrap().len();
    assert!(kept > 0 && kept < 80, "compacted to {kept}");
    let summary = b["context"].as_str().unwrap();
    assert!(summary.contains("order #"), "{summary}");
    let used = b["context_percentage_total_used"].as_f64().unwrap();
    let until = b["context_percentage_until_summarization"].as_f64().unwrap();
    assert!(used > 0.0 && used < 70.0, "{used}");
    assert!(until > 0.0 && until < 100.0 && until > used, "{until}");
    // The newest turn is still verbatim; the oldest are in the archive.
    assert!(b["messages"].as_array().unwrap().last().unwrap()["content"].as_str().unwrap().starts_with("Turn 79:"));
    let a = api.call("GET", "/v1/working-memory/s1/archive?limit=1000", "");
    assert_eq!(a.body["total"].as_u64().unwrap() as usize + kept, 80);
    assert!(a.body["messages"][0]["content"].as_str().unwrap().starts_with("Turn 0:"));
    // GET with the window reports the gauges without compacting.
    let g = api.call("GET", "/v1/working-memory/s1?model_name=gpt-4o", "");
    assert_eq!(g.status, 200);
    assert!(g.body["context_percentage_total_used"].as_f64().unwrap() < 1.0);
    // Without a window nothing is compacted and the gauges are null.
    let r = api.call("PUT", "/v1/working-memory/s2", &turns(80).to_string());
    assert_eq!(r.body["messages"].as_array().unwrap().len(), 80);
    assert!(r.body["context_percentage_total_used"].is_null());
}

#[test]
fn a_failing_or_bad_hook_leaves_the_history_intact() {
    for hook in [Err(()), Ok(String::new()), Ok("word ".repeat(5_000))] {
        let mut api = Api::new();
        api.services.hook = Some(hook.clone());
        let r = api.call("PUT", "/v1/working-memory/s?context_window_max=1000", &turns(80).to_string());
        assert_eq!(r.status, 200, "the write itself succeeded");
        assert_eq!(r.body["compaction_error"]["code"], "hook_failed", "{hook:?}");
        assert_eq!(r.body["messages"].as_array().unwrap().len(), 80, "no turn lost");
        assert!(r.body["context"].is_null());
        let c = api.call("POST", "/v1/working-memory/s/compact", r#"{"context_window_max": 1000}"#);
        assert_eq!((c.status, c.body["code"].as_str()), (502, Some("hook_failed")));
        assert_eq!(api.call("GET", "/v1/working-memory/s/archive", "").body["total"], 0);
    }
    let mut api = Api::new();
    api.services.hook = Some(Ok("The user is shipping orders to Lyon.".into()));
    api.call("PUT", "/v1/working-memory/s", &turns(80).to_string());
    let c = api.call("POST", "/v1/working-memory/s/compact", r#"{"context_window_max": 1000}"#);
    assert_eq!((c.status, c.body["summarizer"].as_str()), (200, Some("hook")), "{}", c.body);
    assert_eq!(c.body["session"]["context"], "The user is shipping orders to Lyon.");
    let again = api.call("POST", "/v1/working-memory/s/compact", r#"{"context_window_max": 1000}"#);
    assert_eq!(again.body["compacted"], false, "below the threshold now");
    let bad = api.call("POST", "/v1/working-memory/s/compact", r#"{"context_window_max": 1000, "keep_recent_tokens": 900}"#);
    assert_eq!((bad.status, bad.body["code"].as_str()), (422, Some("invalid_input")));
}

#[test]
fn memory_prompt_puts_summary_first_and_query_last() {
    let mut api = Api::new();
    api.call("PUT", "/v1/working-memory/s?context_window_max=1000", &turns(80).to_string());
    let r = api.call("POST", "/v1/memory/prompt", r#"{"query": "Where does order 1079 ship?", "session": {"session_id": "s", "model_name": "gpt-4o"}}"#);
    assert_eq!(r.status, 200, "{}", r.body);
    let m = r.body["messages"].as_array().unwrap();
    assert_eq!(m[0]["role"], "system");
    assert!(m[0]["content"]["text"].as_str().unwrap().contains("Summary"));
    assert_eq!(m[0]["content"]["type"], "text");
    let last = m.last().unwrap();
    assert_eq!((last["role"].as_str(), last["content"]["text"].as_str()), (Some("user"), Some("Where does order 1079 ship?")));
    assert!(m[m.len() - 2]["content"]["text"].as_str().unwrap().starts_with("Turn 79:"));
    // A small window drops the oldest turns but keeps the query.
    let small = api.call("POST", "/v1/memory/prompt", r#"{"query": "q?", "session": {"session_id": "s", "context_window_max": 200}}"#);
    assert!(small.body["messages"].as_array().unwrap().len() < m.len());
    // A missing session answers with the query alone, as AMS does.
    let none = api.call("POST", "/v1/memory/prompt", r#"{"query": "hi", "session": {"session_id": "nope"}}"#);
    assert_eq!(none.body["messages"].as_array().unwrap().len(), 1);
    let bad = api.call("POST", "/v1/memory/prompt", r#"{"query": " "}"#);
    assert_eq!(bad.status, 422);
}

#[test]
fn agent_configuration_feeds_the_prompt() {
    let mut api = Api::new();
    assert_eq!(api.call("GET", "/v1/agents/bot/config", "").status, 404);
    api.call("PUT", "/v1/agents/bot/prompt", r#"{"text": "You are a careful logistics agent."}"#);
    let v2 = api.call("PUT", "/v1/agents/bot/prompt", r#"{"text": "You are a terse agent.", "note": "shorter"}"#);
    assert_eq!(v2.body["version"], 2);
    api.call("POST", "/v1/agents/bot/patches", r#"{"text": "CRITICAL: Warehouse Ohio is closed."}"#);
    api.call("POST", "/v1/agents/bot/patches", r#"{"text": "Prefer rail freight."}"#);
    let rb = api.call("POST", "/v1/agents/bot/prompt/rollback", r#"{"version": 1}"#);
    assert_eq!(rb.body["prompt"], "You are a careful logistics agent.");
    api.call("PUT", "/v1/working-memory/s", &turns(6).to_string());
    let p = api.call("POST", "/v1/prompt", r#"{"query": "Status?", "session_id": "s", "agent_id": "bot", "model": "gpt-4o", "memories": ["The user is Ana."]}"#);
    assert_eq!(p.status, 200, "{}", p.body);
    let m = p.body["messages"].as_array().unwrap();
    assert_eq!(m[0]["content"], "You are a careful logistics agent.\n\nCRITICAL: Warehouse Ohio is closed.\n\nPrefer rail freight.");
    assert!(m[m.len() - 2]["content"].as_str().unwrap().contains("The user is Ana."));
    assert_eq!(p.body["counting"], "exact:o200k_base");
    let rm = api.call("DELETE", "/v1/agents/bot/patches?glob=CRITICAL:%20Warehouse%20Ohio*", "");
    assert_eq!(rm.body["removed"].as_array().unwrap().len(), 1);
    let a = api.call("POST", "/v1/prompt", r#"{"query": "Status?", "agent_id": "bot", "model": "claude-sonnet-4", "format": "anthropic"}"#);
    assert_eq!(a.body["system"], "You are a careful logistics agent.\n\nPrefer rail freight.");
    assert_eq!(a.body["counting"], "estimate");
    for (body, code) in [
        (r#"{"query": "x"}"#, "invalid_input"),
        (r#"{"query": "x", "model": "no-such-model"}"#, "invalid_input"),
        (r#"{"query": "x", "model": "gpt-4o", "session_id": "missing"}"#, "not_found"),
        (r#"{"query": "x", "model": "gpt-4o", "format": "xml"}"#, "invalid_input"),
        (r#"{"query": "x", "model": "gpt-4o", "surprise": 1}"#, "invalid_input"),
    ] {
        assert_eq!(api.call("POST", "/v1/prompt", body).body["code"], code, "{body}");
    }
}

#[test]
fn tool_cache_routes_count_hits_and_misses() {
    let mut api = Api::new();
    api.call("PUT", "/v1/working-memory/s", "{}");
    let miss = api.call("GET", "/v1/working-memory/s/tool-cache?tool=wallet.balance&args=%7B%22a%22%3A1%7D", "");
    assert_eq!(miss.body["hit"], false);
    let put = api.call("PUT", "/v1/working-memory/s/tool-cache", r#"{"tool": "wallet.balance", "args": {"b": 2, "a": 1}, "result": {"usdc": "12.50"}, "ttl_seconds": 60}"#);
    assert_eq!(put.status, 200, "{}", put.body);
    let hit = api.call("GET", "/v1/working-memory/s/tool-cache?tool=wallet.balance&args=%7B%22a%22%3A1%2C%22b%22%3A2%7D", "");
    assert_eq!((hit.body["hit"].as_bool(), &hit.body["entry"]["result"]["usdc"]), (Some(true), &json!("12.50")));
    let list = api.call("GET", "/v1/working-memory/s/tool-cache", "");
    assert_eq!((list.body["hits"].as_u64(), list.body["misses"].as_u64()), (Some(1), Some(1)));
    api.now += 61_000;
    assert_eq!(api.call("GET", "/v1/working-memory/s/tool-cache?tool=wallet.balance&args=%7B%22a%22%3A1%2C%22b%22%3A2%7D", "").body["hit"], false);
    let ttls = api.call("PUT", "/v1/tool-ttls", r#"{"ttls": {"casino.odds": 5}}"#);
    assert_eq!(ttls.body["ttls"]["casino.odds"], 5);
    api.call("PUT", "/v1/working-memory/s/tool-cache", r#"{"tool": "casino.odds", "result": 1.5}"#);
    assert_eq!(api.call("DELETE", "/v1/working-memory/s/tool-cache?tool=casino.odds", "").body["invalidated"], 1);
    assert_eq!(api.call("GET", "/v1/working-memory/nope/tool-cache?tool=x", "").status, 404);
    assert_eq!(api.call("PUT", "/v1/working-memory/s/tool-cache", r#"{"tool": "x", "result": 1, "ttl_seconds": 999999999}"#).status, 422);
}

#[test]
fn tool_calls_respect_the_allow_list_and_validate_arguments() {
    let mut api = Api::new();
    api.call("PUT", "/v1/working-memory/s", "{}");
    let schemas = api.call("GET", "/v1/tools/schemas?format=openai", "");
    let names: Vec<&str> = schemas.body.as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"get_working_memory") && names.contains(&"get_current_datetime"));
    let call = api.call("POST", "/v1/tools/call", r#"{"name": "add_messages_to_working_memory", "arguments": "{\"session_id\": \"s\", \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}"}"#);
    assert_eq!(call.body["result"]["messages"], 1, "{}", call.body);
    let data = api.call("POST", "/v1/tools/call", r#"{"name": "update_working_memory_data", "arguments": {"session_id": "s", "data": {"k": "v"}}}"#);
    assert_eq!(data.body["result"]["data"]["k"], "v");
    api.call("PUT", "/v1/agents/bot/tools", r#"{"tools": ["get_current_datetime"]}"#);
    let anth = api.call("GET", "/v1/tools/schemas?format=anthropic&agent_id=bot", "");
    assert_eq!(anth.body.as_array().unwrap().len(), 1);
    assert!(anth.body[0]["input_schema"].is_object());
    let refused = api.call("POST", "/v1/tools/call", r#"{"name": "get_working_memory", "arguments": {"session_id": "s"}, "agent_id": "bot"}"#);
    assert_eq!((refused.status, refused.body["code"].as_str()), (422, Some("tool_not_allowed")));
    for (body, code) in [
        (r#"{"name": "get_working_memory", "arguments": {"session": "s"}}"#, "invalid_input"),
        (r#"{"name": "get_working_memory", "arguments": "{not json"}"#, "invalid_input"),
        (r#"{"name": "rm_rf", "arguments": {}}"#, "not_found"),
        (r#"{"name": "get_account_balance", "arguments": {"account_id": "nope"}}"#, "not_found"),
    ] {
        assert_eq!(api.call("POST", "/v1/tools/call", body).body["code"], code, "{body}");
    }
}

#[test]
fn prompt_as_plan_names_what_to_send_without_building_it() {
    let mut api = Api::new();
    let mut s = turns(40);
    s["context"] = json!("Ana ships parcels to Porto.");
    api.call("PUT", "/v1/working-memory/s", &s.to_string());
    let body = |shape: &str| format!(r#"{{"query": "Status?", "session_id": "s", "window_tokens": 300, "memories": ["The user is Ana.", "Ana likes rail."]{shape}}}"#);
    let full = api.call("POST", "/v1/prompt", &body(""));
    let plan = api.call("POST", "/v1/prompt", &body(r#", "as": "plan""#));
    assert_eq!(plan.status, 200, "{}", plan.body);
    assert!(plan.body.get("messages").is_none(), "a plan carries no messages: {}", plan.body);
    let kept = full.body["turns_kept"].as_u64().unwrap() as usize;
    assert!(kept > 0 && kept < 40, "the window keeps some turns, not all: {}", full.body);
    // The ids are the newest `kept` turns of the session, oldest first.
    let session = api.call("GET", "/v1/working-memory/s", "");
    let ids: Vec<&str> = session.body["messages"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!(plan.body["plan"]["turn_ids"], json!(ids[40 - kept..]));
    assert_eq!(plan.body["plan"]["summary"], "Ana ships parcels to Porto.");
    assert_eq!(plan.body["plan"]["memories_kept"], full.body["memories_kept"]);
    for k in ["used_tokens", "left_tokens", "turns_kept", "dropped"] {
        assert_eq!(plan.body[k], full.body[k], "{k}: the plan is the same assembly");
    }
    assert_eq!(api.call("POST", "/v1/prompt", &body(r#", "as": "object""#)).body["messages"], full.body["messages"]);
    assert_eq!(api.call("POST", "/v1/prompt", &body(r#", "as": "bytes""#)).body["code"], "invalid_input");
}
