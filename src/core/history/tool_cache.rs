//! The tool-result cache: per session, keyed by tool name plus canonical
//! arguments, each entry with its own expiry.
//!
//! Agents re-call the same tool turn after turn (a wallet balance, a price
//! feed) because nothing remembers the answer. The cache is engine state, so
//! it is logged and survives restarts like everything else; hits and misses
//! are counted by the store, outside the deterministic state.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::time::{Millis, MILLIS_MAX};

/// One cached result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CachedResult {
    pub tool: String,
    /// The arguments in canonical form (object keys sorted, no whitespace).
    pub args: String,
    #[serde(serialize_with = "crate::core::exact_json::value")]
    pub result: Value,
    pub stored_at: Millis,
    pub expires_at: Millis,
}

/// The entries of one session, keyed by (tool, canonical args).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolCache {
    entries: BTreeMap<(String, String), CachedResult>,
}

/// Canonical JSON of tool arguments: equal arguments give equal keys
/// whatever the key order the model produced.
pub fn canonical_args(args: &Value) -> Result<String> {
    // serde_json's Map is a BTreeMap here (no `preserve_order`), so
    // serializing sorts object keys at every depth.
    let text = serde_json::to_string(args).map_err(|e| Error::invalid("args", e.to_string()))?;
    if text.len() > limits::TOOL_ARGS_BYTES_MAX {
        return Err(Error::too_large("args", text.len(), limits::TOOL_ARGS_BYTES_MAX));
    }
    Ok(text)
}

/// Checks a tool name: short, printable, no spaces (model tool names are
/// `^[a-zA-Z0-9_-]{1,64}$`; we also allow `.` and `:` for namespacing).
pub fn validate_tool_name(field: &str, tool: &str) -> Result<()> {
    if tool.is_empty() || tool.len() > limits::TOOL_NAME_BYTES_MAX {
        return Err(Error::invalid(field, format!("must be 1 to {} bytes", limits::TOOL_NAME_BYTES_MAX)));
    }
    if !tool.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-.:".contains(&b)) {
        return Err(Error::invalid(field, "may hold only ASCII letters, digits, '_', '-', '.' and ':'"));
    }
    Ok(())
}

impl ToolCache {
    /// The live entry for `(tool, args)` at `now`.
    pub fn get(&self, tool: &str, args: &str, now: Millis) -> Option<&CachedResult> {
        self.entries.get(&(tool.to_owned(), args.to_owned())).filter(|e| e.expires_at > now)
    }

    /// Stores a result for `ttl_seconds`. At the entry cap, expired entries
    /// go first, then the entry closest to expiry: a cache may forget.
    pub fn put(&mut self, tool: String, args: String, result: Value, ttl_seconds: u64, now: Millis) -> Result<CachedResult> {
        validate_tool_name("tool", &tool)?;
        if ttl_seconds == 0 || ttl_seconds > limits::TOOL_CACHE_TTL_SECONDS_MAX {
            return Err(Error::invalid("ttl_seconds", format!("must be 1 to {}", limits::TOOL_CACHE_TTL_SECONDS_MAX)));
        }
        let bytes = serde_json::to_vec(&result).map_err(|e| Error::invalid("result", e.to_string()))?.len();
        if bytes > limits::TOOL_RESULT_BYTES_MAX {
            return Err(Error::too_large("result", bytes, limits::TOOL_RESULT_BYTES_MAX));
        }
        let key = (tool.clone(), args.clone());
        if !self.entries.contains_key(&key) && self.entries.len() >= limits::TOOL_CACHE_ENTRIES_MAX {
            self.sweep(now);
            if self.entries.len() >= limits::TOOL_CACHE_ENTRIES_MAX {
                let soonest = self.entries.iter().min_by_key(|(k, e)| (e.expires_at, (*k).clone())).map(|(k, _)| k.clone());
                if let Some(k) = soonest {
                    self.entries.remove(&k);
                }
            }
        }
        let expires_at = now.saturating_add(ttl_seconds.saturating_mul(1000)).min(MILLIS_MAX);
        let entry = CachedResult { tool, args, result, stored_at: now, expires_at };
        self.entries.insert(key, entry.clone());
        Ok(entry)
    }

    /// Removes entries of `tool` (all tools when `None`), only those with
    /// exactly `args` when given. Returns how many went.
    pub fn invalidate(&mut self, tool: Option<&str>, args: Option<&str>) -> usize {
        let before = self.entries.len();
        self.entries.retain(|(t, a), _| !(tool.is_none_or(|x| x == t) && args.is_none_or(|x| x == a)));
        before - self.entries.len()
    }

    /// Drops expired entries; returns how many.
    pub fn sweep(&mut self, now: Millis) -> usize {
        let before = self.entries.len();
        self.entries.retain(|_, e| e.expires_at > now);
        before - self.entries.len()
    }

    /// Live entries at `now`, in key order.
    pub fn live(&self, now: Millis) -> impl Iterator<Item = &CachedResult> {
        self.entries.values().filter(move |e| e.expires_at > now)
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The earliest expiry, for scheduling a sweep.
    pub fn next_expiry(&self) -> Option<Millis> {
        self.entries.values().map(|e| e.expires_at).min()
    }
}
