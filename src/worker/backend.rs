//! Byte backends over the Workers runtime: Durable Object storage (the
//! durable home of each tenant's op log and snapshots) and Workers KV
//! (eventually consistent: published snapshots only).

use js_sys::{Array, Map, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use worker::{kv::KvStore, ListOptions, Storage};

use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::store::{Backend, Durability, KeyRange};

fn storage_err(what: &str, e: impl std::fmt::Display) -> Error {
    Error::storage(format!("{what}: {e}"))
}

/// Durable Object storage (SQLite-backed). Values are stored as raw bytes;
/// the runtime's output gate holds replies until writes are durable.
pub struct DoBackend {
    pub storage: Storage,
}

/// Keys per `delete_multiple` call (the runtime's limit).
const DO_DELETE_KEYS_MAX: usize = limits::DELETE_BATCH_KEYS_MAX;
/// Keys per multi-key `put` (the runtime's limit is the same as a delete's).
const DO_PUT_KEYS_MAX: usize = limits::DELETE_BATCH_KEYS_MAX;

fn do_bytes(key: &str, v: JsValue) -> Result<Vec<u8>> {
    let bytes = v.dyn_into::<Uint8Array>().map_err(|_| storage_err("get", format!("{key} does not hold bytes")))?;
    Ok(bytes.to_vec())
}

impl DoBackend {
    /// One `storage.list()` over `range`. The runtime has no keys-only
    /// listing: the Map it resolves to holds every listed value, which is
    /// why the store lists rarely and always with a small limit.
    async fn list_map(&self, range: &KeyRange<'_>) -> Result<Map> {
        let mut opts = ListOptions::new().prefix(range.prefix).limit(range.limit);
        if !range.start.is_empty() {
            opts = opts.start(range.start);
        }
        if let Some(end) = range.end {
            opts = opts.end(end);
        }
        self.storage.list_with_options(opts).await.map_err(|e| storage_err("list", e))
    }
}

impl Backend for DoBackend {
    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        let promise = self.storage.as_raw().get(key).map_err(|e| storage_err("get", format!("{e:?}")))?;
        let v = JsFuture::from(promise).await.map_err(|e| storage_err("get", format!("{e:?}")))?;
        if v.is_undefined() || v.is_null() {
            return Ok(None);
        }
        do_bytes(key, v).map(Some)
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

    async fn list(&self, range: KeyRange<'_>) -> Result<Vec<String>> {
        let map = self.list_map(&range).await?;
        let keys = Array::from(&map.keys());
        Ok(keys.iter().filter_map(|k| k.as_string()).collect())
    }

    /// SQLite keeps a deleted row's bytes in free pages and in its
    /// write-ahead log until they happen to be reused; workerd allows
    /// neither `secure_delete` nor `VACUUM`.
    fn deletes_leave_bytes(&self) -> bool {
        true
    }

    /// `deleteAll()` drops the object's SQLite database (its files go), and
    /// the puts issued in the same turn, before any await, commit with it
    /// under the output gate: no reply leaves before both are durable.
    async fn replace_all(&self, entries: Vec<(String, Vec<u8>)>) -> Result<()> {
        let raw = self.storage.as_raw();
        let err = |what: &str, e: JsValue| storage_err(what, format!("{e:?}"));
        let mut pending = vec![raw.delete_all().map_err(|e| err("deleteAll", e))?];
        for batch in entries.chunks(DO_PUT_KEYS_MAX) {
            let obj = js_sys::Object::new();
            for (key, value) in batch {
                js_sys::Reflect::set(&obj, &JsValue::from_str(key), &Uint8Array::from(value.as_slice())).map_err(|e| err("put", e))?;
            }
            pending.push(raw.put_multiple(obj.into()).map_err(|e| err("put", e))?);
        }
        for p in pending {
            JsFuture::from(p).await.map_err(|e| err("replace", e))?;
        }
        Ok(())
    }

    /// The listing already carries the values: recovery reads each log
    /// record once, with no `get` after it.
    async fn get_range(&self, range: KeyRange<'_>) -> Result<Vec<(String, Vec<u8>)>> {
        let map = self.list_map(&range).await?;
        let mut entries = Vec::with_capacity(map.size() as usize);
        for pair in Array::from(&map.entries()).iter() {
            let pair = Array::from(&pair);
            let Some(key) = pair.get(0).as_string() else { continue };
            let value = do_bytes(&key, pair.get(1))?;
            entries.push((key, value));
        }
        Ok(entries)
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

    /// KV lists keys only, by prefix, and cannot seek: the range is applied
    /// to what the pages return. Pages come in key order, so the walk stops
    /// once it holds `limit` keys in range.
    async fn list(&self, range: KeyRange<'_>) -> Result<Vec<String>> {
        let mut keys = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..KV_LIST_PAGES_MAX {
            let mut req = self.kv.list().prefix(range.prefix.to_owned());
            if let Some(c) = cursor.take() {
                req = req.cursor(c);
            }
            let page = req.execute().await.map_err(|e| storage_err("kv list", e))?;
            keys.extend(page.keys.into_iter().map(|k| k.name).filter(|k| range.contains(k)));
            if page.list_complete || keys.len() >= range.limit {
                keys.sort_unstable();
                keys.truncate(range.limit);
                return Ok(keys);
            }
            cursor = page.cursor;
        }
        Err(Error::storage(format!("kv list of {:?} passed {KV_LIST_PAGES_MAX} pages", range.prefix)))
    }

    fn durability(&self) -> Durability {
        Durability::SnapshotsOnly
    }
}
