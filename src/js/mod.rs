//! The JS API: thin wasm-bindgen newtypes over the core, the store and the
//! API functions. The npm package's `index.js` wraps [`MemoryCore`] in the
//! idiomatic `Memory` class; structured values cross the boundary as JSON
//! text (one parse on each side, and the exact same validation as HTTP).

mod backend;
mod crypt;
mod history;
mod ledger;
mod privacy;
mod door;
mod embedder;
mod tokenizer;
mod vector;

use std::rc::Rc;

use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use crate::api;
use crate::core::error::Error;
use crate::core::limits;
use crate::core::time::{Millis, MILLIS_MAX};
use crate::store::{Sealed, Store, StoreConfig};
use crate::webcrypto::WebCipher;
use backend::AnyBackend;

/// The npm package's store: sealed under the tenant's key when one is given
/// (a pass-through otherwise).
pub(crate) type JsStore = Store<Sealed<AnyBackend, WebCipher>>;

/// Turns an [`Error`] into a JS `Error` named `EdgememError` with `.code`.
pub(crate) fn to_js_error(e: &Error) -> JsValue {
    let err = js_sys::Error::new(&e.to_string());
    err.set_name("EdgememError");
    let _ = Reflect::set(&err, &"code".into(), &e.code().into());
    err.into()
}

fn random_bits() -> [u8; 10] {
    let mut r = [0u8; 10];
    // getrandom on wasm32 calls crypto.getRandomValues, present in Node 20,
    // browsers and workerd. Should it ever fail, fall back to the clock:
    // ids stay unique enough within one session, never a panic.
    if getrandom::getrandom(&mut r).is_err() {
        let t = js_sys::Date::now().to_bits().to_le_bytes();
        r[..8].copy_from_slice(&t);
    }
    r
}

fn json_text(v: &serde_json::Value) -> Result<JsValue, JsValue> {
    serde_json::to_string(v).map(JsValue::from).map_err(|e| to_js_error(&Error::Internal { detail: e.to_string() }))
}

fn check_body(path: &str, body: &str) -> Result<(), JsValue> {
    let cap = api::body_bytes_max(path, limits::REQUEST_BODY_BYTES_CEILING);
    if body.len() > cap {
        return Err(to_js_error(&Error::too_large("argument", body.len(), cap)));
    }
    Ok(())
}

struct Inner {
    store: JsStore,
    namespace: Option<String>,
    clock: Option<Function>,
    /// The service-state cache's upstream: `(agentId, service) => Promise<string>`.
    fetcher: std::cell::RefCell<Option<Function>>,
    /// Whether the offline embedder is the hashed one even when the static
    /// embedder is loaded (`Memory.open({ offlineEmbedder: "hash" })`).
    hash_only: std::cell::Cell<bool>,
}

impl Inner {
    /// The host services of one call.
    fn services(&self, summarizer: Option<Function>, embedder: Option<Function>, extractor: Option<Function>) -> history::JsServices {
        let static_embedder = if self.hash_only.get() { None } else { embedder::loaded() };
        history::JsServices { summarizer, embedder, fetcher: self.fetcher.borrow().clone(), extractor, static_embedder }
    }
}

impl Inner {
    fn now(&self) -> Result<Millis, JsValue> {
        let ms = match &self.clock {
            None => js_sys::Date::now(),
            Some(f) => f.call0(&JsValue::NULL)?.as_f64().unwrap_or(f64::NAN),
        };
        if !ms.is_finite() || ms < 0.0 || ms > MILLIS_MAX as f64 {
            return Err(to_js_error(&Error::invalid("clock", "must return milliseconds since the epoch")));
        }
        Ok(ms as Millis)
    }
}

/// Options accepted by `MemoryCore.open`, as JSON.
#[derive(serde::Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct OpenOptions {
    #[serde(default)]
    namespace: Option<String>,
    #[serde(default)]
    snapshot_every_ops: Option<u64>,
    #[serde(default)]
    chunk_bytes: Option<usize>,
    #[serde(default)]
    key_prefix: Option<String>,
    /// The privacy secret (at least [`limits::PSEUDONYM_SECRET_BYTES_MIN`]
    /// bytes): personal data becomes keyed pseudonyms and user ids are
    /// sealed. Held in memory only.
    #[serde(default)]
    privacy_key: Option<String>,
}

/// A tenant's memory, durable on the store it was opened with.
#[wasm_bindgen]
pub struct MemoryCore {
    inner: Rc<Inner>,
}

/// The writes that take a JSON body and fill ids and times from a `Ctx`.
#[derive(Clone, Copy)]
enum Write {
    Put,
    GetOrCreate,
    Append,
}

