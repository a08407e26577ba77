//! Agents (profiles, prompts, patches, tools, guardrails), user schemas,
//! prompt assembly and the LLM tools; then the routes the Worker answers
//! itself (`worker_only` in `ROUTES`).

use super::ops::{COUNT, MODEL, U32};
use super::ops_sessions::MIGRATE_BODY;
use super::{opt, req, Op, F, S};
use crate::core::limits as l;

use S::{Any, Arr, Bool, DateTime, Decimal, Enum, Id, Int, Map, Nullable, Obj, OneOf, Str};

const P_AGENT: &[F] = &[req("agent_id", Id, "")];

// ---- Profiles and user schemas ----

const PROFILE: S = Obj(
    &[req("agent_id", Str(l::ID_BYTES_MAX), ""), req("fields", Map, ""), req("schema_version", Int(1, U32), ""), req("created_at", DateTime, ""), req("updated_at", DateTime, "")],
    true,
);

pub const PROFILE_GET: Op = Op { route: "agents/{}/profile", method: "GET", summary: "An agent's profile (migrated first when a newer schema is registered)", path: P_AGENT, query: &[], body: None, ok: &PROFILE };

pub const PROFILE_PUT: Op = Op {
    route: "agents/{}/profile",
    method: "PUT",
    summary: "Merge fields into an agent's profile (a null removes one), or replace them",
    path: P_AGENT,
    query: &[],
    body: Some(&Obj(
        &[
            opt("fields", Map, ""),
            opt("replace", Bool, "replace every field instead of merging"),
            opt("schema_version", Nullable(&Int(1, l::USER_SCHEMA_VERSION_MAX as i64)), "the version the fields are in (default the newest)"),
        ],
        false,
    )),
    ok: &PROFILE,
};

pub const PROFILE_DELETE: Op = Op {
    route: "agents/{}/profile",
    method: "DELETE",
    summary: "Delete an agent's profile",
    path: P_AGENT,
    query: &[],
    body: None,
    ok: &Obj(&[req("agent_id", Str(l::ID_BYTES_MAX), ""), req("deleted", Bool, "whether there was one")], true),
};

pub const PROFILE_INCREMENT: Op = Op {
    route: "agents/{}/profile/increment",
    method: "POST",
    summary: "Add to a numeric profile field: exact for integers and decimal strings",
    path: P_AGENT,
    query: &[],
    body: Some(&Obj(&[req("field", Str(l::ID_BYTES_MAX), ""), req("by", OneOf(&[Int(i64::MIN, i64::MAX), Decimal]), "an integer or a decimal string")], false)),
    ok: &Obj(&[req("agent_id", Str(l::ID_BYTES_MAX), ""), req("field", Str(l::ID_BYTES_MAX), ""), req("value", Any, "the new value")], true),
};

pub const PROFILE_MIGRATE: Op = Op {
    route: "agents/{}/profile/migrate",
    method: "POST",
    summary: "Write back a profile migrated by the host, or run the registered chain",
    path: P_AGENT,
    query: &[],
    body: Some(&MIGRATE_BODY),
    ok: &PROFILE,
};

const KIND: S = Enum(&["session_data", "profile"]);
const PATH: S = Arr(&Str(l::ID_BYTES_MAX), l::USER_SCHEMA_PATH_DEPTH_MAX);
const STEP: S = OneOf(&[
    Obj(&[req("rename", Obj(&[req("from", Str(l::ID_BYTES_MAX), ""), req("to", Str(l::ID_BYTES_MAX), "")], false), "renames a top-level field")], false),
    Obj(&[req("move", Obj(&[req("from", PATH, ""), req("to", PATH, "")], false), "moves a value, making the objects on the way")], false),
    Obj(&[req("set_default", Obj(&[req("path", PATH, ""), req("value", Any, "")], false), "sets a value unless one is there")], false),
    Obj(&[req("remove", Obj(&[req("path", PATH, "")], false), "removes a value")], false),
]);

/// A user schema: its newest version and the steps from each older one.
pub const SCHEMA: S = Obj(
    &[
        req("version", Int(1, l::USER_SCHEMA_VERSION_MAX as i64), ""),
        opt(
            "migrations",
            Arr(&Obj(&[req("from", Int(1, l::USER_SCHEMA_VERSION_MAX as i64), ""), req("steps", Arr(&STEP, l::USER_SCHEMA_STEPS_MAX), "")], false), l::USER_SCHEMA_VERSION_MAX as usize),
            "",
        ),
    ],
    false,
);

