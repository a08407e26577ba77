//! The Worker's extractor hook, chosen by `EDGEMEM_EXTRACTOR`:
//! - `offline` (the default): the rule-based extractor, no model;
//! - `http`: the npm hook's request (`{strategy, prompt?, turns}`) POSTed
//!   as JSON to `EDGEMEM_EXTRACTOR_URL`, with the secret
//!   `EDGEMEM_EXTRACTOR_API_KEY` as a bearer token, under a deadline of
//!   `EDGEMEM_EXTRACTOR_TIMEOUT_MS`; the answer is the npm hook's (a JSON
//!   array of memories);
//! - `workers-ai`: an instruction model through the `AI` binding
//!   (`EDGEMEM_EXTRACTOR_MODEL`), asked for that same JSON array.
//!
//! Either answer goes through `api::extraction::candidates_from_json`, so
//! a model that answers prose is a `hook_failed` pass, retried with backoff
//! and then surfaced; nothing half-read is stored. The key is never kept
//! and is scrubbed from any error text.

use std::time::Duration;

use futures_util::future::{select, Either};
use worker::{Delay, Env, Fetch, Headers, Method, Request, RequestInit};

use super::services::{AiChatInput, AiMessage, AiText};
use crate::api::extraction::{candidates_from_json, hook_request_json};
use crate::core::error::{Error, Result};
use crate::core::extract::{Candidate, Strategy};
use crate::core::limits;
use crate::core::session::Message;

/// Workers AI model for extraction unless `EDGEMEM_EXTRACTOR_MODEL` names another.
const MODEL_DEFAULT: &str = "@cf/meta/llama-3.1-8b-instruct";

/// Which extractor `EDGEMEM_EXTRACTOR` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    Offline,
    Http,
    WorkersAi,
}

/// The configured extractor; an unknown name is a configuration error.
pub fn choice(env: &Env) -> Result<Choice> {
    match super::env_string(env, "EDGEMEM_EXTRACTOR").as_deref() {
        None | Some("offline") => Ok(Choice::Offline),
        Some("http") => Ok(Choice::Http),
        Some("workers-ai") => Ok(Choice::WorkersAi),
        Some(other) => Err(Error::Internal { detail: format!("EDGEMEM_EXTRACTOR={other:?} is not offline, http or workers-ai") }),
    }
}

fn failed(reason: String) -> Error {
    Error::HookFailed { hook: "extractor".into(), reason }
}

/// POSTs the hook request to the configured endpoint.
pub async fn http(env: &Env, strategy: &Strategy, turns: &[Message]) -> Result<Vec<Candidate>> {
    let url = super::env_string(env, "EDGEMEM_EXTRACTOR_URL").ok_or_else(|| failed("EDGEMEM_EXTRACTOR is http but EDGEMEM_EXTRACTOR_URL is not set".into()))?;
    let key = super::env_string(env, "EDGEMEM_EXTRACTOR_API_KEY");
    let scrub = |text: String| match &key {
        Some(k) => text.replace(k.as_str(), "[redacted]"),
        None => text,
    };
    let deadline = super::env_u64(env, "EDGEMEM_EXTRACTOR_TIMEOUT_MS", limits::EXTRACT_HOOK_TIMEOUT_MS_DEFAULT, limits::EXTRACT_HOOK_TIMEOUT_MS_MAX)?;
    let w = |e: worker::Error| failed(scrub(format!("extractor endpoint: {e}")));
    let headers = Headers::new();
    headers.set("content-type", "application/json").map_err(w)?;
    headers.set("accept", "application/json").map_err(w)?;
    if let Some(k) = &key {
        headers.set("authorization", &format!("Bearer {k}")).map_err(w)?;
    }
    let body = hook_request_json(strategy, turns)?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post).with_headers(headers).with_body(Some(body.into()));
    let req = Request::new_with_init(&url, &init).map_err(w)?;
    let call = async {
        let mut resp = Fetch::Request(req).send().await.map_err(w)?;
        let status = resp.status_code();
        if !(200..300).contains(&status) {
            // The body is not echoed: an endpoint may repeat the request.
            return Err(failed(format!("extractor endpoint answered HTTP {status}")));
        }
        let text = resp.text().await.map_err(w)?;
        if text.len() > limits::EXTRACT_HOOK_ANSWER_BYTES_MAX {
            return Err(failed(format!("extractor endpoint answered {} bytes, more than {}", text.len(), limits::EXTRACT_HOOK_ANSWER_BYTES_MAX)));
        }
        candidates_from_json(&text, turns)
    };
    let raced = match select(Box::pin(call), Delay::from(Duration::from_millis(deadline))).await {
        Either::Left((r, _)) => r,
        Either::Right(_) => Err(failed(format!("extractor endpoint did not answer within {deadline} ms"))),
    };
    raced
}

/// What each strategy asks the model for.
fn instructions(strategy: &Strategy) -> String {
    let what = match strategy {
        Strategy::Discrete => "durable facts about the user and dated events (with event_date as RFC 3339 when a date is said)",
        Strategy::Preferences => "the user's likes, dislikes and settings only",
        Strategy::Summary => "one summary of the conversation, with kind \"summary\"",
        Strategy::Custom { prompt } => prompt.as_str(),
    };
    format!(
        "You extract long-term memories from a conversation for an assistant. Extract: {what}. Skip greetings, thanks, acknowledgements and questions without facts. Write each memory as one short third-person sentence (\"User prefers ...\"). Answer with a JSON array only, no prose: [{{\"text\": \"...\", \"kind\": \"fact\" | \"preference\" | \"event\" | \"summary\", \"topics\": [\"...\"], \"entities\": [\"...\"], \"event_date\": \"...\", \"subject\": \"...\"}}]. Answer [] when nothing is worth keeping."
    )
}

/// The first JSON array in a model's answer (models wrap JSON in prose or
/// code fences); the answer itself when it holds none, to fail parsing.
fn json_array(text: &str) -> &str {
    match (text.find('['), text.rfind(']')) {
        (Some(a), Some(b)) if a < b => &text[a..=b],
        _ => text,
    }
}

/// Asks the Workers AI model for the memories of `turns`.
pub async fn workers_ai(env: &Env, strategy: &Strategy, turns: &[Message]) -> Result<Vec<Candidate>> {
    let ai = env.ai("AI").map_err(|_| failed("EDGEMEM_EXTRACTOR is workers-ai but no AI binding is configured ([ai] in wrangler.toml)".into()))?;
    let model = super::env_string(env, "EDGEMEM_EXTRACTOR_MODEL").unwrap_or_else(|| MODEL_DEFAULT.into());
    let mut transcript = String::new();
    for m in turns {
        transcript.push_str(&format!("[{}] {}: {}\n", m.id, m.role, m.content));
    }
    let system = instructions(strategy);
    let input = AiChatInput {
        messages: [AiMessage { role: "system", content: &system }, AiMessage { role: "user", content: &transcript }],
        max_tokens: limits::EXTRACT_HOOK_ANSWER_TOKENS_MAX,
    };
    let out: AiText = ai.run(&model, input).await.map_err(|e| failed(format!("Workers AI: {e}")))?;
    let text = out.response.ok_or_else(|| failed("Workers AI returned no text".into()))?;
    candidates_from_json(json_array(&text), turns)
}
