//! The change feed: one small event per committed write, derived from the
//! op-log entry alone.
//!
//! Why from the entry and not from what the op did: a subscriber resuming
//! with `since` is served from the log (or the store's recent-event ring
//! rebuilt from it), so a live event and a replayed one must be the same
//! bytes. An event carries kinds, keys, ids and counts, never bodies: a
//! subscriber fetches what it needs.
//!
//! `seq` is the op's log sequence number: per namespace, strictly
//! increasing, without gaps, and durable with the log.

use serde::Serialize;

use crate::core::agent_state::AgentStateOp;
use crate::core::engine::{moves, ExtractionOp, HistoryOp, LogEntry, Op};
use crate::core::error::{Error, Result};
use crate::core::ledger::LedgerOp;
use crate::core::limits;
use crate::core::longterm::LtmOp;
use crate::core::service_cache::ServiceOp;
use crate::core::summary_views::SummaryViewOp;
use crate::core::time::Millis;

pub mod relay;
mod subscription;
pub use subscription::{resync_notice, Offer, Subscription, CLOSE_SLOW_CONSUMER};

/// Every event kind, `area.verb`. The list is closed: `index.d.ts` and the
/// `kinds` filter are checked against it.
pub const KINDS: [&str; 53] = [
    "working_memory.updated",
    "working_memory.created",
    "working_memory.appended",
    "working_memory.deleted",
    "working_memory.expired",
    "working_memory.compacted",
    "tool_cache.put",
    "tool_cache.invalidated",
    "tool_cache.ttls_set",
    "prompt.version_set",
    "prompt.rolled_back",
    "prompt.patch_appended",
    "prompt.patch_removed",
    "prompt.tools_set",
    "ledger.asset_created",
    "ledger.account_created",
    "ledger.transfers_created",
    "ledger.transfer_posted",
    "ledger.transfer_voided",
    "ledger.transfers_expired",
    "ledger.intent_begun",
    "ledger.intent_completed",
    "long_term_memory.created",
    "long_term_memory.extracted",
    "long_term_memory.updated",
    "long_term_memory.deleted",
    "long_term_memory.reembedded",
    "episode.recorded",
    "episode.configured",
    "episode.expired",
    "service_cache.registered",
    "service_cache.refreshed",
    "service_cache.written",
    "service_cache.invalidated",
    "service_cache.expired",
    "profile.updated",
    "profile.deleted",
    "profile.migrated",
    "schema.set",
    "working_memory.migrated",
    "prompt.guardrails_set",
    "decision.appended",
    "privacy.policy_set",
    "consent.granted",
    "consent.revoked",
    "summary_view.created",
    "summary_view.deleted",
    "summary_view.refreshed",
    "summary_view.source_changed",
    "task.updated",
    "shard.moved_in",
    "shard.moved_out",
    "shard.events_lost",
];

/// One change. `key` names the thing changed (a session, agent, account,
/// transfer or memory id), or is empty for a change to many; `ids` then
/// lists up to [`limits::FEED_EVENT_IDS_MAX`] of them and `count` says how
/// many there were.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FeedEvent {
    pub seq: u64,
    /// When the write was applied (ms since the epoch).
    pub ts: Millis,
    pub kind: &'static str,
    pub key: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ids: Vec<String>,
}

impl FeedEvent {
    fn new(seq: u64, ts: Millis, kind: &'static str, key: impl Into<String>) -> FeedEvent {
        FeedEvent { seq, ts, kind, key: key.into(), count: None, ids: Vec::new() }
    }

    fn many<'a>(mut self, ids: impl ExactSizeIterator<Item = &'a str>) -> FeedEvent {
        self.count = Some(ids.len() as u64);
        self.ids = ids.take(limits::FEED_EVENT_IDS_MAX).map(str::to_owned).collect();
        self
    }

    fn counted(mut self, n: usize) -> FeedEvent {
        self.count = Some(n as u64);
        self
    }
}

