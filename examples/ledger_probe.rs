//! Where a batched transfer's time goes natively: apply vs op-log encoding.
//! `cargo run --release --example ledger_probe`
use std::time::Instant;

use edgemem::core::engine::{encode_log_entry, LogEntry, Op};
use edgemem::core::codec::Bytes;
use edgemem::core::ledger::batch::Amounts;
use edgemem::core::ledger::{Ledger, LedgerOp, TransferColumns, TransferRequest};

fn main() {
    let mut l = Ledger::default();
    l.apply(&LedgerOp::CreateAsset { code: "USDC".into(), scale: 6 }, 0).unwrap();
    for a in 0..100 {
        l.apply(&LedgerOp::CreateAccount { id: format!("a{a}"), asset: "USDC".into(), flags: Default::default(), max_transfer: None }, 0).unwrap();
    }
    let batches: Vec<LedgerOp> = (0..200)
        .map(|b| LedgerOp::CreateTransfers {
            transfers: (0..1000)
                .map(|k| {
                    let i: u64 = b * 1000 + k;
                    TransferRequest {
                        id: format!("t{i}"),
                        debit_account: format!("a{}", i % 100),
                        credit_account: format!("a{}", (i % 100 + 1 + i / 100 % 98) % 100),
                        amount: format!("{}.{:06}", i * 7919 % 100 + 1, i * 104729 % 1_000_000),
                        pending: false,
                        timeout_seconds: None,
                        linked: false,
                        metadata: None,
                    }
                })
                .collect(),
        })
        .collect();
    let t = Instant::now();
    for op in &batches {
        l.apply(op, 1).unwrap();
    }
    let apply = t.elapsed().as_secs_f64() / 200_000.0 * 1e6;
    let t = Instant::now();
    let mut bytes = 0;
    for (s, op) in batches.iter().enumerate() {
        bytes += encode_log_entry(s as u64 + 1, &LogEntry { now_ms: 1, op: Op::Ledger(op.clone()) }).unwrap().len();
    }
    let encode = t.elapsed().as_secs_f64() / 200_000.0 * 1e6;
    println!("requests: apply {apply:.3} µs/transfer, encode {encode:.3} µs/transfer ({} B/transfer)", bytes / 200_000);
    // The same workload as column batches (ids 1_000_001.., accounts by index).
    let mut l = Ledger::default();
    l.apply(&LedgerOp::CreateAsset { code: "USDC".into(), scale: 6 }, 0).unwrap();
    for a in 0..100 {
        l.apply(&LedgerOp::CreateAccount { id: format!("a{a}"), asset: "USDC".into(), flags: Default::default(), max_transfer: None }, 0).unwrap();
    }
    let le = |v: Vec<[u8; 16]>| Bytes(v.concat());
    let batches: Vec<LedgerOp> = (0..200u64)
        .map(|b| {
            let is: Vec<u64> = (0..1000).map(|k| b * 1000 + k).collect();
            LedgerOp::CreateTransferColumns(TransferColumns {
                ids: le(is.iter().map(|&i| (1_000_001 + i as u128).to_le_bytes()).collect()),
                debit: Bytes(is.iter().flat_map(|&i| ((i % 100) as u32).to_le_bytes()).collect()),
                credit: Bytes(is.iter().flat_map(|&i| (((i % 100 + 1 + i / 100 % 98) % 100) as u32).to_le_bytes()).collect()),
                amounts: Amounts::Units(Bytes(is.iter().flat_map(|&i| ((i * 7919 % 100 + 1) as i64 * 1_000_000 + (i * 104729 % 1_000_000) as i64).to_le_bytes()).collect())),
                flags: Bytes::default(),
                timeouts: Bytes::default(),
            })
        })
        .collect();
    let t = Instant::now();
    for op in &batches {
        l.apply(op, 1).unwrap();
    }
    let apply = t.elapsed().as_secs_f64() / 200_000.0 * 1e6;
    let t = Instant::now();
    let mut bytes = 0;
    for (s, op) in batches.iter().enumerate() {
        bytes += encode_log_entry(s as u64 + 1, &LogEntry { now_ms: 1, op: Op::Ledger(op.clone()) }).unwrap().len();
    }
    let encode = t.elapsed().as_secs_f64() / 200_000.0 * 1e6;
    println!("columns:  apply {apply:.3} µs/transfer, encode {encode:.3} µs/transfer ({} B/transfer)", bytes / 200_000);
}
