//! Splitting a shard (issue 21): the directory drives a move of half a
//! shard's buckets to a new shard, step by logged step, and each shard
//! serves its part of it ([`super::steps`]).
//!
//! 1. **Plan**: the directory logs the move (`shard/move`): the source,
//!    a shard id never used before, the buckets, the map after it.
//! 2. **Copy**: catch-up rounds by digest ([`crate::core::engine::moves`])
//!    while writes go on, until one finds at most
//!    [`limits::SHARD_MOVE_FENCE_LAG_ITEMS`] items changed.
//! 3. **Fence**: the source logs a fence (`shard/fence`) and refuses writes
//!    to the moving buckets (and broadcasts) with `shard_moved`; the front
//!    backs off and retries. Reads go on: the data is frozen.
//! 4. The last rounds, until nothing differs.
//! 5. **Flip**: the directory logs the next map and the step in one write.
//! 6. **Release**: the source collects the moved items and lifts its fence;
//!    until then it refuses requests routed under the new map, so nothing
//!    is served from both shards. The directory forgets the move.
//!
//! Every step is idempotent (a batch is applied once per (move, seq); the
//! fence and the flip are states written again alike; collection drops
//! what is there), and the directory's alarm runs the move again from its
//! logged step after any crash, so a split killed anywhere finishes with
//! every acknowledged write in exactly one shard.

use std::cell::RefCell;

use futures_util::lock::Mutex;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use worker::{Env, State};

use super::fence::Fence;
use super::{call, object_name, Routed, MAP_KEY};
use crate::api;
use crate::core::auth::ENCRYPTION_KEY_HEADER;
use crate::core::engine::moves::{move_diff, MoveDigest};
use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::shard::{Bucket, ShardId, ShardMap};
use crate::core::time::Millis;

/// A split asked of the directory (admin, or a shard past its threshold).
pub const SPLIT_PATH: &str = "/_shard/split";
/// The directory's map, move and last split (the admin route's answer).
pub const STATUS_PATH: &str = "/_shard/status";
/// The prefix of a shard's steps of a split.
pub const MOVE_PATH: &str = "/_shard/move/";
/// A split aborted before its flip (admin).
pub const ABORT_PATH: &str = "/_shard/abort";
const MOVE_KEY: &str = "shard/move";
const LAST_KEY: &str = "shard/last_move";
const ABORTED_KEY: &str = "shard/last_abort";
const WANT_KEY: &str = "shard/want";
/// How soon the directory's alarm runs a move again after a crash, and a
/// fenced shard's alarm looks again.
pub const RETRY_MS: Millis = 2_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Step {
    Copy,
    Fenced,
    Flipped,
}

/// A split in progress, as the directory logs it.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Move {
    /// The epoch of the map after it (epochs only grow, so ids are unique).
    id: u64,
    tenant: String,
    from: ShardId,
    to: ShardId,
    buckets: Vec<Bucket>,
    next: ShardMap,
    step: Step,
    /// The headers its calls carry (namespace, dev mode).
    headers: Vec<(String, String)>,
    reason: String,
    started_ms: Millis,
    fenced_ms: Option<Millis>,
    /// When the map flipped: the fence held the moving buckets' writes
    /// from `fenced_ms` to here (after it the front routes them to the new
    /// shard; the release only collects).
    #[serde(default)]
    flipped_ms: Option<Millis>,
    /// The last batch sent (the new shard's watermark may be further).
    seq: u64,
    rounds: u64,
    items: u64,
    /// The new shard's digest as its imports answered it, so a round
    /// digests the source alone (under the fence, half the work). Not
    /// logged: a move run again after a crash digests the new shard anew.
    #[serde(skip)]
    to_digest: Option<MoveDigest>,
    /// Where this run's time went. Not logged: a run after a crash
    /// reports its own.
    #[serde(skip)]
    spent: Spent,
    /// The tenant's key for this run's calls ([`SplitKey`]). Never logged.
    #[serde(skip)]
    key: Option<Secret>,
}

/// A key that never shows in a debug print.
#[derive(Clone)]
struct Secret(String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(..)")
    }
}

