//! The placements that span several shards: a create split by bucket, a
//! search (pinned or fanned out), a record found by asking, the session
//! list, a memory prompt, a prompt, a forget without a user.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use worker::Method;

use super::{canonical, Answer, Routed, Sharded, AGENT_PROMPT_PATH, AGENT_SYSTEM_PATH, FANOUT_PATH, FORGET_DELETE_PATH, FORGET_PART_PATH, PROMPT_PATH};
use crate::api;
use crate::core::error::{Error, Result};
use crate::core::ids::ulid;
use crate::core::limits;
use crate::core::retrieval::filter::Filter;
use crate::core::shard::{bucket_of, fanout, fanout_tree, route_search, Bucket, Route, ShardId, ShardMap};

/// What the front sends a prompt's shard.
#[derive(Serialize, Deserialize)]
pub struct PromptBody {
    /// The memory prompt as the client sent it.
    pub prompt: Value,
    /// Its long-term search's memories, across the shards.
    pub memories: Vec<Value>,
}

/// A memory prompt: its search as a search of its own (pinned or fanned
/// out), then the prompt in the session's shard, which reads the turns.
pub(super) async fn prompt(s: &Sharded<'_>, map: &ShardMap, epoch: u64) -> Result<Answer> {
    let v: Value = api::parse_json(&s.forward.body)?;
    let query = v.get("query").and_then(Value::as_str).unwrap_or_default();
    let mut memories = Vec::new();
    if let Some(search_body) = v.get("long_term_search").map(|l| api::memory_prompt_search(query, l)).transpose()?.flatten() {
        let a = search_with(s, map, epoch, search_body).await?;
        if !a.ok() {
            return Ok(a);
        }
        memories = a.json().and_then(|v| v["memories"].as_array().cloned()).unwrap_or_default();
    }
    let session = v.get("session").and_then(|x| x.get("session_id")).and_then(Value::as_str);
    let routed = match session {
        Some(id) => {
            let b = bucket_of(id);
            s.routed(map.owner(b), epoch, vec![b])
        }
        None => Routed { home: true, ..s.routed(0, epoch, Vec::new()) },
    };
    let body = json!(PromptBody { prompt: v.clone(), memories });
    let url = format!("{}{PROMPT_PATH}", s.forward.url.origin().ascii_serialization());
    s.send(routed.shard, &routed, Method::Post, &url, body.to_string().as_bytes()).await
}

/// `POST /v1/prompt`: assembled where the session lives (home without a
/// session), which reads its turns in place. The agent's system text is
/// home's state: when the session lives in another shard, home is asked
/// for it first (one call) and the shard assembles with it.
pub(super) async fn agent_prompt(s: &Sharded<'_>, map: &ShardMap, epoch: u64) -> Result<Answer> {
    let v: Value = api::parse_json(&s.forward.body)?;
    let session = v.get("session_id").and_then(Value::as_str);
    let (shard, routed) = match session {
        Some(id) => {
            let b = bucket_of(id);
            (map.owner(b), s.routed(map.owner(b), epoch, vec![b]))
        }
        None => (0, Routed { home: true, ..s.routed(0, epoch, Vec::new()) }),
    };
    let Some(agent) = v.get("agent_id").and_then(Value::as_str).filter(|_| shard != 0) else { return s.pass(shard, &routed).await };
    let origin = s.forward.url.origin().ascii_serialization();
    let home = Routed { home: true, ..s.routed(0, epoch, Vec::new()) };
    let a = s.send(0, &home, Method::Post, &format!("{origin}{AGENT_SYSTEM_PATH}"), json!({ "agent_id": agent }).to_string().as_bytes()).await?;
    if !a.ok() {
        return Ok(a);
    }
    let system = a.json().and_then(|v| v["system"].as_str().map(str::to_owned));
    let body = json!({ "prompt": v, "system": system }).to_string();
    s.send(shard, &routed, Method::Post, &format!("{origin}{AGENT_PROMPT_PATH}"), body.as_bytes()).await
}

