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
use crate::core::error::{Error, Result};
use crate::core::ledger::{Ledger, LedgerApplied, LedgerOp, LedgerSnapshot};
use crate::core::limits;
use crate::core::migrate;
use crate::core::session::{validate_id, validate_messages, Message, Session};
use crate::core::time::Millis;

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
}

/// What an applied op did.
#[derive(Debug, Clone, PartialEq)]
pub enum Applied {
    Session(Session),
    /// `SessionCreate` found a live session and changed nothing.
    Existing(Session),
    Deleted { session_id: String },
    Expired { session_ids: Vec<String> },
    Ledger(LedgerApplied),
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

/// The body of a schema-v1 snapshot.
#[derive(Serialize, Deserialize)]
struct SnapshotV1 {
    last_seq: u64,
    sessions: Vec<Session>,
    /// Added within schema v1: absent in older v1 snapshots, which load
    /// with an empty ledger.
    #[serde(default)]
    ledger: LedgerSnapshot,
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
                if let Some(prev) = self.sessions.get(&session.session_id).filter(|s| !s.is_expired(now)) {
                    next.created_at = prev.created_at;
                } else {
                    next.created_at = now;
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
                let mut next = prev.clone();
                next.messages.extend(messages.iter().cloned());
                validate_messages(&next.messages)?;
                next.touch(now);
                self.insert(next.clone());
                Applied::Session(next)
            }
            Op::SessionDelete { session_id } => {
                if self.live(session_id, now).is_none() {
                    return Err(Error::not_found("session", session_id));
                }
                self.remove(session_id);
                Applied::Deleted { session_id: session_id.clone() }
            }
            Op::Ledger(op) => Applied::Ledger(self.ledger.apply(op, now)?),
            Op::SessionsExpire => {
                let due: Vec<(Millis, String)> = self.expiry.iter().take_while(|(at, _)| *at <= now).cloned().collect();
                let mut session_ids = Vec::with_capacity(due.len());
                for (_, id) in due {
                    self.remove(&id);
                    session_ids.push(id);
                }
                Applied::Expired { session_ids }
            }
        };
        self.last_seq += 1;
        Ok(applied)
    }

    fn insert(&mut self, session: Session) {
        self.remove(&session.session_id);
        if let Some(at) = session.expires_at {
            self.expiry.insert((at, session.session_id.clone()));
        }
        self.sessions.insert(session.session_id.clone(), session);
    }

    fn remove(&mut self, session_id: &str) {
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
        match (sessions, self.ledger.next_expiry()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Whether a session TTL has run out at `now` and awaits a sweep.
    pub fn sessions_due(&self, now: Millis) -> bool {
        self.expiry.first().is_some_and(|(at, _)| *at <= now)
    }

    /// The tenant's ledger, for queries.
    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    /// Number of sessions held, expired or not.
    pub fn session_count(&self) -> usize {
        self.sessions.len()
    }

    /// Serializes the whole state as a snapshot envelope (header + body).
    pub fn encode_snapshot(&self) -> Result<Vec<u8>> {
        let body = SnapshotV1 { last_seq: self.last_seq, sessions: self.sessions.values().cloned().collect(), ledger: self.ledger.to_snapshot() };
        let bytes = rmp_serde::to_vec_named(&body).map_err(|e| Error::Internal { detail: format!("encode snapshot: {e}") })?;
        if bytes.len() > limits::SNAPSHOT_BYTES_MAX {
            return Err(Error::too_large("snapshot", bytes.len(), limits::SNAPSHOT_BYTES_MAX));
        }
        Ok(codec::encode_snapshot(SCHEMA_VERSION, &bytes))
    }

    /// Rebuilds an engine from a snapshot envelope, migrating older schemas
    /// and refusing newer ones. Every session is validated again.
    pub fn decode_snapshot(bytes: &[u8]) -> Result<Engine> {
        let (schema, body) = codec::decode_snapshot(bytes)?;
        let v1: SnapshotV1 = match schema {
            SCHEMA_VERSION => rmp_serde::from_slice(body).map_err(|e| Error::SnapshotCorrupt { reason: format!("body: {e}") })?,
            older => {
                let (last_seq, sessions) = migrate::snapshot_to_current(older, body)?;
                SnapshotV1 { last_seq, sessions, ledger: LedgerSnapshot::default() }
            }
        };
        if v1.sessions.len() > limits::SESSIONS_MAX {
            return Err(Error::SnapshotCorrupt { reason: "more sessions than the limit".into() });
        }
        let ledger = Ledger::from_snapshot(v1.ledger)?;
        let mut engine = Engine { last_seq: v1.last_seq, ledger, ..Engine::default() };
        for s in v1.sessions {
            s.validate().map_err(|e| Error::SnapshotCorrupt { reason: format!("session {:?}: {e}", s.session_id) })?;
            if engine.sessions.contains_key(&s.session_id) {
                return Err(Error::SnapshotCorrupt { reason: format!("duplicate session {:?}", s.session_id) });
            }
            engine.insert(s);
        }
        Ok(engine)
    }
}

/// Encodes a log record for sequence `seq`.
pub fn encode_log_entry(seq: u64, entry: &LogEntry) -> Result<Vec<u8>> {
    let body = rmp_serde::to_vec_named(entry).map_err(|e| Error::Internal { detail: format!("encode op: {e}") })?;
    codec::encode_log_record(SCHEMA_VERSION, seq, &body)
}

/// Decodes the log record stored under `seq`, migrating older schemas.
pub fn decode_log_entry(seq: u64, bytes: &[u8]) -> Result<LogEntry> {
    let (schema, body) = codec::decode_log_record(seq, bytes)?;
    match schema {
        SCHEMA_VERSION => rmp_serde::from_slice(body).map_err(|e| Error::LogCorrupt { seq, reason: format!("body: {e}") }),
        older => migrate::log_entry_to_current(older, seq, body),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(id: &str, ttl: Option<u64>) -> Session {
        Session { ttl_seconds: ttl, ..Session::new(id.into(), 0) }
    }

    fn msg(id: &str, content: &str) -> Message {
        Message { id: id.into(), role: "user".into(), content: content.into(), created_at: 5, persisted_at: None }
    }

    #[test]
    fn put_append_get_delete() {
        let mut e = Engine::new();
        e.apply(&Op::SessionPut { session: session("a", None) }, 100).unwrap();
        let Applied::Session(s) = e.apply(&Op::SessionAppend { session_id: "a".into(), messages: vec![msg("m1", "hi")] }, 200).unwrap() else {
            panic!("expected a session")
        };
        assert_eq!((s.created_at, s.updated_at, s.messages.len()), (100, 200, 1));
        assert_eq!(e.session("a", 300).unwrap().messages[0].content, "hi");
        e.apply(&Op::SessionDelete { session_id: "a".into() }, 400).unwrap();
        assert!(e.session("a", 400).is_none());
        assert_eq!(e.last_seq(), 3);
    }

    #[test]
    fn failed_ops_change_nothing() {
        let mut e = Engine::new();
        e.apply(&Op::SessionPut { session: session("a", None) }, 1).unwrap();
        e.apply(&Op::SessionAppend { session_id: "a".into(), messages: vec![msg("m1", "x")] }, 2).unwrap();
        let before = e.clone();
        let bad = [
            Op::SessionAppend { session_id: "missing".into(), messages: vec![] },
            Op::SessionAppend { session_id: "a".into(), messages: vec![msg("m1", "duplicate id")] },
            Op::SessionDelete { session_id: "missing".into() },
            Op::SessionPut { session: session("", None) },
        ];
        for op in bad {
            assert!(e.apply(&op, 3).is_err());
            assert_eq!(e, before, "{op:?} changed the state");
        }
    }

    #[test]
    fn create_is_get_or_create() {
        let mut e = Engine::new();
        let mut s = session("c", None);
        s.context = Some("first".into());
        assert!(matches!(e.apply(&Op::SessionCreate { session: s.clone() }, 1).unwrap(), Applied::Session(_)));
        s.context = Some("second".into());
        let Applied::Existing(got) = e.apply(&Op::SessionCreate { session: s }, 2).unwrap() else { panic!() };
        assert_eq!(got.context.as_deref(), Some("first"));
        assert_eq!(e.last_seq(), 2, "a no-op create still takes a sequence number, so replay stays aligned");
    }

    #[test]
    fn ttl_hides_then_sweeps() {
        let mut e = Engine::new();
        e.apply(&Op::SessionPut { session: session("t", Some(10)) }, 1_000).unwrap();
        e.apply(&Op::SessionPut { session: session("d", None) }, 1_000).unwrap();
        assert_eq!(e.next_expiry(), Some(11_000));
        assert!(e.session("t", 10_999).is_some());
        assert!(e.session("t", 11_000).is_none());
        assert_eq!(e.list_sessions(11_000, None, 0, 10).sessions, vec!["d"]);
        // A write refreshes the TTL.
        let mut e2 = e.clone();
        e2.apply(&Op::SessionAppend { session_id: "t".into(), messages: vec![msg("m", "x")] }, 5_000).unwrap();
        assert_eq!(e2.next_expiry(), Some(15_000));
        let Applied::Expired { session_ids } = e.apply(&Op::SessionsExpire, 11_000).unwrap() else { panic!() };
        assert_eq!(session_ids, vec!["t"]);
        assert_eq!((e.session_count(), e.next_expiry()), (1, None));
    }

    #[test]
    fn list_pages_and_filters() {
        let mut e = Engine::new();
        for i in 0..25 {
            let mut s = session(&format!("s{i:02}"), None);
            s.user_id = Some(if i % 2 == 0 { "even" } else { "odd" }.into());
            e.apply(&Op::SessionPut { session: s }, 1).unwrap();
        }
        let p = e.list_sessions(2, None, 20, 10);
        assert_eq!((p.sessions.len(), p.total, p.sessions[0].as_str()), (5, 25, "s20"));
        let p = e.list_sessions(2, Some("odd"), 0, 100);
        assert_eq!((p.sessions.len(), p.total), (12, 12));
        assert_eq!(e.list_sessions(2, None, 0, 1_000_000).sessions.len(), 25);
    }

    #[test]
    fn snapshot_round_trip_is_exact() {
        let mut e = Engine::new();
        let mut s = session("a", Some(60));
        s.data = Some(serde_json::json!({"cart": [1, 2.5, "x"], "n": {"deep": true}}).as_object().unwrap().clone());
        s.context = Some("summary".into());
        e.apply(&Op::SessionPut { session: s }, 7).unwrap();
        e.apply(&Op::SessionAppend { session_id: "a".into(), messages: vec![msg("m", "héllo 🌍")] }, 8).unwrap();
        let back = Engine::decode_snapshot(&e.encode_snapshot().unwrap()).unwrap();
        assert_eq!(back, e);
    }

    #[test]
    fn ledger_ops_round_trip_through_snapshot_and_log() {
        use crate::core::ledger::{LedgerOp, TransferRequest};
        let mut e = Engine::new();
        let ops = [
            LedgerOp::CreateAsset { code: "USDC".into(), scale: 6 },
            LedgerOp::CreateAccount { id: "a".into(), asset: "USDC".into(), flags: Default::default(), max_transfer: None },
            LedgerOp::CreateAccount { id: "b".into(), asset: "USDC".into(), flags: Default::default(), max_transfer: Some("50".into()) },
            LedgerOp::CreateTransfers {
                transfers: vec![TransferRequest {
                    id: "t".into(),
                    debit_account: "a".into(),
                    credit_account: "b".into(),
                    // Past u64 in minor units: exercises u128 in MessagePack.
                    amount: "99999999999999999999.5".into(),
                    pending: true,
                    timeout_seconds: Some(60),
                    linked: false,
                    metadata: serde_json::json!({"memo": "escrow"}).as_object().cloned(),
                }],
            },
        ];
        for (i, op) in ops.iter().enumerate() {
            let op = Op::Ledger(op.clone());
            let entry = LogEntry { now_ms: i as u64, op: op.clone() };
            assert_eq!(decode_log_entry(1, &encode_log_entry(1, &entry).unwrap()).unwrap(), entry);
            e.apply(&op, i as u64).unwrap();
        }
        assert_eq!(e.ledger().account("b").unwrap().credits_pending, 99_999_999_999_999_999_999_500_000);
        assert_eq!(e.next_expiry(), Some(3 + 60_000));
        let back = Engine::decode_snapshot(&e.encode_snapshot().unwrap()).unwrap();
        assert_eq!(back, e);
        let before = e.clone();
        let bad = Op::Ledger(LedgerOp::Post { id: "t".into(), amount: Some("1.0000001".into()) });
        assert_eq!(e.apply(&bad, 10).unwrap_err().code(), "invalid_input");
        let bad = Op::Ledger(LedgerOp::Void { id: "missing".into() });
        assert_eq!(e.apply(&bad, 10).unwrap_err().code(), "not_found");
        assert_eq!(e, before);
        e.apply(&Op::Ledger(LedgerOp::Void { id: "t".into() }), 11).unwrap();
        let again = e.apply(&Op::Ledger(LedgerOp::Void { id: "t".into() }), 12).unwrap_err();
        assert_eq!(again.code(), "pending_transfer_already_voided");
    }

    #[test]
    fn log_entry_round_trip() {
        let entry = LogEntry { now_ms: 9, op: Op::SessionAppend { session_id: "a".into(), messages: vec![msg("m", "x")] } };
        let rec = encode_log_entry(4, &entry).unwrap();
        assert_eq!(decode_log_entry(4, &rec).unwrap(), entry);
    }
}
