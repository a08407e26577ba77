//! Extraction: what a conversation says that is worth remembering, as
//! long-term memory candidates (AMS's `long_term_memory_strategy`).
//!
//! Pure: turns in, candidates out. Which turns are new (the per-session
//! watermark), deduplication against stored memories, superseding and the
//! privacy scrub happen where candidates become records, not here. The
//! offline extractor ([`rules`]) is deterministic so that `make demo`
//! extracts something useful with no model; a host hook (an LLM) answers
//! the same [`Candidate`] shape.

pub mod rules;

use serde_json::{Map, Value};

use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::time::Millis;

/// AMS's four strategies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Strategy {
    /// Semantic facts and episodic events (AMS's default).
    Discrete,
    /// One rolling summary memory per session.
    Summary,
    /// Likes, dislikes and settings only.
    Preferences,
    /// The caller's prompt, sent to the hook; offline it extracts as
    /// [`Strategy::Discrete`] does (a prompt needs a model).
    Custom { prompt: String },
}

impl Strategy {
    /// From AMS's `{"strategy": "discrete" | "summary" | "preferences" |
    /// "custom", "config": {...}}`; absent is discrete. A custom strategy
    /// needs `config.custom_prompt` (AMS's name) or `config.prompt`.
    pub fn parse(map: Option<&Map<String, Value>>) -> Result<Strategy> {
        let Some(map) = map else { return Ok(Strategy::Discrete) };
        let name = match map.get("strategy") {
            None | Some(Value::Null) => "discrete",
            Some(Value::String(s)) => s.as_str(),
            Some(_) => return Err(Error::invalid("long_term_memory_strategy.strategy", "must be a string")),
        };
        match name {
            "discrete" => Ok(Strategy::Discrete),
            "summary" => Ok(Strategy::Summary),
            "preferences" => Ok(Strategy::Preferences),
            "custom" => {
                let config = map.get("config").and_then(Value::as_object);
                let prompt = config.and_then(|c| c.get("custom_prompt").or_else(|| c.get("prompt"))).and_then(Value::as_str);
                match prompt {
                    Some(p) if !p.trim().is_empty() => Ok(Strategy::Custom { prompt: p.to_owned() }),
                    _ => Err(Error::invalid("long_term_memory_strategy.config.custom_prompt", "a custom strategy needs a prompt")),
                }
            }
            other => Err(Error::invalid("long_term_memory_strategy.strategy", format!("{other:?} is not one of discrete, summary, preferences, custom"))),
        }
    }

    /// The name AMS uses (`extraction_strategy` on a record).
    pub fn name(&self) -> &'static str {
        match self {
            Strategy::Discrete => "discrete",
            Strategy::Summary => "summary",
            Strategy::Preferences => "preferences",
            Strategy::Custom { .. } => "custom",
        }
    }
}

/// One conversation turn as the extractor sees it.
#[derive(Debug, Clone, Copy)]
pub struct Turn<'a> {
    /// The message id (a candidate names the turns it came from).
    pub id: &'a str,
    /// `user`, `assistant`, `tool`, ...
    pub role: &'a str,
    pub content: &'a str,
    /// When the turn was said: relative dates ("yesterday") count from it.
    pub created_at: Millis,
}

/// What a candidate is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CandidateKind {
    /// A lasting fact about the user ("User is allergic to peanuts").
    Fact,
    /// A like, dislike or setting ("User prefers metric units").
    Preference,
    /// Something that happened or will happen, with a date when one was said.
    Event,
    /// A session summary (the summary strategy).
    Summary,
}

impl CandidateKind {
    /// AMS's memory type for the kind: events are episodic, the rest semantic.
    pub fn memory_type(self) -> &'static str {
        match self {
            CandidateKind::Event => "episodic",
            _ => "semantic",
        }
    }
}

/// A memory the extractor proposes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// Third person, one sentence: "User prefers metric units."
    pub text: String,
    pub kind: CandidateKind,
    /// Lower-case topic words ("units", "food", "travel").
    pub topics: Vec<String>,
    /// Named things as written ("Paris", "Acme Corp").
    pub entities: Vec<String>,
    /// When the event happened or will happen (events only).
    pub event_date: Option<Millis>,
    /// Ids of the turns it came from.
    pub extracted_from: Vec<String>,
    /// What a preference or fact is about, normalized ("units", "seat",
    /// "allergy:peanuts"), so a later statement about the same subject
    /// supersedes this one. `None` when nothing can contradict it.
    pub subject: Option<String>,
}

/// Extraction passes that failed (a hook that threw, an embedder that
/// failed), per session: retried with a doubling delay, and given up after
/// [`limits::EXTRACT_ATTEMPTS_MAX`] attempts until the session is written
/// again. Process-local, like the store's counters: a restart retries at once.
#[derive(Debug, Default)]
pub struct Retries {
    by_session: std::collections::BTreeMap<String, Retry>,
}

#[derive(Debug, Clone, Copy)]
struct Retry {
    attempts: u32,
    next_at: Millis,
    /// The session's `updated_at` when the attempts ran out: no pass runs
    /// until a write moves it.
    gave_up_at_update: Option<Millis>,
}

impl Retries {
    /// When a session that is due at `due_at` (its writes quiet) may run,
    /// given its failures; `None` while it is given up.
    pub fn run_at(&self, session_id: &str, due_at: Millis, updated_at: Millis) -> Option<Millis> {
        match self.by_session.get(session_id) {
            None => Some(due_at),
            Some(r) if r.gave_up_at_update == Some(updated_at) => None,
            Some(r) if r.gave_up_at_update.is_some() => Some(due_at),
            Some(r) => Some(due_at.max(r.next_at)),
        }
    }

    /// Records a failed pass at `now`; answers the attempts so far and
    /// whether this one used up the last (the caller surfaces the failure).
    pub fn failed(&mut self, session_id: &str, now: Millis, updated_at: Millis) -> (u32, bool) {
        let r = self.by_session.entry(session_id.to_owned()).or_insert(Retry { attempts: 0, next_at: now, gave_up_at_update: None });
        if r.gave_up_at_update.is_some_and(|u| u != updated_at) {
            // Written since it gave up: a fresh round of attempts.
            *r = Retry { attempts: 0, next_at: now, gave_up_at_update: None };
        }
        r.attempts += 1;
        let delay = limits::EXTRACT_RETRY_BASE_MS.saturating_mul(1 << (r.attempts - 1).min(20));
        r.next_at = now.saturating_add(delay);
        let gave_up = r.attempts >= limits::EXTRACT_ATTEMPTS_MAX;
        if gave_up {
            r.gave_up_at_update = Some(updated_at);
        }
        (r.attempts, gave_up)
    }

    /// Forgets a session's failures after a pass that committed.
    pub fn succeeded(&mut self, session_id: &str) {
        self.by_session.remove(session_id);
    }
}
