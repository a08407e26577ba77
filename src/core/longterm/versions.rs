//! The history of each long-term record: an immutable version per create,
//! edit, delete, forget, restore and redaction, with who did it and when.
//!
//! A version keeps the record as that op left it (its *body*), so an old
//! one can be restored. The current version needs none: the live record is
//! its body, archived into it when the next op comes. Redaction strips
//! every body and leaves the hashes and an audit entry.
//!
//! Pruning is a pure function of the op sequence, so every replica and
//! every replay keeps the same history:
//! - a record keeps its [`limits::LTM_VERSIONS_PER_MEMORY_MAX`] newest
//!   versions; older ones are dropped, except redaction receipts;
//! - only the [`limits::LTM_VERSION_BODIES_PER_MEMORY_MAX`] newest past
//!   versions of a record keep a body; older ones keep the hash only;
//! - the tenant's bodies hold at most
//!   [`limits::LTM_VERSION_BODY_BYTES_MAX`]; the oldest bodies tenant-wide
//!   are stripped first;
//! - at most [`limits::LTM_GONE_HISTORIES_MAX`] records that no longer
//!   exist keep a history; the one gone longest is dropped first.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::retrieval::record::MemoryRecord;
use crate::core::time::Millis;

use super::LongTerm;

/// The actor of a write made in process, with no API key.
pub const LOCAL_ACTOR: &str = "local";
/// The actor of the records a background extraction pass writes.
pub const EXTRACTION_ACTOR: &str = "extraction";

/// What made a version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum VersionOp {
    Create,
    Edit,
    Delete,
    Forget,
    Restore,
    Redact,
}

impl VersionOp {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            VersionOp::Create => "create",
            VersionOp::Edit => "edit",
            VersionOp::Delete => "delete",
            VersionOp::Forget => "forget",
            VersionOp::Restore => "restore",
            VersionOp::Redact => "redact",
        }
    }

    /// Whether the record exists after this op.
    pub fn leaves_record(self) -> bool {
        matches!(self, VersionOp::Create | VersionOp::Edit | VersionOp::Restore)
    }
}

/// One immutable entry of a record's history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Version {
    /// 1, 2, ... per record id; never reused, even after pruning.
    pub version: u32,
    pub ts: Millis,
    pub op: VersionOp,
    /// SHA-256 (hex) of the record's text after the op; of the last text
    /// for a deletion or redaction.
    pub text_hash: String,
    /// An API key's id, `local`, or `extraction`.
    pub actor: String,
    /// The record as the op left it: `None` for the current version (the
    /// live record is its body), for a deletion, and once pruned or
    /// redacted.
    pub body: Option<Box<MemoryRecord>>,
}

/// Every record's history, by id, with the derived indexes the pruning
/// rule needs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Histories {
    by_id: BTreeMap<String, Vec<Version>>,
    /// Bodies in age order: (ts, id, version) with their bytes.
    bodies: BTreeMap<(Millis, String, u32), usize>,
    body_bytes: usize,
    /// Histories of records that no longer exist: (ts of the last op, id).
    gone: BTreeSet<(Millis, String)>,
}

