//! The ledger's ops: what the engine logs and replays. Amounts travel in ops
//! as the caller's decimal strings and are converted with the account's
//! scale inside `apply`, under the same lock as the write, so a scale can
//! never be looked up in one state and applied in another.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::amount::{parse_amount, Units};
use super::intents::{validate_intent_json, Begun, Intent};
use super::batch::TransferColumns;
use super::types::{Account, AccountFlags, Asset, Transfer, TransferRequest, TransferResult};
use super::{validate_ledger_id, AccountRef, Ledger, Prepared, TransferId};
use crate::core::error::{Error, Rejection, Result};
use crate::core::limits;
use crate::core::time::Millis;

/// A ledger mutation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum LedgerOp {
    CreateAsset { code: String, scale: u32 },
    CreateAccount { id: String, asset: String, flags: AccountFlags, max_transfer: Option<String> },
    CreateTransfers { transfers: Vec<TransferRequest> },
    /// A typed-array batch: accounts by index, ids as 128-bit numbers.
    CreateTransferColumns(TransferColumns),
    Post { id: String, amount: Option<String> },
    Void { id: String },
    Expire,
    BeginIntent {
        key: String,
        op: String,
        #[serde(serialize_with = "crate::core::exact_json::value")]
        params: Value,
    },
    CompleteIntent {
        key: String,
        #[serde(serialize_with = "crate::core::exact_json::value")]
        outcome: Value,
    },
}

/// What a ledger op did.
#[derive(Debug, Clone, PartialEq)]
pub enum LedgerApplied {
    Asset(Asset),
    Account(Account),
    /// One `(id, result)` per requested transfer, in order.
    Transfers(Vec<(String, TransferResult)>),
    /// One result per transfer of a column batch, in order.
    TransferCodes(Vec<TransferResult>),
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
                let ids: Vec<String> = transfers.iter().map(|t| t.id.clone()).collect();
                LedgerApplied::Transfers(ids.into_iter().zip(self.create_prepared(inputs, now)).collect())
            }
            LedgerOp::CreateTransferColumns(cols) => {
                let inputs = self.prepare_columns(cols)?;
                LedgerApplied::TransferCodes(self.create_prepared(inputs, now))
            }
            LedgerOp::Post { id, amount } => {
                validate_ledger_id("id", id)?;
                let scale = self.transfer(id).and_then(|t| self.account_at(t.debit)).and_then(|a| self.asset(&a.asset)).map(|a| a.scale).ok_or_else(|| Error::not_found("transfer", id))?;
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
    /// Field names (`transfers[7].amount`) are formatted only for an error.
    fn transfer_inputs(&self, transfers: &[TransferRequest]) -> Result<Vec<Prepared>> {
        if transfers.is_empty() || transfers.len() > limits::TRANSFER_BATCH_MAX {
            return Err(Error::invalid("transfers", format!("must hold 1 to {} transfers", limits::TRANSFER_BATCH_MAX)));
        }
        transfers
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let named = |name: &'static str| move |e: Error| e.renamed(format!("transfers[{i}].{name}"));
                validate_ledger_id("id", &t.id).map_err(named("id"))?;
                validate_ledger_id("debit_account", &t.debit_account).map_err(named("debit_account"))?;
                validate_ledger_id("credit_account", &t.credit_account).map_err(named("credit_account"))?;
                if let Some(timeout) = t.timeout_seconds {
                    if timeout == 0 || timeout > limits::PENDING_TIMEOUT_SECONDS_MAX {
                        return Err(Error::invalid(format!("transfers[{i}].timeout_seconds"), format!("must be 1 to {}", limits::PENDING_TIMEOUT_SECONDS_MAX)));
                    }
                }
                if let Some(m) = &t.metadata {
                    let bytes = serde_json::to_vec(m).map(|v| v.len()).unwrap_or(usize::MAX);
                    if bytes > limits::TRANSFER_METADATA_BYTES_MAX {
                        return Err(Error::too_large(format!("transfers[{i}].metadata"), bytes, limits::TRANSFER_METADATA_BYTES_MAX));
                    }
                }
                let resolve = |name: &String| match self.account_index(name) {
                    Some(ix) => AccountRef::Known(ix),
                    None => AccountRef::Unknown(name.clone()),
                };
                let (debit, credit) = (resolve(&t.debit_account), resolve(&t.credit_account));
                // An unknown account is a per-transfer result, not a request
                // error: check the amount's form at the widest scale then.
                let scale = [&debit, &credit]
                    .into_iter()
                    .find_map(|r| match r {
                        AccountRef::Known(ix) => self.account_at(*ix).and_then(|a| self.asset(&a.asset)),
                        AccountRef::Unknown(_) => None,
                    })
                    .map_or(limits::ASSET_SCALE_MAX, |a| a.scale);
                let amount: Units = parse_amount("amount", &t.amount, scale).map_err(named("amount"))?;
                Ok(Prepared {
                    id: TransferId::parse(&t.id),
                    debit,
                    credit,
                    amount,
                    pending: t.pending,
                    linked: t.linked,
                    timeout_seconds: t.timeout_seconds,
                    metadata: t.metadata.clone(),
                })
            })
            .collect()
    }
}
