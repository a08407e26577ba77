//! The privacy scrub as a plain function, for text that never enters
//! memory (a prompt about to leave for a model, a log line): the same
//! detectors the store runs on every write.

use wasm_bindgen::prelude::*;

use super::{check_body, to_js_error};
use crate::core::limits;
use crate::core::privacy::{redact_secrets, Anonymizer, PseudonymKey, Report};

/// Scrubs `text`: secrets become `[REDACTED:kind]`; with `anonymize`,
/// personal data becomes placeholders, or pseudonyms under `privacy_key`
/// (derived for `namespace`). Answers `{"text", "redactions", "anonymized"}`
/// as JSON text.
#[wasm_bindgen(js_name = scrubText)]
pub fn scrub_text(text: String, anonymize: bool, privacy_key: Option<String>, namespace: Option<String>) -> Result<String, JsValue> {
    check_body("", &text)?;
    if text.len() > limits::MESSAGE_CONTENT_BYTES_MAX {
        return Err(to_js_error(&crate::core::error::Error::too_large("text", text.len(), limits::MESSAGE_CONTENT_BYTES_MAX)));
    }
    let key = match privacy_key {
        None => None,
        Some(secret) => Some(PseudonymKey::derive(secret.as_bytes(), namespace.as_deref().unwrap_or("default")).map_err(|e| to_js_error(&e))?),
    };
    let (mut redactions, mut anonymized) = (Report::default(), Report::default());
    let mut out = redact_secrets(&text, &mut redactions).unwrap_or(text);
    if anonymize {
        if let Some(t) = Anonymizer::new(key.as_ref()).anonymize(&out, &mut anonymized) {
            out = t;
        }
    }
    Ok(serde_json::json!({ "text": out, "redactions": redactions.counts, "anonymized": anonymized.counts }).to_string())
}
