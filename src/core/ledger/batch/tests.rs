//! Column batches: the same outcome as the JSON path, and every bad input
//! refused whole with a typed error and nothing applied.

use super::*;
use crate::core::ledger::types::{AccountFlags, TransferRequest, TransferResult};
use crate::core::ledger::{LedgerApplied, LedgerOp};

fn ledger() -> Ledger {
    let mut l = Ledger::default();
    l.create_asset("USDC", 6).unwrap();
    l.create_asset("EUR", 2).unwrap();
    let wallet = AccountFlags { debits_must_not_exceed_credits: true, ..AccountFlags::default() };
    l.create_account("bank", "USDC", AccountFlags::default(), None, 0).unwrap(); // 0
    l.create_account("agent", "USDC", wallet, None, 0).unwrap(); // 1
    l.create_account("casino", "USDC", AccountFlags::default(), None, 0).unwrap(); // 2
    l.create_account("eur", "EUR", AccountFlags::default(), None, 0).unwrap(); // 3
    l
}

fn le<T: Copy, const W: usize>(v: &[T], f: impl Fn(T) -> [u8; W]) -> Bytes {
    Bytes(v.iter().flat_map(|&x| f(x)).collect())
}

fn cols(ids: &[u128], debit: &[u32], credit: &[u32], units: &[i64]) -> TransferColumns {
    TransferColumns {
        ids: le(ids, u128::to_le_bytes),
        debit: le(debit, u32::to_le_bytes),
        credit: le(credit, u32::to_le_bytes),
        amounts: Amounts::Units(le(units, i64::to_le_bytes)),
        flags: Bytes::default(),
        timeouts: Bytes::default(),
    }
}

fn apply(l: &mut Ledger, c: TransferColumns) -> crate::core::error::Result<Vec<TransferResult>> {
    match l.apply(&LedgerOp::CreateTransferColumns(c), 7)? {
        LedgerApplied::TransferCodes(r) => Ok(r),
        other => panic!("{other:?}"),
    }
}

#[test]
fn columns_do_what_the_json_batch_does() {
    let (mut a, mut b) = (ledger(), ledger());
    let r = apply(&mut a, cols(&[1, 2, 3, 4], &[0, 1, 1, 0], &[1, 2, 2, 2], &[10_000_000, 2_500_000, 9_000_000, 1])).unwrap();
    assert_eq!(r, [TransferResult::Created, TransferResult::Created, TransferResult::ExceedsCredits, TransferResult::Created]);
    let req = |id: &str, d: &str, c: &str, amount: &str| TransferRequest {
        id: id.into(),
        debit_account: d.into(),
        credit_account: c.into(),
        amount: amount.into(),
        pending: false,
        timeout_seconds: None,
        linked: false,
        metadata: None,
    };
    let json = vec![req("1", "bank", "agent", "10"), req("2", "agent", "casino", "2.5"), req("3", "agent", "casino", "9"), req("4", "bank", "casino", "0.000001")];
    b.apply(&LedgerOp::CreateTransfers { transfers: json }, 7).unwrap();
    assert_eq!(a, b, "same accounts, transfers and journal either way");
    assert_eq!(a.journal_head(), b.journal_head());
    assert_eq!(a.transfer("2").unwrap().amount, 2_500_000, "a 128-bit id is named by its decimal digits");
    // Retrying the batch changes nothing: idempotent by id.
    let again = apply(&mut a, cols(&[1, 2], &[0, 1], &[1, 2], &[10_000_000, 2_500_000])).unwrap();
    assert_eq!(again, [TransferResult::Exists, TransferResult::Exists]);
    let differs = apply(&mut a, cols(&[1], &[0], &[1], &[10_000_001])).unwrap();
    assert_eq!(differs, [TransferResult::ExistsWithDifferentAmount]);
    assert!(a.reconcile().is_empty());
}

#[test]
fn decimal_amounts_use_the_debit_accounts_scale() {
    let mut l = ledger();
    l.create_account("eur2", "EUR", AccountFlags::default(), None, 0).unwrap(); // 4
    let mut c = cols(&[u128::MAX, 9], &[0, 3], &[2, 4], &[1, 1]);
    c.amounts = Amounts::Decimal("12.5,0.07".into());
    assert_eq!(apply(&mut l, c).unwrap(), [TransferResult::Created, TransferResult::Created]);
    assert_eq!(l.transfer(&u128::MAX.to_string()).unwrap().amount, 12_500_000);
    assert_eq!(l.transfer("9").unwrap().amount, 7);
}

