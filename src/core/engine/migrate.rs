//! Migrations from every older schema to [`crate::core::codec::SCHEMA_VERSION`].
//!
//! Each older schema keeps its types here, frozen, so that data written by
//! any released edgemem still loads. A migration is a pure function from the
//! old body to the current types; it never guesses: data it cannot convert
//! is reported as corrupt.
//!
//! Schema history:
//! * **v0**, the prototype: a session was keyed `id`, its turns were
//!   `(role, content)` pairs with no ids or times, and `data` was kept as
//!   JSON text.
//! * **v1**: AMS-shaped sessions ([`Session`]): message ids (ULIDs) and
//!   timestamps, `data` as a JSON object, `context`, `memories`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::core::engine::{LogEntry, Op};
use crate::core::error::{Error, Result};
use crate::core::ids::ulid;
use crate::core::session::{Message, Session};
use crate::core::time::Millis;

/// A v0 session, frozen.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SessionV0 {
    pub id: String,
    pub messages: Vec<(String, String)>,
    pub data: Option<String>,
    pub ttl_seconds: Option<u64>,
    pub created_ms: Millis,
    pub updated_ms: Millis,
}

/// A v0 snapshot body, frozen.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SnapshotV0 {
    pub last_seq: u64,
    pub sessions: Vec<SessionV0>,
}

/// A v0 op, frozen.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum OpV0 {
    Put(SessionV0),
    Delete(String),
}

/// A v0 log record body, frozen.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LogEntryV0 {
    pub now_ms: Millis,
    pub op: OpV0,
}

fn session_v0_to_v1(old: SessionV0) -> std::result::Result<Session, String> {
    let data = match old.data {
        None => None,
        Some(text) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) => Some(map),
            Ok(Value::Null) => None,
            Ok(_) => return Err(format!("session {:?}: v0 data is not a JSON object", old.id)),
            Err(e) => return Err(format!("session {:?}: v0 data is not JSON: {e}", old.id)),
        },
    };
    // v0 turns had no ids: derive stable, unique, time-ordered ULIDs from the
    // session's creation time and the turn's index.
    let messages = old
        .messages
        .into_iter()
        .enumerate()
        .map(|(i, (role, content))| {
            let mut random = [0u8; 10];
            random[2..].copy_from_slice(&(i as u64).to_be_bytes());
            Message { id: ulid(old.created_ms, random), role, content, created_at: old.created_ms, persisted_at: None, tokens: Default::default() }
        })
        .collect();
    let mut s = Session::new(old.id, old.created_ms);
    s.messages = messages;
    s.data = data;
    s.ttl_seconds = old.ttl_seconds;
    s.touch(old.updated_ms);
    Ok(s)
}

/// Migrates a snapshot body of schema `schema` (older than current) into the
/// current session list and its last sequence number.
pub fn snapshot_to_current(schema: u32, body: &[u8]) -> Result<(u64, Vec<Session>)> {
    let corrupt = |reason: String| Error::SnapshotCorrupt { reason: format!("v{schema} body: {reason}") };
    match schema {
        0 => {
            let v0: SnapshotV0 = crate::core::msgpack::from_slice(body).map_err(|e| corrupt(e.to_string()))?;
            let sessions = v0.sessions.into_iter().map(session_v0_to_v1).collect::<std::result::Result<Vec<_>, _>>().map_err(corrupt)?;
            Ok((v0.last_seq, sessions))
        }
        other => Err(corrupt(format!("no migration from schema {other}"))),
    }
}

/// Migrates one log record body of an older schema.
pub fn log_entry_to_current(schema: u32, seq: u64, body: &[u8]) -> Result<LogEntry> {
    let corrupt = |reason: String| Error::LogCorrupt { seq, reason: format!("v{schema} body: {reason}") };
    match schema {
        0 => {
            let v0: LogEntryV0 = crate::core::msgpack::from_slice(body).map_err(|e| corrupt(e.to_string()))?;
            let op = match v0.op {
                OpV0::Put(s) => Op::SessionPut { session: session_v0_to_v1(s).map_err(corrupt)? },
                OpV0::Delete(id) => Op::SessionDelete { session_id: id },
            };
            Ok(LogEntry { now_ms: v0.now_ms, op })
        }
        other => Err(corrupt(format!("no migration from schema {other}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::codec::{encode_log_record, encode_snapshot};
    use crate::core::engine::{decode_log_entry, Engine};

    fn v0_session() -> SessionV0 {
        SessionV0 {
            id: "legacy".into(),
            messages: vec![("user".into(), "hello".into()), ("assistant".into(), "hi there".into())],
            data: Some(r#"{"cart":["apple"],"budget":"12.50"}"#.into()),
            ttl_seconds: Some(3600),
            created_ms: 1_000,
            updated_ms: 2_000,
        }
    }

    #[test]
    fn v0_snapshot_loads_as_v1() {
        let body = rmp_serde::to_vec_named(&SnapshotV0 { last_seq: 7, sessions: vec![v0_session()] }).unwrap();
        let engine = Engine::decode_snapshot(&encode_snapshot(0, &body)).unwrap();
        assert_eq!(engine.last_seq(), 7);
        let s = engine.session("legacy", 2_500).unwrap();
        assert_eq!(s.messages.len(), 2);
        assert_eq!((s.messages[1].role.as_str(), s.messages[1].content.as_str()), ("assistant", "hi there"));
        assert_ne!(s.messages[0].id, s.messages[1].id);
        assert!(s.messages[0].id < s.messages[1].id, "ids keep turn order");
        assert_eq!(s.data.as_ref().unwrap()["budget"], "12.50");
        assert_eq!((s.created_at, s.updated_at, s.expires_at), (1_000, 2_000, Some(3_602_000)));
        // Migration is deterministic: the same v0 bytes give the same v1 state.
        assert_eq!(Engine::decode_snapshot(&encode_snapshot(0, &body)).unwrap(), engine);
        // And the migrated state re-encodes as current schema.
        let reencoded = Engine::decode_snapshot(&engine.encode_snapshot().unwrap()).unwrap();
        assert_eq!(reencoded, engine);
    }

    #[test]
    fn v0_log_records_migrate() {
        let body = rmp_serde::to_vec_named(&LogEntryV0 { now_ms: 5, op: OpV0::Put(v0_session()) }).unwrap();
        let entry = decode_log_entry(3, &encode_log_record(0, 3, &body).unwrap()).unwrap();
        let Op::SessionPut { session } = entry.op else { panic!("expected put") };
        assert_eq!(session.session_id, "legacy");
        let body = rmp_serde::to_vec_named(&LogEntryV0 { now_ms: 6, op: OpV0::Delete("legacy".into()) }).unwrap();
        let entry = decode_log_entry(4, &encode_log_record(0, 4, &body).unwrap()).unwrap();
        assert_eq!(entry.op, Op::SessionDelete { session_id: "legacy".into() });
    }

    #[test]
    fn v0_with_bad_data_is_corrupt_not_a_panic() {
        let mut s = v0_session();
        s.data = Some("[1,2,3]".into());
        let body = rmp_serde::to_vec_named(&SnapshotV0 { last_seq: 1, sessions: vec![s] }).unwrap();
        assert_eq!(Engine::decode_snapshot(&encode_snapshot(0, &body)).unwrap_err().code(), "snapshot_corrupt");
        let garbage = encode_snapshot(0, b"\xc1\xc1 not msgpack");
        assert_eq!(Engine::decode_snapshot(&garbage).unwrap_err().code(), "snapshot_corrupt");
    }
}
