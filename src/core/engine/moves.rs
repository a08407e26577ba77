//! What a split moves from one shard to a new one (issue 21), as state:
//! the sessions and long-term records of the buckets that move, each
//! whole (a session with its archive, tool cache, decision log and
//! extraction watermark; a record with its vector and history), and the
//! state every shard of a tenant keeps alike (the privacy policy and
//! consents, the tool TTLs).
//!
//! A split copies by **digest**: each side lists the items of the moving
//! buckets it holds, by key, with a hash of each ([`Engine::move_digest`]);
//! [`move_diff`] names the items the new shard lacks or holds in another
//! version and those it holds that the old shard no longer does. Copying
//! that difference ([`Op::MoveIn`]) makes the new shard's part equal to the
//! old shard's at the time of the digest, whatever ops ran in between, so a
//! round repeated after a crash is harmless, and rounds catch up with
//! writes until a fence stops them. Each batch carries an op id (the move
//! and a sequence number): a batch at or below the move's watermark is a
//! no-op, so a batch delivered twice or late never rolls state back.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::*;
use crate::core::history::ToolCache;
use crate::core::longterm::versions::Version;
use crate::core::retrieval::record::MemoryRecord;

/// The key of the state all shards keep alike.
pub const BROADCAST_KEY: &str = "b";

/// One piece of state a split moves, keyed by [`MoveItem::key`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum MoveItem {
    /// The state every shard keeps alike.
    Broadcast { privacy: Privacy, tool_ttls: BTreeMap<String, u64> },
    /// A session with everything that goes with it.
    Session { session: Session, archived: Vec<Message>, tool_cache: Option<ToolCache>, decisions: Option<DecisionLog>, extraction: Option<Watermark> },
    /// A long-term record with its stored vector and its history.
    Memory {
        record: MemoryRecord,
        #[serde(with = "vector_wire")]
        vector: Vec<f32>,
        versions: Vec<Version>,
    },
}

/// A moving record's vector: in JSON (a batch between objects) base64url
/// of its little-endian f32s, a third of the text of a number array and no
/// float formatting or parsing; in MessagePack (the op log) the f32
/// sequence it always was, so logged batches replay unchanged.
mod vector_wire {
    use serde::de::{Error as _, SeqAccess, Visitor};
    use serde::{Deserializer, Serialize, Serializer};

    use crate::core::limits;
    use crate::core::privacy::pseudonym::{base64url_decode, base64url_encode};

    pub fn serialize<S: Serializer>(v: &[f32], s: S) -> Result<S::Ok, S::Error> {
        if !s.is_human_readable() {
            return v.serialize(s);
        }
        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        let mut text = String::with_capacity(bytes.len() * 4 / 3 + 4);
        base64url_encode(&bytes, &mut text);
        s.serialize_str(&text)
    }

    struct Vector;

    impl<'de> Visitor<'de> for Vector {
        type Value = Vec<f32>;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a vector: base64url of little-endian f32s, or an array of numbers")
        }

        fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Vec<f32>, E> {
            let bytes = base64url_decode(text).filter(|b| b.len() % 4 == 0 && b.len() / 4 <= limits::VECTOR_DIM_MAX).ok_or_else(|| E::custom("vector: must be base64url of at most VECTOR_DIM_MAX little-endian f32s"))?;
            let v: Vec<f32> = bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
            if v.iter().any(|x| !x.is_finite()) {
                return Err(E::custom("vector: NaN or an infinity"));
            }
            Ok(v)
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Vec<f32>, A::Error> {
            let mut v = Vec::with_capacity(a.size_hint().unwrap_or(0).min(limits::VECTOR_DIM_MAX));
            while let Some(x) = a.next_element::<f32>()? {
                if v.len() == limits::VECTOR_DIM_MAX {
                    return Err(A::Error::custom("vector: more than VECTOR_DIM_MAX numbers"));
                }
                v.push(x);
            }
            Ok(v)
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f32>, D::Error> {
        if d.is_human_readable() {
            d.deserialize_any(Vector)
        } else {
            d.deserialize_seq(Vector)
        }
    }
}

impl MoveItem {
    /// `b`, `s/{session id}` or `m/{record id}`.
    pub fn key(&self) -> String {
        match self {
            MoveItem::Broadcast { .. } => BROADCAST_KEY.to_owned(),
            MoveItem::Session { session, .. } => format!("s/{}", session.session_id),
            MoveItem::Memory { record, .. } => format!("m/{}", record.id),
        }
    }
}

/// What a split asks of a shard's state: which sessions and records are
/// in the moving buckets. The bucket of a record depends on its user id as
/// the tenant knows it (a sealed id opened), so the host decides.
pub trait MoveSelect {
    fn session(&self, session_id: &str) -> bool;
    fn record(&self, record: &MemoryRecord) -> bool;
}

/// A state's digest: `(key, hash, order)` ascending by key. `order` is a
/// record's place in its shard (its internal key; 0 for the rest), so a
/// round sends new records in the order the old shard holds them.
pub type MoveDigest = Vec<(String, u64, u64)>;

/// What a catch-up round copies: keys the new shard must get (ascending)
/// and keys it must drop.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct MoveDiff {
    pub send: Vec<String>,
    pub remove: Vec<String>,
}

impl MoveDiff {
    /// How many items the round changes.
    pub fn len(&self) -> usize {
        self.send.len() + self.remove.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The difference between the old shard's digest (`from`) and the new
/// one's (`to`), both ascending by key; `send` in the old shard's order.
pub fn move_diff(from: &[(String, u64, u64)], to: &[(String, u64, u64)]) -> MoveDiff {
    let mut diff = MoveDiff::default();
    let mut send: Vec<(u64, String)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < from.len() || j < to.len() {
        match (from.get(i), to.get(j)) {
            (Some(a), Some(b)) if a.0 == b.0 => {
                if a.1 != b.1 {
                    send.push((a.2, a.0.clone()));
                }
                i += 1;
                j += 1;
            }
            (Some(a), Some(b)) if a.0 < b.0 => {
                send.push((a.2, a.0.clone()));
                i += 1;
            }
            (Some(a), None) => {
                send.push((a.2, a.0.clone()));
                i += 1;
            }
            (_, Some(b)) => {
                diff.remove.push(b.0.clone());
                j += 1;
            }
            (None, None) => break,
        }
    }
    send.sort_unstable();
    diff.send = send.into_iter().map(|(_, k)| k).collect();
    diff
}

/// The first 8 bytes of SHA-256 over `value`'s positional MessagePack (the
/// op log's encoding: no field names, no float formatting): an item's
/// version. Both sides of a round hash with the same code; a side that
/// hashed otherwise (a deploy between rounds) only makes a round copy more.
fn hash_of<T: Serialize>(value: &T) -> Result<u64> {
    let bytes = rmp_serde::to_vec(value).map_err(|e| Error::Internal { detail: format!("move digest: {e}") })?;
    let d = Sha256::digest(&bytes);
    Ok(u64::from_be_bytes([d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]]))
}

/// A long-term record's version as a hand-over compares it: its creation,
/// its text's hash and its versions' marks (number, time, op, text hash).
/// Every edit changes it; a read that touches the record (its last use)
/// does not; two records that merely share an id differ.
pub fn memory_version(record: &MemoryRecord, versions: &[Version]) -> Result<u64> {
    let marks: Vec<_> = versions.iter().map(|v| (v.version, v.ts, &v.op, &v.text_hash)).collect();
    hash_of(&(record.created_at, &record.memory_hash, marks))
}

/// How the record held (`held`, its history `held_versions`) stands to an
/// item of the same id: an earlier (`Less`), the same (`Equal`) or a later
/// (`Greater`) state of one record, whose histories agree wherever both
/// hold a version; `None`: another record under the same id.
fn lineage(held: &MemoryRecord, held_versions: &[Version], item: &MemoryRecord, item_versions: &[Version]) -> Option<std::cmp::Ordering> {
    if held.created_at != item.created_at {
        return None;
    }
    let mut shared = 0;
    for h in held_versions {
        if let Some(i) = item_versions.iter().find(|i| i.version == h.version) {
            if (i.ts, i.op, &i.text_hash) != (h.ts, h.op, &h.text_hash) {
                return None;
            }
            shared += 1;
        }
    }
    match (held_versions.last(), item_versions.last()) {
        (Some(h), Some(i)) if shared > 0 => Some(h.version.cmp(&i.version)),
        // Without a history (a record of an earlier release), only the
        // same text is the same record.
        (None, None) => (held.memory_hash == item.memory_hash).then_some(std::cmp::Ordering::Equal),
        _ => None,
    }
}

impl Engine {
    /// The digest of the moving part of this state (see the module docs).
    /// A record's vector is left out of its hash: it follows from its text
    /// and embedder, and an edit that changes it changes the record.
    pub fn move_digest(&self, select: &dyn MoveSelect) -> Result<MoveDigest> {
        let mut out = Vec::new();
        out.push((BROADCAST_KEY.to_owned(), self.broadcast_hash()?, 0));
        for (key, r) in self.longterm.keyed_records() {
            if select.record(r) {
                out.push((format!("m/{}", r.id), hash_of(&(r, self.longterm.versions(&r.id)))?, key));
            }
        }
        for id in self.sessions.keys() {
            if select.session(id) {
                out.push((format!("s/{id}"), self.session_hash(id)?, 0));
            }
        }
        out.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }

