//! Privacy over HTTP: the namespace's policy (`/v1/privacy/policy`),
//! users' consent to long-term memory (`/v1/consent/{user_id}`), and the
//! pieces every route shares: the scrub report in a response, and user ids
//! sealed on the way in and opened on the way out.

use serde::Deserialize;
use serde_json::{json, Value};

use super::{parse_json, Request};
use crate::core::consent::{Policy, SecretsMode};
use crate::core::engine::{Applied, Op};
use crate::core::error::{Error, Result};
use crate::core::privacy::{PseudonymKey, Scrubbed};
use crate::core::session::validate_id;
use crate::core::time::{format_rfc3339, Millis};
use crate::store::{Backend, Store};

/// Adds what a scrub replaced to a response object: `redactions` (secrets)
/// and `anonymized` (personal data), each `{kind: count}`, only when
/// non-empty, so AMS-shaped answers are unchanged for clean input.
pub fn report_into(v: &mut Value, s: &Scrubbed) {
    let Value::Object(o) = v else { return };
    for (name, report) in [("redactions", &s.redactions), ("anonymized", &s.anonymized)] {
        if !report.is_empty() {
            o.insert(name.into(), json!(report.counts));
        }
    }
}

/// Seals every string under a `user_id` key in a request value (a search's
/// filters), so a filter by user id matches the sealed ids in storage.
pub fn seal_user_ids(v: &mut Value, key: Option<&PseudonymKey>) {
    let Some(key) = key else { return };
    fn walk(v: &mut Value, key: &PseudonymKey, under: bool) {
        match v {
            Value::String(s) if under && key.open_user_id(s).is_none() => *s = key.seal_user_id(s),
            Value::Array(a) => a.iter_mut().for_each(|i| walk(i, key, under)),
            Value::Object(o) => o.iter_mut().for_each(|(k, i)| walk(i, key, under || k == "user_id")),
            _ => {}
        }
    }
    walk(v, key, false);
}

/// Opens every sealed `user_id` in a response value, so callers see the
/// ids they wrote while storage holds only pseudonyms.
pub fn open_user_ids(v: &mut Value, key: Option<&PseudonymKey>) {
    let Some(key) = key else { return };
    match v {
        Value::Array(a) => a.iter_mut().for_each(|i| open_user_ids(i, Some(key))),
        Value::Object(o) => {
            for (k, i) in o.iter_mut() {
                match i {
                    Value::String(s) if k == "user_id" => {
                        if let Some(open) = key.open_user_id(s) {
                            *s = open;
                        }
                    }
                    other => open_user_ids(other, Some(key)),
                }
            }
        }
        _ => {}
    }
}

/// A user id as storage holds it.
pub fn stored_user_id<B: Backend>(store: &Store<B>, user_id: &str) -> String {
    store.with_privacy_key(|k| k.map_or_else(|| user_id.to_owned(), |k| k.seal_user_id(user_id)))
}

fn policy_json<B: Backend>(store: &Store<B>, p: &Policy) -> Value {
    json!({
        "require_consent": p.require_consent,
        "anonymize": p.anonymize,
        "secrets": match p.secrets { SecretsMode::Redact => "redact", SecretsMode::Reject => "reject" },
        "pseudonyms": store.with_privacy_key(|k| k.is_some()),
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyBody {
    #[serde(default)]
    require_consent: Option<bool>,
    #[serde(default)]
    anonymize: Option<bool>,
    #[serde(default)]
    secrets: Option<SecretsMode>,
}

/// `/v1/privacy/policy`: GET, or PUT any of `require_consent`, `anonymize`,
/// `secrets` (`redact` | `reject`); fields left out keep their value.
pub async fn policy_route<B: Backend>(store: &Store<B>, req: &Request<'_>, now: Millis) -> Result<Value> {
    match req.method {
        "GET" => {
            let p = store.read(|e| e.privacy().policy).await?;
            Ok(policy_json(store, &p))
        }
        "PUT" => {
            let b: PolicyBody = parse_json(req.body)?;
            let mut p = store.read(|e| e.privacy().policy).await?;
            p.require_consent = b.require_consent.unwrap_or(p.require_consent);
            p.anonymize = b.anonymize.unwrap_or(p.anonymize);
            p.secrets = b.secrets.unwrap_or(p.secrets);
            match store.apply(Op::PrivacySet { policy: p }, now).await? {
                Applied::Privacy(p) => Ok(policy_json(store, &p)),
                other => Err(Error::Internal { detail: format!("policy set returned {other:?}") }),
            }
        }
        other => Err(Error::MethodNotAllowed { method: other.to_owned() }),
    }
}

/// Other fields (a client's note, AMS-style extras) are ignored: the
/// consent is the one flag.
#[derive(Deserialize)]
struct ConsentBody {
    long_term: bool,
}

async fn revoke<B: Backend>(store: &Store<B>, user_id: &str, now: Millis) -> Result<Value> {
    match store.apply(Op::ConsentRevoke { user_id: user_id.to_owned(), session_user_id: None }, now).await? {
        Applied::ConsentRevoked { had_consent, memories, episodes, .. } => Ok(json!({
            "user_id": user_id,
            "long_term": false,
            "had_consent": had_consent,
            "revoked_at": format_rfc3339(now),
            "erased": { "memories": memories, "episodes": episodes },
        })),
        other => Err(Error::Internal { detail: format!("consent revoke returned {other:?}") }),
    }
}

/// `/v1/consent/{user_id}`: PUT `{"long_term": true}` grants (false
/// revokes), GET reads (`long_term: false` when there is no consent), DELETE revokes and erases the user's long-term
/// memories and episodes, answering the counts.
pub async fn consent_route<B: Backend>(store: &Store<B>, req: &Request<'_>, user_id: &str, actor: &str, now: Millis) -> Result<Value> {
    validate_id("user_id", user_id)?;
    match req.method {
        "PUT" => {
            let b: ConsentBody = parse_json(req.body)?;
            if !b.long_term {
                return revoke(store, user_id, now).await;
            }
            match store.apply(Op::ConsentGrant { user_id: user_id.to_owned(), granted_by: actor.to_owned() }, now).await? {
                Applied::Consent { record, .. } => Ok(json!({
                    "user_id": user_id, "long_term": true, "granted_at": format_rfc3339(record.granted_at), "granted_by": record.granted_by,
                })),
                other => Err(Error::Internal { detail: format!("consent grant returned {other:?}") }),
            }
        }
        "GET" => {
            let stored = stored_user_id(store, user_id);
            let record = store.read(|e| e.privacy().consent(&stored).cloned()).await?;
            // No consent is an answer, not a missing resource: a status
            // read before a grant or after a revoke is 200 `long_term: false`.
            Ok(match record {
                Some(record) => json!({ "user_id": user_id, "long_term": true, "granted_at": format_rfc3339(record.granted_at), "granted_by": record.granted_by }),
                None => json!({ "user_id": user_id, "long_term": false }),
            })
        }
        "DELETE" => revoke(store, user_id, now).await,
        other => Err(Error::MethodNotAllowed { method: other.to_owned() }),
    }
}
