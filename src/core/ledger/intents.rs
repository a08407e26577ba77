//! `execute_once`: idempotent external side effects.
//!
//! The intent to call an outside service is written durably *before* the
//! call and its outcome *after* it. A second call with the same operation and
//! parameters returns the stored outcome without calling again; an intent
//! with no outcome (the process died mid-call) is listed for the caller to
//! verify and is never re-run silently.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::core::error::{ConflictCode, Error, Result};
use crate::core::limits;
use crate::core::time::Millis;

/// One intent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Intent {
    pub key: String,
    pub op: String,
    #[serde(serialize_with = "crate::core::exact_json::value")]
    pub params: Value,
    pub begun_at: Millis,
    #[serde(default)]
    #[serde(serialize_with = "crate::core::exact_json::option_value")]
    pub outcome: Option<Value>,
    #[serde(default)]
    pub completed_at: Option<Millis>,
}

/// The operation key: hex SHA-256 of the canonical JSON of `{op, params}`
/// (object keys sorted, no whitespace), so equal requests share a key.
pub fn intent_key(op: &str, params: &Value) -> String {
    let canonical = serde_json::json!({ "op": op, "params": params }).to_string();
    Sha256::digest(canonical.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// Checks the size of a JSON value crossing into an intent.
pub fn validate_intent_json(field: &str, v: &Value) -> Result<()> {
    let bytes = v.to_string().len();
    if bytes > limits::INTENT_JSON_BYTES_MAX {
        return Err(Error::too_large(field, bytes, limits::INTENT_JSON_BYTES_MAX));
    }
    Ok(())
}

/// What `begin` found.
#[derive(Debug, Clone, PartialEq)]
pub enum Begun {
    /// New: make the external call now, then `complete`.
    Started(Intent),
    /// Done before: here is the outcome; do not call again.
    Done(Intent),
    /// Begun before and never completed: the call may or may not have
    /// happened. Verify with the outside service before doing anything.
    Open(Intent),
}

impl super::Ledger {
    /// Records the intent to run `op` with `params` (its key already
    /// derived with [`intent_key`]).
    pub fn begin_intent(&mut self, key: &str, op: &str, params: &Value, now: Millis) -> Result<Begun> {
        if let Some(i) = self.intents.get(key) {
            return Ok(if i.outcome.is_some() { Begun::Done(i.clone()) } else { Begun::Open(i.clone()) });
        }
        super::validate_ledger_id("op", op)?;
        validate_intent_json("params", params)?;
        if self.intents.len() >= limits::INTENTS_MAX {
            return Err(Error::LimitExceeded { what: "intents".into(), limit: limits::INTENTS_MAX as u64 });
        }
        let intent = Intent { key: key.to_owned(), op: op.to_owned(), params: params.clone(), begun_at: now, outcome: None, completed_at: None };
        self.intents.insert(key.to_owned(), intent.clone());
        Ok(Begun::Started(intent))
    }

    /// Records the outcome of an intent. Completing it again with the same
    /// outcome is a no-op; with another outcome, a conflict.
    pub fn complete_intent(&mut self, key: &str, outcome: &Value, now: Millis) -> Result<Intent> {
        validate_intent_json("outcome", outcome)?;
        let intent = self.intents.get_mut(key).ok_or_else(|| Error::not_found("intent", key))?;
        match &intent.outcome {
            Some(o) if o == outcome => Ok(intent.clone()),
            Some(_) => Err(Error::conflict(ConflictCode::IntentCompletedWithDifferentOutcome, key)),
            None => {
                intent.outcome = Some(outcome.clone());
                intent.completed_at = Some(now);
                Ok(intent.clone())
            }
        }
    }

    /// Intents with no outcome: after a crash, each must be verified.
    pub fn open_intents(&self) -> Vec<&Intent> {
        self.intents.values().filter(|i| i.outcome.is_none()).collect()
    }

    pub fn intent(&self, key: &str) -> Option<&Intent> {
        self.intents.get(key)
    }
}
