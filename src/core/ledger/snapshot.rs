//! The ledger's part of a snapshot, and its verified reload: indexes are
//! rebuilt, the journal's hash chain is recomputed against the stored head,
//! and cached balances must reconcile with the transfers.

use serde::{Deserialize, Serialize};

use super::journal::{Event, Journal};
use super::types::{Account, Asset, Transfer, TransferInput, TransferState};
use super::amount::Units;
use crate::core::time::Millis;
use super::{Intent, Ledger, TransferId};
use crate::core::error::{Error, Result};
use crate::core::limits;

/// A transfer as snapshots store it: accounts by name, so a snapshot reads
/// the same whatever the indices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TransferRecord {
    pub input: TransferInput,
    pub created_at: Millis,
    pub state: TransferState,
    #[serde(default)]
    pub posted_amount: Option<Units>,
    #[serde(default)]
    pub resolved_at: Option<Millis>,
}

/// Serialized form of a [`Ledger`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LedgerSnapshot {
    pub assets: Vec<Asset>,
    pub accounts: Vec<Account>,
    pub transfers: Vec<TransferRecord>,
    pub events: Vec<Event>,
    /// Hex BLAKE3 head of the journal when the snapshot was taken.
    pub journal_head: String,
    pub intents: Vec<Intent>,
}

/// [`LedgerSnapshot`] borrowed from a live ledger: serializes to exactly
/// the same bytes with no copy of a transfer's id or account names (three
/// allocations a transfer in the owned form). Field order and serde shapes
/// must mirror the owned types; a test compares the bytes.
#[derive(Serialize)]
pub struct LedgerSnapshotRef<'a> {
    assets: Vec<&'a Asset>,
    accounts: &'a [Account],
    transfers: TransfersRef<'a>,
    events: &'a [Event],
    journal_head: String,
    intents: Vec<&'a Intent>,
}

pub struct TransfersRef<'a>(&'a Ledger);

impl Serialize for TransfersRef<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let l = self.0;
        s.collect_seq(l.transfers.iter().map(|t| TransferRecordRef {
            input: TransferInputRef {
                id: IdText(&t.id),
                debit_account: &l.accounts[t.debit as usize].id,
                credit_account: &l.accounts[t.credit as usize].id,
                amount: t.amount,
                pending: t.pending,
                timeout_seconds: t.timeout_seconds,
                linked: t.linked,
                metadata: &t.metadata,
            },
            created_at: t.created_at,
            state: t.state,
            posted_amount: t.posted_amount,
            resolved_at: t.resolved_at,
        }))
    }
}

/// Mirrors [`TransferRecord`].
#[derive(Serialize)]
struct TransferRecordRef<'a> {
    input: TransferInputRef<'a>,
    created_at: Millis,
    state: TransferState,
    posted_amount: Option<Units>,
    resolved_at: Option<Millis>,
}

/// Mirrors [`TransferInput`].
#[derive(Serialize)]
struct TransferInputRef<'a> {
    id: IdText<'a>,
    debit_account: &'a str,
    credit_account: &'a str,
    amount: Units,
    pending: bool,
    timeout_seconds: Option<u64>,
    linked: bool,
    #[serde(serialize_with = "crate::core::exact_json::option_map")]
    metadata: &'a Option<serde_json::Map<String, serde_json::Value>>,
}

/// A transfer id as its canonical text, written from a stack buffer.
struct IdText<'a>(&'a TransferId);

impl Serialize for IdText<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.0.as_str(&mut [0; 39]))
    }
}

fn corrupt(reason: impl Into<String>) -> Error {
    Error::SnapshotCorrupt { reason: format!("ledger: {}", reason.into()) }
}

impl Ledger {
    /// The state as a snapshot body part.
    pub fn to_snapshot(&self) -> LedgerSnapshot {
        LedgerSnapshot {
            assets: self.assets.values().cloned().collect(),
            accounts: self.accounts.clone(),
            transfers: self
                .transfers
                .iter()
                .map(|t| TransferRecord {
                    input: TransferInput {
                        id: t.id.to_string(),
                        debit_account: self.accounts[t.debit as usize].id.clone(),
                        credit_account: self.accounts[t.credit as usize].id.clone(),
                        amount: t.amount,
                        pending: t.pending,
                        timeout_seconds: t.timeout_seconds,
                        linked: t.linked,
                        metadata: t.metadata.clone(),
                    },
                    created_at: t.created_at,
                    state: t.state,
                    posted_amount: t.posted_amount,
                    resolved_at: t.resolved_at,
                })
                .collect(),
            events: self.journal.events().to_vec(),
            journal_head: self.journal.head_hex(),
            intents: self.intents.values().cloned().collect(),
        }
    }

