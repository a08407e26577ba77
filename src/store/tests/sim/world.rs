//! The simulation's world: durable storage, the writes in flight with the
//! fate the seed gives each, what the tasks report, and the backend the
//! store runs over ([`FaultBackend`]).

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use super::*;

pub(super) enum Write {
    Put { key: String, value: Vec<u8> },
    Delete { keys: Vec<String> },
}

pub(super) struct InFlight {
    pub(super) id: u64,
    /// The task whose poll issued it.
    pub(super) task: usize,
    pub(super) write: Write,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Fate {
    Land,
    /// An error, nothing written.
    Fail,
    /// Written, then an error: the acknowledgement was lost.
    FailLanded,
}

/// A log record that reached durable storage.
pub(super) struct Landed {
    pub(super) seq: u64,
    pub(super) task: usize,
    pub(super) op: Op,
    pub(super) now: Millis,
    pub(super) bytes: Vec<u8>,
}

pub(super) enum Done {
    Op(Box<OpDone>),
    Snapshot { result: Result<StoreStats>, clean: bool },
}

/// An op a task applied, what the store answered, and the sequence number
/// its log record landed as (if it did).
pub(super) struct OpDone {
    pub(super) task: usize,
    pub(super) op: Op,
    pub(super) now: Millis,
    pub(super) result: Result<Applied>,
    pub(super) landed: Option<u64>,
}

/// An outside service called under execute-once.
pub(super) struct External {
    pub(super) calls: u32,
    pub(super) outcome: Value,
}

#[derive(Debug, Default, Clone)]
pub(super) struct Tally {
    pub(super) seeds: u64,
    pub(super) ops: u64,
    pub(super) acked: u64,
    pub(super) refused: u64,
    pub(super) storage_errors: u64,
    pub(super) failed_writes: u64,
    pub(super) ambiguous_writes: u64,
    pub(super) torn_snapshots: u64,
    pub(super) crashes: u64,
    pub(super) crashes_mid_write: u64,
    pub(super) crash_landed: u64,
    pub(super) crash_lost: u64,
    pub(super) crash_reordered: u64,
    pub(super) failed_opens: u64,
    pub(super) clean_snapshots_checked: u64,
    pub(super) max_in_flight: usize,
    pub(super) external_calls: u64,
    pub(super) transfers_created: u64,
    pub(super) transfer_retries_exist: u64,
}

impl Tally {
    pub(super) fn add(&mut self, o: &Tally) {
        self.seeds += o.seeds;
        self.ops += o.ops;
        self.acked += o.acked;
        self.refused += o.refused;
        self.storage_errors += o.storage_errors;
        self.failed_writes += o.failed_writes;
        self.ambiguous_writes += o.ambiguous_writes;
        self.torn_snapshots += o.torn_snapshots;
        self.crashes += o.crashes;
        self.crashes_mid_write += o.crashes_mid_write;
        self.crash_landed += o.crash_landed;
        self.crash_lost += o.crash_lost;
        self.crash_reordered += o.crash_reordered;
        self.failed_opens += o.failed_opens;
        self.clean_snapshots_checked += o.clean_snapshots_checked;
        self.max_in_flight = self.max_in_flight.max(o.max_in_flight);
        self.external_calls += o.external_calls;
        self.transfers_created += o.transfers_created;
        self.transfer_retries_exist += o.transfer_retries_exist;
    }
}

pub(super) struct World {
    pub(super) seed: u64,
    pub(super) trace: bool,
    pub(super) durable: MemoryBackend,
    /// Writes wait for the simulation to decide their fate; otherwise they
    /// land at once (setup and the checks between epochs).
    pub(super) manual: Cell<bool>,
    pub(super) in_flight: RefCell<Vec<InFlight>>,
    pub(super) resolved: RefCell<HashMap<u64, Result<()>>>,
    pub(super) next_write: Cell<u64>,
    /// The task being polled: the owner of the writes it issues.
    pub(super) polling: Cell<usize>,
    /// The op each task is applying.
    pub(super) ops: RefCell<HashMap<usize, (Op, Millis)>>,
    /// The sequence number of the log record each task's current op landed as.
    pub(super) landed_by_task: RefCell<HashMap<usize, u64>>,
    pub(super) landed: RefCell<Vec<Landed>>,
    pub(super) done: RefCell<Vec<Done>>,
    pub(super) external: RefCell<BTreeMap<String, External>>,
    /// Reads left before one fails (while reopening).
    pub(super) reads_until_fault: Cell<Option<u64>>,
    /// Faults injected so far (a snapshot with none during it must be clean).
    pub(super) injected: Cell<u64>,
    pub(super) tally: RefCell<Tally>,
}

impl World {
    pub(super) fn new(seed: u64, trace: bool) -> World {
        World {
            seed,
            trace,
            durable: MemoryBackend::new(),
            manual: Cell::new(false),
            in_flight: RefCell::default(),
            resolved: RefCell::default(),
            next_write: Cell::new(0),
            polling: Cell::new(usize::MAX),
            ops: RefCell::default(),
            landed_by_task: RefCell::default(),
            landed: RefCell::default(),
            done: RefCell::default(),
            external: RefCell::default(),
            reads_until_fault: Cell::new(None),
            injected: Cell::new(0),
            tally: RefCell::default(),
        }
    }

