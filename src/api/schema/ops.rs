//! The operations: shared shapes first, then one [`Op`] per route and
//! method, listed in [`OPS`].

use super::ops_agents::*;
use super::ops_ledger::*;
use super::ops_memory::*;
use super::ops_sessions::*;
use super::{opt, req, Op, F, S};
use crate::core::limits as l;

use S::{Arr, Bool, DateTime, Decimal, Enum, Id, Int, Map, Nullable, Num, Obj, OneOf, Str};

pub(super) const U32: i64 = u32::MAX as i64;
pub(super) const MILLIS_MAX: f64 = 253_402_300_799_999.0;
/// A count or sequence number in an answer.
pub(super) const COUNT: S = Int(0, SAFE_INT);
/// A ledger id: 1 to `LEDGER_ID_BYTES_MAX` bytes, no `/` or control characters.
pub(super) const LEDGER_ID: S = Str(l::LEDGER_ID_BYTES_MAX);
/// A model from edgemem's table (`gpt-5`, `claude-sonnet-4-5`, ...).
pub(super) const MODEL: S = Str(128);
/// The largest integer a JS number holds exactly (2^53 - 1).
pub(super) const SAFE_INT: i64 = 9_007_199_254_740_991;

// ---- Shared shapes ----

/// A string filter: AMS's `{eq, ne, any, all, none, startswith}`.
pub const TAG_FILTER: S = Obj(
    &[
        opt("eq", Str(l::FILTER_VALUE_BYTES_MAX), "equals"),
        opt("ne", Str(l::FILTER_VALUE_BYTES_MAX), "differs from (not with `eq`)"),
        opt("any", Arr(&Str(l::FILTER_VALUE_BYTES_MAX), l::FILTER_VALUES_MAX), "has any of"),
        opt("all", Arr(&Str(l::FILTER_VALUE_BYTES_MAX), l::FILTER_VALUES_MAX), "has all of (not with `any`)"),
        opt("none", Arr(&Str(l::FILTER_VALUE_BYTES_MAX), l::FILTER_VALUES_MAX), "has none of"),
        opt("startswith", Str(l::FILTER_VALUE_BYTES_MAX), "starts with (alone)"),
    ],
    false,
);

/// A time: RFC 3339 (or a `YYYY-MM-DD` date), or seconds since the epoch.
pub const TIME: S = OneOf(&[DateTime, Str(10), Num(0.0, MILLIS_MAX)]);

/// A time filter: `{eq, ne, gt, gte, lt, lte, between, inclusive}`.
pub const TIME_FILTER: S = Obj(
    &[
        opt("eq", TIME, ""),
        opt("ne", TIME, ""),
        opt("gt", TIME, ""),
        opt("gte", TIME, ""),
        opt("lt", TIME, ""),
        opt("lte", TIME, ""),
        opt("between", Arr(&TIME, 2), "[from, to] (not with eq, ne, gt, gte, lt or lte)"),
        opt("inclusive", Enum(&["both", "neither", "left", "right"]), "which ends of `between` count (only with `between`)"),
    ],
    false,
);

/// The kinds of long-term memory.
pub const MEMORY_TYPE: S = Enum(&["episodic", "semantic", "message"]);

const TAGS: S = Arr(&Str(l::MEMORY_TAG_BYTES_MAX), l::MEMORY_TAGS_MAX);

/// A long-term record as a client writes it (AMS's `ClientMemoryRecord`).
pub const MEMORY_IN: S = Obj(
    &[
        req("text", Str(l::MEMORY_TEXT_BYTES_MAX), "the memory, one fact or event"),
        opt("id", Id, "a client id (a ULID is assigned otherwise); an existing id is overwritten"),
        opt("memory_type", MEMORY_TYPE, "default `message`"),
        opt("topics", TAGS, ""),
        opt("entities", TAGS, ""),
        opt("session_id", Nullable(&Id), ""),
        opt("user_id", Nullable(&Id), ""),
        opt("namespace", Nullable(&Id), "the tenant namespace; must be the request's"),
        opt("event_date", Nullable(&TIME), "when the remembered event happened; default the first date written in the text"),
        opt("event_at", Nullable(&TIME), "an alias of event_date"),
        opt("pinned", Bool, "pinned records are kept by `forget`"),
        opt("metadata", Map, "free JSON, kept exactly"),
        opt("fact_key", Str(l::LTM_FACT_KEY_BYTES_MAX), "what the record states a value of (`user.units`): a record with a later valid_from and the same key, namespace and user supersedes it"),
        opt("valid_from", Nullable(&TIME), "from when the fact holds (only with fact_key); default created_at"),
    ],
    true,
);

