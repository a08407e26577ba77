//! Which records AMS's forget policy picks, in two steps that also work
//! across shards (issue 21): each store computes its [`ForgetPart`] (what
//! its own records say), then [`choose`] picks from one part or many.
//!
//! A part keeps only what can reach the answer: the `limit` least recently
//! used records old enough to go, the `limit` least recently used of the
//! rest, and how many the rest are. The answer is the first `limit`, least
//! recently used first, of every old record plus, over the budget, the
//! oldest of the rest; a record past its own store's first `limit` in
//! either list has `limit` records before it that are in the answer
//! whenever it would be, so it never is. One part or many, the answer is
//! the same: a sharded forget deletes exactly what one store would.

use serde::{Deserialize, Serialize};

use crate::core::retrieval::record::{MemoryRecord, MemoryType};
use crate::core::time::Millis;

/// AMS's forget policy.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ForgetPolicy {
    /// Older than this (since creation) may go.
    pub max_age_days: Option<f64>,
    /// Unused for longer than this may go (with `max_age_days`: both).
    pub max_inactive_days: Option<f64>,
    /// At most this many records are kept (of those not pinned and allowed
    /// by type): the least recently used of the rest go.
    pub budget: Option<usize>,
    /// Only records of these types may go.
    pub memory_type_allowlist: Option<Vec<MemoryType>>,
}

/// What a forget selects from: the scope and the records it spares.
#[derive(Debug, Clone, Copy)]
pub struct ForgetScope<'a> {
    /// A stored (sealed) user id.
    pub user_id: Option<&'a str>,
    pub session_id: Option<&'a str>,
    pub namespace: Option<&'a str>,
    /// Spared besides pinned records.
    pub pinned_ids: &'a [String],
    /// At most this many are chosen.
    pub limit: usize,
}

/// One store's part of a forget (see the module docs). Lists are
/// `(last_accessed, id)`, ascending.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ForgetPart {
    /// Records in scope.
    pub scanned: u64,
    /// The first `limit` of the records old enough to go.
    pub old: Vec<(Millis, String)>,
    /// How many records in scope may go but are not old enough.
    pub kept: u64,
    /// The first `limit` of those.
    pub kept_first: Vec<(Millis, String)>,
}

const DAY_MS: f64 = 86_400_000.0;

/// `records`' part of a forget under `policy` at `now`.
pub fn part<'a>(records: impl Iterator<Item = &'a MemoryRecord>, policy: &ForgetPolicy, scope: &ForgetScope<'_>, now: Millis) -> ForgetPart {
    let mut out = ForgetPart::default();
    let mut kept = Vec::new();
    for r in records {
        if scope.user_id.is_some_and(|u| r.user_id.as_deref() != Some(u))
            || scope.session_id.is_some_and(|s| r.session_id.as_deref() != Some(s))
            || scope.namespace.is_some_and(|n| r.namespace.as_deref() != Some(n))
        {
            continue;
        }
        out.scanned += 1;
        if r.pinned || scope.pinned_ids.contains(&r.id) || policy.memory_type_allowlist.as_ref().is_some_and(|l| !l.contains(&r.memory_type)) {
            continue;
        }
        let age = now.saturating_sub(r.created_at) as f64 / DAY_MS;
        let idle = now.saturating_sub(r.last_accessed) as f64 / DAY_MS;
        let old = match (policy.max_age_days, policy.max_inactive_days) {
            (Some(a), Some(i)) => age > a && idle > i,
            (Some(a), None) => age > a,
            (None, Some(i)) => idle > i,
            (None, None) => false,
        };
        let entry = (r.last_accessed, r.id.clone());
        if old {
            out.old.push(entry);
        } else {
            kept.push(entry);
        }
    }
    out.kept = kept.len() as u64;
    out.old = first(out.old, scope.limit);
    out.kept_first = first(kept, scope.limit);
    out
}

/// The `n` smallest of `v`, ascending. A whole sort, as the one-store rule
/// always did: a partial selection would add its own instantiation to the
/// npm wasm for a list that is at most a shard's records.
fn first(mut v: Vec<(Millis, String)>, n: usize) -> Vec<(Millis, String)> {
    v.sort();
    v.truncate(n);
    v
}

