//! Where a batched transfer's time goes natively: applying it against
//! encoding its op-log record, for JSON-shaped requests and for typed column
//! batches, on the same 200 batches of 1,000 transfers among 100 accounts.
//! `cargo run --release --example ledger_probe`
use std::time::Instant;

use edgemem::core::codec::Bytes;
use edgemem::core::engine::{encode_log_entry, LogEntry, Op};
use edgemem::core::ledger::batch::Amounts;
use edgemem::core::ledger::{Ledger, LedgerOp, TransferColumns, TransferRequest};

const BATCHES: u64 = 200;
const BATCH: u64 = 1000;
const ACCOUNTS: u64 = 100;

/// Transfer `i`: its debit and credit account and its amount in minor units (6 decimals).
fn transfer(i: u64) -> (u64, u64, u64) {
    let debit = i % ACCOUNTS;
    let credit = (debit + 1 + i / ACCOUNTS % (ACCOUNTS - 2)) % ACCOUNTS;
    (debit, credit, (i * 7919 % 100 + 1) * 1_000_000 + i * 104729 % 1_000_000)
}

fn request_batch(b: u64) -> LedgerOp {
    let transfers = (b * BATCH..(b + 1) * BATCH)
        .map(|i| {
            let (d, c, units) = transfer(i);
            TransferRequest {
                id: format!("t{i}"),
                debit_account: format!("a{d}"),
                credit_account: format!("a{c}"),
                amount: format!("{}.{:06}", units / 1_000_000, units % 1_000_000),
                pending: false,
                timeout_seconds: None,
                linked: false,
                metadata: None,
            }
        })
        .collect();
    LedgerOp::CreateTransfers { transfers }
}

fn column_batch(b: u64) -> LedgerOp {
    let is = b * BATCH..(b + 1) * BATCH;
    let column = |f: &dyn Fn(u64) -> Vec<u8>| Bytes(is.clone().flat_map(f).collect());
    LedgerOp::CreateTransferColumns(TransferColumns {
        ids: column(&|i| (u128::from(i) + 1).to_le_bytes().to_vec()),
        debit: column(&|i| (transfer(i).0 as u32).to_le_bytes().to_vec()),
        credit: column(&|i| (transfer(i).1 as u32).to_le_bytes().to_vec()),
        amounts: Amounts::Units(column(&|i| (transfer(i).2 as i64).to_le_bytes().to_vec())),
        flags: Bytes::default(),
        timeouts: Bytes::default(),
    })
}

/// Applies and encodes `batches` on a fresh ledger; prints µs per transfer.
fn probe(label: &str, batches: &[LedgerOp]) {
    let mut l = Ledger::default();
    l.apply(&LedgerOp::CreateAsset { code: "USDC".into(), scale: 6 }, 0).unwrap();
    for a in 0..ACCOUNTS {
        l.apply(&LedgerOp::CreateAccount { id: format!("a{a}"), asset: "USDC".into(), flags: Default::default(), max_transfer: None }, 0).unwrap();
    }
    let n = (BATCHES * BATCH) as f64;
    let t = Instant::now();
    for op in batches {
        l.apply(op, 1).unwrap();
    }
    let apply = t.elapsed().as_secs_f64() / n * 1e6;
    let t = Instant::now();
    let mut bytes = 0;
    for (s, op) in batches.iter().enumerate() {
        bytes += encode_log_entry(s as u64 + 1, &LogEntry { now_ms: 1, op: Op::Ledger(op.clone()) }).unwrap().len();
    }
    let encode = t.elapsed().as_secs_f64() / n * 1e6;
    println!("{label}: apply {apply:.3} µs/transfer, encode {encode:.3} µs/transfer ({:.0} B/transfer)", bytes as f64 / n);
}

fn main() {
    probe("requests", &(0..BATCHES).map(request_batch).collect::<Vec<_>>());
    probe("columns ", &(0..BATCHES).map(column_batch).collect::<Vec<_>>());
}
