//! The change feed through the store: one event per durable write, none for
//! a refused or failed one, contiguous seqs that survive a reopen, and the
//! listener told only after the log record is stored.

use std::cell::RefCell;
use std::rc::Rc;

use super::*;
use crate::core::feed::Interest;

/// A write that always succeeds.
fn put(i: u64) -> Op {
    Op::SessionPut { session: Session::new(format!("s{}", i % 5), 0) }
}

fn seqs(page: &FeedPage) -> Vec<u64> {
    page.events.iter().map(|e| e.seq).collect()
}

#[test]
fn every_durable_write_is_one_event_and_nothing_else_is() {
    let backend = MemoryBackend::new();
    let store = run(Store::open(backend.clone(), cfg(1_000, 1024))).unwrap();
    let heard = Rc::new(RefCell::new(Vec::new()));
    let h = heard.clone();
    store.set_listener(Some(Box::new(move |e| h.borrow_mut().push(e.clone()))));
    for i in 0..20 {
        run(store.apply(put(i), now(i))).unwrap();
    }
    // Refused before it changes anything: no event.
    assert!(run(store.apply(Op::SessionDelete { session_id: "never".into() }, now(21))).is_err());
    // Failed in storage: no event.
    backend.fail_writes_after(Some(0));
    assert!(run(store.apply(put(22), now(22))).is_err());
    backend.fail_writes_after(None);
    run(store.apply(put(23), now(23))).unwrap();
    let all = Interest::default();
    let page = run(store.events_since(Some(0), &all, 1_000)).unwrap();
    assert_eq!(seqs(&page), (1..=21).collect::<Vec<_>>(), "contiguous, one per durable write");
    assert_eq!(heard.borrow().iter().map(|e| e.seq).collect::<Vec<_>>(), seqs(&page), "the listener heard exactly these");
    assert_eq!(page.last_seq, 21);
    assert_eq!(page.events[20].ts, now(23));
}

#[test]
fn a_reopened_store_resumes_from_its_log_and_asks_for_a_resync_past_a_snapshot() {
    let backend = MemoryBackend::new();
    let store = run(Store::open(backend.clone(), cfg(1_000, 1024))).unwrap();
    for i in 0..30 {
        run(store.apply(put(i), now(i))).unwrap();
    }
    let all = Interest::default();
    let before = run(store.events_since(Some(10), &all, 1_000)).unwrap();
    drop(store);
    let reopened = run(Store::open(backend.clone(), cfg(1_000, 1024))).unwrap();
    let after = run(reopened.events_since(Some(10), &all, 1_000)).unwrap();
    assert_eq!(after, before, "replayed from the log: the same events");
    // Once a snapshot has truncated the log, a new process keeps nothing
    // older: resuming from before it is a resync.
    run(reopened.snapshot()).unwrap();
    run(reopened.apply(put(30), now(30))).unwrap();
    let third = run(Store::open(backend, cfg(1_000, 1024))).unwrap();
    let page = run(third.events_since(Some(10), &all, 1_000)).unwrap();
    assert!(page.resync_required && page.events.is_empty());
    assert_eq!(seqs(&run(third.events_since(Some(30), &all, 1_000)).unwrap()), [31]);
}

/// Two stores on one backend (two browser tabs on one IndexedDB database):
/// the second catches up with the first's writes, through a snapshot too.
#[test]
fn a_second_store_on_the_same_storage_catches_up_with_the_first() {
    let backend = MemoryBackend::new();
    let a = run(Store::open(backend.clone(), cfg(4, 1024))).unwrap();
    let b = run(Store::open(backend.clone(), cfg(4, 1024))).unwrap();
    assert!(run(b.catch_up()).unwrap().is_empty(), "nothing to pick up");
    for i in 0..3 {
        run(a.apply(put(i), now(i))).unwrap();
    }
    let picked: Vec<u64> = run(b.catch_up()).unwrap().iter().map(|e| e.seq).collect();
    assert_eq!(picked, [1, 2, 3]);
    assert_eq!(run(b.read(|e| e.last_seq())).unwrap(), 3);
    // Past a snapshot of the first (which deletes the log it covers).
    for i in 3..9 {
        run(a.apply(put(i), now(i))).unwrap();
    }
    run(b.catch_up()).unwrap();
    assert_eq!(run(b.read(|e| e.last_seq())).unwrap(), 9);
    assert_eq!(run(b.read(|e| e.session_count())).unwrap(), 5);
}