/// A split's wall time by kind of step, as the directory sees each call
/// (the shard's work and the call's transport), in milliseconds.
#[derive(Debug, Clone, Default, Serialize)]
struct Spent {
    /// The source's digests of the moving part.
    source_digest: u64,
    /// The new shard's (only when no earlier round knows it).
    new_digest: u64,
    /// Reading batches of items at the source.
    items: u64,
    /// The new shard storing them.
    import: u64,
    /// The fence set, with its wait for writes in flight.
    fence: u64,
    /// The new map and the step written at the directory.
    flip: u64,
    /// The source collecting what moved and lifting its fence.
    release: u64,
}

fn since(t: Millis) -> u64 {
    super::super::now_ms().saturating_sub(t)
}

/// What the directory is asked.
#[derive(Deserialize)]
pub struct SplitBody {
    pub tenant: String,
    /// The shard to split; default: the one with the most buckets.
    #[serde(default)]
    pub shard: Option<ShardId>,
    /// `admin` (split now and answer the report) or `records` (a shard
    /// past its threshold: the alarm splits it soon).
    pub reason: String,
    #[serde(default)]
    pub headers: Vec<(String, String)>,
    /// A sealed tenant's key (the encryption-key header's value), which
    /// the directory holds in memory only ([`SplitKey`]).
    #[serde(default)]
    pub key: Option<String>,
}

/// A sealed tenant's key as its directory holds it: in memory only, from
/// the last request that carried it (an admin split or abort, a shard's
/// ask after a keyed write, a front retrying a fenced write), never stored
/// or logged. A split's calls carry it, as every request to a sealed
/// tenant's shard must; a directory restarted mid-split without it waits
/// for the next request that brings it.
#[derive(Default)]
pub struct SplitKey(RefCell<Option<String>>);

impl SplitKey {
    /// Keeps `key` if given; answers the key held.
    fn take_from(&self, key: Option<String>) -> Option<String> {
        if key.is_some() {
            self.0.replace(key);
        }
        self.0.borrow().clone()
    }
}

pub(super) fn storage_error(what: &str) -> impl Fn(worker::Error) -> Error + '_ {
    move |e| Error::storage(format!("{what}: {e}"))
}

fn to_text<T: Serialize>(v: &T) -> Result<String> {
    serde_json::to_string(v).map_err(|e| Error::Internal { detail: e.to_string() })
}

pub(super) async fn read<T: serde::de::DeserializeOwned>(state: &State, key: &str) -> Result<Option<T>> {
    let Some(text) = state.storage().get::<String>(key).await.map_err(storage_error(key))? else { return Ok(None) };
    serde_json::from_str(&text).map(Some).map_err(|e| Error::SnapshotCorrupt { reason: format!("{key}: {e}") })
}

pub(super) async fn write<T: Serialize>(state: &State, key: &str, v: &T) -> Result<()> {
    state.storage().put(key, to_text(v)?).await.map_err(storage_error(key))
}

async fn arm(state: &State, at: Millis) -> Result<()> {
    state.storage().set_alarm(worker::ScheduledTime::new(js_sys::Date::new(&(at as f64).into()))).await.map_err(storage_error("alarm"))
}

/// The directory's side of [`SPLIT_PATH`]: `admin` splits now (or runs
/// the split in progress) and answers its report; `records` (a shard past
/// its threshold) is split by the alarm; `resume` (a front whose write met
/// a fence, with the tenant's key) runs a split in progress again soon.
pub async fn serve_split(state: &State, env: &Env, lock: &Mutex<()>, key: &SplitKey, body: &[u8], now: Millis, fault: Option<String>) -> Result<Value> {
    let mut b: SplitBody = api::parse_json(body)?;
    let key = key.take_from(b.key.take());
    // Only the routing headers are kept: a key is never stored.
    b.headers.retain(|(name, _)| !name.to_ascii_lowercase().contains("encryption-key"));
    if b.reason == "resume" {
        if read::<Move>(state, MOVE_KEY).await?.is_some() {
            arm(state, now).await?;
        }
        return Ok(json!({ "status": "resumed" }));
    }
    write(state, TENANT_KEY, &Tenant { tenant: b.tenant.clone(), headers: b.headers.clone() }).await?;
    if b.reason != "admin" {
        // A shard past its threshold: noted, and split by the alarm.
        write(state, WANT_KEY, &b.shard).await?;
        if read::<Move>(state, MOVE_KEY).await?.is_none() {
            arm(state, now).await?;
        }
        return Ok(json!({ "status": "queued" }));
    }
    let _held = lock.lock().await;
    let mut mv = match read::<Move>(state, MOVE_KEY).await? {
        Some(mv) => mv,
        None => plan(state, env, &b, key.clone(), now).await?,
    };
    mv.key = key.map(Secret);
    let report = drive(state, env, mv, fault.as_deref()).await;
    if report.is_err() {
        // The alarm set at the plan may have run already: set it again.
        arm(state, now + RETRY_MS).await?;
    }
    match report {
        // Typed for the admin route (a call's error answer is only its text).
        Err(Error::Overloaded { what, limit }) => Ok(json!({ "refused": { "code": "overloaded", "what": what, "limit": limit } })),
        other => other,
    }
}