impl MemoryCore {
    fn write(&self, kind: Write, session_id: String, body_json: String) -> Promise {
        promise(&self.inner, move |inner| async move {
            check_body("", &body_json)?;
            let mut rand = random_bits;
            // No hooks, but the encodings JS has loaded (an append may count).
            let services = inner.services(None, None, None);
            let mut ctx = door::ctx(&inner, &mut rand, &services)?;
            let (store, id, body) = (&inner.store, session_id.as_str(), body_json.as_bytes());
            let v = match kind {
                Write::Put => api::put_session(store, &mut ctx, id, body).await,
                Write::GetOrCreate => api::get_or_create_session(store, &mut ctx, id, body).await,
                Write::Append => api::append_messages(store, &mut ctx, id, body).await,
            };
            json_text(&v.map_err(|e| to_js_error(&e))?)
        })
    }

    /// `open` for Rust callers (the wasm tests): the same steps, no Promise.
    pub async fn open_async(store: JsValue, options_json: String, clock: JsValue, crypt: JsValue) -> Result<MemoryCore, JsValue> {
        check_body("", &options_json)?;
        let opts: OpenOptions = api::parse_json(options_json.as_bytes()).map_err(|e| to_js_error(&e))?;
        if let Some(ns) = &opts.namespace {
            crate::core::session::validate_id("namespace", ns).map_err(|e| to_js_error(&e))?;
        }
        let defaults = StoreConfig::default();
        let config = StoreConfig {
            snapshot_every_ops: opts.snapshot_every_ops.unwrap_or(defaults.snapshot_every_ops),
            chunk_bytes: opts.chunk_bytes.unwrap_or(defaults.chunk_bytes),
            key_prefix: opts.key_prefix.unwrap_or_default(),
            ..defaults
        };
        let backend = AnyBackend::from_js(store)?;
        let clock = clock_from(clock)?;
        let key = match &opts.privacy_key {
            None => None,
            Some(secret) => Some(crate::core::privacy::PseudonymKey::derive(secret.as_bytes(), opts.namespace.as_deref().unwrap_or("default")).map_err(|e| to_js_error(&e))?),
        };
        let keys = crypt::keys(&crypt, &backend, &config.key_prefix).await?;
        let store = async { Store::open_sealed(Sealed::open(backend, &config.key_prefix.clone(), keys).await?, config).await }.await.map_err(|e| to_js_error(&e))?;
        store.set_privacy_key(key);
        Ok(MemoryCore { inner: Rc::new(Inner { store, namespace: opts.namespace, clock, fetcher: Default::default(), hash_only: Default::default() }) })
    }
}

/// Runs an async body against a shared `Inner`, mapping errors to JS errors.
fn promise<F, Fut>(inner: &Rc<Inner>, f: F) -> Promise
where
    F: FnOnce(Rc<Inner>) -> Fut,
    Fut: std::future::Future<Output = Result<JsValue, JsValue>> + 'static,
{
    future_to_promise(f(inner.clone()))
}

#[wasm_bindgen]
impl MemoryCore {
    /// Sets the change-feed listener: `fn(eventJson)` is called once per
    /// committed write, after its log record is durable, with the event as
    /// JSON text; `null` clears it. It runs while the store is locked, so
    /// the JS side queues and delivers later (a listener must not call back
    /// into this memory synchronously).
    /// Sets (or clears) the service-state cache's upstream: `(agentId,
    /// service) => Promise<string>` resolving to the state as JSON text. The
    /// npm wrapper applies the timeout and types what it throws
    /// (`code: "upstream_error" | "upstream_timeout"`, `status`).
    #[wasm_bindgen(js_name = setServiceFetcher)]
    pub fn set_service_fetcher(&self, fetcher: Option<js_sys::Function>) {
        *self.inner.fetcher.borrow_mut() = fetcher;
    }

    /// `"static"` (the default: the distilled embedder once its asset is
    /// loaded, else the hashed one) or `"hash"` (always the hashed one).
    #[wasm_bindgen(js_name = setOfflineEmbedder)]
    pub fn set_offline_embedder(&self, kind: &str) -> Result<(), JsValue> {
        match kind {
            "static" => self.inner.hash_only.set(false),
            "hash" => self.inner.hash_only.set(true),
            other => return Err(to_js_error(&Error::invalid("offlineEmbedder", format!("{other:?} is not \"static\" or \"hash\"")))),
        }
        Ok(())
    }

    #[wasm_bindgen(js_name = setFeedListener)]
    pub fn set_feed_listener(&self, listener: Option<js_sys::Function>) {
        let listener = listener.map(|f| -> crate::store::Listener {
            Box::new(move |e| {
                if let Ok(text) = serde_json::to_string(e) {
                    // A throwing listener must not fail the write that is already durable.
                    let _ = f.call1(&JsValue::NULL, &JsValue::from_str(&text));
                }
            })
        });
        self.inner.store.set_listener(listener);
    }