pub const SCHEMAS_GET: Op = Op {
    route: "schemas",
    method: "GET",
    summary: "The registered user schemas by kind",
    path: &[],
    query: &[],
    body: None,
    ok: &Obj(&[req("schemas", Obj(&[opt("session_data", SCHEMA, ""), opt("profile", SCHEMA, "")], true), "")], true),
};
pub const SCHEMAS_GET_SLASH: Op = Op { route: "schemas/", ..SCHEMAS_GET };

pub const SCHEMA_GET: Op = Op { route: "schemas/{}", method: "GET", summary: "A registered user schema", path: &[req("kind", KIND, "")], query: &[], body: None, ok: &SCHEMA };

pub const SCHEMA_PUT: Op = Op {
    route: "schemas/{}",
    method: "PUT",
    summary: "Register a user schema; its version never goes back",
    path: &[req("kind", KIND, "")],
    query: &[],
    body: Some(&SCHEMA),
    ok: &Obj(&[req("kind", KIND, ""), req("version", Int(1, l::USER_SCHEMA_VERSION_MAX as i64), "")], true),
};

// ---- Prompts, patches, tools and guardrails ----

const CONFIG: S = Obj(
    &[
        req("agent_id", Str(l::ID_BYTES_MAX), ""),
        req("active_version", Nullable(&Int(0, U32)), ""),
        req("prompt", Nullable(&Str(l::PROMPT_BYTES_MAX)), "the active prompt's text"),
        req("versions", Arr(&Map, l::PROMPT_VERSIONS_MAX), ""),
        req("patches", Arr(&Map, l::PATCHES_MAX), ""),
        req("tools_allowed", Nullable(&Arr(&Str(l::TOOL_NAME_BYTES_MAX), l::TOOLS_ALLOWED_MAX)), "null: every tool"),
        req("system_text", Str(l::PROMPT_BYTES_MAX + l::PATCHES_MAX * l::PATCH_BYTES_MAX), "the prompt and patches as sent"),
        req("guardrails", Map, ""),
        opt("version", Any, "the version a change made"),
        opt("removed", Any, "patches a removal dropped"),
    ],
    true,
);

pub const AGENT_CONFIG: Op = Op { route: "agents/{}/config", method: "GET", summary: "An agent's prompt versions, patches, tools and guardrails", path: P_AGENT, query: &[], body: None, ok: &CONFIG };

pub const AGENT_PROMPT_PUT: Op = Op {
    route: "agents/{}/prompt",
    method: "PUT",
    summary: "Set a new prompt version (checked against the guardrails)",
    path: P_AGENT,
    query: &[],
    body: Some(&Obj(&[req("text", Str(l::PROMPT_BYTES_MAX), ""), opt("note", Nullable(&Str(l::PROMPT_NOTE_BYTES_MAX)), "why it changed")], false)),
    ok: &CONFIG,
};

pub const AGENT_ROLLBACK: Op = Op {
    route: "agents/{}/prompt/rollback",
    method: "POST",
    summary: "Make an earlier prompt version active",
    path: P_AGENT,
    query: &[],
    body: Some(&Obj(&[req("version", Int(0, U32), "")], false)),
    ok: &CONFIG,
};

pub const AGENT_PATCH_POST: Op = Op {
    route: "agents/{}/patches",
    method: "POST",
    summary: "Append a patch to the system text",
    path: P_AGENT,
    query: &[],
    body: Some(&Obj(&[req("text", Str(l::PATCH_BYTES_MAX), "")], false)),
    ok: &CONFIG,
};

pub const AGENT_PATCH_DELETE: Op = Op {
    route: "agents/{}/patches",
    method: "DELETE",
    summary: "Remove the patches whose text matches a glob",
    path: P_AGENT,
    query: &[req("glob", Str(l::GLOB_BYTES_MAX), "such as CRITICAL:*")],
    body: None,
    ok: &CONFIG,
};

pub const AGENT_TOOLS: Op = Op {
    route: "agents/{}/tools",
    method: "PUT",
    summary: "Set the tools the agent may call (null: every tool)",
    path: P_AGENT,
    query: &[],
    body: Some(&Obj(&[opt("tools", Nullable(&Arr(&Str(l::TOOL_NAME_BYTES_MAX), l::TOOLS_ALLOWED_MAX)), "")], false)),
    ok: &CONFIG,
};

