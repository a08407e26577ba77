//! Summary views (AMS's `SummaryView`) and the tasks that run them: the
//! tenant's state, pure.
//!
//! A view groups long-term memories by a closed set of fields
//! ([`FIELDS`]), keeps those that pass its filters and its time window,
//! and has each group (a partition) summarized. The summarizing happens
//! outside the engine (a hook is async); what the engine holds is the
//! views, each view's stored partition results, and the task records that
//! report a run (`pending` → `running` → `success` | `failed`).
//!
//! `ltm_version` counts the changes to long-term memory the engine applied;
//! a `continuous` view whose last run started at an older version is due
//! again (the host runs it on its wake-up).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::longterm::SUPERSEDED_BY;
use crate::core::retrieval::record::{MemoryRecord, MemoryType};
use crate::core::session::validate_id;
use crate::core::time::Millis;

/// The fields a view may group and filter by (AMS's set).
pub const FIELDS: [&str; 4] = ["user_id", "namespace", "session_id", "memory_type"];

/// AMS's only task type.
pub const TASK_TYPE_FULL_RUN: &str = "summary_view_full_run";

const DAY_MS: Millis = 86_400_000;

/// Refuses a field outside [`FIELDS`] (a 400: the request names a field
/// that does not exist).
pub fn check_field(what: &str, field: &str) -> Result<()> {
    if FIELDS.contains(&field) {
        Ok(())
    } else {
        Err(Error::UnknownKind { field: what.into(), value: field.into(), allowed: FIELDS.join(", ") })
    }
}

/// Checks a group or filter value of `field` (named `label` in errors):
/// an id, or a memory type.
pub fn check_value(field: &str, label: &str, value: &str) -> Result<()> {
    if field == "memory_type" {
        MemoryType::parse(label, value).map(|_| ())
    } else {
        validate_id(label, value)
    }
}

/// The value of `field` in a record (`None` when the record has none).
fn value_of<'a>(r: &'a MemoryRecord, field: &str) -> Option<&'a str> {
    match field {
        "user_id" => r.user_id.as_deref(),
        "namespace" => r.namespace.as_deref(),
        "session_id" => r.session_id.as_deref(),
        "memory_type" => Some(r.memory_type.as_str()),
        _ => None,
    }
}

/// A view's configuration, as created (it is never edited).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SummaryView {
    /// A ULID assigned at creation.
    pub id: String,
    pub name: Option<String>,
    /// Fields of [`FIELDS`], each at most once.
    pub group_by: Vec<String>,
    /// Exact matches on fields of [`FIELDS`] (user ids as stored).
    pub filters: BTreeMap<String, String>,
    /// Only memories created within this many days of the run.
    pub time_window_days: Option<u32>,
    /// Re-run on the host's wake-up after long-term memory changed.
    pub continuous: bool,
    /// Instructions for the summarizer hook (the offline summarizer has none).
    pub prompt: Option<String>,
    /// Kept and shown; the summarizer hook chooses its own model.
    pub model_name: Option<String>,
    pub created_at: Millis,
}

impl SummaryView {
    /// Checks every field against its limit and the closed sets.
    pub fn validate(&self) -> Result<()> {
        validate_id("id", &self.id)?;
        if let Some(n) = &self.name {
            if n.len() > limits::SUMMARY_VIEW_NAME_BYTES_MAX {
                return Err(Error::too_large("name", n.len(), limits::SUMMARY_VIEW_NAME_BYTES_MAX));
            }
        }
        let mut seen = BTreeSet::new();
        for f in &self.group_by {
            check_field("group_by field", f)?;
            if !seen.insert(f) {
                return Err(Error::invalid("group_by", format!("{f:?} is named twice")));
            }
        }
        for (f, v) in &self.filters {
            check_field("filter field", f)?;
            check_value(f, &format!("filters.{f}"), v)?;
        }
        if let Some(d) = self.time_window_days {
            if !(1..=limits::SUMMARY_VIEW_WINDOW_DAYS_MAX).contains(&d) {
                return Err(Error::invalid("time_window_days", format!("must be from 1 to {}", limits::SUMMARY_VIEW_WINDOW_DAYS_MAX)));
            }
        }
        if let Some(p) = &self.prompt {
            if p.len() > limits::SUMMARY_VIEW_PROMPT_BYTES_MAX {
                return Err(Error::too_large("prompt", p.len(), limits::SUMMARY_VIEW_PROMPT_BYTES_MAX));
            }
        }
        if let Some(m) = &self.model_name {
            validate_id("model_name", m)?;
        }
        Ok(())
    }

