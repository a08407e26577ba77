//! A shard's side of a split (issue 21), over its store: the digest of the
//! moving buckets, their items, a batch moved in, and the collection of
//! what moved out. The directory drives the split (`src/worker/shard/split.rs`);
//! the state logic is [`crate::core::engine::moves`].

use std::cell::RefCell;
use std::collections::HashMap;

use serde::Deserialize;
use serde_json::{json, Value};

use crate::core::engine::moves::{MoveItem, MoveSelect};
use crate::core::engine::{Applied, Op};
use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::privacy::PseudonymKey;
use crate::core::retrieval::record::MemoryRecord;
use crate::core::shard::{bucket_of, record_bucket, Bucket};
use crate::core::time::Millis;
use crate::store::{Backend, Store};

/// The moving buckets (or those a shard owns, for an export), as a set, with the key that opens sealed user ids
/// (a record's bucket is its raw user id's).
pub(super) struct Moving {
    set: Vec<bool>,
    key: Option<PseudonymKey>,
    /// Each user id's answer, found once per walk: a shard holds many
    /// records per user, and a sealed id costs an opening and a hash.
    /// At most one entry per user the shard holds.
    users: RefCell<HashMap<String, bool>>,
}

impl Moving {
    pub(super) fn new<B: Backend>(store: &Store<B>, buckets: &[Bucket]) -> Result<Moving> {
        let mut set = vec![false; limits::SHARD_BUCKETS];
        for &b in buckets {
            *set.get_mut(b as usize).ok_or_else(|| Error::invalid("buckets", format!("bucket {b} is out of range")))? = true;
        }
        Ok(Moving { set, key: store.with_privacy_key(|k| k.cloned()), users: RefCell::default() })
    }
}

impl MoveSelect for Moving {
    fn session(&self, session_id: &str) -> bool {
        self.set[bucket_of(session_id) as usize]
    }

    fn record(&self, r: &MemoryRecord) -> bool {
        let Some(u) = r.user_id.as_deref() else { return self.set[record_bucket(None, &r.id) as usize] };
        if let Some(&moving) = self.users.borrow().get(u) {
            return moving;
        }
        let raw = self.key.as_ref().and_then(|k| k.open_user_id(u)).unwrap_or_else(|| u.to_owned());
        let moving = self.set[record_bucket(Some(&raw), &r.id) as usize];
        self.users.borrow_mut().insert(u.to_owned(), moving);
        moving
    }
}

/// What the directory sends a shard for a step of a split.
#[derive(Deserialize)]
pub struct MoveBody {
    pub move_id: u64,
    #[serde(default)]
    pub buckets: Vec<Bucket>,
    #[serde(default)]
    pub keys: Vec<String>,
    #[serde(default)]
    pub seq: u64,
    #[serde(default)]
    pub items: Vec<MoveItem>,
    #[serde(default)]
    pub remove: Vec<String>,
    #[serde(default)]
    pub embedder: Option<String>,
    /// `items` only: answer each record's version too.
    #[serde(default)]
    pub versions: bool,
}

/// `{digest, watermark, embedder}`: the moving part's digest, the last
/// batch of this move applied here, and the records' embedder.
pub async fn digest<B: Backend>(store: &Store<B>, b: &MoveBody) -> Result<Value> {
    let moving = Moving::new(store, &b.buckets)?;
    let (digest, watermark, embedder) = store.read(|e| e.move_digest(&moving).map(|d| (d, e.move_watermark(b.move_id), e.longterm().embedder().map(str::to_owned)))).await??;
    Ok(json!({ "digest": digest, "watermark": watermark, "embedder": embedder }))
}

/// `{items, embedder}`: the items under `keys` (at most a batch), those
/// still here, and the records' embedder; with `versions`, each record's
/// [`memory_version`](crate::core::engine::moves::memory_version) under
/// `versions` by id too (what a hand-over names).
pub async fn items<B: Backend>(store: &Store<B>, b: &MoveBody) -> Result<Value> {
    if b.keys.len() > limits::SHARD_MOVE_BATCH_ITEMS_MAX {
        return Err(Error::LimitExceeded { what: "keys in one move batch".into(), limit: limits::SHARD_MOVE_BATCH_ITEMS_MAX as u64 });
    }
    store
        .read(|e| {
            let items = b.keys.iter().filter_map(|k| e.move_item(k).transpose()).collect::<Result<Vec<MoveItem>>>()?;
            let mut versions = serde_json::Map::new();
            if b.versions {
                for id in b.keys.iter().filter_map(|k| k.strip_prefix("m/")) {
                    if let Some(v) = e.memory_version_of(id)? {
                        versions.insert(id.to_owned(), json!(v));
                    }
                }
            }
            Ok(json!({ "items": items, "embedder": e.longterm().embedder(), "versions": versions }))
        })
        .await?
}

