//! Which tenant a request names, and the checks a request passes before any
//! tenant sees it: the body's media type and nesting depth.
//!
//! AMS clients name the namespace in different places: the query, a PUT
//! body, `session.namespace` of a memory prompt, each memory of a create,
//! the `namespace` filter of a search. The Worker authorizes every one of
//! them, and refuses a request that names two, so a write can never land
//! in the first-named tenant's object while naming another.

use serde_json::Value;

use crate::core::error::{Error, Result};
use crate::core::limits;

/// The namespaces a filter value names: a string, `{"eq": s}`, or
/// `{"any": [..]}` / `{"in": [..]}`.
fn named_by(v: Option<&Value>, out: &mut Vec<String>) {
    match v {
        Some(Value::String(s)) => out.push(s.clone()),
        Some(Value::Object(o)) => {
            if let Some(s) = o.get("eq").and_then(Value::as_str) {
                out.push(s.to_owned());
            }
            for key in ["any", "in"] {
                if let Some(list) = o.get(key).and_then(Value::as_array) {
                    out.extend(list.iter().filter_map(Value::as_str).map(str::to_owned));
                }
            }
        }
        _ => {}
    }
}

/// Every namespace a request names, in the query or anywhere its body may
/// carry one, deduplicated in order. A body that is not JSON names none
/// (the route refuses it later).
pub fn named_namespaces(query: &[(String, String)], body: &[u8]) -> Vec<String> {
    let mut out: Vec<String> = query.iter().filter(|(k, _)| k == "namespace").map(|(_, v)| v.clone()).collect();
    if !body.is_empty() {
        if let Ok(v) = serde_json::from_slice::<Value>(body) {
            named_by(v.get("namespace"), &mut out);
            for part in ["session", "long_term_search", "filter", "filters"] {
                named_by(v.get(part).and_then(|s| s.get("namespace")), &mut out);
            }
            if let Some(list) = v.get("memories").and_then(Value::as_array) {
                for m in list {
                    named_by(m.get("namespace"), &mut out);
                }
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|n| seen.insert(n.clone()));
    out
}

/// The one namespace a request names, if any; naming two is refused.
pub fn one_namespace(query: &[(String, String)], body: &[u8]) -> Result<Option<String>> {
    let mut named = named_namespaces(query, body);
    if named.len() > 1 {
        named.sort();
        return Err(Error::invalid("namespace", format!("a request addresses one namespace; this one names {}: send one request per namespace", named.join(", "))));
    }
    Ok(named.pop())
}

/// The memory ids a by-id request addresses (`GET`/`PATCH
/// /v1/long-term-memory/{id}`, `DELETE ?memory_ids=`), for routing one that
/// names no namespace.
pub fn ids_needing_lookup(method: &str, path: &str, query: &[(String, String)]) -> Vec<String> {
    let rest = path.strip_prefix("/v1/long-term-memory/").unwrap_or("");
    match method {
        "GET" | "PATCH" if !rest.is_empty() && !rest.contains('/') && rest != "search" && rest != "forget" => vec![super::percent_decode(rest)],
        "DELETE" if path.trim_end_matches('/') == "/v1/long-term-memory" => {
            query.iter().filter(|(k, _)| k == "memory_ids").map(|(_, v)| v.clone()).take(limits::LTM_DELETE_BATCH_MAX).collect()
        }
        _ => Vec::new(),
    }
}

/// The ids a long-term create names (`memories[*].id`), for the directory.
pub fn created_ids(body: &[u8]) -> Vec<String> {
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| v.get("memories").and_then(Value::as_array).map(|a| a.iter().filter_map(|m| m.get("id").and_then(Value::as_str).map(str::to_owned)).collect()))
        .unwrap_or_default()
}

/// The records an NDJSON import (`POST /v1/import`) carries, with their
/// ids, at most [`limits::LTM_RECORDS_MAX`], for the directory; lines that
/// do not parse are skipped here and refused by the import itself.
pub fn imported_records(body: &[u8]) -> Vec<(String, Value)> {
    let text = String::from_utf8_lossy(body);
    text.lines()
        .filter(|l| l.contains("\"memory\""))
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v.get("type").and_then(Value::as_str) == Some("memory"))
        .filter_map(|mut v| {
            let record = v.get_mut("record").map(Value::take)?;
            Some((record.get("id").and_then(Value::as_str)?.to_owned(), record))
        })
        .take(limits::LTM_RECORDS_MAX)
        .collect()
}

