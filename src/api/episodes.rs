//! edgemem's `/v1/episodes` routes: record events, the newest ones, a
//! window summary, and the log's policy.

use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::api::{parse_json, Ctx, Request};
use crate::core::engine::{Applied, Op};
use crate::core::episodes::{AtCap, Episode, EpisodicConfig};
use crate::core::error::{Error, Result};
use crate::core::ids::ulid;
use crate::core::limits;
use crate::core::retrieval::filter::parse_time;
use crate::core::time::format_rfc3339;
use crate::store::{Backend, Store};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RecordBody {
    #[serde(default)]
    id: Option<String>,
    agent_id: String,
    #[serde(alias = "type")]
    kind: String,
    /// RFC 3339 or epoch milliseconds; default now.
    #[serde(default)]
    at: Option<Value>,
    #[serde(default)]
    payload: Map<String, Value>,
    #[serde(default)]
    outcome: Option<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigBody {
    per_agent_max: usize,
    #[serde(default)]
    ttl_seconds: Option<u64>,
    #[serde(default)]
    at_cap: Option<AtCap>,
}

fn episode_json(e: &Episode) -> Value {
    json!({
        "id": e.id, "agent_id": e.agent_id, "kind": e.kind, "at": format_rfc3339(e.at),
        "payload": e.payload, "outcome": e.outcome, "seq": e.seq,
    })
}

/// Routes `/v1/episodes...`.
pub async fn route<B: Backend>(store: &Store<B>, req: &Request<'_>, ctx: &mut Ctx<'_>, rest: &[&str]) -> Result<Value> {
    let now = ctx.now;
    match (rest, req.method) {
        ([] | [""], "POST") => {
            let b: RecordBody = parse_json(req.body)?;
            let at = match &b.at {
                None | Some(Value::Null) => now,
                Some(v) => parse_time("at", v)?,
            };
            let id = b.id.unwrap_or_else(|| ulid(now, (ctx.random)()));
            let episode = Episode { id: id.clone(), agent_id: b.agent_id, kind: b.kind, at, payload: b.payload, outcome: b.outcome, seq: 0 };
            match store.apply_reporting(Op::EpisodeRecord { episode }, now).await? {
                (Applied::EpisodeRecorded(r), scrubbed) => {
                    let mut v = json!({ "id": id, "seq": r.seq, "evicted": r.evicted });
                    super::privacy::report_into(&mut v, &scrubbed);
                    Ok(v)
                }
                (other, _) => Err(Error::Internal { detail: format!("record returned {other:?}") }),
            }
        }
        ([] | [""], "GET") => {
            let n = req.param_usize("n", 20, 1, limits::EPISODES_RECENT_MAX)?;
            let (agent, kind) = (req.param("agent_id"), req.param("kind").or(req.param("type")));
            let events = store.read(|e| e.episodes().recent(agent, n, kind, now).into_iter().map(episode_json).collect::<Vec<_>>()).await?;
            Ok(json!({ "episodes": events }))
        }
        (["summary"], "GET") => {
            let since = match req.param("since") {
                None => 0,
                Some(s) => parse_time("since", &s.parse::<u64>().map_or_else(|_| Value::String(s.to_owned()), Value::from))?,
            };
            let agent = req.param("agent_id");
            let s = store.read(|e| e.episodes().summarize_window(agent, since, now)).await?;
            Ok(json!({
                "total": s.total, "by_kind": s.by_kind,
                "first_at": s.first_at.map(format_rfc3339), "last_at": s.last_at.map(format_rfc3339),
                "span_seconds": s.first_at.zip(s.last_at).map(|(a, b)| b.saturating_sub(a) / 1000),
            }))
        }
        (["config"], "PUT") => {
            let b: ConfigBody = parse_json(req.body)?;
            let config = EpisodicConfig { per_agent_max: b.per_agent_max, ttl_seconds: b.ttl_seconds, at_cap: b.at_cap.unwrap_or_default() };
            match store.apply(Op::EpisodesConfigure { config }, now).await? {
                Applied::EpisodesDropped { count } => Ok(json!({ "dropped": count })),
                other => Err(Error::Internal { detail: format!("configure returned {other:?}") }),
            }
        }
        ([] | [""] | ["summary"] | ["config"], other) => Err(Error::MethodNotAllowed { method: other.to_owned() }),
        _ => Err(Error::not_found("route", req.path)),
    }
}
