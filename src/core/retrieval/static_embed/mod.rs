//! The distilled static embedder: a WordPiece vocabulary and one vector per
//! token, distilled from all-MiniLM-L6-v2 with model2vec
//! (`scripts/embedder/distill.py` builds the asset).
//!
//! A text's vector is the L2-normalized sum of its tokens' rows, so it costs
//! a table look-up per token and no matrix product: the paraphrase sense of
//! a transformer's token embeddings at the speed of a hash. The tokenizer is
//! BERT's uncased one (clean, lowercase, strip accents, split on whitespace
//! and punctuation, greedy longest-match WordPiece), so the rows line up
//! with the ids the distillation saw.
//!
//! Unicode properties the standard library lacks (combining marks,
//! punctuation, what NFD leaves of a letter) come from generated tables
//! (`tables.rs`, `scripts/embedder/gen_tables.py`); Hangul syllables are
//! decomposed by the Unicode algorithm. `tests/data/embedder/golden.jsonl`
//! pins the agreement with the Python tokenizer.
//!
//! Asset layout (little-endian): `"EMB1"`, `dim`, `vocab_count`, `name_len`,
//! name, `unk_id`, `tokens_max`, `word_chars_max` (all `u32`), then each
//! token as `u8` length + UTF-8, `vocab_count` `f32` row scales,
//! `vocab_count × dim` `i8` rows, and a CRC-32 of everything before it.

use std::collections::HashMap;

use crate::core::error::{Error, Result, VectorCode};
use crate::core::limits;
use crate::core::retrieval::Embedder;

mod tables;

const MAGIC: &[u8; 4] = b"EMB1";

fn corrupt(reason: impl Into<String>) -> Error {
    Error::invalid("embedder asset", reason.into())
}

/// A loaded static embedding model. Immutable; share it behind an `Rc`.
#[derive(Debug)]
pub struct StaticEmbedder {
    name: String,
    dim: usize,
    tokens_max: usize,
    word_chars_max: usize,
    unk: u32,
    /// Pieces that may start a word.
    heads: HashMap<Box<str>, u32>,
    /// Continuation pieces, without their `##`.
    tails: HashMap<Box<str>, u32>,
    scales: Vec<f32>,
    rows: Vec<i8>,
}

/// Reads the asset front to back; every read is bounds-checked.
struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.at.checked_add(n).filter(|e| *e <= self.b.len()).ok_or_else(|| corrupt("truncated"))?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn u32(&mut self) -> Result<usize> {
        let s = self.take(4)?;
        Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]) as usize)
    }
}

impl StaticEmbedder {
    /// Parses and checks an asset: magic, bounds, UTF-8 tokens, sizes and
    /// checksum. A damaged or foreign file is a typed error, never a panic.
    pub fn from_asset(bytes: &[u8]) -> Result<StaticEmbedder> {
        if bytes.len() > limits::STATIC_EMBED_ASSET_BYTES_MAX {
            return Err(Error::too_large("embedder asset", bytes.len(), limits::STATIC_EMBED_ASSET_BYTES_MAX));
        }
        if bytes.len() < 8 || &bytes[..4] != MAGIC {
            return Err(corrupt("not an edgemem static embedder asset (bad magic)"));
        }
        let (body, crc) = bytes.split_at(bytes.len() - 4);
        if crc32fast::hash(body) != u32::from_le_bytes([crc[0], crc[1], crc[2], crc[3]]) {
            return Err(corrupt("checksum mismatch"));
        }
        let mut r = Reader { b: body, at: 4 };
        let dim = r.u32()?;
        let vocab_count = r.u32()?;
        let name_len = r.u32()?;
        if !(limits::EMBED_DIM_MIN..=limits::VECTOR_DIM_MAX).contains(&dim) {
            return Err(corrupt(format!("{dim} dimensions")));
        }
        if vocab_count == 0 || vocab_count > limits::STATIC_EMBED_VOCAB_MAX {
            return Err(corrupt(format!("{vocab_count} tokens (at most {})", limits::STATIC_EMBED_VOCAB_MAX)));
        }
        if name_len == 0 || name_len > limits::EMBEDDER_NAME_BYTES_MAX {
            return Err(corrupt("name length"));
        }
        let name = std::str::from_utf8(r.take(name_len)?).map_err(|_| corrupt("name is not UTF-8"))?.to_owned();
        let unk = r.u32()?;
        let tokens_max = r.u32()?;
        let word_chars_max = r.u32()?;
        if unk >= vocab_count || tokens_max == 0 || tokens_max > limits::STATIC_EMBED_TOKENS_MAX || word_chars_max == 0 || word_chars_max > limits::STATIC_EMBED_WORD_CHARS_MAX {
            return Err(corrupt("header values out of range"));
        }
        let (mut heads, mut tails) = (HashMap::with_capacity(vocab_count), HashMap::new());
        for id in 0..vocab_count as u32 {
            let len = r.take(1)?[0] as usize;
            let token = std::str::from_utf8(r.take(len)?).map_err(|_| corrupt(format!("token {id} is not UTF-8")))?;
            // The first id of a duplicated token wins, as in a HF vocab.
            match token.strip_prefix("##") {
                Some(tail) if !tail.is_empty() => tails.entry(tail.into()).or_insert(id),
                _ => heads.entry(token.into()).or_insert(id),
            };
        }
        let scales: Vec<f32> = r.take(vocab_count * 4)?.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        if let Some(i) = scales.iter().position(|s| !s.is_finite()) {
            return Err(corrupt(format!("scale of token {i} is not finite")));
        }
        let rows: Vec<i8> = r.take(vocab_count * dim)?.iter().map(|b| *b as i8).collect();
        if r.at != body.len() {
            return Err(corrupt("trailing bytes"));
        }
        Ok(StaticEmbedder { name, dim, tokens_max, word_chars_max, unk: unk as u32, heads, tails, scales, rows })
    }