/// The directory's alarm: a move logged and not done runs again; a split
/// a shard asked for starts. `None`: this object is no directory with work.
pub async fn on_alarm(state: &State, env: &Env, lock: &Mutex<()>, key: &SplitKey, now: Millis) -> Result<Option<Value>> {
    // One read for every object that is no directory.
    if read::<Value>(state, MAP_KEY).await?.is_none() {
        return Ok(None);
    }
    let _held = lock.lock().await;
    let key = key.take_from(None);
    if let Some(mut mv) = read::<Move>(state, MOVE_KEY).await? {
        mv.key = key.map(Secret);
        // A test fault (dev mode) that keeps a split stuck, as a shard that
        // keeps failing would, for the abort's tests.
        let dev = super::super::env_string(env, "EDGEMEM_DEV_MODE").as_deref() == Some("1");
        let stuck = super::super::env_string(env, "EDGEMEM_TEST_FAULT").filter(|f| dev && f == "split_stuck");
        return match drive(state, env, mv, stuck.as_deref()).await {
            // A sealed tenant's directory restarted without its key: the
            // next request that brings it runs the split again.
            Err(Error::KeyRequired { .. }) => {
                worker::console_error!("edgemem: a sealed tenant's split waits for a request with its key");
                Ok(Some(json!({ "status": "waiting for the tenant's key" })))
            }
            other => other.map(Some),
        };
    }
    // A directory has no store to wake.
    let Some(shard) = read::<Option<ShardId>>(state, WANT_KEY).await? else { return Ok(Some(Value::Null)) };
    state.storage().delete(WANT_KEY).await.map_err(storage_error(WANT_KEY))?;
    let Some(map) = read::<ShardMap>(state, MAP_KEY).await? else { return Ok(Some(Value::Null)) };
    let Some(me) = read::<Tenant>(state, TENANT_KEY).await? else { return Ok(Some(Value::Null)) };
    let body = SplitBody { tenant: me.tenant, shard, reason: "records".into(), headers: me.headers, key: None };
    if shard.is_some_and(|s| map.bucket_count(s) < 2) {
        return Ok(Some(Value::Null));
    }
    let mv = plan(state, env, &body, key, now).await?;
    drive(state, env, mv, None).await.map(Some)
}

const TENANT_KEY: &str = "shard/tenant";

/// Who a directory serves, kept for splits its alarm starts.
#[derive(Serialize, Deserialize)]
struct Tenant {
    tenant: String,
    headers: Vec<(String, String)>,
}

/// Logs a new move: the shard with the most buckets (or the one asked),
/// its upper half, to a shard id never used.
async fn plan(state: &State, env: &Env, b: &SplitBody, key: Option<String>, now: Millis) -> Result<Move> {
    let map: ShardMap = read(state, MAP_KEY).await?.ok_or_else(|| Error::not_found("shard map", b.tenant.clone()))?;
    let from = match b.shard {
        Some(s) => s,
        None => map.shards().into_iter().max_by_key(|&s| (map.bucket_count(s), std::cmp::Reverse(s))).unwrap_or(0),
    };
    let to = map.next_shard().ok_or_else(|| Error::LimitExceeded { what: "shards of a tenant".into(), limit: limits::SHARDS_MAX as u64 })?;
    let next = map.split(from, to)?;
    let kept = next.buckets_of(from);
    let buckets: Vec<Bucket> = map.buckets_of(from).into_iter().filter(|b| kept.binary_search(b).is_err()).collect();
    let mv = Move { id: next.epoch, tenant: b.tenant.clone(), from, to, buckets, next, step: Step::Copy, headers: b.headers.clone(), reason: b.reason.clone(), started_ms: now, fenced_ms: None, flipped_ms: None, seq: 0, rounds: 0, items: 0, to_digest: None, spent: Spent::default(), key: key.map(Secret) };
    // The source must open: a sealed tenant's split is planned only with
    // its key (`key_required` otherwise, before anything is logged).
    shard_call(env, &mv, mv.from, "digest", &json!({ "move_id": mv.id, "buckets": [] })).await?;
    write(state, MOVE_KEY, &mv).await?;
    arm(state, now + RETRY_MS).await?;
    Ok(mv)
}

