//! Recovery, snapshot and crash tests of the store on the in-memory backend.

mod export_replica;
mod feed;
mod fuzz;
mod reads;
mod sealed;
mod sim;

use super::*;
use crate::core::codec::{encode_snapshot, SCHEMA_VERSION};
use crate::core::session::{Message, Session};

fn run<F: Future>(f: F) -> F::Output {
    now_or_never(f).expect("in-memory futures complete at once")
}

fn cfg(every: u64, chunk: usize) -> StoreConfig {
    StoreConfig { snapshot_every_ops: every, chunk_bytes: chunk, key_prefix: "t/".into(), ..StoreConfig::default() }
}

/// A deterministic workload: puts, appends, deletes and TTL sweeps.
fn op(i: u64) -> Op {
    let sid = format!("s{}", i % 7);
    match i % 5 {
        0 | 3 => {
            let mut s = Session::new(sid, 0);
            s.ttl_seconds = if i % 3 == 0 { Some(1 + i % 4) } else { None };
            s.context = Some(format!("summary {i} ").repeat((i % 13) as usize));
            Op::SessionPut { session: s }
        }
        1 | 4 => Op::SessionAppend {
            session_id: sid,
            messages: vec![Message { id: format!("m{i}"), role: "user".into(), content: format!("turn {i} ✓"), created_at: i, persisted_at: None, tokens: Default::default() }],
        },
        _ if i % 10 == 2 => Op::SessionsExpire,
        _ => Op::SessionDelete { session_id: sid },
    }
}

fn now(i: u64) -> Millis {
    1_000 * i
}

#[test]
fn reopen_gives_the_same_state_with_and_without_snapshots() {
    for (every, chunk) in [(1_000, 1 << 20), (7, 64), (1, 100)] {
        let backend = MemoryBackend::new();
        let store = run(Store::open(backend.clone(), cfg(every, chunk))).unwrap();
        let mut reference = Engine::new();
        for i in 0..200 {
            let a = run(store.apply(op(i), now(i)));
            let b = reference.apply(&op(i), now(i));
            assert_eq!(a.is_ok(), b.is_ok(), "op {i}");
        }
        let reopened = run(Store::open(backend.clone(), cfg(every, chunk))).unwrap();
        assert_eq!(run(reopened.read(|e| e.clone())).unwrap(), reference, "every={every}");
        let stats = run(reopened.stats());
        // A snapshot is due after `every` records once the log holds at least
        // half a snapshot's bytes (so tiny ops never rewrite a big state).
        let log_bytes: usize = backend.dump().iter().filter(|(k, _)| k.starts_with("t/log/")).map(|(_, v)| v.len()).sum();
        assert!(
            stats.log_records_since_snapshot < every || (log_bytes as u64) * 2 < stats.snapshot_bytes,
            "log is truncated after snapshots: every={every} log_bytes={log_bytes} {stats:?}"
        );
        if every < 200 {
            assert!(stats.snapshot_gen > 0);
            // Old generations and covered log records were swept.
            let keys = backend.dump();
            let gens: std::collections::BTreeSet<&str> = keys.keys().filter(|k| k.starts_with("t/snap/")).map(|k| &k[7..23]).collect();
            assert_eq!(gens.len(), 1, "{gens:?}");
            let log_keys = keys.keys().filter(|k| k.starts_with("t/log/")).count() as u64;
            assert_eq!(log_keys, stats.log_records_since_snapshot, "only records after the snapshot remain");
        }
    }
}

