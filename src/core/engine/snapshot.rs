//! Snapshots and log records of an engine: the schema-v1 snapshot body
//! (every field added within v1 comes last, with a serde default, so older
//! v1 snapshots load), and the positional log-record body.

use super::*;

/// The body of a schema-v1 snapshot.
#[derive(Serialize, Deserialize)]
pub(super) struct SnapshotV1 {
    pub(super) last_seq: u64,
    pub(super) sessions: Vec<Session>,
    /// Added within schema v1: absent in older v1 snapshots, which load
    /// with an empty ledger.
    #[serde(default)]
    pub(super) ledger: LedgerSnapshot,
    /// Added within schema v1 (history issue), default empty.
    #[serde(default)]
    pub(super) history: HistoryState,
    /// Added within schema v1 (long-term memory issue), default empty.
    #[serde(default)]
    pub(super) longterm: LongTermSnapshot,
    /// Added within schema v1 (long-term memory issue), default empty.
    #[serde(default)]
    pub(super) episodes: EpisodicLog,
    /// Added within schema v1 (issue 11), default: the seed's TTL table.
    #[serde(default)]
    pub(super) services: ServiceCache,
    /// Added within schema v1 (issue 11), default empty.
    #[serde(default)]
    pub(super) agent_state: AgentState,
    /// Added within schema v1 (issue 13), default empty.
    #[serde(default)]
    pub(super) decisions: BTreeMap<String, DecisionLog>,
    /// Added within schema v1 (issue 13), default: the default policy.
    #[serde(default)]
    pub(super) privacy: Privacy,
    /// Added within schema v1 (issue 14), default: no pass has committed.
    #[serde(default)]
    pub(super) extraction: BTreeMap<String, Watermark>,
    /// Added within schema v1 (issue 14), default: no view, no task.
    #[serde(default)]
    pub(super) summary_views: SummaryViews,
    /// Added within schema v1 (issue 21), default: no split moved state in.
    #[serde(default)]
    pub(super) moves_in: BTreeMap<u64, u64>,
    /// Added within schema v1 (issue 21), default: no shard relayed.
    #[serde(default)]
    pub(super) feed_relay: crate::core::feed::relay::RelayMarks,
}

/// [`SnapshotV1`] borrowed from a live engine: the same bytes, fewer copies
/// (a test compares them).
#[derive(Serialize)]
struct SnapshotV1Ref<'a> {
    last_seq: u64,
    sessions: Vec<&'a Session>,
    ledger: crate::core::ledger::LedgerSnapshotRef<'a>,
    history: &'a HistoryState,
    longterm: LongTermSnapshot,
    episodes: &'a EpisodicLog,
    services: &'a ServiceCache,
    agent_state: &'a AgentState,
    decisions: &'a BTreeMap<String, DecisionLog>,
    privacy: &'a Privacy,
    extraction: &'a BTreeMap<String, Watermark>,
    summary_views: &'a SummaryViews,
    moves_in: &'a BTreeMap<u64, u64>,
    feed_relay: &'a crate::core::feed::relay::RelayMarks,
}

