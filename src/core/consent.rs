//! A tenant's privacy policy and its users' consent to long-term memory.
//!
//! Both are state like any other: changed only by logged ops, so a replay
//! decides every write exactly as it was decided. User ids are held as the
//! store writes them (a keyed pseudonym when the deployment has a privacy
//! key), so the consent table never holds a raw user id either.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::time::Millis;

/// What happens to a secret (an API key, a token, a private key) found in a
/// write.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SecretsMode {
    /// Replaced by `[REDACTED:kind]`; the write goes on and reports it.
    #[default]
    Redact,
    /// The write is refused with `secret_detected`; nothing is stored.
    Reject,
}

/// A namespace's privacy policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Policy {
    /// Long-term writes for a user need that user's consent. Default off,
    /// as in AMS, whose clients know nothing of consent.
    #[serde(default)]
    pub require_consent: bool,
    /// Personal data (emails, phones, cards, IBANs, IPs, SSNs) in long-term
    /// memory and episodes is replaced before it is stored. Default on.
    #[serde(default = "yes")]
    pub anonymize: bool,
    /// Default `redact`.
    #[serde(default)]
    pub secrets: SecretsMode,
}

fn yes() -> bool {
    true
}

impl Default for Policy {
    fn default() -> Policy {
        Policy { require_consent: false, anonymize: true, secrets: SecretsMode::Redact }
    }
}

/// A user's consent to long-term memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsentRecord {
    pub granted_at: Millis,
    /// Who recorded it: an API key's id, or `local` in process.
    pub granted_by: String,
}

/// The policy and the consent table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Privacy {
    #[serde(default)]
    pub policy: Policy,
    /// By user id as stored.
    #[serde(default)]
    consents: BTreeMap<String, ConsentRecord>,
}

impl Privacy {
    /// The consent of `user_id` (as stored), if given.
    pub fn consent(&self, user_id: &str) -> Option<&ConsentRecord> {
        self.consents.get(user_id)
    }

    /// Whether a long-term write for `user_id` may go ahead: always without
    /// `require_consent`, always for a record that names no user.
    pub fn check_long_term(&self, user_id: Option<&str>) -> Result<()> {
        match user_id {
            Some(u) if self.policy.require_consent && !self.consents.contains_key(u) => Err(Error::ConsentRequired { user_id: u.chars().take(64).collect() }),
            _ => Ok(()),
        }
    }

    /// Records consent (again: the newest grant wins).
    pub fn grant(&mut self, user_id: &str, granted_by: &str, now: Millis) -> Result<ConsentRecord> {
        crate::core::session::validate_id("user_id", user_id)?;
        crate::core::session::validate_id("granted_by", granted_by)?;
        if !self.consents.contains_key(user_id) && self.consents.len() >= limits::CONSENTS_MAX {
            return Err(Error::LimitExceeded { what: "consent records".into(), limit: limits::CONSENTS_MAX as u64 });
        }
        let record = ConsentRecord { granted_at: now, granted_by: granted_by.to_owned() };
        self.consents.insert(user_id.to_owned(), record.clone());
        Ok(record)
    }

    /// Removes the consent of `user_id`; whether there was one.
    pub fn revoke(&mut self, user_id: &str) -> bool {
        self.consents.remove(user_id).is_some()
    }

    /// Users with consent.
    pub fn consent_count(&self) -> usize {
        self.consents.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_keep_ams_clients_working() {
        let p = Privacy::default();
        assert!(!p.policy.require_consent);
        assert!(p.policy.anonymize);
        assert_eq!(p.policy.secrets, SecretsMode::Redact);
        assert!(p.check_long_term(Some("u1")).is_ok());
        let partial: Policy = serde_json::from_str(r#"{"require_consent": true}"#).unwrap();
        assert!(partial.anonymize, "an absent field keeps its default");
    }

    #[test]
    fn consent_gates_long_term_writes_for_a_user() {
        let mut p = Privacy { policy: Policy { require_consent: true, ..Policy::default() }, ..Privacy::default() };
        assert_eq!(p.check_long_term(Some("u1")).unwrap_err().code(), "consent_required");
        assert!(p.check_long_term(None).is_ok(), "a record that names no user needs no one's consent");
        p.grant("u1", "local", 5).unwrap();
        assert!(p.check_long_term(Some("u1")).is_ok());
        assert_eq!(p.consent("u1").unwrap().granted_at, 5);
        assert!(p.revoke("u1"));
        assert!(!p.revoke("u1"));
        assert!(p.check_long_term(Some("u1")).is_err());
        assert_eq!(p.grant("", "local", 1).unwrap_err().code(), "invalid_input");
    }
}
