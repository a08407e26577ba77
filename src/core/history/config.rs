//! Agent configuration state: versioned system prompts with rollback,
//! context patches removable by glob, and the tool allow-list.
//!
//! Operators hot-swap a prompt or patch in an instruction ("CRITICAL:
//! Warehouse Ohio is closed") without a redeploy; every change is an op, so
//! it is durable, ordered and replayed like any other mutation.

use serde::{Deserialize, Serialize};

use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::time::Millis;

/// One version of an agent's system prompt. Versions count from 1 and are
/// never reused, even after older ones are pruned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptVersion {
    pub version: u32,
    pub text: String,
    pub created_at: Millis,
    #[serde(default)]
    pub note: Option<String>,
}

/// A context patch appended after the system prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Patch {
    pub id: String,
    pub text: String,
    pub created_at: Millis,
}

/// Everything configured for one agent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentConfig {
    /// Oldest first; at most [`limits::PROMPT_VERSIONS_MAX`] (the oldest
    /// inactive version is pruned to make room).
    pub prompts: Vec<PromptVersion>,
    /// The live version, or none before the first `set`.
    pub active: Option<u32>,
    pub patches: Vec<Patch>,
    /// `None` allows every tool; `Some` allows exactly the names listed.
    pub tools_allowed: Option<Vec<String>>,
    /// Rules every new system text must keep.
    #[serde(default)]
    pub guardrails: Guardrails,
}

/// Rules an agent's system text (its live prompt and patches) must keep.
/// Every prompt set, rollback and patch change is checked against them, by
/// the engine itself, so no door (npm, HTTP, the CLI) can get around them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Guardrails {
    /// Clauses that must appear (case-insensitive, whitespace-insensitive),
    /// such as "Never go below floor price".
    #[serde(default)]
    pub required: Vec<String>,
    /// Globs ([`glob_match`], case-insensitive) that must match nowhere in
    /// the text; a pattern may match anywhere, not only from the start.
    #[serde(default)]
    pub forbidden: Vec<String>,
    /// The most tokens (cl100k_base) the system text may take. Counted at
    /// the API layer, which holds the encodings; see `api::agents`.
    #[serde(default)]
    pub tokens_max: Option<u64>,
}