#[test]
fn a_quantized_store_builds_int8_indexes_the_same_after_a_restart() {
    use crate::core::longterm::{LtmOp, NewRecord};
    use crate::core::retrieval::record::{MemoryRecord, MemoryType};
    let create = |i: u64| {
        let records = (0..50)
            .map(|j| {
                let n = i * 50 + j;
                let mut r = MemoryRecord::new(format!("r{n}"), format!("note {n}"), MemoryType::Semantic, n);
                r.refresh_hash();
                let vector = (0..16).map(|d| (((n * 31 + d * 7) % 23) as f32) - 11.0).collect();
                NewRecord { record: r, vector }
            })
            .collect();
        Op::Ltm(LtmOp::Create { records, deduplicate: false, embedder: None, actor: None })
    };
    let quantization = |s: &Store<MemoryBackend>| run(s.read(|e| e.longterm().index().map(|i| i.config().quantization))).unwrap();
    // Every 40 ops a snapshot, so the restart decodes an index and replays more.
    for every in [1_000, 40] {
        let backend = MemoryBackend::new();
        let config = StoreConfig { vector_quantization: Quantization::Int8, ..cfg(every, 1 << 20) };
        let store = run(Store::open(backend.clone(), config.clone())).unwrap();
        for i in 0..100 {
            run(store.apply(create(i), now(i))).unwrap();
        }
        assert_eq!(quantization(&store), Some(Quantization::Int8));
        let live = run(store.read(|e| e.clone())).unwrap();
        let reopened = run(Store::open(backend.clone(), config)).unwrap();
        assert_eq!(quantization(&reopened), Some(Quantization::Int8), "every={every}");
        assert_eq!(run(reopened.read(|e| e.clone())).unwrap(), live, "every={every}");
        // A store of the default setting keeps f32 rows.
        let plain = run(Store::open(MemoryBackend::new(), cfg(every, 1 << 20))).unwrap();
        run(plain.apply(create(0), now(0))).unwrap();
        assert_eq!(quantization(&plain), Some(Quantization::None));
    }
}

#[test]
fn multi_chunk_snapshot_respects_chunk_size() {
    let backend = MemoryBackend::new();
    let store = run(Store::open(backend.clone(), cfg(1_000, 64))).unwrap();
    for i in 0..50 {
        let _ = run(store.apply(op(i), now(i)));
    }
    let stats = run(store.snapshot()).unwrap();
    let chunks: Vec<_> = backend.dump().into_iter().filter(|(k, _)| k.starts_with("t/snap/")).collect();
    assert!(chunks.len() > 3, "expected several chunks, got {}", chunks.len());
    assert!(chunks.iter().all(|(_, v)| v.len() <= 64));
    assert_eq!(chunks.iter().map(|(_, v)| v.len() as u64).sum::<u64>(), stats.snapshot_bytes);
}

/// A ledger workload: setup, then transfers whose ids repeat (retries with
/// identical fields), holds with timeouts, posts, voids and sweeps.
fn ledger_op(i: u64) -> Op {
    use crate::core::ledger::{LedgerOp, TransferRequest};
    use crate::core::ledger::types::AccountFlags;
    let accounts = ["bank", "agent", "casino", "escrow"];
    let op = match i {
        0 => LedgerOp::CreateAsset { code: "USDC".into(), scale: 6 },
        1..=4 => {
            let wallet = AccountFlags { debits_must_not_exceed_credits: i == 2, ..AccountFlags::default() };
            LedgerOp::CreateAccount { id: accounts[(i - 1) as usize].into(), asset: "USDC".into(), flags: wallet, max_transfer: None }
        }
        _ if i % 17 == 0 => LedgerOp::Expire,
        _ if i % 11 == 0 => LedgerOp::Post { id: format!("t{}", (i - 3) % 300), amount: None },
        _ if i % 13 == 0 => LedgerOp::Void { id: format!("t{}", (i - 5) % 300) },
        _ => {
            let n = i % 300;
            LedgerOp::CreateTransfers {
                transfers: vec![TransferRequest {
                    id: format!("t{n}"),
                    debit_account: accounts[(n % 4) as usize].into(),
                    credit_account: accounts[((n + 1) % 4) as usize].into(),
                    amount: format!("{}.{:06}", n % 50 + 1, n * 7919 % 1_000_000),
                    pending: n % 7 == 0,
                    timeout_seconds: if n % 7 == 0 { Some(1 + n % 5) } else { None },
                    linked: false,
                    metadata: None,
                }],
            }
        }
    };
    Op::Ledger(op)
}