/// Refuses a body that is not JSON by its declared media type. A missing
/// `Content-Type` is accepted (curl, older clients); `text/plain`, the type
/// a browser may send cross-site without a preflight, is not.
pub fn check_content_type(content_type: Option<&str>, body_len: usize) -> Result<()> {
    let Some(ct) = content_type else { return Ok(()) };
    if body_len == 0 {
        return Ok(());
    }
    let essence = ct.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    // NDJSON: an import (`POST /v1/import`) is one JSON object per line.
    if essence == "application/json" || essence == "application/x-ndjson" || (essence.starts_with("application/") && essence.ends_with("+json")) {
        Ok(())
    } else {
        Err(Error::UnsupportedMediaType { content_type: ct.chars().take(100).collect() })
    }
}

/// The deepest nesting of arrays and objects in JSON text, read from the
/// bytes without parsing (strings skipped), stopping once past `cap`.
pub fn json_depth(body: &[u8], cap: usize) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &b in body {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
                if deepest > cap {
                    return deepest;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// Refuses a body nested deeper than [`limits::REQUEST_JSON_DEPTH_MAX`].
pub fn check_depth(body: &[u8]) -> Result<()> {
    if json_depth(body, limits::REQUEST_JSON_DEPTH_MAX) > limits::REQUEST_JSON_DEPTH_MAX {
        return Err(Error::invalid("body", format!("nested deeper than {} levels", limits::REQUEST_JSON_DEPTH_MAX)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect()
    }

    #[test]
    fn every_place_a_namespace_hides_is_read() {
        assert_eq!(named_namespaces(&q(&[("namespace", "a")]), b""), vec!["a"]);
        assert_eq!(named_namespaces(&[], br#"{"namespace":"b"}"#), vec!["b"]);
        assert_eq!(named_namespaces(&[], br#"{"text":"x","namespace":{"eq":"c"}}"#), vec!["c"]);
        assert_eq!(named_namespaces(&[], br#"{"session":{"namespace":"d"},"long_term_search":{"namespace":{"any":["d","e"]}}}"#), vec!["d", "e"]);
        assert_eq!(named_namespaces(&[], br#"{"memories":[{"text":"1","namespace":"a"},{"text":"2"},{"text":"3","namespace":"b"}]}"#), vec!["a", "b"]);
        assert_eq!(named_namespaces(&q(&[("namespace", "a")]), br#"{"memories":[{"namespace":"a"}]}"#), vec!["a"]);
        assert!(named_namespaces(&[], b"not json").is_empty());
    }

    #[test]
    fn a_request_naming_two_tenants_is_refused() {
        let e = one_namespace(&q(&[("namespace", "a")]), br#"{"memories":[{"namespace":"b"}]}"#).unwrap_err();
        assert_eq!(e.code(), "invalid_input");
        assert!(e.to_string().contains("a, b"));
        assert_eq!(one_namespace(&[], br#"{"memories":[{"namespace":"b"},{"namespace":"b"}]}"#).unwrap(), Some("b".into()));
        assert_eq!(one_namespace(&[], b"{}").unwrap(), None);
    }

    #[test]
    fn media_types_and_depth() {
        assert!(check_content_type(None, 10).is_ok());
        assert!(check_content_type(Some("application/json; charset=utf-8"), 10).is_ok());
        assert!(check_content_type(Some("application/merge-patch+json"), 10).is_ok());
        assert!(check_content_type(Some("text/plain"), 0).is_ok());
        assert_eq!(check_content_type(Some("text/plain;charset=UTF-8"), 2).unwrap_err().code(), "unsupported_media_type");
        assert_eq!(check_content_type(Some("application/x-www-form-urlencoded"), 2).unwrap_err().code(), "unsupported_media_type");
        assert_eq!(json_depth(br#"{"a":[1,{"b":"[[[[{{{"}]}"#, 100), 3);
        assert_eq!(json_depth(br#"{"a":"\"[[["}"#, 100), 1);
        let deep = "[".repeat(limits::REQUEST_JSON_DEPTH_MAX + 1) + &"]".repeat(limits::REQUEST_JSON_DEPTH_MAX + 1);
        assert_eq!(check_depth(deep.as_bytes()).unwrap_err().code(), "invalid_input");
        let ok = "[".repeat(limits::REQUEST_JSON_DEPTH_MAX) + &"]".repeat(limits::REQUEST_JSON_DEPTH_MAX);
        assert!(check_depth(ok.as_bytes()).is_ok());
    }

    #[test]
    fn by_id_routes_are_found() {
        assert_eq!(ids_needing_lookup("GET", "/v1/long-term-memory/01A", &[]), vec!["01A"]);
        assert!(ids_needing_lookup("GET", "/v1/long-term-memory/search", &[]).is_empty());
        assert_eq!(ids_needing_lookup("DELETE", "/v1/long-term-memory", &q(&[("memory_ids", "x"), ("memory_ids", "y")])), vec!["x", "y"]);
        assert_eq!(created_ids(br#"{"memories":[{"id":"a","text":"t"},{"text":"u"}]}"#), vec!["a"]);
    }
}
