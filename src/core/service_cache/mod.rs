//! The service-state cache: the last state an agent read from each external
//! service (wallet, casino, trading, ...), with a TTL per service.
//!
//! The rule it keeps is the seed's: for an agent that moves money, stale
//! state is worse than missing state. [`ServiceCache::lookup`] says whether
//! an entry is fresh; a host serves a stale one only when the caller asks
//! for it, and says so. Upstream calls, single-flight and timeouts belong to
//! the host (`api::service_cache`); this module holds what is durable: the
//! TTL table and the entries, changed only through [`ServiceOp`]s.
//!
//! A state is kept as the upstream's JSON text, so its numbers are exact;
//! [`totals`] reads amounts from that text as decimals, never through f64.

use std::collections::BTreeMap;

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::session::validate_id;
use crate::core::time::Millis;

/// The seed's TTL table, in seconds: the default services of every tenant.
pub const DEFAULT_TTLS: [(&str, u64); 6] = [("wallet", 60), ("casino", 10), ("trading", 30), ("domains", 300), ("faucet", 120), ("escrow", 15)];

/// Names a service may not take: they are routes beside `/v1/services/{service}`.
pub const RESERVED_NAMES: [&str; 2] = ["snapshot", "state"];

/// One cached state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CachedState {
    /// The state as JSON text, exactly as the upstream (or the writer) sent it.
    pub state: String,
    pub fetched_at: Millis,
    pub expires_at: Millis,
    /// Written through after the agent's own mutation, not read from the upstream.
    pub written: bool,
}

/// A change to the cache (logged, so it survives restarts).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ServiceOp {
    /// Registers a service, or sets its TTL.
    Register { service: String, ttl_seconds: u64 },
    /// Stores a state read from the upstream, or written through (`written`).
    Put { agent_id: String, service: String, state: String, written: bool },
    /// Drops an agent's cached state of one service, or of every service.
    Invalidate { agent_id: String, service: Option<String> },
    /// Drops every entry past its TTL at `now`.
    Expire,
}

/// What a [`ServiceOp`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServiceApplied {
    Registered { service: String, ttl_seconds: u64 },
    Stored(CachedState),
    /// Entries dropped by an invalidation or an expiry.
    Dropped { count: usize },
}

/// A lookup's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Freshness {
    Fresh,
    /// Past its TTL: never served unless the caller asks for stale state.
    Stale,
}

/// The TTL table and the cached states of one tenant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServiceCache {
    ttls: BTreeMap<String, u64>,
    /// agent id -> service -> state.
    entries: BTreeMap<String, BTreeMap<String, CachedState>>,
}

impl Default for ServiceCache {
    fn default() -> ServiceCache {
        ServiceCache { ttls: DEFAULT_TTLS.iter().map(|(s, t)| ((*s).to_owned(), *t)).collect(), entries: BTreeMap::new() }
    }
}

/// Checks a service name: an id that is not a reserved route name.
pub fn validate_service(service: &str) -> Result<()> {
    validate_id("service", service)?;
    if service.len() > limits::SERVICE_NAME_BYTES_MAX {
        return Err(Error::too_large("service", service.len(), limits::SERVICE_NAME_BYTES_MAX));
    }
    if RESERVED_NAMES.contains(&service) {
        return Err(Error::invalid("service", format!("{service:?} is reserved")));
    }
    Ok(())
}

impl ServiceCache {
    /// The registered services and their TTLs, by name.
    pub fn services(&self) -> impl Iterator<Item = (&str, u64)> {
        self.ttls.iter().map(|(s, t)| (s.as_str(), *t))
    }

    /// A registered service's TTL; unknown services are `NotFound`.
    pub fn ttl_seconds(&self, service: &str) -> Result<u64> {
        self.ttls.get(service).copied().ok_or_else(|| Error::not_found("service", service))
    }

    /// The cached state of `agent_id` at `service`, and whether it is fresh at `now`.
    pub fn lookup(&self, agent_id: &str, service: &str, now: Millis) -> Option<(&CachedState, Freshness)> {
        let e = self.entries.get(agent_id)?.get(service)?;
        Some((e, if now < e.expires_at { Freshness::Fresh } else { Freshness::Stale }))
    }