    pub(super) fn trace(&self, what: impl FnOnce() -> String) {
        if self.trace {
            eprintln!("sim[{}]: {}", self.seed, what());
        }
    }

    pub(super) fn read(&self) -> Result<()> {
        match self.reads_until_fault.get() {
            Some(0) => {
                self.reads_until_fault.set(None);
                self.trace(|| "read fails".into());
                Err(Error::storage("injected: read failed"))
            }
            Some(n) => {
                self.reads_until_fault.set(Some(n - 1));
                Ok(())
            }
            None => Ok(()),
        }
    }

    pub(super) async fn write(&self, write: Write) -> Result<()> {
        let task = self.polling.get();
        if !self.manual.get() {
            self.land(task, write);
            return Ok(());
        }
        let id = self.next_write.get();
        self.next_write.set(id + 1);
        let n = {
            let mut f = self.in_flight.borrow_mut();
            f.push(InFlight { id, task, write });
            f.len()
        };
        {
            let mut t = self.tally.borrow_mut();
            t.max_in_flight = t.max_in_flight.max(n);
        }
        std::future::poll_fn(|_| match self.resolved.borrow_mut().remove(&id) {
            Some(r) => Poll::Ready(r),
            None => Poll::Pending,
        })
        .await
    }

    /// Makes a write durable.
    pub(super) fn land(&self, task: usize, write: Write) {
        match write {
            Write::Put { key, value } => {
                if let Some(seq) = super::super::keys::parse_seq(PREFIX, &key) {
                    let (op, now) = self.ops.borrow().get(&task).cloned().unwrap_or_else(|| panic!("seed {}: log record {seq} written outside an apply", self.seed));
                    self.landed_by_task.borrow_mut().insert(task, seq);
                    self.landed.borrow_mut().push(Landed { seq, task, op, now, bytes: value.clone() });
                }
                self.durable.poke(&key, value);
            }
            Write::Delete { keys } => {
                let mut map = self.durable.map.borrow_mut();
                for k in keys {
                    map.remove(&k);
                }
            }
        }
    }

    pub(super) fn describe(w: &Write) -> String {
        match w {
            Write::Put { key, value } => format!("put {key} ({} bytes)", value.len()),
            Write::Delete { keys } => format!("delete {} keys from {:?}", keys.len(), keys.first()),
        }
    }

    /// Whether losing this write tears a snapshot: a chunk after the first.
    pub(super) fn tears(w: &Write) -> bool {
        matches!(w, Write::Put { key, .. } if key.starts_with("t/snap/") && !key.ends_with("/00000000"))
    }

