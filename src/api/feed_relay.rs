//! The two sides of a sharded tenant's one change feed
//! ([`crate::core::feed::relay`]): a shard's part (its events after home's
//! mark) and home's relay of it into its own log.

use crate::core::engine::Op;
use crate::core::error::Result;
use crate::core::feed::relay::{plan, PartEvent, ShardPart};
use crate::core::feed::Interest;
use crate::core::limits;
use crate::core::time::Millis;
use crate::store::{Backend, Store};

/// This shard's events after `after`, at most
/// [`limits::FEED_RELAY_EVENTS_MAX`]; `lost` when its recent-event ring no
/// longer reaches back to `after` (or its log is behind it).
pub async fn part<B: Backend>(store: &Store<B>, after: u64) -> Result<ShardPart> {
    let last_seq = store.events_since(None, &Interest::default(), 1).await?.last_seq;
    if after > last_seq {
        return Ok(ShardPart { after, last_seq, events: Vec::new(), lost: true });
    }
    let page = store.events_since(Some(after), &Interest::default(), limits::FEED_RELAY_EVENTS_MAX).await?;
    Ok(ShardPart { after, last_seq: page.last_seq, events: page.events.iter().map(PartEvent::from).collect(), lost: page.resync_required })
}

/// Home: logs `part` of `shard` in its feed, each event once and in the
/// shard's order; answers home's mark for the shard after it. The caller
/// runs one relay at a time (a relay planned from a mark another one moved
/// is refused by the log's check, nothing written twice).
pub async fn relay<B: Backend>(store: &Store<B>, shard: u16, part: &ShardPart, now: Millis) -> Result<u64> {
    let mark = store.read(|e| e.feed_relay().mark(shard)).await?;
    for relayed in plan(shard, mark, part) {
        store.apply(Op::FeedRelay(relayed), now).await?;
    }
    store.read(|e| e.feed_relay().mark(shard)).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::engine::Op;
    use crate::core::feed::relay::EVENTS_LOST;
    use crate::store::{MemoryBackend, StoreConfig};
    use futures_util::FutureExt;

    fn now_or_never<T>(f: impl std::future::Future<Output = T>) -> Option<T> {
        f.now_or_never()
    }

    async fn store() -> Store<MemoryBackend> {
        Store::open(MemoryBackend::new(), StoreConfig { snapshot_every_ops: 3, ..StoreConfig::default() }).await.unwrap()
    }

    fn put(id: &str) -> Op {
        Op::SessionPut { session: crate::core::session::Session::new(id.to_owned(), 0) }
    }

    /// Two shards' writes relayed to a home with writes of its own: home's
    /// feed holds each write once, in each shard's order, seqs contiguous,
    /// and a restarted home (from snapshot and log) keeps its marks.
    #[test]
    fn home_feed_holds_every_shards_writes_once() {
        now_or_never(async {
            let home = store().await;
            let (a, b) = (store().await, store().await);
            for i in 0..5 {
                a.apply(put(&format!("a{i}")), 10).await.unwrap();
                home.apply(put(&format!("h{i}")), 11).await.unwrap();
                if i % 2 == 0 {
                    b.apply(put(&format!("b{i}")), 12).await.unwrap();
                }
                // Parts asked after each write, some twice, some from 0.
                for (shard, s) in [(1u16, &a), (2, &b)] {
                    let mark = home.read(|e| e.feed_relay().mark(shard)).await.unwrap();
                    let p = part(s, mark).await.unwrap();
                    relay(&home, shard, &p, 20).await.unwrap();
                    relay(&home, shard, &p, 20).await.unwrap();
                    relay(&home, shard, &part(s, 0).await.unwrap(), 20).await.unwrap();
                }
            }
            let page = home.events_since(Some(0), &Interest::default(), 1000).await.unwrap();
            let seqs: Vec<u64> = page.events.iter().map(|e| e.seq).collect();
            assert_eq!(seqs, (1..=page.last_seq).collect::<Vec<_>>(), "one sequence, no gap");
            let keys: Vec<&str> = page.events.iter().map(|e| e.key.as_str()).collect();
            let mut sorted = keys.clone();
            sorted.sort();
            sorted.dedup();
            assert_eq!(sorted.len(), keys.len(), "nothing twice: {keys:?}");
            assert_eq!(keys.len(), 5 + 5 + 3);
            let of = |p: char| keys.iter().filter(|k| k.starts_with(p)).copied().collect::<Vec<_>>();
            assert_eq!(of('a'), ["a0", "a1", "a2", "a3", "a4"]);
            assert_eq!(of('b'), ["b0", "b2", "b4"]);
            assert!(page.events.iter().filter(|e| e.key.starts_with('a')).all(|e| e.ts == 10), "the shard's own write time");
        })
        .unwrap();
    }

    #[test]
    fn a_shard_past_its_ring_is_relayed_as_lost() {
        now_or_never(async {
            let home = store().await;
            let shard = store().await;
            shard.apply(put("s0"), 1).await.unwrap();
            relay(&home, 1, &part(&shard, 0).await.unwrap(), 2).await.unwrap();
            for i in 0..limits::FEED_EVENTS_KEPT + 2 {
                shard.apply(put(&format!("s{}", i % 7)), 3).await.unwrap();
            }
            let p = part(&shard, 1).await.unwrap();
            assert!(p.lost);
            assert_eq!(relay(&home, 1, &p, 4).await.unwrap(), p.last_seq);
            let page = home.events_since(Some(1), &Interest::default(), 10).await.unwrap();
            assert_eq!(page.events.len(), 1);
            assert_eq!((page.events[0].kind, page.events[0].count), (EVENTS_LOST, Some(limits::FEED_EVENTS_KEPT as u64 + 2)));
            // And a part asked past the shard's log is lost too.
            assert!(part(&shard, p.last_seq + 5).await.unwrap().lost);
        })
        .unwrap();
    }
}
