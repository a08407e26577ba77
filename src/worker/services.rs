//! The Worker's host services: rank tables from the static assets (loaded
//! once per isolate, shared with `/v1/budget`), Workers AI as the
//! summarizer when an `AI` binding is configured (without one, compaction
//! uses the offline extractive summarizer), and the embedder chosen by
//! `EDGEMEM_EMBEDDER`: the distilled static one from the assets (default),
//! the hashed one, or Workers AI.

use std::cell::RefCell;
use std::rc::Rc;

use futures_util::future::LocalBoxFuture;
use serde::{Deserialize, Serialize};
use worker::Env;

use crate::api::services::Services;
use crate::api::summary_views::GatherPart;
use crate::core::error::{Error, Result};
use crate::core::extract::{Candidate, Strategy};
use crate::core::retrieval::StaticEmbedder;
use crate::core::session::Message;
use crate::core::summary_views::{Group, SummaryView};
use crate::core::time::Millis;
use crate::core::tokenizer::{Encoding, EncodingName};

const AI_BINDING: &str = "AI";
/// Workers AI embedding model unless `EDGEMEM_EMBED_MODEL` names another
/// (384 dimensions, the shape of the offline embedder's default).
const EMBED_MODEL_DEFAULT: &str = "@cf/baai/bge-small-en-v1.5";
/// Workers AI model used for summaries unless `EDGEMEM_SUMMARIZER_MODEL` names another.
const SUMMARIZER_MODEL_DEFAULT: &str = "@cf/meta/llama-3.1-8b-instruct";

pub struct WorkerServices<'a> {
    pub env: &'a Env,
    /// A sharded tenant's home: where its summary-view runs gather the
    /// other shards' parts ([`super::shard::views`]).
    pub shards: Option<super::shard::views::Scope>,
}

/// `EDGEMEM_EMBEDDER`: which embedder turns texts into vectors.
#[derive(Clone, Copy, PartialEq, Eq)]
enum EmbedderChoice {
    /// The distilled static embedder from the assets (the default); the
    /// hashed one when the asset cannot be loaded.
    Static,
    /// The hashed n-gram embedder.
    Hash,
    /// Workers AI (`EDGEMEM_EMBED_MODEL`, default bge-small), through the `AI` binding.
    WorkersAi,
}

const STATIC_ASSET_URL: &str = "https://assets.local/pkg/embedder/minilm-static.bin";

thread_local! {
    /// The static embedder, loaded once per isolate: `None` before the
    /// first try, `Some(None)` when the asset could not be had.
    static STATIC: RefCell<Option<Option<Rc<StaticEmbedder>>>> = const { RefCell::new(None) };
}

impl WorkerServices<'_> {
    fn embedder_choice(&self) -> EmbedderChoice {
        match self.env.var("EDGEMEM_EMBEDDER").map(|v| v.to_string()).as_deref() {
            Ok("workers-ai") => EmbedderChoice::WorkersAi,
            Ok("hash") => EmbedderChoice::Hash,
            _ => EmbedderChoice::Static,
        }
    }

    fn embed_model(&self) -> String {
        self.env.var("EDGEMEM_EMBED_MODEL").map(|v| v.to_string()).unwrap_or_else(|_| EMBED_MODEL_DEFAULT.into())
    }
}

/// Loads the static embedder from the site's assets (once per isolate).
async fn load_static(env: &Env) -> Option<Rc<StaticEmbedder>> {
    if let Some(loaded) = STATIC.with(|s| s.borrow().clone()) {
        return loaded;
    }
    let loaded = async {
        let mut resp = env.assets(super::budget::ASSETS_BINDING).ok()?.fetch(STATIC_ASSET_URL, None).await.ok()?;
        if resp.status_code() != 200 {
            worker::console_warn!("edgemem: static embedder asset answered HTTP {}; using the hashed embedder", resp.status_code());
            return None;
        }
        let bytes = resp.bytes().await.ok()?;
        match StaticEmbedder::from_asset(&bytes) {
            Ok(m) => Some(Rc::new(m)),
            Err(e) => {
                worker::console_warn!("edgemem: static embedder asset refused ({e}); using the hashed embedder");
                None
            }
        }
    }
    .await;
    STATIC.with(|s| *s.borrow_mut() = Some(loaded.clone()));
    loaded
}

// Inputs are structs, never `serde_json::Value`: `Ai::run` converts with
// serde-wasm-bindgen's default serializer, which turns a JSON object into an
// ES2015 `Map`, and the binding's `JSON.stringify` then sends `{}`.

/// A chat message of a Workers AI text-generation input.
#[derive(Serialize)]
pub(super) struct AiMessage<'a> {
    pub(super) role: &'a str,
    pub(super) content: &'a str,
}

/// Workers AI text-generation input (`{messages, max_tokens}`).
#[derive(Serialize)]
pub(super) struct AiChatInput<'a> {
    pub(super) messages: [AiMessage<'a>; 2],
    pub(super) max_tokens: usize,
}

