//! Exact OpenAI BPE tokenizers (`cl100k_base`, `o200k_base`), identical to
//! tiktoken: the same pre-tokenizer split ([`pretok`]), the same merge
//! algorithm ([`bpe`]), the same ranks (loaded from a separate asset so the
//! default wasm carries none, see [`ranks`]).
//!
//! Counting treats text that looks like a special token (`<|endoftext|>`)
//! as ordinary text, as tiktoken's `encode_ordinary` does, unless the caller
//! opts in to special tokens.

mod bpe;
pub mod pretok;
pub mod ranks;
mod unicode_table;

use crate::core::error::{Error, Result};
use crate::core::limits;
use pretok::Pattern;
use ranks::Ranks;

/// The encodings edgemem knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EncodingName {
    Cl100kBase,
    O200kBase,
}

impl EncodingName {
    /// Parses `cl100k_base` or `o200k_base`.
    pub fn parse(name: &str) -> Result<EncodingName> {
        match name {
            "cl100k_base" => Ok(EncodingName::Cl100kBase),
            "o200k_base" => Ok(EncodingName::O200kBase),
            other => Err(Error::invalid("encoding", format!("unknown encoding {other:?} (known: cl100k_base, o200k_base)"))),
        }
    }

    /// The canonical name.
    pub fn as_str(self) -> &'static str {
        match self {
            EncodingName::Cl100kBase => "cl100k_base",
            EncodingName::O200kBase => "o200k_base",
        }
    }

    /// Number of ranked (non-special) tokens.
    pub fn token_count(self) -> usize {
        match self {
            EncodingName::Cl100kBase => 100_256,
            EncodingName::O200kBase => 199_998,
        }
    }

    /// Special tokens and their ids (tiktoken's `openai_public.py`).
    pub fn special_tokens(self) -> &'static [(&'static str, u32)] {
        match self {
            EncodingName::Cl100kBase => &[
                ("<|endoftext|>", 100_257),
                ("<|fim_prefix|>", 100_258),
                ("<|fim_middle|>", 100_259),
                ("<|fim_suffix|>", 100_260),
                ("<|endofprompt|>", 100_276),
            ],
            EncodingName::O200kBase => &[("<|endoftext|>", 199_999), ("<|endofprompt|>", 200_018)],
        }
    }

    fn pattern(self) -> Pattern {
        match self {
            EncodingName::Cl100kBase => Pattern::Cl100k,
            EncodingName::O200kBase => Pattern::O200k,
        }
    }
}

/// A loaded encoding.
pub struct Encoding {
    name: EncodingName,
    ranks: Ranks,
}

/// Whether special-token text is encoded as the special token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Specials {
    /// `<|endoftext|>` is ordinary text (tiktoken's `encode_ordinary`).
    #[default]
    AsText,
    /// Special-token text becomes the special token's id.
    Allowed,
}

impl Encoding {
    /// Loads an encoding from its asset (see [`ranks`]).
    pub fn from_asset(name: EncodingName, asset: &[u8]) -> Result<Encoding> {
        Ok(Encoding { name, ranks: Ranks::from_asset(asset, name.token_count())? })
    }

    /// Builds an encoding from ranks already in memory (the asset generator
    /// and tests).
    pub fn from_ranks(name: EncodingName, ranks: Ranks) -> Result<Encoding> {
        if ranks.len() != name.token_count() {
            return Err(Error::invalid("ranks", format!("{} tokens, expected {}", ranks.len(), name.token_count())));
        }
        Ok(Encoding { name, ranks })
    }

    pub fn name(&self) -> EncodingName {
        self.name
    }

    pub fn ranks(&self) -> &Ranks {
        &self.ranks
    }

    fn check_input(text: &str) -> Result<()> {
        if text.len() > limits::TOKENIZER_INPUT_BYTES_MAX {
            return Err(Error::too_large("text", text.len(), limits::TOKENIZER_INPUT_BYTES_MAX));
        }
        Ok(())
    }

    /// Calls `emit` with each token of ordinary text.
    fn ordinary(&self, text: &str, scratch: &mut bpe::Scratch, emit: &mut impl FnMut(u32)) {
        for piece in pretok::pieces(self.name.pattern(), text) {
            let bytes = piece.as_bytes();
            match self.ranks.get(bytes) {
                Some(r) => emit(r),
                None => bpe::merge(&self.ranks, bytes, scratch, &mut *emit),
            }
        }
    }

    /// Splits `text` around special-token text when `specials` allows it.
    fn run(&self, text: &str, specials: Specials, emit: &mut impl FnMut(u32)) {
        let mut scratch = bpe::Scratch::default();
        if specials == Specials::AsText {
            self.ordinary(text, &mut scratch, emit);
            return;
        }
        let table = self.name.special_tokens();
        let mut rest = text;
        loop {
            let next = table.iter().filter_map(|&(s, id)| rest.find(s).map(|at| (at, s, id))).min_by_key(|&(at, _, _)| at);
            match next {
                None => {
                    self.ordinary(rest, &mut scratch, emit);
                    return;
                }
                Some((at, s, id)) => {
                    self.ordinary(&rest[..at], &mut scratch, emit);
                    emit(id);
                    rest = &rest[at + s.len()..];
                }
            }
        }
    }

    /// Token ids of `text`, appended to `out` (caller-owned, reusable).
    pub fn encode(&self, text: &str, specials: Specials, out: &mut Vec<u32>) -> Result<()> {
        Self::check_input(text)?;
        self.run(text, specials, &mut |t| out.push(t));
        Ok(())
    }

    /// Number of tokens of `text`, without materializing them.
    pub fn count(&self, text: &str, specials: Specials) -> Result<usize> {
        Self::check_input(text)?;
        let mut n = 0usize;
        self.run(text, specials, &mut |_| n += 1);
        Ok(n)
    }

    /// The bytes of `tokens` (special tokens decode to their text).
    pub fn decode(&self, tokens: &[u32]) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(tokens.len() * 4);
        for &t in tokens {
            if (t as usize) < self.ranks.len() {
                out.extend_from_slice(self.ranks.token(t));
            } else if let Some((s, _)) = self.name.special_tokens().iter().find(|(_, id)| *id == t) {
                out.extend_from_slice(s.as_bytes());
            } else {
                return Err(Error::invalid("tokens", format!("{t} is not a token of {}", self.name.as_str())));
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
