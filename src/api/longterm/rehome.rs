//! Records a shard holds outside its buckets, and their hand-over to the
//! shard that owns them (issue 21).
//!
//! A sharded tenant's records live in their user's shard, but some writes
//! happen where a session lives: background extraction, and the promotion
//! of a session's `memories`. Those records are committed where they were
//! made, then handed over: created in the owner's shard (idempotent: the
//! same id with the same content is a no-op there), and only then deleted
//! here. A crash between the two leaves the record in both until the next
//! pass, which creates it again (a no-op) and deletes it here; never in
//! neither.

use serde_json::Value;

use super::json::record_json;
use crate::api::privacy::open_user_ids;
use crate::core::engine::Op;
use crate::core::error::Result;
use crate::core::longterm::LtmOp;
use crate::core::shard::{record_bucket, Bucket};
use crate::core::time::Millis;
use crate::store::{Backend, Store};

/// One misplaced record: its bucket, its id, its AMS JSON (user ids open,
/// as a create takes them).
pub struct Misplaced {
    pub bucket: Bucket,
    pub id: String,
    pub json: Value,
}

/// Up to `max` records inserted since the watermark `from` whose bucket
/// `owned` says this shard does not own, and the watermark to scan from
/// next time when the list is not cut short. A user's bucket is its raw
/// id's: sealed ids are opened first.
pub async fn misplaced<B: Backend>(store: &Store<B>, owned: impl Fn(Bucket) -> bool, from: u64, max: usize) -> Result<(Vec<Misplaced>, u64)> {
    let key = store.with_privacy_key(|k| k.cloned());
    store
        .read(|e| {
            let mut out = Vec::new();
            let (records, next) = e.longterm().records_since(from);
            for r in records {
                let user = r.user_id.as_deref().map(|u| key.as_ref().and_then(|k| k.open_user_id(u)).unwrap_or_else(|| u.to_owned()));
                let bucket = record_bucket(user.as_deref(), &r.id);
                if owned(bucket) {
                    continue;
                }
                let mut json = record_json(r);
                open_user_ids(&mut json, key.as_ref());
                out.push(Misplaced { bucket, id: r.id.clone(), json });
                if out.len() >= max {
                    // Cut short: scan from the same watermark next time.
                    return (out, from);
                }
            }
            (out, next)
        })
        .await
}

/// Deletes records handed over to their owner's shard.
pub async fn handed_over<B: Backend>(store: &Store<B>, ids: Vec<String>, now: Millis) -> Result<()> {
    if ids.is_empty() {
        return Ok(());
    }
    store.apply(Op::Ltm(LtmOp::Delete { ids, forget: false, actor: Some("shard hand-over".to_owned()) }), now).await.map(drop)
}
