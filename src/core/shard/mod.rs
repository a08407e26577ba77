//! One tenant across several Durable Objects (issue 21), the pure part:
//! which bucket a record belongs to, which shard owns a bucket at an epoch,
//! where a search must go, how a fan-out is shaped, and how shards' answers
//! merge so that a sharded search ranks exactly like one index.
//!
//! * **Buckets.** A tenant has [`limits::SHARD_BUCKETS`] buckets. Long-term
//!   records fall in the bucket of their `user_id` (of their own id when
//!   they have none), so one user's memories live together and a search
//!   pinned to one user asks one shard. Episodes, which have no user, fall
//!   in their agent's bucket; sessions in their session id's. The hash is
//!   SHA-256 under a fixed label: stable across builds, platforms and
//!   languages.
//! * **The map** ([`ShardMap`]) assigns every bucket to one shard and
//!   carries an epoch, bumped by every change; each run of buckets also
//!   remembers the epoch since which its shard owns it. A shard serves a
//!   request for a bucket it owns when the request was routed at that epoch
//!   or later ([`ShardMap::check`]), so a split need not be broadcast to the
//!   shards it leaves alone; otherwise it answers `shard_moved` and the front
//!   refreshes its map.
//! * **Fan-out** goes out as a tree whose every node is a shard that
//!   searches itself and calls at most
//!   [`limits::SHARD_FANOUT_BRANCHING_MAX`] others ([`fanout_tree`]), the
//!   platform's limit on open connections per invocation: n shards, n calls.
//! * **Merging** ([`merge_top_k`]): each shard scores with tenant-wide BM25
//!   statistics ([`crate::core::retrieval::bm25::QueryStats::merge`]), so
//!   merging by score reproduces one index's scores exactly; ties break by
//!   a tenant-wide key (the record id), since each shard's internal keys are
//!   its own.
//!
//! The Worker holds the map in a directory object per tenant and routes by
//! it (`src/worker/shard/`); resharding builds on it.

use sha2::{Digest, Sha256};

use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::retrieval::filter::Filter;

/// A bucket, `0..SHARD_BUCKETS`.
pub type Bucket = u16;

/// A shard's index in its tenant's map (its object is named from it).
pub type ShardId = u16;

/// The bucket of a routing key (a user id, a record id, a session id).
pub fn bucket_of(key: &str) -> Bucket {
    let mut h = Sha256::new();
    h.update(b"edgemem bucket v1\0");
    h.update(key.as_bytes());
    let d = h.finalize();
    (u16::from_be_bytes([d[0], d[1]]) as usize % limits::SHARD_BUCKETS) as Bucket
}

/// The bucket of a long-term record or episode: its user's, or its own id's
/// when it has no user.
pub fn record_bucket(user_id: Option<&str>, id: &str) -> Bucket {
    bucket_of(user_id.unwrap_or(id))
}

/// Which shard owns each bucket, at an epoch.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ShardMap {
    /// Bumped by every change of ownership.
    pub epoch: u64,
    /// Owner runs: `(first bucket, shard, epoch since which the shard owns
    /// them)`, ascending by first bucket, the first at bucket 0; a run ends
    /// where the next begins.
    runs: Vec<(Bucket, ShardId, u64)>,
    /// `(shard, epoch)`: the last epoch at which a shard gave buckets away,
    /// ascending by shard. A fan-out routed before it would miss what the
    /// shard gave away, so the shard refuses it ([`ShardMap::check_shard`]).
    #[serde(default)]
    lost: Vec<(ShardId, u64)>,
}

impl ShardMap {
    /// One shard owning every bucket: the default, which behaves exactly
    /// like an unsharded tenant.
    pub fn single() -> ShardMap {
        ShardMap { epoch: 1, runs: vec![(0, 0, 1)], lost: Vec::new() }
    }

    /// `shards` shards (1..=[`limits::SHARDS_MAX`]) owning equal runs of
    /// buckets from epoch 1: a new tenant pre-split by the deployment
    /// (`EDGEMEM_SHARDS_INITIAL`). One shard is [`ShardMap::single`].
    pub fn even(shards: usize) -> Result<ShardMap> {
        if !(1..=limits::SHARDS_MAX).contains(&shards) {
            return Err(Error::invalid("shards", format!("must be 1 to {}", limits::SHARDS_MAX)));
        }
        let runs = (0..shards).map(|i| ((i * limits::SHARD_BUCKETS / shards) as Bucket, i as ShardId, 1)).collect();
        let map = ShardMap { epoch: 1, runs, lost: Vec::new() };
        map.validate()?;
        Ok(map)
    }

