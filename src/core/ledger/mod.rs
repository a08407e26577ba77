//! Exact double-entry ledgers with TigerBeetle's transfer semantics.
//!
//! * Amounts are integer minor units of an asset with a fixed scale; they
//!   enter and leave as decimal strings ([`amount`]). Every sum is checked.
//! * A transfer has a client-chosen id. Retrying it with identical fields
//!   answers `exists` and changes nothing; with a different field it answers
//!   `exists_with_different_<field>`. Linked transfers apply all or nothing.
//! * Pending transfers hold funds until posted (in full or for less), voided,
//!   or expired by the time passed in.
//! * Balances are cached on accounts and recomputed from the transfers by
//!   [`Ledger::reconcile`]. Every change appends an event to a BLAKE3 hash
//!   chain that is verified whenever a snapshot is loaded.
//!
//! Like the rest of the core, nothing here reads a clock: `now` comes in.

pub mod amount;
pub mod intents;
mod journal;
pub mod ops;
mod snapshot;
pub mod types;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use amount::Units;
pub use intents::Intent;
pub use journal::{Event, EventKind};
pub use ops::{LedgerApplied, LedgerOp};
pub use types::{TransferRequest, TransferResult};
pub use snapshot::LedgerSnapshot;
use types::{Account, AccountFlags, Asset, Difference, StatementLine, Transfer, TransferInput, TransferState};

use crate::core::error::{ConflictCode, Error, Result};
use crate::core::limits;
use crate::core::time::Millis;

/// A page of an account's history: entries and the cursor of the next page.
pub type HistoryPage<'a> = (Vec<(u32, &'a Event, &'a Transfer)>, Option<u32>);

/// The ledger of one tenant.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ledger {
    assets: BTreeMap<String, Asset>,
    accounts: BTreeMap<String, Account>,
    /// Every transfer ever created, in creation order.
    transfers: Vec<Transfer>,
    by_id: HashMap<String, u32>,
    /// (expires_at, transfer index) of pending transfers with a timeout.
    pending_expiry: BTreeSet<(Millis, u32)>,
    journal: journal::Journal,
    /// Event indices touching each account, in order.
    history: HashMap<String, Vec<u32>>,
    intents: BTreeMap<String, Intent>,
}

/// Saved state to undo a failed linked chain.
struct ChainMark {
    transfers_len: usize,
    journal: journal::Mark,
    accounts: Vec<Account>,
}

/// Checks a ledger identifier (asset code, account id, transfer id).
pub fn validate_ledger_id(field: &str, id: &str) -> Result<()> {
    if id.is_empty() {
        return Err(Error::invalid(field, "must not be empty"));
    }
    if id.len() > limits::LEDGER_ID_BYTES_MAX {
        return Err(Error::too_large(field, id.len(), limits::LEDGER_ID_BYTES_MAX));
    }
    if id.chars().any(|c| c.is_control() || c == '/') || id == "." || id == ".." {
        return Err(Error::invalid(field, "must not contain control characters or '/', nor be '.' or '..'"));
    }
    Ok(())
}

impl Ledger {
    /// Registers an asset; re-registering it with the same scale is a no-op,
    /// with another scale a conflict.
    pub fn create_asset(&mut self, code: &str, scale: u32) -> Result<Asset> {
        validate_ledger_id("code", code)?;
        if scale > limits::ASSET_SCALE_MAX {
            return Err(Error::invalid("scale", format!("must be 0 to {}", limits::ASSET_SCALE_MAX)));
        }
        if let Some(a) = self.assets.get(code) {
            return if a.scale == scale { Ok(a.clone()) } else { Err(Error::conflict(ConflictCode::AssetExistsWithDifferentScale, code)) };
        }
        if self.assets.len() >= limits::ASSETS_MAX {
            return Err(Error::LimitExceeded { what: "assets".into(), limit: limits::ASSETS_MAX as u64 });
        }
        let asset = Asset { code: code.to_owned(), scale };
        self.assets.insert(code.to_owned(), asset.clone());
        Ok(asset)
    }

