//! The ledger's typed-array entry point: a transfer batch crosses as byte
//! columns (no JSON, no string per account) and its results come back as
//! an `Int32Array` of result indices ([`TransferResult`]'s declaration
//! order, which the package exports as `TRANSFER_RESULT_CODES`).

use js_sys::{Int32Array, Promise};
use wasm_bindgen::prelude::*;

use super::{door, promise, random_bits, to_js_error, MemoryCore};
use crate::api;
use crate::core::codec::Bytes;
use crate::core::ledger::batch::Amounts;
use crate::core::ledger::{TransferColumns, TransferResult};

#[wasm_bindgen]
impl MemoryCore {
    /// Applies a transfer batch given as little-endian byte columns (see
    /// [`TransferColumns`]): `ids` 16 bytes per transfer, `debit` and
    /// `credit` 4, `units` 8 (positive i64 minor units) unless `decimals`
    /// (decimal strings joined by `,`) is given, `flags` 1 or empty,
    /// `timeouts` 4 or empty. Resolves to an `Int32Array` with one result
    /// index per transfer once the batch is durable; a bad batch rejects
    /// with a typed error and nothing applied.
    #[allow(clippy::too_many_arguments)]
    #[wasm_bindgen(js_name = transferColumns)]
    pub fn transfer_columns(&self, ids: Vec<u8>, debit: Vec<u8>, credit: Vec<u8>, units: Vec<u8>, decimals: Option<String>, flags: Vec<u8>, timeouts: Vec<u8>) -> Promise {
        promise(&self.inner, move |inner| async move {
            let amounts = match decimals {
                Some(s) => Amounts::Decimal(s),
                None => Amounts::Units(Bytes(units)),
            };
            let cols = TransferColumns { ids: Bytes(ids), debit: Bytes(debit), credit: Bytes(credit), amounts, flags: Bytes(flags), timeouts: Bytes(timeouts) };
            let mut rand = random_bits;
            let ctx = door::ctx(&inner, &mut rand, &api::services::Offline)?;
            let results = api::ledger::create_transfer_columns(&inner.store, cols, &ctx).await.map_err(|e| to_js_error(&e))?;
            let codes: Vec<i32> = results.into_iter().map(|r: TransferResult| r as i32).collect();
            Ok(Int32Array::from(&codes[..]).into())
        })
    }
}
