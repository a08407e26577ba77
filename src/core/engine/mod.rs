//! The deterministic state machine at the heart of edgemem.
//!
//! Every mutation is an [`Op`], applied with [`Engine::apply`] and the time
//! passed in. Given the same ops and times in the same order, two engines
//! reach the same state: that is what makes "snapshot + replay of the log"
//! a correct recovery. `apply` validates everything before it changes
//! anything, so an op that fails leaves the state exactly as it was.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::core::codec::{self, SCHEMA_VERSION};
use crate::core::consent::{ConsentRecord, Policy, Privacy};
use crate::core::decisions::{DecisionEntry, DecisionLog};
use crate::core::error::{Error, Result};
use crate::core::ledger::{Ledger, LedgerApplied, LedgerOp, LedgerSnapshot};
use crate::core::episodes::{Episode, EpisodicConfig, EpisodicLog, Recorded};
use crate::core::limits;
use crate::core::longterm::{LongTerm, LongTermSnapshot, LtmApplied, LtmOp};
use crate::core::agent_state::{AgentState, AgentStateApplied, AgentStateOp};
use crate::core::service_cache::{ServiceApplied, ServiceCache, ServiceOp};
use crate::core::session::{validate_id, validate_messages, Message, Session};
use crate::core::summary_views::{SummaryViewApplied, SummaryViewOp, SummaryViews};
use crate::core::time::Millis;

mod extraction;
mod history;
pub mod export;
pub mod export_page;
pub mod export_shard;
pub mod moves;
mod snapshot;
// A child of the engine, not a sibling: it builds engine ops and states, and
// the engine calls it on load, so as siblings the two would depend on each other.
pub mod migrate;

pub use extraction::{Committed, ExtractionOp, Pending, Watermark};
pub use history::{HistoryApplied, HistoryOp, HistoryState};
pub use snapshot::{decode_log_entry, encode_log_entry, LOG_BODY_POSITIONAL};
#[cfg(test)]
use snapshot::SnapshotV1;