    /// Opens an account; re-opening it with identical settings is a no-op.
    pub fn create_account(&mut self, id: &str, asset: &str, flags: AccountFlags, max_transfer: Option<Units>, now: Millis) -> Result<Account> {
        validate_ledger_id("id", id)?;
        if !self.assets.contains_key(asset) {
            return Err(Error::not_found("asset", asset));
        }
        if flags.debits_must_not_exceed_credits && flags.credits_must_not_exceed_debits {
            return Err(Error::invalid("flags", "an account cannot limit both debits and credits"));
        }
        if let Some(a) = self.accounts.get(id) {
            return if a.asset == asset && a.flags == flags && a.max_transfer == max_transfer {
                Ok(a.clone())
            } else {
                Err(Error::conflict(ConflictCode::AccountExistsWithDifferentFields, id))
            };
        }
        if self.accounts.len() >= limits::ACCOUNTS_MAX {
            return Err(Error::LimitExceeded { what: "accounts".into(), limit: limits::ACCOUNTS_MAX as u64 });
        }
        let account = Account {
            id: id.to_owned(),
            asset: asset.to_owned(),
            flags,
            max_transfer,
            debits_posted: 0,
            credits_posted: 0,
            debits_pending: 0,
            credits_pending: 0,
            created_at: now,
        };
        self.accounts.insert(id.to_owned(), account.clone());
        Ok(account)
    }

    /// Applies a batch. Each transfer stands alone unless `linked` chains it
    /// to the next; a chain applies all or nothing. One result per input.
    pub fn create_transfers(&mut self, inputs: &[TransferInput], now: Millis) -> Vec<TransferResult> {
        let mut results = Vec::with_capacity(inputs.len());
        let mut start = 0;
        while start < inputs.len() {
            let mut end = start;
            while end < inputs.len() && inputs[end].linked {
                end += 1;
            }
            if end == inputs.len() {
                // The last transfer is linked: the chain never closes.
                results.extend(std::iter::repeat_n(TransferResult::LinkedEventChainOpen, end - start));
                break;
            }
            if start == end {
                results.push(self.create_one(&inputs[start], now));
            } else {
                let mark = self.mark(&inputs[start..=end]);
                let mut chain = Vec::with_capacity(end - start + 1);
                for input in &inputs[start..=end] {
                    let r = self.create_one(input, now);
                    chain.push(r);
                    if !r.is_ok() {
                        break;
                    }
                }
                if chain.iter().all(|r| r.is_ok()) {
                    results.extend(chain);
                } else {
                    self.rollback(mark);
                    let failed = chain.len() - 1;
                    results.extend((start..=end).map(|k| if k - start == failed { chain[failed] } else { TransferResult::LinkedEventFailed }));
                }
            }
            start = end + 1;
        }
        results
    }

    fn mark(&self, chain: &[TransferInput]) -> ChainMark {
        let mut accounts = Vec::new();
        for t in chain {
            for id in [&t.debit_account, &t.credit_account] {
                if let Some(a) = self.accounts.get(id.as_str()) {
                    if !accounts.iter().any(|x: &Account| &x.id == id) {
                        accounts.push(a.clone());
                    }
                }
            }
        }
        ChainMark { transfers_len: self.transfers.len(), journal: self.journal.mark(), accounts }
    }

    fn rollback(&mut self, mark: ChainMark) {
        for t in self.transfers.drain(mark.transfers_len..) {
            self.by_id.remove(&t.input.id);
        }
        let len = mark.transfers_len as u32;
        self.pending_expiry.retain(|(_, i)| *i < len);
        let first_event = mark.journal.events_len as u32;
        for a in &mark.accounts {
            if let Some(h) = self.history.get_mut(&a.id) {
                while h.last().is_some_and(|&e| e >= first_event) {
                    h.pop();
                }
                if h.is_empty() {
                    self.history.remove(&a.id);
                }
            }
        }
        self.journal.rollback(mark.journal);
        for a in mark.accounts {
            self.accounts.insert(a.id.clone(), a);
        }
    }