    /// Checks a map read from storage or the network.
    pub fn validate(&self) -> Result<()> {
        let bad = |reason: &str| Err(Error::invalid("shard_map", reason.to_owned()));
        if self.runs.first().map(|r| r.0) != Some(0) {
            return bad("the first run must start at bucket 0");
        }
        if self.runs.windows(2).any(|w| w[0].0 >= w[1].0 || (w[0].1, w[0].2) == (w[1].1, w[1].2)) {
            return bad("runs must ascend and neighbours must differ");
        }
        if self.runs.iter().any(|r| r.0 as usize >= limits::SHARD_BUCKETS || r.1 as usize >= limits::SHARDS_MAX) {
            return bad("a bucket or a shard is out of range");
        }
        if self.runs.iter().any(|r| r.2 == 0 || r.2 > self.epoch) {
            return bad("a run's epoch must be between 1 and the map's");
        }
        if self.lost.windows(2).any(|w| w[0].0 >= w[1].0) || self.lost.iter().any(|l| l.1 > self.epoch || l.0 as usize >= limits::SHARDS_MAX) {
            return bad("losses must ascend by shard, at epochs of the map");
        }
        Ok(())
    }

    /// The shard that owns `bucket`.
    pub fn owner(&self, bucket: Bucket) -> ShardId {
        self.run(bucket).1
    }

    fn run(&self, bucket: Bucket) -> (Bucket, ShardId, u64) {
        let i = self.runs.partition_point(|r| r.0 <= bucket);
        self.runs[i.saturating_sub(1)]
    }

    /// Every shard that owns at least one bucket, ascending.
    pub fn shards(&self) -> Vec<ShardId> {
        let mut s: Vec<ShardId> = self.runs.iter().map(|r| r.1).collect();
        s.sort_unstable();
        s.dedup();
        s
    }

    /// How many buckets `shard` owns.
    pub fn bucket_count(&self, shard: ShardId) -> usize {
        self.ranges().filter(|r| r.2 == shard).map(|r| usize::from(r.1 - r.0)).sum()
    }

    /// `(first, end exclusive, shard)` of each run.
    fn ranges(&self) -> impl Iterator<Item = (Bucket, Bucket, ShardId, u64)> + '_ {
        self.runs.iter().enumerate().map(|(i, r)| (r.0, self.runs.get(i + 1).map_or(limits::SHARD_BUCKETS as Bucket, |n| n.0), r.1, r.2))
    }

    /// A request routed under a map at `epoch` to `shard` for `bucket`,
    /// checked against this (the shard's own, current) map: refused with
    /// `shard_moved` unless `shard` owns the bucket and has owned it since
    /// that epoch or earlier. A shard a split left alone keeps serving
    /// requests routed under the newer map.
    pub fn check(&self, epoch: u64, shard: ShardId, bucket: Bucket) -> Result<()> {
        let (_, owner, since) = self.run(bucket);
        if owner != shard || epoch < since {
            return Err(Error::ShardMoved { epoch: self.epoch });
        }
        Ok(())
    }

    /// A request routed under a map at `epoch` to `shard` for everything it
    /// holds (a fan-out's part), checked against this map: refused with
    /// `shard_moved` unless `shard` owns some bucket, owned every one of
    /// them at that epoch already, and has given none away since.
    pub fn check_shard(&self, epoch: u64, shard: ShardId) -> Result<()> {
        let mut owned = self.runs.iter().filter(|r| r.1 == shard).peekable();
        let lost_since = self.lost.iter().any(|l| l.0 == shard && epoch < l.1);
        if owned.peek().is_none() || owned.any(|r| epoch < r.2) || lost_since {
            return Err(Error::ShardMoved { epoch: self.epoch });
        }
        Ok(())
    }

    /// The buckets `shard` owns, ascending.
    pub fn buckets_of(&self, shard: ShardId) -> Vec<Bucket> {
        self.ranges().filter(|r| r.2 == shard).flat_map(|r| r.0..r.1).collect()
    }

    /// A shard id no map of this tenant used yet: one past the highest in
    /// use or ever given away (ids are never reused, so a name is never
    /// taken by a second object).
    pub fn next_shard(&self) -> Option<ShardId> {
        let highest = self.runs.iter().map(|r| r.1).chain(self.lost.iter().map(|l| l.0)).max().unwrap_or(0);
        highest.checked_add(1).filter(|&n| (n as usize) < limits::SHARDS_MAX)
    }

    /// The map after `shard` hands the upper half of its buckets (by count)
    /// to the new shard `to`, at the next epoch. Refused when `shard` owns
    /// fewer than two buckets, `to` already owns some, or the map is full.
    pub fn split(&self, shard: ShardId, to: ShardId) -> Result<ShardMap> {
        let owned = self.bucket_count(shard);
        if owned < 2 {
            return Err(Error::invalid("shard", format!("shard {shard} owns {owned} bucket(s); it cannot split")));
        }
        if self.bucket_count(to) > 0 || to as usize >= limits::SHARDS_MAX {
            return Err(Error::invalid("to", format!("shard {to} is in use or out of range")));
        }
        let epoch = self.epoch.checked_add(1).ok_or_else(|| Error::Internal { detail: "the shard map's epoch cannot grow".into() })?;
        // Walk the shard's buckets in order; from the middle one on, they move.
        let mut keep = owned / 2;
        let mut owners: Vec<(Bucket, ShardId, u64)> = Vec::new();
        for (first, end, owner, since) in self.ranges() {
            if owner != shard {
                owners.push((first, owner, since));
                continue;
            }
            let len = usize::from(end - first);
            let kept = keep.min(len);
            keep -= kept;
            if kept > 0 {
                owners.push((first, shard, since));
            }
            if kept < len {
                owners.push((first + kept as Bucket, to, epoch));
            }
        }
        let mut runs: Vec<(Bucket, ShardId, u64)> = Vec::new();
        for run in owners {
            if runs.last().map(|r| (r.1, r.2)) != Some((run.1, run.2)) {
                runs.push(run);
            }
        }
        let mut lost: Vec<(ShardId, u64)> = self.lost.iter().copied().filter(|l| l.0 != shard).collect();
        lost.push((shard, epoch));
        lost.sort_unstable();
        let map = ShardMap { epoch, runs, lost };
        map.validate()?;
        Ok(map)
    }
}