/// The ids a forget deletes, from every store's part: least recently used
/// first, at most `limit`.
pub fn choose(parts: &[ForgetPart], budget: Option<usize>, limit: usize) -> Vec<String> {
    let mut candidates: Vec<(Millis, String)> = parts.iter().flat_map(|p| p.old.iter().cloned()).collect();
    let kept: u64 = parts.iter().map(|p| p.kept).fold(0, u64::saturating_add);
    if let Some(budget) = budget {
        let excess = kept.saturating_sub(budget as u64);
        if excess > 0 {
            // Over budget: the least recently used of the rest go too.
            let rest: Vec<(Millis, String)> = parts.iter().flat_map(|p| p.kept_first.iter().cloned()).collect();
            candidates.extend(first(rest, usize::try_from(excess).unwrap_or(usize::MAX).min(limit)));
        }
    }
    first(candidates, limit).into_iter().map(|(_, id)| id).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::test_rng::Rng;

    fn below(rng: &mut Rng, n: usize) -> usize {
        rng.below(n as u64) as usize
    }

    fn record(rng: &mut Rng, i: usize, now: Millis) -> MemoryRecord {
        let mut r = MemoryRecord::new(format!("r{i:03}"), format!("text {i}"), if below(rng, 3) == 0 { MemoryType::Episodic } else { MemoryType::Semantic }, now);
        r.created_at = now - below(rng, 40) as u64 * 86_400_000;
        // Ties in last use are common: the id breaks them.
        r.last_accessed = r.created_at + below(rng, 5) as u64 * 86_400_000;
        r.pinned = below(rng, 10) == 0;
        r.user_id = Some(format!("u{}", below(rng, 4)));
        r
    }

    /// The rule as it was before the parts: every candidate sorted.
    fn reference(records: &[MemoryRecord], policy: &ForgetPolicy, scope: &ForgetScope<'_>, now: Millis) -> Vec<String> {
        let whole = ForgetScope { limit: usize::MAX, ..*scope };
        let p = part(records.iter(), policy, &whole, now);
        let mut all = p.old;
        if let Some(b) = policy.budget {
            let mut kept = p.kept_first;
            if kept.len() > b {
                let excess = kept.len() - b;
                all.extend(kept.drain(..excess));
            }
        }
        all.sort();
        all.truncate(scope.limit);
        all.into_iter().map(|(_, id)| id).collect()
    }

    #[test]
    fn parts_from_any_split_choose_what_one_store_would() {
        let now: Millis = 1_700_000_000_000;
        let mut rng = Rng(0x2121_2121_9e37_79b9);
        for round in 0..300 {
            let n = 1 + below(&mut rng, 80);
            let records: Vec<MemoryRecord> = (0..n).map(|i| record(&mut rng, i, now)).collect();
            let policy = ForgetPolicy {
                max_age_days: [None, Some(10.0), Some(30.0)][below(&mut rng, 3)],
                max_inactive_days: [None, Some(5.0)][below(&mut rng, 2)],
                budget: [None, Some(0), Some(3), Some(20)][below(&mut rng, 4)],
                memory_type_allowlist: (below(&mut rng, 4) == 0).then(|| vec![MemoryType::Semantic]),
            };
            let pinned = vec![format!("r{:03}", below(&mut rng, n))];
            let user = format!("u{}", below(&mut rng, 4));
            let scope = ForgetScope { user_id: (below(&mut rng, 4) == 0).then_some(user.as_str()), session_id: None, namespace: None, pinned_ids: &pinned, limit: 1 + below(&mut rng, 25) };
            let want = reference(&records, &policy, &scope, now);
            let shards = 1 + below(&mut rng, 6);
            let parts: Vec<ForgetPart> = (0..shards).map(|s| part(records.iter().enumerate().filter(|(i, _)| i % shards == s).map(|(_, r)| r), &policy, &scope, now)).collect();
            assert_eq!(choose(&parts, policy.budget, scope.limit), want, "round {round}: {shards} shards, {policy:?}, limit {}", scope.limit);
            let scanned: u64 = parts.iter().map(|p| p.scanned).sum();
            assert_eq!(scanned, part(records.iter(), &policy, &scope, now).scanned);
        }
    }

    #[test]
    fn a_part_holds_at_most_limit_entries_per_list() {
        let now: Millis = 1_700_000_000_000;
        let mut rng = Rng(0x0707_0707_9e37_79b9);
        let records: Vec<MemoryRecord> = (0..200).map(|i| record(&mut rng, i, now)).collect();
        let policy = ForgetPolicy { max_age_days: Some(10.0), budget: Some(5), ..Default::default() };
        let p = part(records.iter(), &policy, &ForgetScope { user_id: None, session_id: None, namespace: None, pinned_ids: &[], limit: 7 }, now);
        assert!(p.old.len() == 7 && p.kept_first.len() == 7, "{p:?}");
        assert!(p.kept > 7 && p.scanned == 200);
        assert!(p.old.windows(2).all(|w| w[0] < w[1]) && p.kept_first.windows(2).all(|w| w[0] < w[1]));
        assert!(choose(&[], Some(0), 10).is_empty());
    }
}
