//! The tenant object's part in sharding (issue 21): the directory's and a
//! split's internal paths, and what a shard does after it changed (hands
//! records over, asks for a split, tells home of long-term changes).

use serde_json::Value;
use worker::Request;

use super::crypt::DoStore;
use super::{env_string, env_u64, now_ms, shard, MemoryObject};
use crate::api;
use crate::core::error::Error;
use crate::core::limits;

impl MemoryObject {
    /// The directory's paths (its map, a split) and a shard's answer to
    /// whether it holds data: served without opening a tenant store.
    /// `None` for any other path.
    pub(super) async fn serve_directory(&self, path: &str, req: &mut Request) -> Option<Result<Value, Error>> {
        let w = |e: worker::Error| Error::Internal { detail: e.to_string() };
        let served = match path {
            shard::MAP_PATH => {
                let body = req.bytes().await.map_err(w);
                match body {
                    Ok(body) => shard::serve_map(&self.state, &self.env, &self.map_lock, &body).await,
                    Err(e) => Err(e),
                }
            }
            shard::HELD_PATH => shard::serve_held(&self.state, self.meter.clone()).await,
            shard::split::STATUS_PATH => shard::split::status(&self.state).await,
            shard::split::SPLIT_PATH => match req.bytes().await.map_err(w) {
                Ok(body) => {
                    let dev = env_string(&self.env, "EDGEMEM_DEV_MODE").as_deref() == Some("1");
                    let fault = env_string(&self.env, "EDGEMEM_TEST_FAULT").filter(|_| dev);
                    shard::split::serve_split(&self.state, &self.env, &self.split_lock, &self.split_key, &body, now_ms(), fault).await
                }
                Err(e) => Err(e),
            },
            shard::split::ABORT_PATH => match req.bytes().await.map_err(w) {
                Ok(body) => shard::split::serve_abort(&self.state, &self.env, &self.split_lock, &self.split_key, &body, now_ms()).await,
                Err(e) => Err(e),
            },
            _ => return None,
        };
        Some(served)
    }

    /// After a routed write: records made here for another shard's user
    /// go to their owner, a shard past its threshold asks for a split, and
    /// a change to long-term memory (`ltm_before` differs) is told to home.
    pub(super) async fn after_write(&self, store: &DoStore, tenant: &str, keys: &[(String, String)], headers: Vec<(String, String)>, ltm_before: Option<u64>) {
        Box::pin(self.hand_over(store, keys)).await;
        self.maybe_split(store, keys).await;
        self.tell_home(store, tenant, headers.clone(), ltm_before).await;
        self.relay_feed(store, headers).await;
    }

    /// A shard other than home sends home its new change-feed events
    /// ([`shard::feed::Relayer`]).
    pub(super) async fn relay_feed(&self, store: &DoStore, headers: Vec<(String, String)>) {
        let Ok(Some(me)) = shard::known_self(&self.state, &self.shard_self).await else { return };
        if me.shard == 0 {
            return;
        }
        shard::feed::Relayer { env: &self.env, tenant: &me.tenant, shard: me.shard, headers, relaying: &self.feed_relaying, meter: &self.meter }.push(store, now_ms()).await;
    }

    /// The change feed's internal paths: home taking a shard's events, a
    /// shard asked for its events by home. `None` for any other path.
    pub(super) async fn serve_feed(&self, path: &str, store: &DoStore, body: &[u8]) -> Option<Result<Value, Error>> {
        match path {
            shard::feed::RELAY_PATH => Some(shard::feed::serve_relay(store, &self.feed_lock, body, self.hub.subscribers() > 0, now_ms()).await),
            shard::feed::PULL_PATH => Some(shard::feed::serve_pull(store, &self.feed_relaying, body).await),
            _ => None,
        }
    }

    /// Home, before it answers `GET /v1/events`: every other shard's
    /// events are in its feed (`live`: a subscriber opens, so shards push
    /// from now on).
    pub(super) async fn pull_feed(&self, store: &DoStore, routed: &shard::Routed, headers: Vec<(String, String)>, live: bool) {
        let scope = shard::views::Scope { tenant: routed.tenant.clone(), headers, meter: self.meter.clone() };
        shard::feed::pull_all(&self.env, &scope, store, &self.feed_lock, live, now_ms()).await;
    }