/// A mutation. Ops are logged before they are acknowledged and replayed on
/// recovery, so every field an op needs (ids, contents) is resolved before
/// the op is built; only the time comes from `apply`'s `now`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Op {
    /// Create or replace a whole session. `created_at` is kept from an
    /// existing session; `updated_at` and `expires_at` come from `now`.
    SessionPut { session: Session },
    /// Create a session unless a live one exists (get-or-create without a
    /// race: the check and the write are one op).
    SessionCreate { session: Session },
    /// Append turns to an existing, unexpired session.
    SessionAppend { session_id: String, messages: Vec<Message> },
    /// Delete a session; deleting a missing session is `NotFound`.
    SessionDelete { session_id: String },
    /// Remove every session whose TTL ran out at `now`.
    SessionsExpire,
    /// A ledger mutation.
    Ledger(LedgerOp),
    /// Compaction, the tool-result cache, agent configuration.
    History(HistoryOp),
    /// A long-term memory mutation.
    Ltm(LtmOp),
    /// Record an event in the episodic log.
    EpisodeRecord { episode: Episode },
    /// Set the episodic log's cap, TTL and policy at the cap.
    EpisodesConfigure { config: EpisodicConfig },
    /// Drop events past the episodic log's TTL at `now`.
    EpisodesExpire,
    /// A change to the service-state cache.
    Service(ServiceOp),
    /// A change to agent profiles or user schemas.
    AgentState(AgentStateOp),
    /// Moves a session's `data` from schema `from_version` to `to_version`:
    /// through the registered chain, or (with `data`) to what a host's
    /// migration made of it. Refused if the data is no longer at
    /// `from_version`, so a migration is written back once.
    SessionDataMigrate {
        session_id: String,
        from_version: u32,
        to_version: u32,
        #[serde(serialize_with = "crate::core::exact_json::option_map")]
        data: Option<serde_json::Map<String, serde_json::Value>>,
    },
    /// Append an entry to a live session's decision log (`seq` and `ts` are
    /// assigned by the log).
    DecisionAppend { session_id: String, entry: DecisionEntry },
    /// Replace the namespace's privacy policy.
    PrivacySet { policy: Policy },
    /// Record a user's consent to long-term memory (`user_id` as stored).
    ConsentGrant { user_id: String, granted_by: String },
    /// Withdraw a user's consent and erase their long-term memories and
    /// episodes. The store compacts its log after it, so the erased text
    /// leaves storage too.
    ConsentRevoke {
        user_id: String,
        /// The user id as sessions hold it, when it differs from `user_id`
        /// (a sealed id): sessions keep the id as given.
        #[serde(default)]
        session_user_id: Option<String>,
    },
    /// Background extraction: a pass's memories and the session's new
    /// watermark, in one op.
    Extraction(ExtractionOp),
    /// Summary views, their stored results and their tasks.
    SummaryView(SummaryViewOp),
    /// A split's batch into its new shard (see [`moves`]): `items` replace
    /// what this state holds under their keys, `remove` keys are dropped;
    /// applied once per `(move_id, seq)`, a batch at or below the move's
    /// watermark being a no-op. `embedder` names the records' embedder.
    MoveIn { move_id: u64, seq: u64, items: Vec<moves::MoveItem>, remove: Vec<String>, embedder: Option<String> },
    /// A split's collection at its old shard: the items under `keys` are
    /// dropped, the new shard owning them now.
    MoveOut { keys: Vec<String> },
    /// At a sharded tenant's home: another shard's change, logged so the
    /// tenant's change feed is one sequence ([`crate::core::feed::relay`]).
    FeedRelay(crate::core::feed::relay::Relayed),
    /// A record handed to its new user's shard by an edit that changed
    /// its user (see [`moves`]): put with its vector and history when this
    /// state does not hold its id, or holds an earlier state of it (an
    /// earlier hand-over, overtaken by an edit at the old shard); a no-op
    /// when it holds the same state or a later one (a hand-over repeated
    /// after a crash, or late); refused when it holds another record under
    /// that id. Appended last: ops are logged by position.
    Adopt { item: Box<moves::MoveItem>, embedder: Option<String> },
    /// The end of a hand-over at the record's old shard: record `id` is
    /// dropped if it is still at `version` ([`moves::memory_version`]),
    /// the version its new shard adopted; an edit made meanwhile keeps it.
    HandedOver { id: String, version: u64 },
}

/// What an applied op did.
#[derive(Debug, Clone, PartialEq)]
pub enum Applied {
    Session(Session),
    /// `SessionAppend`: only what the append added.
    Appended(Appended),
    /// `SessionCreate` found a live session and changed nothing.
    Existing(Session),
    Deleted { session_id: String },
    Expired { session_ids: Vec<String> },
    Ledger(LedgerApplied),
    History(HistoryApplied),
    Ltm(LtmApplied),
    EpisodeRecorded(Recorded),
    EpisodesDropped { count: usize },
    Service(ServiceApplied),
    AgentState(AgentStateApplied),
    Decision(DecisionEntry),
    Privacy(Policy),
    Consent { user_id: String, record: ConsentRecord },
    /// `histories`: version histories dropped (see `longterm::versions`).
    ConsentRevoked { user_id: String, had_consent: bool, memories: usize, episodes: usize, histories: usize },
    Extracted(Committed),
    SummaryView(SummaryViewApplied),
    /// A move batch or collection: whether it applied (a batch already
    /// applied is not), items put and removed.
    Moved { applied: bool, items: usize, removed: usize },
    /// A shard's event logged in home's feed.
    Relayed,
}

/// What one append added to a session.
#[derive(Debug, Clone, PartialEq)]
pub struct Appended {
    pub session_id: String,
    /// The appended turns, as stored (ids and times filled).
    pub messages: Vec<Message>,
    /// Turns in the session after the append.
    pub message_count: usize,
    pub updated_at: Millis,
    pub expires_at: Option<Millis>,
}

/// One page of the session list, sorted by session id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionPage {
    pub sessions: Vec<String>,
    pub total: usize,
}

