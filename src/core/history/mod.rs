//! Conversation history: compaction plans and the extractive summarizer, the
//! tool-result cache, agent configuration and prompt assembly.
//!
//! All of it is pure. The async parts (a summarizer hook, a prompt
//! validation hook) run in the bindings between a plan made here and the op
//! that applies it; the op re-checks the plan, so nothing is ever lost to a
//! race or a failing hook.

pub mod compact;
pub mod config;
pub mod count_cache;
pub mod extractive;
pub mod prompt;
pub mod tool_cache;

#[cfg(test)]
mod tests;

pub use compact::{plan, CompactionConfig, Plan, Usage};
pub use config::{glob_match, AgentConfig, Guardrails};
pub use count_cache::CountCache;
pub use prompt::{assemble, to_messages, Assembled, ChatMessage, PromptBudget, PromptParts};
pub use tool_cache::{canonical_args, CachedResult, ToolCache};
