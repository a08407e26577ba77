//! Agent profiles (`/v1/agents/{agent}/profile`), user schemas
//! (`/v1/schemas/{kind}`) and the write-back of session-data migrations
//! (`POST /v1/working-memory/{id}/data/migrate`).
//!
//! Reads migrate: when a declarative schema is registered and the stored
//! state is at an older version, the chain runs as one logged op before the
//! answer, so it is written back once. A host that migrates with its own
//! code (the npm package's JS functions) writes back with `.../migrate`
//! and `fields`/`data`, refused if the state moved meanwhile.

use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::api::{parse_json, Request};
use crate::core::agent_state::{AgentStateApplied, AgentStateOp, Profile, Schema};
use crate::core::engine::{Applied, Op};
use crate::core::error::{Error, Result};
use crate::core::time::{format_rfc3339, Millis};
use crate::store::{Backend, Store};

fn profile_json(agent_id: &str, p: &Profile) -> Value {
    json!({
        "agent_id": agent_id,
        "fields": p.fields,
        "schema_version": p.schema_version,
        "created_at": format_rfc3339(p.created_at),
        "updated_at": format_rfc3339(p.updated_at),
    })
}

async fn apply<B: Backend>(store: &Store<B>, op: AgentStateOp, now: Millis) -> Result<AgentStateApplied> {
    match store.apply(Op::AgentState(op), now).await? {
        Applied::AgentState(a) => Ok(a),
        other => Err(Error::Internal { detail: format!("agent state op returned {other:?}") }),
    }
}

/// Runs the registered profile chain when the stored profile is older.
async fn migrate_profile_if_due<B: Backend>(store: &Store<B>, agent_id: &str, now: Millis) -> Result<()> {
    let due = store
        .read(|e| {
            let st = e.agent_state();
            match (st.schema("profile"), st.profile(agent_id)) {
                (Some(s), Some(p)) if p.schema_version < s.version => Some((p.schema_version, s.version)),
                _ => None,
            }
        })
        .await?;
    if let Some((from_version, to_version)) = due {
        apply(store, AgentStateOp::ProfileMigrate { agent_id: agent_id.into(), from_version, to_version, fields: None }, now).await?;
    }
    Ok(())
}

