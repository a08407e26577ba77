//! Seeded mutation fuzzing of every decoder of stored or received bytes, on
//! the stable toolchain. Each target starts from valid encodings made by
//! the real encoders (a store driven through the HTTP API, the simulation's
//! workload, older schemas), mutates them (bit flips, interesting bytes and
//! integers, inserts, deletes, duplicated ranges, splices with other inputs,
//! truncations, dictionary tokens) and, where a checksum would stop the
//! mutation at the door, mutates the body and seals it again so the inner
//! decoder sees it. The property everywhere: the decoder answers `Ok` or a
//! typed error and never panics; what it accepts encodes again and decodes
//! to the same thing; a state that loads is usable; a refused op changes
//! nothing.
//!
//! Targets: `log_record` (op-log records and the ops they hold, replayed),
//! `snapshot` (snapshot envelopes and bodies, schema v0 and v1), `head`,
//! `chunks` (opening a store whose head, chunks and log were damaged),
//! `msgpack` (the reader, for every persisted type), `json_api` (request
//! bodies, paths and queries through `api::handle`), `ledger_columns` (the
//! typed transfer batch), `vector_index` (the index blob), `rank_asset`
//! (BPE rank assets) and `scalars` (amounts, timestamps, transfer ids).
//!
//! Bugs it found keep their regression tests here: a stored object holding
//! serde_json's private number key (`NUMBER_KEY`, once able to make a store
//! unopenable) and episode numbering across a snapshot
//! (`episode_seqs_continue_after_a_restart`).
//!
//! `EDGEMEM_FUZZ_EXECS=N` sets the executions per target (default
//! [`EXECS_DEFAULT`]), `EDGEMEM_FUZZ_SEED=S` the base seed (default 0),
//! and `EDGEMEM_FUZZ_EXEC=I` runs execution `I` alone: every execution
//! draws from its own stream, so a failure reproduces from the numbers it
//! prints (`json_api` also depends on the state earlier executions left,
//! so its failures print the request as well).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

use super::sim::{env_u64, sample_ops, Rng};
use super::*;
use crate::api::{self, Ctx, Request};
use crate::core::codec::{decode_log_record, encode_log_record};
use crate::core::engine::migrate::{LogEntryV0, OpV0, SessionV0, SnapshotV0};
use crate::core::engine::{decode_log_entry, encode_log_entry, HistoryState, LOG_BODY_POSITIONAL};
use crate::core::ledger::batch::{Amounts, TransferColumns};
use crate::core::ledger::{LedgerOp, LedgerSnapshot};
use crate::core::longterm::LongTermSnapshot;
use crate::core::retrieval::record::MemoryRecord;
use crate::core::vector::{Config, Eligible, Metric, Quantization, Scratch, SearchParams, VectorIndex};

mod corpora;
mod mutate;
use corpora::*;
use mutate::*;


/// Executions per target in a plain `cargo test` (dev profile): all
/// targets together stay well under a minute.
const EXECS_DEFAULT: u64 = 10_000;
/// Inputs grow no larger than this.
const INPUT_BYTES_MAX: usize = 64 * 1024;

fn fuzz_seed() -> u64 {
    env_u64("EDGEMEM_FUZZ_SEED").unwrap_or(0)
}

fn name_hash(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

fn hex(b: &[u8]) -> String {
    let shown = &b[..b.len().min(4096)];
    let mut s: String = shown.iter().map(|x| format!("{x:02x}")).collect();
    if shown.len() < b.len() {
        s.push_str(&format!("… ({} more bytes)", b.len() - shown.len()));
    }
    s
}

/// Runs the executions of one target. `exec` gets its own random stream,
/// records the input it built in `input` before decoding it, so a panic is
/// reported with the bytes that caused it, and answers whether the decoder
/// accepted it (counted, to show the mutations reach past the checks).
fn drive(target: &str, mut exec: impl FnMut(&mut Rng, &RefCell<Vec<u8>>) -> bool) {
    let n = env_u64("EDGEMEM_FUZZ_EXECS").unwrap_or(EXECS_DEFAULT);
    let seed = fuzz_seed();
    let runs: Vec<u64> = match env_u64("EDGEMEM_FUZZ_EXEC") {
        Some(i) => vec![i],
        None => (0..n).collect(),
    };
    let input = RefCell::new(Vec::new());
    let started = std::time::Instant::now();
    let mut accepted = 0u64;
    for &i in &runs {
        let mut rng = Rng::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ name_hash(target) ^ i.wrapping_mul(0xd1b5_4a32_d192_ed03));
        input.borrow_mut().clear();
        let outcome = catch_unwind(AssertUnwindSafe(|| exec(&mut rng, &input)));
        if let Ok(ok) = outcome {
            accepted += u64::from(ok);
        }
        if let Err(panic) = outcome {
            let b = input.borrow();
            eprintln!("fuzz: {target} FAILED at exec {i}: reproduce with EDGEMEM_FUZZ_SEED={seed} EDGEMEM_FUZZ_EXEC={i}; input ({} bytes): {}", b.len(), hex(&b));
            if let Ok(text) = std::str::from_utf8(&b) {
                eprintln!("fuzz: {target} input as text: {text}");
            }
            resume_unwind(panic);
        }
    }
    eprintln!("fuzz: {target} {} execs ({accepted} accepted, {:.1}s)", runs.len(), started.elapsed().as_secs_f64());
}

fn crc(b: &[u8]) -> u32 {
    crc32fast::hash(b)
}

/// serde_json's private key for arbitrary-precision numbers. A JSON object
/// that holds it beside another key is accepted when it is not the first key
/// of the request's text, and written with its keys sorted, so it comes
/// first: read back, serde_json takes the object for a number and fails
/// (`a_number_key_in_stored_json_survives_a_restart`).
const NUMBER_KEY: &str = "$serde_json::private::Number";

/// Whether that bug is fixed; until it is, round trips of values that hold
/// the key are skipped (not counted as accepted) and `json_api` does not
/// insert the key.
const NUMBER_KEY_FIXED: bool = true;

