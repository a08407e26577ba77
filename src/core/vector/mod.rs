//! The vector index: a mutable flat segment plus immutable HNSW segments (see ARCHITECTURE.md).
