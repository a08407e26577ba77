//! Long-term memory for JS: records and queries as JSON, vectors as
//! `Float32Array` (never arrays pushed through serde).

use js_sys::Promise;
use wasm_bindgen::prelude::*;

use super::history::{optional_fn, JsServices};
use super::{check_body, json_text, promise, random_bits, to_js_error, MemoryCore};
use crate::api::{self, longterm, Ctx};
use crate::core::error::{Error, VectorCode};
use crate::core::limits;

#[wasm_bindgen]
impl MemoryCore {
    /// Creates `{"memories": [...], "deduplicate"?}`. `vectors` is either
    /// absent (texts are embedded by `embedder` or the offline embedder) or
    /// one flat `Float32Array` of `memories.length × dim` components.
    #[wasm_bindgen(js_name = ltmCreate)]
    pub fn ltm_create(&self, body_json: String, vectors: Option<Vec<f32>>, embedder: JsValue) -> Promise {
        promise(&self.inner, move |inner| async move {
            check_body(&body_json)?;
            let services = JsServices { summarizer: None, embedder: optional_fn("embedder", embedder)? };
            let body: serde_json::Value = api::parse_json(body_json.as_bytes()).map_err(|e| to_js_error(&e))?;
            let memories = body.get("memories").and_then(|m| m.as_array()).ok_or_else(|| to_js_error(&Error::invalid("memories", "must be an array")))?;
            let split = match vectors {
                None => None,
                Some(flat) => {
                    let n = memories.len().max(1);
                    if flat.len() % n != 0 || flat.is_empty() {
                        return Err(to_js_error(&Error::InvalidVector { code: VectorCode::DimensionMismatch, detail: format!("{} components do not split into {} vectors", flat.len(), memories.len()) }));
                    }
                    let dim = flat.len() / n;
                    Some(flat.chunks(dim).map(<[f32]>::to_vec).collect())
                }
            };
            let dedup = !matches!(body.get("deduplicate"), Some(serde_json::Value::Bool(false)));
            let mut rand = random_bits;
            let mut ctx = Ctx { now: inner.now()?, random: &mut rand, namespace: inner.namespace.as_deref(), body_bytes_max: limits::REQUEST_BODY_BYTES_CEILING, services: &services };
            let (created, duplicates) = longterm::create(&inner.store, &mut ctx, memories, split, dedup).await.map_err(|e| to_js_error(&e))?;
            json_text(&serde_json::json!({ "status": "ok", "created": created, "duplicates": duplicates }))
        })
    }

    /// Searches with an AMS `SearchRequest` body; `vector` is the query
    /// embedding as a `Float32Array` (else the text is embedded).
    #[wasm_bindgen(js_name = ltmSearch)]
    pub fn ltm_search(&self, body_json: String, vector: Option<Vec<f32>>, embedder: JsValue) -> Promise {
        promise(&self.inner, move |inner| async move {
            check_body(&body_json)?;
            let services = JsServices { summarizer: None, embedder: optional_fn("embedder", embedder)? };
            let body: serde_json::Value = api::parse_json(body_json.as_bytes()).map_err(|e| to_js_error(&e))?;
            let sb = longterm::SearchBody::parse(&body).map_err(|e| to_js_error(&e))?;
            let v = longterm::search(&inner.store, &services, &sb, vector, inner.now()?).await.map_err(|e| to_js_error(&e))?;
            json_text(&v)
        })
    }
}