/// The fields an edit may change.
pub const MEMORY_PATCH: S = Obj(
    &[
        opt("text", Str(l::MEMORY_TEXT_BYTES_MAX), "new text (re-embedded)"),
        opt("memory_type", MEMORY_TYPE, ""),
        opt("topics", TAGS, ""),
        opt("entities", TAGS, ""),
        opt("session_id", Nullable(&Id), ""),
        opt("user_id", Nullable(&Id), ""),
        opt("namespace", Nullable(&Id), ""),
        opt("event_date", Nullable(&TIME), ""),
        opt("event_at", Nullable(&TIME), "an alias of event_date"),
        opt("pinned", Bool, ""),
    ],
    false,
);

/// A long-term record as answered.
pub const MEMORY_RECORD: S = Obj(
    &[
        req("id", Str(l::ID_BYTES_MAX), ""),
        req("text", Str(l::MEMORY_TEXT_BYTES_MAX), ""),
        opt("memory_type", MEMORY_TYPE, ""),
        opt("topics", Nullable(&Arr(&Str(l::MEMORY_TAG_BYTES_MAX), l::MEMORY_TAGS_MAX)), ""),
        opt("entities", Nullable(&Arr(&Str(l::MEMORY_TAG_BYTES_MAX), l::MEMORY_TAGS_MAX)), ""),
        opt("session_id", Nullable(&Str(l::SEALED_USER_ID_BYTES_MAX)), ""),
        opt("user_id", Nullable(&Str(l::SEALED_USER_ID_BYTES_MAX)), ""),
        opt("namespace", Nullable(&Str(l::ID_BYTES_MAX)), ""),
        opt("created_at", Nullable(&DateTime), ""),
        opt("updated_at", Nullable(&DateTime), ""),
        opt("last_accessed", Nullable(&DateTime), ""),
        opt("event_date", Nullable(&DateTime), ""),
        opt("fact_key", Str(l::LTM_FACT_KEY_BYTES_MAX), "answered only for records with a fact key, with the three fields below"),
        opt("valid_from", DateTime, ""),
        opt("valid_to", Nullable(&DateTime), "the successor's valid_from; null while current"),
        opt("superseded_by", Nullable(&Str(l::ID_BYTES_MAX)), "the successor's id; null while current"),
    ],
    true,
);