    /// The digest entries of `keys` this state holds, ascending by key, as
    /// [`Engine::move_digest`] computes them: what a batch just stored, so
    /// the split need not digest the new shard again.
    pub fn move_digest_of(&self, keys: &[String]) -> Result<MoveDigest> {
        let mut out = Vec::with_capacity(keys.len());
        for key in keys {
            if key == BROADCAST_KEY {
                out.push((key.clone(), self.broadcast_hash()?, 0));
            } else if let Some(id) = key.strip_prefix("m/") {
                if let (Some(r), Some(&k)) = (self.longterm.get(id), self.longterm.key_of(id)) {
                    out.push((key.clone(), hash_of(&(r, self.longterm.versions(id)))?, k));
                }
            } else if let Some(id) = key.strip_prefix("s/") {
                if self.sessions.contains_key(id) {
                    out.push((key.clone(), self.session_hash(id)?, 0));
                }
            }
        }
        out.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        out.dedup_by(|a, b| a.0 == b.0);
        Ok(out)
    }

    fn broadcast_hash(&self) -> Result<u64> {
        hash_of(&(&self.privacy, self.history.tool_ttls()))
    }

    fn session_hash(&self, id: &str) -> Result<u64> {
        let item = self.move_item(&format!("s/{id}"))?;
        hash_of(&item)
    }

    /// The item under `key`, if this state holds it.
    pub fn move_item(&self, key: &str) -> Result<Option<MoveItem>> {
        if key == BROADCAST_KEY {
            return Ok(Some(MoveItem::Broadcast { privacy: self.privacy.clone(), tool_ttls: self.history.tool_ttls().clone() }));
        }
        if let Some(id) = key.strip_prefix("s/") {
            let Some(session) = self.sessions.get(id) else { return Ok(None) };
            let (archived, tool_cache) = self.history.session_part(id);
            return Ok(Some(MoveItem::Session { session: session.clone(), archived, tool_cache, decisions: self.decisions.get(id).cloned(), extraction: self.extraction.get(id).cloned() }));
        }
        if let Some(id) = key.strip_prefix("m/") {
            let Some(record) = self.longterm.get(id) else { return Ok(None) };
            let vector = self.longterm.vector_of(id).ok_or_else(|| Error::Internal { detail: format!("memory {id:?} has no vector") })?;
            let versions = self.longterm.versions(id).map(<[Version]>::to_vec).unwrap_or_default();
            return Ok(Some(MoveItem::Memory { record: record.clone(), vector, versions }));
        }
        Err(Error::invalid("keys", format!("{key:?} is not a move key")))
    }

    /// The keys of the moving part, without the broadcast state: what a
    /// split collects at its old shard once the new one owns them.
    pub fn move_keys(&self, select: &dyn MoveSelect) -> Vec<String> {
        let records = self.longterm.records().filter(|r| select.record(r)).map(|r| format!("m/{}", r.id));
        let sessions = self.sessions.keys().filter(|id| select.session(id)).map(|id| format!("s/{id}"));
        records.chain(sessions).collect()
    }

    /// The last batch of move `move_id` applied here (0: none).
    pub fn move_watermark(&self, move_id: u64) -> u64 {
        self.moves_in.get(&move_id).copied().unwrap_or(0)
    }