/// A forget without a user: its policy's budget and limit are the
/// tenant's, so every shard answers its part (read-only), the front
/// chooses exactly as one store would ([`crate::core::longterm::forget`]),
/// then each shard deletes what was chosen there. A split between the two
/// steps is answered `shard_moved` and the whole forget runs again under
/// the new map: what the first run deleted is gone, and the second
/// chooses from what is left as one store would have.
pub(super) async fn forget(s: &Sharded<'_>, map: &ShardMap, epoch: u64) -> Result<Answer> {
    let f = &s.forward;
    // One shard: the route itself, one call, as unsharded.
    if let [only] = map.shards()[..] {
        return s.pass(only, &s.routed(only, epoch, Vec::new())).await;
    }
    // Checked here first: a bad request asks no shard.
    let req = api::Request { method: "POST", path: "/v1/long-term-memory/forget", query: f.query.clone(), body: &f.body };
    let asked = api::longterm::forget::Forget::read(&req)?;
    let shards = map.shards();
    let mut url = f.url.clone();
    url.set_path(FORGET_PART_PATH);
    let answers = s.each(&shards, epoch, false, Method::Post, url.as_str(), &f.body).await?;
    let mut parts = Vec::with_capacity(answers.len());
    let mut whose: BTreeMap<String, ShardId> = BTreeMap::new();
    for (&shard, a) in shards.iter().zip(answers) {
        if !a.ok() {
            return Ok(a);
        }
        let part: crate::core::longterm::forget::ForgetPart = a.json().and_then(|v| serde_json::from_value(v).ok()).ok_or_else(|| Error::Internal { detail: format!("shard {shard}'s forget part") })?;
        for (_, id) in part.old.iter().chain(&part.kept_first) {
            whose.insert(id.clone(), shard);
        }
        parts.push(part);
    }
    let scanned = parts.iter().map(|p| p.scanned).sum();
    let ids = crate::core::longterm::forget::choose(&parts, asked.policy.budget, asked.limit);
    if !asked.dry_run {
        let mut by_shard: BTreeMap<ShardId, Vec<String>> = BTreeMap::new();
        for id in &ids {
            by_shard.entry(whose.get(id).copied().unwrap_or(0)).or_default().push(id.clone());
        }
        url.set_path(FORGET_DELETE_PATH);
        url.set_query(None);
        for (shard, chosen) in by_shard {
            let body = json!({ "ids": chosen }).to_string();
            let a = s.send(shard, &s.routed(shard, epoch, Vec::new()), Method::Post, url.as_str(), body.as_bytes()).await?;
            if !a.ok() {
                return Ok(a);
            }
        }
    }
    Ok(Answer::with_json(200, &api::longterm::forget::answer(scanned, ids, asked.dry_run)))
}

/// The sessions of every shard, merged in id order (as one object lists
/// them) and paged.
pub(super) async fn sessions(s: &Sharded<'_>, map: &ShardMap, epoch: u64) -> Result<Answer> {
    let q = &s.forward.query;
    let param = |name: &str| q.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    let number = |name: &str, default: usize, min: usize, max: usize| match param(name) {
        None => Ok(default),
        Some(v) => v.parse::<usize>().ok().filter(|n| (min..=max).contains(n)).ok_or_else(|| Error::invalid(name, format!("must be from {min} to {max}"))),
    };
    let limit = number("limit", limits::SESSION_LIST_LIMIT_DEFAULT, 1, limits::SESSION_LIST_LIMIT_MAX)?;
    let offset = number("offset", 0, 0, limits::SESSIONS_MAX)?;
    let want = offset + limit;
    if want > limits::SHARD_SESSION_LIST_DEPTH_MAX {
        return Err(Error::LimitExceeded { what: "sessions listed across a sharded tenant's shards (offset + limit)".into(), limit: limits::SHARD_SESSION_LIST_DEPTH_MAX as u64 });
    }
    let mut ids: Vec<String> = Vec::new();
    let mut total = 0u64;
    for shard in map.shards() {
        // Each shard's first `want` ids hold its part of the page.
        let mut at = 0;
        loop {
            let page = (want - at).min(limits::SESSION_LIST_LIMIT_MAX);
            let mut url = s.forward.url.clone();
            let kept: Vec<(String, String)> = q.iter().filter(|(k, _)| k != "offset" && k != "limit").cloned().collect();
            url.query_pairs_mut().clear().extend_pairs(kept).append_pair("offset", &at.to_string()).append_pair("limit", &page.to_string());
            let a = s.send(shard, &s.routed(shard, epoch, Vec::new()), Method::Get, url.as_str(), &[]).await?;
            if !a.ok() {
                return Ok(a);
            }
            let v = a.json().unwrap_or_default();
            let got: Vec<String> = v["sessions"].as_array().into_iter().flatten().filter_map(|x| x.as_str().map(str::to_owned)).collect();
            if at == 0 {
                total += v["total"].as_u64().unwrap_or(0);
            }
            let n = got.len();
            ids.extend(got);
            at += n;
            if n < page || at >= want {
                break;
            }
        }
    }
    ids.sort_unstable();
    let page: Vec<String> = ids.into_iter().skip(offset).take(limit).collect();
    Ok(Answer::with_json(200, &json!({ "sessions": page, "total": total })))
}