    /// The identity stored with the vectors it makes (from the asset).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Output dimensions.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Calls `emit` with each token id of `text`, at most `tokens_max` of them.
    pub fn for_each_token(&self, text: &str, mut emit: impl FnMut(u32)) {
        let mut count = 0usize;
        let mut word = String::new();
        let mut folded = String::new();
        let mut flush = |word: &mut String, count: &mut usize| {
            if !word.is_empty() && *count < self.tokens_max {
                self.wordpiece(word, &mut |id| {
                    if *count < self.tokens_max {
                        *count += 1;
                        emit(id);
                    }
                });
            }
            word.clear();
        };
        for raw in text.chars() {
            if count >= self.tokens_max {
                break;
            }
            if is_space(raw) {
                flush(&mut word, &mut count);
                continue;
            }
            if raw == '\0' || raw == '\u{fffd}' || is_control(raw) {
                continue;
            }
            folded.clear();
            for c in raw.to_lowercase() {
                if !is_combining_mark(c) {
                    push_folded(c, &mut folded);
                }
            }
            for c in folded.chars() {
                if is_punctuation(c) || is_cjk(c) {
                    flush(&mut word, &mut count);
                    word.push(c);
                    flush(&mut word, &mut count);
                } else {
                    word.push(c);
                }
            }
        }
        flush(&mut word, &mut count);
    }

    /// Greedy longest-match-first WordPiece of one word.
    fn wordpiece(&self, word: &str, emit: &mut impl FnMut(u32)) {
        if word.chars().count() > self.word_chars_max {
            emit(self.unk);
            return;
        }
        // Char boundaries, so every candidate piece is a whole-char slice.
        let bounds: Vec<usize> = word.char_indices().map(|(i, _)| i).chain(std::iter::once(word.len())).collect();
        let mut pieces: Vec<u32> = Vec::new();
        let mut start = 0usize;
        while start + 1 < bounds.len() {
            let table = if start == 0 { &self.heads } else { &self.tails };
            let found = (start + 1..bounds.len()).rev().find_map(|end| table.get(&word[bounds[start]..bounds[end]]).map(|id| (end, *id)));
            match found {
                Some((end, id)) => {
                    pieces.push(id);
                    start = end;
                }
                None => {
                    emit(self.unk);
                    return;
                }
            }
        }
        pieces.into_iter().for_each(emit);
    }

    /// Writes the unit vector of `text` into `out` (exactly `dim`
    /// components). A text with no known token gets the first basis vector,
    /// as the hashed embedder does, so every output is a valid cosine vector.
    pub fn embed(&self, text: &str, out: &mut [f32]) -> Result<()> {
        if out.len() != self.dim {
            return Err(Error::InvalidVector { code: VectorCode::DimensionMismatch, detail: format!("output has {} components, the embedder {}", out.len(), self.dim) });
        }
        if text.len() > limits::MEMORY_TEXT_BYTES_MAX {
            return Err(Error::too_large("text", text.len(), limits::MEMORY_TEXT_BYTES_MAX));
        }
        out.fill(0.0);
        self.for_each_token(text, |id| {
            let id = id as usize;
            let scale = self.scales[id];
            if scale == 0.0 {
                return;
            }
            let row = &self.rows[id * self.dim..(id + 1) * self.dim];
            for (o, q) in out.iter_mut().zip(row) {
                *o += scale * f32::from(*q);
            }
        });
        let norm = out.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 && norm.is_finite() {
            out.iter_mut().for_each(|x| *x /= norm);
        } else {
            out.fill(0.0);
            out[0] = 1.0;
        }
        Ok(())
    }

    /// [`StaticEmbedder::embed`] into a new vector.
    pub fn embed_vec(&self, text: &str) -> Result<Vec<f32>> {
        let mut v = vec![0.0; self.dim];
        self.embed(text, &mut v)?;
        Ok(v)
    }
}

