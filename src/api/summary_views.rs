//! AMS's summary views and tasks over HTTP (`/v1/summary-views`,
//! `/v1/tasks/{id}`), in the shapes agent-memory-client 0.14 sends and
//! parses.
//!
//! A run reads the view's partitions from long-term memory
//! ([`crate::core::summary_views::choose`]), summarizes each with the
//! host's summarizer hook or, without one, the offline extractive
//! summarizer compaction uses, and stores the results. A full run is a
//! task: it is executed within the request (bounded by
//! [`limits::SUMMARY_VIEW_PARTITIONS_PER_RUN_MAX`] partitions), and its
//! record goes `pending` → `running` → `success` | `failed` (with the
//! error), each step logged. `continuous` views are re-run on the host's
//! wake-up once long-term memory changed ([`run_due`]).
//!
//! Views and tasks live in the tenant a request is routed to: like every
//! route, `?namespace=` (or a create's `filters.namespace`) names it.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use super::services::Services;
use super::{parse_json, privacy, Ctx, Request};
use crate::core::budget::Estimator;
use crate::core::engine::{Applied, Op};
use crate::core::error::{Error, Result};
use crate::core::history::extractive;
use crate::core::ids::ulid;
use crate::core::limits;
use crate::core::session::{validate_id, Message};
use crate::core::summary_views::{check_field, check_value, choose, group_key, too_many_partitions, Group, Partition, SummaryView, SummaryViewApplied, SummaryViewOp, Task, TaskStatus, FIELDS, TASK_TYPE_FULL_RUN};
use crate::core::retrieval::record::MemoryRecord;
use crate::core::time::{format_rfc3339, Millis};
use crate::store::{Backend, Store};

/// What the summarizer hook is told when a view has no prompt of its own.
const DEFAULT_INSTRUCTIONS: &str = "Summarize these long-term memories of one group: keep the key facts, stable preferences and important events. Answer with the summary only.";

/// `/v1/summary-views[/...]` after the prefix.
pub async fn route<B: Backend>(store: &Store<B>, req: &Request<'_>, ctx: &mut Ctx<'_>, rest: &[&str]) -> Result<Value> {
    let now = ctx.now;
    match (rest, req.method) {
        ([], "GET") => store.read(|e| e.summary_views().views().map(|s| view_json(&s.view)).collect::<Vec<_>>()).await.map(Value::Array),
        ([], "POST") => {
            let view = view_from_body(store, req.body, ulid(now, (ctx.random)()), now)?;
            match store.apply(Op::SummaryView(SummaryViewOp::Create { view }), now).await? {
                Applied::SummaryView(SummaryViewApplied::Created(v)) => Ok(view_json(&v)),
                other => Err(Error::Internal { detail: format!("create view returned {other:?}") }),
            }
        }
        ([id], "GET") => {
            validate_id("view_id", id)?;
            store.read(|e| e.summary_views().view(id).map(|s| view_json(&s.view))).await?.ok_or_else(|| Error::not_found("summary view", *id))
        }
        ([id], "DELETE") => {
            validate_id("view_id", id)?;
            // AMS answers ok whether or not the view existed; nothing is logged for a missing one.
            if store.read(|e| e.summary_views().view(id).is_some()).await? {
                store.apply(Op::SummaryView(SummaryViewOp::Delete { view_id: (*id).to_owned() }), now).await?;
            }
            Ok(json!({ "status": "ok" }))
        }
        ([id, "run"], "POST") => {
            validate_id("view_id", id)?;
            let body: RunBody = if req.body.iter().all(u8::is_ascii_whitespace) { RunBody::default() } else { parse_json(req.body)? };
            let task_id = match body.task_id {
                Some(t) => {
                    validate_id("task_id", &t)?;
                    t
                }
                None => ulid(now, (ctx.random)()),
            };
            run_view(store, ctx.services, id, task_id, now).await.map(|t| task_json(&t))
        }
        ([id, "partitions"], "GET") => {
            validate_id("view_id", id)?;
            partitions(store, req, id).await
        }
        ([id, "partitions", "run"], "POST") => {
            validate_id("view_id", id)?;
            let mut v: Value = parse_json(req.body)?;
            store.with_privacy_key(|k| privacy::seal_user_ids(&mut v, k));
            let body: PartitionBody = crate::api::from_value(&v)?;
            run_partition(store, ctx.services, id, body.group, now).await.map(|(view_id, p)| partition_json(&view_id, &p))
        }
        ([] | [_] | [_, "run"] | [_, "partitions"] | [_, "partitions", "run"], other) => Err(Error::MethodNotAllowed { method: other.to_owned() }),
        _ => Err(Error::not_found("route", req.path)),
    }
}

