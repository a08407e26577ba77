//! Background extraction's state: each session's watermark (the last turn
//! a pass covered), and the commit that adds a pass's memories and moves
//! the watermark in one op.
//!
//! A pass reads the turns after the watermark, runs the extractor (a hook
//! or the offline rules) outside the engine, then commits. The records and
//! the watermark are one log record, so a crash leaves both or neither: a
//! pass that died is simply run again from the same watermark (no gap), and
//! a pass whose commit landed is never run again (no duplicate). A commit
//! whose starting watermark is no longer current is refused.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::Engine;
use crate::core::error::{ConflictCode, Error, Result};
use crate::core::limits;
use crate::core::longterm::{LtmApplied, LtmOp, NewRecord};
use crate::core::session::{validate_id, Message, Session};
use crate::core::time::Millis;

/// The last turn of a session that extraction has covered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Watermark {
    /// The turn's message id.
    pub id: String,
    /// Its `created_at`: when a whole-session write dropped the id (a
    /// compaction, a client that rewrote its history), the turns said after
    /// it are the new ones.
    pub at: Millis,
}

/// An extraction mutation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ExtractionOp {
    /// One pass over a session: its records (created with deduplication by
    /// hash) and the session's new watermark, applied together.
    Commit {
        session_id: String,
        /// The watermark the pass started from.
        from: Option<Watermark>,
        /// The last turn the pass covered.
        through: Watermark,
        records: Vec<NewRecord>,
        /// What made the records' vectors (see `core::longterm::reembed`).
        #[serde(default)]
        embedder: Option<String>,
    },
}

/// What a commit did.
#[derive(Debug, Clone, PartialEq)]
pub struct Committed {
    pub session_id: String,
    /// Records created (or, for a summary's fixed id, replaced).
    pub created: Vec<String>,
    /// Records skipped because a live record has the same hash.
    pub duplicates: Vec<String>,
    /// Older records a created one contradicted (same user, same subject):
    /// kept and marked, no longer found by search.
    pub superseded: Vec<String>,
    pub through: Watermark,
}

/// A session whose turns after its watermark await extraction: what a pass
/// needs, copied out so the extractor runs with no engine borrowed.
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    pub session_id: String,
    /// AMS's `long_term_memory_strategy`, as the session holds it.
    pub strategy: Map<String, Value>,
    pub user_id: Option<String>,
    pub namespace: Option<String>,
    pub from: Option<Watermark>,
    /// The new turns, oldest first, at most [`limits::EXTRACT_TURNS_PER_PASS_MAX`]:
    /// a longer backlog takes several passes.
    pub turns: Vec<Message>,
}

/// The turns of `messages` after `from`.
fn after<'a>(messages: &'a [Message], from: Option<&Watermark>) -> &'a [Message] {
    let Some(w) = from else { return messages };
    match messages.iter().position(|m| m.id == w.id) {
        Some(i) => &messages[i + 1..],
        None => {
            let i = messages.iter().position(|m| m.created_at > w.at).unwrap_or(messages.len());
            &messages[i..]
        }
    }
}

/// When a session with a strategy and new turns becomes due: once its
/// writes have been quiet for `debounce_ms`.
fn due_at(s: &Session, from: Option<&Watermark>, debounce_ms: Millis) -> Option<Millis> {
    s.long_term_memory_strategy.as_ref()?;
    if after(&s.messages, from).is_empty() {
        return None;
    }
    Some(s.updated_at.saturating_add(debounce_ms))
}