impl Engine {
    /// Serializes the whole state as a snapshot envelope (header + body).
    pub fn encode_snapshot(&self) -> Result<Vec<u8>> {
        let body = SnapshotV1Ref {
            last_seq: self.last_seq,
            sessions: self.sessions.values().collect(),
            ledger: self.ledger.snapshot_ref(),
            history: &self.history,
            longterm: self.longterm.to_snapshot(),
            episodes: &self.episodes,
            services: &self.services,
            agent_state: &self.agent_state,
            decisions: &self.decisions,
            privacy: &self.privacy,
            extraction: &self.extraction,
            summary_views: &self.summary_views,
            moves_in: &self.moves_in,
            feed_relay: &self.feed_relay,
        };
        // Positional, like log records: structs as arrays, no field names
        // (the ledger's transfers were 232 bytes each with names). A
        // snapshot written with names still loads: the reader takes a struct
        // from a map or an array.
        let bytes = rmp_serde::to_vec(&body).map_err(|e| Error::Internal { detail: format!("encode snapshot: {e}") })?;
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
            SCHEMA_VERSION => crate::core::msgpack::from_slice(body).map_err(|e| Error::SnapshotCorrupt { reason: format!("body: {e}") })?,
            older => {
                let (last_seq, sessions) = migrate::snapshot_to_current(older, body)?;
                SnapshotV1 { last_seq, sessions, ledger: LedgerSnapshot::default(), history: HistoryState::default(), longterm: LongTermSnapshot::default(), episodes: EpisodicLog::default(), services: ServiceCache::default(), agent_state: AgentState::default(), decisions: BTreeMap::new(), privacy: Privacy::default(), extraction: BTreeMap::new(), summary_views: SummaryViews::default(), moves_in: BTreeMap::new(), feed_relay: Default::default() }
            }
        };
        Engine::from_v1(v1)
    }

    /// Rebuilds an engine from a schema-v1 body, with every check a load
    /// makes (an import builds one too).
    pub(super) fn from_v1(v1: SnapshotV1) -> Result<Engine> {
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
        v1.history.validate(&engine.sessions).map_err(|e| Error::SnapshotCorrupt { reason: format!("history: {e}") })?;
        engine.history = v1.history;
        engine.longterm = LongTerm::from_snapshot(v1.longterm)?;
        engine.episodes = v1.episodes;
        engine.services = v1.services;
        engine.agent_state = v1.agent_state;
        for (session_id, log) in &v1.decisions {
            if !engine.sessions.contains_key(session_id) {
                return Err(Error::SnapshotCorrupt { reason: format!("decision log of a missing session {session_id:?}") });
            }
            if log.len() > limits::DECISIONS_PER_SESSION_MAX {
                return Err(Error::SnapshotCorrupt { reason: format!("decision log of {session_id:?} over its cap") });
            }
        }
        engine.decisions = v1.decisions;
        engine.privacy = v1.privacy;
        if let Some(orphan) = v1.extraction.keys().find(|id| !engine.sessions.contains_key(*id)) {
            return Err(Error::SnapshotCorrupt { reason: format!("extraction watermark of a missing session {orphan:?}") });
        }
        engine.extraction = v1.extraction;
        v1.summary_views.validate().map_err(|e| Error::SnapshotCorrupt { reason: format!("summary views: {e}") })?;
        engine.summary_views = v1.summary_views;
        engine.moves_in = v1.moves_in;
        engine.feed_relay = v1.feed_relay;
        Ok(engine)
    }
}

/// Encodes a log record for sequence `seq`.
pub fn encode_log_entry(seq: u64, entry: &LogEntry) -> Result<Vec<u8>> {
    let mut body = vec![LOG_BODY_POSITIONAL];
    rmp_serde::encode::write(&mut body, entry).map_err(|e| Error::Internal { detail: format!("encode op: {e}") })?;
    codec::encode_log_record(SCHEMA_VERSION, seq, &body)
}

/// The first byte of a log body written as positional MessagePack (structs
/// as arrays, no field names). Bodies written before it are named-field
/// maps, whose first byte is a map marker (0x80..=0x8f, 0xde, 0xdf), never
/// this fixint, so both replay. A field may only be added at the end of a
/// struct, with `#[serde(default)]`.
pub const LOG_BODY_POSITIONAL: u8 = 0x01;

/// Decodes the log record stored under `seq`, migrating older schemas.
pub fn decode_log_entry(seq: u64, bytes: &[u8]) -> Result<LogEntry> {
    let (schema, body) = codec::decode_log_record(seq, bytes)?;
    match schema {
        SCHEMA_VERSION => {
            let body = body.strip_prefix(&[LOG_BODY_POSITIONAL]).unwrap_or(body);
            crate::core::msgpack::from_slice(body).map_err(|e| Error::LogCorrupt { seq, reason: format!("body: {e}") })
        }
        older => migrate::log_entry_to_current(older, seq, body),
    }
}
