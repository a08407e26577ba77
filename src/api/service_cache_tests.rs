//! The service-state cache's routes, natively, with a scripted upstream.

use std::collections::BTreeMap;

use super::tests::Api;
use crate::core::error::Error;

fn upstream(api: &mut Api, answers: &[(&str, Result<&str, Error>)]) {
    let map: BTreeMap<String, crate::core::error::Result<String>> = answers.iter().map(|(s, a)| ((*s).to_owned(), a.clone().map(str::to_owned))).collect();
    api.services.upstream = Some(map);
}

fn calls(api: &Api) -> usize {
    api.services.upstream_calls.get()
}

#[test]
fn a_miss_reads_through_then_the_cache_serves_until_the_ttl() {
    let mut api = Api::new();
    upstream(&mut api, &[("casino", Ok(r#"{"balances":{"USDC":"10.50"}}"#))]);
    let first = api.call("GET", "/v1/services/casino/state?agent_id=a1", "");
    assert_eq!(first.status, 200, "{}", first.body);
    assert_eq!((first.body["source"].as_str(), first.body["stale"].as_bool(), first.body["age_ms"].as_u64()), (Some("upstream"), Some(false), Some(0)));
    assert_eq!(first.body["state"]["balances"]["USDC"], "10.50");
    api.now += 9_999;
    let second = api.call("GET", "/v1/services/casino/state?agent_id=a1", "");
    assert_eq!((second.body["source"].as_str(), second.body["age_ms"].as_u64()), (Some("cache"), Some(9_999)));
    assert_eq!(calls(&api), 1);
    // At the TTL (casino: 10 s) the entry is never served again.
    api.now += 1;
    let third = api.call("GET", "/v1/services/casino/state?agent_id=a1", "");
    assert_eq!((third.body["source"].as_str(), third.body["age_ms"].as_u64()), (Some("upstream"), Some(0)));
    assert_eq!(calls(&api), 2);
}

#[test]
fn an_upstream_error_is_typed_and_never_cached_and_stale_state_only_when_asked() {
    let mut api = Api::new();
    upstream(&mut api, &[("wallet", Ok(r#"{"balance":"1","asset":"USDC"}"#))]);
    assert_eq!(api.call("GET", "/v1/services/wallet/state?agent_id=a", "").status, 200);
    api.now += 60_000;
    upstream(&mut api, &[("wallet", Err(Error::Upstream { service: "wallet".into(), status: 503, detail: String::new() }))]);
    let failed = api.call("GET", "/v1/services/wallet/state?agent_id=a", "");
    assert_eq!((failed.status, failed.body["code"].as_str()), (502, Some("upstream_error")));
    assert!(failed.body["detail"].as_str().unwrap().contains("wallet"), "the service is named");
    let again = api.call("GET", "/v1/services/wallet/state?agent_id=a", "");
    assert_eq!(again.status, 502);
    assert_eq!(calls(&api), 3, "the error was not cached: each get asked the upstream");
    let stale = api.call("GET", "/v1/services/wallet/state?agent_id=a&allow_stale=true", "");
    assert_eq!(stale.status, 200, "{}", stale.body);
    assert_eq!((stale.body["stale"].as_bool(), stale.body["age_ms"].as_u64()), (Some(true), Some(60_000)));
    assert_eq!(stale.body["upstream_error"]["code"], "upstream_error");
    upstream(&mut api, &[("wallet", Err(Error::UpstreamTimeout { service: "wallet".into(), timeout_ms: 10_000 }))]);
    let slow = api.call("GET", "/v1/services/wallet/state?agent_id=a", "");
    assert_eq!((slow.status, slow.body["code"].as_str()), (504, Some("upstream_timeout")));
}

#[test]
fn force_refresh_invalidate_and_write_through() {
    let mut api = Api::new();
    upstream(&mut api, &[("escrow", Ok(r#"{"open":1}"#))]);
    api.call("GET", "/v1/services/escrow/state?agent_id=a", "");
    api.call("GET", "/v1/services/escrow/state?agent_id=a&force_refresh=true", "");
    assert_eq!(calls(&api), 2, "a forced refresh skips the fresh entry");
    let dropped = api.call("DELETE", "/v1/services/escrow/state?agent_id=a", "");
    assert_eq!(dropped.body["invalidated"], 1);
    api.call("GET", "/v1/services/escrow/state?agent_id=a", "");
    assert_eq!(calls(&api), 3, "after an invalidation the next get reads through");
    let put = api.call("PUT", "/v1/services/escrow/state?agent_id=a", r#"{"state":{"open":2,"amount":1234.567890123456789}}"#);
    assert_eq!(put.status, 200, "{}", put.body);
    let got = api.call("GET", "/v1/services/escrow/state?agent_id=a", "");
    assert_eq!(got.body["source"], "written");
    assert_eq!(got.body["state"]["open"], 2);
    assert_eq!(got.body["state"]["amount"].to_string(), "1234.567890123456789", "numbers stay exact");
    assert_eq!(calls(&api), 3);
    assert_eq!(api.call("DELETE", "/v1/services/state?agent_id=a", "").body["invalidated"], 1);
}

#[test]
fn the_portfolio_snapshot_returns_each_state_or_its_error_with_exact_totals() {
    let mut api = Api::new();
    upstream(
        &mut api,
        &[
            ("wallet", Ok(r#"{"balances":{"USDC":0.1}}"#)),
            ("trading", Ok(r#"{"portfolio":[{"asset":"USDC","amount":0.2},{"asset":"BTC","amount":"0.1234567890123456789012345678"}]}"#)),
            ("casino", Err(Error::Upstream { service: "casino".into(), status: 500, detail: String::new() })),
            ("domains", Ok(r#"{"names":3}"#)),
            ("faucet", Ok(r#"{"balance":5,"currency":"USDC"}"#)),
            ("escrow", Err(Error::UpstreamTimeout { service: "escrow".into(), timeout_ms: 500 })),
        ],
    );
    let r = api.call("GET", "/v1/services/snapshot?agent_id=a", "");
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!((r.body["ok"].as_u64(), r.body["failed"].as_u64()), (Some(4), Some(2)));
    assert_eq!(r.body["services"]["casino"]["error"]["code"], "upstream_error");
    assert_eq!(r.body["services"]["escrow"]["error"]["code"], "upstream_timeout");
    assert_eq!(r.body["services"]["wallet"]["age_ms"], 0);
    assert_eq!(r.body["totals"]["USDC"], "5.3", "0.1 + 0.2 + 5, exactly");
    assert_eq!(r.body["totals"]["BTC"], "0.1234567890123456789012345678", "28 significant digits");
    let some = api.call("GET", "/v1/services/snapshot?agent_id=a&services=wallet,casino", "");
    assert_eq!(some.body["services"].as_object().unwrap().len(), 2);
}

#[test]
fn registration_and_bad_input() {
    let mut api = Api::new();
    let listed = api.call("GET", "/v1/services", "");
    assert_eq!(listed.body["services"].as_array().unwrap().len(), 6);
    assert_eq!(api.call("PUT", "/v1/services/oracle", r#"{"ttl_seconds":5}"#).status, 200);
    assert_eq!(api.call("GET", "/v1/services", "").body["services"].as_array().unwrap().len(), 7);
    assert_eq!(api.call("PUT", "/v1/services/oracle", r#"{"ttl_seconds":0}"#).status, 422);
    assert_eq!(api.call("PUT", "/v1/services/snapshot", r#"{"ttl_seconds":5}"#).body["code"], "invalid_input", "snapshot is a route, not a service");
    assert_eq!(api.call("PUT", "/v1/services/oracle", r#"{"ttl_seconds":1.5}"#).body["code"], "invalid_input");
    assert_eq!(api.call("GET", "/v1/services/nope/state?agent_id=a", "").status, 404);
    assert_eq!(api.call("GET", "/v1/services/wallet/state", "").body["code"], "invalid_query");
    assert_eq!(api.call("GET", "/v1/services/wallet/state?agent_id=a&allow_stale=maybe", "").body["code"], "invalid_query");
    // No upstream configured: a miss is 404, nothing is stored.
    assert_eq!(api.call("GET", "/v1/services/wallet/state?agent_id=a", "").body["code"], "not_found");
    let feed = api.call("GET", "/v1/events?since=0", "");
    let kinds: Vec<&str> = feed.body["events"].as_array().unwrap().iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["service_cache.registered"], "one event per committed write, none for refused ones");
}

/// The seed's v1 → v2 example through the routes: a declarative chain,
/// run on read and written back once.
#[test]
fn user_schema_versions_migrate_on_read_once() {
    let mut api = Api::new();
    assert_eq!(api.call("PUT", "/v1/working-memory/s", r#"{"data":{"balance":1234.567890123456789}}"#).status, 200);
    assert_eq!(api.call("PUT", "/v1/agents/ag/profile", r#"{"fields":{"balance":"10.5","name":"ada"}}"#).status, 200);
    let chain = r#"{"version":2,"migrations":[{"from":1,"steps":[{"move":{"from":["balance"],"to":["portfolio","USD"]}}]}]}"#;
    for kind in ["session_data", "profile"] {
        let r = api.call("PUT", &format!("/v1/schemas/{kind}"), chain);
        assert_eq!(r.status, 200, "{}", r.body);
    }
    let got = api.call("GET", "/v1/working-memory/s", "");
    assert_eq!(got.body["data_schema_version"], 2);
    assert_eq!(got.body["data"]["portfolio"]["USD"].to_string(), "1234.567890123456789");
    let p = api.call("GET", "/v1/agents/ag/profile", "");
    assert_eq!((p.body["schema_version"].as_u64(), p.body["fields"]["portfolio"]["USD"].as_str()), (Some(2), Some("10.5")));
    // Written back once: a second read migrates nothing.
    api.call("GET", "/v1/working-memory/s", "");
    api.call("GET", "/v1/agents/ag/profile", "");
    let kinds: Vec<String> = api.call("GET", "/v1/events?since=0", "").body["events"].as_array().unwrap().iter().map(|e| e["kind"].as_str().unwrap().to_owned()).collect();
    assert_eq!(kinds.iter().filter(|k| *k == "working_memory.migrated").count(), 1);
    assert_eq!(kinds.iter().filter(|k| *k == "profile.migrated").count(), 1);
    // Newer than the newest: refused, nothing written.
    let newer = api.call("PUT", "/v1/working-memory/t", r#"{"data":{"x":1},"data_schema_version":3}"#);
    assert_eq!((newer.status, newer.body["code"].as_str()), (409, Some("schema_version_too_new")));
    // A host migration that wrote against an old version is refused.
    let stale = api.call("POST", "/v1/working-memory/s/data/migrate", r#"{"from_version":1,"to_version":2,"data":{}}"#);
    assert_eq!(stale.body["code"], "schema_version_changed");
    // Increments are exact.
    api.call("PUT", "/v1/agents/ag/profile", r#"{"fields":{"spent":"0.1"}}"#);
    let inc = api.call("POST", "/v1/agents/ag/profile/increment", r#"{"field":"spent","by":"0.2"}"#);
    assert_eq!(inc.body["value"], "0.3");
    let sessions = api.call("POST", "/v1/agents/ag/profile/increment", r#"{"field":"session_count","by":1}"#);
    assert_eq!(sessions.body["value"], 1);
    assert_eq!(api.call("POST", "/v1/agents/ag/profile/increment", r#"{"field":"spent","by":0.2}"#).body["code"], "invalid_input", "a double is refused, not rounded");
    let bad = api.call("PUT", "/v1/schemas/profile", r#"{"version":3,"migrations":[{"from":2,"steps":[]}]}"#);
    assert_eq!(bad.body["code"], "invalid_input", "a chain with a hole");
}
