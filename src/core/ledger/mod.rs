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
pub mod batch;
pub mod id;
pub mod intents;
mod journal;
pub mod ops;
mod snapshot;
pub mod types;

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use amount::Units;
pub use intents::Intent;
pub use journal::{Event, EventKind};
pub use ops::{LedgerApplied, LedgerOp};
pub use types::{TransferRequest, TransferResult};
pub use snapshot::{LedgerSnapshot, LedgerSnapshotRef};
pub use batch::TransferColumns;
pub use id::TransferId;
use id::IdBuild;
use types::{Account, AccountFlags, Asset, Difference, StatementLine, Transfer, TransferInput, TransferState};

use crate::core::error::{ConflictCode, Error, Result};
use crate::core::limits;
use crate::core::time::Millis;

/// A page of an account's history: entries and the cursor of the next page.
pub type AccountHistoryPage<'a> = (Vec<(u32, &'a Event, &'a Transfer)>, Option<u32>);

/// The ledger of one tenant.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ledger {
    assets: BTreeMap<String, Asset>,
    /// Accounts in creation order: an account's position is its index, the
    /// interned name typed batches address it by. Indices never change, so
    /// snapshots keep this order.
    accounts: Vec<Account>,
    /// The name table: account id to index.
    account_ix: HashMap<String, u32, IdBuild>,
    /// Every transfer ever created, in creation order.
    transfers: Vec<Transfer>,
    by_id: HashMap<TransferId, u32, IdBuild>,
    /// (expires_at, transfer index) of pending transfers with a timeout.
    pending_expiry: BTreeSet<(Millis, u32)>,
    journal: journal::Journal,
    /// Journal event indices touching each account (by account index), in order.
    events_by_account: Vec<Vec<u32>>,
    intents: BTreeMap<String, Intent>,
}

/// An account a transfer names: by index, or a name the ledger does not
/// know (a per-transfer result, `*_account_not_found`, not an error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AccountRef {
    Known(u32),
    Unknown(String),
}

impl AccountRef {
    fn index(&self) -> Option<u32> {
        match self {
            AccountRef::Known(ix) => Some(*ix),
            AccountRef::Unknown(_) => None,
        }
    }
}

/// A transfer ready to apply: its fields with its accounts resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    pub id: TransferId,
    pub debit: AccountRef,
    pub credit: AccountRef,
    pub amount: Units,
    pub pending: bool,
    pub linked: bool,
    pub timeout_seconds: Option<u64>,
    pub metadata: Option<serde_json::Map<String, serde_json::Value>>,
}

/// Saved state to undo a failed linked chain.
struct ChainMark {
    transfers_len: usize,
    journal: journal::Mark,
    accounts: Vec<(u32, Account)>,
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
        if let Some(a) = self.account(id) {
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
        self.account_ix.insert(id.to_owned(), self.accounts.len() as u32);
        self.accounts.push(account.clone());
        self.events_by_account.push(Vec::new());
        Ok(account)
    }

    /// Resolves the account names of `t` against the name table.
    pub fn prepare(&self, t: TransferInput) -> Prepared {
        let resolve = |name: String| match self.account_ix.get(&name) {
            Some(&ix) => AccountRef::Known(ix),
            None => AccountRef::Unknown(name),
        };
        Prepared {
            id: TransferId::parse(&t.id),
            debit: resolve(t.debit_account),
            credit: resolve(t.credit_account),
            amount: t.amount,
            pending: t.pending,
            linked: t.linked,
            timeout_seconds: t.timeout_seconds,
            metadata: t.metadata,
        }
    }

    /// Applies a batch. Each transfer stands alone unless `linked` chains it
    /// to the next; a chain applies all or nothing. One result per input.
    pub fn create_transfers(&mut self, inputs: &[TransferInput], now: Millis) -> Vec<TransferResult> {
        let prepared = inputs.iter().map(|t| self.prepare(t.clone())).collect();
        self.create_prepared(prepared, now)
    }

