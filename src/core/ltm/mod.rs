//! Long-term memory retrieval primitives: text analysis, BM25, the offline embedder, filters and fusion.
