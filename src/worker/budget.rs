//! `/v1/budget/*`: stateless, answered by the front Worker. Rank assets are
//! fetched once per isolate from the static assets (`/pkg/encodings/`) and
//! kept for the isolate's life.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use serde::Deserialize;
use serde_json::json;
use worker::Env;

use crate::api::budget::BuildBody;
use crate::api::{self, parse_json};
use crate::core::budget::models::{self, Counting};
use crate::core::budget::{estimate_tokens, Estimator};
use crate::core::error::{Error, Result};
use crate::core::tokenizer::{Encoding, EncodingName, Specials};

pub(crate) const ASSETS_BINDING: &str = "ASSETS";

thread_local! {
    static ENCODINGS: RefCell<HashMap<EncodingName, Rc<Encoding>>> = RefCell::new(HashMap::new());
}

pub(crate) async fn encoding(env: &Env, name: EncodingName) -> Result<Rc<Encoding>> {
    if let Some(e) = ENCODINGS.with(|m| m.borrow().get(&name).cloned()) {
        return Ok(e);
    }
    let w = |e: worker::Error| Error::storage(format!("loading {}: {e}", name.as_str()));
    let assets = env.assets(ASSETS_BINDING).map_err(w)?;
    let mut resp = assets.fetch(format!("https://assets.local/pkg/encodings/{}.bin", name.as_str()), None).await.map_err(w)?;
    if resp.status_code() != 200 {
        return Err(Error::storage(format!("encoding asset {} answered HTTP {}", name.as_str(), resp.status_code())));
    }
    let bytes = resp.bytes().await.map_err(w)?;
    let enc = Rc::new(Encoding::from_asset(name, &bytes)?);
    ENCODINGS.with(|m| m.borrow_mut().insert(name, enc.clone()));
    Ok(enc)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CountBody {
    text: String,
    #[serde(default)]
    encoding: Option<String>,
    #[serde(default)]
    model: Option<String>,
}

/// Answers `POST /v1/budget/count` and `POST /v1/budget/build`.
pub async fn route(env: &Env, method: &str, path: &str, body: &[u8]) -> Result<api::Response> {
    let ok = |body| Ok(api::Response { status: 200, body, raw: None, content_type: None });
    match (path, method) {
        ("/v1/budget/count", "POST") => {
            let b: CountBody = parse_json(body)?;
            let counting = match (&b.encoding, &b.model) {
                (Some(e), _) => Counting::Exact(EncodingName::parse(e)?),
                (None, Some(m)) => models::model(m).ok_or_else(|| Error::invalid("model", format!("unknown model {m:?}")))?.counting,
                (None, None) => Counting::Exact(EncodingName::O200kBase),
            };
            match counting {
                Counting::Exact(name) => {
                    let enc = encoding(env, name).await?;
                    ok(json!({ "tokens": enc.count(&b.text, Specials::AsText)?, "encoding": name.as_str() }))
                }
                Counting::Estimate | Counting::Custom => ok(json!({ "tokens": estimate_tokens(&b.text), "encoding": "estimate" })),
            }
        }
        ("/v1/budget/build", "POST") => {
            let b = BuildBody::parse(body)?;
            match b.counting()? {
                Counting::Exact(name) => {
                    let enc = encoding(env, name).await?;
                    ok(b.build(enc.as_ref(), Counting::Exact(name))?)
                }
                Counting::Estimate | Counting::Custom => ok(b.build(&Estimator, Counting::Estimate)?),
            }
        }
        ("/v1/budget/count" | "/v1/budget/build", other) => Err(Error::MethodNotAllowed { method: other.to_owned() }),
        _ => Err(Error::not_found("route", path)),
    }
}
