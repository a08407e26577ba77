//! Byte backends over the Workers runtime: Durable Object storage (the
//! durable home of each tenant's op log and snapshots) and Workers KV
//! (eventually consistent: published snapshots only).

use js_sys::{Array, Uint8Array};
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use worker::{kv::KvStore, ListOptions, Storage};

use crate::core::error::{Error, Result};
use crate::store::{Backend, Durability};

fn storage_err(what: &str, e: impl std::fmt::Display) -> Error {
    Error::storage(format!("{what}: {e}"))
}

/// Durable Object storage (SQLite-backed). Values are stored as raw bytes;
/// the runtime's output gate holds replies until writes are durable.
pub struct DoBackend {
    pub storage: Storage,
}

/// Keys per `delete_multiple` call (the runtime's limit).
const DO_DELETE_KEYS_MAX: usize = 128;

impl Backend for DoBackend {
    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        let promise = self.storage.as_raw().get(key).map_err(|e| storage_err("get", format!("{e:?}")))?;
        let v = JsFuture::from(promise).await.map_err(|e| storage_err("get", format!("{e:?}")))?;
        if v.is_undefined() || v.is_null() {
            return Ok(None);
        }
        let bytes = v.dyn_into::<Uint8Array>().map_err(|_| storage_err("get", format!("{key} does not hold bytes")))?;
        Ok(Some(bytes.to_vec()))
    }

    async fn put(&self, key: &str, value: Vec<u8>) -> Result<()> {
        self.storage.put_raw(key, Uint8Array::from(value.as_slice())).await.map_err(|e| storage_err("put", e))
    }

    async fn delete(&self, keys: &[String]) -> Result<()> {
        for batch in keys.chunks(DO_DELETE_KEYS_MAX) {
            self.storage.delete_multiple(batch.to_vec()).await.map_err(|e| storage_err("delete", e))?;
        }
        Ok(())
    }

    async fn list(&self, prefix: &str) -> Result<Vec<String>> {
        let map = self.storage.list_with_options(ListOptions::new().prefix(prefix)).await.map_err(|e| storage_err("list", e))?;
        let keys = Array::from(&map.keys());
        Ok(keys.iter().filter_map(|k| k.as_string()).collect())
    }
}

/// Workers KV: takes published snapshots, refuses to hold an op log.
pub struct KvBackend {
    pub kv: KvStore,
}

/// Upper bound on KV list pages walked by one `list`.
const KV_LIST_PAGES_MAX: usize = 1_000;

impl Backend for KvBackend {
    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        self.kv.get(key).bytes().await.map_err(|e| storage_err("kv get", e))
    }

    async fn put(&self, key: &str, value: Vec<u8>) -> Result<()> {
        self.kv.put_bytes(key, &value).map_err(|e| storage_err("kv put", e))?.execute().await.map_err(|e| storage_err("kv put", e))
    }

    async fn delete(&self, keys: &[String]) -> Result<()> {
        for key in keys {
            self.kv.delete(key).await.map_err(|e| storage_err("kv delete", e))?;
        }
        Ok(())
    }

    async fn list(&self, prefix: &str) -> Result<Vec<String>> {
        let mut keys = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..KV_LIST_PAGES_MAX {
            let mut req = self.kv.list().prefix(prefix.to_owned());
            if let Some(c) = cursor.take() {
                req = req.cursor(c);
            }
            let page = req.execute().await.map_err(|e| storage_err("kv list", e))?;
            keys.extend(page.keys.into_iter().map(|k| k.name));
            if page.list_complete {
                return Ok(keys);
            }
            cursor = page.cursor;
        }
        Err(Error::storage(format!("kv list of {prefix:?} passed {KV_LIST_PAGES_MAX} pages")))
    }

    fn durability(&self) -> Durability {
        Durability::SnapshotsOnly
    }
}
