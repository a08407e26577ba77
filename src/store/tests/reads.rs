//! What the store reads: nothing for the keys a snapshot retires, each log
//! record once at recovery, and bounded listings only while it repairs what
//! a crash left behind.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

use super::*;

/// A backend that records the value bytes each key gave out, by `get`, by
/// `get_range` and by `list`: on Durable Object storage a listing returns
/// the values of the keys it lists (workerd has no keys-only listing), so a
/// listing costs what reading those values costs.
#[derive(Clone, Default)]
struct Counting {
    inner: MemoryBackend,
    bytes: Rc<RefCell<BTreeMap<String, u64>>>,
    times: Rc<RefCell<BTreeMap<String, u64>>>,
    lists: Rc<Cell<u64>>,
    most_listed: Rc<Cell<usize>>,
}

impl Counting {
    fn new(inner: MemoryBackend) -> Counting {
        Counting { inner, ..Counting::default() }
    }

    fn charge(&self, key: &str, len: usize) {
        *self.bytes.borrow_mut().entry(key.to_owned()).or_default() += len as u64;
        *self.times.borrow_mut().entry(key.to_owned()).or_default() += 1;
    }

    fn reset(&self) {
        self.bytes.borrow_mut().clear();
        self.times.borrow_mut().clear();
        self.lists.set(0);
        self.most_listed.set(0);
    }

    fn bytes_of(&self, key: &str) -> u64 {
        self.bytes.borrow().get(key).copied().unwrap_or(0)
    }

    fn times_of(&self, key: &str) -> u64 {
        self.times.borrow().get(key).copied().unwrap_or(0)
    }

    fn total_bytes(&self) -> u64 {
        self.bytes.borrow().values().sum()
    }
}

impl Backend for Counting {
    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        let value = self.inner.get(key).await?;
        if let Some(v) = &value {
            self.charge(key, v.len());
        }
        Ok(value)
    }
    async fn put(&self, key: &str, value: Vec<u8>) -> Result<()> {
        self.inner.put(key, value).await
    }
    async fn delete(&self, keys: &[String]) -> Result<()> {
        self.inner.delete(keys).await
    }
    async fn list(&self, range: KeyRange<'_>) -> Result<Vec<String>> {
        let entries = self.inner.get_range(range).await?;
        self.lists.set(self.lists.get() + 1);
        self.most_listed.set(self.most_listed.get().max(entries.len()));
        Ok(entries.into_iter().map(|(k, v)| {
            self.charge(&k, v.len());
            k
        }).collect())
    }
    async fn get_range(&self, range: KeyRange<'_>) -> Result<Vec<(String, Vec<u8>)>> {
        let entries = self.inner.get_range(range).await?;
        self.lists.set(self.lists.get() + 1);
        self.most_listed.set(self.most_listed.get().max(entries.len()));
        for (k, v) in &entries {
            self.charge(k, v.len());
        }
        Ok(entries)
    }
}

fn apply_range<B: Backend>(store: &Store<B>, ops: std::ops::Range<u64>) {
    for i in ops {
        // Some ops of the workload are refused by the rules; that is fine.
        let _ = run(store.apply(op(i), now(i)));
    }
}

#[test]
fn a_snapshot_cycle_reads_nothing_it_only_deletes() {
    let counting = Counting::new(MemoryBackend::new());
    let store = run(Store::open(counting.clone(), cfg(1_000, 64))).unwrap();
    apply_range(&store, 0..40);
    run(store.snapshot()).unwrap();
    apply_range(&store, 40..80);
    let before = counting.inner.dump();
    counting.reset();

    let stats = run(store.snapshot()).unwrap();
    let after = counting.inner.dump();
    let retired: Vec<&String> = before.keys().filter(|k| !after.contains_key(*k)).collect();
    assert!(retired.iter().filter(|k| k.starts_with("t/snap/0000000000000001/")).count() > 3, "generation 1 was retired: {retired:?}");
    assert!(retired.iter().filter(|k| k.starts_with("t/log/")).count() > 20, "the covered log was retired: {retired:?}");
    for k in &retired {
        assert_eq!(counting.bytes_of(k), 0, "{k} was read only to be deleted");
    }
    assert_eq!(counting.total_bytes(), 0, "a snapshot cycle reads nothing back");
    assert_eq!(counting.lists.get(), 0, "and lists nothing");
    assert_only_live(&counting.inner, stats, 64, "after the cycle");

    // The same holds when the cadence snapshots on its own, many times.
    let counting = Counting::new(MemoryBackend::new());
    let store = run(Store::open(counting.clone(), cfg(7, 64))).unwrap();
    counting.reset();
    apply_range(&store, 0..300);
    assert!(run(store.stats()).snapshot_gen > 5);
    assert_eq!((counting.total_bytes(), counting.lists.get()), (0, 0), "300 ops with snapshots read and list nothing");
}

