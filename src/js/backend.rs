//! A [`Backend`] over a JS object with async `get/put/delete/list`.
//!
//! The protocol every JS store follows (IndexedDB, Durable Object storage,
//! KV, or the user's own object):
//!
//! * `get(key) -> Promise<Uint8Array | ArrayBuffer | undefined | null>`
//! * `put(key, Uint8Array) -> Promise<void>`, resolving only once durable
//! * `delete(key) -> Promise<unknown>`
//! * `list(prefix, { start, end, limit }) -> Promise<string[]>`: the keys
//!   under `prefix`; a store may use the range (`start` inclusive, `end`
//!   exclusive or absent, the `limit` smallest keys) to list less, and one
//!   that ignores it is still correct, as the range is applied here too
//! * optional `getRange(prefix, { start, end, limit }) ->
//!   Promise<Map<string, bytes> | [string, bytes][]>`: the same range with
//!   values. Stores whose listing reads values anyway (Durable Object
//!   storage) provide it, so recovery reads each log record once; without
//!   it, recovery lists keys and gets each
//! * optional `durability: "snapshots-only"` for eventually consistent stores

use js_sys::{Array, ArrayBuffer, Function, Map, Object, Promise, Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use super::to_js_error;
use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::store::{get_each, Backend, Durability, KeyRange, MemoryBackend};

/// Keys a `list` or `getRange` may return (a store may ignore the limit it is
/// given): every log record recovery may replay plus every snapshot chunk,
/// with slack for stale generations.
const LIST_KEYS_MAX: usize = (limits::RECOVERY_LOG_RECORDS_MAX as usize) + 2 * limits::SNAPSHOT_CHUNKS_MAX;

/// The store a `MemoryCore` runs on.
pub enum AnyBackend {
    Memory(MemoryBackend),
    Js(JsBackend),
}

impl AnyBackend {
    /// `undefined`/`null` means a volatile in-memory store.
    pub fn from_js(store: JsValue) -> std::result::Result<AnyBackend, JsValue> {
        if store.is_undefined() || store.is_null() {
            return Ok(AnyBackend::Memory(MemoryBackend::new()));
        }
        JsBackend::new(store).map(AnyBackend::Js).map_err(|e| to_js_error(&e))
    }
}

impl Backend for AnyBackend {
    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        match self {
            AnyBackend::Memory(b) => b.get(key).await,
            AnyBackend::Js(b) => b.get(key).await,
        }
    }
    async fn put(&self, key: &str, value: Vec<u8>) -> Result<()> {
        match self {
            AnyBackend::Memory(b) => b.put(key, value).await,
            AnyBackend::Js(b) => b.put(key, value).await,
        }
    }
    async fn delete(&self, keys: &[String]) -> Result<()> {
        match self {
            AnyBackend::Memory(b) => b.delete(keys).await,
            AnyBackend::Js(b) => b.delete(keys).await,
        }
    }
    async fn list(&self, range: KeyRange<'_>) -> Result<Vec<String>> {
        match self {
            AnyBackend::Memory(b) => b.list(range).await,
            AnyBackend::Js(b) => b.list(range).await,
        }
    }
    async fn get_range(&self, range: KeyRange<'_>) -> Result<Vec<(String, Vec<u8>)>> {
        match self {
            AnyBackend::Memory(b) => b.get_range(range).await,
            AnyBackend::Js(b) => b.get_range(range).await,
        }
    }
    fn durability(&self) -> Durability {
        match self {
            AnyBackend::Memory(b) => b.durability(),
            AnyBackend::Js(b) => b.durability(),
        }
    }
}

/// A user-supplied JS store.
pub struct JsBackend {
    this: JsValue,
    get: Function,
    put: Function,
    delete: Function,
    list: Function,
    get_range: Option<Function>,
    durability: Durability,
}

fn method(obj: &JsValue, name: &str) -> Result<Function> {
    Reflect::get(obj, &name.into())
        .ok()
        .and_then(|f| f.dyn_into::<Function>().ok())
        .ok_or_else(|| Error::invalid("store", format!("must have an async {name}() method")))
}

fn js_detail(v: &JsValue) -> String {
    v.dyn_ref::<js_sys::Error>().map(|e| String::from(e.message())).or_else(|| v.as_string()).unwrap_or_else(|| format!("{v:?}"))
}

/// A value as bytes: a `Uint8Array` or an `ArrayBuffer`.
fn bytes_of(v: &JsValue) -> Option<Vec<u8>> {
    if let Some(bytes) = v.dyn_ref::<Uint8Array>() {
        return Some(bytes.to_vec());
    }
    if v.is_instance_of::<ArrayBuffer>() {
        return Some(Uint8Array::new(v).to_vec());
    }
    None
}

/// The range as the options object `list` and `getRange` receive.
fn range_options(range: &KeyRange<'_>) -> JsValue {
    let opts = Object::new();
    // Setting a fresh plain object's own data properties cannot fail.
    let _ = Reflect::set(&opts, &"start".into(), &range.start.into());
    if let Some(end) = range.end {
        let _ = Reflect::set(&opts, &"end".into(), &end.into());
    }
    let _ = Reflect::set(&opts, &"limit".into(), &(range.limit as f64).into());
    opts.into()
}