/// Where a request goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// Exactly one shard holds everything the request can match.
    One(ShardId),
    /// These shards (ascending) each hold part of it.
    FanOut(Vec<ShardId>),
}

/// Where a long-term search goes: to one shard when its filter pins the
/// user (`user_id: {eq}`, or `{any}` whose users share a shard), to the
/// shards of the listed users for `{any}`, else to every shard. A user
/// filter never matches a record without a user, so records hashed by their
/// own id are never missed.
pub fn route_search(filter: &Filter, map: &ShardMap) -> Route {
    let users: Option<Vec<&str>> = filter.user_id.as_ref().and_then(|u| match (&u.eq, &u.any) {
        (Some(eq), _) => Some(vec![eq.as_str()]),
        (None, Some(any)) => Some(any.iter().map(String::as_str).collect()),
        _ => None,
    });
    let mut shards: Vec<ShardId> = match users {
        Some(users) => users.iter().map(|u| map.owner(bucket_of(u))).collect(),
        None => map.shards(),
    };
    shards.sort_unstable();
    shards.dedup();
    match shards.as_slice() {
        [one] => Route::One(*one),
        // `user_id: {any: []}` matches nothing: ask one shard for the empty answer.
        [] => Route::One(map.owner(0)),
        _ => Route::FanOut(shards),
    }
}

/// A node of a fan-out tree: a shard that searches itself, calls each
/// child, and answers for its whole subtree.
#[derive(Debug, Clone, PartialEq, Eq)]
#[derive(serde::Serialize, serde::Deserialize)]
pub struct FanOut {
    /// The shard this node is.
    pub shard: ShardId,
    /// The calls this node makes, at most `branching`.
    pub children: Vec<FanOut>,
}

impl FanOut {
    /// The shards in this subtree, in order.
    pub fn shards(&self) -> Vec<ShardId> {
        let mut out: Vec<ShardId> = vec![self.shard];
        for c in &self.children {
            out.extend(c.shards());
        }
        out
    }

    /// Hops from this node to its deepest leaf.
    pub fn depth(&self) -> usize {
        self.children.iter().map(|c| 1 + c.depth()).max().unwrap_or(0)
    }
}

/// The fan-out over `shards` (at least one) as a tree with at most
/// `branching` calls per node (clamped to
/// 2..=[`limits::SHARD_FANOUT_BRANCHING_MAX`]): the first shard is the root
/// and the rest split into contiguous subtrees whose sizes differ by at
/// most one, so the depth is the least for which a full tree holds them all.
/// `None` for no shards.
pub fn fanout_tree(shards: &[ShardId], branching: usize) -> Option<FanOut> {
    let b = branching.clamp(2, limits::SHARD_FANOUT_BRANCHING_MAX);
    let (&root, rest) = shards.split_first()?;
    let groups = rest.len().min(b);
    let mut children = Vec::with_capacity(groups);
    let mut at = 0;
    for i in 0..groups {
        let len = rest.len() / groups + usize::from(i < rest.len() % groups);
        children.extend(fanout_tree(&rest[at..at + len], b));
        at += len;
    }
    Some(FanOut { shard: root, children })
}

/// Merges shards' top-k lists into the tenant's top `k`, by descending
/// score, ties by ascending key. The key must be tenant-wide (the record
/// id): each shard's internal keys are its own and collide across shards.
/// With scores computed under tenant-wide statistics, these are exactly
/// one index's scores, each shard's top k being a prefix of its part.
pub fn merge_top_k<K: Ord + Clone>(lists: &[Vec<(K, f32)>], k: usize) -> Vec<(K, f32)> {
    let mut all: Vec<(K, f32)> = lists.iter().flatten().cloned().collect();
    all.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    all.truncate(k);
    all
}

pub mod fanout;

#[cfg(test)]
mod tests;
