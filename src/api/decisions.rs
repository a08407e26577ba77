//! `/v1/working-memory/{session_id}/decisions`: the session's decision log.
//!
//! POST appends one entry; GET pages it (`kinds`, `since`, `limit`) as JSON
//! or, with `format=jsonl`, as JSON Lines for export. Following it live is
//! the change feed's job (`decision.appended`, keyed by the session id).

use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::{parse_json, privacy::report_into, Request, Response};
use crate::core::decisions::{DecisionEntry, DecisionKind, DecisionRefs};
use crate::core::engine::{Applied, Op};
use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::session::validate_id;
use crate::core::time::{format_rfc3339, Millis};
use crate::store::{Backend, Store};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AppendBody {
    // Any JSON, so a missing or non-string kind is the same 400
    // `unknown_kind` as a misspelt one, not a shape error.
    #[serde(default)]
    kind: Value,
    text: String,
    #[serde(default)]
    data: Option<Map<String, Value>>,
    #[serde(default)]
    refs: Option<DecisionRefs>,
}

/// An entry as JSON: `ts` in RFC 3339, absent `data`/`refs` left out.
pub fn entry_json(e: &DecisionEntry) -> Value {
    let mut v = json!({ "seq": e.seq, "ts": format_rfc3339(e.ts), "kind": e.kind.as_str(), "text": e.text });
    if let Some(d) = &e.data {
        v["data"] = Value::Object(d.clone());
    }
    if let Some(r) = &e.refs {
        v["refs"] = serde_json::to_value(r).unwrap_or(Value::Null);
    }
    v
}

fn parse_kinds(list: Option<&str>) -> Result<Vec<DecisionKind>> {
    let Some(list) = list.filter(|l| !l.is_empty()) else { return Ok(Vec::new()) };
    list.split(',').take(DecisionKind::ALL.len() + 1).map(|k| DecisionKind::parse("kinds", k.trim())).collect()
}

/// The route.
pub async fn route<B: Backend>(store: &Store<B>, req: &Request<'_>, session_id: &str, now: Millis) -> Result<Response> {
    validate_id("session_id", session_id)?;
    match req.method {
        "POST" => {
            // Checked on the raw body first, so an oversized entry is 413
            // whatever its shape.
            let cap = limits::DECISION_TEXT_BYTES_MAX + limits::DECISION_DATA_BYTES_MAX + 16 * 1024;
            if req.body.len() > cap {
                return Err(Error::too_large("decision entry", req.body.len(), cap));
            }
            let b: AppendBody = parse_json(req.body)?;
            let kind = match &b.kind {
                Value::String(k) => DecisionKind::parse("kind", k)?,
                Value::Null => DecisionKind::parse("kind", "")?,
                other => DecisionKind::parse("kind", &other.to_string())?,
            };
            // Validated by the log itself when the op applies.
            let entry = DecisionEntry { seq: 0, ts: 0, kind, text: b.text, data: b.data, refs: b.refs };
            let (applied, scrubbed) = store.apply_reporting(Op::DecisionAppend { session_id: session_id.to_owned(), entry }, now).await?;
            match applied {
                Applied::Decision(e) => {
                    let mut v = entry_json(&e);
                    report_into(&mut v, &scrubbed);
                    Ok(Response::ok(v))
                }
                other => Err(Error::Internal { detail: format!("decision append returned {other:?}") }),
            }
        }
        "GET" => {
            let kinds = parse_kinds(req.param("kinds").or(req.param("kind")))?;
            let since = match req.param("since") {
                None => 0,
                Some(s) => s.parse::<u64>().map_err(|_| Error::InvalidQuery { param: "since".into(), reason: format!("must be a non-negative integer, got {s:?}") })?,
            };
            let jsonl = match req.param("format") {
                None | Some("json") => false,
                Some("jsonl" | "ndjson") => true,
                Some(other) => return Err(Error::InvalidQuery { param: "format".into(), reason: format!("json or jsonl, got {other:?}") }),
            };
            // An export is the whole log unless a limit is asked for (the
            // log's own bounds cap it); a JSON page is a page.
            let limit = if jsonl {
                req.param_usize("limit", limits::DECISIONS_PER_SESSION_MAX, 1, limits::DECISIONS_PER_SESSION_MAX)?
            } else {
                req.param_usize("limit", limits::DECISION_PAGE_LIMIT_DEFAULT, 1, limits::DECISION_PAGE_LIMIT_MAX)?
            };
            let page = store
                .read(|e| {
                    e.decisions(session_id, now).map(|log| match log {
                        None => (Vec::new(), 0),
                        Some(log) => (log.page(since, &kinds, limit).into_iter().map(entry_json).collect::<Vec<_>>(), log.last_seq()),
                    })
                })
                .await?;
            let (entries, last_seq) = page.ok_or_else(|| Error::not_found("session", session_id))?;
            if jsonl {
                let mut out = Vec::new();
                for e in &entries {
                    serde_json::to_writer(&mut out, e).map_err(|e| Error::Internal { detail: e.to_string() })?;
                    out.push(b'\n');
                }
                return Ok(Response { status: 200, body: Value::Null, raw: Some(out), content_type: Some("application/x-ndjson") });
            }
            Ok(Response::ok(json!({ "session_id": session_id, "entries": entries, "last_seq": last_seq })))
        }
        other => Err(Error::MethodNotAllowed { method: other.to_owned() }),
    }
}
