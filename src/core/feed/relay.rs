//! One change feed for a tenant of many shards (issue 21).
//!
//! Each shard logs its own ops under its own seqs. The tenant's feed is
//! home's log: another shard's event is *relayed* to home and logged there
//! as an op ([`Relayed`]), which gives it its seq in the tenant's feed, so
//! a subscriber sees one sequence, strictly increasing and without gaps,
//! whatever the shard count, and resumes with `since` exactly as from one
//! object.
//!
//! Home keeps, per shard, the last shard seq it relayed ([`RelayMarks`]);
//! a relay must follow that mark, so each shard event is logged at home
//! once and in its shard's order, however often a part is sent again.
//! A shard that can no longer supply the events after home's mark (its
//! recent-event ring lost them: a restart, or more than
//! [`limits::FEED_EVENTS_KEPT`] unrelayed changes) is relayed as one
//! [`EVENTS_LOST`] event: a subscriber reloads the state it follows, as
//! after `resync_required`.
//!
//! Settings every shard keeps alike (consent, the privacy policy, tool
//! TTLs) are written to every shard by one request: home's own event is
//! the tenant's, the other shards' copies are not relayed.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{FeedEvent, KINDS};
use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::time::Millis;

/// The kind of the event home logs for changes of a shard that could not be
/// relayed; `key` names the shard, `count` how many of its log's ops were
/// skipped (none when the shard's log restarted).
pub const EVENTS_LOST: &str = "shard.events_lost";

/// Kinds whose writes go to every shard alike: home's event stands for all.
const ALIKE: [&str; 4] = ["consent.granted", "consent.revoked", "privacy.policy_set", "tool_cache.ttls_set"];

/// The static name of a known kind.
pub fn static_kind(kind: &str) -> Option<&'static str> {
    KINDS.iter().copied().find(|k| *k == kind)
}

/// Whether a shard's event of `kind` goes into the tenant's feed.
pub fn relayed_kind(kind: &str) -> bool {
    kind != EVENTS_LOST && !ALIKE.contains(&kind) && static_kind(kind).is_some()
}

/// One shard event, logged at home. In the log as a tuple
/// ([`RelayedWire`]): fields are only ever added at the end.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "RelayedWire", into = "RelayedWire")]
pub struct Relayed {
    pub shard: u16,
    /// Home's mark for the shard this relay follows.
    pub after: u64,
    /// The event's seq in its shard's log ([`EVENTS_LOST`]: the seq relaying
    /// goes on after).
    pub shard_seq: u64,
    /// When the shard applied the write.
    pub ts: Millis,
    pub kind: String,
    pub key: String,
    pub count: Option<u64>,
    pub ids: Vec<String>,
}

/// [`Relayed`] as it is logged: positional, so its serde code is one
/// sequence visitor (the op enum's code is shipped in every build).
#[derive(Serialize, Deserialize)]
struct RelayedWire(u16, u64, u64, Millis, String, String, Option<u64>, Vec<String>);

impl From<RelayedWire> for Relayed {
    fn from(RelayedWire(shard, after, shard_seq, ts, kind, key, count, ids): RelayedWire) -> Relayed {
        Relayed { shard, after, shard_seq, ts, kind, key, count, ids }
    }
}

impl From<Relayed> for RelayedWire {
    fn from(r: Relayed) -> RelayedWire {
        RelayedWire(r.shard, r.after, r.shard_seq, r.ts, r.kind, r.key, r.count, r.ids)
    }
}

impl Relayed {
    /// The tenant feed's event for it, under home's `seq`.
    pub fn event(&self, seq: u64) -> FeedEvent {
        FeedEvent { seq, ts: self.ts, kind: static_kind(&self.kind).unwrap_or(EVENTS_LOST), key: self.key.clone(), count: self.count, ids: self.ids.clone() }
    }
}

/// Home's position in each other shard's log. Keyed by the shard as a
/// `u64`: the map type the engine already has (moves), so no new code.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RelayMarks(BTreeMap<u64, u64>);

impl RelayMarks {
    /// The last seq of `shard` that home relayed (0: none).
    pub fn mark(&self, shard: u16) -> u64 {
        self.0.get(&u64::from(shard)).copied().unwrap_or(0)
    }