/// `GET /v1/tasks/{id}`: the task, or 404.
pub async fn task_route<B: Backend>(store: &Store<B>, id: &str) -> Result<Value> {
    validate_id("task_id", id)?;
    store.read(|e| e.summary_views().task(id).map(task_json)).await?.ok_or_else(|| Error::not_found("task", id))
}

#[derive(Deserialize)]
struct CreateBody {
    #[serde(default)]
    name: Option<String>,
    source: String,
    #[serde(default)]
    group_by: Vec<String>,
    #[serde(default)]
    filters: Option<Map<String, Value>>,
    #[serde(default)]
    time_window_days: Option<i64>,
    #[serde(default)]
    continuous: Option<bool>,
    #[serde(default)]
    prompt: Option<String>,
    #[serde(default)]
    model_name: Option<String>,
}

#[derive(Deserialize, Default)]
struct RunBody {
    /// AMS's optional client-chosen task id.
    #[serde(default)]
    task_id: Option<String>,
    /// agent-memory-client's flag: every run recomputes, so it changes nothing.
    #[serde(default)]
    #[allow(dead_code)]
    force: Option<bool>,
}

#[derive(Deserialize)]
struct PartitionBody {
    group: Group,
}

/// Parses and checks AMS's `CreateSummaryViewRequest`: `source` must be
/// `long_term` (AMS refuses `working_memory` too), fields outside
/// [`FIELDS`] are refused with a 400 (`unknown_kind`), values with a 422.
fn view_from_body<B: Backend>(store: &Store<B>, body: &[u8], id: String, now: Millis) -> Result<SummaryView> {
    let mut v: Value = parse_json(body)?;
    store.with_privacy_key(|k| privacy::seal_user_ids(&mut v, k));
    let b: CreateBody = crate::api::from_value(&v)?;
    if b.source != "long_term" {
        return Err(Error::UnknownKind { field: "source".into(), value: b.source, allowed: "long_term".into() });
    }
    for f in &b.group_by {
        check_field("group_by field", f)?;
    }
    let mut filters = std::collections::BTreeMap::new();
    for (f, value) in b.filters.unwrap_or_default() {
        check_field("filter field", &f)?;
        let s = match value {
            Value::String(s) => s,
            other => return Err(Error::invalid(format!("filters.{f}"), format!("must be a string, got {other}"))),
        };
        check_value(&f, &format!("filters.{f}"), &s)?;
        filters.insert(f, s);
    }
    let time_window_days = match b.time_window_days {
        None => None,
        Some(d) => Some(u32::try_from(d).ok().filter(|d| (1..=limits::SUMMARY_VIEW_WINDOW_DAYS_MAX).contains(d)).ok_or_else(|| Error::invalid("time_window_days", format!("must be from 1 to {}", limits::SUMMARY_VIEW_WINDOW_DAYS_MAX)))?),
    };
    let view = SummaryView { id, name: b.name, group_by: b.group_by, filters, time_window_days, continuous: b.continuous.unwrap_or(false), prompt: b.prompt, model_name: b.model_name, created_at: now };
    view.validate()?;
    Ok(view)
}