/// AMS's `SearchRequest`, plus edgemem's `auto` mode, `fusion`, `ef`,
/// `fields`, `expand`, `reference_time`, `tz`, the `speaker` filter, and
/// issue 20's `latest_only`, `as_of`, `include_superseded` and `fact_key`.
pub const SEARCH_BODY: S = Obj(
    &[
        opt("text", Nullable(&Str(l::QUERY_TEXT_BYTES_MAX)), "what to look for; empty lists by filters alone"),
        opt("search_mode", Enum(&["auto", "semantic", "keyword", "hybrid"]), "default auto: hybrid when the vectors can help, else keyword"),
        opt("limit", Int(1, l::VECTOR_K_MAX as i64), "default 10"),
        opt("offset", Int(0, l::LTM_SEARCH_OFFSET_MAX as i64), ""),
        opt("hybrid_alpha", Num(0.0, 1.0), "prior weight of the vector side in hybrid mode (default 0.5), moved per query by keyword coverage"),
        opt("fusion", Enum(&["alpha", "rrf"]), "how hybrid mode fuses"),
        opt("distance_threshold", Nullable(&Num(0.0, 2.0)), "drop hits farther than this"),
        opt("recency_boost", Bool, "AMS's recency re-rank (default on)"),
        opt("recency_semantic_weight", Num(0.0, 1e6), ""),
        opt("recency_recency_weight", Num(0.0, 1e6), ""),
        opt("recency_freshness_weight", Num(0.0, 1e6), ""),
        opt("recency_novelty_weight", Num(0.0, 1e6), ""),
        opt("recency_half_life_last_access_days", Num(0.0, 1e6), ""),
        opt("recency_half_life_created_days", Num(0.0, 1e6), ""),
        opt("ef", Nullable(&Int(0, l::VECTOR_EF_MAX as i64)), "ANN search breadth"),
        opt("fields", Arr(&Enum(&HIT_FIELD_NAMES), HIT_FIELD_NAMES.len()), "answer only these fields of each hit"),
        opt("expand", Int(0, l::LTM_EXPAND_MAX as i64), "attach this many turns before and after each hit (same session) as its context"),
        opt("reference_time", Nullable(&DateTime), "what time expressions in the text are read against; default now"),
        opt("tz", Nullable(&Str(16)), "the caller's UTC offset (\"+01:00\", \"Z\"); default the reference time's, else UTC"),
        opt("session_id", Nullable(&TAG_FILTER), ""),
        opt("user_id", Nullable(&TAG_FILTER), ""),
        opt("namespace", Nullable(&TAG_FILTER), ""),
        opt("topics", Nullable(&TAG_FILTER), ""),
        opt("entities", Nullable(&TAG_FILTER), ""),
        opt("extraction_strategy", Nullable(&TAG_FILTER), ""),
        opt("memory_type", Nullable(&Obj(&[opt("eq", MEMORY_TYPE, ""), opt("ne", MEMORY_TYPE, ""), opt("any", Arr(&MEMORY_TYPE, 3), ""), opt("all", Arr(&MEMORY_TYPE, 3), ""), opt("none", Arr(&MEMORY_TYPE, 3), "")], false)), ""),
        opt("created_at", Nullable(&TIME_FILTER), ""),
        opt("last_accessed", Nullable(&TIME_FILTER), ""),
        opt("event_date", Nullable(&TIME_FILTER), ""),
        opt("event_at", Nullable(&TIME_FILTER), "an alias of event_date"),
        opt("speaker", Nullable(&TAG_FILTER), "who said a dialog turn (metadata.speaker)"),
        opt("fact_key", Nullable(&TAG_FILTER), "the record's fact_key"),
        opt("latest_only", Bool, "default true: superseded versions of facts are not found"),
        opt("as_of", Nullable(&DateTime), "find what was current then: valid_from <= as_of < valid_to (not with include_superseded)"),
        opt("include_superseded", Bool, "find every version of each fact"),
        opt("explain", Bool, "attach each hit's ranking signals as `explain`: BM25 and vector score and rank, the fusion formula and inputs, time and recency factors, the filters"),
        opt("exact", Bool, "scan every vector instead of walking the ANN graphs: slower, and the same answer however the tenant is sharded"),
    ],
    // AMS clients send model fields edgemem ignores.
    true,
);

/// The fields a search may answer: AMS's `MemoryRecord` fields, the fact
/// fields, then the hit's.
pub const HIT_FIELD_NAMES: [&str; 29] = [
    "id", "text", "session_id", "user_id", "namespace", "last_accessed", "created_at", "updated_at", "pinned", "access_count", "topics", "entities", "memory_hash",
    "discrete_memory_extracted", "memory_type", "persisted_at", "extracted_from", "event_date", "extraction_strategy", "extraction_strategy_config", "metadata",
    "fact_key", "valid_from", "valid_to", "superseded_by", "dist", "score", "score_type", "segment",
];

/// AMS's `MemoryRecordResults`.
pub const SEARCH_RESULTS: S = Obj(
    &[
        req("memories", Arr(&S::Map, l::VECTOR_K_MAX), ""),
        req("total", Int(0, U32), ""),
        opt("next_offset", Nullable(&Int(0, U32)), ""),
        opt("search_mode", Enum(&["semantic", "keyword", "hybrid"]), "the mode that ran"),
        opt("time_query", Arr(&S::Map, l::TIME_WINDOWS_MAX), "how time expressions in the text were read"),
    ],
    true,
);

