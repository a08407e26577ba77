//! Context windows of current models, and the tokenizer each one uses.
//!
//! Vendors that publish no tokenizer (Anthropic, Google, Meta, Mistral) map
//! to the calibrated estimator; OpenAI models map to their exact encoding.
//! Callers override or extend the table by passing their own [`Model`].

use crate::core::tokenizer::EncodingName;

/// How a model's tokens are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counting {
    /// Exact, with this encoding.
    Exact(EncodingName),
    /// The calibrated estimator (see [`super::estimate_tokens`]).
    Estimate,
    /// A counter the caller supplies (never in the table).
    Custom,
}

/// One model's limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Model {
    pub name: &'static str,
    pub counting: Counting,
    /// Input plus output tokens.
    pub context_window_tokens: u32,
    /// The most the model will generate in one reply.
    pub output_tokens_max: u32,
}

const fn exact(name: &'static str, enc: EncodingName, window: u32, output: u32) -> Model {
    Model { name, counting: Counting::Exact(enc), context_window_tokens: window, output_tokens_max: output }
}

const fn estimate(name: &'static str, window: u32, output: u32) -> Model {
    Model { name, counting: Counting::Estimate, context_window_tokens: window, output_tokens_max: output }
}

use EncodingName::{Cl100kBase as CL, O200kBase as O2};

/// Vendor-published limits; a name matches itself and dated snapshots of it
/// (`gpt-4o-2024-08-06` matches `gpt-4o`), longest prefix first.
pub const MODELS: &[Model] = &[
    exact("gpt-5-mini", O2, 400_000, 128_000),
    exact("gpt-5-nano", O2, 400_000, 128_000),
    exact("gpt-5", O2, 400_000, 128_000),
    exact("gpt-4.1-mini", O2, 1_047_576, 32_768),
    exact("gpt-4.1-nano", O2, 1_047_576, 32_768),
    exact("gpt-4.1", O2, 1_047_576, 32_768),
    exact("gpt-4o-mini", O2, 128_000, 16_384),
    exact("gpt-4o", O2, 128_000, 16_384),
    exact("o4-mini", O2, 200_000, 100_000),
    exact("o3-mini", O2, 200_000, 100_000),
    exact("o3", O2, 200_000, 100_000),
    exact("o1-mini", O2, 128_000, 65_536),
    exact("o1", O2, 200_000, 100_000),
    exact("gpt-4-turbo", CL, 128_000, 4_096),
    exact("gpt-4", CL, 8_192, 8_192),
    exact("gpt-3.5-turbo", CL, 16_385, 4_096),
    estimate("claude-opus-4", 200_000, 32_000),
    estimate("claude-sonnet-4", 200_000, 64_000),
    estimate("claude-3-7-sonnet", 200_000, 64_000),
    estimate("claude-3-5-sonnet", 200_000, 8_192),
    estimate("claude-3-5-haiku", 200_000, 8_192),
    estimate("claude-3-opus", 200_000, 4_096),
    estimate("claude-3-haiku", 200_000, 4_096),
    estimate("gemini-2.5-pro", 1_048_576, 65_536),
    estimate("gemini-2.5-flash", 1_048_576, 65_536),
    estimate("gemini-2.0-flash", 1_048_576, 8_192),
    estimate("gemini-1.5-pro", 2_097_152, 8_192),
    estimate("llama-3.3-70b", 128_000, 4_096),
    estimate("llama-3.1-405b", 128_000, 4_096),
    estimate("llama-3.1-8b", 128_000, 4_096),
    estimate("mistral-large", 128_000, 4_096),
    estimate("mistral-small", 32_000, 4_096),
    estimate("codestral", 256_000, 4_096),
];

/// The model named `name` (or a dated variant of it), if known.
pub fn model(name: &str) -> Option<Model> {
    MODELS.iter().filter(|m| name == m.name || name.strip_prefix(m.name).is_some_and(|rest| rest.starts_with('-'))).max_by_key(|m| m.name.len()).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_dated_variants_resolve_to_the_longest_match() {
        assert_eq!(model("gpt-4o").unwrap().context_window_tokens, 128_000);
        assert_eq!(model("gpt-4o-mini-2024-07-18").unwrap().name, "gpt-4o-mini");
        assert_eq!(model("gpt-4o-2024-08-06").unwrap().name, "gpt-4o");
        assert_eq!(model("gpt-4-0613").unwrap().counting, Counting::Exact(EncodingName::Cl100kBase));
        assert_eq!(model("claude-sonnet-4-20250514").unwrap().counting, Counting::Estimate);
        assert!(model("gpt-4ox").is_none());
        assert!(model("unknown").is_none());
        for m in MODELS {
            assert!(m.output_tokens_max <= m.context_window_tokens, "{}", m.name);
        }
    }
}
