//! The ledger's ops: what the engine logs and replays. Amounts travel in ops
//! as the caller's decimal strings and are converted with the account's
//! scale inside `apply`, under the same lock as the write, so a scale can
//! never be looked up in one state and applied in another.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::amount::{parse_amount, Units};
use super::intents::{validate_intent_json, Begun, Intent};
use super::types::{Account, AccountFlags, Asset, Transfer, TransferInput, TransferRequest, TransferResult};
use super::{validate_ledger_id, Ledger};
use crate::core::error::{Error, Rejection, Result};
use crate::core::limits;
use crate::core::time::Millis;

/// A ledger mutation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum LedgerOp {
    CreateAsset { code: String, scale: u32 },
    CreateAccount { id: String, asset: String, flags: AccountFlags, max_transfer: Option<String> },
    CreateTransfers { transfers: Vec<TransferRequest> },
    Post { id: String, amount: Option<String> },
    Void { id: String },
    Expire,
    BeginIntent { key: String, op: String, params: Value },
    CompleteIntent { key: String, outcome: Value },
}

/// What a ledger op did.
#[derive(Debug, Clone, PartialEq)]
pub enum LedgerApplied {
    Asset(Asset),
    Account(Account),
    /// One `(id, result)` per requested transfer, in order.
    Transfers(Vec<(String, TransferResult)>),
    /// A pending transfer after a successful post or void.
    Resolved(Transfer),
    Expired(Vec<String>),
    Intent(Begun),
    IntentCompleted(Intent),
}

impl Ledger {
    /// Applies one op at `now`. On error nothing has changed.
    pub fn apply(&mut self, op: &LedgerOp, now: Millis) -> Result<LedgerApplied> {
        Ok(match op {
            LedgerOp::CreateAsset { code, scale } => LedgerApplied::Asset(self.create_asset(code, *scale)?),
            LedgerOp::CreateAccount { id, asset, flags, max_transfer } => {
                let scale = self.asset(asset).map(|a| a.scale).ok_or_else(|| Error::not_found("asset", asset))?;
                let max = max_transfer.as_deref().map(|m| parse_amount("max_transfer", m, scale)).transpose()?;
                LedgerApplied::Account(self.create_account(id, asset, *flags, max, now)?)
            }
            LedgerOp::CreateTransfers { transfers } => {
                let inputs = self.transfer_inputs(transfers)?;
                let results = self.create_transfers(&inputs, now);
                LedgerApplied::Transfers(inputs.into_iter().map(|t| t.id).zip(results).collect())
            }
            LedgerOp::Post { id, amount } => {
                validate_ledger_id("id", id)?;
                let scale = self.transfer(id).and_then(|t| self.account_scale(&t.input.debit_account)).ok_or_else(|| Error::not_found("transfer", id))?;
                let amount = amount.as_deref().map(|a| parse_amount("amount", a, scale)).transpose()?;
                {
                    let r = self.post(id, amount, now);
                    self.resolved(id, r)?
                }
            }
            LedgerOp::Void { id } => {
                validate_ledger_id("id", id)?;
                {
                    let r = self.void(id, now);
                    self.resolved(id, r)?
                }
            }
            LedgerOp::Expire => LedgerApplied::Expired(self.expire(now)),
            LedgerOp::BeginIntent { key, op, params } => LedgerApplied::Intent(self.begin_intent(key, op, params, now)?),
            LedgerOp::CompleteIntent { key, outcome } => {
                validate_intent_json("outcome", outcome)?;
                LedgerApplied::IntentCompleted(self.complete_intent(key, outcome, now)?)
            }
        })
    }

    fn resolved(&self, id: &str, r: TransferResult) -> Result<LedgerApplied> {
        match r {
            TransferResult::Created => Ok(LedgerApplied::Resolved(self.transfer(id).cloned().ok_or_else(|| Error::Internal { detail: "resolved transfer vanished".into() })?)),
            TransferResult::PendingTransferNotFound => Err(Error::not_found("transfer", id)),
            other => Err(Error::Rejected { code: Rejection::Transfer(other), id: id.to_owned() }),
        }
    }

    /// Validates a batch and converts amounts with each account's scale.
    fn transfer_inputs(&self, transfers: &[TransferRequest]) -> Result<Vec<TransferInput>> {
        if transfers.is_empty() || transfers.len() > limits::TRANSFER_BATCH_MAX {
            return Err(Error::invalid("transfers", format!("must hold 1 to {} transfers", limits::TRANSFER_BATCH_MAX)));
        }
        transfers
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let field = |name: &str| format!("transfers[{i}].{name}");
                validate_ledger_id(&field("id"), &t.id)?;
                validate_ledger_id(&field("debit_account"), &t.debit_account)?;
                validate_ledger_id(&field("credit_account"), &t.credit_account)?;
                if let Some(timeout) = t.timeout_seconds {
                    if timeout == 0 || timeout > limits::PENDING_TIMEOUT_SECONDS_MAX {
                        return Err(Error::invalid(field("timeout_seconds"), format!("must be 1 to {}", limits::PENDING_TIMEOUT_SECONDS_MAX)));
                    }
                }
                if let Some(m) = &t.metadata {
                    let bytes = serde_json::to_vec(m).map(|v| v.len()).unwrap_or(usize::MAX);
                    if bytes > limits::TRANSFER_METADATA_BYTES_MAX {
                        return Err(Error::too_large(field("metadata"), bytes, limits::TRANSFER_METADATA_BYTES_MAX));
                    }
                }
                // An unknown account is a per-transfer result, not a request
                // error: check the amount's form at the widest scale then.
                let scale = self.account_scale(&t.debit_account).or_else(|| self.account_scale(&t.credit_account)).unwrap_or(limits::ASSET_SCALE_MAX);
                let amount: Units = parse_amount(&field("amount"), &t.amount, scale)?;
                Ok(t.with_amount(amount))
            })
            .collect()
    }
}