/// The offline default: the static embedder's unit vector and the hashed
/// one's side by side, scaled so that their cosine is
/// `w · static + (1 − w) · hashed` with `w` =
/// [`limits::EMBED_MIX_STATIC_WEIGHT`]. Paraphrase from the one, rare
/// words and identifiers from the other (`BENCHMARKS.md`: better than
/// either alone on agent memories, within 0.011 of the hashed one on
/// documentation).
#[derive(Debug, Clone)]
pub struct MixedEmbedder {
    model: std::rc::Rc<StaticEmbedder>,
    hash: Embedder,
}

impl MixedEmbedder {
    /// The static model with the hashed embedder at its default width.
    pub fn new(model: std::rc::Rc<StaticEmbedder>) -> MixedEmbedder {
        MixedEmbedder { model, hash: Embedder::default() }
    }

    /// Output dimensions: the two widths added.
    pub fn dim(&self) -> usize {
        self.model.dim() + self.hash.dim()
    }

    /// Names both parts and the weight, since any of them changes the vectors.
    pub fn identity(&self) -> String {
        format!("{}+{}@{}", self.model.name(), self.hash.identity(), limits::EMBED_MIX_STATIC_WEIGHT)
    }

    /// The unit vector of `text`.
    pub fn embed_vec(&self, text: &str) -> Result<Vec<f32>> {
        let mut v = vec![0.0; self.dim()];
        let (s, h) = v.split_at_mut(self.model.dim());
        self.model.embed(text, s)?;
        self.hash.embed(text, h)?;
        let (ws, wh) = (limits::EMBED_MIX_STATIC_WEIGHT.sqrt(), (1.0 - limits::EMBED_MIX_STATIC_WEIGHT).sqrt());
        s.iter_mut().for_each(|x| *x *= ws);
        h.iter_mut().for_each(|x| *x *= wh);
        Ok(v)
    }
}

/// Whether `c` falls in one of the sorted inclusive `ranges`.
fn in_ranges(c: char, ranges: &[(u32, u32)]) -> bool {
    let u = c as u32;
    ranges.binary_search_by(|&(lo, hi)| if hi < u { std::cmp::Ordering::Less } else if lo > u { std::cmp::Ordering::Greater } else { std::cmp::Ordering::Equal }).is_ok()
}

/// BERT's whitespace: tab, newline, carriage return and the space
/// separators (Zs); other controls (vertical tab, form feed) are dropped.
fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r') || (c.is_whitespace() && !c.is_control() && !matches!(c, '\u{2028}' | '\u{2029}'))
}

/// BERT drops control, format and private-use characters.
fn is_control(c: char) -> bool {
    c.is_control() || (!c.is_ascii() && in_ranges(c, tables::DROP))
}

/// Combining marks (category Mn), dropped as NFD stripping does.
fn is_combining_mark(c: char) -> bool {
    !c.is_ascii() && in_ranges(c, tables::MARKS)
}

/// ASCII punctuation and symbols (BERT counts them all), and Unicode
/// punctuation.
fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation() || (!c.is_ascii() && in_ranges(c, tables::PUNCT))
}

/// CJK ideographs, which BERT splits one per word.
fn is_cjk(c: char) -> bool {
    matches!(c, '\u{4e00}'..='\u{9fff}' | '\u{3400}'..='\u{4dbf}' | '\u{20000}'..='\u{2a6df}' | '\u{2a700}'..='\u{2b73f}' | '\u{2b740}'..='\u{2b81f}' | '\u{2b820}'..='\u{2ceaf}' | '\u{f900}'..='\u{faff}' | '\u{2f800}'..='\u{2fa1f}')
}

/// Pushes what NFD leaves of a lowercase `c` once its marks are dropped:
/// a Hangul syllable's jamo (decomposed by the Unicode algorithm), a
/// letter's base letter, or `c` itself.
fn push_folded(c: char, out: &mut String) {
    const S_BASE: u32 = 0xac00;
    const S_COUNT: u32 = 11_172;
    let u = c as u32;
    if (S_BASE..S_BASE + S_COUNT).contains(&u) {
        let s = u - S_BASE;
        let (l, v, t) = (0x1100 + s / (21 * 28), 0x1161 + (s % (21 * 28)) / 28, 0x11a7 + s % 28);
        for j in [l, v].into_iter().chain((t != 0x11a7).then_some(t)) {
            out.extend(char::from_u32(j));
        }
        return;
    }
    if (0xc0..=0xffff).contains(&u) {
        if let Ok(i) = tables::FOLD.binary_search_by_key(&(u as u16), |&(from, _)| from) {
            out.extend(char::from_u32(u32::from(tables::FOLD[i].1)));
            return;
        }
    }
    out.push(c);
}
