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

mod codecs;
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
            let config = StoreConfig { snapshot_every_ops: limits::SNAPSHOT_EVERY_OPS_MAX, chunk_bytes: chunk, key_prefix: PREFIX.into(), ..StoreConfig::default() };
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
    let config = StoreConfig { snapshot_every_ops: limits::SNAPSHOT_EVERY_OPS_MAX, chunk_bytes: 4096, key_prefix: String::new(), ..StoreConfig::default() };
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
