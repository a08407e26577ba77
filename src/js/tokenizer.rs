//! The JS face of the exact tokenizers: a thin newtype over
//! [`Encoding`]. Text arrives as a JS string (wasm-bindgen encodes it as
//! UTF-8, replacing lone surrogates with U+FFFD, as tiktoken does); token
//! ids leave as a `Uint32Array`.

use wasm_bindgen::prelude::*;

use super::to_js_error;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use js_sys::Function;

use crate::api::budget::{model_json, BuildBody, FitBody};
use crate::core::budget::models::Counting;
use crate::core::budget::{Counter, Estimator};
use crate::core::error::Error;
use crate::core::limits;
use crate::core::tokenizer::{Encoding, EncodingName, Specials};

/// Checks a budget or fit request's size, then parses it with `parse`.
fn parse_request<T>(request_json: &str, parse: fn(&[u8]) -> crate::core::error::Result<T>) -> Result<T, JsValue> {
    if request_json.len() > limits::TOKENIZER_INPUT_BYTES_MAX {
        return Err(to_js_error(&Error::too_large("request", request_json.len(), limits::TOKENIZER_INPUT_BYTES_MAX)));
    }
    parse(request_json.as_bytes()).map_err(|e| to_js_error(&e))
}

fn parse_build(request_json: &str) -> Result<BuildBody, JsValue> {
    parse_request(request_json, BuildBody::parse)
}

/// A counter the caller supplies from JS: `(text) => number`. The first bad
/// answer (a throw, NaN, a negative or fractional count) is kept and turned
/// into the call's error. Truncation searches character boundaries.
struct JsCounter {
    f: Function,
    error: RefCell<Option<Error>>,
}

impl JsCounter {
    fn fail(&self, detail: String) -> usize {
        self.error.borrow_mut().get_or_insert(Error::invalid("counter", detail));
        0
    }

    fn finish<T>(&self, r: crate::core::error::Result<T>) -> Result<T, JsValue> {
        if let Some(e) = self.error.borrow_mut().take() {
            return Err(to_js_error(&e));
        }
        r.map_err(|e| to_js_error(&e))
    }
}

impl Counter for JsCounter {
    fn count(&self, text: &str) -> usize {
        match self.f.call1(&JsValue::NULL, &JsValue::from_str(text)) {
            Err(e) => self.fail(format!("threw: {e:?}")),
            Ok(v) => match v.as_f64() {
                Some(n) if n.is_finite() && n >= 0.0 && n.fract() == 0.0 && n <= limits::TOKENIZER_INPUT_BYTES_MAX as f64 => n as usize,
                _ => self.fail(format!("returned {v:?}, not a whole number of tokens")),
            },
        }
    }

    fn truncate<'a>(&self, text: &'a str, tokens_max: usize) -> &'a str {
        if self.count(text) <= tokens_max {
            return text;
        }
        // Largest character boundary whose prefix fits, by binary search
        // (O(log n) calls). The whole text is known not to fit, so the search
        // runs over the boundaries before its end; the empty prefix always fits.
        let bounds: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
        let (mut lo, mut hi) = (0usize, bounds.len() - 1);
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if self.count(&text[..bounds[mid]]) <= tokens_max {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        &text[..bounds[lo]]
    }
}

fn js_counter(f: Function) -> JsCounter {
    JsCounter { f, error: RefCell::new(None) }
}

/// Builds a budget with a caller-supplied `(text) => number` counter.
#[wasm_bindgen(js_name = buildContextWithCounter)]
pub fn build_context_with_counter(request_json: &str, counter: Function) -> Result<String, JsValue> {
    let body = parse_build(request_json)?;
    let c = js_counter(counter);
    let r = body.build(&c, Counting::Custom).map(|v| v.to_string());
    c.finish(r)
}

fn parse_fit(request_json: &str) -> Result<FitBody, JsValue> {
    parse_request(request_json, FitBody::parse)
}

/// Which counting a fit check needs: an encoding name, or `estimate`.
#[wasm_bindgen(js_name = fitCounting)]
pub fn fit_counting(request_json: &str) -> Result<String, JsValue> {
    let body = parse_fit(request_json)?;
    Ok(counting_label(body.counting().map_err(|e| to_js_error(&e))?))
}

/// "Does this request fit?" with the estimator or a caller's counter.
#[wasm_bindgen(js_name = checkFitWith)]
pub fn check_fit_with(request_json: &str, counter: Option<Function>) -> Result<String, JsValue> {
    let body = parse_fit(request_json)?;
    match counter {
        None => body.check(&Estimator, Counting::Estimate).map(|v| v.to_string()).map_err(|e| to_js_error(&e)),
        Some(f) => {
            let c = js_counter(f);
            let r = body.check(&c, Counting::Custom).map(|v| v.to_string());
            c.finish(r)
        }
    }
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
    Ok(counting_label(body.counting().map_err(|e| to_js_error(&e))?))
}

fn counting_label(c: Counting) -> String {
    match c {
        Counting::Exact(e) => e.as_str().to_owned(),
        Counting::Estimate | Counting::Custom => "estimate".to_owned(),
    }
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
    encoding: Rc<Encoding>,
}

thread_local! {
    /// Encodings loaded in this instance, so `Memory` can count exactly
    /// with what the page or Worker already loaded (see `JsServices`).
    static LOADED: RefCell<HashMap<EncodingName, Rc<Encoding>>> = RefCell::new(HashMap::new());
}

/// An encoding loaded through [`TokenizerCore::load`], if any.
pub(crate) fn loaded(name: EncodingName) -> Option<Rc<Encoding>> {
    LOADED.with(|m| m.borrow().get(&name).cloned())
}

#[wasm_bindgen]
impl TokenizerCore {
    /// Loads `cl100k_base` or `o200k_base` from its rank asset.
    pub fn load(name: &str, asset: &[u8]) -> Result<TokenizerCore, JsValue> {
        let name = EncodingName::parse(name).map_err(|e| to_js_error(&e))?;
        // Every asset is checked, even when this encoding is already loaded:
        // a corrupt or mismatched asset must fail, not borrow a good one.
        let encoding = Rc::new(Encoding::from_asset(name, asset).map_err(|e| to_js_error(&e))?);
        let encoding = LOADED.with(|m| m.borrow_mut().entry(name).or_insert(encoding).clone());
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
        body.build(self.encoding.as_ref(), counting).map(|v| v.to_string()).map_err(|e| to_js_error(&e))
    }

    /// "Does this request fit?", counted exactly with this encoding.
    #[wasm_bindgen(js_name = checkFit)]
    pub fn check_fit(&self, request_json: &str) -> Result<String, JsValue> {
        let body = parse_fit(request_json)?;
        body.check(self.encoding.as_ref(), Counting::Exact(self.encoding.name())).map(|v| v.to_string()).map_err(|e| to_js_error(&e))
    }

    /// Memory held by the rank tables, in bytes.
    #[wasm_bindgen(js_name = heapBytes)]
    pub fn heap_bytes(&self) -> u32 {
        self.encoding.ranks().heap_bytes() as u32
    }
}
