//! The episodic log: agent events with a per-agent cap and a TTL.
//!
//! An [`Episode`] is something that happened to an agent: a type (`kind`),
//! a time, a JSON payload and an optional outcome. Each agent keeps its
//! newest events up to a cap; events older than the TTL are invisible at
//! once and dropped by [`EpisodicLog::expire`].
//!
//! History compaction archives the turns it summarizes here as
//! [`TURN_ARCHIVED`] events (see [`Episode::archived_turn`]). What happens
//! at the per-agent cap is the log's [`AtCap`] policy: the default evicts
//! the agent's oldest events and reports how many; [`AtCap::Refuse`] refuses
//! the new event instead, so nothing is ever lost silently. Size the cap
//! ([`EpisodicConfig::per_agent_max`], up to
//! [`limits::EPISODES_PER_AGENT_MAX`]) for the history you mean to keep.

use std::collections::{BTreeMap, VecDeque};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::session::{validate_id, validate_json_object, Message};
use crate::core::time::{Millis, MILLIS_MAX};

#[cfg(test)]
mod tests;

/// The event type under which compacted conversation turns are archived.
pub const TURN_ARCHIVED: &str = "turn_archived";

/// One event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Episode {
    /// Caller-chosen (a ULID, typically).
    pub id: String,
    pub agent_id: String,
    /// The event type.
    pub kind: String,
    /// When it happened; orders the log and starts the TTL.
    pub at: Millis,
    #[serde(default)]
    #[serde(serialize_with = "crate::core::exact_json::map")]
    pub payload: Map<String, Value>,
    /// What came of it: a string or any JSON.
    #[serde(default)]
    #[serde(serialize_with = "crate::core::exact_json::option_value")]
    pub outcome: Option<Value>,
    /// Assigned by the log: breaks ties between events at the same `at`, in
    /// the order they were recorded.
    #[serde(default)]
    pub seq: u64,
}

impl Episode {
    /// An archived conversation turn: `payload` holds the session id and the
    /// message as the session stored it.
    pub fn archived_turn(id: String, agent_id: String, at: Millis, session_id: &str, message: &Message) -> Result<Episode> {
        let message = serde_json::to_value(message).map_err(|e| Error::Internal { detail: e.to_string() })?;
        let mut payload = Map::new();
        payload.insert("session_id".into(), Value::String(session_id.to_owned()));
        payload.insert("message".into(), message);
        Ok(Episode { id, agent_id, kind: TURN_ARCHIVED.into(), at, payload, outcome: None, seq: 0 })
    }

    /// Checks shape and size; returns the serialized bytes of payload and
    /// outcome, which count against [`limits::EPISODES_BYTES_MAX`].
    pub fn validate(&self) -> Result<usize> {
        validate_id("id", &self.id)?;
        validate_id("agent_id", &self.agent_id)?;
        if self.kind.is_empty() || self.kind.len() > limits::EPISODE_KIND_BYTES_MAX || self.kind.chars().any(char::is_control) {
            return Err(Error::invalid(
                "kind",
                format!("must be 1 to {} bytes without control characters", limits::EPISODE_KIND_BYTES_MAX),
            ));
        }
        if self.at > MILLIS_MAX {
            return Err(Error::invalid("at", "is after 9999-12-31"));
        }
        let mut bytes = validate_json_object("payload", &self.payload, limits::EPISODE_PAYLOAD_BYTES_MAX)?;
        if let Some(outcome) = &self.outcome {
            let mut wrapped = Map::new();
            wrapped.insert("outcome".into(), outcome.clone());
            bytes += validate_json_object("outcome", &wrapped, limits::EPISODE_OUTCOME_BYTES_MAX)?;
        }
        Ok(bytes)
    }
}

/// What [`EpisodicLog::record`] does when an agent is at its cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AtCap {
    /// Drop the agent's oldest events to make room (the count is returned).
    #[default]
    EvictOldest,
    /// Refuse the new event with `limit_exceeded`; nothing changes.
    Refuse,
}

