//! The service-state cache over HTTP (`/v1/services/...`) and the npm
//! package's `memory.services`: read-through on a miss through the host's
//! upstream ([`Services::fetch_service`]), one upstream call per key however
//! many gets wait on it, write-through after the agent's own mutation,
//! invalidation, forced refresh, and a concurrent portfolio snapshot in
//! which one failing service does not fail the rest.
//!
//! Routes:
//! - `GET /v1/services`: the TTL table; `PUT /v1/services/{service}`
//!   `{ttl_seconds}` registers a service or sets its TTL;
//! - `GET /v1/services/{service}/state?agent_id=&allow_stale=&force_refresh=`;
//! - `PUT /v1/services/{service}/state?agent_id=` with `{"state": ...}`
//!   (write-through), `DELETE` the same (invalidate), `DELETE
//!   /v1/services/state?agent_id=` (every service of the agent);
//! - `GET /v1/services/snapshot?agent_id=&services=a,b`.

use futures_util::future::join_all;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::api::services::Services;
use crate::api::{parse_json, Ctx, Request};
use crate::core::engine::{Applied, Op};
use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::service_cache::{totals, validate_service, CachedState, Freshness, ServiceApplied, ServiceOp};
use crate::core::session::validate_id;
use crate::core::time::{format_rfc3339, Millis};
use crate::store::{Backend, Store, Turn};

/// How a get may be answered.
#[derive(Debug, Clone, Copy, Default)]
pub struct GetOptions {
    /// Serve an entry past its TTL when the upstream cannot answer (or there is
    /// none), marked `stale: true`.
    pub allow_stale: bool,
    /// Skip a fresh entry and read the upstream.
    pub force_refresh: bool,
}

/// Where an answer came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Cache,
    Upstream,
}

fn answer(agent_id: &str, service: &str, e: &CachedState, now: Millis, source: Source, stale: bool) -> Result<Value> {
    let state: Value = serde_json::from_str(&e.state).map_err(|err| Error::Internal { detail: format!("cached state of {service}: {err}") })?;
    let source = match (source, e.written) {
        (Source::Upstream, _) => "upstream",
        (Source::Cache, true) => "written",
        (Source::Cache, false) => "cache",
    };
    Ok(json!({
        "agent_id": agent_id,
        "service": service,
        "state": state,
        "age_ms": now.saturating_sub(e.fetched_at),
        "stale": stale,
        "source": source,
        "fetched_at": format_rfc3339(e.fetched_at),
        "expires_at": format_rfc3339(e.expires_at),
    }))
}

fn error_json(e: &Error) -> Value {
    json!({ "code": e.code(), "detail": e.to_string() })
}

async fn cached<B: Backend>(store: &Store<B>, agent_id: &str, service: &str, now: Millis) -> Result<Option<(CachedState, Freshness)>> {
    store.read(|e| e.services().lookup(agent_id, service, now).map(|(c, f)| (c.clone(), f))).await
}

/// Reads the upstream and stores what it answered. Never stores an error.
async fn refresh<B: Backend>(store: &Store<B>, host: &dyn Services, agent_id: &str, service: &str, now: Millis) -> Result<CachedState> {
    let fetch = host.fetch_service(agent_id, service).ok_or_else(|| Error::not_found("service upstream", service))?;
    let text = fetch.await?;
    if text.len() > limits::SERVICE_STATE_BYTES_MAX {
        return Err(Error::Upstream { service: service.into(), status: 200, detail: format!("state is {} bytes, over the limit of {}", text.len(), limits::SERVICE_STATE_BYTES_MAX) });
    }
    if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(&text) {
        return Err(Error::Upstream { service: service.into(), status: 200, detail: format!("state is not JSON: {e}") });
    }
    match store.apply(Op::Service(ServiceOp::Put { agent_id: agent_id.into(), service: service.into(), state: text, written: false }), now).await? {
        Applied::Service(ServiceApplied::Stored(c)) => Ok(c),
        other => Err(Error::Internal { detail: format!("put returned {other:?}") }),
    }
}

