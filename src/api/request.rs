//! Decoding a request: the target's path and query, and JSON bodies whose
//! errors name the field at fault.

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::Request;
use crate::core::error::{Error, Result};

/// Splits `path?query` and decodes the query.
pub fn split_target(target: &str) -> (&str, Vec<(String, String)>) {
    match target.split_once('?') {
        None => (target, Vec::new()),
        Some((path, q)) => (path, parse_query(q)),
    }
}

/// Decodes `a=1&b=x%20y` (with `+` as space).
pub fn parse_query(q: &str) -> Vec<(String, String)> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (percent_decode(&k.replace('+', " ")), percent_decode(&v.replace('+', " ")))
        })
        .collect()
}

/// A boolean query parameter `name` (`true`/`1`, `false`/`0`; absent is
/// false); anything else is `invalid_query`.
pub fn query_flag(name: &str, value: Option<&str>) -> Result<bool> {
    match value {
        None => Ok(false),
        Some("true" | "1") => Ok(true),
        Some("false" | "0") => Ok(false),
        Some(v) => Err(Error::InvalidQuery { param: name.into(), reason: format!("must be true or false, got {v:?}") }),
    }
}

/// Decodes `%XX` escapes; invalid escapes and invalid UTF-8 are kept lossily
/// rather than refused, so the id validation reports them.
pub fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = std::str::from_utf8(&b[i + 1..i + 3]).ok().and_then(|h| u8::from_str_radix(h, 16).ok());
            if let Some(byte) = hex {
                out.push(byte);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl Request<'_> {
    pub(crate) fn param(&self, name: &str) -> Option<&str> {
        self.query.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    pub(crate) fn param_usize(&self, name: &str, default: usize, min: usize, max: usize) -> Result<usize> {
        match self.param(name) {
            None => Ok(default),
            Some(v) => match v.parse::<usize>() {
                Ok(n) if (min..=max).contains(&n) => Ok(n),
                _ => Err(Error::invalid(name, format!("must be an integer from {min} to {max}"))),
            },
        }
    }
}

/// Parses a JSON body: syntax errors are 400 `invalid_json`, wrong types or
/// values are 422 `invalid_input` naming the field (`transfers[0].amount`).
pub fn parse_json<T: DeserializeOwned>(body: &[u8]) -> Result<T> {
    serde_json::from_slice(body).map_err(|e| match e.classify() {
        serde_json::error::Category::Data => Error::invalid(field_at(body, e.line(), e.column()), e.to_string()),
        // serde_json reports a wrong type for an enum as a syntax error; in
        // well-formed JSON it is the value that is wrong.
        serde_json::error::Category::Syntax if serde_json::from_slice::<serde::de::IgnoredAny>(body).is_ok() => {
            Error::invalid(field_at(body, e.line(), e.column()), e.to_string().replace("expected value", "expected one of the allowed values"))
        }
        _ => Error::InvalidJson { detail: e.to_string() },
    })
}

/// [`parse_json`] for a value already parsed (and rewritten, such as user
/// ids sealed): errors name the field as they would from the body.
pub fn from_value<T: DeserializeOwned>(v: &Value) -> Result<T> {
    parse_json(&serde_json::to_vec(v).map_err(|e| Error::Internal { detail: e.to_string() })?)
}

/// The path of the value being read at `line:column` of a JSON text (as
/// serde reports an error), such as `transfers[0].amount`; `body` at the top.
/// A plain scan, not generic: one copy in the wasm for every body type.
fn field_at(body: &[u8], line: usize, column: usize) -> String {
    enum Frame {
        Obj { key: Option<String>, expecting_key: bool },
        Arr(usize),
    }
    let line_start = if line <= 1 { 0 } else { body.iter().enumerate().filter(|(_, b)| **b == b'\n').nth(line - 2).map_or(body.len(), |(i, _)| i + 1) };
    let end = (line_start + column).min(body.len());
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0;
    while i < end {
        match body[i] {
            b'{' => stack.push(Frame::Obj { key: None, expecting_key: true }),
            b'[' => stack.push(Frame::Arr(0)),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => match stack.last_mut() {
                Some(Frame::Obj { expecting_key, .. }) => *expecting_key = true,
                Some(Frame::Arr(n)) => *n += 1,
                None => {}
            },
            b':' => {
                if let Some(Frame::Obj { expecting_key, .. }) = stack.last_mut() {
                    *expecting_key = false;
                }
            }
            b'"' => {
                let start = i + 1;
                i += 1;
                while i < body.len() && body[i] != b'"' {
                    i += if body[i] == b'\\' { 2 } else { 1 };
                }
                if let Some(Frame::Obj { key, expecting_key: true }) = stack.last_mut() {
                    *key = Some(String::from_utf8_lossy(&body[start..i.min(body.len())]).into_owned());
                }
            }
            _ => {}
        }
        i += 1;
    }
    let mut path = String::new();
    for f in &stack {
        match f {
            Frame::Obj { key: Some(k), .. } => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(k);
            }
            Frame::Obj { key: None, .. } => {}
            Frame::Arr(n) => path.push_str(&format!("[{n}]")),
        }
    }
    if path.is_empty() {
        "body".to_owned()
    } else {
        path
    }
}

/// The path segments after `/v1/`, percent-decoded.
pub(super) fn segments(path: &str) -> Option<Vec<String>> {
    let rest = path.strip_prefix("/v1/")?;
    Some(rest.split('/').map(percent_decode).collect())
}