    /// Logs `r`: it must follow the shard's mark, name a kind the tenant's
    /// feed carries, and stay within an event's bounds. On error nothing
    /// changed.
    pub fn apply(&mut self, r: &Relayed) -> Result<()> {
        let mark = self.mark(r.shard);
        let follows = r.after == mark && (r.kind == EVENTS_LOST || (relayed_kind(&r.kind) && r.shard_seq > mark));
        let bounded = r.key.len() <= limits::ID_BYTES_MAX && r.ids.len() <= limits::FEED_EVENT_IDS_MAX && r.ids.iter().all(|id| id.len() <= limits::ID_BYTES_MAX);
        if !follows || !bounded {
            return Err(Error::invalid("relayed event", "does not follow home's mark for its shard, or is past an event's bounds"));
        }
        if self.0.len() >= limits::SHARDS_MAX && !self.0.contains_key(&u64::from(r.shard)) {
            return Err(Error::LimitExceeded { what: "shards relaying to home".into(), limit: limits::SHARDS_MAX as u64 });
        }
        self.0.insert(u64::from(r.shard), r.shard_seq);
        Ok(())
    }
}

/// An event as a shard sends it (a [`FeedEvent`] read back).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartEvent {
    pub seq: u64,
    pub ts: Millis,
    pub kind: String,
    #[serde(default)]
    pub key: String,
    #[serde(default)]
    pub count: Option<u64>,
    #[serde(default)]
    pub ids: Vec<String>,
}

impl From<&FeedEvent> for PartEvent {
    fn from(e: &FeedEvent) -> PartEvent {
        PartEvent { seq: e.seq, ts: e.ts, kind: e.kind.to_owned(), key: e.key.clone(), count: e.count, ids: e.ids.clone() }
    }
}

/// A shard's events after `after`, at most [`limits::FEED_RELAY_EVENTS_MAX`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardPart {
    pub after: u64,
    /// The shard's last committed seq.
    pub last_seq: u64,
    /// Contiguous from `after + 1` unless `lost`.
    pub events: Vec<PartEvent>,
    /// The shard no longer holds the events after `after`.
    pub lost: bool,
}

impl ShardPart {
    /// Whether the shard has events after the last one in this part.
    pub fn more(&self) -> bool {
        !self.lost && self.events.last().map_or(self.after, |e| e.seq) < self.last_seq
    }
}