    /// [`Ledger::create_transfers`] on transfers whose accounts are resolved;
    /// each is moved into the ledger rather than copied.
    pub fn create_prepared(&mut self, inputs: Vec<Prepared>, now: Millis) -> Vec<TransferResult> {
        let n = inputs.len();
        let mut results = Vec::with_capacity(n);
        let mut inputs = inputs.into_iter().peekable();
        let mut chain: Vec<Prepared> = Vec::new();
        while let Some(p) = inputs.next() {
            if !p.linked && chain.is_empty() {
                results.push(self.create_one(p, now));
                continue;
            }
            let closes = !p.linked;
            chain.push(p);
            if !closes {
                if inputs.peek().is_none() {
                    // The last transfer is linked: the chain never closes.
                    results.extend(std::iter::repeat_n(TransferResult::LinkedEventChainOpen, chain.len()));
                }
                continue;
            }
            let mark = self.mark(&chain);
            let len = chain.len();
            let mut failed = None;
            for (k, p) in chain.drain(..).enumerate() {
                let r = self.create_one(p, now);
                if !r.is_ok() {
                    failed = Some((k, r));
                    break;
                }
                results.push(r);
            }
            if let Some((k, r)) = failed {
                self.rollback(mark);
                results.truncate(results.len() - k);
                results.extend((0..len).map(|j| if j == k { r } else { TransferResult::LinkedEventFailed }));
            }
            chain.clear();
        }
        results
    }

    fn mark(&self, chain: &[Prepared]) -> ChainMark {
        let mut accounts: Vec<(u32, Account)> = Vec::new();
        for p in chain {
            for ix in [p.debit.index(), p.credit.index()].into_iter().flatten() {
                if !accounts.iter().any(|(x, _)| *x == ix) {
                    accounts.push((ix, self.accounts[ix as usize].clone()));
                }
            }
        }
        ChainMark { transfers_len: self.transfers.len(), journal: self.journal.mark(), accounts }
    }

    fn rollback(&mut self, mark: ChainMark) {
        for t in self.transfers.drain(mark.transfers_len..) {
            self.by_id.remove(&t.id);
        }
        let len = mark.transfers_len as u32;
        self.pending_expiry.retain(|(_, i)| *i < len);
        let first_event = mark.journal.events_len as u32;
        for (ix, _) in &mark.accounts {
            let h = &mut self.events_by_account[*ix as usize];
            while h.last().is_some_and(|&e| e >= first_event) {
                h.pop();
            }
        }
        self.journal.rollback(mark.journal);
        for (ix, a) in mark.accounts {
            self.accounts[ix as usize] = a;
        }
    }