/// A create, split by each memory's bucket; each shard's part is atomic,
/// the whole is not (a failed part is answered; parts before it stay).
pub(super) async fn create(s: &Sharded<'_>, map: &ShardMap, epoch: u64) -> Result<Answer> {
    let f = &s.forward;
    let mut v: Value = api::parse_json(&f.body)?;
    let memories = v.get_mut("memories").and_then(Value::as_array_mut).ok_or_else(|| Error::invalid("memories", "must be an array"))?;
    if memories.len() > limits::LTM_CREATE_BATCH_MAX {
        return Err(Error::LimitExceeded { what: "memories in one create".into(), limit: limits::LTM_CREATE_BATCH_MAX as u64 });
    }
    let key = s.privacy()?;
    // shard → (index in the request, memory), in request order.
    let mut parts: BTreeMap<ShardId, Vec<(usize, Value)>> = BTreeMap::new();
    let mut buckets: BTreeMap<ShardId, Vec<Bucket>> = BTreeMap::new();
    for (i, m) in memories.iter_mut().enumerate() {
        if m.is_object() && m.get("id").is_none_or(Value::is_null) {
            // Ids are assigned here so a memory without a user has a bucket
            // (its id's), and a retry of the same body is idempotent.
            m["id"] = Value::String(ulid(s.now, super::super::random_bits()));
        }
        let id = m.get("id").and_then(Value::as_str).unwrap_or_default();
        let b = super::memory_bucket(m, id, key.as_ref());
        let shard = map.owner(b);
        parts.entry(shard).or_default().push((i, m.clone()));
        buckets.entry(shard).or_default().push(b);
    }
    let mut created: Vec<(usize, Value)> = Vec::new();
    let mut duplicates: Vec<(usize, Value)> = Vec::new();
    let mut results: Vec<(usize, Value)> = Vec::new();
    let mut last = None;
    for (shard, part) in parts {
        let mut body = v.clone();
        body["memories"] = Value::Array(part.iter().map(|(_, m)| m.clone()).collect());
        let mut bs = buckets.remove(&shard).unwrap_or_default();
        bs.sort_unstable();
        bs.dedup();
        let a = s.send(shard, &s.routed(shard, epoch, bs), f.method.clone(), f.url.as_str(), body.to_string().as_bytes()).await?;
        if !a.ok() {
            return Ok(a);
        }
        let r = a.json().unwrap_or_default();
        let index_of = |id: &Value| part.iter().find(|(_, m)| m.get("id") == Some(id)).map_or(usize::MAX, |(i, _)| *i);
        created.extend(r["created"].as_array().into_iter().flatten().map(|id| (index_of(id), id.clone())));
        duplicates.extend(r["duplicates"].as_array().into_iter().flatten().map(|id| (index_of(id), id.clone())));
        results.extend(r["results"].as_array().into_iter().flatten().map(|x| (index_of(&x["id"]), x.clone())));
        last = Some(a);
    }
    let Some(mut answer) = last else {
        // No memories: any shard answers the empty create as one object would.
        return s.pass(0, &s.routed(0, epoch, Vec::new())).await;
    };
    let sorted = |mut xs: Vec<(usize, Value)>| -> Vec<Value> {
        xs.sort_by_key(|x| x.0);
        xs.into_iter().map(|x| x.1).collect()
    };
    let mut out = answer.json().unwrap_or_default();
    out["created"] = Value::Array(sorted(created));
    out["duplicates"] = Value::Array(sorted(duplicates));
    out["results"] = Value::Array(sorted(results));
    answer.body = out.to_string().into_bytes();
    Ok(answer)
}