    /// [`Op::MoveIn`], checked whole before anything changes.
    pub(super) fn move_in(&mut self, move_id: u64, seq: u64, items: &[MoveItem], remove: &[String], embedder: Option<&str>) -> Result<Applied> {
        // One more item than a batch's cap: the broadcast state rides along.
        if items.len() > limits::SHARD_MOVE_BATCH_ITEMS_MAX + 1 || remove.len() > limits::SHARD_MOVE_BATCH_ITEMS_MAX {
            return Err(Error::LimitExceeded { what: "items in one move batch".into(), limit: limits::SHARD_MOVE_BATCH_ITEMS_MAX as u64 });
        }
        if seq <= self.move_watermark(move_id) {
            return Ok(Applied::Moved { applied: false, items: 0, removed: 0 });
        }
        let mut fresh_records = 0;
        let mut fresh_sessions = 0;
        for item in items {
            match item {
                MoveItem::Broadcast { .. } => {}
                MoveItem::Session { session, archived, decisions, .. } => {
                    session.validate()?;
                    if archived.len() > limits::ARCHIVED_MESSAGES_MAX || decisions.as_ref().is_some_and(|d| d.len() > limits::DECISIONS_PER_SESSION_MAX) {
                        return Err(Error::invalid("items", format!("session {:?}: archive or decision log over its cap", session.session_id)));
                    }
                    fresh_sessions += usize::from(!self.sessions.contains_key(&session.session_id));
                }
                MoveItem::Memory { record, vector, .. } => {
                    fresh_records += usize::from(self.longterm.get(&record.id).is_none());
                    self.longterm.check_move_in(record, vector, embedder, fresh_records)?;
                }
            }
        }
        if self.sessions.len() + fresh_sessions > limits::SESSIONS_MAX {
            return Err(Error::LimitExceeded { what: "sessions".into(), limit: limits::SESSIONS_MAX as u64 });
        }
        // Everything is checked; from here the batch cannot fail halfway.
        for key in remove {
            self.move_out(key);
        }
        for item in items.iter().cloned() {
            match item {
                MoveItem::Broadcast { privacy, tool_ttls } => {
                    self.privacy = privacy;
                    self.history.set_tool_ttls(tool_ttls)?;
                }
                MoveItem::Session { session, archived, tool_cache, decisions, extraction } => {
                    let id = session.session_id.clone();
                    self.remove(&id);
                    self.insert(session);
                    self.history.set_session_part(&id, archived, tool_cache);
                    if let Some(d) = decisions {
                        self.decisions.insert(id.clone(), d);
                    }
                    if let Some(w) = extraction {
                        self.extraction.insert(id, w);
                    }
                }
                MoveItem::Memory { record, vector, versions } => self.longterm.move_in(record, &vector, versions, embedder)?,
            }
        }
        self.moves_in.insert(move_id, seq);
        Ok(Applied::Moved { applied: true, items: items.len(), removed: remove.len() })
    }

    /// The version of record `id` here, as [`memory_version`] computes it.
    pub fn memory_version_of(&self, id: &str) -> Result<Option<u64>> {
        self.longterm.get(id).map(|r| memory_version(r, self.longterm.versions(id).unwrap_or_default())).transpose()
    }

    /// [`Op::Adopt`]: only a record moves this way (a session's bucket is
    /// its id's, which an edit cannot change).
    pub(super) fn adopt(&mut self, item: &MoveItem, embedder: Option<&str>) -> Result<Applied> {
        let MoveItem::Memory { record, vector, versions } = item else {
            return Err(Error::invalid("item", "only a long-term record is handed to another shard"));
        };
        if let Some(held) = self.longterm.get(&record.id) {
            let held_versions = self.longterm.versions(&record.id).unwrap_or_default();
            match lineage(held, held_versions, record, versions) {
                // This state holds the record as adopted, or newer (edited
                // here since): a repeated or late hand-over changes nothing.
                Some(std::cmp::Ordering::Equal | std::cmp::Ordering::Greater) => return Ok(Applied::Moved { applied: false, items: 0, removed: 0 }),
                // An earlier hand-over of the record, overtaken by an edit
                // at its old shard: replaced.
                Some(std::cmp::Ordering::Less) => {}
                None => return Err(Error::invalid("memory_id", format!("{:?} already names another record in the shard of its new user", record.id))),
            }
        }
        self.longterm.check_move_in(record, vector, embedder, 1)?;
        self.longterm.move_in(record.clone(), vector, versions.clone(), embedder)?;
        Ok(Applied::Moved { applied: true, items: 1, removed: 0 })
    }

    /// [`Op::HandedOver`]: drops record `id` if it is still at `version`.
    pub(super) fn handed_over(&mut self, id: &str, version: u64) -> Result<Applied> {
        let same = self.memory_version_of(id)? == Some(version);
        let removed = usize::from(same && self.longterm.move_out(id));
        Ok(Applied::Moved { applied: same, items: 0, removed })
    }

    /// Drops the item under `key` (a split's collection, or a catch-up's
    /// removal); answers whether it was here. The broadcast state stays.
    fn move_out(&mut self, key: &str) -> bool {
        if let Some(id) = key.strip_prefix("s/") {
            let had = self.sessions.contains_key(id);
            self.remove(id);
            return had;
        }
        if let Some(id) = key.strip_prefix("m/") {
            return self.longterm.move_out(id);
        }
        false
    }

    /// [`Op::MoveOut`].
    pub(super) fn move_out_all(&mut self, keys: &[String]) -> Result<Applied> {
        if keys.len() > limits::SHARD_MOVE_BATCH_ITEMS_MAX {
            return Err(Error::LimitExceeded { what: "keys in one move collection".into(), limit: limits::SHARD_MOVE_BATCH_ITEMS_MAX as u64 });
        }
        let removed = keys.iter().filter(|k| self.move_out(k)).count();
        Ok(Applied::Moved { applied: true, items: 0, removed })
    }
}
