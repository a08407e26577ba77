//! What the API needs from its host that the pure layers cannot provide:
//! exact encodings (rank tables live in static assets or in JS) and the
//! summarizer hook (a JS function, Workers AI, or none for the offline
//! extractive default).

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use futures_util::future::LocalBoxFuture;

use super::summary_views::GatherPart;

use crate::core::budget::models::{self, Counting};
use crate::core::budget::{Counter, Estimator};
use crate::core::error::{Error, Result};
use crate::core::extract::{Candidate, Strategy};
use crate::core::history::CountCache;
use crate::core::retrieval::StaticEmbedder;
use crate::core::session::Message;
use crate::core::summary_views::{Group, SummaryView};
use crate::core::time::Millis;
use crate::core::tokenizer::{Encoding, EncodingName};

/// Host services for the routes that count tokens or summarize.
pub trait Services {
    /// The exact encoding `name`, loaded once and shared.
    fn encoding(&self, name: EncodingName) -> LocalBoxFuture<'_, Result<Rc<Encoding>>>;

    /// Summarizes `turns`, folding in `previous`, within `tokens_max`
    /// tokens. `None` means no hook is configured: the extractive default
    /// runs instead.
    fn summarize<'a>(&'a self, turns: &'a [Message], previous: Option<&'a str>, tokens_max: usize) -> Option<LocalBoxFuture<'a, Result<String>>>;

    /// Embeds `texts` with the host's model (a JS hook, Workers AI), one
    /// vector each. `None`: the offline hashed n-gram embedder runs instead.
    fn embed<'a>(&'a self, _texts: &'a [String]) -> Option<LocalBoxFuture<'a, Result<Vec<Vec<f32>>>>> {
        None
    }

    /// The identity of [`Services::embed`]'s vectors, stored with a
    /// namespace's vectors so another embedder's never mix with them.
    fn embedder_name(&self) -> String {
        "hook".into()
    }

    /// The distilled static embedder, when the host has its asset: the
    /// offline default. `None`: the hashed n-gram embedder is the fallback.
    fn static_embedder(&self) -> LocalBoxFuture<'_, Option<Rc<StaticEmbedder>>> {
        Box::pin(async { None })
    }

    /// Extracts memory candidates from a session's new `turns` under
    /// `strategy` with the host's model (a JS hook, an LLM endpoint).
    /// `None`: the offline rules (or, for the summary strategy, the
    /// summarizer) run instead.
    fn extract<'a>(&'a self, _strategy: &'a Strategy, _turns: &'a [Message]) -> Option<LocalBoxFuture<'a, Result<Vec<Candidate>>>> {
        None
    }

    /// Reads `service`'s state for `agent_id` from its upstream, as JSON
    /// text: a fetcher hook in npm, an HTTP GET in the Worker. Failures are
    /// `upstream_error` or `upstream_timeout`, naming the service. `None`:
    /// no upstream is configured.
    fn fetch_service<'a>(&'a self, _agent_id: &'a str, _service: &'a str) -> Option<LocalBoxFuture<'a, Result<String>>> {
        None
    }

    /// A tenant-wide vector index outside the engine
    /// ([`super::external_index`]): searches then take their vector side
    /// from its answer, admitted exactly by the engine. `None` (every host
    /// today): the engine's own index answers.
    fn external_index(&self) -> Option<&dyn super::external_index::ExternalIndex> {
        None
    }

    /// A sharded tenant's home: the parts of a summary-view run of `view`
    /// that the tenant's other shards hold (each answers
    /// [`super::summary_views::gather`]). `None` (an unsharded store): this
    /// store holds every record.
    fn summary_parts<'a>(&'a self, _view: &'a SummaryView, _only: Option<&'a Group>, _now: Millis) -> Option<LocalBoxFuture<'a, Result<Vec<GatherPart>>>> {
        None
    }
}

/// No encodings and no hook: counting falls back to the estimator and
/// summaries are extractive. For hosts without rank assets.
pub struct Offline;

impl Services for Offline {
    fn encoding(&self, name: EncodingName) -> LocalBoxFuture<'_, Result<Rc<Encoding>>> {
        Box::pin(async move { Err(Error::EncodingNotLoaded { encoding: name.as_str().to_owned() }) })
    }

    fn summarize<'a>(&'a self, _: &'a [Message], _: Option<&'a str>, _: usize) -> Option<LocalBoxFuture<'a, Result<String>>> {
        None
    }
}

/// A counter chosen for a model: exact when its encoding is published and
/// loadable, the calibrated estimator otherwise.
pub enum ModelCounter {
    Exact(Rc<Encoding>, Rc<CountCache>),
    Estimate,
}

impl ModelCounter {
    /// `exact:<encoding>` or `estimate`, for responses.
    pub fn describe(&self) -> String {
        match self {
            ModelCounter::Exact(enc, _) => format!("exact:{}", enc.name().as_str()),
            ModelCounter::Estimate => "estimate".into(),
        }
    }
}

impl Counter for ModelCounter {
    fn cache_key(&self) -> Option<u8> {
        match self {
            ModelCounter::Exact(enc, _) => enc.as_ref().cache_key(),
            ModelCounter::Estimate => Estimator.cache_key(),
        }
    }

    fn count(&self, text: &str) -> usize {
        match self {
            ModelCounter::Exact(enc, cache) => cache.counter(enc.as_ref()).count(text),
            ModelCounter::Estimate => Estimator.count(text),
        }
    }

    fn truncate<'a>(&self, text: &'a str, tokens_max: usize) -> &'a str {
        match self {
            ModelCounter::Exact(enc, _) => Counter::truncate(enc.as_ref(), text, tokens_max),
            ModelCounter::Estimate => Estimator.truncate(text, tokens_max),
        }
    }
}

thread_local! {
    /// Count memos per encoding, kept for the life of the isolate or page:
    /// a long session's turns are tokenized once, not on every prompt.
    static COUNT_CACHES: RefCell<HashMap<EncodingName, Rc<CountCache>>> = RefCell::new(HashMap::new());
}

fn count_cache(name: EncodingName) -> Rc<CountCache> {
    COUNT_CACHES.with(|m| m.borrow_mut().entry(name).or_default().clone())
}

/// The counter for `model` (AMS counts with cl100k_base when no model is
/// named, and so do we). An exact encoding the host cannot load falls back
/// to the estimator only for models that have no published tokenizer.
pub async fn counter_for(services: &dyn Services, model: Option<&str>) -> Result<ModelCounter> {
    let counting = match model {
        None => Counting::Exact(EncodingName::Cl100kBase),
        Some(m) => models::model(m).ok_or_else(|| Error::invalid("model_name", format!("unknown model {m:?}")))?.counting,
    };
    match counting {
        Counting::Exact(name) => match services.encoding(name).await {
            Ok(enc) => Ok(ModelCounter::Exact(enc, count_cache(name))),
            // A host with no rank tables at all (see [`Offline`]) estimates.
            Err(Error::EncodingNotLoaded { .. }) => Ok(ModelCounter::Estimate),
            Err(e) => Err(e),
        },
        Counting::Estimate | Counting::Custom => Ok(ModelCounter::Estimate),
    }
}
