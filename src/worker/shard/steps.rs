//! A shard's side of a split (issue 21): the steps the directory's driver
//! ([`super::split`]) calls at the source and the new shard, and a shard's
//! ask for a split once it passes its threshold.

use std::cell::RefCell;

use serde::Deserialize;
use serde_json::{json, Value};
use worker::{Env, State};

use super::fence::{Fence, InFlight};
use super::split::{MOVE_PATH, SPLIT_PATH};
use super::{call, directory_name};
use crate::api;
use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::shard::{Bucket, ShardMap};
use crate::core::time::Millis;

/// What a shard keeps in memory that its steps of a split read and change.
pub struct Held<'a> {
    /// Its fence, once read.
    pub fence: &'a RefCell<Option<Option<Fence>>>,
    /// The writes it admitted and has not answered.
    pub writes: &'a InFlight,
    /// Its copy of the tenant's map.
    pub map: &'a RefCell<Option<ShardMap>>,
}

/// A shard's side of [`MOVE_PATH`]: `digest`, `items`, `import`,
/// `fence`, `release`, an abort's `drop` and `unfence`, and an edit's
/// `hand-over` of a record to its new user's shard.
pub async fn serve_move(state: &State, store: &super::super::crypt::DoStore, held: Held<'_>, step: &str, body: &[u8], now: Millis) -> Result<Value> {
    let Held { fence: fence_cell, writes, map: map_cell } = held;
    match step {
        "digest" => api::moves::digest(store, &api::parse_json(body)?).await,
        "items" => api::moves::items(store, &api::parse_json(body)?).await,
        "import" => api::moves::import(store, api::parse_json(body)?, now).await,
        "hand-over" => api::moves::hand_over(store, api::parse_json(body)?, now).await,
        "held" => {
            #[derive(Deserialize)]
            struct Held {
                #[serde(default)]
                ids: bool,
            }
            let h: Held = api::parse_json(body)?;
            let (records, sessions) = api::moves::held(store).await?;
            let ids = if h.ids { Some(api::moves::record_ids(store, limits::SHARD_ADMIN_IDS_MAX).await?) } else { None };
            Ok(json!({ "records": records, "sessions": sessions, "ids": ids, "fenced": super::fence::fence(state, fence_cell).await?.is_some() }))
        }
        "fence" => {
            let f: Fence = api::parse_json(body)?;
            Ok(json!({ "fenced": super::fence::set(state, fence_cell, writes, f).await? }))
        }
        // An aborted split's: the new shard drops what it was sent; the
        // source lifts the move's fence.
        "drop" => {
            #[derive(Deserialize)]
            struct Drop {
                buckets: Vec<Bucket>,
            }
            let d: Drop = api::parse_json(body)?;
            Ok(json!({ "collected": api::moves::collect(store, &d.buckets, now).await? }))
        }
        "unfence" => {
            #[derive(Deserialize)]
            struct Unfence {
                move_id: u64,
            }
            let u: Unfence = api::parse_json(body)?;
            Ok(json!({ "lifted": super::fence::lift(state, fence_cell, u.move_id).await? }))
        }
        "release" => {
            #[derive(Deserialize)]
            struct Release {
                move_id: u64,
                buckets: Vec<Bucket>,
                map: ShardMap,
            }
            let r: Release = api::parse_json(body)?;
            r.map.validate()?;
            // The new map first: from here this shard refuses the moved
            // buckets by the map, with or without its fence.
            *map_cell.borrow_mut() = Some(r.map);
            let collected = api::moves::collect(store, &r.buckets, now).await?;
            super::fence::lift(state, fence_cell, r.move_id).await?;
            Ok(json!({ "collected": collected }))
        }
        _ => Err(Error::not_found("route", format!("{MOVE_PATH}{step}"))),
    }
}

/// Asks the directory to split this shard once it holds more than its
/// threshold of records (at most once a minute per object).
pub async fn maybe_ask(env: &Env, me: &super::ShardSelf, records: usize, threshold: usize, key: Option<&str>, asked: &std::cell::Cell<Millis>, now: Millis) {
    if records <= threshold || now.saturating_sub(asked.get()) < 60_000 {
        return;
    }
    asked.set(now);
    let mut headers = Vec::new();
    if let Some(ns) = &me.namespace {
        headers.push((super::super::NAMESPACE_HEADER.to_owned(), ns.clone()));
    }
    if me.dev {
        headers.push((super::super::DEV_HEADER.to_owned(), "1".to_owned()));
    }
    let body = json!({ "tenant": me.tenant, "shard": me.shard, "reason": "records", "headers": headers, "key": key });
    if let Err(e) = call(env, &directory_name(&me.tenant), SPLIT_PATH, &body, &[]).await {
        worker::console_error!("edgemem: shard {} of {} could not ask for a split: {e}", me.shard, me.tenant);
    }
}
