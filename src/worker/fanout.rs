//! The fan-out executor (issue 21, item 4): one node of a tenant-wide
//! search's tree, run by a shard object.
//!
//! The root (the shard the front chose) embeds the query once, runs the
//! statistics round and then the candidates round down its tree, ranks
//! the merged lists and answers AMS's `MemoryRecordResults` plus
//! `partial`, `missing_shards` and `shards_asked`. Every other node
//! computes its own part, calls its children (at most
//! [`limits::SHARD_FANOUT_BRANCHING_MAX`], at once), each raced against the
//! child's deadline ([`fanout::child_deadline`]), merges what came back in
//! time and answers its parent with the subtree's coverage. A child that
//! is late or fails is missing with its whole subtree; one that answers
//! `shard_moved` makes the answer stale, and the root answers
//! `shard_moved` so the front refreshes its map and asks again.
//!
//! Each node's own part races the deadline as its children do, so a slow
//! root is missing from its own answer rather than late. The statistics
//! round gets the first half of the time left, the candidates round the
//! rest.

use std::time::Duration;

use futures_util::future::{select, Either};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use worker::{Delay, Env, Headers, Method, Request, RequestInit};

use super::crypt::DoStore;
use super::shard::{object_name, w, Routed, FANOUT_PATH, SHARD_HEADER};
use crate::api::longterm::fanout::{self as parts, CandPart, Round, StatsPart};
use crate::api::longterm::{query_vector, SearchBody};
use crate::api::services::Services;
use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::shard::fanout::{self, Coverage};
use crate::core::shard::{FanOut, ShardId};
use crate::core::time::Millis;

/// What a node is asked.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NodeBody {
    /// The search as the client sent it.
    pub search: Value,
    /// This node and its subtree.
    pub tree: FanOut,
    /// When this node must have answered (the root's clock).
    pub deadline_at: Millis,
    /// The round, for every node but the root.
    #[serde(default)]
    pub round: Option<Round>,
    /// The statistics round (else the candidates round).
    #[serde(default)]
    pub stats: bool,
}

/// What a non-root node answers.
#[derive(Debug, Serialize, Deserialize)]
struct NodeAnswer {
    part: Value,
    asked: Vec<ShardId>,
    missing: Vec<ShardId>,
    stale: bool,
    /// Calls to other objects this subtree made (for the meter).
    #[serde(default)]
    calls: u64,
}

/// A node's surroundings: where its children are, what to pass them.
pub struct Node<'a> {
    pub env: &'a Env,
    pub store: &'a DoStore,
    pub services: &'a dyn Services,
    pub routed: &'a Routed,
    /// Headers every child gets (namespace, key id, dev mode, keys).
    pub pass: Vec<(String, String)>,
    /// Local dev mode: test faults are honoured.
    pub dev: bool,
    pub now: fn() -> Millis,
    /// Counts this node's calls to other objects.
    pub calls: &'a dyn Fn(),
    /// Calls made by this node and the subtrees that answered it, this
    /// request: a subtree that did not answer is not counted.
    pub tree_calls: std::cell::Cell<u64>,
}

