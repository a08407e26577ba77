//! A split's fence at its source shard (issue 21): from the fence on, the
//! source refuses writes to the moving buckets, so the split's last rounds
//! copy a part that no longer changes.
//!
//! Refusing new writes is not enough: a write admitted just before the
//! fence may still be on its way to the state (awaiting its embedding,
//! its quota, storage) when the last round digests it, and would then be
//! acknowledged and collected with the old copy after the flip: lost.
//! So a shard counts the writes it admitted and has not answered
//! ([`InFlight`]), and setting a fence waits until none it would refuse is
//! left ([`set`]): everything acknowledged before the last round's digest
//! is in it. A write that takes longer than
//! [`limits::SHARD_FENCE_DRAIN_MS`] lifts the fence again and the split is
//! retried later, rather than holding writes back that long.

use std::cell::{Cell, RefCell};

use serde::{Deserialize, Serialize};
use worker::State;

use super::split::{read, storage_error, write};
use super::Routed;
use crate::core::error::Result;
use crate::core::limits;
use crate::core::shard::Bucket;

const FENCE_KEY: &str = "shard/fence";

/// A fence a source holds while a split of its buckets finishes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fence {
    pub move_id: u64,
    pub buckets: Vec<Bucket>,
    /// The epoch of the map after the move: requests routed under it wait
    /// for the release.
    pub flip_epoch: u64,
}

/// A shard's fence, read once per object lifetime.
pub async fn fence(state: &State, cell: &RefCell<Option<Option<Fence>>>) -> Result<Option<Fence>> {
    if let Some(f) = cell.borrow().clone() {
        return Ok(f);
    }
    let f: Option<Fence> = read(state, FENCE_KEY).await?;
    *cell.borrow_mut() = Some(f.clone());
    Ok(f)
}

/// Whether a fence refuses a routed request: anything routed under the
/// map after the move until the release (but the tenant's home state),
/// and writes to the moving buckets, to every bucket, or to every shard.
pub fn fenced(f: &Fence, r: &Routed) -> bool {
    let home_only = r.home && !r.all;
    if home_only {
        return false;
    }
    if r.epoch >= f.flip_epoch {
        return true;
    }
    r.write && (r.all || r.buckets.is_empty() || r.buckets.iter().any(|b| f.buckets.binary_search(b).is_ok()))
}

/// The writes a shard admitted and has not answered yet, each with what it
/// was routed by.
#[derive(Default)]
pub struct InFlight {
    next: Cell<u64>,
    open: RefCell<Vec<(u64, Routed)>>,
}

/// One admitted write; dropping it says it is answered.
pub struct Admitted<'a> {
    set: &'a InFlight,
    id: u64,
}

impl Drop for Admitted<'_> {
    fn drop(&mut self) {
        self.set.open.borrow_mut().retain(|(id, _)| *id != self.id);
    }
}

impl InFlight {
    /// Counts `r` until the guard drops, if it may write.
    pub fn begin(&self, r: &Routed) -> Option<Admitted<'_>> {
        r.write.then(|| self.open_one(r.clone()))
    }

    /// Counts the shard's own background work (expiry, extraction) as a
    /// write to every bucket.
    pub fn begin_background(&self) -> Admitted<'_> {
        self.open_one(Routed { tenant: String::new(), shard: 0, epoch: 0, buckets: Vec::new(), home: false, write: true, all: true })
    }

    fn open_one(&self, r: Routed) -> Admitted<'_> {
        let id = self.next.get();
        self.next.set(id.wrapping_add(1));
        self.open.borrow_mut().push((id, r));
        Admitted { set: self, id }
    }

    /// Whether an admitted write is one `f` would have refused.
    pub fn held_by(&self, f: &Fence) -> bool {
        self.open.borrow().iter().any(|(_, r)| fenced(f, r))
    }
}

/// Sets fence `f` (new writes to its buckets are refused from here), then
/// waits for the writes admitted before it that it would have refused.
/// Answers whether it holds: past [`limits::SHARD_FENCE_DRAIN_MS`] the
/// fence is lifted again (`false`) and the split tries again later.
pub async fn set(state: &State, cell: &RefCell<Option<Option<Fence>>>, writes: &InFlight, f: Fence) -> Result<bool> {
    write(state, FENCE_KEY, &f).await?;
    *cell.borrow_mut() = Some(Some(f.clone()));
    // The clock, not the polls counted: a timer may fire late.
    let since = super::super::now_ms();
    while writes.held_by(&f) {
        if super::super::now_ms().saturating_sub(since) >= limits::SHARD_FENCE_DRAIN_MS {
            lift(state, cell, f.move_id).await?;
            return Ok(false);
        }
        worker::Delay::from(std::time::Duration::from_millis(limits::SHARD_FENCE_DRAIN_POLL_MS)).await;
    }
    Ok(true)
}

/// Lifts move `move_id`'s fence, if this shard holds it; answers whether
/// it did.
pub async fn lift(state: &State, cell: &RefCell<Option<Option<Fence>>>, move_id: u64) -> Result<bool> {
    let lifted = fence(state, cell).await?.is_some_and(|f| f.move_id == move_id);
    if lifted {
        state.storage().delete(FENCE_KEY).await.map_err(storage_error(FENCE_KEY))?;
        *cell.borrow_mut() = Some(None);
    }
    Ok(lifted)
}
