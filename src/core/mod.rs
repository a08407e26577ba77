//! The pure core of edgemem.
//!
//! Nothing in here knows about wasm, JS, I/O, async, the clock or an RNG:
//! time and random bits are passed in. A native `cargo test` with default
//! features proves it, since none of those dependencies are even compiled.

pub mod agent_state;
pub mod auth;
pub mod budget;
pub mod codec;
pub mod consent;
pub mod decisions;
pub mod engine;
pub mod episodes;
pub mod error;
pub mod exact_json;
pub mod extract;
pub mod feed;
pub mod history;
pub mod ids;
pub mod ledger;
pub mod limits;
pub mod longterm;
pub mod msgpack;
pub mod privacy;
pub mod retrieval;
pub mod service_cache;
pub mod session;
pub mod shard;
pub mod summary_views;
#[cfg(test)]
pub(crate) mod test_rng;
pub mod time;
/// Time expressions in queries ("last May") as windows a search can favour.
pub mod timeexpr;
pub mod tokenizer;
pub mod vector;

pub use engine::{Applied, Engine, LogEntry, Op, SessionPage};
pub use error::{Error, Result};
pub use session::{Message, Session};