/// A record's hand-over to its new user's shard ([`Op::Adopt`] there,
/// [`Op::HandedOver`] at its old shard).
#[derive(Deserialize)]
pub struct HandOverBody {
    /// To the new shard: the record's item and its embedder.
    #[serde(default)]
    pub item: Option<MoveItem>,
    #[serde(default)]
    pub embedder: Option<String>,
    /// To the old shard: the record and the version the new shard holds.
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub version: u64,
}

/// `{applied}`: the new shard adopts the item, or the old shard drops the
/// record if it is still at the version adopted.
pub async fn hand_over<B: Backend>(store: &Store<B>, b: HandOverBody, now: Millis) -> Result<Value> {
    let op = match (b.item, b.id) {
        (Some(item), None) => Op::Adopt { item: Box::new(item), embedder: b.embedder },
        (None, Some(id)) => Op::HandedOver { id, version: b.version },
        _ => return Err(Error::invalid("item", "a hand-over names an item to adopt or an id to drop")),
    };
    let applied = matches!(store.apply(op, now).await?, Applied::Moved { applied: true, .. });
    Ok(json!({ "applied": applied }))
}

/// Applies a batch (see [`Op::MoveIn`]); `{applied, watermark, stored}`:
/// `stored` is the digest of the batch's keys as this state now holds
/// them, so the split's next round need not digest this shard again.
pub async fn import<B: Backend>(store: &Store<B>, b: MoveBody, now: Millis) -> Result<Value> {
    let (move_id, seq) = (b.move_id, b.seq);
    let keys: Vec<String> = b.items.iter().map(MoveItem::key).chain(b.remove.iter().cloned()).collect();
    let op = Op::MoveIn { move_id, seq, items: b.items, remove: b.remove, embedder: b.embedder };
    let applied = matches!(store.apply(op, now).await?, Applied::Moved { applied: true, .. });
    let (watermark, stored) = store.read(|e| e.move_digest_of(&keys).map(|d| (e.move_watermark(move_id), d))).await??;
    Ok(json!({ "applied": applied, "watermark": watermark, "stored": stored }))
}

/// Drops everything of the moving buckets, a batch per op; answers how
/// many items went.
pub async fn collect<B: Backend>(store: &Store<B>, buckets: &[Bucket], now: Millis) -> Result<usize> {
    let moving = Moving::new(store, buckets)?;
    let keys = store.read(|e| e.move_keys(&moving)).await?;
    let mut removed = 0;
    for batch in keys.chunks(limits::SHARD_MOVE_BATCH_ITEMS_MAX) {
        if let Applied::Moved { removed: n, .. } = store.apply(Op::MoveOut { keys: batch.to_vec() }, now).await? {
            removed += n;
        }
    }
    Ok(removed)
}

/// How many long-term records and sessions this shard holds: what a
/// split's threshold is measured on.
pub async fn held<B: Backend>(store: &Store<B>) -> Result<(usize, usize)> {
    store.read(|e| (e.longterm().len(), e.session_count())).await
}

/// The ids of the long-term records this shard holds, at most `max`.
pub async fn record_ids<B: Backend>(store: &Store<B>, max: usize) -> Result<Vec<String>> {
    store.read(|e| e.longterm().records().take(max).map(|r| r.id.clone()).collect()).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::retrieval::record::MemoryType;
    use crate::core::shard::bucket_of;

    #[test]
    fn a_records_moving_answer_is_its_raw_users_bucket_whether_remembered_or_not() {
        let key = PseudonymKey::derive(b"a test secret of 32 bytes or so.", "tenant").expect("key");
        // Every other bucket moves.
        let set: Vec<bool> = (0..limits::SHARD_BUCKETS).map(|b| b % 2 == 0).collect();
        let moving = Moving { set: set.clone(), key: Some(key.clone()), users: RefCell::default() };
        for round in 0..2 {
            for i in 0..200 {
                let user = format!("user-{}", i % 37);
                let mut r = MemoryRecord::new(format!("r{i}"), "a text", MemoryType::Semantic, 0);
                // Sealed ids, as a tenant under a privacy key stores them, and plain ones.
                r.user_id = Some(if i % 3 == 0 { user.clone() } else { key.seal_user_id(&user) });
                assert_eq!(moving.record(&r), set[bucket_of(&user) as usize], "record {i}, round {round}");
                r.user_id = None;
                assert_eq!(moving.record(&r), set[bucket_of(&format!("r{i}")) as usize]);
            }
        }
        // One entry per stored user id (a sealed id differs from its raw one).
        assert!(moving.users.borrow().len() <= 200);
    }
}