/// A chat message as a client sends it.
pub const MESSAGE_IN: S = Obj(
    &[
        req("role", Str(l::ROLE_BYTES_MAX), "user, assistant, system or tool"),
        req("content", Str(l::MESSAGE_CONTENT_BYTES_MAX), ""),
        opt("id", Id, ""),
        opt("created_at", DateTime, ""),
        opt("persisted_at", Nullable(&DateTime), ""),
    ],
    true,
);

/// A memory held in a session (AMS's `MemoryRecord`): kept as given, so
/// only its id is checked; long-term memories are created with
/// `POST /v1/long-term-memory`.
pub const SESSION_MEMORY: S = Obj(&[req("id", Id, "")], true);

/// AMS's `UpdateWorkingMemory`.
pub const SESSION_PUT: S = Obj(
    &[
        opt("messages", Arr(&MESSAGE_IN, l::SESSION_MESSAGES_MAX), "the whole history (replaces it)"),
        opt("memories", Arr(&SESSION_MEMORY, l::SESSION_MEMORIES_MAX), "AMS's structured memories of the session, stored as given"),
        opt("data", Nullable(&Map), "free JSON"),
        opt("context", Nullable(&Str(l::CONTEXT_BYTES_MAX)), "the running summary"),
        opt("user_id", Nullable(&Id), ""),
        opt("namespace", Nullable(&Id), ""),
        opt("tokens", Nullable(&Int(0, SAFE_INT)), ""),
        opt("ttl_seconds", Nullable(&Int(0, l::TTL_SECONDS_MAX as i64)), ""),
        opt("long_term_memory_strategy", Nullable(&Map), ""),
        opt("data_schema_version", Nullable(&Int(0, U32)), ""),
    ],
    true,
);

/// A working-memory session as answered.
pub const SESSION: S = Obj(
    &[
        req("session_id", Str(l::ID_BYTES_MAX), ""),
        req("messages", Arr(&MESSAGE, l::SESSION_MESSAGES_MAX), ""),
        opt("memories", Arr(&S::Map, l::SESSION_MEMORIES_MAX), ""),
        opt("context", Nullable(&Str(l::CONTEXT_BYTES_MAX)), ""),
        opt("data", Nullable(&Map), ""),
        opt("user_id", Nullable(&Str(l::SEALED_USER_ID_BYTES_MAX)), ""),
        opt("namespace", Nullable(&Str(l::ID_BYTES_MAX)), ""),
    ],
    true,
);

/// The body of `POST /v1/memory/prompt` (AMS's `MemoryPromptRequest`).
pub const MEMORY_PROMPT: S = Obj(
    &[
        req("query", Str(l::QUERY_TEXT_BYTES_MAX), "the user's message"),
        opt(
            "session",
            Nullable(&Obj(
                &[
                    req("session_id", Id, ""),
                    opt("namespace", Nullable(&Id), ""),
                    opt("user_id", Nullable(&Id), ""),
                    opt("model_name", Nullable(&Str(128)), ""),
                    opt("context_window_max", Nullable(&Int(l::HISTORY_WINDOW_TOKENS_MIN as i64, l::WINDOW_TOKENS_MAX as i64)), ""),
                ],
                true,
            )),
            "the session whose summary and turns lead the prompt",
        ),
        opt("long_term_search", Nullable(&OneOf(&[Bool, SEARCH_BODY])), "true, or a search whose text defaults to the query"),
    ],
    true,
);

/// One ledger transfer. Amounts are decimal strings; a JSON number is refused.
pub const TRANSFER: S = Obj(
    &[
        req("id", Str(l::LEDGER_ID_BYTES_MAX), "the idempotency key: a retry with the same id answers `exists`"),
        req("debit_account", Str(l::LEDGER_ID_BYTES_MAX), ""),
        req("credit_account", Str(l::LEDGER_ID_BYTES_MAX), ""),
        req("amount", Decimal, "a decimal string such as \"12.50\", never a JSON number"),
        opt("pending", Bool, "a two-phase transfer, posted or voided later"),
        opt("timeout_seconds", Nullable(&Int(1, l::PENDING_TIMEOUT_SECONDS_MAX as i64)), "only with `pending`"),
        opt("linked", Bool, "chains this transfer to the next: all or nothing"),
        opt("metadata", Nullable(&Map), ""),
    ],
    false,
);

