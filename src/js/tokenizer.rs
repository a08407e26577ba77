//! The JS face of the exact tokenizers: a thin newtype over
//! [`Encoding`]. Text arrives as a JS string (wasm-bindgen encodes it as
//! UTF-8, replacing lone surrogates with U+FFFD, as tiktoken does); token
//! ids leave as a `Uint32Array`.

use wasm_bindgen::prelude::*;

use super::to_js_error;
use crate::api::budget::{model_json, BuildBody};
use crate::core::budget::models::Counting;
use crate::core::budget::Estimator;
use crate::core::limits;
use crate::core::tokenizer::{Encoding, EncodingName, Specials};

fn parse_build(request_json: &str) -> Result<BuildBody, JsValue> {
    if request_json.len() > limits::TOKENIZER_INPUT_BYTES_MAX {
        return Err(to_js_error(&crate::core::error::Error::too_large("request", request_json.len(), limits::TOKENIZER_INPUT_BYTES_MAX)));
    }
    BuildBody::parse(request_json.as_bytes()).map_err(|e| to_js_error(&e))
}

/// The model table's row for `name` as JSON text (`null` when unknown).
#[wasm_bindgen(js_name = modelInfo)]
pub fn model_info(name: &str) -> String {
    model_json(name).to_string()
}

/// Which counting a budget request needs: an encoding name, or `estimate`.
#[wasm_bindgen(js_name = budgetCounting)]
pub fn budget_counting(request_json: &str) -> Result<String, JsValue> {
    let body = parse_build(request_json)?;
    Ok(match body.counting().map_err(|e| to_js_error(&e))? {
        Counting::Exact(e) => e.as_str().to_owned(),
        Counting::Estimate => "estimate".to_owned(),
    })
}

/// Builds a budget with the estimator; resolves to the result as JSON text.
#[wasm_bindgen(js_name = buildContextEstimated)]
pub fn build_context_estimated(request_json: &str) -> Result<String, JsValue> {
    let body = parse_build(request_json)?;
    body.build(&Estimator, Counting::Estimate).map(|v| v.to_string()).map_err(|e| to_js_error(&e))
}

fn specials(allow: bool) -> Specials {
    if allow {
        Specials::Allowed
    } else {
        Specials::AsText
    }
}

/// A loaded encoding.
#[wasm_bindgen]
pub struct TokenizerCore {
    encoding: Encoding,
}

#[wasm_bindgen]
impl TokenizerCore {
    /// Loads `cl100k_base` or `o200k_base` from its rank asset.
    pub fn load(name: &str, asset: &[u8]) -> Result<TokenizerCore, JsValue> {
        let name = EncodingName::parse(name).map_err(|e| to_js_error(&e))?;
        let encoding = Encoding::from_asset(name, asset).map_err(|e| to_js_error(&e))?;
        Ok(TokenizerCore { encoding })
    }

    /// The encoding's name.
    pub fn name(&self) -> String {
        self.encoding.name().as_str().to_owned()
    }

    /// Number of tokens of `text`.
    pub fn count(&self, text: &str, allow_special: bool) -> Result<u32, JsValue> {
        self.encoding.count(text, specials(allow_special)).map(|n| n as u32).map_err(|e| to_js_error(&e))
    }

    /// Token ids of `text`.
    pub fn encode(&self, text: &str, allow_special: bool) -> Result<Vec<u32>, JsValue> {
        let mut out = Vec::with_capacity(text.len() / 3 + 1);
        self.encoding.encode(text, specials(allow_special), &mut out).map_err(|e| to_js_error(&e))?;
        Ok(out)
    }

    /// The bytes of `tokens`.
    #[wasm_bindgen(js_name = decodeBytes)]
    pub fn decode_bytes(&self, tokens: &[u32]) -> Result<Vec<u8>, JsValue> {
        self.encoding.decode(tokens).map_err(|e| to_js_error(&e))
    }

    /// Builds a budget counted exactly with this encoding.
    #[wasm_bindgen(js_name = buildContext)]
    pub fn build_context(&self, request_json: &str) -> Result<String, JsValue> {
        let body = parse_build(request_json)?;
        let counting = Counting::Exact(self.encoding.name());
        body.build(&self.encoding, counting).map(|v| v.to_string()).map_err(|e| to_js_error(&e))
    }

    /// Memory held by the rank tables, in bytes.
    #[wasm_bindgen(js_name = heapBytes)]
    pub fn heap_bytes(&self) -> u32 {
        self.encoding.ranks().heap_bytes() as u32
    }
}
