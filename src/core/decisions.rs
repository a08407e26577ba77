//! The per-session decision log: what an agent observed, reasoned, decided
//! and did, in order, so an operator can watch it live and audit it later.
//!
//! A log belongs to its session: it shares the session's TTL (it is dropped
//! with the session when that expires or is deleted) and is append-only in
//! between. Appending is O(1) whatever the log's length; reads page by
//! `since` (a per-session sequence number, never reused).

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::time::Millis;

/// What an entry records. A closed set: an unknown kind is refused with
/// `unknown_kind` (HTTP 400), so filters by kind never miss a misspelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecisionKind {
    /// Something the agent saw (a tool result, a message, a price).
    Observation,
    /// A step of its reasoning.
    Reasoning,
    /// A choice it made.
    Decision,
    /// Something it did (a tool call, a transfer).
    Action,
    /// An offer it made to a counterpart.
    Offer,
    /// Something that went wrong.
    Error,
}

impl DecisionKind {
    /// Every kind, in declaration order.
    pub const ALL: [DecisionKind; 6] = [
        DecisionKind::Observation,
        DecisionKind::Reasoning,
        DecisionKind::Decision,
        DecisionKind::Action,
        DecisionKind::Offer,
        DecisionKind::Error,
    ];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            DecisionKind::Observation => "observation",
            DecisionKind::Reasoning => "reasoning",
            DecisionKind::Decision => "decision",
            DecisionKind::Action => "action",
            DecisionKind::Offer => "offer",
            DecisionKind::Error => "error",
        }
    }

    /// Parses a wire name; anything else is `unknown_kind`.
    pub fn parse(field: &str, s: &str) -> Result<DecisionKind> {
        DecisionKind::ALL.iter().copied().find(|k| k.as_str() == s).ok_or_else(|| Error::UnknownKind {
            field: field.to_owned(),
            value: s.chars().take(64).collect(),
            allowed: DecisionKind::ALL.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(", "),
        })
    }
}

/// What an entry refers to elsewhere: a tool call, a ledger transfer,
/// long-term memories.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecisionRefs {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transfer_id: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub memory_ids: Vec<String>,
}

/// One entry, as stored and as served.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DecisionEntry {
    /// 1, 2, 3... within the session; assigned by the log.
    pub seq: u64,
    pub ts: Millis,
    pub kind: DecisionKind,
    pub text: String,
    #[serde(default)]
    #[serde(serialize_with = "crate::core::exact_json::option_map")]
    pub data: Option<Map<String, Value>>,
    #[serde(default)]
    pub refs: Option<DecisionRefs>,
}

impl DecisionEntry {
    /// Checks an entry as it enters: text, data and refs within their
    /// limits. `seq` and `ts` are the log's to assign. Answers the bytes
    /// the entry weighs, for the per-session byte cap.
    pub fn validate(&self) -> Result<usize> {
        if self.text.trim().is_empty() {
            return Err(Error::invalid("text", "must not be empty"));
        }
        if self.text.len() > limits::DECISION_TEXT_BYTES_MAX {
            return Err(Error::too_large("text", self.text.len(), limits::DECISION_TEXT_BYTES_MAX));
        }
        let data_bytes = match &self.data {
            None => 0,
            Some(data) => serde_json::to_vec(data).map_err(|e| Error::invalid("data", e.to_string()))?.len(),
        };
        if data_bytes > limits::DECISION_DATA_BYTES_MAX {
            return Err(Error::too_large("data", data_bytes, limits::DECISION_DATA_BYTES_MAX));
        }
        if let Some(refs) = &self.refs {
            for (field, id) in [("refs.tool_call_id", &refs.tool_call_id), ("refs.transfer_id", &refs.transfer_id)] {
                if let Some(id) = id {
                    crate::core::session::validate_id(field, id)?;
                }
            }
            if refs.memory_ids.len() > limits::DECISION_REFS_MAX {
                return Err(Error::LimitExceeded { what: "refs.memory_ids".into(), limit: limits::DECISION_REFS_MAX as u64 });
            }
            for id in &refs.memory_ids {
                crate::core::session::validate_id("refs.memory_ids", id)?;
            }
        }
        let refs = self.refs.as_ref().map_or(0, |r| {
            r.tool_call_id.as_ref().map_or(0, String::len) + r.transfer_id.as_ref().map_or(0, String::len) + r.memory_ids.iter().map(String::len).sum::<usize>()
        });
        Ok(self.text.len() + data_bytes + refs + ENTRY_OVERHEAD_BYTES)
    }
}

/// What an entry weighs beyond its text, data and refs (seq, time, kind).
const ENTRY_OVERHEAD_BYTES: usize = 32;

/// One session's log.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DecisionLog {
    entries: VecDeque<DecisionEntry>,
    /// The seq of the last entry ever appended (0 = none).
    last_seq: u64,
    /// Sum of the entries' weights.
    bytes: usize,
}