/// A log record's body: the op and the time it was applied at.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogEntry {
    pub now_ms: Millis,
    pub op: Op,
}

/// The in-memory state of one tenant.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Engine {
    sessions: BTreeMap<String, Session>,
    /// (expires_at, session_id) for sessions with a TTL: the next expiry is
    /// the first element, and a sweep walks only what has expired.
    expiry: BTreeSet<(Millis, String)>,
    /// Sequence number of the last op applied (0 = none).
    last_seq: u64,
    ledger: Ledger,
    history: HistoryState,
    longterm: LongTerm,
    episodes: EpisodicLog,
    services: ServiceCache,
    agent_state: AgentState,
    /// Decision logs by session id; a log goes with its session.
    decisions: BTreeMap<String, DecisionLog>,
    privacy: Privacy,
    /// Extraction watermarks by session id; one goes with its session.
    extraction: BTreeMap<String, Watermark>,
    summary_views: SummaryViews,
    /// Splits moving state in: the last batch applied, by move id.
    moves_in: BTreeMap<u64, u64>,
    /// At a sharded tenant's home: the last event relayed from each shard.
    feed_relay: crate::core::feed::relay::RelayMarks,
}

impl Engine {
    /// An empty engine.
    pub fn new() -> Engine {
        Engine::default()
    }

    /// Sequence number of the last op applied.
    pub fn last_seq(&self) -> u64 {
        self.last_seq
    }