/// A step of the move at one of its shards.
async fn shard_call(env: &Env, mv: &Move, shard: ShardId, step: &str, body: &Value) -> Result<Value> {
    match &mv.key {
        None => step_call(env, &mv.tenant, &mv.headers, mv.next.epoch, shard, step, body).await,
        Some(Secret(key)) => {
            let mut headers = mv.headers.clone();
            headers.push((ENCRYPTION_KEY_HEADER.to_owned(), key.clone()));
            step_call(env, &mv.tenant, &headers, mv.next.epoch, shard, step, body).await
        }
    }
}

/// A call to [`MOVE_PATH`]`{step}` of a tenant's shard, home-routed: a
/// split's own calls pass its fence.
pub(super) async fn step_call(env: &Env, tenant: &str, headers: &[(String, String)], epoch: u64, shard: ShardId, step: &str, body: &Value) -> Result<Value> {
    let routed = Routed { tenant: tenant.to_owned(), shard, epoch, buckets: Vec::new(), home: true, write: false, all: false };
    call(env, &object_name(tenant, shard), &format!("{MOVE_PATH}{step}"), body, &routed.headers(headers)?).await
}

fn digest_of(v: &Value) -> Result<(MoveDigest, u64)> {
    let d: MoveDigest = serde_json::from_value(v["digest"].clone()).map_err(|e| Error::Internal { detail: format!("a move digest: {e}") })?;
    Ok((d, v["watermark"].as_u64().unwrap_or(0)))
}

/// What a catch-up round did.
struct Round {
    /// Items it sent or removed.
    changed: usize,
    /// Whether the new shard now holds what the source held when the
    /// round began, as its imports answered (under the fence, the last
    /// round: the source has not changed since).
    caught_up: bool,
}

/// One catch-up round. The new shard is digested only when no earlier
/// round of this run knows its digest: only the split writes to the
/// moving buckets there before the flip, and each import answers the
/// digest of what it stored.
async fn round(env: &Env, mv: &mut Move) -> Result<Round> {
    let body = json!({ "move_id": mv.id, "buckets": mv.buckets });
    let t = super::super::now_ms();
    let source = shard_call(env, mv, mv.from, "digest", &body).await?;
    mv.spent.source_digest += since(t);
    let embedder = source["embedder"].clone();
    let (from, _) = digest_of(&source)?;
    let to = match mv.to_digest.take() {
        Some(known) => known,
        None => {
            let t = super::super::now_ms();
            let (to, watermark) = digest_of(&shard_call(env, mv, mv.to, "digest", &body).await?)?;
            mv.spent.new_digest += since(t);
            // Batches already applied there are never numbered again.
            mv.seq = mv.seq.max(watermark);
            to
        }
    };
    let diff = move_diff(&from, &to);
    let mut known: Option<MoveDigest> = Some(to);
    let n = diff.len();
    let max = limits::SHARD_MOVE_BATCH_ITEMS_MAX;
    let batches = diff.send.len().div_ceil(max).max(diff.remove.len().div_ceil(max));
    for i in 0..batches {
        let keys = diff.send.iter().skip(i * max).take(max).cloned().collect::<Vec<_>>();
        let remove = diff.remove.iter().skip(i * max).take(max).cloned().collect::<Vec<_>>();
        let t = super::super::now_ms();
        let items = if keys.is_empty() { json!([]) } else { shard_call(env, mv, mv.from, "items", &json!({ "move_id": mv.id, "keys": keys })).await?["items"].take() };
        mv.spent.items += since(t);
        mv.seq += 1;
        let t = super::super::now_ms();
        let mut answer = shard_call(env, mv, mv.to, "import", &json!({ "move_id": mv.id, "seq": mv.seq, "items": items, "remove": remove, "embedder": embedder })).await?;
        mv.spent.import += since(t);
        mv.items += (keys.len() + remove.len()) as u64;
        // What the batch changed there: its removals gone, its items as
        // stored (a key the source no longer held sent nothing, and the
        // new shard's entry for it stands). An answer without it (a shard
        // of an earlier release) leaves the next round to digest the new
        // shard.
        let stored = serde_json::from_value::<MoveDigest>(answer["stored"].take()).ok();
        known = known.zip(stored).map(|(known, stored)| patched(known, remove, stored));
    }
    let caught_up = known.as_ref().is_some_and(|k| *k == from);
    mv.to_digest = known;
    mv.rounds += 1;
    Ok(Round { changed: n, caught_up })
}

