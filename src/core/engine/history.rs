//! The history ops: compaction, the tool-result cache and agent
//! configuration, applied to the engine's state.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Engine;
use crate::core::error::{ConflictCode, Error, Result};
use crate::core::history::tool_cache::validate_tool_name;
use crate::core::history::{AgentConfig, CachedResult, ToolCache};
use crate::core::limits;
use crate::core::session::{validate_id, Message, Session};
use crate::core::time::Millis;

/// A history mutation. Everything an op needs (the summary text, the
/// canonical arguments, patch ids) is resolved before it is logged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum HistoryOp {
    /// Replace the oldest `count` turns, the last of which is `through_id`,
    /// with `summary` as the running summary; the turns are archived. A plan
    /// that no longer matches the session is refused (`compaction_stale`).
    Compact { session_id: String, count: usize, through_id: String, summary: String },
    /// Cache a tool result; without `ttl_seconds` the tool's configured TTL
    /// applies, else [`limits::TOOL_CACHE_TTL_SECONDS_DEFAULT`].
    ToolCachePut {
        session_id: String,
        tool: String,
        args: String,
        #[serde(serialize_with = "crate::core::exact_json::value")]
        result: Value,
        ttl_seconds: Option<u64>,
    },
    /// Drop cached results of a session: all, one tool's, or one call's.
    ToolCacheInvalidate { session_id: String, tool: Option<String>, args: Option<String> },
    /// Set the tenant's per-tool TTLs (replaces the whole table).
    ToolTtlsSet { ttls: BTreeMap<String, u64> },
    /// A new system prompt version for an agent, made live.
    PromptSet { agent_id: String, text: String, note: Option<String> },
    /// Make an existing version live again.
    PromptRollback { agent_id: String, version: u32 },
    /// Append a context patch.
    PatchAppend { agent_id: String, patch_id: String, text: String },
    /// Remove the patches whose text matches a glob.
    PatchRemove { agent_id: String, glob: String },
    /// Set or lift the tool allow-list.
    ToolsAllow { agent_id: String, tools: Option<Vec<String>> },
    /// Replace an agent's guardrails (they bind later changes, not the
    /// text already live).
    GuardrailsSet { agent_id: String, guardrails: crate::core::history::Guardrails },
}

/// What a history op did.
#[derive(Debug, Clone, PartialEq)]
pub enum HistoryApplied {
    Compacted { session: Session, archived: usize },
    ToolCached(CachedResult),
    Invalidated { count: usize },
    ToolTtls(BTreeMap<String, u64>),
    Agent { agent_id: String, config: AgentConfig, version: Option<u32>, removed: Vec<String> },
}

/// History state beside the sessions; part of the snapshot.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HistoryState {
    /// Compacted turns per session, oldest first.
    #[serde(default)]
    archived: BTreeMap<String, Vec<Message>>,
    #[serde(default)]
    tool_caches: BTreeMap<String, ToolCache>,
    #[serde(default)]
    tool_ttls: BTreeMap<String, u64>,
    #[serde(default)]
    agents: BTreeMap<String, AgentConfig>,
}

impl HistoryState {
    /// A deleted or expired session takes its archive and cache with it.
    pub(super) fn forget_session(&mut self, session_id: &str) {
        self.archived.remove(session_id);
        self.tool_caches.remove(session_id);
    }

    /// A session's archive and tool cache, as a split moves them.
    pub(super) fn session_part(&self, session_id: &str) -> (Vec<Message>, Option<ToolCache>) {
        (self.archived.get(session_id).cloned().unwrap_or_default(), self.tool_caches.get(session_id).cloned())
    }

    /// Sets a session's archive and tool cache (a split's batch).
    pub(super) fn set_session_part(&mut self, session_id: &str, archived: Vec<Message>, cache: Option<ToolCache>) {
        self.forget_session(session_id);
        if !archived.is_empty() {
            self.archived.insert(session_id.to_owned(), archived);
        }
        if let Some(c) = cache.filter(|c| !c.is_empty()) {
            self.tool_caches.insert(session_id.to_owned(), c);
        }
    }

    /// The tool TTL table every shard of a tenant keeps.
    pub(super) fn tool_ttls(&self) -> &BTreeMap<String, u64> {
        &self.tool_ttls
    }