    /// Applies `op` at time `now`. On error nothing has changed.
    pub fn apply(&mut self, op: &Op, now: Millis) -> Result<Applied> {
        let applied = match op {
            Op::SessionPut { session } => {
                session.validate()?;
                if !self.sessions.contains_key(&session.session_id) && self.sessions.len() >= limits::SESSIONS_MAX {
                    return Err(Error::LimitExceeded { what: "sessions".into(), limit: limits::SESSIONS_MAX as u64 });
                }
                let mut next = session.clone();
                // Data that names no version is taken to be in the newest.
                if let Some(schema) = self.agent_state.schema("session_data") {
                    let v = *next.data_schema_version.get_or_insert(schema.version);
                    if v > schema.version {
                        return Err(Error::conflict(crate::core::error::ConflictCode::SchemaVersionTooNew, format!("session data version {v}; the newest is {}", schema.version)));
                    }
                }
                if let Some(prev) = self.sessions.get(&session.session_id).filter(|s| !s.is_expired(now)) {
                    next.created_at = prev.created_at;
                } else {
                    next.created_at = now;
                    // A new session (or one whose TTL ran out before a
                    // sweep) starts with an empty decision log, and nothing
                    // of it extracted.
                    self.decisions.remove(&session.session_id);
                    self.extraction.remove(&session.session_id);
                }
                next.touch(now);
                self.insert(next.clone());
                Applied::Session(next)
            }
            Op::SessionCreate { session } => {
                if let Some(existing) = self.live(&session.session_id, now) {
                    let existing = existing.clone();
                    self.last_seq += 1;
                    return Ok(Applied::Existing(existing));
                }
                return self.apply(&Op::SessionPut { session: session.clone() }, now);
            }
            Op::SessionAppend { session_id, messages } => {
                validate_id("session_id", session_id)?;
                if messages.len() > limits::APPEND_MESSAGES_MAX {
                    return Err(Error::LimitExceeded { what: "messages in one append".into(), limit: limits::APPEND_MESSAGES_MAX as u64 });
                }
                let prev = self.live(session_id, now).ok_or_else(|| Error::not_found("session", session_id))?;
                if prev.messages.len() + messages.len() > limits::SESSION_MESSAGES_MAX {
                    return Err(Error::LimitExceeded { what: "messages in a session".into(), limit: limits::SESSION_MESSAGES_MAX as u64 });
                }
                // Checked before anything changes, and without copying the
                // session: an append costs what it adds (plus one id scan).
                validate_messages(messages)?;
                if let Some(i) = messages.iter().position(|m| prev.messages.iter().any(|p| p.id == m.id)) {
                    return Err(Error::invalid(format!("messages[{i}].id"), format!("duplicate message id {:?}", messages[i].id)));
                }
                let old_expiry = prev.expires_at;
                let session = self.sessions.get_mut(session_id).ok_or_else(|| Error::Internal { detail: "live session vanished".into() })?;
                session.messages.extend(messages.iter().cloned());
                session.touch(now);
                let appended = Appended {
                    session_id: session_id.clone(),
                    messages: messages.clone(),
                    message_count: session.messages.len(),
                    updated_at: session.updated_at,
                    expires_at: session.expires_at,
                };
                if old_expiry != appended.expires_at {
                    if let Some(at) = old_expiry {
                        self.expiry.remove(&(at, session_id.clone()));
                    }
                    if let Some(at) = appended.expires_at {
                        self.expiry.insert((at, session_id.clone()));
                    }
                }
                Applied::Appended(appended)
            }
            Op::SessionDelete { session_id } => {
                if self.live(session_id, now).is_none() {
                    return Err(Error::not_found("session", session_id));
                }
                self.remove(session_id);
                Applied::Deleted { session_id: session_id.clone() }
            }
            Op::Ledger(op) => Applied::Ledger(self.ledger.apply(op, now)?),
            Op::History(op) => Applied::History(self.apply_history(op, now)?),
            Op::Ltm(op) => {
                match op {
                    LtmOp::Create { records, .. } => {
                        for r in records {
                            self.privacy.check_long_term(r.record.user_id.as_deref())?;
                        }
                    }
                    LtmOp::Update { id, patch, .. } => {
                        let user = patch.user_id.as_deref().or_else(|| self.longterm.get(id).and_then(|r| r.user_id.as_deref()));
                        self.privacy.check_long_term(user)?;
                    }
                    LtmOp::Restore { id, version, .. } => {
                        let body = self.longterm.version_body(id, *version)?;
                        self.privacy.check_long_term(body.user_id.as_deref())?;
                    }
                    LtmOp::Delete { .. } | LtmOp::Reembed { .. } | LtmOp::Redact { .. } => {}
                }
                let applied = self.longterm.apply(op, now)?;
                self.summary_views.long_term_changed();
                Applied::Ltm(applied)
            }
            Op::DecisionAppend { session_id, entry } => {
                if self.live(session_id, now).is_none() {
                    return Err(Error::not_found("session", session_id));
                }
                let log = self.decisions.entry(session_id.clone()).or_default();
                Applied::Decision(log.append(entry, now)?)
            }
            Op::PrivacySet { policy } => {
                self.privacy.policy = *policy;
                Applied::Privacy(*policy)
            }
            Op::ConsentGrant { user_id, granted_by } => {
                let record = self.privacy.grant(user_id, granted_by, now)?;
                Applied::Consent { user_id: user_id.clone(), record }
            }
            Op::ConsentRevoke { user_id, session_user_id } => {
                validate_id("user_id", user_id)?;
                let had_consent = self.privacy.revoke(user_id);
                let ids: Vec<String> = self.longterm.records().filter(|r| r.user_id.as_deref() == Some(user_id.as_str())).map(|r| r.id.clone()).collect();
                let memories = ids.len();
                if !ids.is_empty() {
                    self.longterm.apply(&LtmOp::Delete { ids: ids.clone(), forget: false, actor: None }, now)?;
                }
                // Past versions hold the user's texts too, deleted records' included.
                let histories = self.longterm.purge_user_history(user_id, &ids);
                let session_user = session_user_id.as_deref().unwrap_or(user_id);
                let sessions: BTreeSet<&str> = self.sessions.values().filter(|s| s.user_id.as_deref() == Some(session_user)).map(|s| s.session_id.as_str()).collect();
                let episodes = self.episodes.forget_where(|e| episode_of_user(e, user_id, &sessions));
                self.summary_views.forget_user(user_id);
                if memories > 0 {
                    self.summary_views.long_term_changed();
                }
                Applied::ConsentRevoked { user_id: user_id.clone(), had_consent, memories, episodes, histories }
            }
            Op::EpisodeRecord { episode } => Applied::EpisodeRecorded(self.episodes.record(episode.clone(), now)?),
            Op::Extraction(op) => {
                let committed = self.apply_extraction(op, now)?;
                if !committed.created.is_empty() || !committed.superseded.is_empty() {
                    self.summary_views.long_term_changed();
                }
                Applied::Extracted(committed)
            }
            Op::SummaryView(op) => Applied::SummaryView(self.summary_views.apply(op)?),
            Op::MoveIn { move_id, seq, items, remove, embedder } => self.move_in(*move_id, *seq, items, remove, embedder.as_deref())?,
            Op::MoveOut { keys } => self.move_out_all(keys)?,
            Op::Adopt { item, embedder } => self.adopt(item, embedder.as_deref())?,
            Op::HandedOver { id, version } => self.handed_over(id, *version)?,
            Op::FeedRelay(relayed) => {
                self.feed_relay.apply(relayed)?;
                Applied::Relayed
            }
            Op::EpisodesConfigure { config } => Applied::EpisodesDropped { count: self.episodes.configure(*config)? },
            Op::EpisodesExpire => Applied::EpisodesDropped { count: self.episodes.expire(now) },
            Op::Service(op) => Applied::Service(self.services.apply(op, now)?),
            Op::AgentState(op) => Applied::AgentState(self.agent_state.apply(op, now)?),
            Op::SessionDataMigrate { session_id, from_version, to_version, data } => {
                let s = self.live(session_id, now).ok_or_else(|| Error::not_found("session", session_id))?;
                let at = s.data_schema_version.unwrap_or(1);
                if at != *from_version {
                    return Err(Error::conflict(crate::core::error::ConflictCode::SchemaVersionChanged, format!("session {session_id:?} data is at version {at}, not {from_version}")));
                }
                let empty = serde_json::Map::new();
                let migrated = self.agent_state.migrated("session_data", *from_version, *to_version, data.as_ref(), s.data.as_ref().unwrap_or(&empty))?;
                let mut next = s.clone();
                next.data = Some(migrated);
                next.data_schema_version = Some(*to_version);
                next.validate()?;
                // Not a user write: the TTL and `updated_at` stay as they were.
                self.sessions.insert(session_id.clone(), next.clone());
                Applied::Session(next)
            }
            Op::SessionsExpire => {
                let due: Vec<(Millis, String)> = self.expiry.iter().take_while(|(at, _)| *at <= now).cloned().collect();
                let mut session_ids = Vec::with_capacity(due.len());
                for (_, id) in due {
                    self.remove(&id);
                    session_ids.push(id);
                }
                self.history.sweep_tool_caches(now);
                Applied::Expired { session_ids }
            }
        };
        self.last_seq += 1;
        Ok(applied)
    }