/// Asserts that storage holds the head and the live snapshot's chunks only:
/// no older generation, no orphan chunk past the live count, no log record.
fn assert_only_live(backend: &MemoryBackend, stats: StoreStats, chunk_bytes: usize, context: &str) {
    let live = format!("t/snap/{:016x}/", stats.snapshot_gen);
    let stored = backend.dump();
    let stray: Vec<&String> = stored.keys().filter(|k| *k != "t/head" && !k.starts_with(&live)).collect();
    assert!(stray.is_empty(), "{context}: leftovers {stray:?}");
    let chunks = stored.keys().filter(|k| k.starts_with(&live)).count() as u64;
    assert_eq!(chunks, stats.snapshot_bytes.div_ceil(chunk_bytes as u64), "{context}: chunks past the live count");
}

/// Asserts that no key a committed head retired is stored: no chunk of an
/// older generation, no log record the head covers.
fn assert_nothing_retired(backend: &MemoryBackend, context: &str) {
    let stored = backend.dump();
    let Some(head) = stored.get("t/head").map(|b| crate::core::codec::Head::decode(b).unwrap()) else { return };
    let older = format!("t/snap/{:016x}/", head.gen);
    let retired: Vec<&String> = stored
        .keys()
        .filter(|k| (k.starts_with("t/snap/") && k.as_str() < older.as_str()) || k.strip_prefix("t/log/").is_some_and(|seq| u64::from_str_radix(seq, 16).unwrap() <= head.last_seq))
        .collect();
    assert!(retired.is_empty(), "{context}: retired keys left {retired:?}");
}

/// The store "dies" after every possible number of successful writes: each
/// run stops at its first failed write, reopens over what was written, and
/// must hold exactly the acknowledged ops: none lost, none extra.
fn crash_test(workload: fn(u64) -> Op, ops: u64, chunk_bytes: usize) -> Vec<Engine> {
    crash_test_on(MemoryBackend::new, workload, ops, chunk_bytes)
}

/// [`crash_test`] over backends made by `new`: with transactions, a crash
/// also never leaves a retired generation or a covered log record behind.
fn crash_test_on(new: fn() -> MemoryBackend, workload: fn(u64) -> Op, ops: u64, chunk_bytes: usize) -> Vec<Engine> {
    // Count the writes a clean run makes.
    let total_writes = {
        let backend = new();
        let store = run(Store::open(backend.clone(), cfg(50, chunk_bytes))).unwrap();
        backend.fail_writes_after(Some(u64::MAX));
        for i in 0..ops {
            let _ = run(store.apply(workload(i), now(i)));
        }
        u64::MAX - backend.writes_left.get().unwrap()
    };
    assert!(total_writes > ops / 2, "{total_writes} writes");
    let mut recovered_states = Vec::new();
    for crash_after in (0..total_writes).step_by(7).chain([total_writes - 1]) {
        let backend = new();
        let store = run(Store::open(backend.clone(), cfg(50, chunk_bytes))).unwrap();
        backend.fail_writes_after(Some(crash_after));
        let mut reference = Engine::new();
        for i in 0..ops {
            match run(store.apply(workload(i), now(i))) {
                Ok(_) => {
                    reference.apply(&workload(i), now(i)).unwrap();
                }
                Err(e) if e.code() == "storage_error" => break,
                Err(_) => {
                    // Refused by the rules: the reference refuses it too.
                    assert!(reference.apply(&workload(i), now(i)).is_err());
                }
            }
        }
        drop(store);
        backend.fail_writes_after(None);
        let recovered = run(Store::open(backend.clone(), cfg(50, chunk_bytes))).unwrap();
        let state = run(recovered.read(|e| e.clone())).unwrap();
        assert_eq!(state, reference, "crash after {crash_after} writes");
        if backend.transactions.get() {
            assert_nothing_retired(&backend, &format!("crash after {crash_after} writes"));
        }
        // Whatever the crash left behind, the next snapshot removes it.
        let stats = run(recovered.snapshot()).unwrap();
        assert_only_live(&backend, stats, chunk_bytes, &format!("crash after {crash_after} writes"));
        recovered_states.push(state);
    }
    assert!(recovered_states.len() > 100);
    recovered_states
}

#[test]
fn crash_after_every_write_loses_no_acknowledged_op() {
    crash_test(op, 1_000, 128);
}

#[test]
fn with_transactions_a_crash_leaves_no_retired_key() {
    crash_test_on(MemoryBackend::with_transactions, op, 1_000, 128);
}