    /// Whether a record belongs to the view's pool at `now`: current (not
    /// superseded), matching every filter, within the time window.
    pub fn admits(&self, r: &MemoryRecord, now: Millis) -> bool {
        if r.metadata.contains_key(SUPERSEDED_BY) {
            return false;
        }
        if !self.filters.iter().all(|(f, v)| value_of(r, f) == Some(v.as_str())) {
            return false;
        }
        match self.time_window_days {
            None => true,
            Some(d) => r.created_at >= now.saturating_sub(u64::from(d) * DAY_MS),
        }
    }

    /// The group of a record: its value of each `group_by` field, or `None`
    /// when it lacks one (AMS leaves such a record out of every partition).
    pub fn group_of(&self, r: &MemoryRecord) -> Option<Group> {
        self.group_by.iter().map(|f| value_of(r, f).map(|v| (f.clone(), v.to_owned()))).collect()
    }
}

/// Concrete values of a view's `group_by` fields.
pub type Group = BTreeMap<String, String>;

/// The stable key of a group (its canonical JSON: keys sorted).
pub fn group_key(group: &Group) -> String {
    serde_json::to_string(group).unwrap_or_default()
}

/// One partition's memories, chosen for a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Chosen<'a> {
    pub group: Group,
    /// Newest first, at most [`limits::SUMMARY_VIEW_MEMORIES_PER_PARTITION_MAX`].
    pub memories: Vec<&'a MemoryRecord>,
}

/// A run that would summarize more than
/// [`limits::SUMMARY_VIEW_PARTITIONS_PER_RUN_MAX`] groups.
pub fn too_many_partitions() -> Error {
    Error::LimitExceeded { what: "partitions in one summary view run (add filters, or run partitions one at a time)".into(), limit: limits::SUMMARY_VIEW_PARTITIONS_PER_RUN_MAX as u64 }
}

/// The partitions a run of `view` summarizes at `now`: the records it
/// admits, grouped, newest first within each group and bounded. With
/// `only`, just that group (answered even when it has no memory). More
/// than [`limits::SUMMARY_VIEW_PARTITIONS_PER_RUN_MAX`] groups is refused.
pub fn choose<'a>(view: &SummaryView, records: impl Iterator<Item = &'a MemoryRecord>, only: Option<&Group>, now: Millis) -> Result<Vec<Chosen<'a>>> {
    let mut groups: BTreeMap<String, Chosen<'a>> = BTreeMap::new();
    if let Some(g) = only {
        groups.insert(group_key(g), Chosen { group: g.clone(), memories: Vec::new() });
    }
    for r in records.filter(|r| view.admits(r, now)) {
        let Some(group) = view.group_of(r) else { continue };
        if only.is_some_and(|g| *g != group) {
            continue;
        }
        let key = group_key(&group);
        if !groups.contains_key(&key) && groups.len() >= limits::SUMMARY_VIEW_PARTITIONS_PER_RUN_MAX {
            return Err(too_many_partitions());
        }
        groups.entry(key).or_insert_with(|| Chosen { group, memories: Vec::new() }).memories.push(r);
    }
    let mut out: Vec<Chosen<'a>> = groups.into_values().collect();
    for c in &mut out {
        c.memories.sort_by(|a, b| b.created_at.cmp(&a.created_at).then_with(|| a.id.cmp(&b.id)));
        c.memories.truncate(limits::SUMMARY_VIEW_MEMORIES_PER_PARTITION_MAX);
    }
    Ok(out)
}