    fn insert(&mut self, session: Session) {
        // A replaced session keeps its archive and tool cache.
        self.unindex(&session.session_id);
        if let Some(at) = session.expires_at {
            self.expiry.insert((at, session.session_id.clone()));
        }
        self.sessions.insert(session.session_id.clone(), session);
    }

    /// Deletes a session with its archive, tool cache and decision log.
    fn remove(&mut self, session_id: &str) {
        self.history.forget_session(session_id);
        self.decisions.remove(session_id);
        self.extraction.remove(session_id);
        self.unindex(session_id);
    }

    fn unindex(&mut self, session_id: &str) {
        if let Some(old) = self.sessions.remove(session_id) {
            if let Some(at) = old.expires_at {
                self.expiry.remove(&(at, old.session_id));
            }
        }
    }

    fn live(&self, session_id: &str, now: Millis) -> Option<&Session> {
        self.sessions.get(session_id).filter(|s| !s.is_expired(now))
    }

    /// The session, unless it is missing or its TTL ran out at `now` (an
    /// expired session is invisible even before a sweep removes it).
    pub fn session(&self, session_id: &str, now: Millis) -> Option<&Session> {
        self.live(session_id, now)
    }

    /// Live sessions sorted by id, optionally only those of `user_id`.
    pub fn list_sessions(&self, now: Millis, user_id: Option<&str>, offset: usize, limit: usize) -> SessionPage {
        let limit = limit.min(limits::SESSION_LIST_LIMIT_MAX);
        let matching = self
            .sessions
            .values()
            .filter(|s| !s.is_expired(now))
            .filter(|s| user_id.is_none() || s.user_id.as_deref() == user_id);
        let mut total = 0;
        let mut sessions = Vec::with_capacity(limit);
        for s in matching {
            if total >= offset && sessions.len() < limit {
                sessions.push(s.session_id.clone());
            }
            total += 1;
        }
        SessionPage { sessions, total }
    }

