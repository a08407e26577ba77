//! The turns around a hit: records of the same session, in conversation
//! order, so a hit that says "Yes, last week!" comes with the question it
//! answers.

use std::collections::{HashMap, HashSet};

use super::LongTerm;
use crate::core::retrieval::record::MemoryRecord;
use crate::core::time::Millis;

/// A record's place in its session: `metadata.turn` when it is an integer,
/// then creation time, then id.
fn order(r: &MemoryRecord) -> (i64, Millis, &str) {
    let turn = r.metadata.get("turn").and_then(serde_json::Value::as_i64).unwrap_or(i64::MIN);
    (turn, r.created_at, r.id.as_str())
}

impl LongTerm {
    /// For each of `keys`, up to `n` records before and after it in its
    /// session, in order (the hit itself left out). A record without a
    /// session, or one a newer statement superseded, has no neighbours.
    /// One pass over the records, whatever the number of hits.
    pub fn neighbours(&self, keys: &[u64], n: usize) -> Vec<Vec<u64>> {
        let sessions: HashSet<&str> = keys.iter().filter_map(|k| self.records.get(k)?.session_id.as_deref()).collect();
        if n == 0 || sessions.is_empty() {
            return vec![Vec::new(); keys.len()];
        }
        let mut by_session: HashMap<&str, Vec<(u64, &MemoryRecord)>> = HashMap::new();
        for (k, r) in &self.records {
            if let Some(s) = r.session_id.as_deref().filter(|s| sessions.contains(s)) {
                if !self.superseded.contains(k) {
                    by_session.entry(s).or_default().push((*k, r));
                }
            }
        }
        for turns in by_session.values_mut() {
            turns.sort_by(|a, b| order(a.1).cmp(&order(b.1)));
        }
        keys.iter()
            .map(|k| {
                let Some(turns) = self.records.get(k).and_then(|r| by_session.get(r.session_id.as_deref()?)) else { return Vec::new() };
                let Some(at) = turns.iter().position(|t| t.0 == *k) else { return Vec::new() };
                let from = at.saturating_sub(n);
                let to = (at + n + 1).min(turns.len());
                turns[from..to].iter().map(|t| t.0).filter(|t| t != k).collect()
            })
            .collect()
    }
}