fn known_number_key_bug<T: std::fmt::Debug>(v: &T) -> bool {
    !NUMBER_KEY_FIXED && format!("{v:?}").contains(NUMBER_KEY)
}

// ---------------------------------------------------------------------------
// Targets.

/// Op-log records: the envelope, the body (sealed again with a valid
/// checksum) in schema v1 and v0, and the op replayed on a live state.
#[test]
fn fuzz_log_record() {
    let c = corpus();
    let bodies: Vec<Vec<u8>> = c.records.iter().map(|(_, r)| r[LOG_HEADER_BYTES..].to_vec()).collect();
    let whole: Vec<Vec<u8>> = c.records.iter().map(|(_, r)| r.clone()).collect();
    drive("log_record", |rng, input| {
        let (seq, record) = &c.records[rng.below(c.records.len())];
        let seq = *seq;
        let bytes = match rng.below(10) {
            0 | 1 => {
                let mut b = record.clone();
                mutate(rng, &mut b, &whole, MSGPACK_TOKENS);
                b
            }
            9 => {
                let body = pick_mutated(rng, &c.v0_records, MSGPACK_TOKENS);
                encode_log_record(0, seq, &body).unwrap()
            }
            _ => {
                let mut body = record[LOG_HEADER_BYTES..].to_vec();
                mutate(rng, &mut body, &bodies, MSGPACK_TOKENS);
                // Sometimes the named-field form (no version byte).
                if rng.chance(0.1) && body.first() == Some(&LOG_BODY_POSITIONAL) {
                    body.remove(0);
                }
                match encode_log_record(crate::core::codec::SCHEMA_VERSION, seq, &body) {
                    Ok(b) => b,
                    Err(_) => return false,
                }
            }
        };
        *input.borrow_mut() = bytes.clone();
        let Ok(entry) = decode_log_entry(seq, &bytes) else { return false };
        // What decodes encodes again, and that encoding is stable.
        let again = match encode_log_entry(seq, &entry) {
            Ok(b) => b,
            Err(e) => {
                assert_eq!(e.code(), "payload_too_large", "re-encoding a decoded record: {e}");
                return true;
            }
        };
        let back = match decode_log_entry(seq, &again) {
            Ok(back) => back,
            Err(_) if known_number_key_bug(&entry) => return false,
            Err(e) => panic!("a re-encoded record does not decode: {e}"),
        };
        assert_eq!(encode_log_entry(seq, &back).unwrap(), again, "re-encoding is not stable");
        // Replaying it: applied, or refused with nothing changed.
        let mut e = c.base.clone();
        if e.apply(&entry.op, entry.now_ms).is_err() {
            assert!(e == c.base, "a refused op changed the state");
        } else {
            assert!(e.ledger().reconcile().is_empty(), "books balance after a replayed op");
        }
        true
    });
}

/// Snapshots: the envelope, the body sealed again (v1 and v0); a state that
/// loads encodes to a snapshot that loads to the same state, and is usable.
#[test]
fn fuzz_snapshot() {
    let c = corpus();
    let bodies: Vec<Vec<u8>> = c.snapshots.iter().map(|s| s[SNAPSHOT_HEADER_BYTES..].to_vec()).collect();
    let extra = sample_ops(99, 30);
    drive("snapshot", |rng, input| {
        let bytes = match rng.below(10) {
            0 | 1 => pick_mutated(rng, &c.snapshots, MSGPACK_TOKENS),
            9 => crate::core::codec::encode_snapshot(0, &pick_mutated(rng, &c.v0_snapshots, MSGPACK_TOKENS)),
            _ => crate::core::codec::encode_snapshot(crate::core::codec::SCHEMA_VERSION, &pick_mutated(rng, &bodies, MSGPACK_TOKENS)),
        };
        *input.borrow_mut() = bytes.clone();
        let Ok(mut engine) = Engine::decode_snapshot(&bytes) else { return false };
        let again = engine.encode_snapshot().unwrap_or_else(|e| panic!("a loaded state does not encode: {e}"));
        let back = match Engine::decode_snapshot(&again) {
            Ok(back) => back,
            Err(_) if known_number_key_bug(&engine) => return false,
            Err(e) => panic!("a re-encoded snapshot does not load: {e}"),
        };
        assert!(back == engine, "a re-encoded snapshot loads to another state");
        assert_eq!(back.encode_snapshot().unwrap(), again, "re-encoding is not stable");
        assert!(engine.ledger().reconcile().is_empty(), "a loaded ledger balances");
        // Usable: sweeps and a few ops run (applied or refused).
        let now = 1_900_000_000_000;
        for op in [Op::SessionsExpire, Op::Ledger(LedgerOp::Expire), Op::EpisodesExpire] {
            engine.apply(&op, now).unwrap();
        }
        for (op, _) in extra.iter().skip(rng.below(extra.len())).take(3) {
            let _ = engine.apply(op, now);
        }
        let _ = engine.compact_vectors(1_000);
        let _ = engine.next_expiry();
        let _ = engine.list_sessions(now, None, 0, 100);
        true
    });
}

/// The head record, raw and with fields changed under a valid checksum.
#[test]
fn fuzz_head() {
    let heads: Vec<Vec<u8>> = [
        Head { gen: 1, chunk_count: 1, snapshot_bytes: 40, last_seq: 0 },
        Head { gen: 3, chunk_count: 2, snapshot_bytes: 1_500, last_seq: 99 },
        Head { gen: u64::MAX, chunk_count: limits::SNAPSHOT_CHUNKS_MAX as u32, snapshot_bytes: limits::SNAPSHOT_BYTES_MAX as u64, last_seq: u64::MAX },
    ]
    .iter()
    .map(Head::encode)
    .collect();
    drive("head", |rng, input| {
        let mut b = pick_mutated(rng, &heads, &[]);
        if rng.chance(0.7) && b.len() >= 8 {
            let n = b.len();
            let c = crc(&b[..n - 4]).to_le_bytes();
            b[n - 4..].copy_from_slice(&c);
        }
        *input.borrow_mut() = b.clone();
        match Head::decode(&b) {
            Ok(h) => {
                assert_eq!(Head::decode(&h.encode()).unwrap(), h, "a head encodes and decodes to itself");
                true
            }
            Err(_) => false,
        }
    });
}