pub const AGENT_GUARDRAILS: Op = Op {
    route: "agents/{}/guardrails",
    method: "PUT",
    summary: "Set the rules every prompt change must pass (admin: the agent's own key cannot lift them)",
    path: P_AGENT,
    query: &[],
    body: Some(&Obj(
        &[
            opt("required", Arr(&Str(l::GUARDRAIL_RULE_BYTES_MAX), l::GUARDRAIL_REQUIRED_MAX), "clauses the system text must contain"),
            opt("forbidden", Arr(&Str(l::GUARDRAIL_RULE_BYTES_MAX), l::GUARDRAIL_FORBIDDEN_MAX), "patterns it must not"),
            opt("tokens_max", Nullable(&Int(1, l::GUARDRAIL_TOKENS_MAX_CEILING as i64)), "a ceiling on its tokens"),
        ],
        false,
    )),
    ok: &CONFIG,
};

// `POST /v1/prompt` needs a window: a model's, or `window_tokens`.
const P_QUERY: F = opt("query", Nullable(&Str(l::MESSAGE_CONTENT_BYTES_MAX)), "the user's message, last");
const P_SESSION: F = opt("session_id", Nullable(&Id), "whose summary and turns to include");
const P_AGENT_ID: F = opt("agent_id", Nullable(&Id), "whose system text leads");
const P_MODEL: F = opt("model", Nullable(&MODEL), "a model from the table: window, output limit, encoding");
const P_WINDOW: F = opt("window_tokens", Nullable(&Int(1, l::WINDOW_TOKENS_MAX as i64)), "overrides the model's window");
const P_RESERVE: F = opt("reserve_for_output", Nullable(&Int(0, l::WINDOW_TOKENS_MAX as i64)), "");
const P_TOOLS: F = opt("tools_tokens", Nullable(&Int(0, l::WINDOW_TOKENS_MAX as i64)), "");
const P_MEMORIES: F = opt("memories", Arr(&Str(l::MEMORY_TEXT_BYTES_MAX), l::PROMPT_MEMORIES_MAX), "recalled memories, best first");
const P_FORMAT: F = opt("format", Nullable(&Enum(&["openai", "anthropic", "neutral"])), "default openai");
const P_AS: F = opt("as", Nullable(&Enum(&["object", "plan"])), "`plan`: what to send, by reference");

pub const PROMPT: Op = Op {
    route: "prompt",
    method: "POST",
    summary: "Assemble a prompt within a window: system text, summary, turns, memories, query",
    path: &[],
    query: &[],
    body: Some(&OneOf(&[
        Obj(&[req("window_tokens", Int(1, l::WINDOW_TOKENS_MAX as i64), "the window in tokens"), P_QUERY, P_SESSION, P_AGENT_ID, P_MODEL, P_RESERVE, P_TOOLS, P_MEMORIES, P_FORMAT, P_AS], false),
        Obj(&[req("model", MODEL, "a model from the table"), P_QUERY, P_SESSION, P_AGENT_ID, P_WINDOW, P_RESERVE, P_TOOLS, P_MEMORIES, P_FORMAT, P_AS], false),
    ])),
    ok: &Obj(
        &[
            req("used_tokens", COUNT, ""),
            req("left_tokens", COUNT, ""),
            req("window_tokens", COUNT, ""),
            req("reserve_for_output_tokens", COUNT, ""),
            req("turns_kept", COUNT, ""),
            req("memories_kept", COUNT, ""),
            req("dropped", Any, ""),
            req("counting", Str(64), ""),
            opt("messages", Arr(&Map, l::SESSION_MESSAGES_MAX + l::PROMPT_MEMORIES_MAX + 4), "absent with `as: plan`"),
            opt("system", Any, "Anthropic's system"),
            opt("plan", Map, "with `as: plan`"),
        ],
        true,
    ),
};

pub const TOOLS_SCHEMAS: Op = Op {
    route: "tools/schemas",
    method: "GET",
    summary: "The LLM tool schemas, in OpenAI's or Anthropic's shape, after the agent's allow-list",
    path: &[],
    query: &[opt("format", Enum(&["openai", "anthropic", "mcp"]), "default openai"), opt("agent_id", Id, "")],
    body: None,
    ok: &Arr(&Map, 64),
};

