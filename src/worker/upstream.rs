//! The service-state cache's upstream in the Worker: an HTTP GET of
//! `{EDGEMEM_SERVICES_URL}/{service}/state?agent_id=…`, with the API key
//! from the secret `EDGEMEM_SERVICES_API_KEY` as a bearer token, and a
//! deadline of `EDGEMEM_SERVICES_TIMEOUT_MS` (default
//! [`limits::SERVICE_FETCH_TIMEOUT_MS_DEFAULT`]).
//!
//! The key is sent and never kept: it is not in state, not in a log line,
//! and scrubbed from any error text before that text leaves this module.

use std::time::Duration;

use futures_util::future::{select, Either};
use worker::{Delay, Env, Fetch, Headers, Method, Request, RequestInit};

use crate::core::error::{Error, Result};
use crate::core::limits;

/// The upstream's base URL, when one is configured.
pub fn base_url(env: &Env) -> Option<String> {
    super::env_string(env, "EDGEMEM_SERVICES_URL")
}

fn timeout_ms(env: &Env) -> Result<u64> {
    super::env_u64(env, "EDGEMEM_SERVICES_TIMEOUT_MS", limits::SERVICE_FETCH_TIMEOUT_MS_DEFAULT, limits::SERVICE_FETCH_TIMEOUT_MS_MAX)
}

/// Percent-encodes a query or path component.
fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Reads one service's state as JSON text.
pub async fn fetch(env: &Env, base: &str, agent_id: &str, service: &str) -> Result<String> {
    let key = super::env_string(env, "EDGEMEM_SERVICES_API_KEY");
    let scrub = |text: String| match &key {
        Some(k) if !k.is_empty() => text.replace(k.as_str(), "[redacted]"),
        _ => text,
    };
    let upstream = |status: u16, detail: String| Error::Upstream { service: service.into(), status, detail: scrub(detail) };
    let deadline = timeout_ms(env)?;
    let url = format!("{}/{}/state?agent_id={}", base.trim_end_matches('/'), encode(service), encode(agent_id));
    let headers = Headers::new();
    let w = |e: worker::Error| upstream(0, e.to_string());
    headers.set("accept", "application/json").map_err(w)?;
    if let Some(k) = &key {
        headers.set("authorization", &format!("Bearer {k}")).map_err(w)?;
    }
    let mut init = RequestInit::new();
    init.with_method(Method::Get).with_headers(headers);
    let req = Request::new_with_init(&url, &init).map_err(w)?;
    let call = async {
        let mut resp = Fetch::Request(req).send().await.map_err(w)?;
        let status = resp.status_code();
        if !(200..300).contains(&status) {
            // The body is not echoed: an upstream may repeat the request, key included.
            return Err(upstream(status, String::new()));
        }
        resp.text().await.map_err(w)
    };
    // Bound before matching: the tail expression's temporaries would outlive the closures it borrows.
    let raced = match select(Box::pin(call), Delay::from(Duration::from_millis(deadline))).await {
        Either::Left((r, _)) => r,
        Either::Right(_) => Err(Error::UpstreamTimeout { service: service.into(), timeout_ms: deadline }),
    };
    raced
}
