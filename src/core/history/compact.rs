//! Deciding what to compact.
//!
//! History is compacted when its tokens (running summary plus verbatim
//! turns, each with the chat-format overhead) pass `summarize_at_tokens`: the
//! oldest turns go to the summarizer, the newest turns worth up to
//! `keep_recent_tokens` stay verbatim. The plan is pure; the summarizer is a
//! hook the caller runs between [`plan`] and the `SessionCompact` op, and the
//! op re-checks the plan against the session so a turn appended meanwhile is
//! never lost.

use crate::core::budget::Counter;
use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::session::Message;

/// When and how much to compact, with documented defaults derived from the
/// model window (AMS summarizes at 0.7 of the window).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactionConfig {
    /// The model's context window.
    pub max_tokens: usize,
    /// Compact once the history counts more than this. Default 70 % of
    /// `max_tokens`.
    pub summarize_at_tokens: usize,
    /// Turns kept verbatim after compaction, newest first. Default 40 % of
    /// `max_tokens`, so a compaction frees well over a quarter of the window
    /// and does not run again on the next turn.
    pub keep_recent_tokens: usize,
    /// Longest summary the summarizer may return. Default 10 % of
    /// `max_tokens`, at most [`limits::SUMMARY_TOKENS_DEFAULT_MAX`].
    pub summary_tokens_max: usize,
    /// Chat-format overhead counted per turn (OpenAI's is 3).
    pub message_overhead_tokens: usize,
}

/// `floor(n × percent / 100)` without overflow.
fn percent_of(n: usize, percent: usize) -> usize {
    n / 100 * percent + n % 100 * percent / 100
}

impl CompactionConfig {
    /// The defaults for a window of `max_tokens`.
    pub fn for_window(max_tokens: usize) -> CompactionConfig {
        CompactionConfig {
            max_tokens,
            summarize_at_tokens: percent_of(max_tokens, limits::SUMMARIZE_AT_PERCENT_DEFAULT),
            keep_recent_tokens: percent_of(max_tokens, limits::KEEP_RECENT_PERCENT_DEFAULT),
            summary_tokens_max: percent_of(max_tokens, limits::SUMMARY_PERCENT_DEFAULT).clamp(1, limits::SUMMARY_TOKENS_DEFAULT_MAX),
            message_overhead_tokens: limits::MESSAGE_OVERHEAD_TOKENS_DEFAULT,
        }
    }

    /// Checks the bounds and that the thresholds are ordered.
    pub fn validate(&self) -> Result<()> {
        if self.max_tokens < limits::HISTORY_WINDOW_TOKENS_MIN || self.max_tokens > limits::WINDOW_TOKENS_MAX {
            return Err(Error::invalid("max_tokens", format!("must be {} to {}", limits::HISTORY_WINDOW_TOKENS_MIN, limits::WINDOW_TOKENS_MAX)));
        }
        if self.summarize_at_tokens == 0 || self.summarize_at_tokens > self.max_tokens {
            return Err(Error::invalid("summarize_at_tokens", "must be 1 to max_tokens"));
        }
        if self.keep_recent_tokens >= self.summarize_at_tokens {
            return Err(Error::invalid("keep_recent_tokens", "must be below summarize_at_tokens"));
        }
        if self.summary_tokens_max == 0 || self.summary_tokens_max >= self.summarize_at_tokens {
            return Err(Error::invalid("summary_tokens_max", "must be 1 to below summarize_at_tokens"));
        }
        if self.message_overhead_tokens > limits::MESSAGE_OVERHEAD_TOKENS_MAX {
            return Err(Error::invalid("message_overhead_tokens", format!("must be at most {}", limits::MESSAGE_OVERHEAD_TOKENS_MAX)));
        }
        Ok(())
    }
}

/// Roles whose message answers the call before it: a boundary is never put
/// just before one, so a tool call and its result stay on the same side.
pub fn is_tool_result(role: &str) -> bool {
    role == "tool" || role == "function"
}

/// Token usage of a history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    pub summary_tokens: usize,
    pub messages_tokens: usize,
}

impl Usage {
    pub fn total_tokens(&self) -> usize {
        self.summary_tokens + self.messages_tokens
    }
}

/// Counts a history as the compaction rule sees it.
pub fn usage(counter: &dyn Counter, config: &CompactionConfig, summary: Option<&str>, messages: &[Message]) -> Usage {
    let overhead = config.message_overhead_tokens;
    let summary_tokens = summary.filter(|s| !s.is_empty()).map_or(0, |s| counter.count(s) + overhead);
    let messages_tokens = messages.iter().map(|m| counter.count(&m.content) + overhead).sum();
    Usage { summary_tokens, messages_tokens }
}

/// The oldest `count` turns are to be compacted; `through_id` is the last
/// of them, which the op checks so a stale plan is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub count: usize,
    pub through_id: String,
    pub usage: Usage,
    /// Tokens of the turns that stay verbatim.
    pub kept_tokens: usize,
}

/// Whether the history needs compacting, and where to cut it.
///
/// Returns `None` below the threshold, or when no cut is possible (a single
/// tool-call group newer than everything else fills the window: compacting
/// nothing is better than splitting it).
pub fn plan(counter: &dyn Counter, config: &CompactionConfig, summary: Option<&str>, messages: &[Message]) -> Result<Option<Plan>> {
    config.validate()?;
    let use_ = usage(counter, config, summary, messages);
    if use_.total_tokens() <= config.summarize_at_tokens || messages.is_empty() {
        return Ok(None);
    }
    let overhead = config.message_overhead_tokens;
    // Walk back from the newest turn while the kept part fits.
    let mut cut = messages.len();
    let mut kept_tokens = 0usize;
    while cut > 0 {
        let t = counter.count(&messages[cut - 1].content) + overhead;
        if kept_tokens + t > config.keep_recent_tokens {
            break;
        }
        kept_tokens += t;
        cut -= 1;
    }
    // Never start the kept part with a tool result: move the cut forward so
    // the result goes with its call into the summary.
    while cut < messages.len() && is_tool_result(&messages[cut].role) {
        kept_tokens -= counter.count(&messages[cut].content) + overhead;
        cut += 1;
    }
    if cut == 0 {
        return Ok(None);
    }
    Ok(Some(Plan { count: cut, through_id: messages[cut - 1].id.clone(), usage: use_, kept_tokens }))
}

/// Checks a summarizer's answer: non-blank, within the byte limit and
/// within `summary_tokens_max`. A bad answer leaves the history untouched.
pub fn check_summary(counter: &dyn Counter, config: &CompactionConfig, summary: &str) -> Result<()> {
    let fail = |reason: String| Err(Error::HookFailed { hook: "summarizer".into(), reason });
    if summary.trim().is_empty() {
        return fail("returned an empty summary".into());
    }
    if summary.len() > limits::CONTEXT_BYTES_MAX {
        return fail(format!("returned {} bytes, over the limit of {}", summary.len(), limits::CONTEXT_BYTES_MAX));
    }
    let tokens = counter.count(summary);
    if tokens > config.summary_tokens_max {
        return fail(format!("returned {tokens} tokens, over summary_tokens_max {}", config.summary_tokens_max));
    }
    Ok(())
}