/// One service's state for an agent: fresh from the cache, else read
/// through the upstream (one call per key, shared by concurrent gets).
pub async fn get_state<B: Backend>(store: &Store<B>, host: &dyn Services, agent_id: &str, service: &str, now: Millis, opts: GetOptions) -> Result<Value> {
    validate_id("agent_id", agent_id)?;
    // The service must be registered; its cached state, if any, is read under the same lock.
    let before = store
        .read(|e| e.services().ttl_seconds(service).map(|_| e.services().lookup(agent_id, service, now).map(|(c, f)| (c.clone(), f))))
        .await??;
    if let (Some((c, Freshness::Fresh)), false) = (&before, opts.force_refresh) {
        return answer(agent_id, service, c, now, Source::Cache, false);
    }
    let outcome = match store.flights().join(&format!("{agent_id}\u{0}{service}")).await {
        Turn::Leader(leader) => {
            let r = refresh(store, host, agent_id, service, now).await;
            leader.land(r.as_ref().map(|_| ()).map_err(Clone::clone));
            r.map(|c| (c, Source::Upstream))
        }
        Turn::Follower(r) => match r {
            // The leader stored it; read it at the leader's freshness.
            Ok(()) => match cached(store, agent_id, service, now).await? {
                Some((c, _)) => Ok((c, Source::Upstream)),
                None => Err(Error::not_found("service state", format!("{agent_id}/{service}"))),
            },
            Err(e) => Err(e),
        },
    };
    match outcome {
        Ok((c, source)) => answer(agent_id, service, &c, now, source, false),
        Err(e) => match (&before, opts.allow_stale) {
            (Some((c, _)), true) => {
                let mut a = answer(agent_id, service, c, now, Source::Cache, now >= c.expires_at)?;
                a["upstream_error"] = error_json(&e);
                Ok(a)
            }
            _ => Err(e),
        },
    }
}

/// Every service's state, read concurrently; each entry is a state or an
/// error, and totals by asset are exact decimal strings.
pub async fn portfolio_snapshot<B: Backend>(store: &Store<B>, host: &dyn Services, agent_id: &str, services: Option<Vec<String>>, now: Millis) -> Result<Value> {
    validate_id("agent_id", agent_id)?;
    let names = match services {
        Some(list) => list,
        None => store.read(|e| e.services().services().map(|(s, _)| s.to_owned()).collect::<Vec<_>>()).await?,
    };
    if names.len() > limits::SERVICE_SNAPSHOT_SERVICES_MAX {
        return Err(Error::LimitExceeded { what: "services in one snapshot".into(), limit: limits::SERVICE_SNAPSHOT_SERVICES_MAX as u64 });
    }
    let answers = join_all(names.iter().map(|s| get_state(store, host, agent_id, s, now, GetOptions::default()))).await;
    let t = totals(names.iter().zip(&answers).filter_map(|(name, a)| a.as_ref().ok().map(|v| (name.as_str(), &v["state"]))));
    let mut out = Map::new();
    let (mut ok, mut failed) = (0, 0);
    for (name, a) in names.iter().zip(answers) {
        match a {
            Ok(mut v) => {
                ok += 1;
                out.insert(name.clone(), json!({ "state": v["state"].take(), "age_ms": v["age_ms"], "source": v["source"] }));
            }
            Err(e) => {
                failed += 1;
                out.insert(name.clone(), json!({ "error": error_json(&e) }));
            }
        }
    }
    let by_asset: Map<String, Value> = t.by_asset.iter().map(|(a, d)| (a.clone(), Value::String(d.to_string()))).collect();
    let skipped: Vec<Value> = t.skipped.iter().map(|(s, why)| json!({ "service": s, "reason": why })).collect();
    Ok(json!({
        "agent_id": agent_id,
        "taken_at": format_rfc3339(now),
        "services": out,
        "ok": ok,
        "failed": failed,
        "totals": by_asset,
        "totals_skipped": skipped,
    }))
}

