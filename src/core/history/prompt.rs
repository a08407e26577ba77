//! Prompt assembly: system prompt and patches, the running summary, recent
//! turns, recalled memories and the query, fitted into a model's window.
//!
//! What gives way first when the window is short: the oldest turns, then the
//! lowest-ranked memories. The query, the system text and the summary are
//! truncated on a token boundary rather than dropped. A tool call and its
//! results are kept or dropped together. Every cut is reported.

use serde::Serialize;
use serde_json::{json, Value};

use crate::core::budget::Counter;
use crate::core::error::{Error, Result};
use crate::core::history::compact::is_tool_result;
use crate::core::limits;
use crate::core::session::Message;

/// One chat message in the neutral shape (role, text).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChatMessage {
    pub role: String,
    pub content: String,
}

/// Heading of the summary message (a system message, first after the
/// system prompt, as AMS's memory prompt puts it).
pub const SUMMARY_HEADING: &str = "Summary of the earlier conversation:";
/// Heading of the recalled-memories message.
pub const MEMORIES_HEADING: &str = "Relevant long-term memories:";

/// The summary first, then the verbatim turns.
pub fn to_messages(summary: Option<&str>, turns: &[Message]) -> Vec<ChatMessage> {
    let mut out = Vec::with_capacity(turns.len() + 1);
    if let Some(s) = summary.filter(|s| !s.trim().is_empty()) {
        out.push(ChatMessage { role: "system".into(), content: format!("{SUMMARY_HEADING}\n{s}") });
    }
    out.extend(turns.iter().map(|m| ChatMessage { role: m.role.clone(), content: m.content.clone() }));
    out
}

/// OpenAI Chat Completions `messages`. A stored tool result has no
/// `tool_call_id` to pair with, which OpenAI requires for role `tool`, so it
/// goes as a user message marked as a tool result.
pub fn render_openai(messages: &[ChatMessage]) -> Value {
    serde_json::to_value(openai_messages(messages)).unwrap_or_default()
}

/// One message of the OpenAI shape, borrowing the text it can: what the
/// prompt route serializes straight to bytes.
#[derive(Debug, Serialize)]
pub struct RoleContent<'a> {
    pub role: &'a str,
    pub content: std::borrow::Cow<'a, str>,
}

/// The OpenAI chat shape: system/user/assistant/developer kept, tool results
/// and unknown roles folded into labelled user turns.
pub fn openai_messages(messages: &[ChatMessage]) -> Vec<RoleContent<'_>> {
    use std::borrow::Cow;
    messages
        .iter()
        .map(|m| match m.role.as_str() {
            "system" | "user" | "assistant" | "developer" => RoleContent { role: &m.role, content: Cow::Borrowed(&m.content) },
            r if is_tool_result(r) => RoleContent { role: "user", content: Cow::Owned(format!("[tool result]\n{}", m.content)) },
            other => RoleContent { role: "user", content: Cow::Owned(format!("[{other}]\n{}", m.content)) },
        })
        .collect()
}

/// Anthropic Messages API `{system, messages}`: system text goes in the
/// top-level field, other roles map to user/assistant, and consecutive
/// messages of one role are merged, as that API expects alternation.
pub fn render_anthropic(messages: &[ChatMessage]) -> Value {
    let mut system: Vec<&str> = Vec::new();
    let mut out: Vec<(String, String)> = Vec::new();
    for m in messages {
        let (role, text) = match m.role.as_str() {
            "system" | "developer" => {
                system.push(&m.content);
                continue;
            }
            "assistant" => ("assistant", m.content.clone()),
            "user" => ("user", m.content.clone()),
            r if is_tool_result(r) => ("user", format!("[tool result]\n{}", m.content)),
            other => ("user", format!("[{other}]\n{}", m.content)),
        };
        match out.last_mut() {
            Some((r, t)) if r == role => {
                t.push_str("\n\n");
                t.push_str(&text);
            }
            _ => out.push((role.to_owned(), text)),
        }
    }
    json!({
        "system": system.join("\n\n"),
        "messages": out.into_iter().map(|(role, content)| json!({ "role": role, "content": content })).collect::<Vec<_>>(),
    })
}

/// What to assemble. Memories are best first.
#[derive(Debug, Clone, Copy, Default)]
pub struct PromptParts<'a> {
    pub system: Option<&'a str>,
    pub summary: Option<&'a str>,
    pub turns: &'a [Message],
    pub memories: &'a [String],
    pub query: Option<&'a str>,
}