/// AMS's `SummaryView` JSON.
pub fn view_json(v: &SummaryView) -> Value {
    json!({
        "id": v.id,
        "name": v.name,
        "source": "long_term",
        "group_by": v.group_by,
        "filters": v.filters,
        "time_window_days": v.time_window_days,
        "continuous": v.continuous,
        "prompt": v.prompt,
        "model_name": v.model_name,
    })
}

/// AMS's `SummaryViewPartitionResult` JSON.
pub fn partition_json(view_id: &str, p: &Partition) -> Value {
    json!({ "view_id": view_id, "group": p.group, "summary": p.summary, "memory_count": p.memory_count, "computed_at": format_rfc3339(p.computed_at) })
}

/// AMS's `Task` JSON.
pub fn task_json(t: &Task) -> Value {
    json!({
        "id": t.id,
        "type": TASK_TYPE_FULL_RUN,
        "status": t.status.as_str(),
        "view_id": t.view_id,
        "created_at": format_rfc3339(t.created_at),
        "started_at": t.started_at.map(format_rfc3339),
        "completed_at": t.completed_at.map(format_rfc3339),
        "error_message": t.error_message,
    })
}

/// `GET .../partitions?user_id=&namespace=&session_id=&memory_type=`: the
/// stored results whose group has these values (a field the group lacks
/// matches nothing, as in AMS). `namespace` also names the tenant, whose
/// partitions are all of that namespace: it filters only a view that
/// groups by it.
async fn partitions<B: Backend>(store: &Store<B>, req: &Request<'_>, view_id: &str) -> Result<Value> {
    let mut wanted: Vec<(&str, String)> = Vec::new();
    for f in FIELDS {
        if let Some(v) = req.param(f) {
            let v = if f == "user_id" { privacy::stored_user_id(store, v) } else { v.to_owned() };
            wanted.push((f, v));
        }
    }
    let found = store
        .read(|e| {
            e.summary_views().view(view_id).map(|s| {
                let matches = |p: &Partition| wanted.iter().all(|(f, v)| p.group.get(*f) == Some(v) || (*f == "namespace" && !p.group.contains_key("namespace")));
                s.partitions.values().filter(|p| matches(p)).map(|p| partition_json(view_id, p)).collect::<Vec<_>>()
            })
        })
        .await?;
    found.map(Value::Array).ok_or_else(|| Error::not_found("summary view", view_id))
}

/// A partition's memories copied out of the engine, so the summarizer runs
/// with nothing borrowed.
struct Owned {
    group: Group,
    /// Newest first.
    memories: Vec<Message>,
    /// The users (as stored) whose memories these are.
    users: Vec<String>,
}

/// The view and its partitions at `now` (only `only`, when given). A
/// sharded tenant's home gathers the other shards' parts through
/// [`Services::summary_parts`] and merges them with its own
/// ([`merge_parts`]); the answer is what one store holding every record
/// would choose.
async fn read_chosen<B: Backend>(store: &Store<B>, services: &dyn Services, view_id: &str, only: Option<&Group>, now: Millis) -> Result<(SummaryView, Vec<Owned>)> {
    let view = store.read(|e| e.summary_views().view(view_id).map(|s| s.view.clone())).await?.ok_or_else(|| Error::not_found("summary view", view_id))?;
    let remote = match services.summary_parts(&view, only, now) {
        Some(parts) => Some(parts.await?),
        None => None,
    };
    if let Some(remote) = remote {
        let mut parts = gather(store, &view, only, now).await?;
        parts.extend(remote);
        return Ok((view, merge_parts(parts, only)?));
    }
    let owned = store
        .read(|e| {
            choose(&view, e.longterm().records(), only, now).map(|chosen| {
                chosen
                    .into_iter()
                    .map(|c| {
                        let memories = c.memories.iter().map(|r| GatherMemory::of(r)).collect();
                        owned(c.group, memories)
                    })
                    .collect::<Vec<_>>()
            })
        })
        .await??;
    Ok((view, owned))
}