#[test]
fn flags_link_and_hold() {
    let mut l = ledger();
    let mut c = cols(&[1, 2, 3], &[0, 1, 0], &[1, 2, 2], &[5, 50, 1]);
    // 1 and 2 linked: 2 fails (the agent holds 5), so 1 is undone; 3 stands alone, pending.
    c.flags = Bytes(vec![FLAG_LINKED, 0, FLAG_PENDING]);
    c.timeouts = le(&[0u32, 0, 60], u32::to_le_bytes);
    let r = apply(&mut l, c).unwrap();
    assert_eq!(r, [TransferResult::LinkedEventFailed, TransferResult::ExceedsCredits, TransferResult::Created]);
    assert!(l.transfer("1").is_none());
    assert_eq!(l.transfer("3").unwrap().expires_at(), Some(7 + 60_000));
    assert_eq!(l.account("bank").unwrap().debits_pending, 1);
}

#[test]
fn bad_batches_are_refused_whole_with_nothing_applied() {
    let base = ledger();
    let good = || cols(&[1, 2], &[0, 0], &[2, 2], &[1, 2]);
    let cases: Vec<(&str, TransferColumns, &str)> = vec![
        ("mismatched debit length", TransferColumns { debit: le(&[0u32], u32::to_le_bytes), ..good() }, "debit"),
        ("mismatched amounts length", TransferColumns { amounts: Amounts::Units(le(&[1i64, 2, 3], i64::to_le_bytes)), ..good() }, "amounts"),
        ("ids not in 16-byte words", TransferColumns { ids: Bytes(vec![1; 24]), ..good() }, "ids"),
        ("unknown account index", cols(&[1, 2], &[0, 4], &[2, 2], &[1, 2]), "debit[1]"),
        ("unknown credit index", cols(&[1, 2], &[0, 0], &[u32::MAX, 2], &[1, 2]), "credit[0]"),
        ("zero amount", cols(&[1, 2], &[0, 0], &[2, 2], &[1, 0]), "amounts[1]"),
        ("negative amount", cols(&[1, 2], &[0, 0], &[2, 2], &[-5, 2]), "amounts[0]"),
        ("over the asset's scale", TransferColumns { amounts: Amounts::Decimal("1.5,0.0000001".into()), ..good() }, "amounts[1]"),
        ("not a decimal", TransferColumns { amounts: Amounts::Decimal("1.5,NaN".into()), ..good() }, "amounts[1]"),
        ("a float where a decimal belongs", TransferColumns { amounts: Amounts::Decimal("1e3,2".into()), ..good() }, "amounts[0]"),
        ("too few decimals", TransferColumns { amounts: Amounts::Decimal("1.5".into()), ..good() }, "amounts"),
        ("duplicate ids", cols(&[7, 7], &[0, 0], &[2, 2], &[1, 2]), "ids[1]"),
        ("zero id", cols(&[0, 7], &[0, 0], &[2, 2], &[1, 2]), "ids[0]"),
        ("unknown flag bit", TransferColumns { flags: Bytes(vec![0, 4]), ..good() }, "flags[1]"),
        ("flags of another length", TransferColumns { flags: Bytes(vec![0]), ..good() }, "flags"),
        ("timeout past the limit", TransferColumns { timeouts: le(&[0u32, u32::MAX], u32::to_le_bytes), ..good() }, "timeout_seconds[1]"),
        ("empty", cols(&[], &[], &[], &[]), "ids"),
    ];
    for (what, c, field) in cases {
        let mut l = base.clone();
        let err = apply(&mut l, c).unwrap_err();
        assert_eq!(err.code(), "invalid_input", "{what}: {err:?}");
        match &err {
            crate::core::error::Error::InvalidInput { field: f, .. } => assert_eq!(f, field, "{what}"),
            other => panic!("{what}: {other:?}"),
        }
        assert_eq!(l, base, "{what}: nothing applied");
    }
    let mut l = base.clone();
    let n = limits::TRANSFER_BATCH_MAX + 1;
    let ids: Vec<u128> = (1..=n as u128).collect();
    let err = apply(&mut l, cols(&ids, &vec![0; n], &vec![2; n], &vec![1; n])).unwrap_err();
    assert_eq!(err.code(), "invalid_input");
    assert_eq!(l, base);
}

#[test]
fn account_indices_survive_a_snapshot() {
    let mut l = ledger();
    // Created out of name order: indices follow creation, not the names.
    l.create_account("aaa", "USDC", AccountFlags::default(), None, 0).unwrap();
    apply(&mut l, cols(&[1], &[0], &[4], &[3])).unwrap();
    let back = Ledger::from_snapshot(l.to_snapshot()).unwrap();
    assert_eq!(back.account_index("aaa"), Some(4));
    assert_eq!(back.account_at(1).unwrap().id, "agent");
    assert_eq!(back, l);
}