/// A decision-log entry as appended.
pub const DECISION_IN: S = Obj(
    &[
        req("kind", Enum(&["observation", "reasoning", "decision", "action", "offer", "error"]), ""),
        req("text", Str(l::DECISION_TEXT_BYTES_MAX), ""),
        opt("data", Nullable(&Map), ""),
        opt("refs", Nullable(&Obj(&[opt("tool_call_id", Str(l::ID_BYTES_MAX), ""), opt("transfer_id", Str(l::LEDGER_ID_BYTES_MAX), ""), opt("memory_ids", Arr(&Id, l::DECISION_REFS_MAX), "")], false)), "what the entry refers to"),
    ],
    false,
);

/// `{"status"}` answers.
pub const STATUS: S = Obj(&[req("status", Str(256), "")], true);

/// Any JSON object answer.
pub const OBJECT: S = S::Map;

/// A message as answered (AMS's `MemoryMessage`).
pub const MESSAGE: S = Obj(
    &[
        req("id", Str(l::ID_BYTES_MAX), ""),
        req("role", Str(l::ROLE_BYTES_MAX), ""),
        req("content", Str(l::MESSAGE_CONTENT_BYTES_MAX), ""),
        req("created_at", DateTime, ""),
        opt("persisted_at", Nullable(&DateTime), ""),
    ],
    true,
);

pub(super) const P_MEMORY_ID: &[F] = &[req("memory_id", Id, "")];
pub(super) const P_SESSION_ID: &[F] = &[req("session_id", Id, "")];
pub(super) const P_ACCOUNT_ID: &[F] = &[req("account_id", Str(l::LEDGER_ID_BYTES_MAX), "")];
pub(super) const Q_WINDOW: &[F] = &[
    opt("model_name", Str(128), "count tokens in this model's encoding"),
    opt("context_window_max", Int(l::HISTORY_WINDOW_TOKENS_MIN as i64, l::WINDOW_TOKENS_MAX as i64), "compact past this window"),
];

// ---- Operations ----

pub const LTM_CREATE: Op = Op {
    route: "long-term-memory",
    method: "POST",
    summary: "Create long-term memories (idempotent: a record already stored is not written again; deduplicated by content unless `deduplicate` is false)",
    path: &[],
    query: &[],
    body: Some(&Obj(&[req("memories", Arr(&MEMORY_IN, l::LTM_CREATE_BATCH_MAX), ""), opt("deduplicate", Bool, "default true")], true)),
    ok: &Obj(
        &[
            req("status", Str(16), ""),
            req("created", Arr(&Str(l::ID_BYTES_MAX), l::LTM_CREATE_BATCH_MAX), "ids created"),
            req("duplicates", Arr(&Str(l::ID_BYTES_MAX), l::LTM_CREATE_BATCH_MAX), "ids of the input dropped as duplicates"),
            req("results", Arr(&CREATE_RESULT, l::LTM_CREATE_BATCH_MAX), "one per memory, in request order"),
        ],
        true,
    ),
};

/// What a create did with one memory.
pub const CREATE_RESULT: S = Obj(
    &[
        req("id", Str(l::ID_BYTES_MAX), ""),
        req("status", Enum(&["created", "superseded", "duplicate_of"]), "superseded: written, and it replaced older versions of its fact"),
        opt("duplicate_of", Str(l::ID_BYTES_MAX), "the stored record that made this one a no-op"),
        opt("superseded", Arr(&Str(l::ID_BYTES_MAX), l::LTM_RECORDS_MAX), "the versions it replaced"),
        opt("superseded_by", Str(l::ID_BYTES_MAX), "a newer version that already existed (a back-dated fact)"),
    ],
    false,
);

pub const LTM_DELETE: Op = Op {
    route: "long-term-memory",
    method: "DELETE",
    summary: "Delete long-term memories by id",
    path: &[],
    query: &[req("memory_ids", Arr(&Id, l::LTM_DELETE_BATCH_MAX), "repeat the parameter for each id")],
    body: None,
    ok: &STATUS,
};

pub const LTM_SEARCH: Op = Op {
    route: "long-term-memory/search",
    method: "POST",
    summary: "Search long-term memory: semantic, keyword or hybrid, with filters",
    path: &[],
    query: &[],
    body: Some(&SEARCH_BODY),
    ok: &SEARCH_RESULTS,
};

