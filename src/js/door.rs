//! The one door from JS into the API: `MemoryCore.call(method, path, query,
//! body, summarizer, embedder, vectors)` runs any route in process through
//! [`api::route`], the same router the Worker serves, and rejects with the
//! typed error itself (no detour through an HTTP error body). Every `Ctx`
//! of the JS API is made by [`ctx`].

use js_sys::Promise;
use wasm_bindgen::prelude::*;

use super::history::optional_fn;
use super::{check_body, json_text, promise, random_bits, to_js_error, Inner, MemoryCore};
use crate::api::{self, services::Services, Ctx};
use crate::core::error::Error;
use crate::core::limits;

/// The context of one JS call: the tenant's namespace, its clock, and the
/// body cap of the JS API (the ceiling: a caller in process is trusted with
/// the largest body an op may hold).
pub(super) fn ctx<'a>(inner: &'a Inner, random: &'a mut dyn FnMut() -> [u8; 10], services: &'a dyn Services) -> Result<Ctx<'a>, JsValue> {
    Ok(Ctx::new(inner.now()?, random, inner.namespace.as_deref(), limits::REQUEST_BODY_BYTES_CEILING, services))
}

#[wasm_bindgen]
impl MemoryCore {
    /// Runs an API route in process: `method`, `path` (`/v1/...`), `query`
    /// (`a=1&b=2`), `body_json`; `summarizer` and `embedder` are optional
    /// hooks; `vectors` the caller's embeddings of a long-term create (one
    /// flat `Float32Array`) or its query vector for a search. Resolves to
    /// the response body as JSON text, or rejects with the typed error.
    // Positional, as wasm-bindgen passes JS arguments: an options object
    // would cost a serde-wasm-bindgen conversion on every call.
    #[allow(clippy::too_many_arguments)]
    pub fn call(&self, method: String, path: String, query: String, body_json: String, summarizer: JsValue, embedder: JsValue, vectors: Option<Vec<f32>>) -> Promise {
        promise(&self.inner, move |inner| async move {
            let r = route(&inner, method, path, query, body_json, summarizer, embedder, vectors).await?;
            match r.raw {
                // Written as UTF-8 JSON by `serde_json`, so valid UTF-8.
                Some(raw) => String::from_utf8(raw).map(JsValue::from).map_err(|e| to_js_error(&Error::Internal { detail: e.to_string() })),
                None => json_text(&r.body),
            }
        })
    }

    /// [`MemoryCore::call`] resolving to the answer's UTF-8 JSON bytes (a
    /// `Uint8Array`): one copy out of wasm memory, no string decoding, for
    /// callers that forward the answer (`prompt({ as: "bytes" })`).
    #[allow(clippy::too_many_arguments)]
    #[wasm_bindgen(js_name = callBytes)]
    pub fn call_bytes(&self, method: String, path: String, query: String, body_json: String, summarizer: JsValue, embedder: JsValue, vectors: Option<Vec<f32>>) -> Promise {
        promise(&self.inner, move |inner| async move {
            let r = route(&inner, method, path, query, body_json, summarizer, embedder, vectors).await?;
            let bytes = r.into_bytes().map_err(|e| to_js_error(&e))?;
            Ok(js_sys::Uint8Array::from(&bytes[..]).into())
        })
    }
}

#[wasm_bindgen]
impl MemoryCore {
    /// Runs the background extraction passes that are due (with `flush`,
    /// every waiting session at once) through the `extractor` and
    /// `embedder` hooks, if given. Resolves to the JSON text of
    /// `{"sessions", "created", "duplicates", "failed", "without_consent",
    /// "next_due"}`: `next_due` is when to run again (ms), or null.
    #[wasm_bindgen(js_name = runExtraction)]
    pub fn run_extraction(&self, flush: bool, extractor: JsValue, embedder: JsValue) -> Promise {
        promise(&self.inner, move |inner| async move {
            let services = inner.services(None, optional_fn("embedder", embedder)?, optional_fn("extractor", extractor)?);
            let now = inner.now()?;
            let report = api::extraction::run_due(&inner.store, &services, now, flush).await.map_err(|e| to_js_error(&e))?;
            let next = api::extraction::next_due(&inner.store, inner.now()?).await.map_err(|e| to_js_error(&e))?;
            let mut v = report.to_json();
            v["next_due"] = serde_json::json!(next);
            json_text(&v)
        })
    }
}

/// Runs one route for [`MemoryCore::call`] and [`MemoryCore::call_bytes`].
#[allow(clippy::too_many_arguments)]
async fn route(inner: &Inner, method: String, path: String, query: String, body_json: String, summarizer: JsValue, embedder: JsValue, vectors: Option<Vec<f32>>) -> Result<api::Response, JsValue> {
    check_body(&body_json)?;
    let services = inner.services(optional_fn("summarizer", summarizer)?, optional_fn("embedder", embedder)?, None);
    let req = api::Request { method: &method, path: &path, query: api::parse_query(&query), body: body_json.as_bytes() };
    let mut rand = random_bits;
    let mut ctx = ctx(inner, &mut rand, &services)?;
    ctx.vectors = vectors;
    api::route(&inner.store, &req, &mut ctx).await.map_err(|e| to_js_error(&e))
}
