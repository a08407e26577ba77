//! Summary views of a sharded tenant (issue 21).
//!
//! A tenant's views, their tasks and stored results live at home (shard
//! 0), like its ledger. A run there gathers every other shard's part of
//! the view ([`GATHER_PATH`], at most [`limits::SHARD_FANOUT_BRANCHING_MAX`]
//! calls at once) and merges it with its own
//! ([`crate::api::summary_views::gather`], `merge_parts`): the stored
//! partitions are what one object holding every record would store.
//!
//! Continuous views refresh a few seconds after long-term memory changes.
//! A change in another shard is told to home ([`CHANGED_PATH`]), which
//! logs it only when it has a continuous view. A shard tells home at most
//! once per [`limits::SUMMARY_VIEW_REFRESH_DELAY_MS`] (home's refresh runs
//! that long after it is told, so what changes meanwhile is in it); told
//! that the tenant has no continuous view, it stops telling for
//! [`limits::SHARD_VIEWS_NONE_TRUST_MS`], unless the front, creating a
//! continuous view, resets it ([`RESET_PATH`]).

use std::cell::Cell;
use std::rc::Rc;

use serde::Deserialize;
use serde_json::{json, Value};

use super::{call, map_for, object_name, Routed};
use crate::api::summary_views::{self as views, GatherPart};
use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::shard::{ShardId, ShardMap};
use crate::core::summary_views::{Group, SummaryView};
use crate::core::time::Millis;
use crate::worker::crypt::DoStore;
use crate::worker::sql::Meter;

/// A shard's part of a summary-view run, asked by home.
pub const GATHER_PATH: &str = "/_shard/summary-gather";
/// Home, told by a shard that its long-term memory changed.
pub const CHANGED_PATH: &str = "/_shard/summary-changed";
/// A shard, told that the tenant now has a continuous view.
pub const RESET_PATH: &str = "/_shard/summary-reset";

/// What a home needs to ask its tenant's other shards.
pub struct Scope {
    pub tenant: String,
    /// Headers every shard gets (namespace, key id, dev mode, keys).
    pub headers: Vec<(String, String)>,
    /// Counts the calls, for the meter.
    pub meter: Rc<Meter>,
}

#[derive(serde::Serialize, Deserialize)]
struct GatherBody {
    view: SummaryView,
    #[serde(default)]
    only: Option<Group>,
    now: Millis,
}

/// Every other shard's part of a run of `view`, under a fresh map when a
/// shard answers that it moved (a split), at most
/// [`limits::SHARD_MOVED_RETRIES_MAX`] times.
pub async fn gather_all(env: &worker::Env, scope: &Scope, view: &SummaryView, only: Option<&Group>, now: Millis) -> Result<Vec<GatherPart>> {
    let body = json!(GatherBody { view: view.clone(), only: only.cloned(), now });
    let mut fresh = false;
    let mut epoch = 0;
    for _ in 0..=limits::SHARD_MOVED_RETRIES_MAX {
        let map = map_for(env, &scope.tenant, None, fresh, now).await?;
        epoch = map.epoch;
        match gather_under(env, scope, &map, &body).await {
            Err(Error::ShardMoved { .. }) => fresh = true,
            other => return other,
        }
    }
    Err(Error::ShardMoved { epoch })
}

async fn gather_under(env: &worker::Env, scope: &Scope, map: &ShardMap, body: &Value) -> Result<Vec<GatherPart>> {
    let others: Vec<ShardId> = map.shards().into_iter().filter(|&s| s != 0).collect();
    let mut out = Vec::new();
    for group in others.chunks(limits::SHARD_FANOUT_BRANCHING_MAX) {
        let mut calls = Vec::with_capacity(group.len());
        for &shard in group {
            // A read: a split's fence lets it through until the flip.
            let routed = Routed { tenant: scope.tenant.clone(), shard, epoch: map.epoch, buckets: Vec::new(), home: false, write: false, all: true };
            let headers = routed.headers(&scope.headers)?;
            scope.meter.count_call();
            calls.push(async move { call(env, &object_name(&scope.tenant, shard), GATHER_PATH, body, &headers).await });
        }
        for answer in futures_util::future::join_all(calls).await {
            let parts: Vec<GatherPart> = serde_json::from_value(answer?).map_err(|e| Error::Internal { detail: format!("a shard's summary part: {e}") })?;
            out.extend(parts);
        }
    }
    Ok(out)
}

/// The object side of [`GATHER_PATH`] and [`CHANGED_PATH`]; `None` for any
/// other path.
pub async fn serve(path: &str, store: &DoStore, body: &[u8], now: Millis) -> Option<Result<Value>> {
    match path {
        GATHER_PATH => Some(async {
            let b: GatherBody = crate::api::parse_json(body)?;
            Ok(json!(views::gather(store, &b.view, b.only.as_ref(), b.now).await?))
        }
        .await),
        CHANGED_PATH => Some(views::source_changed(store, now).await.map(|continuous| json!({ "continuous": continuous }))),
        _ => None,
    }
}

/// When a shard last told home, and until when it trusts home's answer
/// that there is no continuous view.
#[derive(Debug, Clone, Copy, Default)]
pub struct Trust {
    told_at: Option<Millis>,
    none_until: Millis,
}

/// Who tells home: the shard's tenant, and the headers home needs.
pub struct Teller<'a> {
    pub env: &'a worker::Env,
    pub tenant: &'a str,
    pub headers: Vec<(String, String)>,
    pub trust: &'a Cell<Trust>,
    pub meter: &'a Meter,
}

impl Teller<'_> {
    /// Tells home that long-term memory changed here, unless it was told
    /// within the refresh delay or said it has no continuous view. Best
    /// effort: a failure is logged and the next change tells again.
    pub async fn changed(&self, now: Millis) {
        let t = self.trust.get();
        if now < t.none_until || t.told_at.is_some_and(|at| now < at.saturating_add(limits::SUMMARY_VIEW_REFRESH_DELAY_MS)) {
            return;
        }
        let routed = Routed { tenant: self.tenant.to_owned(), shard: 0, epoch: 0, buckets: Vec::new(), home: true, write: true, all: false };
        let Ok(headers) = routed.headers(&self.headers) else { return };
        self.meter.count_call();
        match call(self.env, &object_name(self.tenant, 0), CHANGED_PATH, &json!({}), &headers).await {
            Ok(v) if v["continuous"] == true => self.trust.set(Trust { told_at: Some(now), ..t }),
            Ok(_) => self.trust.set(Trust { none_until: now.saturating_add(limits::SHARD_VIEWS_NONE_TRUST_MS), ..t }),
            Err(e) => worker::console_error!("edgemem: a shard of {} could not tell home of a change: {e}", self.tenant),
        }
    }
}