    /// Tells home of a change to long-term memory since `ltm_before`
    /// (none: this is home, or not a shard) ([`shard::views::Teller`]).
    pub(super) async fn tell_home(&self, store: &DoStore, tenant: &str, headers: Vec<(String, String)>, ltm_before: Option<u64>) {
        let Some(before) = ltm_before else { return };
        if store.read(|e| e.summary_views().ltm_version()).await.is_ok_and(|now| now != before) {
            shard::views::Teller { env: &self.env, tenant, headers, trust: &self.views_trust, meter: &self.meter }.changed(now_ms()).await;
        }
    }

    /// Hands records made here outside this shard's buckets to their
    /// owners (see [`shard::hand_over`]). Best effort: a failure is logged
    /// and the next write or alarm tries again; the records stay here
    /// meanwhile, never lost.
    pub(super) async fn hand_over(&self, store: &DoStore, keys: &[(String, String)]) {
        let Ok(Some(me)) = shard::known_self(&self.state, &self.shard_self).await else { return };
        let meter = self.meter.clone();
        let count = move || meter.count_call();
        match shard::hand_over(&self.env, store, &me, &self.shard_map, keys, self.hand_over_from.get(), &count).await {
            Ok(next) => self.hand_over_from.set(next),
            Err(e) => worker::console_error!("edgemem: shard {} of {} could not hand records over: {e}", me.shard, me.tenant),
        }
    }

    /// Asks the directory for a split once this shard holds more records
    /// than its threshold (`EDGEMEM_SHARD_SPLIT_RECORDS`, default
    /// [`limits::SHARD_SPLIT_RECORDS`] for int8 vectors,
    /// [`limits::SHARD_SPLIT_RECORDS_F32`] for f32). Best effort, like the
    /// hand-over.
    async fn maybe_split(&self, store: &DoStore, keys: &[(String, String)]) {
        let Ok(Some(me)) = shard::known_self(&self.state, &self.shard_self).await else { return };
        let int8 = super::store_config(&self.env).is_ok_and(|c| c.vector_quantization == crate::store::Quantization::Int8);
        let default = if int8 { limits::SHARD_SPLIT_RECORDS } else { limits::SHARD_SPLIT_RECORDS_F32 } as u64;
        let threshold = env_u64(&self.env, "EDGEMEM_SHARD_SPLIT_RECORDS", default, limits::LTM_RECORDS_MAX as u64).unwrap_or(default) as usize;
        let Ok((records, _)) = api::moves::held(store).await else { return };
        // A sealed tenant's ask carries its key: the directory splits with it.
        shard::steps::maybe_ask(&self.env, &me, records, threshold, super::crypt::key_in(keys), &self.split_asked, now_ms()).await;
    }
}

impl MemoryObject {
    /// A chunk of a sharded import's part, staged here (`?import=ID&seq=N`,
    /// the chunk as the body). `None` for any other path.
    pub(super) async fn serve_import_stage(&self, url: &worker::Url, req: &mut Request) -> Option<Result<Value, Error>> {
        if url.path() != shard::IMPORT_STAGE_PATH {
            return None;
        }
        let staged = async {
            let (id, seq) = staged_import(url)?;
            let chunk = req.bytes().await.map_err(|e| Error::Internal { detail: e.to_string() })?;
            super::sql::staged::put(&self.state, self.meter.clone(), &id, seq, &chunk)?;
            Ok(serde_json::json!({}))
        };
        Some(staged.await)
    }

    /// The body of a step that names a staged import
    /// ([`shard::IMPORT_STAGED_HEADER`], `ID:CHUNKS`): its part, read back
    /// from staging. Any other request's body as it came.
    pub(super) fn staged_body(&self, req: &Request, body: Vec<u8>) -> Result<Vec<u8>, Error> {
        let named = req.headers().get(shard::IMPORT_STAGED_HEADER).map_err(|e| Error::Internal { detail: e.to_string() })?;
        let Some((id, chunks)) = named.as_deref().and_then(|h| h.split_once(':')) else { return Ok(body) };
        let chunks = chunks.parse().map_err(|_| Error::invalid(shard::IMPORT_STAGED_HEADER, "ID:CHUNKS"))?;
        super::sql::staged::get(&self.state, self.meter.clone(), id, chunks)
    }
}

/// `import` and `seq` of a staging call's query.
fn staged_import(url: &worker::Url) -> Result<(String, u64), Error> {
    let q = api::parse_query(url.query().unwrap_or(""));
    let get = |k: &str| q.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    let id = get("import").filter(|id| !id.is_empty() && id.len() <= 64).ok_or_else(|| Error::invalid("import", "an import id of 1 to 64 bytes"))?;
    let seq = get("seq").and_then(|s| s.parse().ok()).ok_or_else(|| Error::invalid("seq", "a chunk number"))?;
    Ok((id, seq))
}