    fn create_one(&mut self, t: &TransferInput, now: Millis) -> TransferResult {
        use TransferResult as R;
        if let Some(&i) = self.by_id.get(&t.id) {
            let old = &self.transfers[i as usize].input;
            return if old.debit_account != t.debit_account {
                R::ExistsWithDifferentDebitAccount
            } else if old.credit_account != t.credit_account {
                R::ExistsWithDifferentCreditAccount
            } else if old.amount != t.amount {
                R::ExistsWithDifferentAmount
            } else if old.pending != t.pending || old.linked != t.linked {
                R::ExistsWithDifferentFlags
            } else if old.timeout_seconds != t.timeout_seconds {
                R::ExistsWithDifferentTimeout
            } else if old.metadata != t.metadata {
                R::ExistsWithDifferentMetadata
            } else {
                R::Exists
            };
        }
        if t.debit_account == t.credit_account {
            return R::AccountsMustBeDifferent;
        }
        let Some(dr) = self.accounts.get(&t.debit_account) else { return R::DebitAccountNotFound };
        let Some(cr) = self.accounts.get(&t.credit_account) else { return R::CreditAccountNotFound };
        if dr.asset != cr.asset {
            return R::AccountsMustHaveTheSameAsset;
        }
        if t.timeout_seconds.is_some() && !t.pending {
            return R::TimeoutReservedForPendingTransfer;
        }
        if self.transfers.len() >= limits::TRANSFERS_MAX {
            return R::LedgerFull;
        }
        if dr.max_transfer.is_some_and(|max| t.amount > max) {
            return R::ExceedsMaxTransfer;
        }
        // Compute the new balances on copies of the four numbers, check the
        // flags, and only then write: no clone of either account.
        let mut d = [dr.debits_posted, dr.debits_pending, dr.credits_posted];
        let mut c = [cr.credits_posted, cr.credits_pending, cr.debits_posted];
        let slot = usize::from(t.pending);
        let Some(nd) = d[slot].checked_add(t.amount) else { return R::OverflowsDebits };
        let Some(nc) = c[slot].checked_add(t.amount) else { return R::OverflowsCredits };
        d[slot] = nd;
        c[slot] = nc;
        if dr.flags.debits_must_not_exceed_credits && d[0].saturating_add(d[1]) > d[2] {
            return R::ExceedsCredits;
        }
        if cr.flags.credits_must_not_exceed_debits && c[0].saturating_add(c[1]) > c[2] {
            return R::ExceedsDebits;
        }
        if let Some(a) = self.accounts.get_mut(&t.debit_account) {
            (a.debits_posted, a.debits_pending) = (d[0], d[1]);
        }
        if let Some(a) = self.accounts.get_mut(&t.credit_account) {
            (a.credits_posted, a.credits_pending) = (c[0], c[1]);
        }
        let index = self.transfers.len() as u32;
        let transfer = Transfer { input: t.clone(), created_at: now, state: if t.pending { TransferState::Pending } else { TransferState::Posted }, posted_amount: None, resolved_at: None };
        if let Some(at) = transfer.expires_at() {
            self.pending_expiry.insert((at, index));
        }
        self.by_id.insert(t.id.clone(), index);
        self.transfers.push(transfer);
        self.record(EventKind::Created, index, t.amount, now);
        R::Created
    }

    fn record(&mut self, kind: EventKind, index: u32, amount: Units, at: Millis) {
        let t = &self.transfers[index as usize].input;
        let event_index = self.journal.append(Event { kind, transfer: index, amount, at }, t);
        for account in [&t.debit_account, &t.credit_account] {
            match self.history.get_mut(account) {
                Some(h) => h.push(event_index),
                None => {
                    self.history.insert(account.clone(), vec![event_index]);
                }
            }
        }
    }

    /// The pending transfer `id`, if it can still be resolved at `now`.
    fn resolvable(&self, id: &str, now: Millis) -> std::result::Result<u32, TransferResult> {
        let &i = self.by_id.get(id).ok_or(TransferResult::PendingTransferNotFound)?;
        let t = &self.transfers[i as usize];
        match t.state {
            TransferState::Posted => Err(TransferResult::PendingTransferNotPending),
            TransferState::PendingPosted => Err(TransferResult::PendingTransferAlreadyPosted),
            TransferState::PendingVoided => Err(TransferResult::PendingTransferAlreadyVoided),
            TransferState::PendingExpired => Err(TransferResult::PendingTransferExpired),
            // Overdue but not swept yet: expired all the same.
            TransferState::Pending if t.expires_at().is_some_and(|at| at <= now) => Err(TransferResult::PendingTransferExpired),
            TransferState::Pending => Ok(i),
        }
    }

