use serde_json::json;

use super::*;

fn obj(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

/// The seed's example: v1 had a flat `balance`, v2 a `portfolio` map.
fn seed_schema() -> Schema {
    serde_json::from_value(json!({
        "version": 3,
        "migrations": [
            {"from": 1, "steps": [{"move": {"from": ["balance"], "to": ["portfolio", "USD"]}}]},
            {"from": 2, "steps": [{"rename": {"from": "name", "to": "display_name"}}, {"set_default": {"path": ["risk"], "value": "low"}}, {"remove": {"path": ["legacy"]}}]}
        ]
    }))
    .unwrap()
}

#[test]
fn the_seeds_v1_state_migrates_to_the_newest_version() {
    let s = seed_schema();
    s.validate("session_data").unwrap();
    let v1 = obj(json!({"balance": "1234.567890123456789", "name": "ada", "legacy": 1}));
    let out = s.migrate("session_data", 1, &v1).unwrap();
    assert_eq!(Value::Object(out), json!({"portfolio": {"USD": "1234.567890123456789"}, "display_name": "ada", "risk": "low"}));
    let v2 = obj(json!({"portfolio": {"USD": "1"}, "name": "bo", "risk": "high"}));
    assert_eq!(Value::Object(s.migrate("session_data", 2, &v2).unwrap()), json!({"portfolio": {"USD": "1"}, "display_name": "bo", "risk": "high"}));
    assert_eq!(s.migrate("session_data", 3, &v2).unwrap(), v2, "the newest version is left alone");
}

#[test]
fn a_newer_version_is_refused_and_a_step_that_cannot_apply_changes_nothing() {
    let s = seed_schema();
    assert_eq!(s.migrate("session_data", 4, &Map::new()).unwrap_err().code(), "schema_version_too_new");
    let blocked = obj(json!({"balance": 1, "portfolio": "not a map"}));
    assert_eq!(s.migrate("session_data", 1, &blocked).unwrap_err().code(), "migration_failed");
}

#[test]
fn a_chain_with_a_hole_or_an_unknown_kind_is_refused() {
    let mut s = seed_schema();
    s.migrations.remove(0);
    assert_eq!(s.validate("session_data").unwrap_err().code(), "invalid_input");
    assert_eq!(seed_schema().validate("nope").unwrap_err().code(), "not_found");
    let mut st = AgentState::default();
    st.apply(&AgentStateOp::SchemaSet { kind: "profile".into(), schema: seed_schema() }, 0).unwrap();
    let older = Schema { version: 1, migrations: vec![] };
    assert!(st.apply(&AgentStateOp::SchemaSet { kind: "profile".into(), schema: older }, 0).is_err(), "a schema never goes back");
}

#[test]
fn increments_are_exact_and_refuse_doubles() {
    assert_eq!(increment(None, &json!("0.1")).unwrap(), json!("0.1"));
    assert_eq!(increment(Some(&json!("0.1")), &json!("0.2")).unwrap(), json!("0.3"));
    assert_eq!(increment(Some(&json!("1234.567890123456789")), &json!("0.000000000000000001")).unwrap(), json!("1234.567890123456789001"));
    assert_eq!(increment(Some(&json!(41)), &json!(1)).unwrap(), json!(42));
    assert_eq!(increment(None, &json!(1)).unwrap(), json!(1));
    assert_eq!(increment(Some(&json!(i64::MAX)), &json!(1)).unwrap_err().code(), "invalid_input");
    assert_eq!(increment(Some(&json!(0.5)), &json!(1)).unwrap_err().code(), "invalid_input");
    assert_eq!(increment(None, &json!(0.5)).unwrap_err().code(), "invalid_input");
    assert_eq!(increment(Some(&json!("1")), &json!(1)).unwrap_err().code(), "invalid_input");
    assert_eq!(increment(Some(&json!("x")), &json!("1")).unwrap_err().code(), "invalid_input");
}

#[test]
fn profiles_merge_increment_and_migrate_as_one_op() {
    let mut st = AgentState::default();
    let set = |fields: Value, version: Option<u32>| AgentStateOp::ProfileSet { agent_id: "a".into(), fields: obj(fields), replace: false, schema_version: version };
    st.apply(&set(json!({"balance": "10", "name": "ada"}), None), 1).unwrap();
    st.apply(&set(json!({"name": null, "tier": 2}), None), 2).unwrap();
    assert_eq!(Value::Object(st.profile("a").unwrap().fields.clone()), json!({"balance": "10", "tier": 2}));
    let inc = AgentStateOp::ProfileIncrement { agent_id: "a".into(), field: "sessions".into(), by: json!(1) };
    st.apply(&inc, 3).unwrap();
    assert_eq!(st.apply(&inc, 4).unwrap(), AgentStateApplied::Incremented { field: "sessions".into(), value: json!(2) });
    // Register the seed's chain: the stored v1 profile migrates in one op.
    st.apply(&AgentStateOp::SchemaSet { kind: "profile".into(), schema: seed_schema() }, 5).unwrap();
    let migrate = AgentStateOp::ProfileMigrate { agent_id: "a".into(), from_version: 1, to_version: 3, fields: None };
    st.apply(&migrate, 6).unwrap();
    let p = st.profile("a").unwrap();
    assert_eq!(p.schema_version, 3);
    assert_eq!(p.fields["portfolio"]["USD"], "10");
    assert_eq!(st.apply(&migrate, 7).unwrap_err().code(), "schema_version_changed", "written back once");
    let before = st.clone();
    assert_eq!(st.apply(&set(json!({"x": 1}), Some(4)), 8).unwrap_err().code(), "schema_version_too_new");
    assert_eq!(st, before);
}
