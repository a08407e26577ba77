//! Ledger records and result codes, with TigerBeetle's semantics.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::amount::Units;
use crate::core::time::Millis;

/// An asset with a fixed number of decimal places.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Asset {
    pub code: String,
    pub scale: u32,
}

/// Balance invariants an account enforces on every transfer, pending or not.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccountFlags {
    /// Debits (posted + pending) may never exceed posted credits: a wallet.
    #[serde(default)]
    pub debits_must_not_exceed_credits: bool,
    /// Credits (posted + pending) may never exceed posted debits.
    #[serde(default)]
    pub credits_must_not_exceed_debits: bool,
}

/// An account of one agent in one asset. Balances are cached here and
/// recomputed from the transfers by `reconcile`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Account {
    pub id: String,
    pub asset: String,
    #[serde(default)]
    pub flags: AccountFlags,
    /// Procedural guard: no single transfer debiting this account may be
    /// larger ("never bet more than 50 USDC").
    #[serde(default)]
    pub max_transfer: Option<Units>,
    pub debits_posted: Units,
    pub credits_posted: Units,
    pub debits_pending: Units,
    pub credits_pending: Units,
    pub created_at: Millis,
}

impl Account {
    /// `credits_posted - debits_posted`, signed.
    pub fn balance(&self) -> i128 {
        self.credits_posted as i128 - self.debits_posted as i128
    }
}

/// Where a transfer is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TransferState {
    /// A single-phase transfer, posted when created.
    Posted,
    /// A two-phase transfer holding funds.
    Pending,
    /// A pending transfer that was posted (possibly for less).
    PendingPosted,
    /// A pending transfer that was voided.
    PendingVoided,
    /// A pending transfer whose timeout ran out.
    PendingExpired,
}

impl TransferState {
    /// The name used in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            TransferState::Posted => "posted",
            TransferState::Pending => "pending",
            TransferState::PendingPosted => "pending_posted",
            TransferState::PendingVoided => "pending_voided",
            TransferState::PendingExpired => "pending_expired",
        }
    }
}

/// A transfer's fields, with the amount as `A`: the caller's decimal string
/// in a request ([`TransferRequest`]), minor units once converted
/// ([`TransferInput`]). Equality of these fields decides `exists` versus
/// `exists_with_different_*` on a retry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransferSpec<A> {
    pub id: String,
    pub debit_account: String,
    pub credit_account: String,
    pub amount: A,
    #[serde(default)]
    pub pending: bool,
    #[serde(default)]
    pub timeout_seconds: Option<u64>,
    /// Chains this transfer to the next one: the chain applies all or nothing.
    #[serde(default)]
    pub linked: bool,
    #[serde(default)]
    #[serde(serialize_with = "crate::core::exact_json::option_map")]
    pub metadata: Option<Map<String, Value>>,
}

/// A transfer as a client sends it: the amount is a decimal string such as
/// `"12.50"`, converted with the account's scale inside `apply`.
pub type TransferRequest = TransferSpec<String>;

/// A transfer with its amount in minor units.
pub type TransferInput = TransferSpec<Units>;

impl<A> TransferSpec<A> {
    /// The same transfer with another representation of its amount.
    pub fn with_amount<B>(&self, amount: B) -> TransferSpec<B> {
        TransferSpec {
            id: self.id.clone(),
            debit_account: self.debit_account.clone(),
            credit_account: self.credit_account.clone(),
            amount,
            pending: self.pending,
            timeout_seconds: self.timeout_seconds,
            linked: self.linked,
            metadata: self.metadata.clone(),
        }
    }
}

/// A stored transfer: accounts by their interned index, so a transfer costs
/// no copy of the account names. Its snapshot form names them
/// ([`super::snapshot`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Transfer {
    pub id: super::TransferId,
    pub debit: u32,
    pub credit: u32,
    pub amount: Units,
    pub pending: bool,
    pub linked: bool,
    pub timeout_seconds: Option<u64>,
    pub metadata: Option<Map<String, Value>>,
    pub created_at: Millis,
    pub state: TransferState,
    /// For a posted pending transfer: the amount actually posted.
    pub posted_amount: Option<Units>,
    /// When a pending transfer was posted, voided or expired.
    pub resolved_at: Option<Millis>,
}

impl Transfer {
    /// When a pending transfer expires, if it has a timeout.
    pub fn expires_at(&self) -> Option<Millis> {
        self.timeout_seconds.map(|t| self.created_at.saturating_add(t.saturating_mul(1000)))
    }
}

crate::core::error::codes! {
    /// The outcome of one transfer in a batch, or of a post/void. Codes are
    /// TigerBeetle's `CreateTransferResult` names where one exists.
    TransferResult {
        /// Applied now.
        Created => "created",
        /// Applied before with identical fields: nothing happened again.
        Exists => "exists",
        ExistsWithDifferentDebitAccount => "exists_with_different_debit_account",
        ExistsWithDifferentCreditAccount => "exists_with_different_credit_account",
        ExistsWithDifferentAmount => "exists_with_different_amount",
        /// `pending` or `linked` differ.
        ExistsWithDifferentFlags => "exists_with_different_flags",
        ExistsWithDifferentTimeout => "exists_with_different_timeout",
        ExistsWithDifferentMetadata => "exists_with_different_metadata",
        /// Another transfer of its linked chain failed.
        LinkedEventFailed => "linked_event_failed",
        /// The batch ended inside a linked chain.
        LinkedEventChainOpen => "linked_event_chain_open",
        AccountsMustBeDifferent => "accounts_must_be_different",
        DebitAccountNotFound => "debit_account_not_found",
        CreditAccountNotFound => "credit_account_not_found",
        AccountsMustHaveTheSameAsset => "accounts_must_have_the_same_asset",
        /// A timeout needs `pending`.
        TimeoutReservedForPendingTransfer => "timeout_reserved_for_pending_transfer",
        /// The debit account's `debits_must_not_exceed_credits` would break.
        ExceedsCredits => "exceeds_credits",
        /// The credit account's `credits_must_not_exceed_debits` would break.
        ExceedsDebits => "exceeds_debits",
        /// Larger than the debit account's `max_transfer` guard.
        ExceedsMaxTransfer => "exceeds_max_transfer",
        OverflowsDebits => "overflows_debits",
        OverflowsCredits => "overflows_credits",
        /// The ledger holds [`crate::core::limits::TRANSFERS_MAX`] transfers.
        LedgerFull => "ledger_full",
        PendingTransferNotFound => "pending_transfer_not_found",
        PendingTransferNotPending => "pending_transfer_not_pending",
        PendingTransferAlreadyPosted => "pending_transfer_already_posted",
        PendingTransferAlreadyVoided => "pending_transfer_already_voided",
        PendingTransferExpired => "pending_transfer_expired",
        ExceedsPendingTransferAmount => "exceeds_pending_transfer_amount",
    }
}

impl TransferResult {
    /// Whether the transfer now stands as asked (created or already there).
    pub fn is_ok(self) -> bool {
        matches!(self, TransferResult::Created | TransferResult::Exists)
    }
}

/// One account's balances as seen from outside (a wallet service's report),
/// for statement reconciliation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatementLine {
    pub account: String,
    pub balance: i128,
}

/// A disagreement found by `reconcile` or a statement reconciliation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    pub account: String,
    pub field: &'static str,
    pub expected: i128,
    pub found: i128,
}
