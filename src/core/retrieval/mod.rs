//! Long-term memory retrieval primitives: text analysis, BM25, the offline embedder, filters and fusion.
//!
//! - [`record`]: AMS's `MemoryRecord`, its hash and its edit request.
//! - [`text`]: the analyzer shared by BM25 and the embedder.
//! - [`bm25`]: the incremental keyword index.
//! - [`embed`]: the offline hashed-n-gram embedder (the fallback).
//! - [`static_embed`]: the distilled static embedder (the default when its asset is loaded).
//! - [`filter`]: AMS's search filters.
//! - [`rank`]: fusion (RRF, alpha) and recency re-ranking.

pub mod bm25;
pub mod embed;
pub mod fuse;
pub mod filter;
pub mod hash;
pub mod rank;
pub mod static_embed;
pub mod record;
pub mod text;

pub use bm25::{Bm25Index, Bm25Params, Bm25Scratch, KeyFilter};
pub use embed::{Embedder, EMBEDDER_NAME};
pub use static_embed::{MixedEmbedder, StaticEmbedder};
pub use filter::Filter;
pub use record::{memory_hash, MemoryPatch, MemoryRecord, MemoryType};
pub use text::{Analyzer, Stem, StopList, TokenBuf};

#[cfg(test)]
mod tests;
