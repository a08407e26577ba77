//! One pass over an op before it is logged: secrets out of every field a
//! user writes, personal data out of long-term memory and episodes, user
//! ids sealed.
//!
//! It runs on the op itself, in the store, between the API that built the
//! op and the log that keeps it, so no write path (HTTP, npm, the CLI, a
//! promotion from working memory, a future extractor) can store a secret
//! by going around it: a new top-level op variant will not compile until
//! it is placed here.

use serde_json::{Map, Value};

use super::{find_secrets, is_secret_field, redact_secrets, Anonymizer, PseudonymKey, Report, SecretKind};
use crate::core::consent::{Policy, Privacy, SecretsMode};
use crate::core::engine::{ExtractionOp, HistoryOp, Op};
use crate::core::error::{Error, Result};
use crate::core::ledger::LedgerOp;
use crate::core::limits;
use crate::core::longterm::LtmOp;
use crate::core::agent_state::AgentStateOp;
use crate::core::service_cache::ServiceOp;
use crate::core::summary_views::SummaryViewOp;

/// Canonical JSON text (tool arguments as a cache key) with its secrets
/// redacted, as a put under the `redact` policy stores it: a lookup keyed
/// this way finds the entry whose arguments held the same secret.
pub fn redact_json_text(text: &mut String) -> Result<()> {
    let policy = Policy { secrets: SecretsMode::Redact, ..Policy::default() };
    Scrubber::new(&policy, None).json_text("args", text)
}

/// What one scrub replaced, by kind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scrubbed {
    /// Secrets replaced by `[REDACTED:kind]`.
    pub redactions: Report,
    /// Personal data replaced by a placeholder or a pseudonym.
    pub anonymized: Report,
}

/// The scrub of one op under one policy.
pub struct Scrubber<'a> {
    policy: &'a Policy,
    key: Option<&'a PseudonymKey>,
    /// The consent table, for writes that reach long-term memory without
    /// being a long-term op (memories held in working memory, episodes).
    consent: Option<&'a Privacy>,
    out: Scrubbed,
    /// Strings visited, bounded by [`limits::SCRUB_STRINGS_MAX`].
    strings: usize,
}