pub const TOOLS_CALL: Op = Op {
    route: "tools/call",
    method: "POST",
    summary: "Execute a model's function call after the agent's allow-list",
    path: &[],
    query: &[],
    body: Some(&Obj(
        &[
            req("name", Str(l::TOOL_NAME_BYTES_MAX), "the tool"),
            opt("arguments", Nullable(&OneOf(&[Map, Str(l::TOOL_CALL_ARGS_BYTES_MAX)])), "an object, or its JSON text (checked against the tool's own schema)"),
            opt("agent_id", Nullable(&Id), "whose allow-list applies"),
            opt("namespace", Nullable(&Id), "binds the call: naming another namespace is namespace_forbidden"),
            opt("session_id", Nullable(&Id), "binds the call: the session a session tool uses; naming another is invalid_input"),
            opt("user_id", Nullable(&Id), "binds the call: records are written for, and reads limited to, this user"),
            opt("result_tokens_max", Nullable(&Int(l::TOOL_RESULT_TOKENS_MIN as i64, l::TOOL_RESULT_TOKENS_MAX as i64)), "the ceiling on the result's tokens (default 4,000)"),
        ],
        false,
    )),
    ok: &Obj(&[req("result", Any, "")], true),
};

// ---- The Worker's own ----

const ENCODING: S = Enum(&["cl100k_base", "o200k_base"]);

pub const BUDGET_COUNT: Op = Op {
    route: "budget/count",
    method: "POST",
    summary: "Count a text's tokens exactly (an encoding, or a model's)",
    path: &[],
    query: &[],
    body: Some(&Obj(&[req("text", Str(l::TOKENIZER_INPUT_BYTES_MAX), ""), opt("encoding", Nullable(&ENCODING), "default o200k_base"), opt("model", Nullable(&MODEL), "")], false)),
    ok: &Obj(&[req("tokens", COUNT, ""), req("encoding", Str(64), "")], true),
};

pub const BUDGET_BUILD: Op = Op {
    route: "budget/build",
    method: "POST",
    summary: "Fill a window with prioritized slots; lower-priority slots are cut first (`model` or `max_tokens` is required)",
    path: &[],
    query: &[],
    body: Some(&Obj(
        &[
            opt("model", Nullable(&MODEL), ""),
            opt("max_tokens", Nullable(&Int(1, l::WINDOW_TOKENS_MAX as i64)), "the window"),
            opt("encoding", Nullable(&ENCODING), ""),
            opt("reserve_for_output", Nullable(&Int(0, l::WINDOW_TOKENS_MAX as i64)), ""),
            opt("truncate_at_priority", Nullable(&Int(0, l::SLOT_PRIORITY_MAX as i64)), ""),
            opt("message_overhead_tokens", Nullable(&Int(0, l::MESSAGE_OVERHEAD_TOKENS_MAX as i64)), ""),
            req(
                "slots",
                Arr(&Obj(&[req("name", Str(l::ID_BYTES_MAX), ""), req("content", Str(l::TOKENIZER_INPUT_BYTES_MAX), ""), req("priority", Int(0, l::SLOT_PRIORITY_MAX as i64), "")], false), l::SLOTS_MAX),
                "",
            ),
            opt("tools", Any, "tool definitions, counted as JSON"),
        ],
        false,
    )),
    ok: &Obj(
        &[
            req("context", Str(l::TOKENIZER_INPUT_BYTES_MAX), ""),
            req("used", COUNT, ""),
            req("left", COUNT, ""),
            req("window", COUNT, ""),
            req("reserve_for_output", COUNT, ""),
            req("tools", COUNT, ""),
            req("percent_used", S::Num(0.0, 100.0), ""),
            req("percent_left", S::Num(0.0, 100.0), ""),
            req("encoding", Str(64), ""),
            req("slots", Arr(&Map, l::SLOTS_MAX), ""),
        ],
        true,
    ),
};

pub const SNAPSHOTS_PUBLISH: Op = Op {
    route: "snapshots/publish",
    method: "POST",
    summary: "Publish the tenant's snapshot to KV for read-only replicas",
    path: &[],
    query: &[],
    body: None,
    ok: &Obj(
        &[
            req("snapshot_gen", COUNT, ""),
            req("snapshot_bytes", COUNT, ""),
            req("last_seq", COUNT, ""),
            req("key_prefix", Str(l::ID_BYTES_MAX + 1), ""),
            opt("shards", COUNT, "a sharded tenant's: how many shards its replica holds"),
            opt("form", Enum(&["export"]), "a sharded tenant's replica is its export with vectors (snapshot_bytes counts it), which Memory.openPublished reads a chunk at a time"),
        ],
        true,
    ),
};