/// Lowercases and collapses whitespace, so a clause re-wrapped across lines
/// still counts as present.
fn fold(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

impl Guardrails {
    /// Checks the rules' own sizes.
    pub fn validate(&self) -> Result<()> {
        for (field, list, max) in [("required", &self.required, limits::GUARDRAIL_REQUIRED_MAX), ("forbidden", &self.forbidden, limits::GUARDRAIL_FORBIDDEN_MAX)] {
            if list.len() > max {
                return Err(Error::LimitExceeded { what: format!("guardrails.{field}"), limit: max as u64 });
            }
            for rule in list {
                check_text(&format!("guardrails.{field}"), rule, limits::GUARDRAIL_RULE_BYTES_MAX)?;
            }
        }
        if let Some(n) = self.tokens_max {
            if n == 0 || n > limits::GUARDRAIL_TOKENS_MAX_CEILING {
                return Err(Error::invalid("guardrails.tokens_max", format!("must be from 1 to {}", limits::GUARDRAIL_TOKENS_MAX_CEILING)));
            }
        }
        Ok(())
    }

    /// The first rule `system_text` breaks (clauses and patterns; the token
    /// ceiling is the caller's, see [`Guardrails::check_tokens`]).
    pub fn check(&self, system_text: &str) -> Result<()> {
        let folded = fold(system_text);
        for clause in &self.required {
            if !folded.contains(&fold(clause)) {
                return Err(violated(format!("required clause {clause:?} is missing")));
            }
        }
        for pattern in &self.forbidden {
            // Anywhere in the text: a pattern is not anchored to its start.
            let p = format!("*{}*", pattern.to_lowercase());
            if glob_match(&p, &system_text.to_lowercase()) {
                return Err(violated(format!("forbidden pattern {pattern:?} matches")));
            }
        }
        Ok(())
    }

    /// The token ceiling against a count made by the caller.
    pub fn check_tokens(&self, tokens: u64) -> Result<()> {
        match self.tokens_max {
            Some(max) if tokens > max => Err(violated(format!("the system text is {tokens} tokens, over the ceiling of {max}"))),
            _ => Ok(()),
        }
    }
}

fn violated(rule: String) -> Error {
    Error::Rejected { code: crate::core::error::Rejection::Rule(crate::core::error::RuleCode::GuardrailViolated), id: rule }
}

fn check_text(field: &str, text: &str, bytes_max: usize) -> Result<()> {
    if text.trim().is_empty() {
        return Err(Error::invalid(field, "must not be empty"));
    }
    if text.len() > bytes_max {
        return Err(Error::too_large(field, text.len(), bytes_max));
    }
    Ok(())
}

impl AgentConfig {
    /// The live system prompt.
    pub fn active_prompt(&self) -> Option<&PromptVersion> {
        let v = self.active?;
        self.prompts.iter().find(|p| p.version == v)
    }

    /// Adds a new version and makes it live; returns its number.
    pub fn set_prompt(&mut self, text: &str, note: Option<&str>, now: Millis) -> Result<u32> {
        check_text("prompt", text, limits::PROMPT_BYTES_MAX)?;
        if let Some(n) = note {
            if n.len() > limits::PROMPT_NOTE_BYTES_MAX {
                return Err(Error::too_large("note", n.len(), limits::PROMPT_NOTE_BYTES_MAX));
            }
        }
        let version = self.prompts.last().map_or(1, |p| p.version.saturating_add(1));
        if self.prompts.len() >= limits::PROMPT_VERSIONS_MAX {
            if let Some(i) = self.prompts.iter().position(|p| Some(p.version) != self.active) {
                self.prompts.remove(i);
            }
        }
        self.prompts.push(PromptVersion { version, text: text.to_owned(), created_at: now, note: note.map(str::to_owned) });
        self.active = Some(version);
        Ok(version)
    }

    /// Makes an earlier (or later) version live again.
    pub fn rollback(&mut self, version: u32) -> Result<()> {
        if !self.prompts.iter().any(|p| p.version == version) {
            return Err(Error::not_found("prompt version", version.to_string()));
        }
        self.active = Some(version);
        Ok(())
    }

    /// Appends a patch.
    pub fn append_patch(&mut self, id: String, text: &str, now: Millis) -> Result<()> {
        check_text("patch", text, limits::PATCH_BYTES_MAX)?;
        if self.patches.len() >= limits::PATCHES_MAX {
            return Err(Error::LimitExceeded { what: "patches of an agent".into(), limit: limits::PATCHES_MAX as u64 });
        }
        self.patches.push(Patch { id, text: text.to_owned(), created_at: now });
        Ok(())
    }

    /// Removes every patch whose text matches `pattern` (see [`glob_match`]);
    /// returns the removed patches' ids.
    pub fn remove_patches(&mut self, pattern: &str) -> Result<Vec<String>> {
        validate_glob(pattern)?;
        let mut removed = Vec::new();
        self.patches.retain(|p| {
            let hit = glob_match(pattern, &p.text);
            if hit {
                removed.push(p.id.clone());
            }
            !hit
        });
        Ok(removed)
    }

    /// Sets (or with `None` lifts) the tool allow-list.
    pub fn allow_tools(&mut self, tools: Option<Vec<String>>) -> Result<()> {
        if let Some(list) = &tools {
            if list.len() > limits::TOOLS_ALLOWED_MAX {
                return Err(Error::LimitExceeded { what: "allowed tools".into(), limit: limits::TOOLS_ALLOWED_MAX as u64 });
            }
            for (i, t) in list.iter().enumerate() {
                crate::core::history::tool_cache::validate_tool_name(&format!("tools[{i}]"), t)?;
            }
        }
        self.tools_allowed = tools.map(|mut l| {
            l.sort_unstable();
            l.dedup();
            l
        });
        Ok(())
    }

    /// Whether `tool` may be called.
    pub fn tool_allowed(&self, tool: &str) -> bool {
        self.tools_allowed.as_ref().is_none_or(|l| l.binary_search_by(|t| t.as_str().cmp(tool)).is_ok())
    }

    /// The system prompt followed by the patches, as one text.
    pub fn system_text(&self) -> String {
        let mut parts: Vec<&str> = Vec::with_capacity(self.patches.len() + 1);
        if let Some(p) = self.active_prompt() {
            parts.push(&p.text);
        }
        parts.extend(self.patches.iter().map(|p| p.text.as_str()));
        parts.join("\n\n")
    }
}

fn validate_glob(pattern: &str) -> Result<()> {
    if pattern.is_empty() || pattern.len() > limits::GLOB_BYTES_MAX {
        return Err(Error::invalid("glob", format!("must be 1 to {} bytes", limits::GLOB_BYTES_MAX)));
    }
    Ok(())
}

/// Shell-style match of the whole text: `*` is any run of characters
/// (newlines included), `?` one character, `\` escapes the next one.
/// Linear-space and O(pattern × text) at worst: no backtracking blow-up.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    // Tokens: Some(c) a literal, None(false) '?', None(true) '*'.
    #[derive(Clone, Copy, PartialEq)]
    enum Tok {
        Lit(char),
        One,
        Star,
    }
    let mut toks = Vec::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        toks.push(match c {
            '*' => Tok::Star,
            '?' => Tok::One,
            '\\' => Tok::Lit(chars.next().unwrap_or('\\')),
            c => Tok::Lit(c),
        });
    }
    let text: Vec<char> = text.chars().collect();
    // The classic two-pointer algorithm with one remembered star.
    let (mut p, mut t) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match toks.get(p) {
            Some(Tok::Star) => {
                star = Some((p, t));
                p += 1;
            }
            Some(Tok::One) => {
                p += 1;
                t += 1;
            }
            Some(Tok::Lit(c)) if *c == text[t] => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    p = sp + 1;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    toks[p..].iter().all(|k| *k == Tok::Star)
}
