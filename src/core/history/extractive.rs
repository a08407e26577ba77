//! The offline default summarizer: extractive, deterministic, no model.
//!
//! It scores every sentence of the previous summary and of the turns being
//! compacted by how many of the conversation's frequent content words it
//! carries (plus a bonus for numbers and names, which is where facts live),
//! keeps the best ones within the token budget, and writes them back in
//! conversation order. Sentences of the previous summary compete with the
//! new ones, which is how summaries fold instead of growing without end.

use std::collections::HashMap;

use crate::core::budget::Counter;
use crate::core::limits;
use crate::core::session::Message;

const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "can", "do", "for", "from", "has", "have", "i", "if", "in",
    "is", "it", "its", "me", "my", "no", "not", "of", "on", "or", "our", "so", "that", "the", "their", "then", "there",
    "this", "to", "was", "we", "were", "what", "when", "which", "will", "with", "you", "your", "ok", "okay", "yes",
    "please", "thanks", "thank", "sure", "just", "would", "could", "should", "let", "know", "like", "also",
];

struct Sentence {
    /// Position in conversation order (previous summary first).
    order: usize,
    /// From the previous summary.
    prior: bool,
    text: String,
    score: f64,
}

fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() > 1).map(str::to_lowercase)
}

/// Splits on sentence ends and line breaks; bounded by the caller.
fn sentences(text: &str, out: &mut Vec<String>) {
    let mut start = 0;
    let bytes = text.as_bytes();
    for (i, c) in text.char_indices() {
        let end = match c {
            '\n' => true,
            '.' | '!' | '?' => bytes.get(i + 1).is_none_or(|b| b.is_ascii_whitespace()),
            _ => false,
        };
        if end {
            push_sentence(&text[start..i + c.len_utf8()], out);
            start = i + c.len_utf8();
        }
    }
    push_sentence(&text[start..], out);
}

fn push_sentence(s: &str, out: &mut Vec<String>) {
    let s = s.trim();
    if s.chars().filter(|c| c.is_alphanumeric()).count() >= 3 && out.len() < limits::SUMMARY_SENTENCES_MAX {
        out.push(s.to_owned());
    }
}

fn label(role: &str) -> &str {
    match role {
        "user" => "User",
        "assistant" => "Assistant",
        "system" => "System",
        "tool" | "function" => "Tool",
        other => other,
    }
}

/// Summarizes `turns`, folding in `previous`, within `tokens_max` tokens.
/// Never returns an empty string when there is any text to summarize.
pub fn summarize(counter: &dyn Counter, previous: Option<&str>, turns: &[Message], tokens_max: usize) -> String {
    let mut raw: Vec<(String, bool)> = Vec::new();
    let mut buf = Vec::new();
    if let Some(p) = previous {
        sentences(p, &mut buf);
        raw.extend(buf.drain(..).map(|s| (s, true)));
    }
    for m in turns {
        // Long pastes (logs, documents) are judged by their opening.
        let head = &m.content[..floor_boundary(&m.content, limits::SUMMARY_TURN_BYTES_MAX)];
        sentences(head, &mut buf);
        // A turn with no role (a memory being summarized) is not labelled.
        let who = label(&m.role);
        raw.extend(buf.drain(..).map(|s| (if who.is_empty() { s } else { format!("{who}: {s}") }, false)));
    }
    let mut df: HashMap<String, usize> = HashMap::new();
    for (s, _) in &raw {
        let mut seen: Vec<String> = words(s).filter(|w| !STOP_WORDS.contains(&w.as_str())).collect();
        seen.sort_unstable();
        seen.dedup();
        for w in seen {
            *df.entry(w).or_default() += 1;
        }
    }
    let mut scored: Vec<Sentence> = raw
        .into_iter()
        .enumerate()
        .map(|(order, (text, from_summary))| {
            let mut score = 0.0;
            let mut n = 0usize;
            for w in words(&text) {
                n += 1;
                if STOP_WORDS.contains(&w.as_str()) {
                    continue;
                }
                score += (*df.get(&w).unwrap_or(&1) as f64).ln_1p();
                if w.chars().any(|c| c.is_ascii_digit()) {
                    score += 1.5;
                }
            }
            let names = text.split_whitespace().skip(1).filter(|w| w.chars().next().is_some_and(char::is_uppercase)).count();
            score += names as f64 * 0.5;
            score /= (n.max(1) as f64).sqrt();
            // Facts already judged worth keeping stay unless crowded out.
            if from_summary {
                score *= 1.25;
            }
            Sentence { order, prior: from_summary, text, score }
        })
        .collect();
    scored.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.order.cmp(&b.order)));
    // Folding: the previous summary may claim up to half the budget first,
    // so old facts survive however chatty the new turns are; the new turns
    // then fill the rest, and either side takes what the other left.
    let prior_count = scored.iter().filter(|s| s.prior).count();
    let mut taken = vec![false; scored.len()];
    let mut chosen: Vec<&Sentence> = Vec::new();
    let mut used = 0usize;
    let passes: [(Option<bool>, usize); 3] = [(Some(true), tokens_max / 2), (Some(false), tokens_max), (None, tokens_max)];
    for (which, cap) in passes {
        if prior_count == 0 && which == Some(true) {
            continue;
        }
        for (i, s) in scored.iter().enumerate() {
            if taken[i] || which.is_some_and(|w| w != s.prior) {
                continue;
            }
            let t = counter.count(&s.text) + 1;
            if used + t <= cap {
                used += t;
                taken[i] = true;
                chosen.push(s);
            }
        }
    }
    if chosen.is_empty() {
        // Even the best sentence is too long: keep what fits of it.
        return scored.first().map(|s| counter.truncate(&s.text, tokens_max).trim().to_owned()).unwrap_or_default();
    }
    chosen.sort_by_key(|s| s.order);
    let out = chosen.iter().map(|s| s.text.as_str()).collect::<Vec<_>>().join(" ");
    // Joining can merge tokens across a boundary either way; the budget is a
    // promise, so cut on a token boundary if the sum was optimistic.
    if counter.count(&out) > tokens_max {
        return counter.truncate(&out, tokens_max).trim_end().to_owned();
    }
    out
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}