#[test]
fn recovery_reads_each_log_record_exactly_once() {
    let backend = MemoryBackend::new();
    let store = run(Store::open(backend.clone(), cfg(1_000, 64))).unwrap();
    apply_range(&store, 0..30);
    run(store.snapshot()).unwrap();
    apply_range(&store, 30..130);
    let expected = run(store.read(|e| e.clone())).unwrap();
    drop(store);

    let stored = backend.dump();
    let log_records = stored.keys().filter(|k| k.starts_with("t/log/")).count();
    assert!(log_records > 3 * limits::RECOVERY_LOG_PAGE_RECORDS, "the log spans several pages: {log_records}");
    let counting = Counting::new(backend);
    let reopened = run(Store::open(counting.clone(), cfg(1_000, 64))).unwrap();
    assert_eq!(run(reopened.read(|e| e.clone())).unwrap(), expected);
    assert_eq!(run(reopened.stats()).log_records_since_snapshot, log_records as u64);
    // Every stored key (head, live chunks, log records) is read exactly once,
    // and nothing else is.
    for (k, v) in &stored {
        assert_eq!((counting.times_of(k), counting.bytes_of(k)), (1, v.len() as u64), "{k}");
    }
    assert_eq!(counting.total_bytes(), stored.values().map(|v| v.len() as u64).sum::<u64>());
    assert!(counting.most_listed.get() <= limits::RECOVERY_LOG_PAGE_RECORDS);
}

#[test]
fn leftovers_of_a_crash_after_the_head_swap_are_repaired_once() {
    let backend = MemoryBackend::new();
    let store = run(Store::open(backend.clone(), cfg(1_000, 64))).unwrap();
    apply_range(&store, 0..30);
    run(store.snapshot()).unwrap();
    apply_range(&store, 30..60);
    let chunks = run(store.read(|e| e.encode_snapshot().unwrap().len())).unwrap().div_ceil(64) as u64;
    // The chunks and the head land; then the process dies before any delete.
    backend.fail_writes_after(Some(chunks + 1));
    run(store.snapshot()).unwrap();
    drop(store);
    backend.fail_writes_after(None);
    let stored = backend.dump();
    assert!(stored.keys().any(|k| k.starts_with("t/snap/0000000000000001/")), "generation 1 is left behind");
    assert!(stored.keys().any(|k| k.starts_with("t/log/")), "so is the covered log");

    let counting = Counting::new(backend.clone());
    let store = run(Store::open(counting.clone(), cfg(1_000, 64))).unwrap();
    assert_eq!(counting.inner.dump(), stored, "opening writes nothing");
    apply_range(&store, 60..65);
    let stats = run(store.snapshot()).unwrap();
    assert_only_live(&backend, stats, 64, "after the repair");
    assert!(counting.most_listed.get() <= limits::STORE_REPAIR_PAGE_KEYS);

    // Repaired: the next cycle is back to reading and listing nothing.
    apply_range(&store, 65..70);
    counting.reset();
    let stats = run(store.snapshot()).unwrap();
    assert_eq!((counting.total_bytes(), counting.lists.get()), (0, 0));
    assert_only_live(&backend, stats, 64, "after the next cycle");
}

#[test]
fn orphan_chunks_of_an_unborn_snapshot_are_repaired() {
    for reopen in [false, true] {
        let backend = MemoryBackend::new();
        let mut store = run(Store::open(backend.clone(), cfg(1_000, 64))).unwrap();
        let mut big = Session::new("big".into(), 0);
        big.context = Some("x".repeat(4_000));
        run(store.apply(Op::SessionPut { session: big }, 0)).unwrap();
        // 20 chunks of a ~60-chunk snapshot land, then writes fail.
        backend.fail_writes_after(Some(20));
        assert!(run(store.snapshot()).is_err());
        backend.fail_writes_after(None);
        if reopen {
            drop(store);
            store = run(Store::open(backend.clone(), cfg(1_000, 64))).unwrap();
        }
        // A much shorter snapshot of the same generation overwrites only
        // its first chunks; the other orphans must go too.
        run(store.apply(Op::SessionDelete { session_id: "big".into() }, 1)).unwrap();
        let stats = run(store.snapshot()).unwrap();
        assert!(stats.snapshot_bytes.div_ceil(64) < 20, "{stats:?}");
        assert_only_live(&backend, stats, 64, &format!("reopen={reopen}"));
    }
}

#[test]
fn repair_is_bounded_and_later_snapshots_finish_it() {
    let backend = MemoryBackend::new();
    let store = run(Store::open(backend.clone(), cfg(1_000, 64))).unwrap();
    apply_range(&store, 0..10);
    run(store.snapshot()).unwrap();
    drop(store);
    // A backlog larger than one repair may delete: a stale generation 0.
    let backlog = limits::STORE_REPAIR_KEYS_MAX + 100;
    for i in 0..backlog {
        backend.poke(&format!("t/snap/0000000000000000/{i:08x}"), vec![0; 8]);
    }
    let stale = |b: &MemoryBackend| b.dump().keys().filter(|k| k.starts_with("t/snap/0000000000000000/")).count();

    let counting = Counting::new(backend.clone());
    let store = run(Store::open(counting.clone(), cfg(1_000, 64))).unwrap();
    apply_range(&store, 10..12);
    counting.reset();
    run(store.snapshot()).unwrap();
    assert_eq!(stale(&backend), 100, "one repair deletes at most STORE_REPAIR_KEYS_MAX keys");
    assert!(counting.most_listed.get() <= limits::STORE_REPAIR_PAGE_KEYS);
    assert!(counting.lists.get() as usize <= limits::STORE_REPAIR_KEYS_MAX / limits::STORE_REPAIR_PAGE_KEYS + 3);

    apply_range(&store, 12..14);
    let stats = run(store.snapshot()).unwrap();
    assert_only_live(&backend, stats, 64, "the next snapshot finishes the repair");
}
