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
    /// Answers one MCP JSON-RPC message (`message_json`) under a bound
    /// context (`ctx_json`: `{namespace, session_id, user_id, agent_id,
    /// result_tokens_max}`), as `api::mcp` does for the Worker. Resolves to
    /// the response's JSON text, or `undefined` for a notification. A
    /// message that is not JSON is answered with a parse error, never a
    /// rejection: the stdio loop writes whatever comes back.
    pub fn mcp(&self, message_json: String, ctx_json: String, embedder: JsValue) -> Promise {
        promise(&self.inner, move |inner| async move {
            if message_json.len() > limits::MCP_MESSAGE_BYTES_MAX {
                let e = api::mcp::error(serde_json::Value::Null, api::mcp::code::INVALID_REQUEST, format!("message over {} bytes", limits::MCP_MESSAGE_BYTES_MAX), None);
                return json_text(&e);
            }
            let msg: serde_json::Value = match serde_json::from_str(&message_json) {
                Ok(v) => v,
                Err(e) => return json_text(&api::mcp::error(serde_json::Value::Null, api::mcp::code::PARSE_ERROR, format!("parse error: {e}"), None)),
            };
            let mut tool_ctx: api::tools::ToolCtx = api::parse_json(ctx_json.as_bytes()).map_err(|e| to_js_error(&e))?;
            if tool_ctx.namespace.is_none() {
                tool_ctx.namespace = inner.namespace.clone();
            }
            let services = inner.services(None, optional_fn("embedder", embedder)?, None);
            let mut rand = random_bits;
            let c = ctx(&inner, &mut rand, &services)?;
            let mut exec = api::tools::StoreExec { store: &inner.store, now: c.now, random: c.random, namespace: c.namespace, body_bytes_max: c.body_bytes_max, services: &services, actor: c.actor };
            match api::mcp::handle(&mut exec, &tool_ctx, &msg).await {
                Some(v) => json_text(&v),
                None => Ok(JsValue::UNDEFINED),
            }
        })
    }

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
    check_body(&path, &body_json)?;
    let services = inner.services(optional_fn("summarizer", summarizer)?, optional_fn("embedder", embedder)?, None);
    let req = api::Request { method: &method, path: &path, query: api::parse_query(&query), body: body_json.as_bytes() };
    let mut rand = random_bits;
    let mut ctx = ctx(inner, &mut rand, &services)?;
    ctx.vectors = vectors;
    api::route(&inner.store, &req, &mut ctx).await.map_err(|e| to_js_error(&e))
}