/// Applies `range` to what a store returned, whether or not it did so
/// itself: in range, ascending, at most `range.limit`.
fn clip<T>(mut items: Vec<(String, T)>, range: &KeyRange<'_>) -> Vec<(String, T)> {
    items.retain(|(k, _)| range.contains(k));
    items.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    items.truncate(range.limit);
    items
}

async fn settle(result: std::result::Result<JsValue, JsValue>, what: &str) -> Result<JsValue> {
    let value = result.map_err(|e| Error::storage(format!("{what} threw: {}", js_detail(&e))))?;
    JsFuture::from(Promise::resolve(&value)).await.map_err(|e| Error::storage(format!("{what} rejected: {}", js_detail(&e))))
}

impl JsBackend {
    /// Wraps a store object, mapping errors to JS errors.
    pub fn new_any(this: JsValue) -> std::result::Result<JsBackend, JsValue> {
        JsBackend::new(this).map_err(|e| to_js_error(&e))
    }

    fn new(this: JsValue) -> Result<JsBackend> {
        if !this.is_object() {
            return Err(Error::invalid("store", "must be an object with async get/put/delete/list"));
        }
        let durability = match Reflect::get(&this, &"durability".into()).ok().and_then(|d| d.as_string()).as_deref() {
            Some("snapshots-only") => Durability::SnapshotsOnly,
            _ => Durability::Strong,
        };
        Ok(JsBackend {
            get: method(&this, "get")?,
            put: method(&this, "put")?,
            delete: method(&this, "delete")?,
            list: method(&this, "list")?,
            get_range: method(&this, "getRange").ok(),
            this,
            durability,
        })
    }
}

impl Backend for JsBackend {
    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        let v = settle(self.get.call1(&self.this, &key.into()), "store.get").await?;
        if v.is_undefined() || v.is_null() {
            return Ok(None);
        }
        bytes_of(&v).map(Some).ok_or_else(|| Error::storage(format!("store.get({key:?}) returned something other than bytes")))
    }

    async fn put(&self, key: &str, value: Vec<u8>) -> Result<()> {
        let bytes = Uint8Array::from(value.as_slice());
        settle(self.put.call2(&self.this, &key.into(), &bytes), "store.put").await.map(|_| ())
    }

    async fn delete(&self, keys: &[String]) -> Result<()> {
        for key in keys {
            settle(self.delete.call1(&self.this, &key.into()), "store.delete").await?;
        }
        Ok(())
    }

    async fn list(&self, range: KeyRange<'_>) -> Result<Vec<String>> {
        let v = settle(self.list.call2(&self.this, &range.prefix.into(), &range_options(&range)), "store.list").await?;
        if !Array::is_array(&v) {
            return Err(Error::storage("store.list must resolve to an array of keys"));
        }
        let arr = Array::from(&v);
        if arr.length() as usize > LIST_KEYS_MAX {
            return Err(Error::storage(format!("store.list returned {} keys, past the limit of {LIST_KEYS_MAX}", arr.length())));
        }
        let mut keys = Vec::with_capacity(arr.length() as usize);
        for k in arr.iter() {
            let k = k.as_string().ok_or_else(|| Error::storage("store.list returned a non-string key"))?;
            keys.push((k, ()));
        }
        Ok(clip(keys, &range).into_iter().map(|(k, ())| k).collect())
    }

    async fn get_range(&self, range: KeyRange<'_>) -> Result<Vec<(String, Vec<u8>)>> {
        let Some(get_range) = &self.get_range else { return get_each(self, range).await };
        let v = settle(get_range.call2(&self.this, &range.prefix.into(), &range_options(&range)), "store.getRange").await?;
        // A Map (what Durable Object storage's list gives) or [key, value] pairs.
        let pairs = match v.dyn_ref::<Map>() {
            Some(map) => Array::from(&map.entries()),
            None if Array::is_array(&v) => Array::from(&v),
            None => return Err(Error::storage("store.getRange must resolve to a Map or an array of [key, bytes] pairs")),
        };
        if pairs.length() as usize > LIST_KEYS_MAX {
            return Err(Error::storage(format!("store.getRange returned {} entries, past the limit of {LIST_KEYS_MAX}", pairs.length())));
        }
        let mut entries = Vec::with_capacity(pairs.length() as usize);
        for pair in pairs.iter() {
            let pair = Array::from(&pair);
            let key = pair.get(0).as_string().ok_or_else(|| Error::storage("store.getRange returned a non-string key"))?;
            if !range.contains(&key) {
                continue; // the store ignored the range: copy only what was asked for
            }
            let value = bytes_of(&pair.get(1)).ok_or_else(|| Error::storage(format!("store.getRange returned something other than bytes for {key:?}")))?;
            entries.push((key, value));
        }
        Ok(clip(entries, &range))
    }

    fn durability(&self) -> Durability {
        self.durability
    }
}
