//! `/v1/budget` request and response shapes, shared by the Worker and the
//! JS API so both refuse and report exactly the same things.

use serde::Deserialize;
use serde_json::{json, Value};

use super::parse_json;
use crate::core::budget::models::{self, Counting};
use crate::core::budget::{build, Budget, Counter, Slot};
use crate::core::error::{Error, Result};
use crate::core::tokenizer::EncodingName;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SlotBody {
    name: String,
    content: String,
    priority: u8,
}

/// The body of `POST /v1/budget/build`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BuildBody {
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    max_tokens: Option<usize>,
    #[serde(default)]
    encoding: Option<String>,
    #[serde(default)]
    reserve_for_output: Option<usize>,
    #[serde(default)]
    truncate_at_priority: Option<u8>,
    #[serde(default)]
    message_overhead_tokens: Option<usize>,
    slots: Vec<SlotBody>,
    #[serde(default)]
    tools: Option<Value>,
}

impl BuildBody {
    /// Parses and checks the model or window.
    pub fn parse(body: &[u8]) -> Result<BuildBody> {
        let b: BuildBody = parse_json(body)?;
        if b.model.is_none() && b.max_tokens.is_none() {
            return Err(Error::invalid("model", "give a model or max_tokens"));
        }
        Ok(b)
    }

    /// How tokens must be counted: the explicit `encoding`, else the
    /// model's, else the estimator.
    pub fn counting(&self) -> Result<Counting> {
        counting_of(self.encoding.as_deref(), self.model.as_deref())
    }

    /// Builds the context with `counter` (which must match [`Self::counting`]).
    pub fn build(&self, counter: &dyn Counter, counting: Counting) -> Result<Value> {
        let window = window_of(self.max_tokens, self.model.as_deref())?;
        let defaults = Budget::new(window);
        let budget = Budget {
            window_tokens: window,
            reserve_for_output_tokens: self.reserve_for_output.unwrap_or(defaults.reserve_for_output_tokens),
            truncate_at_priority: self.truncate_at_priority.unwrap_or(defaults.truncate_at_priority),
            message_overhead_tokens: self.message_overhead_tokens.unwrap_or(defaults.message_overhead_tokens),
        };
        let slots: Vec<Slot> = self.slots.iter().map(|s| Slot { name: s.name.clone(), content: s.content.clone(), priority: s.priority }).collect();
        let tools = self.tools.as_ref().map(Value::to_string);
        let b = build(counter, &budget, &slots, tools.as_deref())?;
        let percent = |n: usize| (n as f64 * 10_000.0 / window as f64).round() / 100.0;
        Ok(json!({
            "context": b.context,
            "used": b.used_tokens,
            "left": b.left_tokens,
            "window": b.window_tokens,
            "reserve_for_output": budget.reserve_for_output_tokens,
            "tools": b.tools_tokens,
            "percent_used": percent(b.used_tokens),
            "percent_left": percent(b.left_tokens),
            "encoding": counting_name(counting),
            "slots": b.slots.iter().map(|s| json!({ "name": s.name, "status": s.status.as_str(), "tokens": s.tokens })).collect::<Vec<_>>(),
        }))
    }
}

/// A model's row of the table as JSON, or `null`.
pub fn model_json(name: &str) -> Value {
    match models::model(name) {
        None => Value::Null,
        Some(m) => json!({
            "name": m.name,
            "encoding": match m.counting { Counting::Exact(e) => Value::from(e.as_str()), Counting::Estimate | Counting::Custom => Value::Null },
            "context_window_tokens": m.context_window_tokens,
            "output_tokens_max": m.output_tokens_max,
        }),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MessageBody {
    role: String,
    content: String,
}

/// The body of a "does this request fit?" check: chat messages and tools
/// against a model's window minus the reply reserve.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FitBody {
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    max_tokens: Option<usize>,
    #[serde(default)]
    encoding: Option<String>,
    #[serde(default)]
    reserve_for_output: Option<usize>,
    messages: Vec<MessageBody>,
    #[serde(default)]
    tools: Option<Value>,
}

/// Tokens OpenAI's chat format adds once to prime the reply.
const REPLY_PRIMER_TOKENS: usize = 3;

impl FitBody {
    pub fn parse(body: &[u8]) -> Result<FitBody> {
        let b: FitBody = parse_json(body)?;
        if b.model.is_none() && b.max_tokens.is_none() {
            return Err(Error::invalid("model", "give a model or max_tokens"));
        }
        if b.messages.len() > crate::core::limits::SLOTS_MAX {
            return Err(Error::LimitExceeded { what: "messages".into(), limit: crate::core::limits::SLOTS_MAX as u64 });
        }
        Ok(b)
    }

    /// As [`BuildBody::counting`].
    pub fn counting(&self) -> Result<Counting> {
        counting_of(self.encoding.as_deref(), self.model.as_deref())
    }

    /// `{"fits", "tokens", "limit", "window", "encoding"}`.
    pub fn check(&self, counter: &dyn Counter, counting: Counting) -> Result<Value> {
        let window = window_of(self.max_tokens, self.model.as_deref())?;
        let reserve = self.reserve_for_output.unwrap_or(0);
        if reserve >= window {
            return Err(Error::invalid("reserve_for_output", "must be smaller than the window"));
        }
        let total: usize = self.messages.iter().map(|m| m.content.len() + m.role.len()).sum();
        if total > crate::core::limits::TOKENIZER_INPUT_BYTES_MAX {
            return Err(Error::too_large("messages", total, crate::core::limits::TOKENIZER_INPUT_BYTES_MAX));
        }
        let mut tokens = REPLY_PRIMER_TOKENS;
        for m in &self.messages {
            tokens += crate::core::limits::MESSAGE_OVERHEAD_TOKENS_DEFAULT + counter.count(&m.role) + counter.count(&m.content);
        }
        if let Some(t) = &self.tools {
            tokens += counter.count(&t.to_string());
        }
        let limit = window - reserve;
        Ok(json!({ "fits": tokens <= limit, "tokens": tokens, "limit": limit, "window": window, "encoding": counting_name(counting) }))
    }
}

fn counting_name(c: Counting) -> &'static str {
    match c {
        Counting::Exact(e) => e.as_str(),
        Counting::Estimate => "estimate",
        Counting::Custom => "custom",
    }
}

fn counting_of(encoding: Option<&str>, model: Option<&str>) -> Result<Counting> {
    if let Some(e) = encoding {
        return Ok(Counting::Exact(EncodingName::parse(e)?));
    }
    match model {
        Some(m) => Ok(models::model(m).ok_or_else(|| Error::invalid("model", format!("unknown model {m:?}: pass max_tokens instead")))?.counting),
        None => Ok(Counting::Estimate),
    }
}

fn window_of(max_tokens: Option<usize>, model: Option<&str>) -> Result<usize> {
    let window = match (max_tokens, model.and_then(models::model)) {
        (Some(n), _) => n,
        (None, Some(m)) => m.context_window_tokens as usize,
        (None, None) => return Err(Error::invalid("model", "unknown model: pass max_tokens instead")),
    };
    if window == 0 || window > crate::core::limits::WINDOW_TOKENS_MAX {
        return Err(Error::invalid("max_tokens", format!("must be 1 to {}", crate::core::limits::WINDOW_TOKENS_MAX)));
    }
    Ok(window)
}