/// One version of a record's history.
pub const VERSION: S = Obj(
    &[
        req("id", Str(l::ID_BYTES_MAX), ""),
        req("version", Int(1, U32), "1, 2, ... per record, never reused"),
        req("ts", DateTime, ""),
        req("op", Enum(&["create", "edit", "delete", "forget", "restore", "redact"]), ""),
        req("text_hash", Str(64), "SHA-256 of the text, hex"),
        req("actor", Str(l::ID_BYTES_MAX), "the API key's id, local, or extraction"),
        req("text", Nullable(&Str(l::MEMORY_TEXT_BYTES_MAX)), "null once pruned, deleted or redacted"),
    ],
    false,
);

pub const LTM_VERSIONS: Op = Op {
    route: "long-term-memory/{}/versions",
    method: "GET",
    summary: "List a long-term memory's versions (create, edit, delete, forget, restore, redact), oldest first",
    path: P_MEMORY_ID,
    query: &[],
    body: None,
    ok: &Obj(&[req("id", Str(l::ID_BYTES_MAX), ""), req("current", Nullable(&Int(1, U32)), "the live record's version; null when gone"), req("versions", Arr(&VERSION, l::LTM_VERSIONS_PER_MEMORY_MAX), "")], false),
};

pub const LTM_RESTORE: Op = Op {
    route: "long-term-memory/{}/restore",
    method: "POST",
    summary: "Write a new version of a long-term memory equal to an old one (it comes back if deleted)",
    path: P_MEMORY_ID,
    query: &[],
    body: Some(&Obj(&[req("version", Int(1, U32), "the version to restore")], false)),
    ok: &MEMORY_RECORD,
};

pub const LTM_REDACT: Op = Op {
    route: "long-term-memory/{}/redact",
    method: "POST",
    summary: "Remove a long-term memory and the text of all its versions from memory and storage, keeping hashes and a receipt",
    path: P_MEMORY_ID,
    query: &[],
    body: None,
    ok: &Obj(
        &[
            req("status", Str(16), ""),
            req("id", Str(l::ID_BYTES_MAX), ""),
            req("version", Int(1, U32), "the receipt's version"),
            req("redacted_versions", Int(0, U32), "versions whose text went"),
            req("redacted_by", Str(l::ID_BYTES_MAX), ""),
            req("redacted_at", DateTime, ""),
            req("erased", S::Map, ""),
        ],
        false,
    ),
};

pub const EXPORT: Op = Op {
    route: "export",
    method: "GET",
    summary: "The namespace's whole state as NDJSON in edgemem's open export format (header, sessions, long-term records and versions, episodes, ledgers with journals, prompts, profiles, end line)",
    path: &[],
    query: &[opt("vectors", Enum(&["none", "f32"]), "f32: each long-term record carries its vector (base64url of little-endian f32s); default none")],
    body: None,
    ok: &OBJECT,
};

pub const IMPORT: Op = Op {
    route: "import",
    method: "POST",
    summary: "Load an NDJSON export into an empty namespace (validated whole first; the same file again changes nothing; a future format is refused)",
    path: &[],
    query: &[],
    body: None,
    ok: &Obj(
        &[
            req("status", Str(16), ""),
            req("imported", Bool, "false when the namespace already held exactly this export"),
            req("sessions", Int(0, U32), ""),
            req("memories", Int(0, U32), ""),
            req("last_seq", Int(0, i64::MAX), ""),
            opt("shards", Arr(&Map, l::SHARDS_MAX), "a sharded tenant's: each shard's own answer ({shard, import})"),
        ],
        false,
    ),
};

pub const LTM_GET: Op = Op { route: "long-term-memory/{}", method: "GET", summary: "Read one long-term memory", path: P_MEMORY_ID, query: &[], body: None, ok: &MEMORY_RECORD };

pub const LTM_PATCH: Op = Op {
    route: "long-term-memory/{}",
    method: "PATCH",
    summary: "Edit a long-term memory (a new text is re-embedded)",
    path: P_MEMORY_ID,
    query: &[],
    body: Some(&MEMORY_PATCH),
    ok: &MEMORY_RECORD,
};