    pub(super) fn resolve(&self, i: usize, fate: Fate) {
        let f = self.in_flight.borrow_mut().remove(i);
        self.trace(|| format!("{fate:?}: {}", World::describe(&f.write)));
        let result = match fate {
            Fate::Land => {
                self.land(f.task, f.write);
                Ok(())
            }
            Fate::Fail => {
                let mut t = self.tally.borrow_mut();
                t.failed_writes += 1;
                t.torn_snapshots += u64::from(World::tears(&f.write));
                self.injected.set(self.injected.get() + 1);
                Err(Error::storage("injected: write failed, nothing written"))
            }
            Fate::FailLanded => {
                self.tally.borrow_mut().ambiguous_writes += 1;
                self.injected.set(self.injected.get() + 1);
                self.land(f.task, f.write);
                Err(Error::storage("injected: write landed, acknowledgement lost"))
            }
        };
        self.resolved.borrow_mut().insert(f.id, result);
    }

    /// The process dies: every write in flight lands or not, in a random order.
    pub(super) fn crash(&self, rng: &mut Rng) {
        let mut flights = std::mem::take(&mut *self.in_flight.borrow_mut());
        for i in (1..flights.len()).rev() {
            flights.swap(i, rng.below(i + 1));
        }
        {
            let mut t = self.tally.borrow_mut();
            t.crashes += 1;
            t.crashes_mid_write += u64::from(!flights.is_empty());
            t.crash_reordered += u64::from(flights.len() > 1);
        }
        self.injected.set(self.injected.get() + 1);
        self.trace(|| format!("crash with {} writes in flight", flights.len()));
        for f in flights {
            if rng.chance(0.5) {
                self.trace(|| format!("  lands: {}", World::describe(&f.write)));
                self.tally.borrow_mut().crash_landed += 1;
                self.land(f.task, f.write);
            } else {
                self.trace(|| format!("  lost: {}", World::describe(&f.write)));
                let mut t = self.tally.borrow_mut();
                t.crash_lost += 1;
                t.torn_snapshots += u64::from(World::tears(&f.write));
            }
        }
        self.resolved.borrow_mut().clear();
        self.ops.borrow_mut().clear();
        self.landed_by_task.borrow_mut().clear();
    }

    /// The outside service of execute-once: answers a receipt, and counts.
    pub(super) fn call_external(&self, key: &str) -> Value {
        let mut ext = self.external.borrow_mut();
        let e = ext.entry(key.to_owned()).or_insert_with(|| External { calls: 0, outcome: json!({ "receipt": format!("r-{}", &key[..12]) }) });
        e.calls += 1;
        assert_eq!(e.calls, 1, "seed {}: execute-once called the outside service twice for {key}", self.seed);
        self.tally.borrow_mut().external_calls += 1;
        e.outcome.clone()
    }
}

/// A backend that moves bytes in and out of [`World::durable`], with the
/// simulation deciding the fate of every write.
#[derive(Clone)]
pub(super) struct FaultBackend(pub(super) std::rc::Rc<World>);

impl Backend for FaultBackend {
    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        self.0.read()?;
        self.0.durable.get(key).await
    }
    async fn put(&self, key: &str, value: Vec<u8>) -> Result<()> {
        self.0.write(Write::Put { key: key.to_owned(), value }).await
    }
    async fn delete(&self, keys: &[String]) -> Result<()> {
        self.0.write(Write::Delete { keys: keys.to_vec() }).await
    }
    async fn list(&self, range: KeyRange<'_>) -> Result<Vec<String>> {
        self.0.read()?;
        self.0.durable.list(range).await
    }
    async fn get_range(&self, range: KeyRange<'_>) -> Result<Vec<(String, Vec<u8>)>> {
        self.0.read()?;
        self.0.durable.get_range(range).await
    }
}

