//! `GET /v1/export` and `POST /v1/import` (issue 20): a namespace's whole
//! state as NDJSON in the open format of [`crate::core::engine::export`].

use serde_json::{json, Value};

use super::longterm::embed_texts;
use super::{Ctx, Request, Response};
use crate::core::engine::export::Import;
use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::store::{Backend, Store};

/// `GET /v1/export?vectors=f32|none`: the NDJSON lines, one body.
pub async fn export<B: Backend>(store: &Store<B>, req: &Request<'_>, ctx: &Ctx<'_>) -> Result<Response> {
    let vectors = match req.param("vectors") {
        None | Some("none") => false,
        Some("f32") => true,
        Some(other) => return Err(Error::InvalidQuery { param: "vectors".into(), reason: format!("f32 or none, got {other:?}") }),
    };
    let now = ctx.now;
    let lines = store.read(|e| e.export_lines(vectors, now)).await??;
    let mut out = Vec::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
    for l in lines {
        out.extend_from_slice(l.as_bytes());
        out.push(b'\n');
    }
    Ok(Response { status: 200, body: Value::Null, raw: Some(out), content_type: Some("application/x-ndjson") })
}

/// `POST /v1/import` with an export as the body: validated whole, records
/// without vectors embedded by this host's embedder, then written as one
/// snapshot into an empty namespace. Importing the same file again is a
/// no-op. Answers `{status, imported, sessions, memories, last_seq}`.
pub async fn import<B: Backend>(store: &Store<B>, body: &[u8], ctx: &Ctx<'_>) -> Result<Value> {
    let (mut staged, scrubbed) = stage(store, body).await?;
    let missing: Vec<(usize, String)> = staged.texts_to_embed().into_iter().map(|(i, t)| (i, t.to_owned())).collect();
    if !missing.is_empty() {
        let texts: Vec<String> = missing.iter().map(|(_, t)| t.clone()).collect();
        let embedded = embed_texts(store, ctx.services, &texts).await?;
        staged.set_vectors(embedded.embedder, missing.into_iter().map(|(i, _)| i).zip(embedded.vectors).collect());
    }
    let engine = staged.into_engine()?;
    let (sessions, memories, last_seq) = (engine.session_count(), engine.longterm().len(), engine.last_seq());
    let imported = store.import(engine).await?;
    let mut v = json!({ "status": "ok", "imported": imported, "sessions": sessions, "memories": memories, "last_seq": last_seq });
    crate::api::privacy::report_into(&mut v, &scrubbed);
    Ok(v)
}

/// An import's body read, checked line by line, and its secrets redacted
/// (or refused) under the namespace's policy.
async fn stage<B: Backend>(store: &Store<B>, body: &[u8]) -> Result<(Import, crate::core::privacy::Scrubbed)> {
    if body.len() > limits::IMPORT_BYTES_MAX {
        return Err(Error::too_large("import", body.len(), limits::IMPORT_BYTES_MAX));
    }
    let text = std::str::from_utf8(body).map_err(|_| Error::invalid("body", "must be UTF-8 NDJSON"))?;
    let mut staged = Import::parse(text.split('\n'))?;
    let scrubbed = store.scrub_with(|s| staged.scrub_secrets(s)).await?;
    Ok((staged, scrubbed))
}

/// What a sharded tenant's shard checks of its part of an import before
/// any shard imports (issue 21): every check an import makes, without
/// writing. A part that carries its vectors is built and checked as the
/// state it would become, and refused if this store holds other state; a
/// part without vectors (embedded again on import) is checked line by
/// line. Answers `{import: "write" | "no-op" | "unchecked"}`.
pub async fn check<B: Backend>(store: &Store<B>, body: &[u8]) -> Result<Value> {
    let (staged, _) = stage(store, body).await?;
    if !staged.texts_to_embed().is_empty() {
        return Ok(json!({ "import": "unchecked" }));
    }
    let engine = staged.into_engine()?;
    Ok(json!({ "import": if store.import_check(&engine).await? { "write" } else { "no-op" } }))
}