/// The event of the op logged under `seq`.
pub fn event_of(seq: u64, entry: &LogEntry) -> FeedEvent {
    let e = |kind, key: &str| FeedEvent::new(seq, entry.now_ms, kind, key);
    match &entry.op {
        Op::SessionPut { session } => e("working_memory.updated", &session.session_id),
        Op::SessionCreate { session } => e("working_memory.created", &session.session_id),
        Op::SessionAppend { session_id, messages } => e("working_memory.appended", session_id).many(messages.iter().map(|m| m.id.as_str())),
        Op::SessionDelete { session_id } => e("working_memory.deleted", session_id),
        Op::SessionsExpire => e("working_memory.expired", ""),
        Op::History(h) => match h {
            HistoryOp::Compact { session_id, count, .. } => e("working_memory.compacted", session_id).counted(*count),
            HistoryOp::ToolCachePut { session_id, tool, .. } => e("tool_cache.put", session_id).many([tool.as_str()].into_iter()),
            HistoryOp::ToolCacheInvalidate { session_id, tool, .. } => e("tool_cache.invalidated", session_id).many(tool.as_deref().into_iter()),
            HistoryOp::ToolTtlsSet { ttls } => e("tool_cache.ttls_set", "").many(ttls.keys().map(String::as_str)),
            HistoryOp::PromptSet { agent_id, .. } => e("prompt.version_set", agent_id),
            HistoryOp::PromptRollback { agent_id, .. } => e("prompt.rolled_back", agent_id),
            HistoryOp::PatchAppend { agent_id, patch_id, .. } => e("prompt.patch_appended", agent_id).many([patch_id.as_str()].into_iter()),
            HistoryOp::PatchRemove { agent_id, .. } => e("prompt.patch_removed", agent_id),
            HistoryOp::ToolsAllow { agent_id, .. } => e("prompt.tools_set", agent_id),
            HistoryOp::GuardrailsSet { agent_id, .. } => e("prompt.guardrails_set", agent_id),
        },
        Op::Ledger(l) => match l {
            LedgerOp::CreateAsset { code, .. } => e("ledger.asset_created", code),
            LedgerOp::CreateAccount { id, .. } => e("ledger.account_created", id),
            LedgerOp::CreateTransfers { transfers } => e("ledger.transfers_created", "").many(transfers.iter().map(|t| t.id.as_str())),
            LedgerOp::CreateTransferColumns(c) => e("ledger.transfers_created", "").counted(c.len()),
            LedgerOp::Post { id, .. } => e("ledger.transfer_posted", id),
            LedgerOp::Void { id } => e("ledger.transfer_voided", id),
            LedgerOp::Expire => e("ledger.transfers_expired", ""),
            LedgerOp::BeginIntent { key, .. } => e("ledger.intent_begun", key),
            LedgerOp::CompleteIntent { key, .. } => e("ledger.intent_completed", key),
        },
        Op::Ltm(l) => match l {
            LtmOp::Create { records, .. } => e("long_term_memory.created", "").many(records.iter().map(|r| r.record.id.as_str())),
            LtmOp::Update { id, .. } => e("long_term_memory.updated", id),
            LtmOp::Delete { ids, .. } => e("long_term_memory.deleted", "").many(ids.iter().map(String::as_str)),
            LtmOp::Reembed { embedder, .. } => e("long_term_memory.reembedded", embedder),
            LtmOp::Restore { id, .. } => e("long_term_memory.restored", id),
            LtmOp::Redact { id, .. } => e("long_term_memory.redacted", id),
        },
        Op::EpisodeRecord { episode } => e("episode.recorded", &episode.agent_id).many([episode.id.as_str()].into_iter()),
        Op::EpisodesConfigure { .. } => e("episode.configured", ""),
        Op::EpisodesExpire => e("episode.expired", ""),
        Op::AgentState(a) => match a {
            AgentStateOp::ProfileSet { agent_id, .. } | AgentStateOp::ProfileIncrement { agent_id, .. } => e("profile.updated", agent_id),
            AgentStateOp::ProfileDelete { agent_id } => e("profile.deleted", agent_id),
            AgentStateOp::ProfileMigrate { agent_id, .. } => e("profile.migrated", agent_id),
            AgentStateOp::SchemaSet { kind, .. } => e("schema.set", kind),
        },
        Op::SessionDataMigrate { session_id, .. } => e("working_memory.migrated", session_id),
        Op::DecisionAppend { session_id, .. } => e("decision.appended", session_id),
        Op::PrivacySet { .. } => e("privacy.policy_set", ""),
        Op::ConsentGrant { user_id, .. } => e("consent.granted", user_id),
        Op::ConsentRevoke { user_id, .. } => e("consent.revoked", user_id),
        Op::Extraction(ExtractionOp::Commit { session_id, records, .. }) => e("long_term_memory.extracted", session_id).many(records.iter().map(|r| r.record.id.as_str())),
        Op::SummaryView(v) => match v {
            SummaryViewOp::Create { view } => e("summary_view.created", &view.id),
            SummaryViewOp::Delete { view_id } => e("summary_view.deleted", view_id),
            SummaryViewOp::Task { task } => e("task.updated", &task.id),
            SummaryViewOp::Store { view_id, partitions, task, .. } => e("summary_view.refreshed", view_id).many(task.iter().map(|t| t.id.as_str())).counted(partitions.len()),
            SummaryViewOp::SourceChanged => e("summary_view.source_changed", ""),
        },
        Op::MoveIn { move_id, items, remove, .. } => e("shard.moved_in", &move_id.to_string()).counted(items.len() + remove.len()),
        Op::MoveOut { keys } => e("shard.moved_out", "").counted(keys.len()),
        Op::Adopt { item, .. } => match item.as_ref() {
            moves::MoveItem::Memory { record, .. } => e("shard.moved_in", "").many([record.id.as_str()].into_iter()),
            _ => e("shard.moved_in", "").counted(1),
        },
        Op::HandedOver { id, .. } => e("shard.moved_out", "").many([id.as_str()].into_iter()),
        Op::FeedRelay(relayed) => relayed.event(seq),
        Op::Service(s) => match s {
            ServiceOp::Register { service, .. } => e("service_cache.registered", service),
            ServiceOp::Put { agent_id, service, written: false, .. } => e("service_cache.refreshed", agent_id).many([service.as_str()].into_iter()),
            ServiceOp::Put { agent_id, service, written: true, .. } => e("service_cache.written", agent_id).many([service.as_str()].into_iter()),
            ServiceOp::Invalidate { agent_id, service } => e("service_cache.invalidated", agent_id).many(service.as_deref().into_iter()),
            ServiceOp::Expire => e("service_cache.expired", ""),
        },
    }
}