impl<'a> Scrubber<'a> {
    /// A scrubber; with `key`, personal data becomes keyed pseudonyms and
    /// user ids are sealed.
    pub fn new(policy: &'a Policy, key: Option<&'a PseudonymKey>) -> Scrubber<'a> {
        Scrubber { policy, key, consent: None, out: Scrubbed::default(), strings: 0 }
    }

    /// Checks consent, under the policy's `require_consent`, for memories
    /// held in working memory and for episodes that name a user.
    pub fn with_consent(mut self, privacy: &'a Privacy) -> Scrubber<'a> {
        self.consent = Some(privacy);
        self
    }

    /// Refuses a long-term write for `user_id` (as given) without consent.
    fn check_consent(&self, user_id: Option<&str>) -> Result<()> {
        let (Some(privacy), Some(u)) = (self.consent, user_id) else { return Ok(()) };
        let mut stored = u.to_owned();
        self.user_id(&mut stored);
        privacy.check_long_term(Some(&stored))
    }

    fn step(&mut self) -> Result<()> {
        self.strings += 1;
        if self.strings > limits::SCRUB_STRINGS_MAX {
            return Err(Error::LimitExceeded { what: "strings in one write".into(), limit: limits::SCRUB_STRINGS_MAX as u64 });
        }
        Ok(())
    }

    /// Secrets out of one string: redacted, or the write refused.
    pub fn secrets(&mut self, field: &str, s: &mut String) -> Result<()> {
        self.step()?;
        match self.policy.secrets {
            SecretsMode::Redact => {
                if let Some(t) = redact_secrets(s, &mut self.out.redactions) {
                    *s = t;
                }
            }
            SecretsMode::Reject => {
                if let Some(span) = find_secrets(s).first() {
                    return Err(Error::SecretDetected { field: field.to_owned(), kind: span.kind.name().to_owned() });
                }
            }
        }
        Ok(())
    }

    /// Secrets out of a message's content; a count cached for the old
    /// content is dropped with it.
    fn message(&mut self, m: &mut crate::core::session::Message) -> Result<()> {
        let before = self.out.redactions.total();
        self.secrets("messages.content", &mut m.content)?;
        if self.out.redactions.total() != before {
            m.tokens = Default::default();
        }
        Ok(())
    }

    /// Secrets and, under `anonymize`, personal data out of one string.
    pub fn long_term(&mut self, field: &str, s: &mut String) -> Result<()> {
        self.secrets(field, s)?;
        if self.policy.anonymize {
            let anonymizer = Anonymizer::new(self.key);
            if let Some(t) = anonymizer.anonymize(s, &mut self.out.anonymized) {
                *s = t;
            }
        }
        Ok(())
    }

    /// Every string in a JSON value (object keys are names, not data, and
    /// are left alone).
    fn value(&mut self, field: &str, v: &mut Value, personal: bool) -> Result<()> {
        match v {
            Value::String(s) if personal => self.long_term(field, s),
            Value::String(s) => self.secrets(field, s),
            Value::Array(items) => items.iter_mut().try_for_each(|i| self.value(field, i, personal)),
            Value::Object(map) => self.map(field, map, personal),
            _ => Ok(()),
        }
    }

    fn map(&mut self, field: &str, map: &mut Map<String, Value>, personal: bool) -> Result<()> {
        // Keys are names, not data: only values are scrubbed.
        map.iter_mut().try_for_each(|(k, v)| self.entry(field, k, v, personal))
    }

    /// One field of an object: a string under a secret's name
    /// (`"password"`, `"api_key"`) is a secret whatever it looks like.
    fn entry(&mut self, field: &str, name: &str, v: &mut Value, personal: bool) -> Result<()> {
        match v {
            Value::String(s) if is_secret_field(name, s) => {
                self.step()?;
                let kind = SecretKind::Password.name();
                match self.policy.secrets {
                    SecretsMode::Redact => {
                        *s = format!("[REDACTED:{kind}]");
                        self.out.redactions.add(kind, 1);
                        Ok(())
                    }
                    SecretsMode::Reject => Err(Error::SecretDetected { field: field.to_owned(), kind: kind.to_owned() }),
                }
            }
            _ => self.value(field, v, personal),
        }
    }

    /// A memory held in working memory (AMS's `memories`): bound for
    /// long-term memory, so it needs its user's consent and its text,
    /// topics and entities are anonymized like a long-term record's. The
    /// user id stays as given, as the session's does.
    fn working_memory_record(&mut self, m: &mut Map<String, Value>, session_user: Option<&str>) -> Result<()> {
        let user = match m.get("user_id") {
            Some(Value::String(u)) => Some(u.as_str()),
            _ => session_user,
        };
        self.check_consent(user)?;
        for (k, v) in m.iter_mut() {
            match k.as_str() {
                "user_id" => {}
                "text" | "topics" | "entities" => self.value("memories", v, true)?,
                _ => self.entry("memories", k, v, false)?,
            }
        }
        Ok(())
    }

    /// A JSON document held as text (a cached service state): scrubbed as a
    /// value and written back only when something changed, so its numbers
    /// keep their exact text otherwise.
    fn json_text(&mut self, field: &str, text: &mut String) -> Result<()> {
        let Ok(mut v) = serde_json::from_str::<Value>(text) else { return self.secrets(field, text) };
        let before = (self.out.redactions.total(), self.out.anonymized.total());
        self.value(field, &mut v, false)?;
        if (self.out.redactions.total(), self.out.anonymized.total()) != before {
            *text = serde_json::to_string(&v).map_err(|e| Error::Internal { detail: format!("rewrite {field}: {e}") })?;
        }
        Ok(())
    }

    /// A user id as stored: sealed when the deployment holds a privacy key,
    /// as it is.
    pub fn user_id(&self, u: &mut String) {
        if let Some(k) = self.key {
            if k.open_user_id(u).is_none() {
                *u = k.seal_user_id(u);
            }
        }
    }

    fn episode_payload(&mut self, payload: &mut Map<String, Value>) -> Result<()> {
        // An episode about a user is long-term data about them (revoking
        // consent erases it), so it needs the same consent.
        if let Some(Value::String(u)) = payload.get_mut("user_id") {
            self.check_consent(Some(u))?;
            let mut sealed = std::mem::take(u);
            self.user_id(&mut sealed);
            *u = sealed;
        }
        for (k, v) in payload.iter_mut() {
            if k == "user_id" {
                continue;
            }
            self.entry("payload", k, v, true)?;
        }
        Ok(())
    }

    /// Scrubs `op` in place. On error (a secret under `reject`, a walk too
    /// long) the op must not be applied.
    /// What this scrubber replaced so far.
    pub fn finish(self) -> Scrubbed {
        self.out
    }

    pub fn op(mut self, op: &mut Op) -> Result<Scrubbed> {
        match op {
            Op::SessionPut { session } | Op::SessionCreate { session } => {
                for m in &mut session.messages {
                    self.message(m)?;
                }
                if let Some(data) = &mut session.data {
                    self.map("data", data, false)?;
                }
                if let Some(c) = &mut session.context {
                    self.secrets("context", c)?;
                }
                for m in &mut session.memories {
                    self.working_memory_record(m, session.user_id.as_deref())?;
                }
            }
            Op::SessionAppend { messages, .. } => {
                for m in messages {
                    self.message(m)?;
                }
            }
            Op::SessionDataMigrate { data: Some(data), .. } => self.map("data", data, false)?,
            Op::History(h) => match h {
                HistoryOp::Compact { summary, .. } => self.secrets("summary", summary)?,
                HistoryOp::ToolCachePut { args, result, .. } => {
                    self.json_text("args", args)?;
                    self.value("result", result, false)?;
                }
                // A selector, not data, but logged all the same: redacted
                // under either policy (refusing an invalidation helps no one),
                // which is also how a put under `redact` keyed its entry.
                HistoryOp::ToolCacheInvalidate { args: Some(args), .. } => redact_json_text(args)?,
                HistoryOp::PromptSet { text, note, .. } => {
                    self.secrets("prompt", text)?;
                    if let Some(n) = note {
                        self.secrets("note", n)?;
                    }
                }
                HistoryOp::PatchAppend { text, .. } => self.secrets("patch", text)?,
                _ => {}
            },
            Op::Ledger(LedgerOp::BeginIntent { params, .. }) => self.value("params", params, false)?,
            Op::Ledger(LedgerOp::CompleteIntent { outcome, .. }) => self.value("outcome", outcome, false)?,
            Op::Ledger(LedgerOp::CreateTransfers { transfers }) => {
                for t in transfers.iter_mut() {
                    if let Some(m) = &mut t.metadata {
                        self.map("metadata", m, false)?;
                    }
                }
            }
            Op::Ltm(LtmOp::Create { records, .. }) | Op::Extraction(ExtractionOp::Commit { records, .. }) => {
                for r in records {
                    let rec = &mut r.record;
                    self.long_term("text", &mut rec.text)?;
                    for t in rec.topics.iter_mut().chain(rec.entities.iter_mut()) {
                        self.long_term("topics", t)?;
                    }
                    if let Some(u) = &mut rec.user_id {
                        self.user_id(u);
                    }
                    // The hash is of what is stored, so no digest of the
                    // raw text outlives it (and dedup compares like with like).
                    rec.refresh_hash();
                }
            }
            Op::Ltm(LtmOp::Update { patch, .. }) => {
                if let Some(t) = &mut patch.text {
                    self.long_term("text", t)?;
                }
                for t in patch.topics.iter_mut().flatten().chain(patch.entities.iter_mut().flatten()) {
                    self.long_term("topics", t)?;
                }
                if let Some(u) = &mut patch.user_id {
                    self.user_id(u);
                }
            }
            Op::EpisodeRecord { episode } => {
                self.episode_payload(&mut episode.payload)?;
                if let Some(o) = &mut episode.outcome {
                    self.value("outcome", o, true)?;
                }
            }
            Op::Service(ServiceOp::Put { state, .. }) => self.json_text("state", state)?,
            Op::AgentState(AgentStateOp::ProfileSet { fields, .. }) => self.map("fields", fields, false)?,
            Op::AgentState(AgentStateOp::ProfileMigrate { fields: Some(fields), .. }) => self.map("fields", fields, false)?,
            Op::DecisionAppend { entry, .. } => {
                self.secrets("text", &mut entry.text)?;
                if let Some(d) = &mut entry.data {
                    self.map("data", d, false)?;
                }
            }
            Op::ConsentGrant { user_id, .. } => self.user_id(user_id),
            Op::ConsentRevoke { user_id, session_user_id } => {
                // Sessions hold the user id as given: the erasure finds the
                // user's session-linked episodes by it. Kept only when it
                // differs, and the erasure's snapshot retires this record.
                let given = user_id.clone();
                self.user_id(user_id);
                if given != *user_id {
                    *session_user_id = Some(given);
                }
            }
            Op::SummaryView(SummaryViewOp::Create { view }) => {
                if let Some(p) = &mut view.prompt {
                    self.secrets("prompt", p)?;
                }
                if let Some(u) = view.filters.get_mut("user_id") {
                    self.user_id(u);
                }
            }
            Op::SessionDataMigrate { data: None, .. }
            | Op::SummaryView(_)
            | Op::SessionDelete { .. }
            | Op::SessionsExpire
            | Op::Ledger(_)
            | Op::Ltm(LtmOp::Delete { .. })
            | Op::Ltm(LtmOp::Reembed { .. })
            // A restore's text comes from a stored (already scrubbed) version.
            | Op::Ltm(LtmOp::Restore { .. })
            | Op::Ltm(LtmOp::Redact { .. })
            | Op::EpisodesConfigure { .. }
            | Op::EpisodesExpire
            | Op::Service(_)
            | Op::AgentState(_)
            // A split moves state another shard of the tenant already
            // scrubbed under the same policy.
            | Op::MoveIn { .. }
            | Op::MoveOut { .. }
            | Op::Adopt { .. }
            | Op::HandedOver { .. }
            // Kinds, ids and counts of another shard's scrubbed write.
            | Op::FeedRelay(_)
            | Op::PrivacySet { .. } => {}
        }
        Ok(self.out)
    }
}