/// A partition's memories as a run summarizes them (newest first), with
/// the users they came from.
fn owned(group: Group, memories: Vec<GatherMemory>) -> Owned {
    let mut users: Vec<String> = memories.iter().filter_map(|m| m.user_id.clone()).collect();
    users.sort();
    users.dedup();
    let memories = memories.into_iter().map(|m| turn("", &m.id, &m.text, m.created_at)).collect();
    Owned { group, memories, users }
}

/// One group of a shard's part of a summary-view run: what
/// [`choose`] picked there, newest first and bounded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GatherPart {
    pub group: Group,
    pub memories: Vec<GatherMemory>,
}

/// One memory of a [`GatherPart`]: what a summary needs of a record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GatherMemory {
    pub id: String,
    pub text: String,
    pub created_at: Millis,
    /// As stored (sealed under a pseudonymizing policy).
    #[serde(default)]
    pub user_id: Option<String>,
}

impl GatherMemory {
    fn of(r: &MemoryRecord) -> GatherMemory {
        GatherMemory { id: r.id.clone(), text: r.text.clone(), created_at: r.created_at, user_id: r.user_id.clone() }
    }

    fn bytes(&self) -> usize {
        self.id.len() + self.text.len() + self.user_id.as_ref().map_or(0, String::len)
    }
}

/// A sharded tenant's shard's part of a run of `view` (sent by its home,
/// `only` already sealed as the home seals a request's group): its records'
/// groups as [`choose`] picks them, at most
/// [`limits::SHARD_SUMMARY_PART_BYTES_MAX`] bytes of memories.
pub async fn gather<B: Backend>(store: &Store<B>, view: &SummaryView, only: Option<&Group>, now: Millis) -> Result<Vec<GatherPart>> {
    view.validate()?;
    let parts = store
        .read(|e| {
            choose(view, e.longterm().records(), only, now).map(|chosen| chosen.into_iter().map(|c| GatherPart { group: c.group, memories: c.memories.iter().map(|r| GatherMemory::of(r)).collect() }).collect::<Vec<_>>())
        })
        .await??;
    let bytes: usize = parts.iter().flat_map(|p| &p.memories).map(GatherMemory::bytes).sum();
    if bytes > limits::SHARD_SUMMARY_PART_BYTES_MAX {
        return Err(Error::too_large("one shard's memories for a summary view run (add filters, or run partitions one at a time)", bytes, limits::SHARD_SUMMARY_PART_BYTES_MAX));
    }
    Ok(parts)
}

/// The shards' parts of a run merged as one store would have chosen: each
/// group's memories together, a record held by two shards at once (a
/// split between its flip and its collection, a hand-over between its
/// create and its delete) once, newest first, bounded; groups in key order,
/// more than [`limits::SUMMARY_VIEW_PARTITIONS_PER_RUN_MAX`] refused.
fn merge_parts(parts: Vec<GatherPart>, only: Option<&Group>) -> Result<Vec<Owned>> {
    let mut groups: std::collections::BTreeMap<String, (Group, Vec<GatherMemory>)> = std::collections::BTreeMap::new();
    if let Some(g) = only {
        groups.insert(group_key(g), (g.clone(), Vec::new()));
    }
    for p in parts {
        let key = group_key(&p.group);
        if !groups.contains_key(&key) && groups.len() >= limits::SUMMARY_VIEW_PARTITIONS_PER_RUN_MAX {
            return Err(too_many_partitions());
        }
        groups.entry(key).or_insert_with(|| (p.group, Vec::new())).1.extend(p.memories);
    }
    Ok(groups
        .into_values()
        .map(|(group, mut memories)| {
            memories.sort_by(|a, b| b.created_at.cmp(&a.created_at).then_with(|| a.id.cmp(&b.id)));
            memories.dedup_by(|a, b| a.id == b.id);
            memories.truncate(limits::SUMMARY_VIEW_MEMORIES_PER_PARTITION_MAX);
            owned(group, memories)
        })
        .collect())
}