/// Which events a subscriber wants: kinds (exact, or `area.*`) and keys; an
/// empty list admits all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Interest {
    pub kinds: Vec<String>,
    pub keys: Vec<String>,
}

impl Interest {
    /// Parses comma-separated lists, refusing unknown kinds (a typo would
    /// otherwise subscribe to nothing, silently).
    pub fn parse(kinds: Option<&str>, keys: Option<&str>) -> Result<Interest> {
        let list = |s: Option<&str>| -> Vec<String> { s.map(|s| s.split(',').map(str::trim).filter(|p| !p.is_empty()).map(str::to_owned).collect()).unwrap_or_default() };
        let (kinds, keys) = (list(kinds), list(keys));
        if kinds.len() > limits::FEED_FILTER_ITEMS_MAX || keys.len() > limits::FEED_FILTER_ITEMS_MAX {
            return Err(Error::LimitExceeded { what: "kinds or keys in one event filter".into(), limit: limits::FEED_FILTER_ITEMS_MAX as u64 });
        }
        for k in &kinds {
            let known = match k.strip_suffix(".*") {
                Some(area) => KINDS.iter().any(|kind| kind.split('.').next() == Some(area)),
                None => KINDS.contains(&k.as_str()),
            };
            if !known {
                return Err(Error::InvalidQuery { param: "kinds".into(), reason: format!("unknown event kind {k:?}") });
            }
        }
        Ok(Interest { kinds, keys })
    }

    pub fn admits(&self, e: &FeedEvent) -> bool {
        let kind_ok = self.kinds.is_empty()
            || self.kinds.iter().any(|k| match k.strip_suffix(".*") {
                Some(area) => e.kind.split('.').next() == Some(area),
                None => k == e.kind,
            });
        let key_ok = self.keys.is_empty() || self.keys.iter().any(|k| *k == e.key || e.ids.iter().any(|id| id == k));
        kind_ok && key_ok
    }
}

/// The recent events a store keeps, oldest first, for resumes without a
/// log read: at most [`limits::FEED_EVENTS_KEPT`], contiguous in `seq`.
#[derive(Debug, Clone, Default)]
pub struct Ring {
    events: std::collections::VecDeque<FeedEvent>,
}

/// One answer to "what happened after `since`".
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FeedPage {
    pub events: Vec<FeedEvent>,
    /// The namespace's last committed seq.
    pub last_seq: u64,
    /// `since` is older than what is kept: reload state, then resume from
    /// `last_seq`.
    pub resync_required: bool,
    /// What to pass as `since` next: the last event returned when the page
    /// was cut at its limit, else `last_seq`.
    pub next_since: u64,
}

impl Ring {
    /// Adds the next event (its seq follows the newest one's).
    pub fn push(&mut self, e: FeedEvent) {
        if self.events.back().is_some_and(|b| b.seq + 1 != e.seq) {
            // A gap would break the ring's promise; start over from here.
            self.events.clear();
        }
        if self.events.len() >= limits::FEED_EVENTS_KEPT {
            self.events.pop_front();
        }
        self.events.push_back(e);
    }

    /// The newest event's seq.
    pub fn newest_seq(&self) -> Option<u64> {
        self.events.back().map(|e| e.seq)
    }

    /// Events after `since` that `interest` admits, at most `limit`.
    /// `since` past `last_seq` is bad input.
    pub fn since(&self, since: u64, last_seq: u64, interest: &Interest, limit: usize) -> Result<FeedPage> {
        if since > last_seq {
            return Err(Error::InvalidQuery { param: "since".into(), reason: format!("{since} is past the last committed seq {last_seq}") });
        }
        let first_kept = self.events.front().map_or(last_seq + 1, |e| e.seq);
        if since + 1 < first_kept {
            return Ok(FeedPage { events: Vec::new(), last_seq, resync_required: true, next_since: last_seq });
        }
        let skip = (since + 1 - first_kept) as usize;
        let events: Vec<FeedEvent> = self.events.iter().skip(skip).filter(|e| interest.admits(e)).take(limit).cloned().collect();
        let next_since = if events.len() == limit { events.last().map_or(last_seq, |e| e.seq) } else { last_seq };
        Ok(FeedPage { events, last_seq, resync_required: false, next_since })
    }
}

#[cfg(test)]
mod tests;
