//! `POST /v1/long-term-memory/reembed`: moves a namespace's vectors to the
//! host's current embedder (after a model change, or when the distilled
//! embedder's asset arrives in a namespace the hashed one built).
//!
//! Each call stages at most [`limits::LTM_REEMBED_RECORDS_PER_CALL_MAX`]
//! records, one logged op per batch, so no request runs unbounded and a
//! crash resumes where it stopped; the call that stages the last one swaps
//! the index and the identity in one op. Callers repeat until `done`
//! (`memory.longTerm.reembed()` does).

use serde_json::{json, Value};

use super::embed_texts;
use crate::api::services::Services;
use crate::core::engine::{Applied, Op};
use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::longterm::reembed::Row;
use crate::core::longterm::{LtmApplied, LtmOp};
use crate::core::time::Millis;
use crate::store::{Backend, Store};

/// One call's worth of re-embedding. Answers `{embedder, previous,
/// reembedded, remaining, done}`.
pub async fn reembed<B: Backend>(store: &Store<B>, services: &dyn Services, now: Millis) -> Result<Value> {
    let previous = store.read(|e| e.longterm().embedder().map(str::to_owned)).await?;
    // The target is known once the first batch is embedded; until then the
    // staging in progress (if any) is the best guess of it.
    let mut target = store.read(|e| e.longterm().restaging().map(|(name, _)| name.to_owned())).await?;
    let mut reembedded = 0usize;
    while reembedded < limits::LTM_REEMBED_RECORDS_PER_CALL_MAX {
        let name = target.clone().unwrap_or_default();
        let pending = store.read(|e| e.longterm().reembed_pending(&name, limits::LTM_REEMBED_BATCH_MAX)).await?;
        if pending.is_empty() {
            break;
        }
        let texts: Vec<String> = pending.iter().map(|(_, t)| t.clone()).collect();
        let embedded = embed_texts(store, services, &texts).await?;
        if target.is_none() && previous.as_deref() == Some(embedded.embedder.as_str()) {
            // Already this embedder's vectors: nothing to move.
            return Ok(answer(&embedded.embedder, previous.as_deref(), 0, 0, true));
        }
        let rows = pending.into_iter().zip(embedded.vectors).map(|((id, _), vector)| Row { id, vector }).collect::<Vec<_>>();
        reembedded += rows.len();
        apply(store, &embedded.embedder, rows, false, now).await?;
        target = Some(embedded.embedder);
    }
    let Some(target) = target else {
        // An empty namespace: nothing to embed, nothing staged.
        let name = previous.clone().unwrap_or_default();
        return Ok(answer(&name, previous.as_deref(), 0, 0, true));
    };
    let remaining = store.read(|e| e.longterm().reembed_pending(&target, usize::MAX).len()).await?;
    if remaining == 0 {
        apply(store, &target, Vec::new(), true, now).await?;
    }
    Ok(answer(&target, previous.as_deref(), reembedded, remaining, remaining == 0))
}

async fn apply<B: Backend>(store: &Store<B>, embedder: &str, rows: Vec<Row>, finish: bool, now: Millis) -> Result<()> {
    match store.apply(Op::Ltm(LtmOp::Reembed { embedder: embedder.to_owned(), rows, finish }), now).await? {
        Applied::Ltm(LtmApplied::Reembedded { .. }) => Ok(()),
        other => Err(Error::Internal { detail: format!("re-embedding returned {other:?}") }),
    }
}

fn answer(embedder: &str, previous: Option<&str>, reembedded: usize, remaining: usize, done: bool) -> Value {
    json!({ "embedder": embedder, "previous": previous, "reembedded": reembedded, "remaining": remaining, "done": done })
}