    /// Opens (recovering if needed) a memory on `store`: `undefined` for a
    /// volatile in-memory store, or any object with async
    /// `get/put/delete/list`. `options_json` holds `namespace`,
    /// `snapshot_every_ops`, `chunk_bytes` and `key_prefix`. `clock` is an
    /// optional `() => milliseconds` (tests drive TTLs with it).
    /// `crypt`: `undefined`, or the keys as `[{keyId, key: CryptoKey} |
    /// {keyId, passphrase}]`, the one to seal under first (more only to
    /// finish an interrupted rotation).
    pub fn open(store: JsValue, options_json: String, clock: JsValue, crypt: JsValue) -> Promise {
        future_to_promise(async move { MemoryCore::open_async(store, options_json, clock, crypt).await.map(JsValue::from) })
    }

    /// Re-encrypts every live value under a new key (`{keyId, key}` or
    /// `{keyId, passphrase}`), or encrypts a plaintext store: resolves to
    /// `{"key_id", "leftovers"}` as JSON text once the rotation is durable.
    #[wasm_bindgen(js_name = rotateKey)]
    pub fn rotate_key(&self, entry: JsValue) -> Promise {
        promise(&self.inner, |inner| async move {
            let key = crypt::new_key(&entry).await?;
            let r = inner.store.rotate_key(key).await.map_err(|e| to_js_error(&e))?;
            json_text(&serde_json::json!({ "key_id": r.key_id, "leftovers": r.leftovers }))
        })
    }

    /// The id of the key the store is sealed under, or `undefined`.
    #[wasm_bindgen(js_name = keyId)]
    pub fn key_id(&self) -> Promise {
        promise(&self.inner, |inner| async move { Ok(inner.store.key_id().await.map(JsValue::from).unwrap_or(JsValue::UNDEFINED)) })
    }

    /// `PUT` semantics of AMS: creates or replaces a session. Resolves to the
    /// stored session as JSON text once it is durable.
    #[wasm_bindgen(js_name = putSession)]
    pub fn put_session(&self, session_id: String, body_json: String) -> Promise {
        self.write(Write::Put, session_id, body_json)
    }

    /// Returns the live session or creates it from `body_json` (PUT shape):
    /// resolves to `{"created", "session"}` as JSON text.
    #[wasm_bindgen(js_name = getOrCreateSession)]
    pub fn get_or_create_session(&self, session_id: String, body_json: String) -> Promise {
        self.write(Write::GetOrCreate, session_id, body_json)
    }

    /// Appends `{"messages": [...]}` to an existing session.
    #[wasm_bindgen(js_name = appendMessages)]
    pub fn append_messages(&self, session_id: String, body_json: String) -> Promise {
        self.write(Write::Append, session_id, body_json)
    }

    /// The session as JSON text, or `null` when missing or expired.
    #[wasm_bindgen(js_name = getSession)]
    pub fn get_session(&self, session_id: String, user_id: Option<String>, recent_messages_limit: Option<u32>) -> Promise {
        promise(&self.inner, |inner| async move {
            let recent = recent_messages_limit.map(|n| n as usize);
            let v = api::get_session(&inner.store, inner.now()?, &session_id, user_id.as_deref(), recent).await.map_err(|e| to_js_error(&e))?;
            match v {
                Some(v) => json_text(&v),
                None => Ok(JsValue::NULL),
            }
        })
    }

    /// Deletes a session; resolves to whether it existed.
    #[wasm_bindgen(js_name = deleteSession)]
    pub fn delete_session(&self, session_id: String) -> Promise {
        promise(&self.inner, |inner| async move {
            let existed = api::delete_session(&inner.store, inner.now()?, &session_id).await.map_err(|e| to_js_error(&e))?;
            Ok(JsValue::from_bool(existed))
        })
    }

    /// `{"sessions", "total"}` as JSON text.
    #[wasm_bindgen(js_name = listSessions)]
    pub fn list_sessions(&self, offset: u32, limit: u32, user_id: Option<String>) -> Promise {
        promise(&self.inner, |inner| async move {
            let v = api::list_sessions(&inner.store, inner.now()?, user_id.as_deref(), offset as usize, limit as usize)
                .await
                .map_err(|e| to_js_error(&e))?;
            json_text(&v)
        })
    }

    /// Removes sessions whose TTL ran out; resolves to the next expiry in
    /// milliseconds, or `null`.
    pub fn expire(&self) -> Promise {
        promise(&self.inner, |inner| async move {
            let next = api::expire(&inner.store, inner.now()?).await.map_err(|e| to_js_error(&e))?;
            Ok(next.map_or(JsValue::NULL, |ms| JsValue::from_f64(ms as f64)))
        })
    }