/// The window to fit, with documented defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PromptBudget {
    pub window_tokens: usize,
    /// Kept free for the reply. Default: the model's output limit, or 0.
    pub reserve_for_output_tokens: usize,
    /// Tokens of the tool schemas sent with the prompt. Default 0.
    pub tools_tokens: usize,
    /// Chat-format overhead per message. Default 3 (OpenAI's).
    pub message_overhead_tokens: usize,
    /// Share of the room left after the query, system text and summary that
    /// memories may claim before older turns do, in percent. Default 25.
    pub memories_share_percent: u8,
}

impl PromptBudget {
    pub fn new(window_tokens: usize) -> PromptBudget {
        PromptBudget { window_tokens, reserve_for_output_tokens: 0, tools_tokens: 0, message_overhead_tokens: limits::MESSAGE_OVERHEAD_TOKENS_DEFAULT, memories_share_percent: 25 }
    }

    fn validate(&self) -> Result<()> {
        if self.window_tokens == 0 || self.window_tokens > limits::WINDOW_TOKENS_MAX {
            return Err(Error::invalid("window_tokens", format!("must be 1 to {}", limits::WINDOW_TOKENS_MAX)));
        }
        if self.reserve_for_output_tokens.saturating_add(self.tools_tokens) >= self.window_tokens {
            return Err(Error::invalid("reserve_for_output", "the reserve and the tool schemas leave no room in the window"));
        }
        if self.message_overhead_tokens > limits::MESSAGE_OVERHEAD_TOKENS_MAX {
            return Err(Error::invalid("message_overhead_tokens", format!("must be at most {}", limits::MESSAGE_OVERHEAD_TOKENS_MAX)));
        }
        if self.memories_share_percent > 100 {
            return Err(Error::invalid("memories_share_percent", "must be 0 to 100"));
        }
        Ok(())
    }
}

/// What assembly cut, for the caller to log or show.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Dropped {
    /// Oldest turns left out.
    pub turns: usize,
    /// Lowest-ranked memories left out.
    pub memories: usize,
    /// Parts cut on a token boundary: `query`, `system`, `summary`.
    pub truncated: Vec<&'static str>,
    /// Parts left out entirely for lack of room: `system`, `summary`.
    pub omitted: Vec<&'static str>,
}

/// An assembled prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Assembled {
    pub messages: Vec<ChatMessage>,
    /// Tokens of the messages (overhead included) plus the tool schemas.
    pub used_tokens: usize,
    pub window_tokens: usize,
    /// Room left for more input; the reply reserve is not counted as left.
    pub left_tokens: usize,
    pub turns_kept: usize,
    pub memories_kept: usize,
    pub dropped: Dropped,
}

/// Fits `text` (plus overhead) into `room`: whole, cut, or not at all.
fn fit<'a>(counter: &dyn Counter, text: &'a str, room: usize, overhead: usize) -> (Option<&'a str>, usize, bool) {
    let t = counter.count(text) + overhead;
    if t <= room {
        return (Some(text), t, false);
    }
    if room <= overhead {
        return (None, 0, false);
    }
    let cut = counter.truncate(text, room - overhead);
    if cut.trim().is_empty() {
        return (None, 0, false);
    }
    (Some(cut), counter.count(cut) + overhead, true)
}

fn memory_block(lines: &[&str]) -> String {
    let mut block = String::from(MEMORIES_HEADING);
    for m in lines {
        block.push_str("\n- ");
        block.push_str(m);
    }
    block
}

/// Groups turns into units that are kept or dropped whole: a message plus
/// the tool results that follow it. Returns unit start indices.
fn units(turns: &[Message]) -> Vec<usize> {
    let mut starts = Vec::new();
    for (i, m) in turns.iter().enumerate() {
        if i == 0 || !is_tool_result(&m.role) {
            starts.push(i);
        }
    }
    starts
}

