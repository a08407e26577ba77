//! The shared wasm test bodies, under Node.
#![cfg(all(target_arch = "wasm32", feature = "wasm"))]

mod common;
