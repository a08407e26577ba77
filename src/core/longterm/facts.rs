//! Facts over time: records that carry a `fact_key` form one chain per
//! (namespace, user, fact_key), ordered by `(valid_from, key)`.
//!
//! The rule, applied after every change to a chain: each member's
//! `valid_to` is its successor's `valid_from` and its `superseded_by` the
//! successor's id; the last member is current. The chain is a pure function
//! of its members, so arrival order does not matter (a back-dated fact
//! enters already superseded) and a replay of the log rebuilds it exactly.
//! Ties on `valid_from` go to the later key: keys are handed out in log
//! order, so the later write wins, on every replica alike. Deleting the
//! current fact makes its predecessor current again.

use std::collections::{BTreeMap, BTreeSet};

use crate::core::retrieval::record::MemoryRecord;
use crate::core::time::Millis;

use super::{LongTerm, SUPERSEDED_BY};

/// Which chain a record belongs to: (namespace, user_id, fact_key).
pub type ChainKey = (Option<String>, Option<String>, String);

/// The members of every chain, by `(valid_from, key)`. Derived from the
/// records; rebuilt on load.
pub type Chains = BTreeMap<ChainKey, BTreeSet<(Millis, u64)>>;

/// Which versions a search may see.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Currency {
    /// Only what is current: no superseded record (`latest_only`, the default).
    #[default]
    Latest,
    /// What was current at this time: `valid_from <= t < valid_to`, where a
    /// record without `valid_from` holds from its creation.
    AsOf(Millis),
    /// Every version (`include_superseded`).
    All,
}

/// A record's chain, if it states a fact.
pub fn chain_key(r: &MemoryRecord) -> Option<ChainKey> {
    r.fact_key.as_ref().map(|k| (r.namespace.clone(), r.user_id.clone(), k.clone()))
}

/// When a record starts to hold.
pub fn valid_from(r: &MemoryRecord) -> Millis {
    r.valid_from.unwrap_or(r.created_at)
}

impl LongTerm {
    /// Adds `key` to its record's chain (if any) and relinks it; answers
    /// the ids the record superseded.
    pub(super) fn link(&mut self, key: u64) -> Vec<String> {
        let Some((chain, from)) = self.records.get(&key).and_then(|r| chain_key(r).map(|c| (c, valid_from(r)))) else { return Vec::new() };
        self.chains.entry(chain.clone()).or_default().insert((from, key));
        let id = self.records.get(&key).map(|r| r.id.clone()).unwrap_or_default();
        self.relink(&chain).into_iter().filter(|(_, by)| by.as_deref() == Some(id.as_str())).map(|(old, _)| old).collect()
    }

    /// Takes `key` out of its record's chain (if any) and relinks the rest.
    /// Call before the record itself changes or goes.
    pub(super) fn unlink(&mut self, key: u64) {
        let Some((chain, from)) = self.records.get(&key).and_then(|r| chain_key(r).map(|c| (c, valid_from(r)))) else { return };
        if let Some(members) = self.chains.get_mut(&chain) {
            members.remove(&(from, key));
            if members.is_empty() {
                self.chains.remove(&chain);
            }
        }
        if let Some(r) = self.records.get_mut(&key) {
            r.valid_to = None;
            r.superseded_by = None;
            let r = r.clone();
            self.mark(key, &r);
        }
        self.relink(&chain);
    }

    /// Applies the chain rule to one chain; answers the records whose
    /// successor changed, as (id, new successor id).
    pub(super) fn relink(&mut self, chain: &ChainKey) -> Vec<(String, Option<String>)> {
        let Some(members) = self.chains.get(chain) else { return Vec::new() };
        let members: Vec<(Millis, u64)> = members.iter().copied().collect();
        let mut changed = Vec::new();
        for (i, &(_, key)) in members.iter().enumerate() {
            let next = members.get(i + 1).and_then(|&(from, k)| self.records.get(&k).map(|r| (from, r.id.clone())));
            let (to, by) = match next {
                Some((from, id)) => (Some(from), Some(id)),
                None => (None, None),
            };
            let Some(r) = self.records.get_mut(&key) else { continue };
            if r.valid_to != to || r.superseded_by != by {
                r.valid_to = to;
                r.superseded_by.clone_from(&by);
                changed.push((r.id.clone(), by));
                let r = r.clone();
                self.mark(key, &r);
            }
        }
        changed
    }

    /// Whether the record under `key` may be seen under `currency`.
    pub(super) fn visible(&self, key: u64, r: &MemoryRecord, currency: Currency) -> bool {
        match currency {
            Currency::Latest => !self.superseded.contains(&key),
            Currency::All => true,
            Currency::AsOf(t) => {
                // A record superseded outside any chain (an extraction's
                // `metadata.superseded_by`) has no known end: left out.
                let unbounded_end = r.superseded_by.is_none() && self.superseded.contains(&key);
                !unbounded_end && valid_from(r) <= t && r.valid_to.is_none_or(|end| t < end)
            }
        }
    }

    /// Whether a record counts as superseded: by its chain, or by an
    /// extraction's `metadata.superseded_by`.
    pub(super) fn superseded_mark(r: &MemoryRecord) -> bool {
        r.superseded_by.is_some() || r.metadata.contains_key(SUPERSEDED_BY)
    }

    /// The versions of one fact, oldest first.
    pub fn chain(&self, namespace: Option<&str>, user_id: Option<&str>, fact_key: &str) -> Vec<&MemoryRecord> {
        let chain = (namespace.map(str::to_owned), user_id.map(str::to_owned), fact_key.to_owned());
        self.chains.get(&chain).map(|m| m.iter().filter_map(|(_, k)| self.records.get(k)).collect()).unwrap_or_default()
    }
}
