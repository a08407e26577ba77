//! Transfer batches as columns: the typed-array entry point's input and the
//! op the log stores for it.
//!
//! A batch of n transfers is six little-endian byte columns (ids, debit and
//! credit account indices, amounts, flags, timeouts), so it crosses from JS
//! as a handful of copies, is logged as the same bytes, and is applied
//! without a string lookup per account. Every check runs before anything is
//! applied: a bad batch is refused whole with a typed error.

use serde::{Deserialize, Serialize};

use super::amount::{parse_amount, Units};
use super::{AccountRef, Ledger, Prepared, TransferId};
use crate::core::codec::Bytes;
use crate::core::error::{Error, Result};
use crate::core::limits;

/// Bit 0 of a transfer's flags byte: a pending (two-phase) transfer.
pub const FLAG_PENDING: u8 = 1;
/// Bit 1 of a transfer's flags byte: linked to the next transfer.
pub const FLAG_LINKED: u8 = 2;

/// How a batch's amounts are written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Amounts {
    /// 8 bytes per transfer: a positive `i64` of minor units at the debit
    /// account's asset scale (`"12.50"` USDC is 12,500,000).
    Units(Bytes),
    /// Decimal strings at the asset's scale, one per transfer, joined by `,`.
    Decimal(String),
}

/// A batch of transfers as columns. Lengths are per transfer; the optional
/// columns may be empty, meaning all zero.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransferColumns {
    /// 16 bytes per transfer: the 128-bit id, little-endian. Its string form
    /// (how `transfer(id)` and the JSON routes name it) is its decimal digits.
    pub ids: Bytes,
    /// 4 bytes per transfer: the debit account's index ([`Ledger::account_index`]).
    pub debit: Bytes,
    /// 4 bytes per transfer: the credit account's index.
    pub credit: Bytes,
    pub amounts: Amounts,
    /// 1 byte per transfer ([`FLAG_PENDING`], [`FLAG_LINKED`]), or empty.
    pub flags: Bytes,
    /// 4 bytes per transfer: a pending transfer's timeout in seconds, 0 for
    /// none; or empty.
    pub timeouts: Bytes,
}

fn u32_le(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]])
}

fn u128_le(b: &[u8], i: usize) -> u128 {
    let mut a = [0u8; 16];
    a.copy_from_slice(&b[16 * i..16 * i + 16]);
    u128::from_le_bytes(a)
}

fn i64_le(b: &[u8], i: usize) -> i64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[8 * i..8 * i + 8]);
    i64::from_le_bytes(a)
}

/// Checks that a column holds `width` bytes per transfer (or is empty, when
/// `optional`).
fn check_len(field: &str, col: &[u8], width: usize, n: usize, optional: bool) -> Result<()> {
    if col.len() == width * n || (optional && col.is_empty()) {
        return Ok(());
    }
    Err(Error::invalid(field, format!("has {} entries for {n} transfers", col.len() / width)))
}

impl TransferColumns {
    /// The number of transfers, from the id column.
    pub fn len(&self) -> usize {
        self.ids.0.len() / 16
    }

    /// Whether the batch is empty.
    pub fn is_empty(&self) -> bool {
        self.ids.0.is_empty()
    }

