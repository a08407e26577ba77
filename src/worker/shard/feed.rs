//! A sharded tenant's change feed (issue 21): one sequence, at home.
//!
//! Home's log is the tenant's feed: another shard's events are relayed
//! into it ([`crate::core::feed::relay`]), so `GET /v1/events` (a page, a
//! WebSocket, an event stream) is served by home alone, resumes with
//! `since` as from one object, and is byte for byte the unsharded route.
//!
//! Events reach home two ways, both exactly once by home's marks:
//! - **pulled**: before home answers a page or opens a subscriber, it asks
//!   every other shard for its events after its mark ([`PULL_PATH`], at
//!   most [`limits::SHARD_FANOUT_BRANCHING_MAX`] calls at once), so a page
//!   read after a write holds that write;
//! - **pushed**: while someone follows live, each shard sends its new
//!   events after its writes ([`RELAY_PATH`], one relay in flight per
//!   shard; writes meanwhile go in its next round). Home's answer says
//!   whether anyone still follows; told no, a shard stops pushing for
//!   [`limits::FEED_RELAY_QUIET_TRUST_MS`], unless a new subscriber's pull
//!   tells it again. Nobody following live, a write costs no extra call.

use std::cell::Cell;

use futures_util::lock::Mutex;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use worker::{Env, Headers, Method, Request, RequestInit, Response, Url};

use super::views::Scope;
use super::{call, map_for, object_name, Routed};
use crate::api::feed_relay::{part, relay};
use crate::core::error::{Error, Result};
use crate::core::feed::relay::{relayed_kind, ShardPart};
use crate::core::limits;
use crate::core::shard::ShardId;
use crate::core::time::Millis;
use crate::worker::crypt::DoStore;
use crate::worker::sql::Meter;

/// Home, sent a shard's new events.
pub const RELAY_PATH: &str = "/_shard/feed-relay";
/// A shard, asked by home for its events after home's mark.
pub const PULL_PATH: &str = "/_shard/feed-pull";

#[derive(Deserialize)]
struct RelayBody {
    shard: ShardId,
    /// None: the shard asks where home is in its log.
    part: Option<ShardPart>,
}

#[derive(Serialize, Deserialize)]
struct RelayAnswer {
    mark: u64,
    listening: bool,
}

#[derive(Serialize, Deserialize)]
struct PullBody {
    after: u64,
    /// Someone follows live: push after writes from now on.
    listening: bool,
}

/// A shard's relaying: home's mark as last heard, one relay at a time.
#[derive(Debug, Clone, Copy, Default)]
pub struct Relaying {
    mark: Option<u64>,
    busy: bool,
    again: bool,
    quiet_until: Millis,
}

fn internal(e: impl std::fmt::Display) -> Error {
    Error::Internal { detail: e.to_string() }
}

/// Home's side of [`RELAY_PATH`]. `listening`: whether it has live
/// subscribers. One relay at a time (`lock`).
pub async fn serve_relay(store: &DoStore, lock: &Mutex<()>, body: &[u8], listening: bool, now: Millis) -> Result<Value> {
    let b: RelayBody = crate::api::parse_json(body)?;
    if b.shard == 0 || usize::from(b.shard) >= limits::SHARDS_MAX {
        return Err(Error::invalid("shard", format!("{} cannot relay to home", b.shard)));
    }
    let _one = lock.lock().await;
    let mark = match &b.part {
        Some(p) => relay(store, b.shard, p, now).await?,
        None => store.read(|e| e.feed_relay().mark(b.shard)).await?,
    };
    Ok(json!(RelayAnswer { mark, listening }))
}

/// A shard's side of [`PULL_PATH`].
pub async fn serve_pull(store: &DoStore, relaying: &Cell<Relaying>, body: &[u8]) -> Result<Value> {
    let b: PullBody = crate::api::parse_json(body)?;
    let p = part(store, b.after).await?;
    let mut r = relaying.get();
    // Home is at least at `after` once it relays this part.
    r.mark = Some(b.after);
    if b.listening {
        r.quiet_until = 0;
    }
    relaying.set(r);
    serde_json::to_value(&p).map_err(internal)
}

/// Home: every other shard's events after its mark, logged in its feed
/// before a page is answered or a subscriber opens. Best effort per shard:
/// a shard that does not answer is relayed later (its events keep their
/// order), and the feed is never out of order or twice.
pub async fn pull_all(env: &Env, scope: &Scope, store: &DoStore, lock: &Mutex<()>, listening: bool, now: Millis) {
    for fresh in [false, true] {
        let map = match map_for(env, &scope.tenant, None, fresh, now).await {
            Ok(m) => m,
            Err(e) => return worker::console_error!("edgemem: home of {} could not read its map for the feed: {e}", scope.tenant),
        };
        let others: Vec<ShardId> = map.shards().into_iter().filter(|&s| s != 0).collect();
        let mut moved = false;
        for group in others.chunks(limits::SHARD_FANOUT_BRANCHING_MAX) {
            let pulls = group.iter().map(|&shard| pull_one(env, scope, map.epoch, shard, store, lock, listening, now));
            for (shard, r) in group.iter().zip(futures_util::future::join_all(pulls).await) {
                match r {
                    Ok(()) => {}
                    Err(Error::ShardMoved { .. }) => moved = true,
                    Err(e) => worker::console_error!("edgemem: home of {} could not pull shard {shard}'s feed: {e}", scope.tenant),
                }
            }
        }
        if !moved {
            return;
        }
    }
}