    /// Posts a pending transfer, in full or for `amount` (the rest is
    /// released). Changes nothing unless the result is `created`.
    pub fn post(&mut self, id: &str, amount: Option<Units>, now: Millis) -> TransferResult {
        let i = match self.resolvable(id, now) {
            Ok(i) => i,
            Err(r) => return r,
        };
        let t = self.transfers[i as usize].input.clone();
        let posted = amount.unwrap_or(t.amount);
        if posted > t.amount {
            return TransferResult::ExceedsPendingTransferAmount;
        }
        let (mut dr, mut cr) = (self.accounts[&t.debit_account].clone(), self.accounts[&t.credit_account].clone());
        dr.debits_pending -= t.amount;
        cr.credits_pending -= t.amount;
        let Some(d) = dr.debits_posted.checked_add(posted) else { return TransferResult::OverflowsDebits };
        let Some(c) = cr.credits_posted.checked_add(posted) else { return TransferResult::OverflowsCredits };
        dr.debits_posted = d;
        cr.credits_posted = c;
        self.accounts.insert(dr.id.clone(), dr);
        self.accounts.insert(cr.id.clone(), cr);
        self.resolve(i, TransferState::PendingPosted, Some(posted), now);
        self.record(EventKind::Posted, i, posted, now);
        TransferResult::Created
    }

    /// Voids a pending transfer, releasing its hold.
    pub fn void(&mut self, id: &str, now: Millis) -> TransferResult {
        match self.resolvable(id, now) {
            Ok(i) => {
                self.release(i, TransferState::PendingVoided, now);
                TransferResult::Created
            }
            Err(r) => r,
        }
    }

    /// Expires every pending transfer whose timeout ran out at `now`;
    /// returns their ids.
    pub fn expire(&mut self, now: Millis) -> Vec<String> {
        let due: Vec<u32> = self.pending_expiry.iter().take_while(|(at, _)| *at <= now).map(|(_, i)| *i).collect();
        due.into_iter()
            .map(|i| {
                self.release(i, TransferState::PendingExpired, now);
                self.transfers[i as usize].input.id.clone()
            })
            .collect()
    }

    fn release(&mut self, i: u32, state: TransferState, now: Millis) {
        let t = self.transfers[i as usize].input.clone();
        if let Some(dr) = self.accounts.get_mut(&t.debit_account) {
            dr.debits_pending -= t.amount;
        }
        if let Some(cr) = self.accounts.get_mut(&t.credit_account) {
            cr.credits_pending -= t.amount;
        }
        self.resolve(i, state, None, now);
        let kind = if state == TransferState::PendingExpired { EventKind::Expired } else { EventKind::Voided };
        self.record(kind, i, t.amount, now);
    }

    fn resolve(&mut self, i: u32, state: TransferState, posted_amount: Option<Units>, now: Millis) {
        let t = &mut self.transfers[i as usize];
        if let Some(at) = t.expires_at() {
            self.pending_expiry.remove(&(at, i));
        }
        t.state = state;
        t.posted_amount = posted_amount;
        t.resolved_at = Some(now);
    }