    /// When the next session TTL or pending-transfer timeout runs out, for
    /// scheduling a sweep (a Durable Object alarm, a timer).
    pub fn next_expiry(&self) -> Option<Millis> {
        let sessions = self.expiry.first().map(|(at, _)| *at);
        [sessions, self.ledger.next_expiry(), self.episodes.next_expiry(), self.services.next_expiry()].into_iter().flatten().min()
    }

    /// Whether a session TTL has run out at `now` and awaits a sweep.
    pub fn sessions_due(&self, now: Millis) -> bool {
        self.expiry.first().is_some_and(|(at, _)| *at <= now)
    }

    /// The episodic log, for queries.
    pub fn episodes(&self) -> &EpisodicLog {
        &self.episodes
    }

    /// Agent profiles and user schemas, for reads.
    pub fn agent_state(&self) -> &AgentState {
        &self.agent_state
    }

    /// The service-state cache, for lookups.
    pub fn services(&self) -> &ServiceCache {
        &self.services
    }

    /// The tenant's long-term memory, for queries.
    /// How long-term vector indexes made from now on store their rows
    /// (see [`LongTerm::set_quantization`]).
    pub fn set_vector_quantization(&mut self, q: crate::core::vector::Quantization) {
        self.longterm.set_quantization(q);
    }

    pub fn longterm(&self) -> &LongTerm {
        &self.longterm
    }

    /// Segment compaction of the vector index: maintenance that changes
    /// the layout, never the contents, so it is not an op.
    pub fn compact_vectors(&mut self, work_points_max: usize) -> Result<Option<crate::core::vector::CompactReport>> {
        self.longterm.compact(work_points_max)
    }

    /// Whether a background compaction pass of this bound has work to do.
    pub fn vector_compaction_due(&self, work_points_max: usize) -> bool {
        self.longterm.compaction_due(work_points_max)
    }

    /// A live session's decision log (`None` when the session is missing or
    /// expired; an empty log when it has no entry yet).
    pub fn decisions(&self, session_id: &str, now: Millis) -> Option<Option<&DecisionLog>> {
        self.live(session_id, now).map(|_| self.decisions.get(session_id))
    }

    /// At a sharded tenant's home: where it is in each shard's feed.
    pub fn feed_relay(&self) -> &crate::core::feed::relay::RelayMarks {
        &self.feed_relay
    }

    /// Summary views, their results and tasks.
    pub fn summary_views(&self) -> &SummaryViews {
        &self.summary_views
    }

    /// The privacy policy and consent table.
    pub fn privacy(&self) -> &Privacy {
        &self.privacy
    }

    /// The tenant's ledger, for queries.
    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    /// Number of sessions held, expired or not.
    pub fn session_count(&self) -> usize {
        self.sessions.len()
    }
}

/// Whether an episode is `user_id`'s: its payload names the user, or it is
/// an archived turn of one of the user's sessions.
fn episode_of_user(e: &Episode, user_id: &str, sessions: &BTreeSet<&str>) -> bool {
    let field = |name: &str| e.payload.get(name).and_then(|v| v.as_str());
    field("user_id") == Some(user_id) || field("session_id").is_some_and(|s| sessions.contains(s))
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod moves_tests;
