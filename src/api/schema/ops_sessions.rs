//! Working memory beyond the tools' routes, the decision log, privacy and
//! consent, and the tool-result cache.

use super::ops::{COUNT, MESSAGE, MODEL, P_SESSION_ID, SESSION, STATUS};
use super::{opt, req, Op, F, S};
use crate::core::limits as l;

use S::{Any, Arr, Bool, DateTime, Enum, Id, Int, Map, Nullable, Obj, OneOf, Str};

/// A decision-log entry as answered.
pub const DECISION: S = Obj(
    &[
        req("seq", COUNT, "1, 2, 3... within the session"),
        req("ts", DateTime, ""),
        req("kind", Enum(&["observation", "reasoning", "decision", "action", "offer", "error"]), ""),
        req("text", Str(l::DECISION_TEXT_BYTES_MAX), ""),
        opt("data", Map, ""),
        opt("refs", Map, ""),
    ],
    true,
);

const WINDOW_MAX: S = Int(l::HISTORY_WINDOW_TOKENS_MIN as i64, l::WINDOW_TOKENS_MAX as i64);
const TOKENS: S = Int(0, l::WINDOW_TOKENS_MAX as i64);

pub const SESSIONS_LIST: Op = Op {
    route: "working-memory/",
    method: "GET",
    summary: "One page of live session ids, sorted",
    path: &[],
    query: &[
        opt("limit", Int(1, l::SESSION_LIST_LIMIT_MAX as i64), "default 20"),
        opt("offset", Int(0, l::SESSIONS_MAX as i64), ""),
        opt("user_id", Id, "only this user's sessions"),
    ],
    body: None,
    ok: &Obj(&[req("sessions", Arr(&Str(l::ID_BYTES_MAX), l::SESSION_LIST_LIMIT_MAX), ""), req("total", COUNT, "")], true),
};

pub const SESSION_DELETE: Op = Op {
    route: "working-memory/{}",
    method: "DELETE",
    summary: "Delete a session (ok whether or not it existed)",
    path: P_SESSION_ID,
    query: &[],
    body: None,
    ok: &STATUS,
};

pub const MESSAGES_GET: Op = Op {
    route: "working-memory/{}/messages",
    method: "GET",
    summary: "The session as chat messages: the summary first, then the turns, in a vendor's shape",
    path: P_SESSION_ID,
    query: &[opt("format", Enum(&["openai", "anthropic", "neutral"]), "default openai")],
    body: None,
    ok: &Obj(&[req("messages", Arr(&Map, l::SESSION_MESSAGES_MAX + 1), ""), opt("system", Any, "Anthropic's system text")], true),
};

// Compaction needs a window: a model's, or `context_window_max`.
const C_WINDOW: F = opt("context_window_max", WINDOW_MAX, "the window in tokens");
const C_MODEL: F = opt("model_name", MODEL, "count in this model's encoding; its window unless `context_window_max`");
const C_AT: F = opt("summarize_at_tokens", TOKENS, "compact past this many tokens");
const C_KEEP: F = opt("keep_recent_tokens", TOKENS, "keep this many tokens of recent turns verbatim (below `summarize_at_tokens`)");
const C_SUMMARY: F = opt("summary_tokens_max", TOKENS, "below `summarize_at_tokens`");

pub const COMPACT: Op = Op {
    route: "working-memory/{}/compact",
    method: "POST",
    summary: "Compact the session now if it is over its threshold: old turns become the summary and go to the archive",
    path: P_SESSION_ID,
    query: &[],
    body: Some(&OneOf(&[
        Obj(&[req("context_window_max", WINDOW_MAX, "the window in tokens"), C_MODEL, C_AT, C_KEEP, C_SUMMARY], false),
        Obj(&[req("model_name", MODEL, "a model from the table: its window and encoding"), C_WINDOW, C_AT, C_KEEP, C_SUMMARY], false),
    ])),
    ok: &Obj(
        &[
            req("compacted", Bool, ""),
            req("counting", Str(64), "how tokens were counted"),
            opt("archived", COUNT, ""),
            opt("tokens_before", COUNT, ""),
            opt("tokens_after", COUNT, ""),
            opt("summarizer", Enum(&["hook", "extractive"]), ""),
            opt("session", SESSION, ""),
        ],
        true,
    ),
};