    fn create_one(&mut self, p: Prepared, now: Millis) -> TransferResult {
        use TransferResult as R;
        // One hash and probe serves both the idempotency check and the insert.
        let vacant = match self.by_id.entry(p.id.clone()) {
            Entry::Vacant(v) => v,
            Entry::Occupied(o) => {
                let old = &self.transfers[*o.get() as usize];
                return if p.debit != AccountRef::Known(old.debit) {
                    R::ExistsWithDifferentDebitAccount
                } else if p.credit != AccountRef::Known(old.credit) {
                    R::ExistsWithDifferentCreditAccount
                } else if old.amount != p.amount {
                    R::ExistsWithDifferentAmount
                } else if old.pending != p.pending || old.linked != p.linked {
                    R::ExistsWithDifferentFlags
                } else if old.timeout_seconds != p.timeout_seconds {
                    R::ExistsWithDifferentTimeout
                } else if old.metadata != p.metadata {
                    R::ExistsWithDifferentMetadata
                } else {
                    R::Exists
                };
            }
        };
        if p.debit == p.credit {
            return R::AccountsMustBeDifferent;
        }
        let AccountRef::Known(di) = p.debit else { return R::DebitAccountNotFound };
        let AccountRef::Known(ci) = p.credit else { return R::CreditAccountNotFound };
        let (dr, cr) = (&self.accounts[di as usize], &self.accounts[ci as usize]);
        if dr.asset != cr.asset {
            return R::AccountsMustHaveTheSameAsset;
        }
        if p.timeout_seconds.is_some() && !p.pending {
            return R::TimeoutReservedForPendingTransfer;
        }
        if self.transfers.len() >= limits::TRANSFERS_MAX {
            return R::LedgerFull;
        }
        if dr.max_transfer.is_some_and(|max| p.amount > max) {
            return R::ExceedsMaxTransfer;
        }
        // Compute the new balances on copies of the four numbers, check the
        // flags, and only then write: no clone of either account.
        let mut d = [dr.debits_posted, dr.debits_pending, dr.credits_posted];
        let mut c = [cr.credits_posted, cr.credits_pending, cr.debits_posted];
        let slot = usize::from(p.pending);
        let Some(nd) = d[slot].checked_add(p.amount) else { return R::OverflowsDebits };
        let Some(nc) = c[slot].checked_add(p.amount) else { return R::OverflowsCredits };
        d[slot] = nd;
        c[slot] = nc;
        if dr.flags.debits_must_not_exceed_credits && d[0].saturating_add(d[1]) > d[2] {
            return R::ExceedsCredits;
        }
        if cr.flags.credits_must_not_exceed_debits && c[0].saturating_add(c[1]) > c[2] {
            return R::ExceedsDebits;
        }
        let a = &mut self.accounts[di as usize];
        (a.debits_posted, a.debits_pending) = (d[0], d[1]);
        let a = &mut self.accounts[ci as usize];
        (a.credits_posted, a.credits_pending) = (c[0], c[1]);
        let index = self.transfers.len() as u32;
        vacant.insert(index);
        let transfer = Transfer {
            id: p.id,
            debit: di,
            credit: ci,
            amount: p.amount,
            pending: p.pending,
            linked: p.linked,
            timeout_seconds: p.timeout_seconds,
            metadata: p.metadata,
            created_at: now,
            state: if p.pending { TransferState::Pending } else { TransferState::Posted },
            posted_amount: None,
            resolved_at: None,
        };
        if let Some(at) = transfer.expires_at() {
            self.pending_expiry.insert((at, index));
        }
        let amount = transfer.amount;
        self.transfers.push(transfer);
        self.record(EventKind::Created, index, amount, now);
        R::Created
    }

    fn record(&mut self, kind: EventKind, index: u32, amount: Units, at: Millis) {
        let t = &self.transfers[index as usize];
        let (dr, cr) = (&self.accounts[t.debit as usize], &self.accounts[t.credit as usize]);
        let mut buf = [0; 39];
        let event_index = self.journal.append(Event { kind, transfer: index, amount, at }, [t.id.as_str(&mut buf), &dr.id, &cr.id]);
        for ix in [t.debit, t.credit] {
            self.events_by_account[ix as usize].push(event_index);
        }
    }