/// SHA-256 of a text, lowercase hex.
pub fn text_hash(text: &str) -> String {
    Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// The bytes a body is counted at: its text plus its metadata and a fixed
/// overhead, a deterministic estimate of its encoded size.
fn body_bytes(r: &MemoryRecord) -> usize {
    r.text.len() + serde_json::to_string(&r.metadata).map_or(0, |s| s.len()) + limits::LTM_VERSION_OVERHEAD_BYTES
}

impl Histories {
    /// A record's versions, oldest first.
    pub fn get(&self, id: &str) -> Option<&[Version]> {
        self.by_id.get(id).map(Vec::as_slice)
    }

    /// The histories of ids after `after` (all: `None`), in id order.
    pub fn after<'a>(&'a self, after: Option<&'a str>) -> impl Iterator<Item = (&'a str, &'a [Version])> + 'a {
        let from = after.map_or(std::ops::Bound::Unbounded, std::ops::Bound::Excluded);
        self.by_id.range::<str, _>((from, std::ops::Bound::Unbounded)).map(|(id, h)| (id.as_str(), h.as_slice()))
    }

    /// Gives the current version of `id` its body (`live`, the record as it
    /// stands) before an op changes the record.
    fn archive(&mut self, id: &str, live: &MemoryRecord) {
        let Some(last) = self.by_id.get_mut(id).and_then(|h| h.last_mut()) else { return };
        if last.body.is_none() && last.op.leaves_record() {
            let bytes = body_bytes(live);
            last.body = Some(Box::new(live.clone()));
            self.bodies.insert((last.ts, id.to_owned(), last.version), bytes);
            self.body_bytes += bytes;
        }
    }

    /// Appends a version for `id` and applies the pruning rule.
    fn push(&mut self, id: &str, op: VersionOp, ts: Millis, text: &str, actor: &str) -> u32 {
        let history = self.by_id.entry(id.to_owned()).or_default();
        if let Some(prev) = history.last() {
            self.gone.remove(&(prev.ts, id.to_owned()));
        }
        let version = history.last().map_or(1, |v| v.version.saturating_add(1));
        history.push(Version { version, ts, op, text_hash: text_hash(text), actor: actor.to_owned(), body: None });
        if !op.leaves_record() {
            self.gone.insert((ts, id.to_owned()));
        }
        self.prune(id);
        version
    }

    /// Strips one body, keeping the byte count in step.
    fn strip(&mut self, id: &str, v: &mut Version) {
        if v.body.take().is_some() {
            if let Some(bytes) = self.bodies.remove(&(v.ts, id.to_owned(), v.version)) {
                self.body_bytes -= bytes;
            }
        }
    }

    fn prune(&mut self, id: &str) {
        let Some(mut history) = self.by_id.remove(id) else { return };
        while history.len() > limits::LTM_VERSIONS_PER_MEMORY_MAX {
            // Redaction receipts outlive the pruning of older versions.
            let i = history.iter().position(|v| v.op != VersionOp::Redact).unwrap_or(0);
            let mut dropped = history.remove(i);
            self.strip(id, &mut dropped);
        }
        let with_body = history.iter().filter(|v| v.body.is_some()).count();
        let mut excess = with_body.saturating_sub(limits::LTM_VERSION_BODIES_PER_MEMORY_MAX);
        for v in history.iter_mut() {
            if excess == 0 {
                break;
            }
            if v.body.is_some() {
                self.strip(id, v);
                excess -= 1;
            }
        }
        self.by_id.insert(id.to_owned(), history);
        while self.body_bytes > limits::LTM_VERSION_BODY_BYTES_MAX {
            let Some(((_, oldest, version), bytes)) = self.bodies.pop_first() else { break };
            self.body_bytes -= bytes;
            if let Some(v) = self.by_id.get_mut(&oldest).and_then(|h| h.iter_mut().find(|v| v.version == version)) {
                v.body = None;
            }
        }
        while self.gone.len() > limits::LTM_GONE_HISTORIES_MAX {
            let Some((_, oldest)) = self.gone.pop_first() else { break };
            if let Some(history) = self.by_id.remove(&oldest) {
                for mut v in history {
                    self.strip(&oldest, &mut v);
                }
            }
        }
    }

    /// Strips every body of `id` (redaction); answers how many versions it has.
    fn redact(&mut self, id: &str) -> usize {
        let Some(mut history) = self.by_id.remove(id) else { return 0 };
        for v in history.iter_mut() {
            self.strip(id, v);
        }
        let n = history.len();
        self.by_id.insert(id.to_owned(), history);
        n
    }

    /// Drops the histories whose bodies name `user_id`, or whose record
    /// did: the right to be forgotten reaches past versions too. Answers
    /// how many went.
    fn purge_user(&mut self, user_id: &str, also: &BTreeSet<String>) -> usize {
        let ids: Vec<String> = self
            .by_id
            .iter()
            .filter(|(id, h)| also.contains(*id) || h.iter().any(|v| v.body.as_ref().is_some_and(|b| b.user_id.as_deref() == Some(user_id))))
            .map(|(id, _)| id.clone())
            .collect();
        for id in &ids {
            if let Some(history) = self.by_id.remove(id) {
                if let Some(last) = history.last() {
                    self.gone.remove(&(last.ts, id.clone()));
                }
                for mut v in history {
                    self.strip(id, &mut v);
                }
            }
        }
        ids.len()
    }

    /// Drops `id`'s history with its bodies; answers it.
    pub(super) fn take(&mut self, id: &str) -> Option<Vec<Version>> {
        let mut history = self.by_id.remove(id)?;
        if let Some(last) = history.last() {
            self.gone.remove(&(last.ts, id.to_owned()));
        }
        for v in history.iter_mut() {
            if let Some(bytes) = v.body.as_ref().and_then(|_| self.bodies.remove(&(v.ts, id.to_owned(), v.version))) {
                self.body_bytes -= bytes;
            }
        }
        Some(history)
    }

    /// Sets `id`'s history to `versions` (checked as a snapshot's are),
    /// replacing any it had; `live`: whether its record exists. Then the
    /// pruning rule applies, as after any change.
    pub(super) fn replace(&mut self, id: &str, versions: Vec<Version>, live: bool) -> Result<()> {
        let mut one = Histories::from_snapshot(vec![(id.to_owned(), versions)], |_| live)?;
        self.take(id);
        let Some(history) = one.by_id.remove(id) else { return Ok(()) };
        self.bodies.append(&mut one.bodies);
        self.body_bytes += one.body_bytes;
        self.gone.append(&mut one.gone);
        self.by_id.insert(id.to_owned(), history);
        self.prune(id);
        Ok(())
    }

    /// The snapshot form.
    pub fn to_snapshot(&self) -> Vec<(String, Vec<Version>)> {
        self.by_id.iter().map(|(id, h)| (id.clone(), h.clone())).collect()
    }

    /// Rebuilds the derived indexes from a snapshot's histories, checking
    /// each against the limits.
    pub fn from_snapshot(s: Vec<(String, Vec<Version>)>, live: impl Fn(&str) -> bool) -> Result<Histories> {
        let corrupt = |reason: String| Error::SnapshotCorrupt { reason };
        let mut h = Histories::default();
        for (id, versions) in s {
            if versions.is_empty() || versions.len() > limits::LTM_VERSIONS_PER_MEMORY_MAX + 1 || versions.windows(2).any(|w| w[0].version >= w[1].version) {
                return Err(corrupt(format!("memory {id:?}: versions out of order or past the limit")));
            }
            for v in &versions {
                if let Some(b) = &v.body {
                    b.validate().map_err(|e| corrupt(format!("memory {id:?} version {}: {e}", v.version)))?;
                    let bytes = body_bytes(b);
                    h.bodies.insert((v.ts, id.clone(), v.version), bytes);
                    h.body_bytes += bytes;
                }
            }
            if let Some(last) = versions.last() {
                if !live(&id) {
                    h.gone.insert((last.ts, id.clone()));
                }
            }
            if h.by_id.insert(id.clone(), versions).is_some() {
                return Err(corrupt(format!("memory {id:?}: two histories")));
            }
        }
        Ok(h)
    }
}

impl LongTerm {
    /// A record's versions, oldest first; `None` when it never existed (or
    /// its history was pruned).
    pub fn versions(&self, id: &str) -> Option<&[Version]> {
        self.histories.get(id)
    }

    /// The record as version `version` of `id` left it.
    pub fn version_body(&self, id: &str, version: u32) -> Result<MemoryRecord> {
        let history = self.histories.get(id).ok_or_else(|| Error::not_found("memory", id))?;
        let v = history.iter().find(|v| v.version == version).ok_or_else(|| Error::not_found("version", version.to_string()))?;
        if let Some(b) = &v.body {
            return Ok((**b).clone());
        }
        let current = history.last().is_some_and(|l| l.version == version);
        match self.get(id) {
            Some(r) if current && v.op.leaves_record() => Ok(r.clone()),
            _ if !v.op.leaves_record() => Err(Error::invalid("version", format!("version {version} is a {}: there is no record to restore", v.op.as_str()))),
            _ => Err(Error::invalid("version", format!("version {version} keeps only its hash (pruned or redacted)"))),
        }
    }

    /// Archives the live record's current version before an op changes it.
    pub(super) fn archive(&mut self, id: &str) {
        if let Some(live) = self.get(id).cloned() {
            self.histories.archive(id, &live);
        }
    }

    /// Records a version of `id` made by `op`.
    pub(super) fn versioned(&mut self, id: &str, op: VersionOp, now: Millis, text: &str, actor: Option<&str>) -> u32 {
        self.histories.push(id, op, now, text, actor.unwrap_or(LOCAL_ACTOR))
    }

    /// Strips the bodies of `id`'s versions (see [`Histories`]).
    pub(super) fn redact_history(&mut self, id: &str) -> usize {
        self.histories.redact(id)
    }

    /// The right to be forgotten over histories: drops every history that
    /// held `user_id`'s records, including those of `ids` (just erased).
    pub fn purge_user_history(&mut self, user_id: &str, ids: &[String]) -> usize {
        self.histories.purge_user(user_id, &ids.iter().cloned().collect())
    }
}
