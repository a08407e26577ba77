//! The ledger's part of a snapshot, and its verified reload: indexes are
//! rebuilt, the journal's hash chain is recomputed against the stored head,
//! and cached balances must reconcile with the transfers.

use serde::{Deserialize, Serialize};

use super::journal::{Event, Journal};
use super::types::{Account, Asset, Transfer, TransferState};
use super::{Intent, Ledger};
use crate::core::error::{Error, Result};
use crate::core::limits;

/// Serialized form of a [`Ledger`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LedgerSnapshot {
    pub assets: Vec<Asset>,
    pub accounts: Vec<Account>,
    pub transfers: Vec<Transfer>,
    pub events: Vec<Event>,
    /// Hex BLAKE3 head of the journal when the snapshot was taken.
    pub journal_head: String,
    pub intents: Vec<Intent>,
}

fn corrupt(reason: impl Into<String>) -> Error {
    Error::SnapshotCorrupt { reason: format!("ledger: {}", reason.into()) }
}

impl Ledger {
    /// The state as a snapshot body part.
    pub fn to_snapshot(&self) -> LedgerSnapshot {
        LedgerSnapshot {
            assets: self.assets.values().cloned().collect(),
            accounts: self.accounts.values().cloned().collect(),
            transfers: self.transfers.clone(),
            events: self.journal.events().to_vec(),
            journal_head: self.journal.head_hex(),
            intents: self.intents.values().cloned().collect(),
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
        for a in s.accounts {
            if !l.assets.contains_key(&a.asset) {
                return Err(corrupt(format!("account {:?} has unknown asset", a.id)));
            }
            l.accounts.insert(a.id.clone(), a);
        }
        for (i, t) in s.transfers.iter().enumerate() {
            if l.by_id.insert(t.input.id.clone(), i as u32).is_some() {
                return Err(corrupt(format!("duplicate transfer {:?}", t.input.id)));
            }
            if !l.accounts.contains_key(&t.input.debit_account) || !l.accounts.contains_key(&t.input.credit_account) {
                return Err(corrupt(format!("transfer {:?} names an unknown account", t.input.id)));
            }
            if t.state == TransferState::Pending {
                if let Some(at) = t.expires_at() {
                    l.pending_expiry.insert((at, i as u32));
                }
            }
        }
        let transfers = &s.transfers;
        let journal = Journal::rebuild(s.events, |i| transfers.get(i as usize).map(|t| t.input.clone()))
            .ok_or_else(|| corrupt("an event names an unknown transfer"))?;
        // An empty ledger may carry no head at all (snapshots from before the ledger).
        let empty = journal.len() == 0 && s.journal_head.is_empty();
        if !empty && journal.head_hex() != s.journal_head {
            return Err(corrupt("journal hash chain does not match its head: an entry was lost or altered"));
        }
        for (e, ev) in journal.events().iter().enumerate() {
            let t = &s.transfers[ev.transfer as usize].input;
            for account in [&t.debit_account, &t.credit_account] {
                l.history.entry(account.clone()).or_default().push(e as u32);
            }
        }
        l.transfers = s.transfers;
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