pub const SESSION_GET: Op = Op {
    route: "working-memory/{}",
    method: "GET",
    summary: "Read a working-memory session",
    path: P_SESSION_ID,
    query: &[
        opt("model_name", Str(128), ""),
        opt("context_window_max", Int(l::HISTORY_WINDOW_TOKENS_MIN as i64, l::WINDOW_TOKENS_MAX as i64), ""),
        opt("recent_messages_limit", Int(0, l::SESSION_MESSAGES_MAX as i64), "only the newest turns"),
        opt("namespace", Id, ""),
        opt("user_id", Id, ""),
    ],
    body: None,
    ok: &SESSION,
};

pub const SESSION_PUT_OP: Op = Op {
    route: "working-memory/{}",
    method: "PUT",
    summary: "Create or replace a working-memory session (compacts past the window)",
    path: P_SESSION_ID,
    query: Q_WINDOW,
    body: Some(&SESSION_PUT),
    ok: &SESSION,
};

pub const MEMORY_PROMPT_OP: Op = Op {
    route: "memory/prompt",
    method: "POST",
    summary: "Build a model prompt: the session's summary and turns, recalled memories, then the query",
    path: &[],
    query: &[],
    body: Some(&MEMORY_PROMPT),
    ok: &Obj(&[req("messages", Arr(&S::Map, l::SESSION_MESSAGES_MAX + 4), "")], true),
};

pub const ACCOUNT_GET: Op = Op {
    route: "ledger/accounts/{}",
    method: "GET",
    summary: "Read a ledger account: balances as decimal strings",
    path: P_ACCOUNT_ID,
    query: &[],
    body: None,
    ok: &super::ops_ledger::ACCOUNT,
};

pub const TRANSFERS_POST: Op = Op {
    route: "ledger/transfers",
    method: "POST",
    summary: "Create transfers: one result per transfer, idempotent by id",
    path: &[],
    query: &[],
    body: Some(&Obj(&[req("transfers", Arr(&TRANSFER, l::TRANSFER_BATCH_MAX), "")], false)),
    ok: &Obj(&[req("results", Arr(&Obj(&[req("id", Str(l::LEDGER_ID_BYTES_MAX), ""), req("result", Str(64), "")], true), l::TRANSFER_BATCH_MAX), "")], true),
};

pub const DECISIONS_POST: Op = Op {
    route: "working-memory/{}/decisions",
    method: "POST",
    summary: "Append to a session's decision log",
    path: P_SESSION_ID,
    query: &[],
    body: Some(&DECISION_IN),
    ok: &super::ops_sessions::DECISION,
};

pub const MESSAGES_POST: Op = Op {
    route: "working-memory/{}/messages",
    method: "POST",
    summary: "Append messages to an existing session",
    path: P_SESSION_ID,
    query: &[],
    body: Some(&Obj(&[req("messages", Arr(&MESSAGE_IN, l::APPEND_MESSAGES_MAX), ""), opt("model_name", Nullable(&MODEL), "count the new turns in this model's encoding")], true)),
    ok: &Obj(
        &[
            req("session_id", Str(l::ID_BYTES_MAX), ""),
            req("appended", Arr(&MESSAGE, l::APPEND_MESSAGES_MAX), "the new turns as stored"),
            req("message_count", COUNT, ""),
            req("updated_at", DateTime, ""),
            req("expires_at", Nullable(&DateTime), ""),
            opt("tokens", Arr(&COUNT, l::APPEND_MESSAGES_MAX), "each new turn's tokens (with `model_name`)"),
            opt("counting", Str(64), ""),
        ],
        true,
    ),
};