const SCOPE: S = Enum(&["read", "write", "admin"]);
const RATE: S = Obj(&[req("per_second", Int(1, l::RATE_PER_SECOND_CEILING as i64), ""), req("burst", Int(1, l::RATE_BURST_CEILING as i64), "")], false);

const KEY: S = Obj(
    &[
        req("id", Str(64), ""),
        req("namespace", Nullable(&Str(l::ID_BYTES_MAX)), ""),
        req("namespace_prefix", Nullable(&Str(l::ID_BYTES_MAX)), ""),
        req("scopes", Arr(&SCOPE, 3), ""),
        req("created_at", DateTime, ""),
        req("expires_at", Nullable(&DateTime), ""),
        req("rotated_at", Nullable(&DateTime), ""),
        opt("rate", RATE, ""),
        opt("encryption_key_id", Str(l::CRYPT_KEY_ID_BYTES_MAX), "the tenant encryption key requests with this key must carry"),
        opt("key", Str(256), "the secret, shown once"),
    ],
    true,
);
const P_KEY: &[F] = &[req("key_id", Str(64), "")];
const REVOKED: S = Obj(&[req("id", Str(64), ""), req("revoked", Bool, "")], true);

pub const KEYS_GET: Op = Op {
    route: "admin/keys",
    method: "GET",
    summary: "List the API keys the caller manages",
    path: &[],
    query: &[opt("namespace", Id, "only keys covering this namespace")],
    body: None,
    ok: &Obj(&[req("keys", Arr(&KEY, l::API_KEYS_LIST_MAX), "")], true),
};

pub const KEYS_POST: Op = Op {
    route: "admin/keys",
    method: "POST",
    summary: "Mint an API key for a namespace or a namespace prefix (the secret is answered once)",
    path: &[],
    query: &[],
    body: Some(&Obj(
        &[
            opt("namespace", Nullable(&Id), "exactly one of namespace and namespace_prefix"),
            opt("namespace_prefix", Nullable(&Id), ""),
            req("scopes", Arr(&SCOPE, 3), ""),
            opt("expires_at", Nullable(&OneOf(&[DateTime, Int(0, 253_402_300_799_999)])), "RFC 3339 or Unix milliseconds"),
            opt("rate", Nullable(&RATE), ""),
        ],
        false,
    )),
    ok: &KEY,
};

pub const KEY_GET: Op = Op { route: "admin/keys/{}", method: "GET", summary: "Read an API key (never its secret)", path: P_KEY, query: &[], body: None, ok: &KEY };
pub const KEY_DELETE: Op = Op { route: "admin/keys/{}", method: "DELETE", summary: "Revoke an API key", path: P_KEY, query: &[], body: None, ok: &REVOKED };

pub const KEY_ROTATE: Op = Op {
    route: "admin/keys/{}/rotate",
    method: "POST",
    summary: "Replace a key's secret; the old one works for a grace period (the body may be omitted)",
    path: P_KEY,
    query: &[],
    body: Some(&Obj(&[opt("grace_seconds", Int(0, l::KEY_ROTATE_GRACE_SECONDS_MAX as i64), "")], false)),
    ok: &KEY,
};

pub const KEY_ENCRYPTION_PUT: Op = Op {
    route: "admin/keys/{}/encryption",
    method: "PUT",
    summary: "Bind an API key to the tenant encryption key this request carries (X-Edgemem-Encryption-Key): its requests must carry that key",
    path: P_KEY,
    query: &[],
    body: None,
    ok: &KEY,
};

pub const KEY_ENCRYPTION_DELETE: Op = Op { route: "admin/keys/{}/encryption", method: "DELETE", summary: "Unbind an API key from its encryption key", path: P_KEY, query: &[], body: None, ok: &KEY };