/// Opening a store whose head, chunks and log were damaged: reassembly of
/// the chunks and recovery refuse with a typed error, write nothing, and
/// what opens is a usable store.
#[test]
fn fuzz_chunks() {
    // Two stores: a snapshot in many chunks with log records after it.
    let bases: Vec<(StoreConfig, BTreeMap<String, Vec<u8>>, Engine)> = [(64usize, 7u64), (100, 11)]
        .into_iter()
        .map(|(chunk, seed)| {
            let config = StoreConfig { snapshot_every_ops: limits::SNAPSHOT_EVERY_OPS_MAX, chunk_bytes: chunk, key_prefix: PREFIX.into() };
            let backend = MemoryBackend::new();
            let store = run(Store::open(backend.clone(), config.clone())).unwrap();
            let ops = sample_ops(seed, 40);
            for (i, (op, now)) in ops.iter().enumerate() {
                let _ = run(store.apply(op.clone(), *now));
                if i == 30 {
                    run(store.snapshot()).unwrap();
                }
            }
            let engine = run(store.read(|e| e.clone())).unwrap();
            (config, backend.dump(), engine)
        })
        .collect();
    drive("chunks", |rng, input| {
        let (config, base, engine) = &bases[rng.below(bases.len())];
        let mut map = base.clone();
        let keys: Vec<String> = map.keys().cloned().collect();
        let head = Head::decode(&map[&format!("{PREFIX}head")]).unwrap();
        let mut neutral = true;
        let mut described = Vec::new();
        for _ in 0..rng.range(1, 3) {
            let key = keys[rng.below(keys.len())].clone();
            match rng.below(10) {
                0 => {
                    map.remove(&key);
                    neutral = false;
                    described.push(format!("remove {key}"));
                }
                1 => {
                    if let Some(v) = map.get_mut(&key) {
                        let n = v.len();
                        v.truncate(rng.below(n + 1));
                        neutral = false;
                        described.push(format!("truncate {key}"));
                    }
                }
                2 | 3 => {
                    if let Some(v) = map.get_mut(&key) {
                        mutate(rng, v, &[], MSGPACK_TOKENS);
                        neutral = false;
                        described.push(format!("mutate {key}"));
                    }
                }
                4 => {
                    // A stray chunk of another generation or past the count, or a stray log record.
                    let value = map.get(&key).cloned().unwrap_or_default();
                    let stray = match rng.below(3) {
                        0 => format!("{PREFIX}snap/{:016x}/{:08x}", head.gen.wrapping_add(rng.pick(&[1, 2, u64::MAX])), rng.below(3)),
                        1 => format!("{PREFIX}snap/{:016x}/{:08x}", head.gen, head.chunk_count as usize + rng.below(2)),
                        _ => format!("{PREFIX}log/{:016x}", head.last_seq.wrapping_add(rng.pick(&[0, 1, 40, 100]))),
                    };
                    map.insert(stray.clone(), value);
                    neutral = false;
                    described.push(format!("stray {stray}"));
                }
                5 | 6 => {
                    // The head, changed under a valid checksum.
                    let mut h = head;
                    match rng.below(4) {
                        0 => h.chunk_count = (h.chunk_count as i64 + rng.pick(&[-1i64, 1, -1000])).clamp(0, u32::MAX as i64) as u32,
                        1 => h.snapshot_bytes = h.snapshot_bytes.wrapping_add(rng.pick(&[1, u64::MAX, 64, u64::MAX - 63])),
                        2 => h.gen = h.gen.wrapping_add(rng.pick(&[1, u64::MAX])),
                        _ => h.last_seq = h.last_seq.wrapping_add(rng.pick(&[1, u64::MAX, 5])),
                    }
                    map.insert(format!("{PREFIX}head"), h.encode());
                    neutral = false;
                    described.push(format!("head {h:?}"));
                }
                7 => {
                    // The same snapshot cut into other chunks, with a head that says so: valid.
                    let bytes: Vec<u8> = (0..head.chunk_count).flat_map(|i| base[&format!("{PREFIX}snap/{:016x}/{i:08x}", head.gen)].clone()).collect();
                    map.retain(|k, _| !k.starts_with(&format!("{PREFIX}snap/")));
                    let size = rng.range(1, 300) as usize;
                    let mut h = head;
                    h.chunk_count = 0;
                    for (i, c) in bytes.chunks(size).enumerate() {
                        map.insert(format!("{PREFIX}snap/{:016x}/{i:08x}", h.gen), c.to_vec());
                        h.chunk_count += 1;
                    }
                    map.insert(format!("{PREFIX}head"), h.encode());
                    described.push(format!("rechunk {size}"));
                }
                _ => {
                    // A log record moved to another sequence number.
                    if let Some(v) = map.remove(&key) {
                        let seq = head.last_seq + 1 + rng.below(12) as u64;
                        map.insert(format!("{PREFIX}log/{seq:016x}"), v);
                        neutral = false;
                        described.push(format!("move {key} to log {seq}"));
                    }
                }
            }
        }
        *input.borrow_mut() = described.join("; ").into_bytes();
        let backend = MemoryBackend::new();
        for (k, v) in &map {
            backend.poke(k, v.clone());
        }
        match run(Store::open(backend.clone(), config.clone())) {
            Err(e) => {
                assert!(!neutral, "a valid store was refused: {e}");
                assert!(matches!(e.code(), "snapshot_corrupt" | "log_corrupt" | "schema_version_unsupported" | "payload_too_large"), "refused with {e}");
                assert!(backend.dump() == map, "a refused open wrote");
                false
            }
            Ok(store) => {
                assert!(backend.dump() == map, "opening wrote");
                let state = run(store.read(|e| e.clone())).unwrap();
                if neutral {
                    assert!(&state == engine, "a valid store opened to another state");
                }
                // Usable: a snapshot, then a reopen gives the same state,
                // and nothing but the live snapshot is left.
                if rng.chance(0.3) {
                    let stats = run(store.snapshot()).unwrap_or_else(|e| panic!("snapshot after open: {e}"));
                    super::assert_only_live(&backend, stats, config.chunk_bytes, "fuzz chunks");
                    let again = run(Store::open(backend.clone(), config.clone())).unwrap_or_else(|e| panic!("reopen: {e}"));
                    assert!(run(again.read(|e| e == &state)).unwrap(), "reopened to another state");
                }
                true
            }
        }
    });
}