/// The relays home logs for `part` of `shard`, whose mark is `mark`: none
/// when the part starts past the mark (the shard must send from the mark).
/// Events at or below the mark were relayed before and are skipped; a hole
/// in the part's seqs, a lost part or a shard log behind the mark becomes
/// one [`EVENTS_LOST`] relay.
pub fn plan(shard: u16, mark: u64, part: &ShardPart) -> Vec<Relayed> {
    let mut out = Vec::new();
    if part.after > mark {
        return out;
    }
    let lost = |after: u64, to: u64, ts: Millis| Relayed { shard, after, shard_seq: to, ts, kind: EVENTS_LOST.to_owned(), key: shard.to_string(), count: to.checked_sub(after), ids: Vec::new() };
    if part.lost || part.last_seq < mark {
        if part.last_seq != mark || part.lost {
            out.push(lost(mark, part.last_seq, part.events.last().map_or(0, |e| e.ts)));
        }
        return out;
    }
    // `covered`: every seq up to it is relayed or deliberately skipped.
    let (mut at, mut covered) = (mark, part.after);
    for e in part.events.iter().take(limits::FEED_RELAY_EVENTS_MAX) {
        if e.seq <= covered.max(mark) {
            covered = covered.max(e.seq);
            continue;
        }
        if e.seq != covered.max(mark) + 1 {
            // A hole the shard should not have sent: say so, then go on.
            out.push(lost(at, e.seq - 1, e.ts));
            at = e.seq - 1;
        }
        covered = e.seq;
        if relayed_kind(&e.kind) {
            out.push(Relayed { shard, after: at, shard_seq: e.seq, ts: e.ts, kind: e.kind.clone(), key: e.key.clone(), count: e.count, ids: e.ids.iter().take(limits::FEED_EVENT_IDS_MAX).cloned().collect() });
            at = e.seq;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(seq: u64, kind: &str) -> PartEvent {
        PartEvent { seq, ts: 1_000 + seq, kind: kind.into(), key: format!("k{seq}"), count: None, ids: Vec::new() }
    }

    fn part(after: u64, last: u64, events: Vec<PartEvent>) -> ShardPart {
        ShardPart { after, last_seq: last, events, lost: false }
    }

    /// Applies what `plan` answers, as home does; answers the kinds logged.
    fn relay(marks: &mut RelayMarks, shard: u16, p: &ShardPart) -> Vec<(u64, String)> {
        let mut logged = Vec::new();
        for r in plan(shard, marks.mark(shard), p) {
            marks.apply(&r).unwrap();
            logged.push((r.shard_seq, r.kind));
        }
        logged
    }

    #[test]
    fn each_event_is_relayed_once_in_order_however_often_parts_repeat() {
        let mut m = RelayMarks::default();
        let all: Vec<PartEvent> = (1..=6).map(|s| ev(s, if s == 3 { "consent.granted" } else { "working_memory.created" })).collect();
        assert_eq!(relay(&mut m, 2, &part(0, 4, all[..4].to_vec())).iter().map(|x| x.0).collect::<Vec<_>>(), [1, 2, 4], "an alike setting is home's to tell");
        assert_eq!(m.mark(2), 4);
        // The same part again, and one overlapping it: nothing twice.
        assert!(relay(&mut m, 2, &part(0, 4, all[..4].to_vec())).is_empty());
        assert_eq!(relay(&mut m, 2, &part(2, 6, all[2..].to_vec())).iter().map(|x| x.0).collect::<Vec<_>>(), [5, 6]);
        // A part past the mark is not logged: the shard sends from the mark.
        assert!(plan(2, m.mark(2), &part(9, 12, vec![ev(10, "working_memory.created")])).is_empty());
        // Shards are apart.
        assert_eq!(relay(&mut m, 3, &part(0, 1, vec![ev(1, "long_term_memory.created")])).len(), 1);
        assert_eq!((m.mark(2), m.mark(3)), (6, 1));
    }

    #[test]
    fn what_a_shard_lost_is_one_typed_event() {
        let mut m = RelayMarks::default();
        relay(&mut m, 1, &part(0, 2, vec![ev(1, "working_memory.created"), ev(2, "working_memory.updated")]));
        let lost = ShardPart { after: 2, last_seq: 9000, events: Vec::new(), lost: true };
        assert_eq!(relay(&mut m, 1, &lost), [(9000, EVENTS_LOST.to_owned())]);
        let r = plan(1, 2, &lost);
        assert_eq!((r[0].count, r[0].key.as_str()), (Some(8998), "1"));
        assert_eq!(m.mark(1), 9000);
        // A hole inside a part: the missing seqs are said lost, the rest relayed.
        let holed = part(9000, 9005, vec![ev(9001, "working_memory.created"), ev(9004, "working_memory.deleted"), ev(9005, "working_memory.created")]);
        assert_eq!(relay(&mut m, 1, &holed).iter().map(|x| (x.0, x.1.as_str())).collect::<Vec<_>>(), [(9001, "working_memory.created"), (9003, EVENTS_LOST), (9004, "working_memory.deleted"), (9005, "working_memory.created")]);
        // A shard whose log restarted (behind home's mark).
        assert_eq!(relay(&mut m, 1, &part(0, 3, Vec::new())), [(3, EVENTS_LOST.to_owned())]);
        assert_eq!(plan(1, 3, &part(0, 3, Vec::new())), Vec::new(), "caught up");
    }

    #[test]
    fn home_refuses_a_relay_out_of_order_or_out_of_bounds() {
        let mut m = RelayMarks::default();
        let r = Relayed { shard: 1, after: 0, shard_seq: 1, ts: 5, kind: "working_memory.created".into(), key: "s".into(), count: None, ids: Vec::new() };
        m.apply(&r).unwrap();
        let before = m.clone();
        for bad in [
            r.clone(),
            Relayed { after: 1, shard_seq: 1, ..r.clone() },
            Relayed { after: 1, shard_seq: 2, kind: "consent.granted".into(), ..r.clone() },
            Relayed { after: 1, shard_seq: 2, kind: "no.such_kind".into(), ..r.clone() },
            Relayed { after: 1, shard_seq: 2, key: "x".repeat(limits::ID_BYTES_MAX + 1), ..r.clone() },
            Relayed { after: 1, shard_seq: 2, ids: vec!["i".into(); limits::FEED_EVENT_IDS_MAX + 1], ..r.clone() },
        ] {
            assert!(m.apply(&bad).is_err(), "{bad:?}");
            assert_eq!(m, before);
        }
        assert_eq!(Relayed { after: 1, shard_seq: 2, ..r }.event(77).seq, 77);
    }
}