impl DecisionLog {
    /// Appends `entry` at `now`; returns it as stored. Refused, with the log
    /// unchanged, past [`limits::DECISIONS_PER_SESSION_MAX`] entries or
    /// [`limits::DECISION_LOG_BYTES_MAX`] bytes: the log is an audit trail,
    /// so nothing is silently dropped to make room.
    pub fn append(&mut self, entry: &DecisionEntry, now: Millis) -> Result<DecisionEntry> {
        let weight = entry.validate()?;
        if self.entries.len() >= limits::DECISIONS_PER_SESSION_MAX {
            return Err(Error::LimitExceeded { what: "decision log entries of a session".into(), limit: limits::DECISIONS_PER_SESSION_MAX as u64 });
        }
        if self.bytes + weight > limits::DECISION_LOG_BYTES_MAX {
            return Err(Error::too_large("decision log of a session", self.bytes + weight, limits::DECISION_LOG_BYTES_MAX));
        }
        let stored = DecisionEntry { seq: self.last_seq + 1, ts: now, ..entry.clone() };
        self.last_seq = stored.seq;
        self.bytes += weight;
        self.entries.push_back(stored.clone());
        Ok(stored)
    }

    /// The seq of the last entry appended.
    pub fn last_seq(&self) -> u64 {
        self.last_seq
    }

    /// Entries after `since` whose kind `kinds` admits (all when empty),
    /// oldest first, at most `limit`. Entries are contiguous in seq, so the
    /// first one after `since` is found by arithmetic, not a scan.
    pub fn page(&self, since: u64, kinds: &[DecisionKind], limit: usize) -> Vec<&DecisionEntry> {
        let first = self.entries.front().map_or(1, |e| e.seq);
        let skip = since.saturating_sub(first - 1) as usize;
        self.entries.iter().skip(skip).filter(|e| kinds.is_empty() || kinds.contains(&e.kind)).take(limit).collect()
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the log holds no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(kind: DecisionKind, text: &str) -> DecisionEntry {
        DecisionEntry { seq: 0, ts: 0, kind, text: text.into(), data: None, refs: None }
    }

    #[test]
    fn appends_in_order_and_pages_by_since_and_kind() {
        let mut log = DecisionLog::default();
        for i in 0..10 {
            let kind = if i % 2 == 0 { DecisionKind::Reasoning } else { DecisionKind::Action };
            let e = log.append(&entry(kind, &format!("step {i}")), 100 + i).unwrap();
            assert_eq!(e.seq, i + 1);
            assert_eq!(e.ts, 100 + i);
        }
        let all: Vec<u64> = log.page(0, &[], 100).iter().map(|e| e.seq).collect();
        assert_eq!(all, (1..=10).collect::<Vec<_>>());
        let after: Vec<u64> = log.page(7, &[], 100).iter().map(|e| e.seq).collect();
        assert_eq!(after, vec![8, 9, 10]);
        let actions: Vec<u64> = log.page(3, &[DecisionKind::Action], 2).iter().map(|e| e.seq).collect();
        assert_eq!(actions, vec![4, 6]);
        assert!(log.page(10, &[], 10).is_empty());
        assert!(log.page(u64::MAX, &[], 10).is_empty());
    }

    #[test]
    fn refuses_bad_entries_and_changes_nothing() {
        let mut log = DecisionLog::default();
        assert_eq!(log.append(&entry(DecisionKind::Decision, "  "), 1).unwrap_err().code(), "invalid_input");
        let big = "x".repeat(limits::DECISION_TEXT_BYTES_MAX + 1);
        assert_eq!(log.append(&entry(DecisionKind::Decision, &big), 1).unwrap_err().code(), "payload_too_large");
        let mut e = entry(DecisionKind::Action, "pay");
        e.refs = Some(DecisionRefs { memory_ids: vec!["a/../b".into()], ..Default::default() });
        assert_eq!(log.append(&e, 1).unwrap_err().code(), "invalid_input");
        assert!(log.is_empty());
        assert_eq!(log.last_seq(), 0);
        assert_eq!(DecisionKind::parse("kind", "guess").unwrap_err().code(), "unknown_kind");
    }

    #[test]
    fn the_session_cap_refuses_rather_than_drops() {
        let mut log = DecisionLog::default();
        let text = "y".repeat(limits::DECISION_TEXT_BYTES_MAX);
        let mut n = 0;
        let err = loop {
            match log.append(&entry(DecisionKind::Observation, &text), n) {
                Ok(_) => n += 1,
                Err(e) => break e,
            }
        };
        assert_eq!(err.code(), "payload_too_large");
        assert_eq!(log.len() as u64, n);
        assert_eq!(log.page(0, &[], 1)[0].seq, 1, "nothing was dropped to make room");
    }
}