/// Runs the registered session-data chain when the session's data is older.
pub async fn migrate_session_if_due<B: Backend>(store: &Store<B>, session_id: &str, now: Millis) -> Result<()> {
    let due = store
        .read(|e| {
            let newest = e.agent_state().schema("session_data")?.version;
            let at = e.session(session_id, now)?.data_schema_version.unwrap_or(1);
            (at < newest).then_some((at, newest))
        })
        .await?;
    if let Some((from_version, to_version)) = due {
        store.apply(Op::SessionDataMigrate { session_id: session_id.into(), from_version, to_version, data: None }, now).await?;
    }
    Ok(())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfilePut {
    #[serde(default)]
    fields: Map<String, Value>,
    #[serde(default)]
    replace: bool,
    #[serde(default)]
    schema_version: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct IncrementBody {
    field: String,
    by: Value,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MigrateBody {
    from_version: u32,
    to_version: u32,
    #[serde(default, alias = "data")]
    fields: Option<Map<String, Value>>,
}

/// Routes `/v1/agents/{agent}/profile...`.
pub async fn profile_route<B: Backend>(store: &Store<B>, req: &Request<'_>, now: Millis, agent: &str, rest: &[&str]) -> Result<Value> {
    let found = |a: AgentStateApplied| match a {
        AgentStateApplied::Profile(p) => Ok(profile_json(agent, &p)),
        other => Err(Error::Internal { detail: format!("profile op returned {other:?}") }),
    };
    match (rest, req.method) {
        ([], "GET") => {
            migrate_profile_if_due(store, agent, now).await?;
            let p = store.read(|e| e.agent_state().profile(agent).cloned()).await?.ok_or_else(|| Error::not_found("profile", agent))?;
            Ok(profile_json(agent, &p))
        }
        ([], "PUT") => {
            let b: ProfilePut = parse_json(req.body)?;
            if !b.replace {
                migrate_profile_if_due(store, agent, now).await?;
            }
            found(apply(store, AgentStateOp::ProfileSet { agent_id: agent.into(), fields: b.fields, replace: b.replace, schema_version: b.schema_version }, now).await?)
        }
        ([], "DELETE") => match apply(store, AgentStateOp::ProfileDelete { agent_id: agent.into() }, now).await? {
            AgentStateApplied::Deleted { existed } => Ok(json!({ "agent_id": agent, "deleted": existed })),
            other => Err(Error::Internal { detail: format!("delete returned {other:?}") }),
        },
        (["increment"], "POST") => {
            let b: IncrementBody = parse_json(req.body)?;
            migrate_profile_if_due(store, agent, now).await?;
            match apply(store, AgentStateOp::ProfileIncrement { agent_id: agent.into(), field: b.field, by: b.by }, now).await? {
                AgentStateApplied::Incremented { field, value } => Ok(json!({ "agent_id": agent, "field": field, "value": value })),
                other => Err(Error::Internal { detail: format!("increment returned {other:?}") }),
            }
        }
        (["migrate"], "POST") => {
            let b: MigrateBody = parse_json(req.body)?;
            found(apply(store, AgentStateOp::ProfileMigrate { agent_id: agent.into(), from_version: b.from_version, to_version: b.to_version, fields: b.fields }, now).await?)
        }
        ([] | ["increment"] | ["migrate"], other) => Err(Error::MethodNotAllowed { method: other.to_owned() }),
        _ => Err(Error::not_found("route", req.path)),
    }
}

/// Routes `/v1/schemas...`.
pub async fn schemas_route<B: Backend>(store: &Store<B>, req: &Request<'_>, now: Millis, rest: &[&str]) -> Result<Value> {
    match (rest, req.method) {
        ([] | [""], "GET") => store
            .read(|e| {
                let all: Map<String, Value> = crate::core::agent_state::KINDS
                    .iter()
                    .filter_map(|k| e.agent_state().schema(k).map(|s| ((*k).to_owned(), serde_json::to_value(s).unwrap_or(Value::Null))))
                    .collect();
                json!({ "schemas": all })
            })
            .await,
        ([kind], "GET") => {
            let s = store.read(|e| e.agent_state().schema(kind).cloned()).await?.ok_or_else(|| Error::not_found("schema", *kind))?;
            serde_json::to_value(&s).map_err(|e| Error::Internal { detail: e.to_string() })
        }
        ([kind], "PUT") => {
            let schema: Schema = parse_json(req.body)?;
            match apply(store, AgentStateOp::SchemaSet { kind: (*kind).into(), schema }, now).await? {
                AgentStateApplied::Schema { kind, version } => Ok(json!({ "kind": kind, "version": version })),
                other => Err(Error::Internal { detail: format!("schema op returned {other:?}") }),
            }
        }
        ([_], other) => Err(Error::MethodNotAllowed { method: other.to_owned() }),
        _ => Err(Error::not_found("route", req.path)),
    }
}

/// `POST /v1/working-memory/{id}/data/migrate`: a host's migration written
/// back (`data`), or the registered chain run now (no `data`).
pub async fn migrate_session_route<B: Backend>(store: &Store<B>, req: &Request<'_>, now: Millis, id: &str) -> Result<Value> {
    let b: MigrateBody = parse_json(req.body)?;
    match store.apply(Op::SessionDataMigrate { session_id: id.into(), from_version: b.from_version, to_version: b.to_version, data: b.fields }, now).await? {
        Applied::Session(s) => Ok(crate::api::working_memory::session_json(&s, None)),
        other => Err(Error::Internal { detail: format!("migrate returned {other:?}") }),
    }
}