pub const ARCHIVE: Op = Op {
    route: "working-memory/{}/archive",
    method: "GET",
    summary: "Compacted turns, oldest first",
    path: P_SESSION_ID,
    query: &[opt("offset", Int(0, l::ARCHIVED_MESSAGES_MAX as i64), ""), opt("limit", Int(1, l::ARCHIVE_PAGE_LIMIT_MAX as i64), "default 100")],
    body: None,
    ok: &Obj(&[req("messages", Arr(&MESSAGE, l::ARCHIVE_PAGE_LIMIT_MAX), ""), req("total", COUNT, "")], true),
};

const CACHED: S = Obj(
    &[req("tool", Str(l::TOOL_NAME_BYTES_MAX), ""), req("args", Any, ""), req("result", Any, ""), req("stored_at", DateTime, ""), req("expires_at", DateTime, "")],
    true,
);

pub const TOOL_CACHE_GET: Op = Op {
    route: "working-memory/{}/tool-cache",
    method: "GET",
    summary: "With `tool`: look one result up (`{hit, entry}`); without: the live entries and hit counters",
    path: P_SESSION_ID,
    query: &[opt("tool", Str(l::TOOL_NAME_BYTES_MAX), ""), opt("args", Str(l::TOOL_ARGS_BYTES_MAX), "the call's arguments as JSON text")],
    body: None,
    ok: &Obj(
        &[
            opt("hit", Bool, ""),
            opt("entry", Nullable(&CACHED), ""),
            opt("entries", Arr(&CACHED, l::TOOL_CACHE_ENTRIES_MAX), ""),
            opt("hits", COUNT, ""),
            opt("misses", COUNT, ""),
        ],
        true,
    ),
};

pub const TOOL_CACHE_PUT: Op = Op {
    route: "working-memory/{}/tool-cache",
    method: "PUT",
    summary: "Cache a tool's result for the session",
    path: P_SESSION_ID,
    query: &[],
    body: Some(&Obj(
        &[
            req("tool", Str(l::TOOL_NAME_BYTES_MAX), ""),
            opt("args", Any, "the call's arguments (default {})"),
            req("result", Any, ""),
            opt("ttl_seconds", Nullable(&Int(1, l::TOOL_CACHE_TTL_SECONDS_MAX as i64)), "default the tool's TTL"),
        ],
        false,
    )),
    ok: &CACHED,
};

pub const TOOL_CACHE_DELETE: Op = Op {
    route: "working-memory/{}/tool-cache",
    method: "DELETE",
    summary: "Invalidate cached results: all, a tool's, or one call's",
    path: P_SESSION_ID,
    query: &[opt("tool", Str(l::TOOL_NAME_BYTES_MAX), ""), opt("args", Str(l::TOOL_ARGS_BYTES_MAX), "JSON text")],
    body: None,
    ok: &Obj(&[req("invalidated", COUNT, "")], true),
};

/// A write-back of migrated state.
pub const MIGRATE_BODY: S = Obj(
    &[
        req("from_version", Int(1, l::USER_SCHEMA_VERSION_MAX as i64), ""),
        req("to_version", Int(1, l::USER_SCHEMA_VERSION_MAX as i64), ""),
        opt("fields", Nullable(&Map), "the migrated state (also accepted as `data`); without it the registered chain runs"),
    ],
    false,
);

pub const DATA_MIGRATE: Op = Op {
    route: "working-memory/{}/data/migrate",
    method: "POST",
    summary: "Write back a session's migrated data, or run the registered chain",
    path: P_SESSION_ID,
    query: &[],
    body: Some(&MIGRATE_BODY),
    ok: &SESSION,
};