    /// Cached entries, all agents together.
    pub fn len(&self) -> usize {
        self.entries.values().map(BTreeMap::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// When the next entry runs out (for the host's alarm).
    pub fn next_expiry(&self) -> Option<Millis> {
        self.entries.values().flat_map(|m| m.values()).map(|e| e.expires_at).min()
    }

    /// Applies `op` at `now`. On error nothing has changed.
    pub fn apply(&mut self, op: &ServiceOp, now: Millis) -> Result<ServiceApplied> {
        match op {
            ServiceOp::Register { service, ttl_seconds } => {
                validate_service(service)?;
                if !(1..=limits::SERVICE_TTL_SECONDS_MAX).contains(ttl_seconds) {
                    return Err(Error::invalid("ttl_seconds", format!("must be 1 to {}, got {ttl_seconds}", limits::SERVICE_TTL_SECONDS_MAX)));
                }
                if !self.ttls.contains_key(service) && self.ttls.len() >= limits::SERVICES_MAX {
                    return Err(Error::LimitExceeded { what: "registered services".into(), limit: limits::SERVICES_MAX as u64 });
                }
                self.ttls.insert(service.clone(), *ttl_seconds);
                Ok(ServiceApplied::Registered { service: service.clone(), ttl_seconds: *ttl_seconds })
            }
            ServiceOp::Put { agent_id, service, state, written } => {
                validate_id("agent_id", agent_id)?;
                let ttl = self.ttl_seconds(service)?;
                if state.len() > limits::SERVICE_STATE_BYTES_MAX {
                    return Err(Error::too_large("service state", state.len(), limits::SERVICE_STATE_BYTES_MAX));
                }
                let known = self.entries.get(agent_id).is_some_and(|m| m.contains_key(service));
                if !known && self.len() >= limits::SERVICE_CACHE_ENTRIES_MAX {
                    return Err(Error::LimitExceeded { what: "cached service states".into(), limit: limits::SERVICE_CACHE_ENTRIES_MAX as u64 });
                }
                let entry = CachedState { state: state.clone(), fetched_at: now, expires_at: now.saturating_add(ttl.saturating_mul(1000)), written: *written };
                self.entries.entry(agent_id.clone()).or_default().insert(service.clone(), entry.clone());
                Ok(ServiceApplied::Stored(entry))
            }
            ServiceOp::Invalidate { agent_id, service } => {
                let Some(m) = self.entries.get_mut(agent_id) else { return Ok(ServiceApplied::Dropped { count: 0 }) };
                let count = match service {
                    Some(s) => usize::from(m.remove(s).is_some()),
                    None => std::mem::take(m).len(),
                };
                if m.is_empty() {
                    self.entries.remove(agent_id);
                }
                Ok(ServiceApplied::Dropped { count })
            }
            ServiceOp::Expire => {
                let mut count = 0;
                self.entries.retain(|_, m| {
                    let before = m.len();
                    m.retain(|_, e| now < e.expires_at);
                    count += before - m.len();
                    !m.is_empty()
                });
                Ok(ServiceApplied::Dropped { count })
            }
        }
    }
}

/// Exact totals by asset over service states, and the services whose
/// amounts could not be read (each with why).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Totals {
    pub by_asset: BTreeMap<String, Decimal>,
    pub skipped: Vec<(String, String)>,
}

/// Sums the amounts of `(service, state)` pairs by asset (states parsed
/// with serde_json's `arbitrary_precision`, so each number still has its text). A state
/// contributes through any of:
/// - `balances` or `portfolio`: an object `{asset: amount}`, or a list of
///   `{asset | currency, amount | balance}`;
/// - `balance` with `asset` or `currency` beside it.
///
/// Amounts are JSON numbers (read from their text) or decimal strings;
/// anything else skips that service, whole, and says why.
pub fn totals<'a>(states: impl IntoIterator<Item = (&'a str, &'a Value)>) -> Totals {
    let mut t = Totals::default();
    for (service, state) in states {
        match service_amounts(state) {
            Ok(amounts) => {
                let mut sums = t.by_asset.clone();
                let mut overflow = None;
                for (asset, amount) in amounts {
                    let slot = sums.entry(asset.clone()).or_insert(Decimal::ZERO);
                    match slot.checked_add(amount) {
                        Some(v) => *slot = v,
                        None => {
                            overflow = Some(format!("the {asset} total overflows a decimal"));
                            break;
                        }
                    }
                }
                match overflow {
                    None => t.by_asset = sums,
                    Some(why) => t.skipped.push((service.to_owned(), why)),
                }
            }
            Err(why) => t.skipped.push((service.to_owned(), why)),
        }
    }
    t
}

/// One amount: a JSON number's text or a decimal string, exactly.
fn amount(v: &Value) -> std::result::Result<Decimal, String> {
    let text = match v {
        Value::Number(n) => n.as_str(),
        Value::String(s) => s.as_str(),
        other => return Err(format!("amount {other} is not a number or a decimal string")),
    };
    let parsed = if text.contains(['e', 'E']) { Decimal::from_scientific(text) } else { Decimal::from_str_exact(text) };
    parsed.map(|d| d.normalize()).map_err(|e| format!("amount {text}: {e}"))
}

fn service_amounts(state: &Value) -> std::result::Result<Vec<(String, Decimal)>, String> {
    let Value::Object(top) = state else { return Ok(Vec::new()) };
    let mut out = Vec::new();
    for field in ["balances", "portfolio"] {
        match top.get(field) {
            None | Some(Value::Null) => {}
            Some(Value::Object(m)) => {
                for (asset, v) in m {
                    out.push((asset.clone(), amount(v)?));
                }
            }
            Some(Value::Array(items)) => {
                for item in items {
                    let asset = item.get("asset").or_else(|| item.get("currency")).and_then(Value::as_str).ok_or_else(|| format!("{field}: an entry names no asset"))?;
                    let v = item.get("amount").or_else(|| item.get("balance")).ok_or_else(|| format!("{field}: {asset} has no amount"))?;
                    out.push((asset.to_owned(), amount(v)?));
                }
            }
            Some(other) => return Err(format!("{field} is {other}, not an object or a list")),
        }
    }
    if let (Some(v), Some(asset)) = (top.get("balance"), top.get("asset").or_else(|| top.get("currency")).and_then(Value::as_str)) {
        out.push((asset.to_owned(), amount(v)?));
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