/// A JSON value written as the store writes it (`exact_json`).
struct Exact<'a>(&'a Value);

impl Serialize for Exact<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        crate::core::exact_json::value(self.0, s)
    }
}

/// A typed decode followed by a re-encode and a second decode that must
/// agree byte for byte.
fn msgpack_round_trip<T: DeserializeOwned + Serialize + std::fmt::Debug>(b: &[u8]) -> bool {
    let Ok(v) = crate::core::msgpack::from_slice::<T>(b) else { return false };
    let once = rmp_serde::to_vec(&v).unwrap_or_else(|e| panic!("a decoded value does not encode: {e}"));
    let back: T = match crate::core::msgpack::from_slice(&once) {
        Ok(back) => back,
        Err(_) if known_number_key_bug(&v) => return false,
        Err(e) => panic!("a re-encoded value does not decode: {e}"),
    };
    let twice = rmp_serde::to_vec(&back).unwrap();
    assert_eq!(once, twice, "re-encoding is not stable");
    true
}

/// The MessagePack reader, for every persisted type, named and positional.
#[test]
fn fuzz_msgpack() {
    let c = corpus();
    // (type, bytes): 0 Value, 1 LogEntry, 2 Op, 3 Session, 4 MemoryRecord,
    // 5 LedgerSnapshot, 6 LongTermSnapshot, 7 HistoryState, 8 SessionV0.
    let mut inputs: Vec<(usize, Vec<u8>)> = Vec::new();
    let values = [
        json!({"a": [1, -2, 3.5, "x", null, true, {"b": {"c": []}}], "n": 12345678901234567890u64, "s": "ünï"}),
        json!([[[[[[1]]]]], {}, [], "", -9223372036854775808i64]),
        serde_json::from_str::<Value>(r#"{"exact": 1234.567890123456789, "big": 123456789012345678901234567890}"#).unwrap(),
    ];
    for v in &values {
        inputs.push((0, rmp_serde::to_vec(&Exact(v)).unwrap()));
        inputs.push((0, rmp_serde::to_vec_named(v).unwrap()));
    }
    for (seq, r) in &c.records {
        let entry = decode_log_entry(*seq, r).unwrap();
        inputs.push((1, r[LOG_HEADER_BYTES + 1..].to_vec()));
        inputs.push((1, rmp_serde::to_vec_named(&entry).unwrap()));
        inputs.push((2, rmp_serde::to_vec(&entry.op).unwrap()));
    }
    for s in &c.snapshots {
        let e = Engine::decode_snapshot(s).unwrap();
        for id in e.list_sessions(0, None, 0, 100).sessions {
            if let Some(session) = e.session(&id, 0) {
                inputs.push((3, rmp_serde::to_vec(session).unwrap()));
                inputs.push((3, rmp_serde::to_vec_named(session).unwrap()));
            }
        }
        for r in e.longterm().records() {
            inputs.push((4, rmp_serde::to_vec(r).unwrap()));
        }
        inputs.push((5, rmp_serde::to_vec(&e.ledger().to_snapshot()).unwrap()));
        inputs.push((5, rmp_serde::to_vec_named(&e.ledger().to_snapshot()).unwrap()));
        inputs.push((6, rmp_serde::to_vec(&e.longterm().to_snapshot()).unwrap()));
        // The whole body too, read as a JSON value: it walks every marker.
        inputs.push((0, s[SNAPSHOT_HEADER_BYTES..].to_vec()));
    }
    inputs.push((7, rmp_serde::to_vec(&HistoryState::default()).unwrap()));
    for b in &c.v0_snapshots {
        inputs.push((8, b.clone()));
    }
    let all: Vec<Vec<u8>> = inputs.iter().map(|(_, b)| b.clone()).collect();
    drive("msgpack", |rng, input| {
        let (ty, b) = &inputs[rng.below(inputs.len())];
        let (mut ty, mut b) = (*ty, b.clone());
        mutate(rng, &mut b, &all, MSGPACK_TOKENS);
        if rng.chance(0.1) {
            ty = rng.below(9);
        }
        *input.borrow_mut() = b.clone();
        let accepted = match ty {
            0 => {
                // A stored value comes back exactly, numbers included.
                let Ok(v) = crate::core::msgpack::from_slice::<Value>(&b) else { return false };
                let once = rmp_serde::to_vec(&Exact(&v)).unwrap();
                match crate::core::msgpack::from_slice::<Value>(&once) {
                    Err(_) if known_number_key_bug(&v) => return false,
                    back => assert_eq!(back.unwrap_or_else(|e| panic!("a written value does not read back: {e}")), v, "a value read back differs"),
                }
                true
            }
            1 => msgpack_round_trip::<crate::core::engine::LogEntry>(&b),
            2 => msgpack_round_trip::<Op>(&b),
            3 => msgpack_round_trip::<Session>(&b),
            4 => msgpack_round_trip::<MemoryRecord>(&b),
            5 => msgpack_round_trip::<LedgerSnapshot>(&b),
            // The long-term snapshot form is not serializable back as read
            // (its index is a blob): decode, then load.
            6 => crate::core::msgpack::from_slice::<LongTermSnapshot>(&b).map(crate::core::longterm::LongTerm::from_snapshot).is_ok(),
            7 => msgpack_round_trip::<HistoryState>(&b),
            _ => crate::core::msgpack::from_slice::<SnapshotV0>(&b).is_ok(),
        };
        if ty == 5 {
            if let Ok(s) = crate::core::msgpack::from_slice::<LedgerSnapshot>(&b) {
                if let Ok(l) = crate::core::ledger::Ledger::from_snapshot(s) {
                    assert!(l.reconcile().is_empty(), "a loaded ledger balances");
                }
            }
        }
        accepted
    });
}

/// JSON request bodies, paths and queries through `api::handle`: every
/// answer is JSON with an honest status, never a 500, and every op the API
/// logged replays to the same state.
#[test]
fn fuzz_json_api() {
    // No snapshot: the replay check below compares the live state with the
    // log alone (a snapshot restore is checked by the `snapshot` target and
    // the simulation; see `episode_seqs_continue_after_a_restart`).
    let config = StoreConfig { snapshot_every_ops: limits::SNAPSHOT_EVERY_OPS_MAX, chunk_bytes: 4096, key_prefix: String::new() };
    let mut api = Api::new(config.clone());
    let bodies: Vec<Vec<u8>> = REQUESTS.iter().map(|(_, _, b)| b.as_bytes().to_vec()).filter(|b| !b.is_empty()).collect();
    let mut interesting: Vec<Value> = JSON_TOKENS.iter().filter_map(|t| serde_json::from_slice(t).ok()).chain([json!("x".repeat(70_000)), Value::Array(vec![json!(1); 2_000]), json!({"k": "v"}), json!(u64::MAX), json!(i64::MIN)]).collect();
    let mut tokens = JSON_TOKENS.to_vec();
    let number_key = format!("\"{NUMBER_KEY}\"");
    if NUMBER_KEY_FIXED {
        tokens.push(number_key.as_bytes());
        let mut m = serde_json::Map::new();
        m.insert("a".into(), json!(1));
        m.insert(NUMBER_KEY.into(), json!("7"));
        interesting.push(Value::Object(m));
    }
    let long = "z".repeat(300);
    let ids: Vec<&str> = vec!["s", "chat-1", "a%2Fb", "..", "%00", "x", "", "é", "agent", "h1", "kitchen", "bot", &long];
    let mut count = 0u64;
    drive("json_api", |rng, input| {
        count += 1;
        if count % 2_000 == 0 {
            api = Api::new(config.clone());
        }
        api.now += rng.below(5_000) as Millis;
        let (method, target, body) = REQUESTS[rng.below(REQUESTS.len())];
        let mut method = method.to_owned();
        let mut target = target.to_owned();
        let mut body = body.as_bytes().to_vec();
        match rng.below(20) {
            0..=10 => mutate(rng, &mut body, &bodies, &tokens),
            11..=15 => {
                // Replace one node of the JSON with an interesting value.
                if let Ok(mut v) = serde_json::from_slice::<Value>(&body) {
                    for _ in 0..rng.range(1, 3) {
                        replace_node(rng, &mut v, &interesting);
                    }
                    body = serde_json::to_vec(&v).unwrap();
                }
            }
            16..=17 => {
                let mut segs: Vec<String> = target.split('/').map(str::to_owned).collect();
                let i = rng.range(2, segs.len().max(3) as u64 - 1) as usize;
                if i < segs.len() {
                    // Keep the query of the last segment.
                    let query = segs[i].split_once('?').map(|(_, q)| format!("?{q}")).unwrap_or_default();
                    segs[i] = format!("{}{query}", rng.pick(&ids));
                }
                target = segs.join("/");
                if rng.chance(0.5) {
                    let q = rng.pick(&["limit=-1", "limit=0", "offset=18446744073709551616", "since=abc", "n=99999999", "recent_messages_limit=x", "user_id=", "dry_run=maybe", "memory_ids=", "format=xml", "cursor=4294967296", "agent_id=%ff", "kinds=nope", "model_name=gpt-4o"]);
                    target.push(if target.contains('?') { '&' } else { '?' });
                    target.push_str(q);
                }
            }
            18 => method = rng.pick(&["GET", "PUT", "POST", "PATCH", "DELETE", "HEAD", ""]).to_owned(),
            _ => {}
        }
        *input.borrow_mut() = format!("{method} {target}\n{}", String::from_utf8_lossy(&body)).into_bytes();
        let r = api.call(&method, &target, &body);
        let bytes = r.clone().into_bytes().unwrap_or_else(|e| panic!("the answer does not encode: {e}"));
        // A stored object may hold serde_json's private number key; the
        // answer is valid JSON, but this crate's own parser (built with
        // arbitrary_precision) reads that key specially when it comes
        // first, as sorted keys put it. Read such an answer with the key
        // renamed; storage itself is proven by the restart test below.
        let readable = if bytes.windows(NUMBER_KEY.len()).any(|w| w == NUMBER_KEY.as_bytes()) {
            String::from_utf8_lossy(&bytes).replace(NUMBER_KEY, "number-key").into_bytes()
        } else {
            bytes.clone()
        };
        let answer: Value = serde_json::from_slice(&readable).unwrap_or_else(|e| panic!("the answer is not JSON: {e}: {}", String::from_utf8_lossy(&bytes)));
        if r.status >= 400 {
            let code = answer["code"].as_str().unwrap_or_else(|| panic!("an error without a code: {answer}"));
            assert!(answer["detail"].is_string(), "an error without a detail: {answer}");
            assert!(crate::core::error::Error::codes().contains(&code), "unknown code {code}");
        }
        assert!(
            [200, 400, 404, 405, 409, 413, 415, 422, 503].contains(&r.status),
            "status {} for {method} {target}: {answer}",
            r.status
        );
        if r.status == 503 {
            assert_eq!(answer["code"], "encoding_not_loaded", "{answer}");
        }
        if count % 100 == 0 {
            run(api::wake(&api.store, &api::services::Offline, api.now)).unwrap_or_else(|e| panic!("wake: {e}"));
        }
        if count % 250 == 0 {
            // Every logged op replays to the live state.
            let reopened = run(Store::open(api.backend.clone(), config.clone())).unwrap_or_else(|e| panic!("reopen: {e}"));
            let live = run(api.store.read(|e| e.clone())).unwrap();
            let differs = run(reopened.read(|e| (e != &live).then(|| super::sim::diff(e, &live)))).unwrap();
            assert!(differs.is_none(), "the replayed state differs from the live one: {}", differs.unwrap_or_default());
        }
        r.status == 200
    });
}

/// Replaces one random node of `v` (or `v` itself) with an interesting value.
fn replace_node(rng: &mut Rng, v: &mut Value, interesting: &[Value]) {
    let depth = rng.below(4);
    replace_at(rng, v, interesting, depth);
}

fn replace_at(rng: &mut Rng, node: &mut Value, interesting: &[Value], depth: usize) {
    if depth > 0 {
        match node {
            Value::Object(m) if !m.is_empty() => {
                let k = m.keys().nth(rng.below(m.len())).cloned().unwrap();
                return replace_at(rng, m.get_mut(&k).unwrap(), interesting, depth - 1);
            }
            Value::Array(a) if !a.is_empty() => {
                let i = rng.below(a.len());
                return replace_at(rng, &mut a[i], interesting, depth - 1);
            }
            _ => {}
        }
    }
    let value = interesting[rng.below(interesting.len())].clone();
    if let (Value::Object(m), true) = (&mut *node, rng.chance(0.2)) {
        let key = rng.pick(&["id", "amount", "session_id", "ttl_seconds", "pending", "messages", "text", "vector", "limit", "unknown"]);
        m.insert(key.into(), value);
        return;
    }
    *node = value;
}

/// The typed transfer batch: byte columns checked whole before anything
/// applies; what applies balances, logs and replays the same.
#[test]
fn fuzz_ledger_columns() {
    let c = corpus();
    let base = &c.base;
    let accounts = base.ledger().accounts().len() as u32;
    let valid = |rng: &mut Rng| {
        let n = rng.range(1, 6) as usize;
        let mut cols = TransferColumns {
            ids: crate::core::codec::Bytes(Vec::new()),
            debit: crate::core::codec::Bytes(Vec::new()),
            credit: crate::core::codec::Bytes(Vec::new()),
            amounts: Amounts::Units(crate::core::codec::Bytes(Vec::new())),
            flags: crate::core::codec::Bytes(Vec::new()),
            timeouts: crate::core::codec::Bytes(Vec::new()),
        };
        let mut decimal = Vec::new();
        for i in 0..n {
            cols.ids.0.extend_from_slice(&(1_000 + rng.below(20) as u128 + i as u128 * 100).to_le_bytes());
            let d = rng.below(accounts as usize) as u32;
            cols.debit.0.extend_from_slice(&d.to_le_bytes());
            cols.credit.0.extend_from_slice(&((d + 1 + rng.below(accounts as usize - 1) as u32) % accounts).to_le_bytes());
            let units = rng.range(1, 5_000_000) as i64;
            if let Amounts::Units(b) = &mut cols.amounts {
                b.0.extend_from_slice(&units.to_le_bytes());
            }
            decimal.push(format!("{}.{:06}", units / 1_000_000, units % 1_000_000));
            let pending = rng.chance(0.3);
            cols.flags.0.push(u8::from(pending) | if rng.chance(0.2) { 2 } else { 0 });
            let timeout: u32 = if pending && rng.chance(0.5) { rng.range(1, 60) as u32 } else { 0 };
            cols.timeouts.0.extend_from_slice(&timeout.to_le_bytes());
        }
        if rng.chance(0.3) {
            cols.amounts = Amounts::Decimal(decimal.join(","));
        }
        cols
    };
    drive("ledger_columns", |rng, input| {
        let mut cols = valid(rng);
        for _ in 0..rng.range(0, 3) {
            let col: &mut Vec<u8> = match rng.below(7) {
                0 => &mut cols.ids.0,
                1 => &mut cols.debit.0,
                2 => &mut cols.credit.0,
                3 => &mut cols.flags.0,
                4 => &mut cols.timeouts.0,
                _ => match &mut cols.amounts {
                    Amounts::Units(b) => &mut b.0,
                    Amounts::Decimal(s) => {
                        let mut b = std::mem::take(s).into_bytes();
                        mutate(rng, &mut b, &[], JSON_TOKENS);
                        *s = String::from_utf8_lossy(&b).into_owned();
                        continue;
                    }
                },
            };
            mutate(rng, col, &[], &[]);
        }
        *input.borrow_mut() = rmp_serde::to_vec(&cols).unwrap();
        let op = Op::Ledger(LedgerOp::CreateTransferColumns(cols));
        let now = 1_700_000_100_000;
        let mut e = base.clone();
        match e.apply(&op, now) {
            Err(_) => {
                assert!(e == *base, "a refused batch changed the state");
                false
            }
            Ok(_) => {
                assert!(e.ledger().reconcile().is_empty(), "books balance");
                // Logged and replayed, the batch gives the same state.
                let seq = base.last_seq() + 1;
                let entry = decode_log_entry(seq, &encode_log_entry(seq, &crate::core::engine::LogEntry { now_ms: now, op }).unwrap()).unwrap();
                let mut replayed = base.clone();
                replayed.apply(&entry.op, entry.now_ms).unwrap();
                assert!(replayed == e, "the replayed batch differs");
                true
            }
        }
    });
}

/// The vector index blob: lengths and checksum sealed again after the
/// mutation; what loads re-encodes the same, and searches without a panic.
#[test]
fn fuzz_vector_index() {
    let mut rng0 = Rng::new(5);
    let mut blobs = Vec::new();
    for (dim, q, n, seal) in [(4usize, Quantization::None, 40u64, false), (8, Quantization::Int8, 150, true), (3, Quantization::None, 140, true)] {
        let config = Config::new(dim, Metric::Cosine).quantization(q).seal_points(limits::VECTOR_SEAL_POINTS_MIN).seed(7);
        let mut idx = VectorIndex::new(config).unwrap();
        for k in 0..n {
            let v: Vec<f32> = (0..dim).map(|i| if i == 0 { 1.0 } else { (rng0.below(2001) as f32 - 1000.0) / 1000.0 }).collect();
            idx.add(k, &v).unwrap();
        }
        if seal {
            idx.compact(10_000).unwrap();
        }
        for k in (0..n).step_by(7) {
            idx.remove(k);
        }
        blobs.push(idx.encode());
    }
    drive("vector_index", |rng, input| {
        let mut b = pick_mutated(rng, &blobs, &[]);
        if rng.chance(0.8) && b.len() >= 20 {
            let n = b.len() as u64;
            b[8..16].copy_from_slice(&n.to_le_bytes());
            let len = b.len();
            let c = crc(&b[..len - 4]).to_le_bytes();
            b[len - 4..].copy_from_slice(&c);
        }
        *input.borrow_mut() = b.clone();
        let Ok(mut idx) = VectorIndex::decode(&b) else { return false };
        let again = idx.encode();
        let back = VectorIndex::decode(&again).unwrap_or_else(|e| panic!("a re-encoded index does not load: {e}"));
        assert_eq!(back.encode(), again, "re-encoding is not stable");
        assert!(back.live_entries() == idx.live_entries() || idx.live_entries().iter().any(|(_, v)| v.iter().any(|x| x.is_nan())), "a re-encoded index holds other vectors");
        let dim = idx.config().dim;
        let query: Vec<f32> = (0..dim).map(|i| if i == 0 { 1.0 } else { 0.5 }).collect();
        let params = SearchParams { k: rng.range(1, 20) as usize, ef: if rng.chance(0.5) { Some(rng.range(1, 100) as usize) } else { None } };
        let (mut scratch, mut out) = (Scratch::default(), Vec::new());
        let _ = idx.search(&query, &params, &Eligible::All, &mut scratch, &mut out);
        let _ = idx.search_exact(&query, &params, &Eligible::All, &mut scratch, &mut out);
        let keys = [0u64, 1, 2, 3, 1_000];
        let _ = idx.search(&query, &params, &Eligible::Keys(&keys), &mut scratch, &mut out);
        if rng.chance(0.2) {
            let _ = idx.compact(1_000);
            let _ = idx.add(1_000_000, &query);
            let _ = idx.search(&query, &params, &Eligible::All, &mut scratch, &mut out);
        }
        true
    });
}

/// BPE rank assets: checksum sealed again; what loads writes the same
/// asset and finds every token at its rank.
#[test]
fn fuzz_rank_asset() {
    use crate::core::tokenizer::ranks::Ranks;
    let mut tokens: Vec<Vec<u8>> = (0u8..=255).map(|b| vec![b]).collect();
    for w in ["th", "he", "the", " the", "in", "ing", "er", " a", "an", "and", " and", "édition", "👍"] {
        tokens.push(w.as_bytes().to_vec());
    }
    let asset = Ranks::from_tokens(tokens.iter().map(Vec::as_slice)).unwrap().to_asset();
    let n = tokens.len();
    let corpus = vec![asset];
    drive("rank_asset", |rng, input| {
        let mut b = pick_mutated(rng, &corpus, &[]);
        if b.len() >= 24 {
            if rng.chance(0.5) {
                let body = (b.len() - 24).saturating_sub(u32::from_le_bytes([b[8], b[9], b[10], b[11]]) as usize) as u32;
                b[12..16].copy_from_slice(&body.to_le_bytes());
            }
            if rng.chance(0.8) {
                let c = crc(&b[24..]).to_le_bytes();
                b[16..20].copy_from_slice(&c);
            }
        }
        *input.borrow_mut() = b.clone();
        let expected = if rng.chance(0.9) { n } else if b.len() >= 12 { u32::from_le_bytes([b[8], b[9], b[10], b[11]]) as usize } else { 0 };
        if let Ok(r) = Ranks::from_asset(&b, expected) {
            // All but the reserved word (bytes 20..24), which is not read.
            let again = r.to_asset();
            assert!(again.len() == b.len() && again[..20] == b[..20] && again[24..] == b[24..], "a loaded asset writes itself");
            for rank in 0..r.len() as u32 {
                assert_eq!(r.get(r.token(rank)), Some(rank), "token {rank} is found at its rank");
            }
            return true;
        }
        false
    });
}

/// Decimal amounts, RFC 3339 times and transfer ids, as they arrive in
/// JSON strings.
#[test]
fn fuzz_scalars() {
    use crate::core::ledger::amount::{format_units, parse_amount};
    use crate::core::time::{format_rfc3339, parse_rfc3339};
    let amounts: Vec<Vec<u8>> = ["0", "1", "12.50", "0.000001", "100.26", "99999999999999999999999999999999999999", "340282366920938463463374607431768211455", "1.5e3", "-1", "+1", ".5", "5."].iter().map(|s| s.as_bytes().to_vec()).collect();
    let times: Vec<Vec<u8>> = ["2026-11-18T11:00:00Z", "2026-11-18T11:00:00.123+02:00", "1970-01-01T00:00:00Z", "9999-12-31T23:59:59.999Z", "2024-02-29T00:00:00-00:30", "2026-11-18 11:00:00", "2026-11-18T11:00:00.123456789Z"].iter().map(|s| s.as_bytes().to_vec()).collect();
    drive("scalars", |rng, input| {
        if rng.chance(0.5) {
            let b = pick_mutated(rng, &amounts, JSON_TOKENS);
            *input.borrow_mut() = b.clone();
            let s = String::from_utf8_lossy(&b);
            let scale = rng.pick(&[0u32, 2, 6, 18, limits::ASSET_SCALE_MAX, limits::ASSET_SCALE_MAX + 1, u32::MAX]);
            let id = crate::core::ledger::TransferId::parse(&s);
            assert_eq!(crate::core::ledger::TransferId::parse(&id.to_string()), id, "a transfer id parses back from its text");
            let Ok(u) = parse_amount("amount", &s, scale) else { return false };
            assert_eq!(parse_amount("amount", &format_units(u, scale), scale).unwrap(), u, "{s} at scale {scale}");
            true
        } else {
            let b = pick_mutated(rng, &times, JSON_TOKENS);
            *input.borrow_mut() = b.clone();
            let s = String::from_utf8_lossy(&b);
            let Ok(ms) = parse_rfc3339("t", &s) else { return false };
            assert_eq!(parse_rfc3339("t", &format_rfc3339(ms)).unwrap(), ms, "{s}");
            true
        }
    });
}

/// Log records decode only under the sequence number they were stored at,
/// and a valid envelope around a body that is not MessagePack is a typed
/// error (a check the fuzzers rely on).
#[test]
fn sealed_garbage_is_a_typed_error() {
    for body in [&b""[..], b"\x01", b"\x01\xc1", b"\xdd\xff\xff\xff\xff", b"\x01\x92\x01\xdf\xff\xff\xff\xff"] {
        let rec = encode_log_record(crate::core::codec::SCHEMA_VERSION, 5, body).unwrap();
        assert_eq!(decode_log_record(5, &rec).unwrap().1, body);
        assert_eq!(decode_log_entry(5, &rec).unwrap_err().code(), "log_corrupt");
    }
}

/// Found by `fuzz_json_api` (exec 167 of seed 0, when its store still took
/// snapshots): the episodic log's snapshot form keeps no `next_seq`; a load
/// derives it from the events kept, so once every event has expired (or
/// been evicted), a restarted store numbers the next event again from 0
/// where the live one goes on (the API answers `seq`).
#[test]
fn episode_seqs_continue_after_a_restart() {
    use crate::core::episodes::{Episode, EpisodicConfig};
    let episode = |id: &str, at: Millis| Episode { id: id.into(), agent_id: "bot".into(), kind: "bet".into(), at, payload: Default::default(), outcome: None, seq: 0 };
    let mut live = Engine::new();
    live.apply(&Op::EpisodesConfigure { config: EpisodicConfig { ttl_seconds: Some(60), ..EpisodicConfig::default() } }, 0).unwrap();
    live.apply(&Op::EpisodeRecord { episode: episode("e1", 1_000) }, 1_000).unwrap();
    live.apply(&Op::EpisodesExpire, 100_000).unwrap();
    let mut restored = Engine::decode_snapshot(&live.encode_snapshot().unwrap()).unwrap();
    let next = Op::EpisodeRecord { episode: episode("e2", 100_000) };
    assert_eq!(live.apply(&next, 100_000).unwrap(), restored.apply(&next, 100_000).unwrap(), "the same op on a restarted store");
}

/// A crash found while fuzzing the MessagePack reader (by a directed probe
/// of its depth limit, not by a random execution): maps nested 1,000 deep
/// overflowed a 2 MiB thread stack in a debug build, an abort, before the
/// reader's limit (then 1,024) refused them. Every decoder of persisted
/// bytes goes through this reader.
#[test]
fn deep_nesting_is_a_typed_error() {
    for depth in [1_000usize, 5_000, 100_000] {
        let mut maps = [0x81u8, 0xa1, b'a'].repeat(depth);
        maps.push(0xc0);
        let mut arrays = vec![0x91u8; depth];
        arrays.push(0xc0);
        for b in [maps, arrays] {
            assert!(crate::core::msgpack::from_slice::<Value>(&b).is_err(), "depth {depth}");
            let sealed = crate::core::codec::encode_snapshot(crate::core::codec::SCHEMA_VERSION, &b);
            assert_eq!(Engine::decode_snapshot(&sealed).unwrap_err().code(), "snapshot_corrupt");
        }
    }
    // What edgemem writes is far shallower, and still reads.
    let mut deep: Value = serde_json::from_str("1234.567890123456789").unwrap();
    for _ in 0..130 {
        deep = json!({ "a": deep });
    }
    assert_eq!(crate::core::msgpack::from_slice::<Value>(&rmp_serde::to_vec(&Exact(&deep)).unwrap()).unwrap(), deep);
}


/// Found by `fuzz_msgpack` (release, exec 8882 of seed 0, 200,000 execs): a
/// JSON object holding serde_json's private number key beside another key.
/// The API accepts it (the key is not first in the request's text), the
/// store writes it with its keys sorted (the private key first), and every
/// later read takes it for a number and fails: the tenant's store no longer
/// opens (`log_corrupt`, then `snapshot_corrupt` once a snapshot holds it).
/// Any stored JSON (session data, metadata, tool results, intents, episode
/// payloads, service states) can carry it.
#[test]
fn a_number_key_in_stored_json_survives_a_restart() {
    let config = StoreConfig { snapshot_every_ops: limits::SNAPSHOT_EVERY_OPS_MAX, chunk_bytes: 4096, key_prefix: String::new() };
    let backend = MemoryBackend::new();
    let store = run(Store::open(backend.clone(), config.clone())).unwrap();
    let mut api = Api { backend: backend.clone(), store, now: 1_795_000_000_000, counter: 0 };
    let body = br#"{"data":{"x":{"a":1,"$serde_json::private::Number":"7"}}}"#;
    let put = api.call("PUT", "/v1/working-memory/s", body);
    if put.status == 200 {
        let live = run(api.store.read(|e| e.clone())).unwrap();
        let reopened = run(Store::open(backend.clone(), config.clone())).unwrap_or_else(|e| panic!("the log no longer replays: {e}"));
        assert!(run(reopened.read(|e| e == &live)).unwrap());
        run(api.store.snapshot()).unwrap();
        let reopened = run(Store::open(backend, config)).unwrap_or_else(|e| panic!("the snapshot no longer loads: {e}"));
        assert!(run(reopened.read(|e| e == &live)).unwrap());
    }
    // Or the key is refused where JSON enters (a 422): either way, no write
    // that a restart cannot read.
}