/// Stores the agent's own view after a mutation it made (write-through).
pub async fn put_state<B: Backend>(store: &Store<B>, agent_id: &str, service: &str, state: &Value, now: Millis) -> Result<Value> {
    validate_id("agent_id", agent_id)?;
    let text = state.to_string();
    match store.apply_reporting(Op::Service(ServiceOp::Put { agent_id: agent_id.into(), service: service.into(), state: text, written: true }), now).await? {
        (Applied::Service(ServiceApplied::Stored(c)), scrubbed) => {
            let mut v = answer(agent_id, service, &c, now, Source::Cache, false)?;
            super::privacy::report_into(&mut v, &scrubbed);
            Ok(v)
        }
        (other, _) => Err(Error::Internal { detail: format!("put returned {other:?}") }),
    }
}

/// Drops cached state: one service's, or every service's of the agent.
pub async fn invalidate<B: Backend>(store: &Store<B>, agent_id: &str, service: Option<&str>, now: Millis) -> Result<Value> {
    validate_id("agent_id", agent_id)?;
    if let Some(s) = service {
        store.read(|e| e.services().ttl_seconds(s)).await??;
    }
    match store.apply(Op::Service(ServiceOp::Invalidate { agent_id: agent_id.into(), service: service.map(Into::into) }), now).await? {
        Applied::Service(ServiceApplied::Dropped { count }) => Ok(json!({ "agent_id": agent_id, "invalidated": count })),
        other => Err(Error::Internal { detail: format!("invalidate returned {other:?}") }),
    }
}

fn table<B: Backend>(store: &Store<B>) -> impl std::future::Future<Output = Result<Value>> + '_ {
    store.read(|e| json!({ "services": e.services().services().map(|(s, t)| json!({ "service": s, "ttl_seconds": t })).collect::<Vec<_>>() }))
}

fn flag(req: &Request<'_>, name: &str) -> Result<bool> {
    super::query_flag(name, req.param(name))
}

fn agent_param<'a>(req: &'a Request<'_>) -> Result<&'a str> {
    req.param("agent_id").ok_or_else(|| Error::InvalidQuery { param: "agent_id".into(), reason: "required".into() })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RegisterBody {
    ttl_seconds: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PutBody {
    state: Value,
    #[serde(default)]
    agent_id: Option<String>,
}

/// Routes `/v1/services...`.
pub async fn route<B: Backend>(store: &Store<B>, req: &Request<'_>, ctx: &mut Ctx<'_>, rest: &[&str]) -> Result<Value> {
    let now = ctx.now;
    match (rest, req.method) {
        ([] | [""], "GET") => table(store).await,
        (["snapshot"], "GET") => {
            let services = req.param("services").map(|s| s.split(',').map(str::trim).filter(|p| !p.is_empty()).map(str::to_owned).collect());
            portfolio_snapshot(store, ctx.services, agent_param(req)?, services, now).await
        }
        (["state"], "DELETE") => invalidate(store, agent_param(req)?, None, now).await,
        ([service], "PUT") => {
            validate_service(service)?;
            let b: RegisterBody = parse_json(req.body)?;
            store.apply(Op::Service(ServiceOp::Register { service: (*service).into(), ttl_seconds: b.ttl_seconds }), now).await?;
            Ok(json!({ "service": service, "ttl_seconds": b.ttl_seconds }))
        }
        ([service, "state"], "GET") => {
            let opts = GetOptions { allow_stale: flag(req, "allow_stale")?, force_refresh: flag(req, "force_refresh")? };
            get_state(store, ctx.services, agent_param(req)?, service, now, opts).await
        }
        ([service, "state"], "PUT") => {
            let b: PutBody = parse_json(req.body)?;
            let agent = match (req.param("agent_id"), b.agent_id.as_deref()) {
                (Some(q), Some(body)) if q != body => return Err(Error::invalid("agent_id", "the query and the body name different agents")),
                (Some(q), _) => q.to_owned(),
                (None, Some(body)) => body.to_owned(),
                (None, None) => return Err(Error::InvalidQuery { param: "agent_id".into(), reason: "required".into() }),
            };
            put_state(store, &agent, service, &b.state, now).await
        }
        ([service, "state"], "DELETE") => invalidate(store, agent_param(req)?, Some(service), now).await,
        ([] | [""] | ["snapshot"] | [_] | [_, "state"], other) => Err(Error::MethodNotAllowed { method: other.to_owned() }),
        _ => Err(Error::not_found("route", req.path)),
    }
}
