//! What long-term memory can be asked to do (the ops the store logs) and
//! what it answers: the op types, apart from the state that applies them.

use serde::{Deserialize, Serialize};

use super::reembed;
use super::snapshot::{f32_bytes, opt_f32_bytes};
use crate::core::retrieval::record::{MemoryPatch, MemoryRecord};

/// A record with its vector, as a create op carries it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewRecord {
    pub record: MemoryRecord,
    #[serde(with = "f32_bytes")]
    pub vector: Vec<f32>,
}

/// A long-term memory mutation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum LtmOp {
    /// Create records. An existing id is overwritten, as in AMS, unless the
    /// stored record already says the same (then nothing is written: a
    /// retried batch changes nothing). With `deduplicate`, a record whose
    /// `memory_hash` another current record already has is skipped.
    /// `embedder` names what made the vectors (see [`super::LongTerm::embedder`]);
    /// `None` in ops logged before identities were kept.
    /// `actor` (an API key's id; `None`: local) goes into each version.
    Create {
        records: Vec<NewRecord>,
        deduplicate: bool,
        #[serde(default)]
        embedder: Option<String>,
        #[serde(default)]
        actor: Option<String>,
    },
    /// Patch one record; `vector` is its new embedding when the text changed.
    Update {
        id: String,
        patch: MemoryPatch,
        #[serde(default, with = "opt_f32_bytes")]
        vector: Option<Vec<f32>>,
        #[serde(default)]
        embedder: Option<String>,
        #[serde(default)]
        actor: Option<String>,
    },
    /// Delete records; missing ids are ignored (AMS). `forget`: a forget
    /// policy chose them (their versions say so).
    Delete {
        ids: Vec<String>,
        #[serde(default)]
        forget: bool,
        #[serde(default)]
        actor: Option<String>,
    },
    /// Stages new vectors from `embedder` for existing records (re-embedding,
    /// see [`reembed`]); with `finish`, swaps them in once every live record
    /// has one.
    Reembed { embedder: String, rows: Vec<reembed::Row>, finish: bool },
    /// Writes a new version of `id` equal to its version `version` (the
    /// record comes back if it was deleted); `vector` embeds its text.
    Restore {
        id: String,
        version: u32,
        #[serde(with = "f32_bytes")]
        vector: Vec<f32>,
        embedder: Option<String>,
        actor: Option<String>,
    },
    /// Removes `id` and the text of every one of its versions, keeping the
    /// hashes and a receipt. The op carries no text.
    Redact { id: String, actor: Option<String> },
}


/// What a create did with one record.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Written. `superseded`: the older versions of its fact it replaced;
    /// `superseded_by`: set when a newer version already existed (a
    /// back-dated fact enters its chain already superseded).
    Created { superseded: Vec<String>, superseded_by: Option<String> },
    /// Nothing written: this record (same id, or same content hash in the
    /// same scope) is already stored.
    DuplicateOf(String),
}

/// What a long-term op did.
#[derive(Debug, Clone, PartialEq)]
pub enum LtmApplied {
    /// `created` and `duplicates` are AMS-style id lists; `results` has one
    /// entry per record of the op, in its order.
    Created { created: Vec<String>, duplicates: Vec<String>, results: Vec<(String, Outcome)> },
    Updated(Box<MemoryRecord>),
    Deleted { deleted: Vec<String> },
    /// Re-embedding progress: rows staged so far, and whether the swap happened.
    Reembedded { staged: usize, finished: bool },
    /// The record as restored, and the version that holds it now.
    Restored { record: Box<MemoryRecord>, version: u32 },
    /// A redaction: how many versions lost their text, and the receipt's version.
    Redacted { id: String, versions: usize, version: u32 },
}
