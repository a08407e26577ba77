//! Per-tenant quotas: long-term records, bytes in storage, ledger accounts.
//!
//! Checked before a write is applied, against what the tenant holds plus
//! what the request adds, so a refused write changes nothing. Deletes and
//! forgets always pass: a tenant over its bytes quota must be able to shrink.

use serde_json::Value;

use crate::core::error::{Error, QuotaCode, Result};
use crate::core::limits;
use crate::store::{Backend, Store};

/// One tenant's quotas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quotas {
    /// Long-term records held.
    pub records: u64,
    /// Snapshot plus op-log bytes.
    pub bytes: u64,
    /// Ledger accounts held.
    pub ledger_accounts: u64,
}

impl Default for Quotas {
    fn default() -> Quotas {
        Quotas { records: limits::TENANT_RECORDS_DEFAULT, bytes: limits::TENANT_BYTES_DEFAULT, ledger_accounts: limits::TENANT_LEDGER_ACCOUNTS_DEFAULT }
    }
}

impl Quotas {
    /// The ceiling each quota may be configured up to.
    pub const CEILINGS: Quotas = Quotas { records: limits::LTM_RECORDS_MAX as u64, bytes: limits::SNAPSHOT_BYTES_MAX as u64, ledger_accounts: limits::ACCOUNTS_MAX as u64 };
}

fn refuse(quota: QuotaCode, used: u64, limit: u64) -> Error {
    Error::QuotaExceeded { quota, used, limit }
}

/// Refuses a write that would take the tenant past a quota.
pub async fn check<B: Backend>(store: &Store<B>, method: &str, path: &str, body: &[u8], q: &Quotas) -> Result<()> {
    let rest = path.strip_prefix("/v1/").unwrap_or(path).trim_end_matches('/');
    // A sharded tenant's internal steps (`/_shard/...`) are reads, or
    // deletes that free what the quota counts.
    if method == "GET" || method == "DELETE" || rest == "long-term-memory/forget" || rest == "long-term-memory/search" || path.starts_with("/_shard/") {
        return Ok(());
    }
    let stats = store.stats().await;
    let used = stats.snapshot_bytes.saturating_add(stats.log_bytes_since_snapshot);
    if used.saturating_add(body.len() as u64) > q.bytes {
        return Err(refuse(QuotaCode::Bytes, used, q.bytes));
    }
    match (method, rest) {
        ("POST", "long-term-memory") => {
            let adding = serde_json::from_slice::<Value>(body).ok().and_then(|v| v.get("memories").and_then(Value::as_array).map(Vec::len)).unwrap_or(0) as u64;
            let held = store.read(|e| e.longterm().len() as u64).await?;
            if held.saturating_add(adding) > q.records {
                return Err(refuse(QuotaCode::Records, held, q.records));
            }
        }
        ("POST", "ledger/accounts") => {
            let id = serde_json::from_slice::<Value>(body).ok().and_then(|v| v.get("id").and_then(Value::as_str).map(str::to_owned));
            // Re-creating an existing account is idempotent and adds nothing.
            let (held, exists) = store.read(|e| (e.ledger().account_count() as u64, id.as_deref().is_some_and(|id| e.ledger().account_index(id).is_some()))).await?;
            if !exists && held >= q.ledger_accounts {
                return Err(refuse(QuotaCode::LedgerAccounts, held, q.ledger_accounts));
            }
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::tests::Api;

    #[test]
    fn each_quota_refuses_with_its_code_and_changes_nothing() {
        let mut api = Api::new();
        let q = Quotas { records: 2, bytes: 1 << 20, ledger_accounts: 1 };
        fn run(api: &Api, q: &Quotas, method: &str, path: &str, body: &str) -> Result<()> {
            crate::store::now_or_never(check(&api.store, method, path, body.as_bytes(), q)).unwrap()
        }
        let two = r#"{"memories":[{"text":"a"},{"text":"b"}]}"#;
        assert!(run(&api, &q, "POST", "/v1/long-term-memory/", two).is_ok());
        assert_eq!(api.call("POST", "/v1/long-term-memory/", two).status, 200);
        let e = run(&api, &q, "POST", "/v1/long-term-memory/", r#"{"memories":[{"text":"c"}]}"#).unwrap_err();
        assert_eq!((e.code(), crate::api::status_of(&e)), ("records_quota_exceeded", 403));
        assert!(run(&api, &q, "DELETE", "/v1/long-term-memory", "").is_ok());
        assert!(run(&api, &q, "POST", "/v1/long-term-memory/search", r#"{"text":"a"}"#).is_ok());

        assert_eq!(api.call("POST", "/v1/ledger/assets", r#"{"code":"USD","scale":2}"#).status, 200);
        let acct = r#"{"id":"a","asset":"USD"}"#;
        assert!(run(&api, &q, "POST", "/v1/ledger/accounts", acct).is_ok());
        assert_eq!(api.call("POST", "/v1/ledger/accounts", acct).status, 200);
        assert!(run(&api, &q, "POST", "/v1/ledger/accounts", acct).is_ok(), "an idempotent re-create adds nothing");
        assert_eq!(run(&api, &q, "POST", "/v1/ledger/accounts", r#"{"id":"b","asset":"USD"}"#).unwrap_err().code(), "ledger_accounts_quota_exceeded");

        let tiny = Quotas { bytes: 10, ..q };
        assert_eq!(run(&api, &tiny, "PUT", "/v1/working-memory/s", "{}").unwrap_err().code(), "bytes_quota_exceeded");
    }
}
