//! The token ceiling on a tool result: a long answer is shortened by whole
//! items and marked, never cut mid-JSON, so the model still gets valid JSON
//! and knows something was left out.

use serde_json::{json, Value};

use crate::core::budget::Counter;

/// Shortens `v` until its JSON text counts at most `tokens_max` tokens:
/// 1. whole items leave the end of the largest array, and the object
///    holding it (or the top) gains `"truncated": {"omitted", "total"}`;
/// 2. then the longest string is cut at a char boundary and ends with
///    `…[truncated]`.
///
/// Returns whether anything was cut.
pub fn fit(v: &mut Value, tokens_max: usize, counter: &dyn Counter) -> bool {
    let count = |v: &Value| counter.count(&v.to_string());
    if count(v) <= tokens_max {
        return false;
    }
    if let Some(path) = largest_array(v, &mut Vec::new(), 0).map(|(_, p)| p) {
        let total = array_at(v, &path).map_or(0, |a| a.len());
        // Binary search the longest prefix that fits, marker included.
        let full = array_at(v, &path).cloned().unwrap_or_default();
        let (mut lo, mut hi) = (0usize, total);
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            set_prefix(v, &path, &full, mid, total);
            if count(v) <= tokens_max {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        set_prefix(v, &path, &full, lo, total);
    }
    // Strings: cut the longest until it fits (a bounded number of rounds).
    for _ in 0..8 {
        let excess = count(v).saturating_sub(tokens_max);
        if excess == 0 {
            break;
        }
        let Some(s) = longest_string(v) else { break };
        let keep_chars = s.chars().count().saturating_sub(excess * 4 + 16);
        let cut: String = s.chars().take(keep_chars).collect();
        *s = format!("{cut}…[truncated]");
    }
    true
}

fn largest_array(v: &Value, path: &mut Vec<Key>, depth: usize) -> Option<(usize, Vec<Key>)> {
    if depth > 4 {
        return None;
    }
    let mut best: Option<(usize, Vec<Key>)> = None;
    let mut consider = |c: Option<(usize, Vec<Key>)>| {
        if let Some(c) = c {
            if best.as_ref().is_none_or(|b| c.0 > b.0) {
                best = Some(c);
            }
        }
    };
    match v {
        Value::Array(a) if !a.is_empty() => {
            consider(Some((v.to_string().len(), path.clone())));
        }
        Value::Object(o) => {
            for (k, child) in o {
                path.push(Key(k.clone()));
                consider(largest_array(child, path, depth + 1));
                path.pop();
            }
        }
        _ => {}
    }
    best
}

#[derive(Clone)]
struct Key(String);

fn array_at<'v>(v: &'v Value, path: &[Key]) -> Option<&'v Vec<Value>> {
    path.iter().try_fold(v, |v, k| v.get(&k.0))?.as_array()
}

/// Keeps the first `n` of `full` at `path`, with the marker beside it.
fn set_prefix(v: &mut Value, path: &[Key], full: &[Value], n: usize, total: usize) {
    let (last, parents) = match path.split_last() {
        Some(x) => x,
        None => {
            // The top is the array: wrap is impossible without changing the
            // shape, so only shorten it and append a marker item.
            let mut items: Vec<Value> = full[..n].to_vec();
            if n < total {
                items.push(json!({ "truncated": { "omitted": total - n, "total": total } }));
            }
            *v = Value::Array(items);
            return;
        }
    };
    let Some(parent) = parents.iter().try_fold(&mut *v, |v, k| v.get_mut(&k.0)) else { return };
    let Some(o) = parent.as_object_mut() else { return };
    o.insert(last.0.clone(), Value::Array(full[..n].to_vec()));
    if n < total {
        o.insert("truncated".into(), json!({ "omitted": total - n, "total": total }));
    } else {
        o.remove("truncated");
    }
}

fn longest_string(v: &mut Value) -> Option<&mut String> {
    fn walk<'v>(v: &'v mut Value, best: &mut Option<&'v mut String>) {
        match v {
            Value::String(s) if best.as_ref().is_none_or(|b| s.len() > b.len()) => *best = Some(s),
            Value::Array(a) => a.iter_mut().for_each(|x| walk(x, best)),
            Value::Object(o) => o.values_mut().for_each(|x| walk(x, best)),
            _ => {}
        }
    }
    let mut best = None;
    walk(v, &mut best);
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::budget::Estimator;

    #[test]
    fn a_long_list_loses_whole_items_and_says_so() {
        let memories: Vec<Value> = (0..200).map(|i| json!({ "id": format!("m{i}"), "text": "a memory about Lisbon and trams ".repeat(4) })).collect();
        let mut v = json!({ "memories": memories, "total": 200 });
        assert!(fit(&mut v, 500, &Estimator));
        assert!(Estimator.count(&v.to_string()) <= 500);
        let kept = v["memories"].as_array().unwrap().len();
        assert!(kept > 0 && kept < 200);
        assert_eq!(v["truncated"], json!({ "omitted": 200 - kept, "total": 200 }));
        // Still valid JSON: it round-trips.
        let text = v.to_string();
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), v);
    }

    #[test]
    fn a_single_long_string_is_cut_at_a_char_boundary_with_a_marker() {
        let mut v = json!({ "text": "é".repeat(20_000) });
        assert!(fit(&mut v, 200, &Estimator));
        let s = v["text"].as_str().unwrap();
        assert!(s.ends_with("…[truncated]"));
        assert!(Estimator.count(&v.to_string()) <= 200);
    }

    #[test]
    fn a_short_result_is_untouched() {
        let mut v = json!({ "now": "2026-01-01T00:00:00Z" });
        let before = v.clone();
        assert!(!fit(&mut v, 100, &Estimator));
        assert_eq!(v, before);
    }
}
