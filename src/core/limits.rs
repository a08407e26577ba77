//! Every bound edgemem enforces, in one place.
//!
//! Each limit is checked where the input enters (the API layer, the JS
//! bindings, the snapshot decoder), so the rest of the code may rely on it.
//! Names put the unit last, TigerBeetle style.

/// Default cap on an HTTP request body. Larger bodies get 413 before they
/// are parsed. The Worker can lower or raise it with `EDGEMEM_BODY_BYTES_MAX`
/// up to [`REQUEST_BODY_BYTES_CEILING`].
pub const REQUEST_BODY_BYTES_DEFAULT: usize = 1024 * 1024;
/// The most a deployment may configure for [`REQUEST_BODY_BYTES_DEFAULT`]:
/// one op must still fit a single Durable Object value.
pub const REQUEST_BODY_BYTES_CEILING: usize = 1_900_000;

/// Session ids, user ids, namespaces: short printable identifiers.
pub const ID_BYTES_MAX: usize = 256;
/// A message role (`user`, `assistant`, `system`, `tool`, `function`, or a
/// caller-defined one).
pub const ROLE_BYTES_MAX: usize = 32;
/// One message's content.
pub const MESSAGE_CONTENT_BYTES_MAX: usize = 256 * 1024;
/// The running summary (`context`) of a session.
pub const CONTEXT_BYTES_MAX: usize = 256 * 1024;
/// A session's free-form JSON `data` object, serialized.
pub const SESSION_DATA_BYTES_MAX: usize = 256 * 1024;
/// Nesting depth of any JSON value we accept (serde_json stops at 128 anyway;
/// we want a smaller, documented bound).
pub const JSON_DEPTH_MAX: usize = 32;
/// Messages held verbatim by one session.
pub const SESSION_MESSAGES_MAX: usize = 10_000;
/// Structured memories attached to one session (AMS's `memories`).
pub const SESSION_MEMORIES_MAX: usize = 1_000;
/// Messages in one append call.
pub const APPEND_MESSAGES_MAX: usize = 1_000;
/// Sessions held by one tenant (one Durable Object or one `Memory`).
pub const SESSIONS_MAX: usize = 100_000;
/// Page size of the session list (AMS allows 1 to 100).
pub const SESSION_LIST_LIMIT_MAX: usize = 100;
/// Default page size of the session list (AMS's default).
pub const SESSION_LIST_LIMIT_DEFAULT: usize = 20;
/// Longest TTL a session may have: ten years.
pub const TTL_SECONDS_MAX: u64 = 10 * 365 * 24 * 3600;

/// One encoded op-log record must fit a single Durable Object value (2 MB)
/// with room to spare.
pub const LOG_RECORD_BYTES_MAX: usize = 1_950_000;
/// Snapshot chunk size. Durable Object values are limited to 2 MB; IndexedDB
/// and KV have no such limit but share the layout.
pub const SNAPSHOT_CHUNK_BYTES_DEFAULT: usize = 1024 * 1024;
/// Largest chunk size a caller may choose.
pub const SNAPSHOT_CHUNK_BYTES_MAX: usize = 2_000_000;
/// Smallest chunk size a caller may choose (tests use small chunks to
/// exercise multi-chunk snapshots).
pub const SNAPSHOT_CHUNK_BYTES_MIN: usize = 64;
/// A whole snapshot: must fit comfortably in a 128 MB Worker isolate.
pub const SNAPSHOT_BYTES_MAX: usize = 96 * 1024 * 1024;
/// Chunks in one snapshot (follows from the two limits above).
pub const SNAPSHOT_CHUNKS_MAX: usize = SNAPSHOT_BYTES_MAX / SNAPSHOT_CHUNK_BYTES_MIN + 1;
/// Default number of log records after which a snapshot is taken and the log
/// is truncated.
pub const SNAPSHOT_EVERY_OPS_DEFAULT: u64 = 1_000;
/// Upper bound on the snapshot interval, which bounds recovery replay work.
pub const SNAPSHOT_EVERY_OPS_MAX: u64 = 100_000;
/// Log records replayed in one recovery; more means the log was never
/// truncated, which is a corrupt store.
pub const RECOVERY_LOG_RECORDS_MAX: u64 = SNAPSHOT_EVERY_OPS_MAX * 2;

/// Significant digits of an amount (integer part plus the asset's scale):
/// what `rust_decimal` holds exactly.
pub const AMOUNT_DIGITS_MAX: usize = 28;
/// Fraction digits an asset may have (18 covers wei).
pub const ASSET_SCALE_MAX: u32 = 18;
/// Bytes of an asset code, account id or transfer id.
pub const LEDGER_ID_BYTES_MAX: usize = 128;
/// Assets in one ledger.
pub const ASSETS_MAX: usize = 1_000;
/// Accounts in one ledger.
pub const ACCOUNTS_MAX: usize = 1_000_000;
/// Transfers kept in one ledger (each id's effect is remembered for ever).
pub const TRANSFERS_MAX: usize = 5_000_000;
/// Transfers in one create batch (TigerBeetle's batch size is 8,189).
pub const TRANSFER_BATCH_MAX: usize = 8_000;
/// Serialized bytes of a transfer's free-form metadata.
pub const TRANSFER_METADATA_BYTES_MAX: usize = 4 * 1024;
/// Longest pending-transfer timeout: 30 days.
pub const PENDING_TIMEOUT_SECONDS_MAX: u64 = 30 * 24 * 3600;
/// Page size of an account history.
pub const HISTORY_LIMIT_MAX: usize = 1_000;
/// Balances in one statement reconciliation.
pub const STATEMENT_LINES_MAX: usize = 10_000;
/// Execute-once intents kept open or done.
pub const INTENTS_MAX: usize = 100_000;
/// Serialized bytes of an intent's parameters or outcome.
pub const INTENT_JSON_BYTES_MAX: usize = 64 * 1024;

/// Text given to a tokenizer in one call.
pub const TOKENIZER_INPUT_BYTES_MAX: usize = 16 * 1024 * 1024;

/// A model window a budget may describe (the largest published is 2M).
pub const WINDOW_TOKENS_MAX: usize = 10_000_000;
/// Slot priorities run from 0 to this.
pub const SLOT_PRIORITY_MAX: u8 = 10;
/// Slots in one budget.
pub const SLOTS_MAX: usize = 1_000;
/// Per-message overhead a caller may configure.
pub const MESSAGE_OVERHEAD_TOKENS_MAX: usize = 64;

// ---- Conversation history, tool cache, agent configuration (history issue) ----

// ---- Vector index (long-term memory issue) ----

// ---- Long-term memory records, BM25, filters, embedder (long-term memory issue) ----

// ---- Episodic log (long-term memory issue) ----
