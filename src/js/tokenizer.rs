//! The JS face of the exact tokenizers: a thin newtype over
//! [`Encoding`]. Text arrives as a JS string (wasm-bindgen encodes it as
//! UTF-8, replacing lone surrogates with U+FFFD, as tiktoken does); token
//! ids leave as a `Uint32Array`.

use wasm_bindgen::prelude::*;

use super::to_js_error;
use crate::core::tokenizer::{Encoding, EncodingName, Specials};

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

    /// Memory held by the rank tables, in bytes.
    #[wasm_bindgen(js_name = heapBytes)]
    pub fn heap_bytes(&self) -> u32 {
        self.encoding.ranks().heap_bytes() as u32
    }
}