pub const DECISIONS_GET: Op = Op {
    route: "working-memory/{}/decisions",
    method: "GET",
    summary: "Page the decision log (`format=jsonl` exports it as JSON Lines)",
    path: P_SESSION_ID,
    query: &[
        opt("kinds", Str(256), "comma-separated kinds"),
        opt("since", COUNT, "entries after this seq"),
        opt("format", Enum(&["json", "jsonl", "ndjson"]), "default json"),
        opt("limit", Int(1, l::DECISIONS_PER_SESSION_MAX as i64), "default 100 (at most 1000 as JSON)"),
    ],
    body: None,
    ok: &Obj(&[req("session_id", Str(l::ID_BYTES_MAX), ""), req("entries", Arr(&DECISION, l::DECISION_PAGE_LIMIT_MAX), ""), req("last_seq", COUNT, "")], true),
};

// ---- Privacy ----

const POLICY: S = Obj(&[req("require_consent", Bool, ""), req("anonymize", Bool, ""), req("secrets", Enum(&["redact", "reject"]), ""), req("pseudonyms", Bool, "user ids are sealed at rest")], true);

pub const POLICY_GET: Op = Op { route: "privacy/policy", method: "GET", summary: "The namespace's privacy policy", path: &[], query: &[], body: None, ok: &POLICY };

pub const POLICY_PUT: Op = Op {
    route: "privacy/policy",
    method: "PUT",
    summary: "Change the privacy policy; fields left out keep their value",
    path: &[],
    query: &[],
    body: Some(&Obj(
        &[
            opt("require_consent", Nullable(&Bool), "long-term writes need the user's consent"),
            opt("anonymize", Nullable(&Bool), "replace personal data before storing"),
            opt("secrets", Nullable(&Enum(&["redact", "reject"])), ""),
        ],
        false,
    )),
    ok: &POLICY,
};

const P_USER: &[F] = &[req("user_id", Id, "")];
const CONSENT: S = Obj(
    &[
        req("user_id", Str(l::ID_BYTES_MAX), ""),
        req("long_term", Bool, ""),
        opt("granted_at", DateTime, ""),
        opt("granted_by", Str(l::ID_BYTES_MAX), ""),
        opt("had_consent", Bool, ""),
        opt("revoked_at", DateTime, ""),
        opt("erased", Obj(&[req("memories", COUNT, ""), req("episodes", COUNT, "")], true), ""),
    ],
    true,
);

pub const CONSENT_GET: Op = Op { route: "consent/{}", method: "GET", summary: "A user's consent to long-term memory", path: P_USER, query: &[], body: None, ok: &CONSENT };

pub const CONSENT_PUT: Op = Op {
    route: "consent/{}",
    method: "PUT",
    summary: "Grant (true) or revoke (false) a user's consent",
    path: P_USER,
    query: &[],
    body: Some(&Obj(&[req("long_term", Bool, "")], true)),
    ok: &CONSENT,
};

pub const CONSENT_DELETE: Op = Op {
    route: "consent/{}",
    method: "DELETE",
    summary: "Revoke a user's consent and erase their long-term memories and episodes",
    path: P_USER,
    query: &[],
    body: None,
    ok: &CONSENT,
};

const TTLS: S = Obj(&[req("ttls", Map, "seconds by tool name")], true);

pub const TOOL_TTLS_GET: Op = Op { route: "tool-ttls", method: "GET", summary: "The per-tool cache TTLs", path: &[], query: &[], body: None, ok: &TTLS };

pub const TOOL_TTLS_PUT: Op = Op {
    route: "tool-ttls",
    method: "PUT",
    summary: "Replace the per-tool cache TTLs",
    path: &[],
    query: &[],
    body: Some(&Obj(&[req("ttls", Map, "seconds by tool name")], false)),
    ok: &TTLS,
};
