//! The context budget: what goes into a model's window.
//!
//! Slots carry a priority. Building puts them in priority order (highest
//! first, ties in the order given); a slot that does not fit is truncated on
//! a token boundary when its priority is at or above the truncation
//! threshold (default 7), and dropped otherwise. Room for the reply is
//! reserved first, then tool schemas and per-message overhead are counted.

pub mod models;

use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::tokenizer::{Encoding, Specials};

/// Counts tokens and cuts text to a token budget.
pub trait Counter {
    /// Tokens of `text` (special-token text counts as ordinary text).
    fn count(&self, text: &str) -> usize;
    /// The longest prefix of `text` that ends on a token boundary and a
    /// character boundary and counts at most `tokens_max`.
    fn truncate<'a>(&self, text: &'a str, tokens_max: usize) -> &'a str;
    /// A stable id of what this counter counts (its encoding), under which a
    /// turn may remember its count; `None` (the default) for counters whose
    /// answers may change, such as a caller's function.
    fn cache_key(&self) -> Option<u8> {
        None
    }
}

fn floor_char_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

impl Counter for Encoding {
    fn cache_key(&self) -> Option<u8> {
        Some(1 + self.name() as u8)
    }

    fn count(&self, text: &str) -> usize {
        // Slot text is bounded on input, so the size check cannot fail here.
        Encoding::count(self, text, Specials::AsText).unwrap_or(usize::MAX)
    }

    fn truncate<'a>(&self, text: &'a str, tokens_max: usize) -> &'a str {
        let mut ids = Vec::new();
        if self.encode(text, Specials::AsText, &mut ids).is_err() {
            // Over the input limit (callers bound slots first): keep nothing.
            return "";
        }
        if ids.len() <= tokens_max {
            return text;
        }
        // Tokens concatenate to the text's bytes, so the bytes of the first k
        // tokens are a prefix of it. Re-tokenizing a prefix can differ at the
        // cut, so step back until the prefix itself fits.
        let mut k = tokens_max;
        loop {
            let bytes: usize = ids[..k].iter().map(|&t| self.ranks().token(t).len()).sum();
            let prefix = &text[..floor_char_boundary(text, bytes)];
            let n = Counter::count(self, prefix);
            if n <= tokens_max || k == 0 {
                return prefix;
            }
            k = k.saturating_sub((n - tokens_max).max(1));
        }
    }
}

/// The calibrated estimator for models with no published tokenizer: ASCII
/// bytes and non-ASCII characters weighted separately (see BENCHMARKS.md for
/// its error against o200k_base on the shared corpus).
pub fn estimate_tokens(text: &str) -> usize {
    let (mut ascii, mut other) = (0usize, 0usize);
    for c in text.chars() {
        if c.is_ascii() {
            ascii += 1;
        } else {
            other += 1;
        }
    }
    (ascii * ESTIMATE_ASCII_MILLI + other * ESTIMATE_OTHER_MILLI).div_ceil(1000)
}

/// Tokens per 1,000 ASCII bytes and per 1,000 non-ASCII characters.
const ESTIMATE_ASCII_MILLI: usize = 235;
const ESTIMATE_OTHER_MILLI: usize = 750;

/// The estimator as a [`Counter`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Estimator;

impl Counter for Estimator {
    fn cache_key(&self) -> Option<u8> {
        Some(0)
    }

    fn count(&self, text: &str) -> usize {
        estimate_tokens(text)
    }

    fn truncate<'a>(&self, text: &'a str, tokens_max: usize) -> &'a str {
        // One pass: the estimate only grows as characters are added.
        let budget_milli = tokens_max.saturating_mul(1000);
        let mut milli = 0usize;
        for (i, c) in text.char_indices() {
            milli += if c.is_ascii() { ESTIMATE_ASCII_MILLI } else { ESTIMATE_OTHER_MILLI };
            if milli > budget_milli {
                return &text[..i];
            }
        }
        text
    }
}

/// A named piece of context with a priority (0 to [`limits::SLOT_PRIORITY_MAX`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slot {
    pub name: String,
    pub content: String,
    pub priority: u8,
}

/// What happened to a slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotStatus {
    Kept,
    Truncated,
    Dropped,
}

impl SlotStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            SlotStatus::Kept => "kept",
            SlotStatus::Truncated => "truncated",
            SlotStatus::Dropped => "dropped",
        }
    }
}

/// A slot's outcome, with the tokens it takes (overhead included).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotReport {
    pub name: String,
    pub status: SlotStatus,
    pub tokens: usize,
}

/// A budget to build within, with documented defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Budget {
    /// The model's whole window (input and output).
    pub window_tokens: usize,
    /// Kept free for the reply. Default 0.
    pub reserve_for_output_tokens: usize,
    /// Slots at or above this priority are truncated rather than dropped.
    /// Default 7.
    pub truncate_at_priority: u8,
    /// Chat-format overhead per slot (OpenAI's is 3). Default 3.
    pub message_overhead_tokens: usize,
}