/// The log's policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct EpisodicConfig {
    /// Events kept per agent, 1 to [`limits::EPISODES_PER_AGENT_MAX`].
    pub per_agent_max: usize,
    /// Events older than this (by `at`) are expired; `None` keeps them.
    pub ttl_seconds: Option<u64>,
    pub at_cap: AtCap,
}

impl Default for EpisodicConfig {
    fn default() -> Self {
        EpisodicConfig { per_agent_max: limits::EPISODES_PER_AGENT_DEFAULT, ttl_seconds: None, at_cap: AtCap::EvictOldest }
    }
}

impl EpisodicConfig {
    /// Checks the bounds.
    pub fn validate(&self) -> Result<()> {
        if self.per_agent_max == 0 || self.per_agent_max > limits::EPISODES_PER_AGENT_MAX {
            return Err(Error::invalid("per_agent_max", format!("must be between 1 and {}", limits::EPISODES_PER_AGENT_MAX)));
        }
        if let Some(ttl) = self.ttl_seconds {
            if ttl == 0 || ttl > limits::TTL_SECONDS_MAX {
                return Err(Error::invalid("ttl_seconds", format!("must be between 1 and {}", limits::TTL_SECONDS_MAX)));
            }
        }
        Ok(())
    }
}

/// The outcome of a [`EpisodicLog::record`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recorded {
    /// The sequence number the event was given.
    pub seq: u64,
    /// The agent's oldest events dropped to make room. When the new event
    /// is itself older than everything kept, it is the one dropped and this
    /// is 1.
    pub evicted: usize,
}

/// Counts over a time window ([`EpisodicLog::summarize_window`]).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct WindowSummary {
    pub total: u64,
    pub by_kind: BTreeMap<String, u64>,
    pub first_at: Option<Millis>,
    pub last_at: Option<Millis>,
}

/// The log. Serializes as its configuration plus the flat list of events;
/// loading rebuilds and re-validates everything else, so a corrupt snapshot
/// is refused rather than half-loaded.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(try_from = "LogData", into = "LogData")]
pub struct EpisodicLog {
    config: EpisodicConfig,
    /// Each agent's events ordered by `(at, seq)`, oldest first.
    agents: BTreeMap<String, VecDeque<Episode>>,
    len: usize,
    bytes: usize,
    next_seq: u64,
}

#[derive(Serialize, Deserialize)]
struct LogData {
    config: EpisodicConfig,
    episodes: Vec<Episode>,
    /// The next event's seq: kept, so numbering continues after every
    /// event has expired (absent in snapshots before it was kept).
    #[serde(default)]
    next_seq: u64,
}

impl From<EpisodicLog> for LogData {
    fn from(log: EpisodicLog) -> LogData {
        LogData { config: log.config, next_seq: log.next_seq, episodes: log.agents.into_values().flatten().collect() }
    }
}

impl TryFrom<LogData> for EpisodicLog {
    type Error = Error;

    fn try_from(data: LogData) -> Result<EpisodicLog> {
        let corrupt = |reason: String| Error::SnapshotCorrupt { reason: format!("episodic log: {reason}") };
        data.config.validate().map_err(|e| corrupt(e.to_string()))?;
        let mut log = EpisodicLog::new(data.config);
        log.next_seq = data.next_seq;
        if data.episodes.len() > limits::EPISODES_MAX {
            return Err(corrupt(format!("{} events, over {}", data.episodes.len(), limits::EPISODES_MAX)));
        }
        for e in data.episodes {
            let bytes = e.validate().map_err(|err| corrupt(err.to_string()))?;
            log.next_seq = log.next_seq.max(e.seq.saturating_add(1));
            log.insert(e, bytes);
        }
        if log.bytes > limits::EPISODES_BYTES_MAX || log.agents.values().any(|q| q.len() > log.config.per_agent_max) {
            return Err(corrupt("over its caps".into()));
        }
        Ok(log)
    }
}