/// A stored summary of one partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Partition {
    pub group: Group,
    pub summary: String,
    /// Memories the summary was made from.
    pub memory_count: u64,
    pub computed_at: Millis,
    /// The users (as stored) whose memories it was made from, so a
    /// revoked consent erases every summary that used the user's memories.
    #[serde(default)]
    pub users: Vec<String>,
}

impl Partition {
    fn validate(&self, view: &SummaryView) -> Result<()> {
        if self.group.len() != view.group_by.len() || !view.group_by.iter().all(|f| self.group.contains_key(f)) {
            return Err(Error::invalid("group", format!("keys must be exactly the view's group_by {:?}", view.group_by)));
        }
        for (f, v) in &self.group {
            check_value(f, &format!("group.{f}"), v)?;
        }
        if self.summary.len() > limits::SUMMARY_VIEW_SUMMARY_BYTES_MAX {
            return Err(Error::too_large("summary", self.summary.len(), limits::SUMMARY_VIEW_SUMMARY_BYTES_MAX));
        }
        if self.users.len() > limits::SUMMARY_VIEW_MEMORIES_PER_PARTITION_MAX {
            return Err(Error::LimitExceeded { what: "users of one partition".into(), limit: limits::SUMMARY_VIEW_MEMORIES_PER_PARTITION_MAX as u64 });
        }
        Ok(())
    }
}

/// Where a task is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TaskStatus {
    Pending,
    Running,
    Success,
    Failed,
}

impl TaskStatus {
    /// AMS's names.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Pending => "pending",
            TaskStatus::Running => "running",
            TaskStatus::Success => "success",
            TaskStatus::Failed => "failed",
        }
    }

    fn finished(self) -> bool {
        matches!(self, TaskStatus::Success | TaskStatus::Failed)
    }

    /// Whether a task may move from `self` to `next`.
    fn may_become(self, next: TaskStatus) -> bool {
        matches!((self, next), (TaskStatus::Pending, TaskStatus::Running | TaskStatus::Failed) | (TaskStatus::Running, TaskStatus::Success | TaskStatus::Failed))
    }
}

/// A background run's record (AMS's `Task`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Task {
    pub id: String,
    pub status: TaskStatus,
    pub view_id: Option<String>,
    pub created_at: Millis,
    pub started_at: Option<Millis>,
    pub completed_at: Option<Millis>,
    /// Why it failed, at most [`limits::TASK_ERROR_CHARS_MAX`] characters.
    pub error_message: Option<String>,
}

impl Task {
    /// A new task, pending.
    pub fn pending(id: String, view_id: &str, now: Millis) -> Task {
        Task { id, status: TaskStatus::Pending, view_id: Some(view_id.to_owned()), created_at: now, started_at: None, completed_at: None, error_message: None }
    }

    /// The next step: `running`, `success`, or `failed` with its reason.
    pub fn step(&self, status: TaskStatus, error: Option<String>, now: Millis) -> Task {
        let mut t = self.clone();
        t.status = status;
        match status {
            TaskStatus::Running => t.started_at = Some(now),
            TaskStatus::Success | TaskStatus::Failed => t.completed_at = Some(now),
            TaskStatus::Pending => {}
        }
        t.error_message = error.map(|e| e.chars().take(limits::TASK_ERROR_CHARS_MAX).collect());
        t
    }
}

/// One view with what its runs stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ViewState {
    pub view: SummaryView,
    /// By [`group_key`].
    pub partitions: BTreeMap<String, Partition>,
    /// The `ltm_version` at which the last full run started.
    pub source_version: u64,
}

/// A summary-view mutation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum SummaryViewOp {
    /// Add a view (its id must be new).
    Create { view: SummaryView },
    /// Remove a view and its stored partitions (its tasks stay).
    Delete { view_id: String },
    /// A task record: a new task (`pending`, for an existing view), or the
    /// next step of a known one.
    Task { task: Task },
    /// A run's results: with `full`, they replace the view's partitions
    /// (a full run), else they are merged (one partition). With `task`, the
    /// task's final record, in the same op.
    Store { view_id: String, partitions: Vec<Partition>, full: bool, task: Option<Task> },
    /// Long-term memory changed in another shard of a sharded tenant,
    /// whose home object keeps the views: continuous views become due as
    /// if it had changed here.
    SourceChanged,
}

