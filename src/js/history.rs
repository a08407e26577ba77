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
}

/// The message of a thrown JS value, for the typed error.
fn js_reason(e: &JsValue) -> String {
    if let Some(err) = e.dyn_ref::<js_sys::Error>() {
        return String::from(err.message());
    }
    e.as_string().unwrap_or_else(|| format!("{e:?}"))
}

