//! edgemem: agent memory that runs where the agent runs.
//!
//! See `ARCHITECTURE.md` for the map. The dependency rule is
//! `core` ← `api` ← `store` users; `core` ← `js`; `core` ← `store` ← `worker`.
//! Only `js`, `worker` and `webcrypto` (the cipher both seal storage with)
//! know about wasm-bindgen, and only behind features.

pub mod api;
pub mod core;
pub mod store;

#[cfg(feature = "wasm")]
pub mod js;

#[cfg(feature = "worker")]
mod worker;

#[cfg(any(feature = "wasm", feature = "worker"))]
pub mod webcrypto;