/// Workers AI embedding input (`{text: [...]}`).
#[derive(Serialize)]
struct AiEmbedInput<'a> {
    text: &'a [String],
}

#[derive(Deserialize)]
struct AiEmbeddings {
    data: Vec<Vec<f32>>,
}

#[derive(Deserialize)]
pub(super) struct AiText {
    pub(super) response: Option<String>,
}

impl Services for WorkerServices<'_> {
    fn encoding(&self, name: EncodingName) -> LocalBoxFuture<'_, Result<Rc<Encoding>>> {
        Box::pin(super::budget::encoding(self.env, name))
    }

    fn summarize<'a>(&'a self, turns: &'a [Message], previous: Option<&'a str>, tokens_max: usize) -> Option<LocalBoxFuture<'a, Result<String>>> {
        let ai = self.env.ai(AI_BINDING).ok()?;
        let model = self.env.var("EDGEMEM_SUMMARIZER_MODEL").map(|v| v.to_string()).unwrap_or_else(|_| SUMMARIZER_MODEL_DEFAULT.into());
        Some(Box::pin(async move {
            let mut transcript = String::new();
            if let Some(p) = previous {
                transcript.push_str("Summary so far:\n");
                transcript.push_str(p);
                transcript.push_str("\n\nNew turns:\n");
            }
            for m in turns {
                transcript.push_str(&m.role);
                transcript.push_str(": ");
                transcript.push_str(&m.content);
                transcript.push('\n');
            }
            let instructions = format!(
                "Summarize the conversation for an assistant that will continue it. Fold the summary so far and the new turns into one summary. Keep names, numbers, decisions and open questions. At most {} words. Answer with the summary only.",
                tokens_max * 3 / 4
            );
            let input = AiChatInput {
                messages: [AiMessage { role: "system", content: &instructions }, AiMessage { role: "user", content: &transcript }],
                max_tokens: tokens_max,
            };
            let out: AiText = ai.run(&model, input).await.map_err(|e| Error::HookFailed { hook: "summarizer".into(), reason: format!("Workers AI: {e}") })?;
            out.response.ok_or_else(|| Error::HookFailed { hook: "summarizer".into(), reason: "Workers AI returned no text".into() })
        }))
    }

    fn embed<'a>(&'a self, texts: &'a [String]) -> Option<LocalBoxFuture<'a, Result<Vec<Vec<f32>>>>> {
        if self.embedder_choice() != EmbedderChoice::WorkersAi {
            return None;
        }
        let model = self.embed_model();
        let Ok(ai) = self.env.ai(AI_BINDING) else {
            return Some(Box::pin(async {
                Err(Error::HookFailed { hook: "embedder".into(), reason: "EDGEMEM_EMBEDDER is workers-ai but no AI binding is configured ([ai] in wrangler.toml)".into() })
            }));
        };
        Some(Box::pin(async move {
            let out: AiEmbeddings = ai
                .run(&model, AiEmbedInput { text: texts })
                .await
                .map_err(|e| Error::HookFailed { hook: "embedder".into(), reason: format!("Workers AI: {e}") })?;
            Ok(out.data)
        }))
    }

    fn embedder_name(&self) -> String {
        format!("workers-ai:{}", self.embed_model())
    }

    fn static_embedder(&self) -> LocalBoxFuture<'_, Option<Rc<StaticEmbedder>>> {
        Box::pin(async move {
            match self.embedder_choice() {
                EmbedderChoice::Static => load_static(self.env).await,
                EmbedderChoice::Hash | EmbedderChoice::WorkersAi => None,
            }
        })
    }

    fn extract<'a>(&'a self, strategy: &'a Strategy, turns: &'a [Message]) -> Option<LocalBoxFuture<'a, Result<Vec<Candidate>>>> {
        let choice = match super::extractor::choice(self.env) {
            Ok(c) => c,
            Err(e) => return Some(Box::pin(async move { Err(e) })),
        };
        match choice {
            super::extractor::Choice::Offline => None,
            super::extractor::Choice::Http => Some(Box::pin(super::extractor::http(self.env, strategy, turns))),
            // The summary strategy goes to the summarizer, which is Workers AI when bound.
            super::extractor::Choice::WorkersAi if matches!(strategy, Strategy::Summary) => None,
            super::extractor::Choice::WorkersAi => Some(Box::pin(super::extractor::workers_ai(self.env, strategy, turns))),
        }
    }

    fn fetch_service<'a>(&'a self, agent_id: &'a str, service: &'a str) -> Option<LocalBoxFuture<'a, Result<String>>> {
        let base = super::upstream::base_url(self.env)?;
        Some(Box::pin(async move { super::upstream::fetch(self.env, &base, agent_id, service).await }))
    }

    fn summary_parts<'a>(&'a self, view: &'a SummaryView, only: Option<&'a Group>, now: Millis) -> Option<LocalBoxFuture<'a, Result<Vec<GatherPart>>>> {
        let scope = self.shards.as_ref()?;
        Some(Box::pin(super::shard::views::gather_all(self.env, scope, view, only, now)))
    }
}