#[test]
fn crash_after_every_write_loses_no_acknowledged_transfer() {
    for state in crash_test(ledger_op, 1_200, 8 * 1024) {
        let ledger = state.ledger();
        assert!(ledger.reconcile().is_empty(), "balances reconcile after recovery");
        // Ids repeat every 300 ops: each created transfer has exactly one effect.
        let (transfers, _) = ledger.counts();
        assert!(transfers <= 300);
    }
}

#[test]
fn a_failed_write_heals_from_storage() {
    let backend = MemoryBackend::new();
    let store = run(Store::open(backend.clone(), cfg(1_000, 1024))).unwrap();
    run(store.apply(op(0), 0)).unwrap();
    let append = || Op::SessionAppend {
        session_id: "s0".into(),
        messages: vec![Message { id: "m".into(), role: "user".into(), content: "lost?".into(), created_at: 1, persisted_at: None, tokens: Default::default() }],
    };
    backend.fail_writes_after(Some(0));
    assert_eq!(run(store.apply(append(), 1)).unwrap_err().code(), "storage_error");
    backend.fail_writes_after(None);
    // The failed append is not visible: the store reloaded from storage.
    let s = run(store.read(|e| e.session("s0", 2).cloned())).unwrap().unwrap();
    assert!(s.messages.is_empty());
    assert_eq!(run(store.stats()).last_seq, 1);
    // And the same op succeeds once storage is back.
    run(store.apply(append(), 3)).unwrap();
    let reopened = run(Store::open(backend, cfg(1_000, 1024))).unwrap();
    assert_eq!(run(reopened.read(|e| e.session("s0", 4).unwrap().messages.len())).unwrap(), 1);
}

#[test]
fn corrupt_and_future_snapshots_are_refused_and_left_untouched() {
    let backend = MemoryBackend::new();
    let store = run(Store::open(backend.clone(), cfg(1_000, 64))).unwrap();
    for i in 0..20 {
        let _ = run(store.apply(op(i), now(i)));
    }
    run(store.snapshot()).unwrap();
    let good = backend.dump();

    // Flip one byte in a chunk.
    let (key, mut value) = good.iter().find(|(k, _)| k.starts_with("t/snap/")).map(|(k, v)| (k.clone(), v.clone())).unwrap();
    let at = 40 % value.len();
    value[at] ^= 0x10;
    backend.poke(&key, value);
    let err = run(Store::open(backend.clone(), cfg(1_000, 64))).err().unwrap();
    assert_eq!(err.code(), "snapshot_corrupt");
    assert_eq!(backend.dump().len(), good.len(), "a refused open writes nothing");

    // A snapshot from a newer edgemem.
    let fresh = MemoryBackend::new();
    let future = encode_snapshot(SCHEMA_VERSION + 1, b"whatever the future holds");
    fresh.poke("t/snap/0000000000000001/00000000", future.clone());
    fresh.poke("t/head", Head { gen: 1, chunk_count: 1, snapshot_bytes: future.len() as u64, last_seq: 0 }.encode());
    let before = fresh.dump();
    let err = run(Store::open(fresh.clone(), cfg(1_000, 64))).err().unwrap();
    assert_eq!(err, Error::SchemaVersionUnsupported { found: SCHEMA_VERSION + 1, supported_max: SCHEMA_VERSION, input: false });
    assert_eq!(fresh.dump(), before);

    // A missing chunk, a damaged head, a gap in the log.
    for damage in 0..3 {
        let b = MemoryBackend::new();
        for (k, v) in &good {
            b.poke(k, v.clone());
        }
        let store = run(Store::open(b.clone(), cfg(1_000, 64))).unwrap();
        for i in 20..23 {
            let _ = run(store.apply(op(i), now(i)));
        }
        let keys = b.dump();
        match damage {
            0 => {
                let k = keys.keys().find(|k| k.starts_with("t/snap/")).unwrap().clone();
                b.map.borrow_mut().remove(&k);
            }
            1 => b.poke("t/head", b"garbage".to_vec()),
            _ => {
                let k = keys.keys().find(|k| k.starts_with("t/log/")).unwrap().clone();
                b.map.borrow_mut().remove(&k);
            }
        }
        let err = run(Store::open(b, cfg(1_000, 64))).err().unwrap();
        assert!(matches!(err.code(), "snapshot_corrupt" | "log_corrupt"), "damage {damage}: {err}");
    }
}