/// What a summary-view op did.
#[derive(Debug, Clone, PartialEq)]
pub enum SummaryViewApplied {
    Created(SummaryView),
    Deleted { view_id: String },
    Task(Task),
    Stored { view_id: String, partitions: usize },
    SourceChanged,
}

/// The tenant's views and tasks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SummaryViews {
    views: BTreeMap<String, ViewState>,
    tasks: BTreeMap<String, Task>,
    /// Changes to long-term memory applied so far.
    ltm_version: u64,
}

impl SummaryViews {
    /// Applies `op`; on error nothing changed (times are in the op).
    pub fn apply(&mut self, op: &SummaryViewOp) -> Result<SummaryViewApplied> {
        match op {
            SummaryViewOp::Create { view } => {
                view.validate()?;
                if self.views.contains_key(&view.id) {
                    return Err(Error::invalid("id", format!("summary view {:?} exists", view.id)));
                }
                if self.views.len() >= limits::SUMMARY_VIEWS_MAX {
                    return Err(Error::LimitExceeded { what: "summary views".into(), limit: limits::SUMMARY_VIEWS_MAX as u64 });
                }
                self.views.insert(view.id.clone(), ViewState { view: view.clone(), partitions: BTreeMap::new(), source_version: 0 });
                Ok(SummaryViewApplied::Created(view.clone()))
            }
            SummaryViewOp::Delete { view_id } => {
                self.views.remove(view_id).ok_or_else(|| Error::not_found("summary view", view_id))?;
                Ok(SummaryViewApplied::Deleted { view_id: view_id.clone() })
            }
            SummaryViewOp::Task { task } => {
                self.check_task(task)?;
                if !self.tasks.contains_key(&task.id) {
                    self.make_room()?;
                    // The run covers long-term memory as of now: a
                    // continuous view is not due again until it changes.
                    if let Some(v) = task.view_id.as_ref().and_then(|id| self.views.get_mut(id)) {
                        v.source_version = self.ltm_version;
                    }
                }
                self.tasks.insert(task.id.clone(), task.clone());
                Ok(SummaryViewApplied::Task(task.clone()))
            }
            SummaryViewOp::Store { view_id, partitions, full, task } => {
                let state = self.views.get(view_id).ok_or_else(|| Error::not_found("summary view", view_id))?;
                if let Some(t) = task {
                    self.check_task(t)?;
                    if !self.tasks.contains_key(&t.id) {
                        return Err(Error::not_found("task", &t.id));
                    }
                }
                if partitions.len() > limits::SUMMARY_VIEW_PARTITIONS_PER_RUN_MAX {
                    return Err(Error::LimitExceeded { what: "partitions in one summary view run".into(), limit: limits::SUMMARY_VIEW_PARTITIONS_PER_RUN_MAX as u64 });
                }
                for p in partitions {
                    p.validate(&state.view)?;
                }
                let kept = if *full { 0 } else { state.partitions.keys().filter(|k| !partitions.iter().any(|p| group_key(&p.group) == **k)).count() };
                if kept + partitions.len() > limits::SUMMARY_VIEW_PARTITIONS_KEPT_MAX {
                    return Err(Error::LimitExceeded { what: "stored partitions of a summary view".into(), limit: limits::SUMMARY_VIEW_PARTITIONS_KEPT_MAX as u64 });
                }
                let state = self.views.get_mut(view_id).ok_or_else(|| Error::Internal { detail: "view vanished".into() })?;
                if *full {
                    state.partitions.clear();
                }
                for p in partitions {
                    state.partitions.insert(group_key(&p.group), p.clone());
                }
                if let Some(t) = task {
                    self.tasks.insert(t.id.clone(), t.clone());
                }
                Ok(SummaryViewApplied::Stored { view_id: view_id.clone(), partitions: partitions.len() })
            }
            SummaryViewOp::SourceChanged => {
                self.long_term_changed();
                Ok(SummaryViewApplied::SourceChanged)
            }
        }
    }

