//! A record found by asking (its id is the client's, so only the shards
//! know where it is), and an edit (or a restore of an old version) that
//! gives a record a user of another shard: the edit is made where the
//! record is, then the record is handed
//! over whole (its vector and its history) to its new user's shard.
//!
//! The hand-over is three steps, each idempotent: the record's item read
//! at its old shard, adopted by the new one ([`Op::Adopt`]: a no-op when it
//! holds that state of the record or a later one), then dropped at the old
//! one only if it is still at the version adopted ([`Op::HandedOver`]). An
//! edit that reached the old shard meanwhile keeps the record there and is
//! handed over in the next round, over the earlier copy; a delete
//! meanwhile is made at the new shard too. A crash between the steps leaves the record
//! in both shards at one version: the same edit sent again finishes the
//! hand-over, and a by-id request that finds the two copies drops the one
//! outside its owner's shard.
//!
//! [`Op::Adopt`]: crate::core::engine::Op::Adopt
//! [`Op::HandedOver`]: crate::core::engine::Op::HandedOver

use serde_json::{json, Value};
use worker::Method;

use super::split::MOVE_PATH;
use super::{canonical, Answer, Sharded};
use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::privacy::PseudonymKey;
use crate::core::shard::{record_bucket, Bucket, ShardId, ShardMap};

/// Where a record is: its shard and, when known, its bucket.
#[derive(Clone)]
struct Held {
    shard: ShardId,
    buckets: Vec<Bucket>,
}

/// A request for one record by id: the shards are asked which holds it,
/// and it goes there.
pub(super) async fn record(s: &Sharded<'_>, map: &ShardMap, epoch: u64, id: &str) -> Result<Answer> {
    let f = &s.forward;
    // The id directory names the record's bucket when the front created it
    // (one call, where asking every shard is one per shard): its shard is
    // asked alone. A miss there (a record made inside a shard, an entry
    // older than an edit that changed its user) asks every shard.
    if map.shards().len() > 2 && s.tenant != super::super::DEFAULT_NAMESPACE {
        let entries = super::super::routing::lookup(s.env, &[id.to_owned()], false).await?;
        let bucket = entries.get(id).and_then(|es| es.iter().find(|e| e.namespace == s.tenant)).and_then(|e| e.bucket);
        if let Some(b) = bucket {
            let a = at(s, map, epoch, id, Held { shard: map.owner(b), buckets: vec![b] }).await?;
            if a.status != 404 {
                return Ok(a);
            }
        }
    }
    let query = f.url.query().map(|q| format!("?{q}")).unwrap_or_default();
    let probe = format!("{}/v1/long-term-memory/{id}{query}", f.url.origin().ascii_serialization());
    let shards = map.shards();
    let answers = s.each(&shards, epoch, false, Method::Get, &probe, &[]).await?;
    if let Some(moved) = answers.iter().position(Answer::moved) {
        return Ok(answers.into_iter().nth(moved).expect("found above"));
    }
    let mut holders: Vec<usize> = answers.iter().enumerate().filter(|(_, a)| a.ok()).map(|(i, _)| i).collect();
    if holders.len() > 1 {
        holders = leftovers_dropped(s, map, epoch, id, &shards, &answers, holders).await?;
    }
    let i = match holders.as_slice() {
        // Not found anywhere: home's answer (a 404), as one object's.
        [] => return answers.into_iter().next().ok_or_else(|| Error::not_found("memory", id.to_owned())),
        [one] => *one,
        _ => return Err(Error::invalid("memory_id", format!("{id:?} names records of several users in different shards; delete one of them"))),
    };
    if f.method == Method::Get && f.url.path().ends_with(id) {
        return Ok(answers.into_iter().nth(i).expect("a holder"));
    }
    at(s, map, epoch, id, Held { shard: shards[i], buckets: Vec::new() }).await
}

/// The request at the record's shard; an edit or a restore that gives
/// the record a user of another shard is handed over after it.
async fn at(s: &Sharded<'_>, map: &ShardMap, epoch: u64, id: &str, held: Held) -> Result<Answer> {
    let f = &s.forward;
    let edits = f.method == Method::Patch || (f.method == Method::Post && f.url.path().ends_with("/restore"));
    let a = s.pass(held.shard, &s.routed(held.shard, epoch, held.buckets.clone())).await?;
    if !edits || !a.ok() {
        return Ok(a);
    }
    // The record as the edit left it says whose it is now.
    let bucket = answer_bucket(&a, s.privacy()?.as_ref(), id);
    let to = (map.owner(bucket), bucket);
    if to.0 == held.shard {
        return Ok(a);
    }
    if let Some(refused) = hand_over(s, epoch, id, &held, to).await? {
        return Ok(refused);
    }
    if s.tenant != super::super::DEFAULT_NAMESPACE {
        // The id directory names its new bucket: the next by-id request
        // asks one shard again.
        super::super::routing::register(s.env, &s.tenant, &[id.to_owned()], Some(&[bucket]), super::super::now_ms()).await?;
    }
    Ok(a)
}