#[test]
fn oversized_op_is_refused_before_it_changes_anything() {
    let store = run(Store::open(MemoryBackend::new(), StoreConfig::default())).unwrap();
    run(store.apply(Op::SessionPut { session: Session::new("big".into(), 0) }, 0)).unwrap();
    let huge = "x".repeat(200_000);
    let messages = (0..10)
        .map(|i| Message { id: format!("m{i}"), role: "user".into(), content: huge.clone(), created_at: 0, persisted_at: None, tokens: Default::default() })
        .collect();
    let err = run(store.apply(Op::SessionAppend { session_id: "big".into(), messages }, 1)).unwrap_err();
    assert_eq!(err.code(), "payload_too_large");
    assert!(run(store.read(|e| e.session("big", 1).unwrap().messages.is_empty())).unwrap());
}

#[test]
fn eventually_consistent_backends_cannot_hold_the_log() {
    struct Kv(MemoryBackend);
    impl Backend for Kv {
        async fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
            self.0.get(key).await
        }
        async fn put(&self, key: &str, value: Vec<u8>) -> Result<()> {
            self.0.put(key, value).await
        }
        async fn delete(&self, keys: &[String]) -> Result<()> {
            self.0.delete(keys).await
        }
        async fn list(&self, range: KeyRange<'_>) -> Result<Vec<String>> {
            self.0.list(range).await
        }
        fn durability(&self) -> Durability {
            Durability::SnapshotsOnly
        }
    }
    let err = run(Store::open(Kv(MemoryBackend::new()), StoreConfig::default())).err().unwrap();
    assert_eq!(err.code(), "store_unsuitable");
}

#[test]
fn config_is_validated() {
    for bad in [cfg(0, 1024), cfg(limits::SNAPSHOT_EVERY_OPS_MAX + 1, 1024), cfg(10, 1), cfg(10, limits::SNAPSHOT_CHUNK_BYTES_MAX + 1)] {
        assert_eq!(run(Store::open(MemoryBackend::new(), bad)).err().unwrap().code(), "invalid_input");
    }
}

#[test]
fn publish_to_a_snapshots_only_mirror_and_open_it() {
    let backend = MemoryBackend::new();
    let store = run(Store::open(backend, cfg(1_000, 1024))).unwrap();
    for i in 0..40 {
        let _ = run(store.apply(op(i), now(i)));
    }
    let mirror = MemoryBackend::new();
    let pub_cfg = StoreConfig { key_prefix: "kv/".into(), chunk_bytes: 100, ..StoreConfig::default() };
    let first = run(store.publish(&mirror, &pub_cfg)).unwrap();
    let _ = run(store.apply(op(40), now(40)));
    let second = run(store.publish(&mirror, &pub_cfg)).unwrap();
    assert_eq!(second.snapshot_gen, first.snapshot_gen + 1);
    assert!(mirror.dump().keys().all(|k| k == "kv/head" || k.starts_with(&format!("kv/snap/{:016x}/", second.snapshot_gen))));
    let replica = run(Store::open_published(&mirror, "kv/")).unwrap();
    assert_eq!(run(replica.read(|e| e.clone())).unwrap(), run(store.read(|e| e.clone())).unwrap());
}

#[test]
fn snapshot_cost_stays_proportional_to_what_was_logged() {
    let backend = MemoryBackend::new();
    let store = run(Store::open(backend, cfg(1, 1 << 20))).unwrap();
    let mut big = Session::new("big".into(), 0);
    big.context = Some("x".repeat(200_000));
    run(store.apply(Op::SessionPut { session: big }, 0)).unwrap();
    assert_eq!(run(store.stats()).snapshot_gen, 1, "the first op snapshots (nothing to compare with yet)");
    for i in 0..200 {
        let m = Message { id: format!("m{i}"), role: "user".into(), content: "short".into(), created_at: i, persisted_at: None, tokens: Default::default() };
        run(store.apply(Op::SessionAppend { session_id: "big".into(), messages: vec![m] }, i)).unwrap();
    }
    let stats = run(store.stats());
    // Each append logs ~100 bytes against a ~200 KB state: re-snapshotting
    // after every op would write 40 MB; the policy waits for ~100 KB of log.
    assert_eq!(stats.snapshot_gen, 1, "{stats:?}");
    assert_eq!(stats.log_records_since_snapshot, 200);
}