    /// Checks the shape of the batch: lengths that agree, a size within
    /// [`limits::TRANSFER_BATCH_MAX`], known flag bits, timeouts in range,
    /// no zero or repeated id.
    fn check_shape(&self) -> Result<usize> {
        let n = self.len();
        if self.ids.0.len() % 16 != 0 {
            return Err(Error::invalid("ids", "must hold 16 bytes (two 64-bit words) per transfer"));
        }
        if n == 0 || n > limits::TRANSFER_BATCH_MAX {
            return Err(Error::invalid("ids", format!("must hold 1 to {} transfers", limits::TRANSFER_BATCH_MAX)));
        }
        check_len("debit", &self.debit.0, 4, n, false)?;
        check_len("credit", &self.credit.0, 4, n, false)?;
        check_len("flags", &self.flags.0, 1, n, true)?;
        check_len("timeout_seconds", &self.timeouts.0, 4, n, true)?;
        match &self.amounts {
            Amounts::Units(b) => check_len("amounts", &b.0, 8, n, false)?,
            Amounts::Decimal(s) => {
                if s.len() > n * (limits::AMOUNT_DIGITS_MAX + 2) {
                    return Err(Error::too_large("amounts", s.len(), n * (limits::AMOUNT_DIGITS_MAX + 2)));
                }
                let count = s.split(',').count();
                if count != n {
                    return Err(Error::invalid("amounts", format!("has {count} entries for {n} transfers")));
                }
            }
        }
        if let Some(i) = self.flags.0.iter().position(|f| f & !(FLAG_PENDING | FLAG_LINKED) != 0) {
            return Err(Error::invalid(format!("flags[{i}]"), "only bits 0 (pending) and 1 (linked) may be set"));
        }
        if !self.timeouts.0.is_empty() {
            for i in 0..n {
                if u64::from(u32_le(&self.timeouts.0, i)) > limits::PENDING_TIMEOUT_SECONDS_MAX {
                    return Err(Error::invalid(format!("timeout_seconds[{i}]"), format!("must be 0 (none) to {}", limits::PENDING_TIMEOUT_SECONDS_MAX)));
                }
            }
        }
        // Repeats found by sorting (id, position): no hashing per id.
        let mut ids: Vec<(u128, usize)> = (0..n).map(|i| (u128_le(&self.ids.0, i), i)).collect();
        ids.sort_unstable();
        if let Some(&(_, i)) = ids.first().filter(|(id, _)| *id == 0) {
            return Err(Error::invalid(format!("ids[{i}]"), "must not be zero"));
        }
        if let Some(w) = ids.windows(2).find(|w| w[0].0 == w[1].0) {
            let (first, again) = (w[0].1.min(w[1].1), w[0].1.max(w[1].1));
            return Err(Error::invalid(format!("ids[{again}]"), format!("repeats ids[{first}] ({}) in the same batch", w[0].0)));
        }
        Ok(n)
    }
}

impl Ledger {
    /// Checks a column batch against this ledger and resolves it into
    /// transfers; nothing is applied, and any error refuses the whole batch.
    pub fn prepare_columns(&self, cols: &TransferColumns) -> Result<Vec<Prepared>> {
        let n = cols.check_shape()?;
        let accounts = self.accounts();
        let account = |field: &str, col: &[u8], i: usize| -> Result<u32> {
            let ix = u32_le(col, i);
            if (ix as usize) < accounts.len() {
                Ok(ix)
            } else {
                Err(Error::invalid(format!("{field}[{i}]"), format!("is not an account index (the ledger has {} accounts)", accounts.len())))
            }
        };
        let mut decimals = match &cols.amounts {
            Amounts::Decimal(s) => Some(s.split(',')),
            Amounts::Units(_) => None,
        };
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let (d, c) = (account("debit", &cols.debit.0, i)?, account("credit", &cols.credit.0, i)?);
            let amount: Units = match (&cols.amounts, decimals.as_mut().and_then(Iterator::next)) {
                (Amounts::Units(b), _) => match i64_le(&b.0, i) {
                    u if u > 0 => u as Units,
                    u => return Err(Error::invalid(format!("amounts[{i}]"), format!("{u} minor units: must be greater than zero"))),
                },
                (Amounts::Decimal(_), Some(s)) => {
                    let scale = self.asset(&accounts[d as usize].asset).map_or(limits::ASSET_SCALE_MAX, |a| a.scale);
                    parse_amount("amounts", s, scale).map_err(|e| e.renamed(format!("amounts[{i}]")))?
                }
                (Amounts::Decimal(_), None) => return Err(Error::invalid("amounts", format!("has fewer entries than the {n} transfers"))),
            };
            let flags = cols.flags.0.get(i).copied().unwrap_or(0);
            let timeout = if cols.timeouts.0.is_empty() { 0 } else { u32_le(&cols.timeouts.0, i) };
            out.push(Prepared {
                id: TransferId::Num(u128_le(&cols.ids.0, i)),
                debit: AccountRef::Known(d),
                credit: AccountRef::Known(c),
                amount,
                pending: flags & FLAG_PENDING != 0,
                linked: flags & FLAG_LINKED != 0,
                timeout_seconds: (timeout != 0).then_some(u64::from(timeout)),
                metadata: None,
            });
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
