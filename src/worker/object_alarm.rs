//! The tenant object's alarm: a directory's split, a tenant's expiry and
//! background work, and what a shard tells home after it.

use worker::{Response, Result as WResult};

use super::{api, now_ms, services, shard, MemoryObject, RequestKeys};
use crate::core::error::Error;

impl MemoryObject {
    /// The Durable Object alarm: a split to run (in a directory), TTL
    /// expiry and background work (in a tenant or shard).
    pub(super) async fn wake(&self) -> WResult<Response> {
        // A tenant's directory: a split to run, or to run again after a crash.
        match shard::split::on_alarm(&self.state, &self.env, &self.split_lock, &self.split_key, now_ms()).await {
            Ok(Some(_)) => return Response::ok("split"),
            Ok(None) => {}
            Err(e) => {
                worker::console_error!("edgemem: a split stopped, retried soon: {e}");
                let at = now_ms() + shard::split::RETRY_MS;
                let _ = self.state.storage().set_alarm(worker::ScheduledTime::new(js_sys::Date::new(&(at as f64).into()))).await;
                return Response::ok("split deferred");
            }
        }
        // Counted as a write to every bucket, from before the fence check:
        // a fence set meanwhile waits for the expiry and extraction it runs.
        let _background = self.in_flight.begin_background();
        // A fenced shard waits for its split's release: no expiry or
        // extraction on buckets that are moving.
        if matches!(shard::fence::fence(&self.state, &self.shard_fence).await, Ok(Some(_))) {
            let at = now_ms() + shard::split::RETRY_MS;
            self.alarm_at.set(Some(at));
            let _ = self.state.storage().set_alarm(worker::ScheduledTime::new(js_sys::Date::new(&(at as f64).into()))).await;
            return Response::ok("fenced");
        }
        let run = async {
            // The key held in memory serves the alarm; without one, only a
            // plaintext tenant opens.
            let cached = self.store.lock().await.as_ref().map(|t| t.store.clone());
            let opened = match cached {
                Some(store) => Ok(Some(store)),
                None => self.store(&RequestKeys::default(), false, None).await,
            };
            let store = match opened {
                Ok(Some(store)) => store,
                // An object whose erasure was interrupted waits for a
                // request naming its stash; that request re-arms the alarm.
                Ok(None) => {
                    self.alarm_at.set(None);
                    self.wake_due.set(true);
                    return Ok(false);
                }
                // A sealed tenant whose key is not in memory: expiry and
                // background work wait for the next keyed request (reads
                // already hide expired sessions). Not an error, which the
                // runtime would retry.
                Err(Error::KeyRequired { .. }) => {
                    self.alarm_at.set(None);
                    self.wake_due.set(true);
                    return Ok(false);
                }
                Err(e) => return Err(e),
            };
            self.alarm_at.set(None);
            // A sharded tenant's home gathers its continuous views' runs;
            // another shard tells home what its extraction changed.
            let me = shard::known_self(&self.state, &self.shard_self).await?;
            let scope = me.as_ref().filter(|m| m.shard == 0).map(|m| shard::views::Scope { tenant: m.tenant.clone(), headers: m.headers(), meter: self.meter.clone() });
            let services = services::WorkerServices { env: &self.env, shards: scope };
            let ltm_before = store.read(|e| e.summary_views().ltm_version()).await?;
            let next = api::wake(&store, &services, now_ms()).await?;
            // Background extraction may have made records of other shards' users.
            Box::pin(self.hand_over(&store, &[])).await;
            if let Some(m) = me.filter(|m| m.shard != 0) {
                self.tell_home(&store, &m.tenant, m.headers(), Some(ltm_before)).await;
                self.relay_feed(&store, m.headers()).await;
            }
            self.schedule(next).await.map(|()| true)
        };
        match run.await {
            Ok(true) => Response::ok("expired"),
            Ok(false) => Response::ok("deferred"),
            Err(e) => Err(worker::Error::RustError(e.to_string())),
        }
    }
}