    /// The snapshot body part, borrowed (what snapshots are written from).
    pub fn snapshot_ref(&self) -> LedgerSnapshotRef<'_> {
        LedgerSnapshotRef {
            assets: self.assets.values().collect(),
            accounts: &self.accounts,
            transfers: TransfersRef(self),
            events: self.journal.events(),
            journal_head: self.journal.head_hex(),
            intents: self.intents.values().collect(),
        }
    }

    /// Rebuilds and verifies a ledger. A lost, reordered or edited event,
    /// or a cached balance that does not match the transfers, is refused.
    pub fn from_snapshot(s: LedgerSnapshot) -> Result<Ledger> {
        if s.assets.len() > limits::ASSETS_MAX || s.accounts.len() > limits::ACCOUNTS_MAX || s.transfers.len() > limits::TRANSFERS_MAX {
            return Err(corrupt("past the limits"));
        }
        let mut l = Ledger::default();
        for a in s.assets {
            l.assets.insert(a.code.clone(), a);
        }
        // Accounts are stored in index order (older snapshots: sorted by id,
        // from before indices were handed out).
        for a in s.accounts {
            if !l.assets.contains_key(&a.asset) {
                return Err(corrupt(format!("account {:?} has unknown asset", a.id)));
            }
            if l.account_ix.insert(a.id.clone(), l.accounts.len() as u32).is_some() {
                return Err(corrupt(format!("duplicate account {:?}", a.id)));
            }
            l.accounts.push(a);
            l.events_by_account.push(Vec::new());
        }
        let mut transfers = Vec::with_capacity(s.transfers.len());
        for (i, r) in s.transfers.into_iter().enumerate() {
            let t = r.input;
            let id = TransferId::parse(&t.id);
            if l.by_id.insert(id.clone(), i as u32).is_some() {
                return Err(corrupt(format!("duplicate transfer {:?}", t.id)));
            }
            let (Some(debit), Some(credit)) = (l.account_index(&t.debit_account), l.account_index(&t.credit_account)) else {
                return Err(corrupt(format!("transfer {:?} names an unknown account", t.id)));
            };
            let t = Transfer {
                id,
                debit,
                credit,
                amount: t.amount,
                pending: t.pending,
                linked: t.linked,
                timeout_seconds: t.timeout_seconds,
                metadata: t.metadata,
                created_at: r.created_at,
                state: r.state,
                posted_amount: r.posted_amount,
                resolved_at: r.resolved_at,
            };
            if t.state == TransferState::Pending {
                if let Some(at) = t.expires_at() {
                    l.pending_expiry.insert((at, i as u32));
                }
            }
            transfers.push(t);
        }
        let journal = Journal::rebuild(s.events, |i| {
            let t = transfers.get(i as usize)?;
            Some((t.id.clone(), [l.accounts[t.debit as usize].id.as_str(), l.accounts[t.credit as usize].id.as_str()]))
        })
        .ok_or_else(|| corrupt("an event names an unknown transfer"))?;
        // An empty ledger may carry no head at all (snapshots from before the ledger).
        let empty = journal.len() == 0 && s.journal_head.is_empty();
        if !empty && journal.head_hex() != s.journal_head {
            return Err(corrupt("journal hash chain does not match its head: an entry was lost or altered"));
        }
        for (e, ev) in journal.events().iter().enumerate() {
            let t = &transfers[ev.transfer as usize];
            for ix in [t.debit, t.credit] {
                l.events_by_account[ix as usize].push(e as u32);
            }
        }
        l.transfers = transfers;
        l.journal = journal;
        for i in s.intents {
            l.intents.insert(i.key.clone(), i);
        }
        if let Some(d) = l.reconcile().first() {
            return Err(corrupt(format!("account {:?} {} is {} but its transfers sum to {}", d.account, d.field, d.found, d.expected)));
        }
        Ok(l)
    }
}