/// A search: to the shards of the users its filter pins, else to a
/// random root that coordinates the fan-out.
pub(super) async fn search(s: &Sharded<'_>, map: &ShardMap, epoch: u64) -> Result<Answer> {
    search_with(s, map, epoch, api::parse_json(&s.forward.body)?).await
}

async fn search_with(s: &Sharded<'_>, map: &ShardMap, epoch: u64, mut v: Value) -> Result<Answer> {
    let f = &s.forward;
    // The search's own route, with the request's query (a prompt's search
    // is one too).
    let query = f.url.query().map(|q| format!("?{q}")).unwrap_or_default();
    let search_url = format!("{}/v1/long-term-memory/search{query}", f.url.origin().ascii_serialization());
    let original = v.clone();
    let o = v.as_object_mut().ok_or_else(|| Error::invalid("body", "must be an object"))?;
    let key = s.privacy()?;
    // The users' buckets are their raw ids'.
    let mut users: Vec<String> = Vec::new();
    if let Some(u) = o.get_mut("user_id") {
        let mut open = |x: &mut Value| {
            if let Some(id) = x.as_str() {
                let c = canonical(key.as_ref(), id);
                users.push(c.clone());
                *x = Value::String(c);
            }
        };
        match u {
            Value::String(_) => open(u),
            Value::Object(m) => {
                m.get_mut("eq").into_iter().for_each(&mut open);
                if let Some(list) = m.get_mut("any").and_then(Value::as_array_mut) {
                    list.iter_mut().for_each(&mut open);
                }
            }
            _ => {}
        }
    }
    let filter = Filter::from_request(o)?;
    let asked_ms = match o.get("deadline_ms") {
        None | Some(Value::Null) => None,
        Some(d) => Some(d.as_u64().ok_or_else(|| Error::invalid("deadline_ms", "must be a whole number of milliseconds"))?),
    };
    let deadline_at = fanout::deadline_at(s.now, asked_ms)?;
    match route_search(&filter, map) {
        Route::One(shard) => {
            let mut bs: Vec<Bucket> = users.iter().map(|u| bucket_of(u)).filter(|&b| map.owner(b) == shard).collect();
            bs.sort_unstable();
            bs.dedup();
            s.send(shard, &s.routed(shard, epoch, bs), Method::Post, &search_url, original.to_string().as_bytes()).await
        }
        Route::FanOut(mut shards) => {
            // A random root spreads the coordinating work over the shards.
            let at = super::super::random_bits()[0] as usize % shards.len();
            shards.rotate_left(at);
            let tree = fanout_tree(&shards, limits::SHARD_FANOUT_BRANCHING_MAX).ok_or_else(|| Error::Internal { detail: "an empty fan-out".into() })?;
            let root = tree.shard;
            let body = json!({ "search": original, "tree": tree, "deadline_at": deadline_at });
            let url = format!("https://shard.local{FANOUT_PATH}");
            let routed = s.routed(root, epoch, Vec::new());
            let bytes = body.to_string().into_bytes();
            let call = s.send(root, &routed, Method::Post, &url, &bytes);
            // The root answers by the deadline (partial if it must); a root
            // that cannot (an overloaded object) is a timeout, never a wait.
            let wait_ms = deadline_at.saturating_sub(super::super::now_ms()).saturating_add(limits::SHARD_FANOUT_ROOT_GRACE_MS);
            let timer = worker::Delay::from(std::time::Duration::from_millis(wait_ms));
            let answer = match futures_util::future::select(Box::pin(call), timer).await {
                futures_util::future::Either::Left((answer, _)) => answer,
                futures_util::future::Either::Right(_) => Err(Error::UpstreamTimeout { service: format!("shard {root} (the fan-out's root)"), timeout_ms: wait_ms }),
            };
            answer
        }
    }
}