impl Engine {
    pub(super) fn apply_extraction(&mut self, op: &ExtractionOp, now: Millis) -> Result<Committed> {
        let ExtractionOp::Commit { session_id, from, through, records, embedder } = op;
        validate_id("through.id", &through.id)?;
        if self.live(session_id, now).is_none() {
            return Err(Error::not_found("session", session_id));
        }
        if self.extraction.get(session_id) != from.as_ref() {
            return Err(Error::conflict(ConflictCode::ExtractionStale, session_id.clone()));
        }
        if records.len() > limits::EXTRACT_RECORDS_PER_PASS_MAX {
            return Err(Error::LimitExceeded { what: "records in one extraction pass".into(), limit: limits::EXTRACT_RECORDS_PER_PASS_MAX as u64 });
        }
        for r in records {
            // The user id is sealed by the scrub, as the consent table keys it.
            self.privacy.check_long_term(r.record.user_id.as_deref())?;
        }
        let (created, duplicates, results) = if records.is_empty() {
            (Vec::new(), Vec::new(), Vec::new())
        } else {
            match self.longterm.apply(&LtmOp::Create { records: records.clone(), deduplicate: true, embedder: embedder.clone(), actor: Some(crate::core::longterm::versions::EXTRACTION_ACTOR.into()) }, now)? {
                LtmApplied::Created { created, duplicates, results } => (created, duplicates, results),
                other => return Err(Error::Internal { detail: format!("extraction create returned {other:?}") }),
            }
        };
        // A newer statement about the same subject supersedes the older
        // ones, in the order the pass made them: through the fact chain,
        // and, for records from before extraction set `fact_key`, by
        // subject.
        let mut superseded: Vec<String> = results
            .into_iter()
            .flat_map(|(_, o)| match o {
                crate::core::longterm::Outcome::Created { superseded, .. } => superseded,
                crate::core::longterm::Outcome::DuplicateOf(_) => Vec::new(),
            })
            .collect();
        for r in records.iter().filter(|r| created.contains(&r.record.id)) {
            if let Some(subject) = r.record.metadata.get(crate::core::longterm::SUBJECT).and_then(Value::as_str) {
                for id in self.longterm.supersede(r.record.namespace.as_deref(), r.record.user_id.as_deref(), subject, &r.record.id, now) {
                    // A chain member also gets the mark: count it once.
                    if !superseded.contains(&id) {
                        superseded.push(id);
                    }
                }
            }
        }
        self.extraction.insert(session_id.clone(), through.clone());
        Ok(Committed { session_id: session_id.clone(), created, duplicates, superseded, through: through.clone() })
    }

    /// A session's extraction watermark, if a pass has committed.
    pub fn extraction_watermark(&self, session_id: &str) -> Option<&Watermark> {
        self.extraction.get(session_id)
    }

    /// Live sessions with a strategy and turns after their watermark, as
    /// `(session_id, due_at, updated_at)`: due once their writes have been
    /// quiet for `debounce_ms` (the host adds its retry delays).
    pub fn extraction_waiting(&self, now: Millis, debounce_ms: Millis) -> Vec<(String, Millis, Millis)> {
        self.sessions
            .values()
            .filter(|s| !s.is_expired(now))
            .filter_map(|s| due_at(s, self.extraction.get(&s.session_id), debounce_ms).map(|at| (s.session_id.clone(), at, s.updated_at)))
            .collect()
    }

    /// What a pass over `session_id` needs: its new turns (at most
    /// [`limits::EXTRACT_TURNS_PER_PASS_MAX`]), strategy and watermark.
    /// `None` when the session is gone or has nothing new.
    pub fn extraction_pending(&self, session_id: &str, now: Millis) -> Option<Pending> {
        let s = self.live(session_id, now)?;
        let from = self.extraction.get(session_id).cloned();
        let turns: Vec<Message> = after(&s.messages, from.as_ref()).iter().take(limits::EXTRACT_TURNS_PER_PASS_MAX).cloned().collect();
        if turns.is_empty() {
            return None;
        }
        Some(Pending {
            session_id: s.session_id.clone(),
            strategy: s.long_term_memory_strategy.clone().unwrap_or_default(),
            user_id: s.user_id.clone(),
            namespace: s.namespace.clone(),
            from,
            turns,
        })
    }

    /// Sessions due for a pass at `now`, at most `sessions_max` (no retry
    /// delays: those are the host's).
    pub fn extraction_due(&self, now: Millis, debounce_ms: Millis, sessions_max: usize) -> Vec<Pending> {
        self.extraction_waiting(now, debounce_ms)
            .into_iter()
            .filter(|(_, at, _)| *at <= now)
            .take(sessions_max)
            .filter_map(|(id, _, _)| self.extraction_pending(&id, now))
            .collect()
    }

    /// When the next session becomes due for a pass.
    pub fn next_extraction(&self, now: Millis, debounce_ms: Millis) -> Option<Millis> {
        self.extraction_waiting(now, debounce_ms).into_iter().map(|(_, at, _)| at).min()
    }
}

#[cfg(test)]
#[path = "extraction_tests.rs"]
mod tests;