impl EpisodicLog {
    /// An empty log. The configuration is not checked here; see
    /// [`EpisodicLog::configure`].
    pub fn new(config: EpisodicConfig) -> EpisodicLog {
        EpisodicLog { config, ..EpisodicLog::default() }
    }

    /// The current policy.
    pub fn config(&self) -> EpisodicConfig {
        self.config
    }

    /// Events held (expired ones included until [`EpisodicLog::expire`]).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the log holds no event.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Changes the policy. A lower cap evicts each agent's oldest events at
    /// once (whatever [`AtCap`] says, since the caller asked for it);
    /// returns how many.
    pub fn configure(&mut self, config: EpisodicConfig) -> Result<usize> {
        config.validate()?;
        self.config = config;
        let mut evicted = 0;
        for q in self.agents.values_mut() {
            while q.len() > config.per_agent_max {
                if let Some(e) = q.pop_front() {
                    self.bytes = self.bytes.saturating_sub(e.validate().unwrap_or(0));
                    evicted += 1;
                }
            }
        }
        self.len -= evicted;
        self.agents.retain(|_, q| !q.is_empty());
        Ok(evicted)
    }

    fn expired(&self, at: Millis, now: Millis) -> bool {
        self.config.ttl_seconds.is_some_and(|ttl| at.saturating_add(ttl.saturating_mul(1000)) <= now)
    }

    /// Records `episode` (its `seq` is assigned here). Refuses, changing
    /// nothing, an invalid event, one already expired at `now`, one that
    /// would pass the log's total caps, and, under [`AtCap::Refuse`], one
    /// for an agent at its cap.
    pub fn record(&mut self, mut episode: Episode, now: Millis) -> Result<Recorded> {
        let bytes = episode.validate()?;
        if self.expired(episode.at, now) {
            return Err(Error::invalid("at", "is already past the log's TTL"));
        }
        let agent_len = self.agents.get(&episode.agent_id).map_or(0, VecDeque::len);
        let at_cap = agent_len >= self.config.per_agent_max;
        if at_cap && self.config.at_cap == AtCap::Refuse {
            return Err(Error::LimitExceeded { what: format!("events of agent {:?}", episode.agent_id), limit: self.config.per_agent_max as u64 });
        }
        if !at_cap && self.len >= limits::EPISODES_MAX {
            return Err(Error::LimitExceeded { what: "events in the episodic log".into(), limit: limits::EPISODES_MAX as u64 });
        }
        if self.bytes.saturating_add(bytes) > limits::EPISODES_BYTES_MAX {
            return Err(Error::too_large("episodic log", self.bytes.saturating_add(bytes), limits::EPISODES_BYTES_MAX));
        }
        episode.seq = self.next_seq;
        self.next_seq += 1;
        let seq = episode.seq;
        let agent = episode.agent_id.clone();
        self.insert(episode, bytes);
        let mut evicted = 0;
        if let Some(q) = self.agents.get_mut(&agent) {
            while q.len() > self.config.per_agent_max {
                if let Some(e) = q.pop_front() {
                    self.bytes = self.bytes.saturating_sub(e.validate().unwrap_or(0));
                    evicted += 1;
                }
            }
        }
        self.len -= evicted;
        Ok(Recorded { seq, evicted })
    }

    fn insert(&mut self, episode: Episode, bytes: usize) {
        let q = self.agents.entry(episode.agent_id.clone()).or_default();
        let key = (episode.at, episode.seq);
        let pos = q.partition_point(|e| (e.at, e.seq) <= key);
        q.insert(pos, episode);
        self.len += 1;
        self.bytes += bytes;
    }