/// `known` (ascending by key) without the keys of `remove` and with the
/// entries of `stored` (ascending by key) in place of its own.
fn patched(known: MoveDigest, mut remove: Vec<String>, stored: MoveDigest) -> MoveDigest {
    remove.sort_unstable();
    let gone = |k: &String| remove.binary_search(k).is_ok() || stored.binary_search_by(|s| s.0.cmp(k)).is_ok();
    let mut out: MoveDigest = known.into_iter().filter(|(k, ..)| !gone(k)).collect();
    out.extend(stored);
    out.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Runs the move from its logged step to the end; answers its report.
/// `fault` (dev mode, tests): `split_stop_{copy,fenced,flipped}` stops
/// there, as a crash would, leaving the alarm to finish; `split_stuck`
/// stops under the fence every time, the alarm's runs too.
async fn drive(state: &State, env: &Env, mut mv: Move, fault: Option<&str>) -> Result<Value> {
    let stop = |step: &str| -> Result<()> {
        if fault == Some(&format!("split_stop_{step}")) || (step == "fenced" && fault == Some("split_stuck")) {
            return Err(Error::Internal { detail: format!("test fault: the split stopped after {step}") });
        }
        Ok(())
    };
    if mv.step == Step::Copy {
        for _ in 0..limits::SHARD_MOVE_SYNC_ROUNDS_MAX {
            if round(env, &mut mv).await?.changed <= limits::SHARD_MOVE_FENCE_LAG_ITEMS {
                break;
            }
        }
        stop("copy")?;
        let fence = Fence { move_id: mv.id, buckets: mv.buckets.clone(), flip_epoch: mv.next.epoch };
        // Writes are refused from here: the fence's time counts the wait.
        let fenced_at = super::super::now_ms();
        // The source waits for the writes it admitted before the fence;
        // one slower than its bound lifts the fence again.
        let held = shard_call(env, &mv, mv.from, "fence", &json!(fence)).await?["fenced"] != false;
        mv.spent.fence += since(fenced_at);
        if !held {
            return Err(Error::Overloaded { what: format!("milliseconds the fence of split {} waited for writes in flight", mv.id), limit: limits::SHARD_FENCE_DRAIN_MS });
        }
        mv.step = Step::Fenced;
        mv.fenced_ms = Some(fenced_at);
        write(state, MOVE_KEY, &mv).await?;
    }
    if mv.step == Step::Fenced {
        // Writes are fenced, so the source no longer changes: the round
        // whose imports leave the new shard holding what the source held
        // is the last (a round more would only digest it again).
        let mut left = usize::MAX;
        for _ in 0..limits::SHARD_MOVE_SYNC_ROUNDS_MAX {
            let r = round(env, &mut mv).await?;
            left = if r.caught_up { 0 } else { r.changed };
            if left == 0 {
                break;
            }
        }
        if left != 0 {
            return Err(Error::Internal { detail: format!("split {}: the fenced catch-up still differs by {left} items", mv.id) });
        }
        stop("fenced")?;
        mv.step = Step::Flipped;
        mv.flipped_ms = Some(super::super::now_ms());
        #[derive(Serialize)]
        struct Flip {
            #[serde(rename = "shard/map")]
            map: String,
            #[serde(rename = "shard/move")]
            mv: String,
        }
        let t = super::super::now_ms();
        state.storage().put_multiple(Flip { map: to_text(&mv.next)?, mv: to_text(&mv)? }).await.map_err(storage_error("flip"))?;
        mv.spent.flip += since(t);
        stop("flipped")?;
    }
    let t = super::super::now_ms();
    let released = shard_call(env, &mv, mv.from, "release", &json!({ "move_id": mv.id, "buckets": mv.buckets, "map": mv.next })).await?;
    mv.spent.release += since(t);
    let now = super::super::now_ms();
    let report = json!({
        "move_id": mv.id, "from": mv.from, "to": mv.to, "reason": mv.reason,
        "buckets_moved": mv.buckets.len(), "items_copied": mv.items, "rounds": mv.rounds,
        "collected": released["collected"], "epoch": mv.next.epoch,
        "split_ms": now.saturating_sub(mv.started_ms),
        // Until the flip is written: the front's next retry then finds the new map.
        "fence_ms": mv.fenced_ms.zip(mv.flipped_ms).map(|(f, l)| l.saturating_sub(f) + mv.spent.flip),
        "release_ms": mv.flipped_ms.map(|l| now.saturating_sub(l).saturating_sub(mv.spent.flip)),
        "spent_ms": mv.spent,
    });
    write(state, LAST_KEY, &report).await?;
    state.storage().delete(MOVE_KEY).await.map_err(storage_error(MOVE_KEY))?;
    Ok(report)
}

/// The directory's side of [`ABORT_PATH`]: a split not yet flipped is
/// undone. The new shard drops what it was sent (it owns nothing under
/// the map, and a later split may give its id to another move), then the
/// source lifts its fence, then the move is forgotten; each step is
/// idempotent, so an abort that fails part-way is finished by the same
/// request again. A flipped split cannot be aborted: the new shard owns
/// its buckets and may hold writes the source never saw.
/// Answers `{"refused": error}` for a split that cannot be aborted (the
/// front raises it: a call between objects carries only answers).
pub async fn serve_abort(state: &State, env: &Env, lock: &Mutex<()>, key: &SplitKey, body: &[u8], now: Millis) -> Result<Value> {
    let given: Option<String> = if body.is_empty() { None } else { api::parse_json::<Value>(body)?["key"].as_str().map(str::to_owned) };
    let key = key.take_from(given);
    let _held = lock.lock().await;
    let Some(mut mv) = read::<Move>(state, MOVE_KEY).await? else { return Ok(json!({ "refused": { "code": "not_found" } })) };
    mv.key = key.map(Secret);
    if mv.step == Step::Flipped {
        return Ok(json!({ "refused": { "code": "invalid_input", "reason": format!("split {} is past its flip: it finishes, and cannot be aborted", mv.id) } }));
    }
    let dropped = shard_call(env, &mv, mv.to, "drop", &json!({ "move_id": mv.id, "buckets": mv.buckets })).await?;
    shard_call(env, &mv, mv.from, "unfence", &json!({ "move_id": mv.id })).await?;
    let report = json!({
        "move_id": mv.id, "from": mv.from, "to": mv.to, "reason": mv.reason, "aborted": true,
        "step": mv.step, "buckets": mv.buckets.len(), "items_copied": mv.items, "rounds": mv.rounds,
        "dropped": dropped["collected"], "aborted_after_ms": now.saturating_sub(mv.started_ms),
    });
    write(state, ABORTED_KEY, &report).await?;
    state.storage().delete(MOVE_KEY).await.map_err(storage_error(MOVE_KEY))?;
    Ok(report)
}

/// The directory's state for `GET /v1/admin/shards`.
pub async fn status(state: &State) -> Result<Value> {
    let map: Option<ShardMap> = read(state, MAP_KEY).await?;
    let mv: Option<Move> = read(state, MOVE_KEY).await?;
    let last: Option<Value> = read(state, LAST_KEY).await?;
    let aborted: Option<Value> = read(state, ABORTED_KEY).await?;
    Ok(json!({
        "map": map,
        "moving": mv.map(|m| json!({ "move_id": m.id, "from": m.from, "to": m.to, "step": m.step, "buckets": m.buckets.len() })),
        "last_split": last,
        "last_abort": aborted,
    }))
}