/// The bucket of record `id` as a shard's answer (its AMS JSON) gives its
/// user: the raw user id's (a sealed one opened), or the id's without one.
fn answer_bucket(a: &Answer, key: Option<&PseudonymKey>, id: &str) -> Bucket {
    let user = a.json().and_then(|v| v["user_id"].as_str().map(|u| canonical(key, u)));
    record_bucket(user.as_deref(), id)
}

/// One step of a hand-over at `shard`: its answer, or the shard's refusal
/// (a `shard_moved` makes the front run the whole request again).
async fn step(s: &Sharded<'_>, shard: ShardId, epoch: u64, buckets: &[Bucket], name: &str, body: &Value) -> Result<std::result::Result<Value, Answer>> {
    let url = format!("{}{MOVE_PATH}{name}", s.forward.url.origin().ascii_serialization());
    let routed = super::Routed { write: true, ..s.routed(shard, epoch, buckets.to_vec()) };
    let a = s.send(shard, &routed, Method::Post, &url, body.to_string().as_bytes()).await?;
    if !a.ok() {
        return Ok(Err(a));
    }
    a.json().map(Ok).ok_or_else(|| Error::Internal { detail: format!("shard {shard}'s answer to {name}") })
}

/// Hands record `id` from `from` to `to` (see the module docs); `Some`: a
/// shard's refusal, to answer with.
async fn hand_over(s: &Sharded<'_>, epoch: u64, id: &str, from: &Held, to: (ShardId, Bucket)) -> Result<Option<Answer>> {
    let key = format!("m/{id}");
    let mut adopted: Option<u64> = None;
    for _ in 0..limits::SHARD_HAND_OVER_ROUNDS_MAX {
        let got = match step(s, from.shard, epoch, &from.buckets, "items", &json!({ "move_id": 0, "keys": [key], "versions": true })).await? {
            Ok(v) => v,
            Err(refused) => return Ok(Some(refused)),
        };
        // The item passes through as the old shard wrote it: the front
        // never decodes a record's state.
        let (Some(item), Some(version)) = (got["items"].get(0), got["versions"][id].as_u64()) else {
            // Deleted at the old shard meanwhile: at the new one too.
            if let Some(version) = adopted {
                if let Err(refused) = step(s, to.0, epoch, &[to.1], "hand-over", &json!({ "id": id, "version": version })).await? {
                    return Ok(Some(refused));
                }
            }
            return Ok(None);
        };
        let body = json!({ "item": item, "embedder": got["embedder"] });
        if let Err(refused) = step(s, to.0, epoch, &[to.1], "hand-over", &body).await? {
            return Ok(Some(refused));
        }
        adopted = Some(version);
        match step(s, from.shard, epoch, &from.buckets, "hand-over", &json!({ "id": id, "version": version })).await? {
            Ok(v) if v["applied"] == true => return Ok(None),
            Ok(_) => continue,
            Err(refused) => return Ok(Some(refused)),
        }
    }
    Err(Error::Overloaded { what: format!("edits of memory {id:?} while it moves to its new user's shard"), limit: limits::SHARD_HAND_OVER_ROUNDS_MAX as u64 })
}

/// Several shards hold record `id`: copies outside the shard that owns
/// the record's bucket, at the owner's version, are what an interrupted
/// hand-over left; they are dropped. Answers the holders left.
async fn leftovers_dropped(s: &Sharded<'_>, map: &ShardMap, epoch: u64, id: &str, shards: &[ShardId], answers: &[Answer], holders: Vec<usize>) -> Result<Vec<usize>> {
    let key = s.privacy()?;
    let Some(&owner) = holders.iter().find(|&&i| map.owner(answer_bucket(&answers[i], key.as_ref(), id)) == shards[i]) else { return Ok(holders) };
    let got = match step(s, shards[owner], epoch, &[], "items", &json!({ "move_id": 0, "keys": [format!("m/{id}")], "versions": true })).await? {
        Ok(v) => v,
        Err(_) => return Ok(holders),
    };
    let Some(version) = got["versions"][id].as_u64() else { return Ok(holders) };
    let mut left = vec![owner];
    for &i in holders.iter().filter(|&&i| i != owner) {
        let dropped = matches!(step(s, shards[i], epoch, &[], "hand-over", &json!({ "id": id, "version": version })).await?, Ok(v) if v["applied"] == true);
        if !dropped {
            left.push(i);
        }
    }
    left.sort_unstable();
    Ok(left)
}
