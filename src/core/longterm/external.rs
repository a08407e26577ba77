//! The seam for a tenant-wide vector index outside the engine (issue 21,
//! item 6): Vectorize, for tenants past about 10^8 records, is meant to go
//! behind it later. The core never calls such an index: it would be remote
//! and asynchronous. The host queries it ([`crate::api::external_index`])
//! and hands the answer to the search as [`super::SearchRequest::external`];
//! each index (each shard of a tenant) then keeps the hits it holds, admits
//! them by the filter and the versions asked for exactly, and ranks them as
//! it ranks its own vectors. A hit for a record the index does not hold (on
//! another shard, or deleted since the external index saw it) is dropped,
//! so an eventually consistent index can return too much, never a record
//! the filter excludes.

use std::cmp::Ordering;

/// One hit of an external index: the record id and its similarity (higher
/// is better, as the engine's own vector hits).
#[derive(Debug, Clone, PartialEq)]
pub struct ExternalHit {
    pub id: String,
    pub score: f32,
}

/// The segment id a hit from an external index carries.
pub const EXTERNAL_SEGMENT_ID: u32 = u32::MAX;

/// Orders hits as the engine's vector search does: best first, equal
/// scores by id.
pub fn order(a: &ExternalHit, b: &ExternalHit) -> Ordering {
    b.score.total_cmp(&a.score).then_with(|| a.id.cmp(&b.id))
}