/// Assembles the prompt within the budget.
pub fn assemble(counter: &dyn Counter, budget: &PromptBudget, parts: &PromptParts<'_>) -> Result<Assembled> {
    budget.validate()?;
    if parts.memories.len() > limits::PROMPT_MEMORIES_MAX {
        return Err(Error::LimitExceeded { what: "memories in a prompt".into(), limit: limits::PROMPT_MEMORIES_MAX as u64 });
    }
    let overhead = budget.message_overhead_tokens;
    let available = budget.window_tokens - budget.reserve_for_output_tokens - budget.tools_tokens;
    let mut used = 0usize;
    let mut dropped = Dropped::default();

    let query = match parts.query.filter(|q| !q.trim().is_empty()) {
        None => None,
        Some(q) => {
            let (text, t, cut) = fit(counter, q, available, overhead);
            let text = text.ok_or_else(|| Error::invalid("query", "does not fit the window even truncated"))?;
            if cut {
                dropped.truncated.push("query");
            }
            used += t;
            Some(text)
        }
    };
    let place = |name: &'static str, text: Option<&str>, used: &mut usize, dropped: &mut Dropped| -> Option<String> {
        let text = text.filter(|s| !s.trim().is_empty())?;
        let (kept, t, cut) = fit(counter, text, available - *used, overhead);
        match kept {
            None => {
                dropped.omitted.push(name);
                None
            }
            Some(k) => {
                if cut {
                    dropped.truncated.push(name);
                }
                *used += t;
                Some(k.to_owned())
            }
        }
    };
    let system = place("system", parts.system, &mut used, &mut dropped);
    let summary_text = parts.summary.map(|s| format!("{SUMMARY_HEADING}\n{s}"));
    let summary = place("summary", summary_text.as_deref(), &mut used, &mut dropped);

    // Turns newest first, in whole units; memories get their share first.
    let starts = units(parts.turns);
    let key = counter.cache_key();
    let unit_tokens = |u: usize| -> usize {
        let end = starts.get(u + 1).copied().unwrap_or(parts.turns.len());
        // Each turn remembers its count: a long session is counted once.
        parts.turns[starts[u]..end].iter().map(|m| m.tokens.get_or(key, || counter.count(&m.content)) + overhead).sum()
    };
    let room = available - used;
    let memory_room = if parts.memories.is_empty() { 0 } else { room * usize::from(budget.memories_share_percent) / 100 };
    let mut first_unit = starts.len();
    let mut turns_tokens = 0usize;
    while first_unit > 0 {
        let t = unit_tokens(first_unit - 1);
        if turns_tokens + t > room - memory_room {
            break;
        }
        turns_tokens += t;
        first_unit -= 1;
    }
    used += turns_tokens;
    // Memories: one system message, each memory a bullet line.
    let mut memories_kept = 0usize;
    let mut memory_lines: Vec<&str> = Vec::new();
    if !parts.memories.is_empty() {
        let mut t = counter.count(MEMORIES_HEADING) + overhead;
        for m in parts.memories {
            let line_t = counter.count(m) + 2;
            if used + t + line_t > available {
                break;
            }
            t += line_t;
            memory_lines.push(m);
            memories_kept += 1;
        }
        // The sum of the parts is an estimate of the joined block: count the
        // block itself and give back lines until it truly fits.
        while memories_kept > 0 {
            let exact = counter.count(&memory_block(&memory_lines)) + overhead;
            if used + exact <= available {
                used += exact;
                break;
            }
            memory_lines.pop();
            memories_kept -= 1;
        }
    }
    dropped.memories = parts.memories.len() - memories_kept;
    // Older turns take what the memories left.
    while first_unit > 0 {
        let t = unit_tokens(first_unit - 1);
        if used + t > available {
            break;
        }
        used += t;
        first_unit -= 1;
    }
    let first_turn = starts.get(first_unit).copied().unwrap_or(parts.turns.len());
    dropped.turns = first_turn;

    let mut messages = Vec::with_capacity(parts.turns.len() - first_turn + 4);
    if let Some(s) = system {
        messages.push(ChatMessage { role: "system".into(), content: s });
    }
    if let Some(s) = summary {
        messages.push(ChatMessage { role: "system".into(), content: s });
    }
    messages.extend(parts.turns[first_turn..].iter().map(|m| ChatMessage { role: m.role.clone(), content: m.content.clone() }));
    if memories_kept > 0 {
        messages.push(ChatMessage { role: "system".into(), content: memory_block(&memory_lines) });
    }
    if let Some(q) = query {
        messages.push(ChatMessage { role: "user".into(), content: q.to_owned() });
    }
    let used_tokens = used + budget.tools_tokens;
    Ok(Assembled {
        messages,
        used_tokens,
        window_tokens: budget.window_tokens,
        left_tokens: available - used,
        turns_kept: parts.turns.len() - first_turn,
        memories_kept,
        dropped,
    })
}