impl Budget {
    /// A budget for a window, with the defaults above.
    pub fn new(window_tokens: usize) -> Budget {
        Budget { window_tokens, reserve_for_output_tokens: 0, truncate_at_priority: 7, message_overhead_tokens: limits::MESSAGE_OVERHEAD_TOKENS_DEFAULT }
    }

    fn validate(&self) -> Result<()> {
        if self.window_tokens == 0 || self.window_tokens > limits::WINDOW_TOKENS_MAX {
            return Err(Error::invalid("max_tokens", format!("must be 1 to {}", limits::WINDOW_TOKENS_MAX)));
        }
        if self.reserve_for_output_tokens >= self.window_tokens {
            return Err(Error::invalid("reserve_for_output", "must be smaller than the window"));
        }
        if usize::from(self.truncate_at_priority) > usize::from(limits::SLOT_PRIORITY_MAX) + 1 {
            return Err(Error::invalid("truncate_at_priority", format!("must be 0 to {}", limits::SLOT_PRIORITY_MAX + 1)));
        }
        if self.message_overhead_tokens > limits::MESSAGE_OVERHEAD_TOKENS_MAX {
            return Err(Error::invalid("message_overhead_tokens", format!("must be at most {}", limits::MESSAGE_OVERHEAD_TOKENS_MAX)));
        }
        Ok(())
    }
}

/// A built context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Built {
    /// Kept and truncated slots in priority order, separated by blank lines.
    pub context: String,
    /// Tokens used: slots, their overhead, and tool schemas.
    pub used_tokens: usize,
    /// Tokens left for more input (the reserve is not counted as left).
    pub left_tokens: usize,
    pub window_tokens: usize,
    pub tools_tokens: usize,
    /// One report per slot, in context (priority) order.
    pub slots: Vec<SlotReport>,
}

fn validate_slots(slots: &[Slot]) -> Result<()> {
    if slots.len() > limits::SLOTS_MAX {
        return Err(Error::LimitExceeded { what: "slots".into(), limit: limits::SLOTS_MAX as u64 });
    }
    let mut total = 0usize;
    for (i, s) in slots.iter().enumerate() {
        if s.name.is_empty() || s.name.len() > limits::ID_BYTES_MAX {
            return Err(Error::invalid(format!("slots[{i}].name"), format!("must be 1 to {} bytes", limits::ID_BYTES_MAX)));
        }
        if s.priority > limits::SLOT_PRIORITY_MAX {
            return Err(Error::invalid(format!("slots[{i}].priority"), format!("must be 0 to {}", limits::SLOT_PRIORITY_MAX)));
        }
        total += s.content.len();
    }
    if total > limits::TOKENIZER_INPUT_BYTES_MAX {
        return Err(Error::too_large("slots", total, limits::TOKENIZER_INPUT_BYTES_MAX));
    }
    Ok(())
}

/// Builds the context: reserve, tools, then slots by priority.
pub fn build(counter: &dyn Counter, budget: &Budget, slots: &[Slot], tools_json: Option<&str>) -> Result<Built> {
    budget.validate()?;
    validate_slots(slots)?;
    let tools_tokens = match tools_json {
        Some(t) if t.len() > limits::TOKENIZER_INPUT_BYTES_MAX => return Err(Error::too_large("tools", t.len(), limits::TOKENIZER_INPUT_BYTES_MAX)),
        Some(t) => counter.count(t),
        None => 0,
    };
    let available = budget.window_tokens - budget.reserve_for_output_tokens;
    let mut order: Vec<usize> = (0..slots.len()).collect();
    // Stable: equal priorities keep the caller's order.
    order.sort_by_key(|&i| std::cmp::Reverse(slots[i].priority));
    let mut used = tools_tokens.min(available);
    let mut parts: Vec<&str> = Vec::with_capacity(slots.len());
    let mut reports = Vec::with_capacity(slots.len());
    for i in order {
        let s = &slots[i];
        let overhead = budget.message_overhead_tokens;
        let tokens = counter.count(&s.content).saturating_add(overhead);
        let room = available.saturating_sub(used);
        let (status, text, took) = if tokens <= room {
            (SlotStatus::Kept, s.content.as_str(), tokens)
        } else if s.priority >= budget.truncate_at_priority && room > overhead {
            let cut = counter.truncate(&s.content, room - overhead);
            if cut.is_empty() {
                (SlotStatus::Dropped, "", 0)
            } else {
                (SlotStatus::Truncated, cut, counter.count(cut) + overhead)
            }
        } else {
            (SlotStatus::Dropped, "", 0)
        };
        if status != SlotStatus::Dropped {
            parts.push(text);
            used += took;
        }
        reports.push(SlotReport { name: s.name.clone(), status, tokens: took });
    }
    Ok(Built { context: parts.join("\n\n"), used_tokens: used, left_tokens: available.saturating_sub(used), window_tokens: budget.window_tokens, tools_tokens, slots: reports })
}

#[cfg(test)]
mod tests;