/// A backend whose snapshot chunk writes always fail (as a state past the
/// size limit would), counting the attempts; log writes succeed.
struct NoSnapshots {
    inner: MemoryBackend,
    chunk_attempts: std::cell::Cell<u64>,
}

impl Backend for NoSnapshots {
    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        self.inner.get(key).await
    }
    async fn put(&self, key: &str, value: Vec<u8>) -> Result<()> {
        if key.contains("snap/") {
            self.chunk_attempts.set(self.chunk_attempts.get() + 1);
            return Err(Error::storage("snapshot refused"));
        }
        self.inner.put(key, value).await
    }
    async fn delete(&self, keys: &[String]) -> Result<()> {
        self.inner.delete(keys).await
    }
    async fn list(&self, range: KeyRange<'_>) -> Result<Vec<String>> {
        self.inner.list(range).await
    }
}

#[test]
fn a_failing_snapshot_is_retried_only_after_the_log_grows() {
    let backend = NoSnapshots { inner: MemoryBackend::new(), chunk_attempts: std::cell::Cell::new(0) };
    let store = run(Store::open(backend, cfg(1, 1 << 20))).unwrap();
    let mut ok = 0;
    for i in 0..3_000 {
        if run(store.apply(op(i), now(i))).is_ok() {
            ok += 1;
        }
    }
    assert!(ok > 1_000, "ops still succeed while snapshots fail");
    let attempts = run(store.inner.lock()).backend.chunk_attempts.get();
    // Without the back-off every op would retry (about 3,000 attempts).
    assert!((1..=5).contains(&attempts), "{attempts} snapshot attempts");
    let stats = run(store.stats());
    assert_eq!(stats.snapshot_gen, 0);
}

#[test]
fn key_range_bounds_select_exactly_the_keys_it_contains() {
    assert_eq!(KeyRange { prefix: "log/", start: "", end: None, limit: 1 }.bounds().unwrap(), ("log/".into(), Some("log0".into())));
    assert_eq!(KeyRange { prefix: "", start: "", end: None, limit: 1 }.bounds().unwrap(), (String::new(), None));
    assert_eq!(KeyRange { prefix: "snap/", start: "", end: Some("snap/01/"), limit: 1 }.bounds().unwrap(), ("snap/".into(), Some("snap/01/".into())));
    assert_eq!(KeyRange { prefix: "t/", start: "t/log/", end: Some("zzz"), limit: 1 }.bounds().unwrap(), ("t/log/".into(), Some("t0".into())));
    assert!(KeyRange { prefix: "caf\u{e9}", start: "", end: None, limit: 1 }.bounds().is_err(), "a prefix ending past ASCII is refused");
    // Every ASCII key over a small alphabet, against `contains`.
    let alphabet = ["", "/", "0", "a", "g", "h", "z", "\0", "~"];
    let mut keys = vec![String::new()];
    for _ in 0..3 {
        keys = keys.iter().flat_map(|k| alphabet.iter().map(move |c| format!("{k}{c}"))).collect();
    }
    keys.sort();
    keys.dedup();
    for prefix in ["", "a", "a/", "g0", "~"] {
        for start in ["", "a", "a/0", "h"] {
            for end in [None, Some("a/z"), Some("b"), Some("")] {
                let range = KeyRange { prefix, start, end, limit: usize::MAX };
                let (lo, hi) = range.bounds().unwrap();
                for key in &keys {
                    let inside = key.as_str() >= lo.as_str() && hi.as_deref().is_none_or(|h| key.as_str() < h);
                    assert_eq!(inside, range.contains(key), "{range:?} and {key:?}: bounds {lo:?}..{hi:?}");
                }
            }
        }
    }
}
