use super::*;

/// States as the cache parses them: numbers keep their text.
fn parsed<'a>(states: &[(&'a str, &str)]) -> Vec<(&'a str, Value)> {
    states.iter().map(|(s, t)| (*s, serde_json::from_str(t).unwrap())).collect()
}

fn put(agent: &str, service: &str, state: &str) -> ServiceOp {
    ServiceOp::Put { agent_id: agent.into(), service: service.into(), state: state.into(), written: false }
}

#[test]
fn the_default_table_is_the_seeds() {
    let c = ServiceCache::default();
    let table: Vec<(&str, u64)> = c.services().collect();
    assert_eq!(table, vec![("casino", 10), ("domains", 300), ("escrow", 15), ("faucet", 120), ("trading", 30), ("wallet", 60)]);
}

#[test]
fn an_entry_is_fresh_until_its_ttl_and_stale_after() {
    let mut c = ServiceCache::default();
    c.apply(&put("a", "casino", "{}"), 1_000).unwrap();
    assert_eq!(c.lookup("a", "casino", 10_999).unwrap().1, Freshness::Fresh);
    assert_eq!(c.lookup("a", "casino", 11_000).unwrap().1, Freshness::Stale, "at exactly the TTL it is no longer fresh");
    assert_eq!(c.next_expiry(), Some(11_000));
    assert_eq!(c.apply(&ServiceOp::Expire, 11_000).unwrap(), ServiceApplied::Dropped { count: 1 });
    assert!(c.lookup("a", "casino", 11_000).is_none());
    assert!(c.is_empty());
}

#[test]
fn registration_sets_ttls_and_refuses_bad_names_and_ttls() {
    let mut c = ServiceCache::default();
    c.apply(&ServiceOp::Register { service: "oracle".into(), ttl_seconds: 5 }, 0).unwrap();
    assert_eq!(c.ttl_seconds("oracle").unwrap(), 5);
    assert_eq!(c.apply(&put("a", "nope", "{}"), 0).unwrap_err().code(), "not_found");
    for (service, ttl) in [("snapshot", 5), ("", 5), ("x", 0), ("x", limits::SERVICE_TTL_SECONDS_MAX + 1)] {
        let before = c.clone();
        assert!(c.apply(&ServiceOp::Register { service: service.into(), ttl_seconds: ttl }, 0).is_err(), "{service:?} {ttl}");
        assert_eq!(c, before);
    }
}

#[test]
fn invalidation_drops_one_service_or_all_of_an_agent() {
    let mut c = ServiceCache::default();
    for s in ["wallet", "casino", "escrow"] {
        c.apply(&put("a", s, "{}"), 0).unwrap();
    }
    c.apply(&put("b", "wallet", "{}"), 0).unwrap();
    let drop = |c: &mut ServiceCache, agent: &str, service: Option<&str>| c.apply(&ServiceOp::Invalidate { agent_id: agent.into(), service: service.map(Into::into) }, 0).unwrap();
    assert_eq!(drop(&mut c, "a", Some("casino")), ServiceApplied::Dropped { count: 1 });
    assert_eq!(drop(&mut c, "a", None), ServiceApplied::Dropped { count: 2 });
    assert_eq!(drop(&mut c, "zz", None), ServiceApplied::Dropped { count: 0 });
    assert_eq!(c.len(), 1, "b's entry stays");
}

#[test]
fn oversized_states_and_too_many_entries_are_refused_whole() {
    let mut c = ServiceCache::default();
    let big = format!("\"{}\"", "x".repeat(limits::SERVICE_STATE_BYTES_MAX));
    assert_eq!(c.apply(&put("a", "wallet", &big), 0).unwrap_err().code(), "payload_too_large");
    assert!(c.is_empty());
}

#[test]
fn totals_are_exact_decimals_read_from_the_json_text() {
    let states = parsed(&[
        ("wallet", r#"{"balances":{"USDC":0.1,"BTC":"0.00000001"}}"#),
        ("trading", r#"{"portfolio":[{"asset":"USDC","amount":0.2}]}"#),
        ("escrow", r#"{"balance":1234567890123456789.012345678,"currency":"EUR"}"#),
        ("casino", r#"{"balances":{"USDC":"lots"}}"#),
        ("faucet", r#"{"note":"no amounts"}"#),
    ]);
    let t = totals(states.iter().map(|(s, v)| (*s, v)));
    assert_eq!(t.by_asset["USDC"].to_string(), "0.3", "0.1 + 0.2 is 0.3, not 0.30000000000000004");
    assert_eq!(t.by_asset["BTC"].to_string(), "0.00000001");
    assert_eq!(t.by_asset["EUR"].to_string(), "1234567890123456789.012345678", "28 significant digits survive");
    assert_eq!(t.skipped.len(), 1);
    assert_eq!(t.skipped[0].0, "casino", "a service with an unreadable amount is skipped whole, and said");
}

#[test]
fn an_overflowing_total_skips_the_service_that_overflows_it() {
    let max = Decimal::MAX.to_string();
    let a = format!(r#"{{"balances":{{"X":{max}}}}}"#);
    let states = parsed(&[("one", a.as_str()), ("two", a.as_str())]);
    let t = totals(states.iter().map(|(s, v)| (*s, v)));
    assert_eq!(t.by_asset["X"], Decimal::MAX);
    assert_eq!(t.skipped.iter().map(|s| s.0.as_str()).collect::<Vec<_>>(), ["two"]);
}
