//! The shared wasm test bodies, under headless Chromium.
#![cfg(all(target_arch = "wasm32", feature = "wasm"))]

wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

mod common;
