//! Publishing a tenant's snapshot to the KV binding, for read-mostly
//! replicas (`Memory.openPublished` with a `KVStore`), and publishing again
//! after an erasure so the right to be forgotten reaches the replica.

use worker::{Env, Response};

use super::backend::KvBackend;
use super::crypt::DoStore;
use super::{json_response, SNAPSHOTS_BINDING};
use crate::api;
use crate::core::error::Error;
use crate::store::{Sealed, StoreConfig};

/// Publishes again when a replica of this tenant exists in KV.
pub(super) async fn republish_if_published(env: &Env, store: &DoStore, namespace: &str) -> Result<(), Error> {
    let Ok(kv) = env.kv(SNAPSHOTS_BINDING) else { return Ok(()) };
    let config = StoreConfig { key_prefix: format!("{namespace}/"), ..StoreConfig::default() };
    let backend = KvBackend { kv };
    if crate::store::Backend::get(&backend, &crate::store::head_key(&config.key_prefix)).await?.is_some() {
        publish_to(store, backend, &config).await?;
    }
    Ok(())
}

/// Publishes this tenant's snapshot to the KV binding, for read-mostly
/// replicas (`Memory.openPublished` with a `KVStore`).
pub(super) async fn publish(env: &Env, store: &DoStore, namespace: &str) -> Result<Response, Error> {
    let kv = env
        .kv(SNAPSHOTS_BINDING)
        .map_err(|_| Error::not_found("binding", SNAPSHOTS_BINDING))?;
    let config = StoreConfig { key_prefix: format!("{namespace}/"), ..StoreConfig::default() };
    let stats = publish_to(store, KvBackend { kv }, &config).await?;
    answer(&stats, &config)
}

/// A sharded tenant's replica, published by its front as the export
/// (`first`, then `source`) streams out of its shards, in export form
/// (no object holds the tenant whole): sealed under `key`, the key its
/// request carries, which every shard checked when it answered its head.
pub(super) async fn publish_export(env: &Env, namespace: &str, key: Option<&[u8; 32]>, first: String, source: &mut impl crate::store::ExportSource) -> Result<serde_json::Value, Error> {
    let kv = env.kv(SNAPSHOTS_BINDING).map_err(|_| Error::not_found("binding", SNAPSHOTS_BINDING))?;
    let config = StoreConfig { key_prefix: format!("{namespace}/"), ..StoreConfig::default() };
    let stats = match key {
        None => crate::store::publish_export_sealed(&Sealed::<_, crate::webcrypto::WebCipher>::passthrough(KvBackend { kv }), &config, first, source).await?,
        Some(raw) => crate::store::publish_export_sealed(&Sealed::for_publish(KvBackend { kv }, &config.key_prefix, super::crypt::key(raw).await?).await?, &config, first, source).await?,
    };
    Ok(answer_json(&stats, &config))
}

fn answer(stats: &crate::store::StoreStats, config: &StoreConfig) -> Result<Response, Error> {
    let body = answer_json(stats, config);
    json_response(api::Response { status: 200, body, raw: None, content_type: None }).map_err(|e| Error::Internal { detail: e.to_string() })
}

fn answer_json(stats: &crate::store::StoreStats, config: &StoreConfig) -> serde_json::Value {
    serde_json::json!({ "snapshot_gen": stats.snapshot_gen, "snapshot_bytes": stats.snapshot_bytes, "last_seq": stats.last_seq, "key_prefix": config.key_prefix })
}

/// Publishes to KV: a sealed tenant's replica is sealed under its key.
async fn publish_to(store: &DoStore, kv: KvBackend, config: &StoreConfig) -> Result<crate::store::StoreStats, Error> {
    match store.current_key().await {
        // One publish path (one instantiation): plaintext goes through the
        // adapter's pass-through.
        None => store.publish_sealed(&Sealed::<_, crate::webcrypto::WebCipher>::passthrough(kv), config).await,
        Some(key) => store.publish_sealed(&Sealed::for_publish(kv, &config.key_prefix, key).await?, config).await,
    }
}