    /// Catches up with writes another process (a second tab) made to the
    /// same store; resolves to the JSON text of the events picked up.
    #[wasm_bindgen(js_name = catchUp)]
    pub fn catch_up(&self) -> Promise {
        promise(&self.inner, |inner| async move {
            let events = inner.store.catch_up().await.map_err(|e| to_js_error(&e))?;
            json_text(&serde_json::to_value(&events).map_err(|e| to_js_error(&Error::Internal { detail: e.to_string() }))?)
        })
    }

    /// Writes a snapshot now and truncates the log; resolves to the stats.
    pub fn snapshot(&self) -> Promise {
        promise(&self.inner, |inner| async move {
            let s = inner.store.snapshot().await.map_err(|e| to_js_error(&e))?;
            stats_json(s)
        })
    }

    /// Publishes a snapshot to `target` (typically a Workers KV store, which
    /// may hold snapshots but never the op log) under `key_prefix`.
    #[wasm_bindgen(js_name = publishSnapshot)]
    pub fn publish_snapshot(&self, target: JsValue, key_prefix: String) -> Promise {
        promise(&self.inner, |inner| async move {
            let target = backend::JsBackend::new_any(target)?;
            let config = StoreConfig { key_prefix, ..StoreConfig::default() };
            // An encrypted memory publishes a replica sealed under its key.
            // One publish path (one instantiation): plaintext goes through
            // the adapter's pass-through.
            let s = match inner.store.current_key().await {
                None => inner.store.publish_sealed(&Sealed::<_, WebCipher>::passthrough(target), &config).await,
                Some(key) => match Sealed::for_publish(target, &config.key_prefix, key).await {
                    Ok(sealed) => inner.store.publish_sealed(&sealed, &config).await,
                    Err(e) => Err(e),
                },
            };
            stats_json(s.map_err(|e| to_js_error(&e))?)
        })
    }

    /// Opens a volatile replica from a snapshot published on `source`.
    #[wasm_bindgen(js_name = openPublished)]
    pub fn open_published(source: JsValue, key_prefix: String, namespace: Option<String>, clock: JsValue, crypt: JsValue) -> Promise {
        future_to_promise(async move {
            let source = AnyBackend::Js(backend::JsBackend::new_any(source)?);
            let keys = crypt::keys(&crypt, &source, &key_prefix).await?;
            let replica = async { Store::open_published(&Sealed::open(source, &key_prefix, keys).await?, &key_prefix).await }.await.map_err(|e| to_js_error(&e))?;
            let (engine_store, clock) = (replica.into_backend(|m| Sealed::passthrough(AnyBackend::Memory(m))), clock_from(clock)?);
            Ok(MemoryCore { inner: Rc::new(Inner { store: engine_store, namespace, clock, fetcher: Default::default(), hash_only: Default::default() }) }.into())
        })
    }

    /// `{"last_seq", "log_records_since_snapshot", "snapshot_gen", "snapshot_bytes"}` as JSON text.
    pub fn stats(&self) -> Promise {
        promise(&self.inner, |inner| async move { stats_json(inner.store.stats().await) })
    }
}

fn clock_from(clock: JsValue) -> Result<Option<Function>, JsValue> {
    if clock.is_undefined() || clock.is_null() {
        return Ok(None);
    }
    clock.dyn_into::<Function>().map(Some).map_err(|_| to_js_error(&Error::invalid("clock", "must be a function")))
}

fn stats_json(s: crate::store::StoreStats) -> Result<JsValue, JsValue> {
    json_text(&serde_json::json!({
        "last_seq": s.last_seq,
        "log_records_since_snapshot": s.log_records_since_snapshot,
        "snapshot_gen": s.snapshot_gen,
        "snapshot_bytes": s.snapshot_bytes,
    }))
}

/// The crate version.
#[wasm_bindgen]
pub fn version() -> String {
    api::VERSION.to_owned()
}

/// The change feed's event kinds (`core::feed::KINDS`), as a JSON array.
#[wasm_bindgen(js_name = feedKinds)]
pub fn feed_kinds() -> String {
    serde_json::to_string(&crate::core::feed::KINDS[..]).unwrap_or_default()
}

/// Bytes of wasm linear memory: its high-water mark, since wasm memory
/// never shrinks. This is what counts against a Worker isolate's 128 MB.
#[wasm_bindgen(js_name = wasmMemoryBytes)]
pub fn wasm_memory_bytes() -> f64 {
    #[cfg(target_arch = "wasm32")]
    let pages = core::arch::wasm32::memory_size::<0>();
    #[cfg(not(target_arch = "wasm32"))]
    let pages = 0usize;
    (pages * 65_536) as f64
}