    /// A new task must be pending and name an existing view; a known one
    /// may only move forward (pending → running → success | failed).
    fn check_task(&self, t: &Task) -> Result<()> {
        validate_id("task_id", &t.id)?;
        if t.error_message.as_ref().is_some_and(|e| e.chars().count() > limits::TASK_ERROR_CHARS_MAX) {
            return Err(Error::invalid("error_message", format!("at most {} characters", limits::TASK_ERROR_CHARS_MAX)));
        }
        match self.tasks.get(&t.id) {
            None => {
                if t.status != TaskStatus::Pending {
                    return Err(Error::invalid("status", "a new task is pending"));
                }
                match &t.view_id {
                    Some(v) if self.views.contains_key(v) => Ok(()),
                    Some(v) => Err(Error::not_found("summary view", v)),
                    None => Err(Error::invalid("view_id", "required")),
                }
            }
            Some(prev) if prev.view_id == t.view_id && prev.status.may_become(t.status) => Ok(()),
            Some(prev) => Err(Error::invalid("task_id", format!("task {:?} is {} and cannot become {}", t.id, prev.status.as_str(), t.status.as_str()))),
        }
    }

    /// Drops the oldest finished task when the table is full; refuses when
    /// every kept task is still unfinished.
    fn make_room(&mut self) -> Result<()> {
        if self.tasks.len() < limits::TASKS_KEPT_MAX {
            return Ok(());
        }
        let oldest = self.tasks.values().filter(|t| t.status.finished()).min_by_key(|t| (t.created_at, t.id.clone())).map(|t| t.id.clone());
        match oldest {
            Some(id) => {
                self.tasks.remove(&id);
                Ok(())
            }
            None => Err(Error::LimitExceeded { what: "unfinished tasks".into(), limit: limits::TASKS_KEPT_MAX as u64 }),
        }
    }

    /// Notes a change to long-term memory.
    pub fn long_term_changed(&mut self) {
        self.ltm_version += 1;
    }

    /// Changes to long-term memory applied so far: a sharded tenant's
    /// shard compares it around a request to know whether to tell home.
    pub fn ltm_version(&self) -> u64 {
        self.ltm_version
    }

    /// Whether any view is continuous.
    pub fn has_continuous(&self) -> bool {
        self.views.values().any(|s| s.view.continuous)
    }

    /// Erases every stored summary made from `user_id`'s memories (a
    /// revoked consent).
    pub fn forget_user(&mut self, user_id: &str) {
        for state in self.views.values_mut() {
            state.partitions.retain(|_, p| p.group.get("user_id").map(String::as_str) != Some(user_id) && !p.users.iter().any(|u| u == user_id));
        }
    }

    /// Views in id (creation) order.
    pub fn views(&self) -> impl Iterator<Item = &ViewState> {
        self.views.values()
    }

    pub fn view(&self, id: &str) -> Option<&ViewState> {
        self.views.get(id)
    }

    pub fn task(&self, id: &str) -> Option<&Task> {
        self.tasks.get(id)
    }

    /// Continuous views whose memories changed since their last run.
    pub fn due(&self) -> impl Iterator<Item = &SummaryView> {
        self.views.values().filter(|s| s.view.continuous && s.source_version < self.ltm_version).map(|s| &s.view)
    }

    /// Checks a decoded state against the limits.
    pub fn validate(&self) -> Result<()> {
        if self.views.len() > limits::SUMMARY_VIEWS_MAX || self.tasks.len() > limits::TASKS_KEPT_MAX {
            return Err(Error::invalid("summary_views", "more views or tasks than the limits"));
        }
        for (id, s) in &self.views {
            if *id != s.view.id || s.partitions.len() > limits::SUMMARY_VIEW_PARTITIONS_KEPT_MAX {
                return Err(Error::invalid("summary_views", format!("view {id:?} is inconsistent")));
            }
            s.view.validate()?;
        }
        Ok(())
    }
}