    pub(super) fn set_tool_ttls(&mut self, ttls: BTreeMap<String, u64>) -> Result<()> {
        check_ttls(&ttls)?;
        self.tool_ttls = ttls;
        Ok(())
    }

    pub(super) fn sweep_tool_caches(&mut self, now: Millis) {
        for cache in self.tool_caches.values_mut() {
            cache.sweep(now);
        }
        self.tool_caches.retain(|_, c| !c.is_empty());
    }

    /// Checks a decoded state against the sessions it belongs to.
    pub(super) fn validate(&self, sessions: &BTreeMap<String, Session>) -> Result<()> {
        for (id, turns) in &self.archived {
            if !sessions.contains_key(id) || turns.len() > limits::ARCHIVED_MESSAGES_MAX {
                return Err(Error::invalid("archived", format!("session {id:?} missing or over the limit")));
            }
        }
        for id in self.tool_caches.keys() {
            if !sessions.contains_key(id) {
                return Err(Error::invalid("tool_caches", format!("session {id:?} missing")));
            }
        }
        if self.agents.len() > limits::AGENTS_MAX || self.tool_ttls.len() > limits::TOOL_TTLS_MAX {
            return Err(Error::invalid("agents", "over the limit"));
        }
        Ok(())
    }
}

fn check_ttls(ttls: &BTreeMap<String, u64>) -> Result<()> {
    if ttls.len() > limits::TOOL_TTLS_MAX {
        return Err(Error::LimitExceeded { what: "tool TTLs".into(), limit: limits::TOOL_TTLS_MAX as u64 });
    }
    for (tool, &ttl) in ttls {
        validate_tool_name("tool", tool)?;
        if ttl == 0 || ttl > limits::TOOL_CACHE_TTL_SECONDS_MAX {
            return Err(Error::invalid(format!("ttls.{tool}"), format!("must be 1 to {}", limits::TOOL_CACHE_TTL_SECONDS_MAX)));
        }
    }
    Ok(())
}