impl Node<'_> {
    /// Serves `body` at this node: the whole search at the root, else this
    /// subtree's part of one round.
    pub async fn serve(&self, body: NodeBody) -> Result<Value> {
        if body.tree.shard != self.routed.shard {
            return Err(Error::invalid("tree", "this node is not the shard it was sent to"));
        }
        match &body.round {
            None => self.root(&body).await,
            Some(round) => {
                let search = parts::parse_body(self.store, &body.search)?;
                let (part, cov) = self.walk(&body, &search, round, body.stats, body.deadline_at).await?;
                Ok(json!(NodeAnswer { part, asked: cov.asked, missing: cov.missing, stale: cov.stale, calls: self.tree_calls.get() }))
            }
        }
    }

    async fn root(&self, body: &NodeBody) -> Result<Value> {
        let search = parts::parse_body(self.store, &body.search)?;
        let vector = query_vector(self.store, self.services, &search, None).await?;
        let now = (self.now)();
        // The root stops waiting a hop margin early: it still ranks and
        // answers by the deadline.
        let end = body.deadline_at.saturating_sub(limits::SHARD_FANOUT_HOP_MARGIN_MS).max(now);
        let mut round = Round { now, mode: None, vector, stats: None };
        let mut coverage = Coverage::default();
        if parts::needs_stats(&search, round.vector.is_some()) {
            let half = now.saturating_add(end.saturating_sub(now) / 2);
            let (part, cov) = self.walk(body, &search, &round, true, half).await?;
            coverage = cov;
            if part.is_null() {
                // No shard answered in time: nothing to rank by.
                let mode = if search.mode == crate::core::longterm::Mode::Auto { crate::core::longterm::Mode::Keyword } else { search.mode };
                round.mode = Some(mode.as_str().to_owned());
                return self.answer(&search, &round, &CandPart { empty: true, exact: true, ..CandPart::default() }, coverage);
            }
            round.stats = Some(serde_json::from_value(part).map_err(|e| Error::Internal { detail: format!("statistics part: {e}") })?);
        }
        let mode = match &round.stats {
            Some(s) => s.resolve(search.mode, round.vector.is_some()),
            None => search.mode,
        };
        // `auto` without statistics (a listing, or semantic) runs as asked.
        let mode = if mode == crate::core::longterm::Mode::Auto { crate::core::longterm::Mode::Keyword } else { mode };
        round.mode = Some(mode.as_str().to_owned());
        let (part, cov) = self.walk(body, &search, &round, false, end).await?;
        // A shard missing in either round is missing from the answer.
        let first = std::mem::take(&mut coverage);
        coverage.asked = cov.asked.clone();
        coverage.missing = cov.missing.clone();
        coverage.missing.extend(first.missing.into_iter().filter(|s| !cov.missing.contains(s)));
        coverage.stale = first.stale || cov.stale;
        let merged: CandPart = match part {
            Value::Null => CandPart { empty: true, exact: true, ..CandPart::default() },
            part => serde_json::from_value(part).map_err(|e| Error::Internal { detail: format!("candidates part: {e}") })?,
        };
        self.answer(&search, &round, &merged, coverage)
    }

    /// The root's answer: the merged part ranked, user ids opened, and what
    /// it covers; a stale map anywhere makes it `shard_moved` instead.
    fn answer(&self, search: &SearchBody, round: &Round, merged: &CandPart, coverage: Coverage) -> Result<Value> {
        if coverage.stale {
            return Err(Error::ShardMoved { epoch: self.routed.epoch });
        }
        let mut out = parts::finish(search, round, merged)?;
        self.store.with_privacy_key(|k| crate::api::privacy::open_user_ids(&mut out, k));
        if let (Some(o), Value::Object(c)) = (out.as_object_mut(), coverage.to_json()) {
            o.extend(c);
        }
        Ok(out)
    }

    /// This subtree's part of one round by `deadline`: this shard's own,
    /// merged with each child's that answered in time; null when none did.
    async fn walk(&self, body: &NodeBody, search: &SearchBody, round: &Round, stats: bool, deadline: Millis) -> Result<(Value, Coverage)> {
        let children = &body.tree.children;
        let child_deadline = fanout::child_deadline(deadline, (self.now)());
        let calls = children.iter().map(|child| self.child(body, child, round, stats, child_deadline));
        let own = async {
            self.slow().await;
            if stats {
                parts::stats_part(self.store, search).await.map(|p| json!(p))
            } else {
                parts::candidates_part(self.store, search, round).await.map(|p| json!(p))
            }
        };
        // This shard's own part races the deadline too: one that waits (on
        // its storage, say) is missing like a late child.
        let own = async {
            let timer = Delay::from(Duration::from_millis(deadline.saturating_sub((self.now)())));
            match select(Box::pin(own), timer).await {
                Either::Left((part, _)) => part.map(Some),
                Either::Right(_) => Ok(None),
            }
        };
        // Children first: their calls are sent before this shard computes.
        let (answers, own) = futures_util::join!(futures_util::future::join_all(calls), own);
        let mut got = Vec::new();
        let mut coverage = match own? {
            Some(part) => {
                got.push(part);
                Coverage::answered(self.routed.shard)
            }
            None => Coverage::missing(&FanOut { shard: self.routed.shard, children: Vec::new() }),
        };
        for (child, answer) in children.iter().zip(answers) {
            match answer {
                Ok(a) => {
                    self.tree_calls.set(self.tree_calls.get().saturating_add(a.calls));
                    coverage.absorb(Coverage { asked: a.asked, missing: a.missing, stale: a.stale });
                    // A subtree none of whose shards answered has no part.
                    if !a.part.is_null() {
                        got.push(a.part);
                    }
                }
                Err(Error::ShardMoved { .. }) => coverage.absorb(Coverage::moved(child)),
                Err(_) => coverage.absorb(Coverage::missing(child)),
            }
        }
        if got.is_empty() {
            return Ok((Value::Null, coverage));
        }
        let part = if stats {
            let ps: Vec<StatsPart> = got.into_iter().map(serde_json::from_value).collect::<std::result::Result<_, _>>().map_err(|e| Error::Internal { detail: format!("statistics part: {e}") })?;
            json!(StatsPart::merge(&ps)?)
        } else {
            let ps: Vec<CandPart> = got.into_iter().map(serde_json::from_value).collect::<std::result::Result<_, _>>().map_err(|e| Error::Internal { detail: format!("candidates part: {e}") })?;
            json!(parts::merge_parts(search, round, ps)?)
        };
        Ok((part, coverage))
    }

    /// One child's subtree, or the reason it is missing.
    async fn child(&self, body: &NodeBody, child: &FanOut, round: &Round, stats: bool, deadline: Option<Millis>) -> Result<NodeAnswer> {
        let Some(deadline) = deadline else { return Err(Error::UpstreamTimeout { service: "shard".into(), timeout_ms: 0 }) };
        let wait_ms = deadline.saturating_sub((self.now)());
        let call = async move {
            let ask = NodeBody { search: body.search.clone(), tree: child.clone(), deadline_at: deadline, round: Some(round.clone()), stats };
            let routed = Routed { shard: child.shard, buckets: Vec::new(), home: false, ..self.routed.clone() };
            let h = Headers::new();
            for (k, v) in &self.pass {
                h.set(k, v).map_err(w)?;
            }
            h.set(SHARD_HEADER, &serde_json::to_string(&routed).map_err(|e| Error::Internal { detail: e.to_string() })?).map_err(w)?;
            let mut init = RequestInit::new();
            init.with_method(Method::Post).with_headers(h).with_body(Some(json!(ask).to_string().into()));
            let req = Request::new_with_init(&format!("https://shard.local{FANOUT_PATH}"), &init).map_err(w)?;
            (self.calls)();
            self.tree_calls.set(self.tree_calls.get().saturating_add(1));
            let stub = self.env.durable_object(super::MEMORY_BINDING).map_err(w)?.id_from_name(&object_name(&self.routed.tenant, child.shard)).map_err(w)?.get_stub().map_err(w)?;
            let mut resp = stub.fetch_with_request(req).await.map_err(w)?;
            let bytes = resp.bytes().await.map_err(w)?;
            if bytes.len() > limits::SHARD_PART_BYTES_MAX {
                return Err(Error::too_large("a shard's part", bytes.len(), limits::SHARD_PART_BYTES_MAX));
            }
            let v: Value = serde_json::from_slice(&bytes).map_err(|e| Error::Internal { detail: format!("a shard's answer: {e}") })?;
            if resp.status_code() != 200 {
                return Err(super::shard::error_from(resp.status_code(), &v));
            }
            serde_json::from_value::<NodeAnswer>(v).map_err(|e| Error::Internal { detail: format!("a shard's answer: {e}") })
        };
        let timer = Delay::from(Duration::from_millis(wait_ms));
        match select(Box::pin(call), timer).await {
            Either::Left((answer, _)) => answer,
            Either::Right(_) => Err(Error::UpstreamTimeout { service: "shard".into(), timeout_ms: wait_ms }),
        }
    }

    /// `EDGEMEM_TEST_SLOW_SHARD=shard[,shard…]:ms` (local dev mode only):
    /// these shards compute their own parts that much later, for the tests.
    async fn slow(&self) {
        if !self.dev {
            return;
        }
        let Some(spec) = super::env_string(self.env, "EDGEMEM_TEST_SLOW_SHARD") else { return };
        let Some((shards, ms)) = spec.split_once(':') else { return };
        if shards.split(',').any(|x| x.trim().parse::<ShardId>().ok() == Some(self.routed.shard)) {
            let ms = ms.trim().parse::<u64>().unwrap_or(0).min(limits::SHARD_FANOUT_DEADLINE_MS_MAX);
            Delay::from(Duration::from_millis(ms)).await;
        }
    }
}