/// A sharded tenant's home, told by a shard that its long-term memory
/// changed: continuous views become due ([`SummaryViewOp::SourceChanged`],
/// logged only when there is one). Answers whether there is one, so a
/// shard of a tenant without any stops telling for a while.
pub async fn source_changed<B: Backend>(store: &Store<B>, now: Millis) -> Result<bool> {
    if !store.read(|e| e.summary_views().has_continuous()).await? {
        return Ok(false);
    }
    store.apply(Op::SummaryView(SummaryViewOp::SourceChanged), now).await?;
    Ok(true)
}

fn turn(role: &str, id: &str, content: &str, at: Millis) -> Message {
    Message { id: id.to_owned(), role: role.to_owned(), content: content.to_owned(), created_at: at, persisted_at: None, tokens: Default::default() }
}

/// One partition's summary: the host's hook (told the view's prompt and
/// the group in a system turn), else the extractive summarizer. A hook
/// that fails or answers empty or oversized text is `hook_failed`.
async fn summarize(services: &dyn Services, view: &SummaryView, o: &Owned) -> Result<String> {
    if o.memories.is_empty() {
        return Ok(String::new());
    }
    let tokens_max = limits::SUMMARY_VIEW_SUMMARY_TOKENS_MAX;
    let mut turns = Vec::with_capacity(o.memories.len() + 1);
    let instructions = format!("{}\nGROUP: {}", view.prompt.as_deref().unwrap_or(DEFAULT_INSTRUCTIONS), group_key(&o.group));
    turns.push(turn("system", "instructions", &instructions, 0));
    turns.extend(o.memories.iter().map(|m| turn("memory", &m.id, &m.content, m.created_at)));
    let fail = |reason: String| Error::HookFailed { hook: "summarizer".into(), reason };
    let hook = services.summarize(&turns, None, tokens_max);
    let text = match hook {
        Some(hook) => {
            let text = hook.await.map_err(|e| match e {
                e @ Error::HookFailed { .. } => e,
                other => fail(other.to_string()),
            })?;
            if text.trim().is_empty() {
                return Err(fail("answered an empty summary".into()));
            }
            if text.len() > limits::SUMMARY_VIEW_SUMMARY_BYTES_MAX {
                return Err(fail(format!("answered {} bytes, more than {}", text.len(), limits::SUMMARY_VIEW_SUMMARY_BYTES_MAX)));
            }
            Ok(text)
        }
        None => Ok(extractive::summarize(&Estimator, None, &o.memories, tokens_max)),
    };
    text
}

async fn summarize_all(services: &dyn Services, view: &SummaryView, chosen: Vec<Owned>, now: Millis) -> Result<Vec<Partition>> {
    let mut out = Vec::with_capacity(chosen.len());
    for o in chosen {
        let summary = summarize(services, view, &o).await?;
        out.push(Partition { memory_count: o.memories.len() as u64, group: o.group, summary, computed_at: now, users: o.users });
    }
    Ok(out)
}

/// `POST .../partitions/run`: summarizes one group now and stores it. The
/// group's keys must be exactly the view's `group_by`.
pub async fn run_partition<B: Backend>(store: &Store<B>, services: &dyn Services, view_id: &str, group: Group, now: Millis) -> Result<(String, Partition)> {
    let expected = store.read(|e| e.summary_views().view(view_id).map(|s| s.view.group_by.clone())).await?.ok_or_else(|| Error::not_found("summary view", view_id))?;
    if group.len() != expected.len() || !expected.iter().all(|f| group.contains_key(f)) {
        let keys: Vec<&String> = group.keys().collect();
        return Err(Error::invalid("group", format!("keys {keys:?} must be exactly the view's group_by {expected:?}")));
    }
    for (f, v) in &group {
        check_value(f, &format!("group.{f}"), v)?;
    }
    let (view, chosen) = read_chosen(store, services, view_id, Some(&group), now).await?;
    let partitions = summarize_all(services, &view, chosen, now).await?;
    let p = partitions.into_iter().next().ok_or_else(|| Error::Internal { detail: "no partition chosen".into() })?;
    store.apply(Op::SummaryView(SummaryViewOp::Store { view_id: view_id.to_owned(), partitions: vec![p.clone()], full: false, task: None }), now).await?;
    Ok((view_id.to_owned(), p))
}

