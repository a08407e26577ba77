//! The fan-out's rules under a simulated clock: a tree over n shards, each
//! with its own search time and hop latency; a slow shard makes the answer
//! partial and named, never short; every node answers by its deadline.

use super::*;
use crate::core::shard::fanout_tree;
use crate::core::test_rng::Rng;

/// Simulates `node` called at `start` with deadline `deadline`: it searches
/// itself (`work(shard)` ms) while its children, called over a hop of
/// `hop(shard)` ms each way, do the same under the child deadline. A child
/// whose answer would arrive after the child deadline is missing (the node
/// stops waiting then). Answers the subtree's coverage and when the node
/// answered.
fn simulate(node: &FanOut, start: Millis, deadline: Millis, work: &dyn Fn(ShardId) -> Millis, hop: &dyn Fn(ShardId) -> Millis) -> (Coverage, Millis) {
    let mut cov = Coverage::answered(node.shard);
    let mut done = start + work(node.shard);
    match child_deadline(deadline, start) {
        None => node.children.iter().for_each(|c| cov.absorb(Coverage::missing(c))),
        Some(d) => {
            for c in &node.children {
                let (child, at) = simulate(c, start + hop(c.shard), d, work, hop);
                let back = at + hop(c.shard);
                if back <= d {
                    cov.absorb(child);
                    done = done.max(back);
                } else {
                    cov.absorb(Coverage::missing(c));
                    done = done.max(d);
                }
            }
        }
    }
    (cov, done)
}

#[test]
fn deadlines_are_bounded_and_every_hop_keeps_a_margin() {
    assert_eq!(deadline_at(1_000, None).unwrap(), 1_000 + limits::SHARD_FANOUT_DEADLINE_MS_DEFAULT);
    assert_eq!(deadline_at(1_000, Some(300)).unwrap(), 1_300);
    for bad in [0, limits::SHARD_FANOUT_DEADLINE_MS_MIN - 1, limits::SHARD_FANOUT_DEADLINE_MS_MAX + 1] {
        assert_eq!(deadline_at(0, Some(bad)).unwrap_err().code(), "invalid_input", "{bad}");
    }
    assert_eq!(child_deadline(1_000, 0), Some(1_000 - limits::SHARD_FANOUT_HOP_MARGIN_MS));
    assert_eq!(child_deadline(1_000, 1_000 - limits::SHARD_FANOUT_HOP_MARGIN_MS), None, "no time left for a hop");
    assert_eq!(child_deadline(10, 0), None);
}

#[test]
fn a_slow_shard_makes_the_answer_partial_and_named_never_short() {
    let mut rng = Rng(0x5eed);
    for n in [1usize, 2, 4, 7, 16, 64, 200] {
        let shards: Vec<ShardId> = (0..n as ShardId).collect();
        let tree = fanout_tree(&shards, limits::SHARD_FANOUT_BRANCHING_MAX).unwrap();
        let deadline = deadline_at(0, Some(300)).unwrap();
        let hop = |_: ShardId| 2;
        // No slow shard: complete.
        let fast = |_: ShardId| 5;
        let (cov, at) = simulate(&tree, 0, deadline, &fast, &hop);
        assert!(!cov.partial(), "{n} shards, none slow");
        assert_eq!(cov.asked.len(), n);
        assert!(at <= deadline);
        for _ in 0..20 {
            let slow = rng.below(n as u64) as ShardId;
            let work = |s: ShardId| if s == slow { 10_000 } else { 1 + work_of(s) };
            let (cov, at) = simulate(&tree, 0, deadline, &work, &hop);
            // Every shard asked is answered or named missing, exactly once.
            let mut asked = cov.asked.clone();
            asked.sort_unstable();
            assert_eq!(asked, shards, "{n} shards: each asked once");
            assert!(cov.missing.iter().all(|m| cov.asked.contains(m)));
            if slow == tree.shard {
                // The root itself is late: the front times it out and the
                // whole tenant is missing (the root's own answer never came).
                assert!(at > deadline);
                continue;
            }
            assert!(at <= deadline, "{n} shards: the root answers by the deadline");
            assert!(cov.partial(), "{n} shards, shard {slow} slow");
            assert!(cov.missing.contains(&slow));
            // Only the slow shard's subtree is missing.
            let subtree = find(&tree, slow).unwrap().shards();
            let mut missing = cov.missing.clone();
            missing.sort_unstable();
            let mut want = subtree.clone();
            want.sort_unstable();
            assert_eq!(missing, want, "{n} shards, shard {slow} slow");
            let json = cov.to_json();
            assert_eq!(json["partial"], true);
            assert_eq!(json["shards_asked"], n);
            assert!(json["missing_shards"].as_array().unwrap().iter().any(|m| m == slow));
        }
    }
}

#[test]
fn a_moved_shard_marks_the_answer_stale() {
    let tree = fanout_tree(&[0, 1, 2], 6).unwrap();
    let mut cov = Coverage::answered(0);
    cov.absorb(Coverage::answered(1));
    assert!(!cov.stale);
    cov.absorb(Coverage::moved(&tree.children[1]));
    assert!(cov.stale && cov.partial());
    assert_eq!(cov.missing, [2]);
}

fn work_of(s: ShardId) -> Millis {
    u64::from(s % 7) * 3
}

fn find(node: &FanOut, shard: ShardId) -> Option<&FanOut> {
    if node.shard == shard {
        return Some(node);
    }
    node.children.iter().find_map(|c| find(c, shard))
}