const SHARD_REPORT: S = Obj(
    &[
        req("move_id", Int(1, i64::MAX), "the epoch of the map after the split"),
        req("from", Int(0, l::SHARDS_MAX as i64), "the shard that gave half its buckets"),
        req("to", Int(1, l::SHARDS_MAX as i64), "the new shard (ids are never reused)"),
        req("buckets_moved", Int(1, l::SHARD_BUCKETS as i64), ""),
        req("items_copied", Int(0, i64::MAX), "sessions and records copied, over every round"),
        req("rounds", Int(1, i64::MAX), "catch-up rounds, before and under the fence"),
        req("split_ms", Int(0, i64::MAX), ""),
        req("fence_ms", Nullable(&Int(0, i64::MAX)), "how long writes to the moving buckets were held"),
    ],
    true,
);

pub const SHARDS_GET: Op = Op {
    route: "admin/shards",
    method: "GET",
    summary: "A sharded tenant's map, each shard's holdings, the split in progress and the last one (501 when sharding is off)",
    path: &[],
    query: &[opt("namespace", Id, "the tenant; default: the default namespace"), opt("ids", Bool, "list each shard's record ids too (at most SHARD_ADMIN_IDS_MAX)")],
    body: None,
    ok: &Obj(&[req("tenant", Id, ""), req("map", Map, "epoch and owner runs"), req("shards", Arr(&Map, l::SHARDS_MAX), "per shard: shard, buckets, records, sessions, fenced, ids"), opt("moving", Nullable(&Map), ""), opt("last_split", Nullable(&SHARD_REPORT), ""), opt("last_abort", Nullable(&ABORT_REPORT), "")], true),
};

const ABORT_REPORT: S = Obj(
    &[
        req("move_id", Int(1, i64::MAX), "the split aborted"),
        req("from", Int(0, l::SHARDS_MAX as i64), "the shard that keeps its buckets"),
        req("to", Int(1, l::SHARDS_MAX as i64), "the shard that dropped what it was sent"),
        req("aborted", Bool, "always true"),
        req("step", Str(16), "copy or fenced: where the split was"),
        req("buckets", Int(1, l::SHARD_BUCKETS as i64), "the buckets that stay"),
        req("items_copied", Int(0, i64::MAX), ""),
        req("dropped", Int(0, i64::MAX), "items the new shard dropped"),
        req("aborted_after_ms", Int(0, i64::MAX), "since the split began"),
    ],
    true,
);

pub const SHARDS_ABORT: Op = Op {
    route: "admin/shards/abort",
    method: "POST",
    summary: "Abort the tenant's split in progress before its flip: the new shard drops what it was sent and the source lifts its fence (404 without a split in progress, 422 past the flip)",
    path: &[],
    query: &[opt("namespace", Id, "the tenant; default: the default namespace")],
    body: None,
    ok: &ABORT_REPORT,
};

pub const SHARDS_SPLIT: Op = Op {
    route: "admin/shards/split",
    method: "POST",
    summary: "Split a shard of a tenant now: half its buckets move to a new shard, writes to them held only for the last catch-up (the body may be omitted)",
    path: &[],
    query: &[opt("namespace", Id, "the tenant; default: the default namespace")],
    body: Some(&Obj(&[opt("shard", Int(0, l::SHARDS_MAX as i64), "default: the shard owning the most buckets")], false)),
    ok: &SHARD_REPORT,
};

const KEY_ID: S = Str(l::CRYPT_KEY_ID_BYTES_MAX);

pub const ENCRYPTION_GET: Op = Op {
    route: "encryption",
    method: "GET",
    summary: "Whether the tenant's storage is encrypted at rest, and under which key id (requests carry the key in X-Edgemem-Encryption-Key)",
    path: &[],
    query: &[],
    body: None,
    ok: &Obj(&[req("encrypted", Bool, ""), req("key_id", Nullable(&KEY_ID), ""), req("algorithm", Nullable(&Str(16)), "")], true),
};

pub const ENCRYPTION_ROTATE: Op = Op {
    route: "encryption/rotate",
    method: "POST",
    summary: "Re-encrypt the tenant's storage under X-Edgemem-New-Encryption-Key (the current key in X-Edgemem-Encryption-Key; none encrypts a plaintext tenant); API keys bound to the old key follow",
    path: &[],
    query: &[],
    body: None,
    ok: &Obj(&[req("key_id", KEY_ID, ""), req("previous_key_id", Nullable(&KEY_ID), ""), req("leftovers", Bool, "")], true),
};

pub const KEY_REVOKE: Op = Op { route: "admin/keys/{}/revoke", method: "POST", summary: "Revoke an API key", path: P_KEY, query: &[], body: None, ok: &REVOKED };