/// Every operation, in `ROUTES` order.
pub const OPS: &[&Op] = &[
    &HEALTH, &STATS, &EVENTS,
    // Ledger.
    &ASSETS_POST, &ACCOUNTS_POST, &INDICES_POST, &ACCOUNT_GET, &ACCOUNT_HISTORY, &TRANSFERS_POST, &TRANSFER_GET, &TRANSFER_POST_PENDING, &TRANSFER_VOID, &RECONCILE, &INTENTS_GET,
    &INTENTS_POST, &INTENT_COMPLETE,
    // Service-state cache.
    &SERVICES_GET, &SERVICES_GET_SLASH, &SERVICES_SNAPSHOT, &SERVICES_INVALIDATE_ALL, &SERVICE_PUT, &SERVICE_STATE_GET, &SERVICE_STATE_PUT, &SERVICE_STATE_DELETE,
    // Episodic log.
    &EPISODES_GET, &EPISODES_POST, &EPISODES_GET_SLASH, &EPISODES_POST_SLASH, &EPISODES_SUMMARY, &EPISODES_CONFIG,
    // Long-term memory.
    &LTM_CREATE, &LTM_DELETE, &LTM_CREATE_SLASH, &LTM_DELETE_SLASH, &LTM_SEARCH, &LTM_FORGET, &LTM_REEMBED, &LTM_GET, &LTM_PATCH, &LTM_VERSIONS, &LTM_RESTORE, &LTM_REDACT, &EXPORT, &IMPORT,
    // Summary views and tasks.
    &VIEWS_GET, &VIEWS_POST, &VIEW_GET, &VIEW_DELETE, &VIEW_RUN, &VIEW_PARTITIONS, &VIEW_PARTITION_RUN, &TASK_GET,
    // Working memory and history.
    &SESSIONS_LIST, &SESSION_GET, &SESSION_PUT_OP, &SESSION_DELETE, &MESSAGES_GET, &MESSAGES_POST, &COMPACT, &ARCHIVE, &TOOL_CACHE_GET, &TOOL_CACHE_PUT, &TOOL_CACHE_DELETE,
    &DATA_MIGRATE, &DECISIONS_GET, &DECISIONS_POST,
    // Privacy.
    &POLICY_GET, &POLICY_PUT, &CONSENT_GET, &CONSENT_PUT, &CONSENT_DELETE, &TOOL_TTLS_GET, &TOOL_TTLS_PUT,
    // Agents.
    &PROFILE_GET, &PROFILE_PUT, &PROFILE_DELETE, &PROFILE_INCREMENT, &PROFILE_MIGRATE, &SCHEMAS_GET, &SCHEMAS_GET_SLASH, &SCHEMA_GET, &SCHEMA_PUT, &AGENT_CONFIG,
    &AGENT_PROMPT_PUT, &AGENT_ROLLBACK, &AGENT_PATCH_POST, &AGENT_PATCH_DELETE, &AGENT_TOOLS, &AGENT_GUARDRAILS, &PROMPT, &MEMORY_PROMPT_OP, &TOOLS_SCHEMAS, &TOOLS_CALL,
    // The Worker's own.
    &BUDGET_COUNT, &BUDGET_BUILD, &SNAPSHOTS_PUBLISH, &KEYS_GET, &KEYS_POST, &KEY_GET, &KEY_DELETE, &KEY_ROTATE, &KEY_REVOKE, &KEY_ENCRYPTION_PUT, &KEY_ENCRYPTION_DELETE, &SHARDS_GET, &SHARDS_SPLIT, &SHARDS_ABORT, &ENCRYPTION_GET, &ENCRYPTION_ROTATE,
];

/// The operations whose body may be left out entirely (an empty body is
/// the same as `{}`); every other body is required. The drift test sends
/// each an empty body and checks the route agrees.
pub const BODY_OPTIONAL: &[(&str, &str)] = &[
    ("ledger/transfers/{}/post", "POST"),
    ("ledger/reconcile", "POST"),
    ("long-term-memory/forget", "POST"),
    ("summary-views/{}/run", "POST"),
    ("admin/keys/{}/rotate", "POST"),
];

/// The operations whose body object must name at least one field
/// (`minProperties: 1`).
pub const BODY_NONEMPTY: &[(&str, &str)] = &[("long-term-memory/{}", "PATCH")];

/// Operations whose body is NDJSON text, not a JSON document (the table
/// cannot describe it; the OpenAPI document says so).
pub const BODY_NDJSON: &[(&str, &str)] = &[("import", "POST")];

/// The operation for a method on a route pattern.
pub fn op(route: &str, method: &str) -> Option<&'static Op> {
    OPS.iter().copied().find(|o| o.route == route && o.method == method)
}
