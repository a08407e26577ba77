//! The distilled static embedder in the JS API: its asset is loaded once
//! per wasm instance (`loadStaticEmbedder`, called by the npm package on
//! first need) and shared by every `Memory` that has not asked for the
//! hashed embedder.

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::prelude::*;

use super::to_js_error;
use crate::core::retrieval::StaticEmbedder;

thread_local! {
    static LOADED: RefCell<Option<Rc<StaticEmbedder>>> = const { RefCell::new(None) };
}

/// Parses the static embedder's asset and makes it the offline default of
/// this instance; resolves to its identity. A damaged asset is a typed
/// error and leaves the previous one (if any) in place.
#[wasm_bindgen(js_name = loadStaticEmbedder)]
pub fn load_static_embedder(bytes: &[u8]) -> Result<String, JsValue> {
    let model = StaticEmbedder::from_asset(bytes).map_err(|e| to_js_error(&e))?;
    let name = model.name().to_owned();
    LOADED.with(|l| *l.borrow_mut() = Some(Rc::new(model)));
    Ok(name)
}

/// The loaded static embedder, if any.
pub(super) fn loaded() -> Option<Rc<StaticEmbedder>> {
    LOADED.with(|l| l.borrow().clone())
}