impl Engine {
    pub(super) fn apply_history(&mut self, op: &HistoryOp, now: Millis) -> Result<HistoryApplied> {
        match op {
            HistoryOp::Compact { session_id, count, through_id, summary } => {
                let prev = self.live(session_id, now).ok_or_else(|| Error::not_found("session", session_id))?;
                if *count == 0 || *count > prev.messages.len() || prev.messages[*count - 1].id != *through_id {
                    return Err(Error::conflict(ConflictCode::CompactionStale, session_id.clone()));
                }
                if summary.trim().is_empty() || summary.len() > limits::CONTEXT_BYTES_MAX {
                    return Err(Error::invalid("summary", format!("must be 1 to {} bytes", limits::CONTEXT_BYTES_MAX)));
                }
                let archived_len = self.history.archived.get(session_id).map_or(0, Vec::len);
                if archived_len + count > limits::ARCHIVED_MESSAGES_MAX {
                    return Err(Error::LimitExceeded { what: "archived turns of a session".into(), limit: limits::ARCHIVED_MESSAGES_MAX as u64 });
                }
                let mut next = prev.clone();
                let gone: Vec<Message> = next.messages.drain(..*count).collect();
                next.context = Some(summary.clone());
                next.touch(now);
                self.history.archived.entry(session_id.clone()).or_default().extend(gone);
                self.insert(next.clone());
                Ok(HistoryApplied::Compacted { session: next, archived: *count })
            }
            HistoryOp::ToolCachePut { session_id, tool, args, result, ttl_seconds } => {
                if self.live(session_id, now).is_none() {
                    return Err(Error::not_found("session", session_id));
                }
                if args.len() > limits::TOOL_ARGS_BYTES_MAX {
                    return Err(Error::too_large("args", args.len(), limits::TOOL_ARGS_BYTES_MAX));
                }
                let ttl = ttl_seconds.or_else(|| self.history.tool_ttls.get(tool).copied()).unwrap_or(limits::TOOL_CACHE_TTL_SECONDS_DEFAULT);
                // Validate on a copy: a refused put must leave the cache as it was.
                let mut cache = self.history.tool_caches.get(session_id).cloned().unwrap_or_default();
                let entry = cache.put(tool.clone(), args.clone(), result.clone(), ttl, now)?;
                self.history.tool_caches.insert(session_id.clone(), cache);
                Ok(HistoryApplied::ToolCached(entry))
            }
            HistoryOp::ToolCacheInvalidate { session_id, tool, args } => {
                if self.live(session_id, now).is_none() {
                    return Err(Error::not_found("session", session_id));
                }
                let count = self.history.tool_caches.get_mut(session_id).map_or(0, |c| c.invalidate(tool.as_deref(), args.as_deref()));
                Ok(HistoryApplied::Invalidated { count })
            }
            HistoryOp::ToolTtlsSet { ttls } => {
                check_ttls(ttls)?;
                self.history.tool_ttls = ttls.clone();
                Ok(HistoryApplied::ToolTtls(ttls.clone()))
            }
            HistoryOp::PromptSet { agent_id, .. }
            | HistoryOp::PromptRollback { agent_id, .. }
            | HistoryOp::PatchAppend { agent_id, .. }
            | HistoryOp::PatchRemove { agent_id, .. }
            | HistoryOp::ToolsAllow { agent_id, .. }
            | HistoryOp::GuardrailsSet { agent_id, .. } => {
                validate_id("agent_id", agent_id)?;
                if !self.history.agents.contains_key(agent_id) && self.history.agents.len() >= limits::AGENTS_MAX {
                    return Err(Error::LimitExceeded { what: "agents".into(), limit: limits::AGENTS_MAX as u64 });
                }
                let mut config = self.history.agents.get(agent_id).cloned().unwrap_or_default();
                let mut version = None;
                let mut removed = Vec::new();
                match op {
                    HistoryOp::PromptSet { text, note, .. } => version = Some(config.set_prompt(text, note.as_deref(), now)?),
                    HistoryOp::PromptRollback { version: v, .. } => {
                        config.rollback(*v)?;
                        version = Some(*v);
                    }
                    HistoryOp::PatchAppend { patch_id, text, .. } => {
                        validate_id("patch_id", patch_id)?;
                        config.append_patch(patch_id.clone(), text, now)?;
                    }
                    HistoryOp::PatchRemove { glob, .. } => removed = config.remove_patches(glob)?,
                    HistoryOp::ToolsAllow { tools, .. } => config.allow_tools(tools.clone())?,
                    HistoryOp::GuardrailsSet { guardrails, .. } => {
                        guardrails.validate()?;
                        config.guardrails = guardrails.clone();
                    }
                    _ => return Err(Error::Internal { detail: "agent op mismatch".into() }),
                }
                if matches!(op, HistoryOp::PromptSet { .. } | HistoryOp::PromptRollback { .. } | HistoryOp::PatchAppend { .. } | HistoryOp::PatchRemove { .. }) {
                    config.guardrails.check(&config.system_text())?;
                }
                self.history.agents.insert(agent_id.clone(), config.clone());
                Ok(HistoryApplied::Agent { agent_id: agent_id.clone(), config, version, removed })
            }
        }
    }

    /// An agent's configuration, if any was ever set.
    pub fn agent(&self, agent_id: &str) -> Option<&AgentConfig> {
        self.history.agents.get(agent_id)
    }

    /// Agents with configuration, in id order.
    pub fn agent_ids(&self) -> impl Iterator<Item = &str> {
        self.history.agents.keys().map(String::as_str)
    }

    /// A page of a session's compacted turns, oldest first, and their total.
    pub fn archived(&self, session_id: &str, offset: usize, limit: usize) -> (Vec<Message>, usize) {
        let all = self.history.archived.get(session_id).map_or(&[][..], Vec::as_slice);
        let page = all.iter().skip(offset).take(limit.min(limits::ARCHIVE_PAGE_LIMIT_MAX)).cloned().collect();
        (page, all.len())
    }

    /// The live cached result of a tool call, if any.
    pub fn tool_cached(&self, session_id: &str, tool: &str, args: &str, now: Millis) -> Option<&CachedResult> {
        self.live(session_id, now)?;
        self.history.tool_caches.get(session_id)?.get(tool, args, now)
    }

    /// Live cached results of a session.
    pub fn tool_cache_entries(&self, session_id: &str, now: Millis) -> Vec<&CachedResult> {
        self.history.tool_caches.get(session_id).map_or_else(Vec::new, |c| c.live(now).collect())
    }

    /// The per-tool TTL table.
    pub fn tool_ttls(&self) -> &BTreeMap<String, u64> {
        &self.history.tool_ttls
    }
}