    /// Recomputes every balance from the transfers and lists each cached
    /// value that disagrees. An empty list means the books balance.
    pub fn reconcile(&self) -> Vec<Difference> {
        fn add<'a>(sums: &mut HashMap<&'a str, [Units; 4]>, overflow: &mut bool, account: &'a str, field: usize, amount: Units) {
            let slot = &mut sums.entry(account).or_default()[field];
            match slot.checked_add(amount) {
                Some(v) => *slot = v,
                None => *overflow = true,
            }
        }
        let mut sums: HashMap<&str, [Units; 4]> = HashMap::with_capacity(self.accounts.len());
        let mut overflow = false;
        for t in &self.transfers {
            let (dr, cr) = (t.input.debit_account.as_str(), t.input.credit_account.as_str());
            let (amount, debit, credit) = match t.state {
                TransferState::Posted => (t.input.amount, 0, 1),
                TransferState::Pending => (t.input.amount, 2, 3),
                TransferState::PendingPosted => (t.posted_amount.unwrap_or(0), 0, 1),
                TransferState::PendingVoided | TransferState::PendingExpired => continue,
            };
            add(&mut sums, &mut overflow, dr, debit, amount);
            add(&mut sums, &mut overflow, cr, credit, amount);
        }
        const FIELDS: [&str; 4] = ["debits_posted", "credits_posted", "debits_pending", "credits_pending"];
        let mut diffs = Vec::new();
        for a in self.accounts.values() {
            let expected = sums.get(a.id.as_str()).copied().unwrap_or_default();
            let found = [a.debits_posted, a.credits_posted, a.debits_pending, a.credits_pending];
            for k in 0..4 {
                if expected[k] != found[k] {
                    diffs.push(Difference { account: a.id.clone(), field: FIELDS[k], expected: expected[k] as i128, found: found[k] as i128 });
                }
            }
        }
        if overflow {
            diffs.push(Difference { account: String::new(), field: "overflow", expected: 0, found: 1 });
        }
        diffs
    }

    /// Compares posted balances (`credits - debits`) with an outside
    /// statement; unknown accounts are reported too.
    pub fn reconcile_statement(&self, lines: &[StatementLine]) -> Result<Vec<Difference>> {
        if lines.len() > limits::STATEMENT_LINES_MAX {
            return Err(Error::LimitExceeded { what: "statement lines".into(), limit: limits::STATEMENT_LINES_MAX as u64 });
        }
        Ok(lines
            .iter()
            .filter_map(|l| match self.accounts.get(&l.account) {
                None => Some(Difference { account: l.account.clone(), field: "missing_account", expected: l.balance, found: 0 }),
                Some(a) if a.balance() != l.balance => Some(Difference { account: l.account.clone(), field: "balance", expected: l.balance, found: a.balance() }),
                Some(_) => None,
            })
            .collect())
    }

    /// One page of an account's history: events at or after `cursor` (an
    /// event sequence number) whose time is in `[since, until)`, oldest first,
    /// with the cursor of the next page.
    pub fn history(&self, account: &str, cursor: u32, limit: usize, since: Option<Millis>, until: Option<Millis>) -> Result<HistoryPage<'_>> {
        if !self.accounts.contains_key(account) {
            return Err(Error::not_found("account", account));
        }
        let limit = limit.clamp(1, limits::HISTORY_LIMIT_MAX);
        let all = self.history.get(account).map(Vec::as_slice).unwrap_or(&[]);
        let start = all.partition_point(|&e| e < cursor);
        let in_window = |e: u32| {
            let at = self.journal.event(e).at;
            since.is_none_or(|s| at >= s) && until.is_none_or(|u| at < u)
        };
        let mut matching = all[start..].iter().copied().filter(|&e| in_window(e));
        let page: Vec<_> = matching
            .by_ref()
            .take(limit)
            .map(|e| {
                let ev = self.journal.event(e);
                (e, ev, &self.transfers[ev.transfer as usize])
            })
            .collect();
        Ok((page, matching.next()))
    }

    pub fn asset(&self, code: &str) -> Option<&Asset> {
        self.assets.get(code)
    }

    pub fn account(&self, id: &str) -> Option<&Account> {
        self.accounts.get(id)
    }

    pub fn transfer(&self, id: &str) -> Option<&Transfer> {
        self.by_id.get(id).map(|&i| &self.transfers[i as usize])
    }

    /// The scale of the asset of `account`.
    pub fn account_scale(&self, account: &str) -> Option<u32> {
        self.accounts.get(account).and_then(|a| self.assets.get(&a.asset)).map(|a| a.scale)
    }

    /// When the next pending transfer expires.
    pub fn next_expiry(&self) -> Option<Millis> {
        self.pending_expiry.first().map(|(at, _)| *at)
    }

    /// Number of transfers and journal events.
    pub fn counts(&self) -> (usize, usize) {
        (self.transfers.len(), self.journal.len())
    }

    /// The hex BLAKE3 head of the journal: anchor it outside to detect a
    /// rewritten history.
    pub fn journal_head(&self) -> String {
        self.journal.head_hex()
    }
}

#[cfg(test)]
mod tests;