    /// Drops every event past the TTL at `now`; returns how many.
    pub fn expire(&mut self, now: Millis) -> usize {
        let Some(ttl) = self.config.ttl_seconds else { return 0 };
        let mut removed = 0;
        for q in self.agents.values_mut() {
            while q.front().is_some_and(|e| e.at.saturating_add(ttl.saturating_mul(1000)) <= now) {
                if let Some(e) = q.pop_front() {
                    self.bytes = self.bytes.saturating_sub(e.validate().unwrap_or(0));
                    removed += 1;
                }
            }
        }
        self.len -= removed;
        self.agents.retain(|_, q| !q.is_empty());
        removed
    }

    /// When the next event expires, for scheduling [`EpisodicLog::expire`]
    /// (a Durable Object alarm).
    pub fn next_expiry(&self) -> Option<Millis> {
        let ttl = self.config.ttl_seconds?;
        self.agents.values().filter_map(|q| q.front()).map(|e| e.at.saturating_add(ttl.saturating_mul(1000))).min()
    }

    /// Removes every event `belongs` says is a user's (the right to be
    /// forgotten); returns how many. A full scan: erasure is rare and must
    /// miss nothing.
    pub fn forget_where(&mut self, belongs: impl Fn(&Episode) -> bool) -> usize {
        let mut removed = 0;
        for q in self.agents.values_mut() {
            let before = q.len();
            let mut freed = 0;
            q.retain(|e| {
                let hit = belongs(e);
                if hit {
                    freed += e.validate().unwrap_or(0);
                }
                !hit
            });
            self.bytes = self.bytes.saturating_sub(freed);
            removed += before - q.len();
        }
        self.len -= removed;
        self.agents.retain(|_, q| !q.is_empty());
        removed
    }

    /// Removes every event of `agent_id`; returns how many.
    pub fn forget_agent(&mut self, agent_id: &str) -> usize {
        let Some(q) = self.agents.remove(agent_id) else { return 0 };
        for e in &q {
            self.bytes = self.bytes.saturating_sub(e.validate().unwrap_or(0));
        }
        self.len -= q.len();
        q.len()
    }

    /// The newest `n` (at most [`limits::EPISODES_RECENT_MAX`]) live events
    /// of `agent_id` (every agent when `None`), optionally of one `kind`,
    /// newest first. Events at the same time come in reverse recording
    /// order.
    pub fn recent(&self, agent_id: Option<&str>, n: usize, kind: Option<&str>, now: Millis) -> Vec<&Episode> {
        let n = n.min(limits::EPISODES_RECENT_MAX);
        let mut out: Vec<&Episode> = Vec::new();
        if n == 0 {
            return out;
        }
        let queues: Vec<&VecDeque<Episode>> = match agent_id {
            Some(a) => self.agents.get(a).into_iter().collect(),
            None => self.agents.values().collect(),
        };
        for q in queues {
            let newest = q
                .iter()
                .rev()
                .take_while(|e| !self.expired(e.at, now))
                .filter(|e| kind.is_none_or(|k| e.kind == k))
                .take(n);
            out.extend(newest);
        }
        out.sort_by_key(|e| std::cmp::Reverse((e.at, e.seq)));
        out.truncate(n);
        out
    }

    /// Live events with `since <= at <= now` of `agent_id` (every agent when
    /// `None`): the total, the count of each kind, and the first and last
    /// times.
    pub fn summarize_window(&self, agent_id: Option<&str>, since: Millis, now: Millis) -> WindowSummary {
        let mut s = WindowSummary::default();
        let queues: Vec<&VecDeque<Episode>> = match agent_id {
            Some(a) => self.agents.get(a).into_iter().collect(),
            None => self.agents.values().collect(),
        };
        for q in queues {
            let start = q.partition_point(|e| e.at < since);
            for e in q.range(start..).take_while(|e| e.at <= now).filter(|e| !self.expired(e.at, now)) {
                s.total += 1;
                *s.by_kind.entry(e.kind.clone()).or_insert(0) += 1;
                s.first_at = Some(s.first_at.map_or(e.at, |f| f.min(e.at)));
                s.last_at = Some(s.last_at.map_or(e.at, |l| l.max(e.at)));
            }
        }
        s
    }
}