    /// The pending transfer `id`, if it can still be resolved at `now`.
    fn resolvable(&self, id: &str, now: Millis) -> std::result::Result<u32, TransferResult> {
        let &i = self.by_id.get(&TransferId::parse(id)).ok_or(TransferResult::PendingTransferNotFound)?;
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
        let t = &self.transfers[i as usize];
        let (di, ci, held) = (t.debit as usize, t.credit as usize, t.amount);
        let posted = amount.unwrap_or(held);
        if posted > held {
            return TransferResult::ExceedsPendingTransferAmount;
        }
        let Some(d) = self.accounts[di].debits_posted.checked_add(posted) else { return TransferResult::OverflowsDebits };
        let Some(c) = self.accounts[ci].credits_posted.checked_add(posted) else { return TransferResult::OverflowsCredits };
        let dr = &mut self.accounts[di];
        dr.debits_pending -= held;
        dr.debits_posted = d;
        let cr = &mut self.accounts[ci];
        cr.credits_pending -= held;
        cr.credits_posted = c;
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
                self.transfers[i as usize].id.to_string()
            })
            .collect()
    }

    fn release(&mut self, i: u32, state: TransferState, now: Millis) {
        let t = &self.transfers[i as usize];
        let (di, ci, amount) = (t.debit as usize, t.credit as usize, t.amount);
        self.accounts[di].debits_pending -= amount;
        self.accounts[ci].credits_pending -= amount;
        self.resolve(i, state, None, now);
        let kind = if state == TransferState::PendingExpired { EventKind::Expired } else { EventKind::Voided };
        self.record(kind, i, amount, now);
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
        fn add(sums: &mut [[Units; 4]], overflow: &mut bool, account: u32, field: usize, amount: Units) {
            // Indices are checked when a transfer is created or loaded.
            let Some(slot) = sums.get_mut(account as usize).map(|s| &mut s[field]) else { return };
            match slot.checked_add(amount) {
                Some(v) => *slot = v,
                None => *overflow = true,
            }
        }
        let mut sums: Vec<[Units; 4]> = vec![[0; 4]; self.accounts.len()];
        let mut overflow = false;
        for t in &self.transfers {
            let (dr, cr) = (t.debit, t.credit);
            let (amount, debit, credit) = match t.state {
                TransferState::Posted => (t.amount, 0, 1),
                TransferState::Pending => (t.amount, 2, 3),
                TransferState::PendingPosted => (t.posted_amount.unwrap_or(0), 0, 1),
                TransferState::PendingVoided | TransferState::PendingExpired => continue,
            };
            add(&mut sums, &mut overflow, dr, debit, amount);
            add(&mut sums, &mut overflow, cr, credit, amount);
        }
        const FIELDS: [&str; 4] = ["debits_posted", "credits_posted", "debits_pending", "credits_pending"];
        let mut diffs = Vec::new();
        for (a, expected) in self.accounts.iter().zip(sums) {
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
            .filter_map(|l| match self.account(&l.account) {
                None => Some(Difference { account: l.account.clone(), field: "missing_account", expected: l.balance, found: 0 }),
                Some(a) if a.balance() != l.balance => Some(Difference { account: l.account.clone(), field: "balance", expected: l.balance, found: a.balance() }),
                Some(_) => None,
            })
            .collect())
    }

    /// One page of an account's history: events at or after `cursor` (an
    /// event sequence number) whose time is in `[since, until)`, oldest first,
    /// with the cursor of the next page.
    pub fn account_history(&self, account: &str, cursor: u32, limit: usize, since: Option<Millis>, until: Option<Millis>) -> Result<AccountHistoryPage<'_>> {
        let Some(ix) = self.account_index(account) else {
            return Err(Error::not_found("account", account));
        };
        let limit = limit.clamp(1, limits::ACCOUNT_HISTORY_LIMIT_MAX);
        let all = &self.events_by_account[ix as usize];
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
        self.account_index(id).map(|ix| &self.accounts[ix as usize])
    }

    /// The interned index of account `id`: its position in creation order.
    pub fn account_index(&self, id: &str) -> Option<u32> {
        self.account_ix.get(id).copied()
    }

    /// The account at interned index `ix`.
    pub fn account_at(&self, ix: u32) -> Option<&Account> {
        self.accounts.get(ix as usize)
    }

    /// The id of the account at index `ix` (indices held by transfers are
    /// always valid; any other answers "").
    pub fn account_name(&self, ix: u32) -> &str {
        self.accounts.get(ix as usize).map_or("", |a| a.id.as_str())
    }

    /// Every account, in index order.
    pub fn accounts(&self) -> &[Account] {
        &self.accounts
    }

    pub fn transfer(&self, id: &str) -> Option<&Transfer> {
        self.by_id.get(&TransferId::parse(id)).map(|&i| &self.transfers[i as usize])
    }

    /// The scale of the asset of `account`.
    pub fn account_scale(&self, account: &str) -> Option<u32> {
        self.account(account).and_then(|a| self.assets.get(&a.asset)).map(|a| a.scale)
    }

    /// When the next pending transfer expires.
    pub fn next_expiry(&self) -> Option<Millis> {
        self.pending_expiry.first().map(|(at, _)| *at)
    }

    /// Number of accounts.
    pub fn account_count(&self) -> usize {
        self.accounts.len()
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
