//! The host services of the JS API: the caller's summarizer and embedder
//! hooks (async JS functions) and the encodings this instance has loaded.
//! Routes reach them through the one door (`door.rs`).

use std::rc::Rc;

use futures_util::future::LocalBoxFuture;
use js_sys::{Function, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::to_js_error;
use crate::api::services::Services;
use crate::core::error::{Error, Result};
use crate::core::extract::{Candidate, Strategy};
use crate::core::retrieval::StaticEmbedder;
use crate::core::session::Message;
use crate::core::tokenizer::{Encoding, EncodingName};

/// Encodings loaded through `Tokenizer.load`, and the JS summarizer hook:
/// `(turnsJson, previousSummary, tokensMax) => Promise<string>`. The npm
/// wrapper parses the turns, applies the timeout and awaits the user's
/// `async (turns, previousSummary) => string`.
pub(super) struct JsServices {
    pub(super) summarizer: Option<Function>,
    /// `async (texts) => Float32Array[]`, one vector per text.
    pub(super) embedder: Option<Function>,
    /// `(agentId, service) => Promise<string>`: the service-state upstream.
    pub(super) fetcher: Option<Function>,
    /// `(requestJson) => Promise<string>`: the extractor hook, wrapped by
    /// the npm package (it parses the request and stringifies the answer).
    pub(super) extractor: Option<Function>,
    /// The offline default when loaded (see `embedder.rs`).
    pub(super) static_embedder: Option<Rc<StaticEmbedder>>,
}

/// `undefined`/`null` or a function, else a typed error.
pub(super) fn optional_fn(field: &str, v: JsValue) -> Result<Option<Function>, JsValue> {
    if v.is_undefined() || v.is_null() {
        return Ok(None);
    }
    v.dyn_into::<Function>().map(Some).map_err(|_| to_js_error(&Error::invalid(field, "must be a function")))
}

fn hook_failed(reason: String) -> Error {
    Error::HookFailed { hook: "summarizer".into(), reason }
}

impl Services for JsServices {
    fn encoding(&self, name: EncodingName) -> LocalBoxFuture<'_, Result<Rc<Encoding>>> {
        Box::pin(async move {
            super::tokenizer::loaded(name).ok_or_else(|| Error::EncodingNotLoaded { encoding: name.as_str().to_owned() })
        })
    }

    fn summarize<'a>(&'a self, turns: &'a [Message], previous: Option<&'a str>, tokens_max: usize) -> Option<LocalBoxFuture<'a, Result<String>>> {
        let f = self.summarizer.clone()?;
        Some(Box::pin(async move {
            let turns_json = serde_json::to_string(&turns.iter().map(crate::api::working_memory::message_json).collect::<Vec<_>>())
                .map_err(|e| hook_failed(e.to_string()))?;
            let prev = previous.map_or(JsValue::NULL, JsValue::from_str);
            let out = f
                .call3(&JsValue::NULL, &JsValue::from_str(&turns_json), &prev, &JsValue::from_f64(tokens_max as f64))
                .map_err(|e| hook_failed(js_reason(&e)))?;
            let out = JsFuture::from(Promise::resolve(&out)).await.map_err(|e| hook_failed(js_reason(&e)))?;
            out.as_string().ok_or_else(|| hook_failed("returned something other than a string".into()))
        }))
    }

    fn embed<'a>(&'a self, texts: &'a [String]) -> Option<LocalBoxFuture<'a, Result<Vec<Vec<f32>>>>> {
        let f = self.embedder.clone()?;
        Some(Box::pin(async move {
            let fail = |reason: String| Error::HookFailed { hook: "embedder".into(), reason };
            let arr = js_sys::Array::new();
            for t in texts {
                arr.push(&JsValue::from_str(t));
            }
            let out = f.call1(&JsValue::NULL, &arr).map_err(|e| fail(js_reason(&e)))?;
            let out = JsFuture::from(Promise::resolve(&out)).await.map_err(|e| fail(js_reason(&e)))?;
            let list: js_sys::Array = out.dyn_into().map_err(|_| fail("must resolve to an array of Float32Array".into()))?;
            if list.length() as usize != texts.len() {
                return Err(fail(format!("returned {} vectors for {} texts", list.length(), texts.len())));
            }
            list.iter()
                .map(|v| {
                    v.dyn_into::<js_sys::Float32Array>().map(|a| a.to_vec()).map_err(|_| fail("each vector must be a Float32Array".into()))
                })
                .collect()
        }))
    }

    /// The hook's `edgememName` property (the npm package sets it from
    /// `embedderName`), else `js-hook`.
    fn embedder_name(&self) -> String {
        self.embedder
            .as_ref()
            .and_then(|f| js_sys::Reflect::get(f, &JsValue::from_str("edgememName")).ok())
            .and_then(|v| v.as_string())
            .unwrap_or_else(|| "js-hook".into())
    }

    fn static_embedder(&self) -> LocalBoxFuture<'_, Option<Rc<StaticEmbedder>>> {
        let model = self.static_embedder.clone();
        Box::pin(async move { model })
    }

    fn extract<'a>(&'a self, strategy: &'a Strategy, turns: &'a [Message]) -> Option<LocalBoxFuture<'a, Result<Vec<Candidate>>>> {
        let f = self.extractor.clone()?;
        Some(Box::pin(async move {
            let fail = |reason: String| Error::HookFailed { hook: "extractor".into(), reason };
            let request = crate::api::extraction::hook_request_json(strategy, turns)?;
            let out = f.call1(&JsValue::NULL, &JsValue::from_str(&request)).map_err(|e| fail(js_reason(&e)))?;
            let out = JsFuture::from(Promise::resolve(&out)).await.map_err(|e| fail(js_reason(&e)))?;
            let text = out.as_string().ok_or_else(|| fail("resolved to something other than JSON text".into()))?;
            crate::api::extraction::candidates_from_json(&text, turns)
        }))
    }

    fn fetch_service<'a>(&'a self, agent_id: &'a str, service: &'a str) -> Option<LocalBoxFuture<'a, Result<String>>> {
        let f = self.fetcher.clone()?;
        Some(Box::pin(async move {
            let out = f.call2(&JsValue::NULL, &JsValue::from_str(agent_id), &JsValue::from_str(service)).map_err(|e| upstream_error(service, &e))?;
            let out = JsFuture::from(Promise::resolve(&out)).await.map_err(|e| upstream_error(service, &e))?;
            out.as_string().ok_or_else(|| Error::Upstream { service: service.into(), status: 0, detail: "the fetcher resolved to something other than JSON text".into() })
        }))
    }
}

/// What the fetcher wrapper threw, as the typed error naming `service`.
fn upstream_error(service: &str, e: &JsValue) -> Error {
    let prop = |name: &str| js_sys::Reflect::get(e, &JsValue::from_str(name)).ok();
    if prop("code").and_then(|c| c.as_string()).as_deref() == Some("upstream_timeout") {
        let timeout_ms = prop("timeoutMs").and_then(|v| v.as_f64()).unwrap_or(0.0).max(0.0) as u64;
        return Error::UpstreamTimeout { service: service.into(), timeout_ms };
    }
    let status = prop("status").and_then(|v| v.as_f64()).filter(|s| (0.0..=999.0).contains(s)).unwrap_or(0.0) as u16;
    Error::Upstream { service: service.into(), status, detail: js_reason(e) }
}

/// The message of a thrown JS value, for the typed error.
fn js_reason(e: &JsValue) -> String {
    if let Some(err) = e.dyn_ref::<js_sys::Error>() {
        return String::from(err.message());
    }
    e.as_string().unwrap_or_else(|| format!("{e:?}"))
}

