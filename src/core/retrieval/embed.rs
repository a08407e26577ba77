//! The offline default embedder: hashed word and character n-gram features.
//!
//! No model, no I/O: a text's vector is the signed feature hashing
//! (Weinberger et al. 2009) of its analyzer terms (words and adjacent-word
//! pairs, see [`crate::core::retrieval::text`]) and the character 3- to 5-grams of
//! each word, with sublinear term frequency (`√tf`), L2-normalized. Only
//! IEEE-exact operations (add, multiply, divide, square root) touch the
//! floats, in a fixed order, so the vectors are bit-identical on every
//! platform, wasm included (`ln` would depend on the platform's libm).
//! Texts that share words or word pieces point the same way, which is
//! enough for `make demo` to recall sensibly; a real model does better (the
//! example `ltm_quality` measures both on the rustdocs queries).
//!
//! The function is fixed: [`EMBEDDER_NAME`] changes whenever any output
//! would, because stored vectors must stay comparable with new queries.

use crate::core::error::{Error, Result, VectorCode};
use crate::core::limits;
use crate::core::retrieval::hash::stable_hash;
use crate::core::retrieval::text::{Analyzer, TokenBuf};

/// Names this exact function; stored with vectors it produced.
pub const EMBEDDER_NAME: &str = "edgemem-hash-v1";

const SEED_WORD: u64 = 0x776f_7264;
const SEED_PAIR: u64 = 0x7061_6972;
const SEED_CHAR: u64 = 0x6368_6172;

/// The embedder. `Copy`; holds no state besides its configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Embedder {
    dim: usize,
    analyzer: Analyzer,
    /// Weight of a word feature. Default 1.
    pub word_weight: f32,
    /// Weight of an adjacent-word-pair feature. Default 1 (0.5 and 1.5
    /// measured worse on the rustdocs queries).
    pub pair_weight: f32,
    /// Weight of one character n-gram. Default 0.25: a word has about three
    /// per letter, so together they outweigh the word itself.
    pub char_weight: f32,
    /// Shortest character n-gram. Default 3.
    pub char_ngram_min: usize,
    /// Longest character n-gram. Default 5.
    pub char_ngram_max: usize,
}

impl Default for Embedder {
    fn default() -> Self {
        Embedder {
            dim: limits::EMBED_DIM_DEFAULT,
            analyzer: Analyzer::code(),
            word_weight: 1.0,
            pair_weight: 1.0,
            char_weight: 0.25,
            char_ngram_min: 3,
            char_ngram_max: 5,
        }
    }
}

impl Embedder {
    /// An embedder of `dim` dimensions, between [`limits::EMBED_DIM_MIN`]
    /// and [`limits::VECTOR_DIM_MAX`].
    pub fn new(dim: usize) -> Result<Embedder> {
        if !(limits::EMBED_DIM_MIN..=limits::VECTOR_DIM_MAX).contains(&dim) {
            return Err(Error::invalid("dim", format!("must be between {} and {}", limits::EMBED_DIM_MIN, limits::VECTOR_DIM_MAX)));
        }
        Ok(Embedder { dim, ..Embedder::default() })
    }

    /// Output dimensions.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The identity stored with its vectors: the function and its width.
    pub fn identity(&self) -> String {
        format!("{EMBEDDER_NAME}/{}", self.dim)
    }

    /// Writes the unit vector of `text` into `out`, which must hold exactly
    /// `dim` components. A text without a single word (empty, punctuation)
    /// gets the first basis vector, so that every output is a valid cosine
    /// vector.
    pub fn embed(&self, text: &str, out: &mut [f32]) -> Result<()> {
        if out.len() != self.dim {
            return Err(Error::InvalidVector {
                code: VectorCode::DimensionMismatch,
                detail: format!("output has {} components, the embedder {}", out.len(), self.dim),
            });
        }
        if text.len() > limits::MEMORY_TEXT_BYTES_MAX {
            return Err(Error::too_large("text", text.len(), limits::MEMORY_TEXT_BYTES_MAX));
        }
        out.fill(0.0);
        let mut features: Vec<(u64, f32)> = Vec::new();
        let mut buf = TokenBuf::default();
        let mut padded = String::new();
        let mut bounds: Vec<usize> = Vec::new();
        let (lo, hi) = (self.char_ngram_min.max(1), self.char_ngram_max);
        self.analyzer.for_each_token(text, &mut buf, |t| {
            if t.contains(' ') {
                features.push((stable_hash(SEED_PAIR, t.as_bytes()), self.pair_weight));
                return;
            }
            features.push((stable_hash(SEED_WORD, t.as_bytes()), self.word_weight));
            if self.char_weight == 0.0 || hi < lo {
                return;
            }
            padded.clear();
            padded.push('<');
            padded.push_str(t);
            padded.push('>');
            if padded.is_ascii() {
                // One byte per character: windows are the n-grams.
                for n in lo..=hi {
                    for gram in padded.as_bytes().windows(n) {
                        features.push((stable_hash(SEED_CHAR, gram), self.char_weight));
                    }
                }
                return;
            }
            // Character boundaries of "<word>", so n-grams are whole chars.
            bounds.clear();
            bounds.extend(padded.char_indices().map(|(i, _)| i));
            bounds.push(padded.len());
            for n in lo..=hi {
                for w in bounds.windows(n + 1) {
                    if let (Some(&a), Some(&b)) = (w.first(), w.last()) {
                        if let Some(gram) = padded.get(a..b) {
                            features.push((stable_hash(SEED_CHAR, gram.as_bytes()), self.char_weight));
                        }
                    }
                }
            }
        });
        // Equal features are adjacent after sorting; each contributes
        // weight · √tf once, in hash order, so the sum is the same on every
        // run.
        features.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
        let dim = self.dim as u64;
        let mut i = 0;
        while let Some(&(h, w)) = features.get(i) {
            let mut tf = 0u32;
            while features.get(i).is_some_and(|f| f.0 == h && f.1 == w) {
                tf += 1;
                i += 1;
            }
            let bucket = (((h >> 32) * dim) >> 32) as usize;
            let sign = if h & 1 == 0 { 1.0 } else { -1.0 };
            if let Some(x) = out.get_mut(bucket) {
                *x += sign * w * (tf as f32).sqrt();
            }
        }
        let norm = out.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 && norm.is_finite() {
            out.iter_mut().for_each(|x| *x /= norm);
        } else {
            out.fill(0.0);
            if let Some(first) = out.first_mut() {
                *first = 1.0;
            }
        }
        Ok(())
    }

    /// [`Embedder::embed`] into a new vector.
    pub fn embed_vec(&self, text: &str) -> Result<Vec<f32>> {
        let mut v = vec![0.0; self.dim];
        self.embed(text, &mut v)?;
        Ok(v)
    }
}