async fn record_task<B: Backend>(store: &Store<B>, task: &Task, now: Millis) -> Result<()> {
    store.apply(Op::SummaryView(SummaryViewOp::Task { task: task.clone() }), now).await.map(|_| ())
}

/// A full run of a view as task `task_id`: every partition summarized and
/// the view's results replaced. Answers the finished task; a run that
/// failed (a summarizer hook, too many partitions, the view deleted
/// meanwhile) answers it `failed` with the error.
pub async fn run_view<B: Backend>(store: &Store<B>, services: &dyn Services, view_id: &str, task_id: String, now: Millis) -> Result<Task> {
    let (exists, taken) = store.read(|e| (e.summary_views().view(view_id).is_some(), e.summary_views().task(&task_id).is_some())).await?;
    if !exists {
        return Err(Error::not_found("summary view", view_id));
    }
    if taken {
        return Err(Error::invalid("task_id", format!("{task_id:?} names an existing task")));
    }
    let pending = Task::pending(task_id, view_id, now);
    record_task(store, &pending, now).await?;
    let running = pending.step(TaskStatus::Running, None, now);
    record_task(store, &running, now).await?;
    let outcome = match read_chosen(store, services, view_id, None, now).await {
        Ok((view, chosen)) => summarize_all(services, &view, chosen, now).await,
        Err(e) => Err(e),
    };
    let err = match outcome {
        Ok(partitions) => {
            let done = running.step(TaskStatus::Success, None, now);
            let op = Op::SummaryView(SummaryViewOp::Store { view_id: view_id.to_owned(), partitions, full: true, task: Some(done.clone()) });
            match store.apply(op, now).await {
                Ok(_) => return Ok(done),
                Err(e) => e,
            }
        }
        Err(e) => e,
    };
    let failed = running.step(TaskStatus::Failed, Some(err.to_string()), now);
    // A store that cannot record the failure reports its own error.
    record_task(store, &failed, now).await.map_err(|_| err)?;
    Ok(failed)
}

/// When the next continuous refresh is due: [`limits::SUMMARY_VIEW_REFRESH_DELAY_MS`]
/// after now while a continuous view's memories changed since its last run.
pub async fn next_due<B: Backend>(store: &Store<B>, now: Millis) -> Result<Option<Millis>> {
    let due = store.read(|e| e.summary_views().due().next().is_some()).await?;
    Ok(due.then(|| now.saturating_add(limits::SUMMARY_VIEW_REFRESH_DELAY_MS)))
}

/// Re-runs the continuous views whose memories changed, at most
/// [`limits::SUMMARY_VIEWS_PER_WAKE_MAX`]; each run is a task like a manual
/// one (its id derived from the view and the time). Answers the tasks.
pub async fn run_due<B: Backend>(store: &Store<B>, services: &dyn Services, now: Millis) -> Result<Vec<Task>> {
    let due: Vec<String> = store.read(|e| e.summary_views().due().take(limits::SUMMARY_VIEWS_PER_WAKE_MAX).map(|v| v.id.clone()).collect()).await?;
    let mut tasks = Vec::with_capacity(due.len());
    for view_id in due {
        let digest = Sha256::new().chain_update(view_id.as_bytes()).chain_update(now.to_le_bytes()).finalize();
        let mut random = [0u8; 10];
        random.copy_from_slice(&digest[..10]);
        tasks.push(run_view(store, services, &view_id, ulid(now, random), now).await?);
    }
    Ok(tasks)
}
