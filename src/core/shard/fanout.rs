//! A tenant-wide fan-out's time and what its answer covers (issue 21, item
//! 4). The request gets a deadline ([`deadline_at`]); every hop of the tree
//! gives its children one a margin earlier ([`child_deadline`]), so a node
//! whose children are late still has time to merge and answer by its own.
//! A child that answered late, or with an error, is missing together with
//! its whole subtree ([`Coverage::missing`]); the answer is then marked
//! `partial` and names those shards. It is never silently short: every
//! shard asked is either in the answer or named missing.
//!
//! The host runs the calls (in the Worker, each races a timer); this module
//! decides what they mean, so the rules are tested natively.

use serde_json::{json, Value};

use super::{FanOut, ShardId};
use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::time::Millis;

/// When a fan-out asked at `now` must have answered: `now` plus the
/// request's deadline (`asked_ms`, else
/// [`limits::SHARD_FANOUT_DEADLINE_MS_DEFAULT`]), which must lie within
/// [`limits::SHARD_FANOUT_DEADLINE_MS_MIN`]..=[`limits::SHARD_FANOUT_DEADLINE_MS_MAX`].
pub fn deadline_at(now: Millis, asked_ms: Option<u64>) -> Result<Millis> {
    let ms = asked_ms.unwrap_or(limits::SHARD_FANOUT_DEADLINE_MS_DEFAULT);
    if !(limits::SHARD_FANOUT_DEADLINE_MS_MIN..=limits::SHARD_FANOUT_DEADLINE_MS_MAX).contains(&ms) {
        return Err(Error::invalid(
            "deadline_ms",
            format!("must be {} to {}", limits::SHARD_FANOUT_DEADLINE_MS_MIN, limits::SHARD_FANOUT_DEADLINE_MS_MAX),
        ));
    }
    Ok(now.saturating_add(ms))
}

/// The deadline a node whose own is `deadline` gives its children, asked
/// at `now`: a hop margin earlier. `None` when that leaves no time, and
/// the children count as missing without being called.
pub fn child_deadline(deadline: Millis, now: Millis) -> Option<Millis> {
    let d = deadline.checked_sub(limits::SHARD_FANOUT_HOP_MARGIN_MS)?;
    (d > now).then_some(d)
}

/// Which shards a (partial) answer covers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Every shard asked, in tree order.
    pub asked: Vec<ShardId>,
    /// Those that did not answer in time (or answered an error).
    pub missing: Vec<ShardId>,
    /// A shard answered `shard_moved`: the caller's map is stale, and the
    /// front refreshes it and asks again.
    pub stale: bool,
}

impl Coverage {
    /// A node that answered for itself.
    pub fn answered(shard: ShardId) -> Coverage {
        Coverage { asked: vec![shard], missing: Vec::new(), stale: false }
    }

    /// A subtree that did not answer: every shard in it is missing.
    pub fn missing(node: &FanOut) -> Coverage {
        let shards = node.shards();
        Coverage { missing: shards.clone(), asked: shards, stale: false }
    }

    /// A subtree whose root answered `shard_moved`.
    pub fn moved(node: &FanOut) -> Coverage {
        Coverage { stale: true, ..Coverage::missing(node) }
    }

    /// Adds a child subtree's coverage to this node's.
    pub fn absorb(&mut self, child: Coverage) {
        self.asked.extend(child.asked);
        self.missing.extend(child.missing);
        self.stale |= child.stale;
    }

    /// Whether some shard did not answer.
    pub fn partial(&self) -> bool {
        !self.missing.is_empty()
    }

    /// The fields a tenant-wide answer carries: `partial`, `missing_shards`
    /// (sorted) and `shards_asked`.
    pub fn to_json(&self) -> Value {
        let mut missing = self.missing.clone();
        missing.sort_unstable();
        json!({ "partial": self.partial(), "missing_shards": missing, "shards_asked": self.asked.len() })
    }
}

#[cfg(test)]
#[path = "fanout_tests.rs"]
mod tests;