#[allow(clippy::too_many_arguments)]
async fn pull_one(env: &Env, scope: &Scope, epoch: u64, shard: ShardId, store: &DoStore, lock: &Mutex<()>, listening: bool, now: Millis) -> Result<()> {
    // A read: a split's fence lets it through until the flip.
    let routed = Routed { tenant: scope.tenant.clone(), shard, epoch, buckets: Vec::new(), home: false, write: false, all: true };
    let headers = routed.headers(&scope.headers)?;
    for _ in 0..limits::FEED_RELAY_ROUNDS_MAX {
        let after = store.read(|e| e.feed_relay().mark(shard)).await?;
        scope.meter.count_call();
        let v = call(env, &object_name(&scope.tenant, shard), PULL_PATH, &json!(PullBody { after, listening }), &headers).await?;
        let p: ShardPart = serde_json::from_value(v).map_err(|e| internal(format!("a shard's feed part: {e}")))?;
        let _one = lock.lock().await;
        relay(store, shard, &p, now).await?;
        if !p.more() {
            break;
        }
    }
    Ok(())
}

/// A shard (not home) that relays its events to home after it wrote.
pub struct Relayer<'a> {
    pub env: &'a Env,
    pub tenant: &'a str,
    pub shard: ShardId,
    /// Headers home needs (namespace, key id, dev mode, keys).
    pub headers: Vec<(String, String)>,
    pub relaying: &'a Cell<Relaying>,
    pub meter: &'a Meter,
}

impl Relayer<'_> {
    /// Sends this shard's new events to home, unless home said nobody
    /// follows live. A push already running takes these writes in its next
    /// round. Best effort: a failure is logged, and the next write, or
    /// home's next pull, relays them.
    pub async fn push(&self, store: &DoStore, now: Millis) {
        let mut r = self.relaying.get();
        if now < r.quiet_until {
            return;
        }
        if r.busy {
            r.again = true;
            return self.relaying.set(r);
        }
        r.busy = true;
        self.relaying.set(r);
        let sent = self.rounds(store, now).await;
        let mut r = self.relaying.get();
        r.busy = false;
        self.relaying.set(r);
        if let Err(e) = sent {
            worker::console_error!("edgemem: shard {} of {} could not relay its feed: {e}", self.shard, self.tenant);
        }
    }

    async fn rounds(&self, store: &DoStore, now: Millis) -> Result<()> {
        let routed = Routed { tenant: self.tenant.to_owned(), shard: 0, epoch: 0, buckets: Vec::new(), home: true, write: true, all: false };
        let headers = routed.headers(&self.headers)?;
        for _ in 0..limits::FEED_RELAY_ROUNDS_MAX {
            let mut r = self.relaying.get();
            r.again = false;
            self.relaying.set(r);
            let p = match r.mark {
                Some(mark) => Some(part(store, mark).await?),
                None => None,
            };
            // Only settings home tells itself, or nothing new: no call.
            if p.as_ref().is_some_and(|p| !p.lost && !p.more() && !p.events.iter().any(|e| relayed_kind(&e.kind))) {
                return Ok(());
            }
            self.meter.count_call();
            // `RelayBody`'s fields, the part serialized in place (no copy).
            let v = call(self.env, &object_name(self.tenant, 0), RELAY_PATH, &json!({ "shard": self.shard, "part": &p }), &headers).await?;
            let a: RelayAnswer = serde_json::from_value(v).map_err(|e| internal(format!("home's relay answer: {e}")))?;
            let mut r = self.relaying.get();
            r.mark = Some(a.mark);
            if !a.listening {
                r.quiet_until = now.saturating_add(limits::FEED_RELAY_QUIET_TRUST_MS);
                self.relaying.set(r);
                return Ok(());
            }
            self.relaying.set(r);
            // Home's mark unknown, more events than one part, or a part
            // home could not take (it starts past home's mark): again.
            let more = p.as_ref().is_none_or(|p| p.more() || a.mark < p.after);
            if !more && !r.again {
                return Ok(());
            }
        }
        Ok(())
    }
}

/// The front: `GET /v1/events` of a sharded tenant, passed on to home as
/// it came (a WebSocket upgrade or an event stream is home's response), under a
/// fresh map when home answers that the map moved.
pub async fn open(env: &Env, tenant: &str, base: &[(String, String)], url: &Url, initial: usize, now: Millis) -> Result<Response> {
    let mut fresh = false;
    for _ in 0..=limits::SHARD_MOVED_RETRIES_MAX {
        let map = map_for(env, tenant, Some(initial), fresh, now).await?;
        let routed = Routed { tenant: tenant.to_owned(), shard: 0, epoch: map.epoch, buckets: Vec::new(), home: true, write: false, all: false };
        let h = Headers::new();
        for (k, v) in routed.headers(base)? {
            h.set(&k, &v).map_err(internal)?;
        }
        let mut init = RequestInit::new();
        init.with_method(Method::Get).with_headers(h);
        let req = Request::new_with_init(url.as_str(), &init).map_err(internal)?;
        let resp = super::super::object_stub(env, &object_name(tenant, 0)).map_err(internal)?.fetch_with_request(req).await.map_err(internal)?;
        if resp.status_code() != 409 {
            return Ok(resp);
        }
        fresh = true;
    }
    Err(Error::ShardMoved { epoch: 0 })
}
