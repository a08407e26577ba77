//! Conversation history: compaction plans, the extractive summarizer, the tool-result cache, agent configuration and prompt assembly.
