//! Operations on the store at large, the service-state cache, the episodic
//! log, long-term memory beyond the tools' routes, and summary views.

use super::ops::{COUNT, LTM_CREATE, LTM_DELETE, MEMORY_TYPE, STATUS, TIME};
use super::{opt, req, Op, F, S};
use crate::core::limits as l;

use S::{Any, Arr, Bool, DateTime, Enum, Id, Int, Map, Nullable, Num, Obj, Str};

// ---- The store ----

pub const HEALTH: Op = Op {
    route: "health",
    method: "GET",
    summary: "Liveness: the server's clock and version",
    path: &[],
    query: &[],
    body: None,
    ok: &Obj(&[req("now", COUNT, "milliseconds since the epoch"), req("version", Str(64), "")], true),
};

pub const STATS: Op = Op {
    route: "stats",
    method: "GET",
    summary: "Store counters: log, snapshot, sessions, long-term memories, embedder",
    path: &[],
    query: &[],
    body: None,
    ok: &Obj(
        &[
            req("last_seq", COUNT, ""),
            req("log_records_since_snapshot", COUNT, ""),
            req("snapshot_gen", COUNT, ""),
            req("snapshot_bytes", COUNT, ""),
            req("sessions", COUNT, "including expired ones not yet swept"),
            req("next_expiry", Nullable(&COUNT), ""),
            req("long_term_memories", COUNT, ""),
            req("embedder", Nullable(&Str(l::EMBEDDER_NAME_BYTES_MAX)), "what made the vectors"),
            req("reembedding", Nullable(&Map), "a re-embedding in progress"),
        ],
        true,
    ),
};

pub const EVENTS: Op = Op {
    route: "events",
    method: "GET",
    summary: "One page of the change feed after `since` (without it: empty, with `last_seq`)",
    path: &[],
    query: &[
        opt("since", COUNT, "the last seq seen"),
        opt("kinds", Str(4096), "comma-separated kinds, exact or `area.*`"),
        opt("keys", Str(16384), "comma-separated keys (session ids, account ids, ...)"),
        opt("limit", Int(1, l::FEED_PAGE_EVENTS_MAX as i64), "default 100"),
    ],
    body: None,
    ok: &Obj(
        &[
            req(
                "events",
                Arr(
                    &Obj(
                        &[
                            req("seq", COUNT, ""),
                            req("ts", COUNT, "ms since the epoch"),
                            req("kind", Str(64), ""),
                            req("key", Str(l::ID_BYTES_MAX), ""),
                            opt("count", COUNT, ""),
                            opt("ids", Arr(&Str(l::ID_BYTES_MAX), l::FEED_EVENT_IDS_MAX), ""),
                        ],
                        true,
                    ),
                    l::FEED_PAGE_EVENTS_MAX,
                ),
                "",
            ),
            req("last_seq", COUNT, ""),
            req("resync_required", Bool, "`since` is older than what is kept: reload, then resume from `last_seq`"),
            req("next_since", COUNT, ""),
        ],
        true,
    ),
};

// ---- The service-state cache ----

const SERVICE: S = Str(l::SERVICE_NAME_BYTES_MAX);
const P_SERVICE: &[F] = &[req("service", SERVICE, "")];
const Q_AGENT: &[F] = &[req("agent_id", Id, "")];
const SERVICE_TABLE: S = Obj(&[req("services", Arr(&Obj(&[req("service", SERVICE, ""), req("ttl_seconds", COUNT, "")], true), l::SERVICES_MAX), "")], true);
const INVALIDATED: S = Obj(&[req("agent_id", Str(l::ID_BYTES_MAX), ""), req("invalidated", COUNT, "")], true);
const ERROR_OBJ: S = Obj(&[req("code", Str(64), ""), req("detail", Str(4096), "")], true);

/// One service's state for an agent.
pub const SERVICE_STATE: S = Obj(
    &[
        req("agent_id", Str(l::ID_BYTES_MAX), ""),
        req("service", SERVICE, ""),
        req("state", Any, "the upstream's JSON"),
        req("age_ms", COUNT, ""),
        req("stale", Bool, "past its TTL (only with `allow_stale`)"),
        req("source", Enum(&["cache", "upstream", "written"]), ""),
        req("fetched_at", DateTime, ""),
        req("expires_at", DateTime, ""),
        opt("upstream_error", ERROR_OBJ, "why a stale entry was served"),
    ],
    true,
);

pub const SERVICES_GET: Op = Op { route: "services", method: "GET", summary: "The registered services and their TTLs", path: &[], query: &[], body: None, ok: &SERVICE_TABLE };
pub const SERVICES_GET_SLASH: Op = Op { route: "services/", ..SERVICES_GET };

pub const SERVICES_SNAPSHOT: Op = Op {
    route: "services/snapshot",
    method: "GET",
    summary: "Every service's state for an agent, read concurrently, with exact totals by asset",
    path: &[],
    query: &[req("agent_id", Id, ""), opt("services", Str(4096), "comma-separated; default every registered service")],
    body: None,
    ok: &Obj(
        &[
            req("agent_id", Str(l::ID_BYTES_MAX), ""),
            req("taken_at", DateTime, ""),
            req("services", Map, "each service's `{state, age_ms, source}` or `{error}`"),
            req("ok", COUNT, ""),
            req("failed", COUNT, ""),
            req("totals", Map, "decimal strings by asset"),
            req("totals_skipped", Arr(&Map, l::SERVICES_MAX), ""),
        ],
        true,
    ),
};

pub const SERVICES_INVALIDATE_ALL: Op = Op { route: "services/state", method: "DELETE", summary: "Drop every cached state of an agent", path: &[], query: Q_AGENT, body: None, ok: &INVALIDATED };

pub const SERVICE_PUT: Op = Op {
    route: "services/{}",
    method: "PUT",
    summary: "Register a service or set its TTL",
    path: P_SERVICE,
    query: &[],
    body: Some(&Obj(&[req("ttl_seconds", Int(1, l::SERVICE_TTL_SECONDS_MAX as i64), "")], false)),
    ok: &Obj(&[req("service", SERVICE, ""), req("ttl_seconds", COUNT, "")], true),
};

pub const SERVICE_STATE_GET: Op = Op {
    route: "services/{}/state",
    method: "GET",
    summary: "An agent's state of a service: fresh from the cache, else read through the upstream",
    path: P_SERVICE,
    query: &[req("agent_id", Id, ""), opt("allow_stale", Bool, "serve a stale entry when the upstream fails"), opt("force_refresh", Bool, "skip a fresh entry")],
    body: None,
    ok: &SERVICE_STATE,
};

pub const SERVICE_STATE_PUT: Op = Op {
    route: "services/{}/state",
    method: "PUT",
    summary: "Write through the agent's own view after a mutation it made",
    path: P_SERVICE,
    query: &[opt("agent_id", Id, "or in the body")],
    body: Some(&Obj(&[req("state", Any, ""), opt("agent_id", Nullable(&Id), "or in the query")], false)),
    ok: &SERVICE_STATE,
};

pub const SERVICE_STATE_DELETE: Op = Op { route: "services/{}/state", method: "DELETE", summary: "Drop an agent's cached state of a service", path: P_SERVICE, query: Q_AGENT, body: None, ok: &INVALIDATED };

// ---- The episodic log ----

const EPISODE: S = Obj(
    &[
        req("id", Str(l::ID_BYTES_MAX), ""),
        req("agent_id", Str(l::ID_BYTES_MAX), ""),
        req("kind", Str(l::EPISODE_KIND_BYTES_MAX), ""),
        req("at", DateTime, ""),
        req("payload", Map, ""),
        req("outcome", Any, ""),
        req("seq", COUNT, ""),
    ],
    true,
);

pub const EPISODES_GET: Op = Op {
    route: "episodes",
    method: "GET",
    summary: "The newest episodes, optionally of one agent and kind",
    path: &[],
    query: &[opt("n", Int(1, l::EPISODES_RECENT_MAX as i64), "default 20"), opt("agent_id", Id, ""), opt("kind", Str(l::EPISODE_KIND_BYTES_MAX), "")],
    body: None,
    ok: &Obj(&[req("episodes", Arr(&EPISODE, l::EPISODES_RECENT_MAX), "newest first")], true),
};
pub const EPISODES_GET_SLASH: Op = Op { route: "episodes/", ..EPISODES_GET };

pub const EPISODES_POST: Op = Op {
    route: "episodes",
    method: "POST",
    summary: "Record an episode (an agent's event); the oldest are evicted at the agent's cap",
    path: &[],
    query: &[],
    body: Some(&Obj(
        &[
            opt("id", Nullable(&Id), "default a ULID"),
            req("agent_id", Id, ""),
            req("kind", Str(l::EPISODE_KIND_BYTES_MAX), "also accepted as `type`"),
            opt("at", Nullable(&TIME), "default now"),
            opt("payload", Map, ""),
            opt("outcome", Any, ""),
        ],
        false,
    )),
    ok: &Obj(&[req("id", Str(l::ID_BYTES_MAX), ""), req("seq", COUNT, ""), req("evicted", Any, "")], true),
};
pub const EPISODES_POST_SLASH: Op = Op { route: "episodes/", ..EPISODES_POST };

pub const EPISODES_SUMMARY: Op = Op {
    route: "episodes/summary",
    method: "GET",
    summary: "Counts by kind over a window",
    path: &[],
    query: &[opt("since", Str(64), "RFC 3339, or seconds or milliseconds since the epoch"), opt("agent_id", Id, "")],
    body: None,
    ok: &Obj(
        &[req("total", COUNT, ""), req("by_kind", Map, ""), req("first_at", Nullable(&DateTime), ""), req("last_at", Nullable(&DateTime), ""), req("span_seconds", Nullable(&COUNT), "")],
        true,
    ),
};

pub const EPISODES_CONFIG: Op = Op {
    route: "episodes/config",
    method: "PUT",
    summary: "Set the log's policy: a cap per agent, a TTL, and what happens at the cap",
    path: &[],
    query: &[],
    body: Some(&Obj(
        &[
            req("per_agent_max", Int(1, l::EPISODES_PER_AGENT_MAX as i64), ""),
            opt("ttl_seconds", Nullable(&Int(1, l::TTL_SECONDS_MAX as i64)), ""),
            opt("at_cap", Nullable(&Enum(&["evict_oldest", "refuse"])), "default evict_oldest"),
        ],
        false,
    )),
    ok: &Obj(&[req("dropped", COUNT, "episodes over the new cap")], true),
};

// ---- Long-term memory ----

pub const LTM_CREATE_SLASH: Op = Op { route: "long-term-memory/", ..LTM_CREATE };
pub const LTM_DELETE_SLASH: Op = Op { route: "long-term-memory/", ..LTM_DELETE };

pub const LTM_FORGET: Op = Op {
    route: "long-term-memory/forget",
    method: "POST",
    summary: "Forget by AMS's policy: age, inactivity, a budget; a dry run unless `dry_run=false` (the body may be omitted)",
    path: &[],
    query: &[
        opt("dry_run", Bool, "default true"),
        opt("limit", Int(1, l::LTM_DELETE_BATCH_MAX as i64), "default 1000"),
        opt("user_id", Id, ""),
        opt("session_id", Id, ""),
        opt("namespace", Id, ""),
    ],
    body: Some(&Obj(
        &[
            opt(
                "policy",
                Nullable(&Obj(
                    &[
                        opt("max_age_days", Nullable(&Num(0.0, 1e9)), ""),
                        opt("max_inactive_days", Nullable(&Num(0.0, 1e9)), ""),
                        opt("budget", Nullable(&Int(0, l::LTM_RECORDS_MAX as i64)), "keep at most this many, least recently used go first"),
                        opt("memory_type_allowlist", Nullable(&Arr(&MEMORY_TYPE, 3)), "only these kinds may go"),
                    ],
                    true,
                )),
                "",
            ),
            opt("pinned_ids", Nullable(&Arr(&Id, l::LTM_RECORDS_MAX)), "never forget these"),
        ],
        true,
    )),
    ok: &Obj(&[req("scanned", COUNT, ""), req("deleted", COUNT, ""), req("deleted_ids", Arr(&Str(l::ID_BYTES_MAX), l::LTM_DELETE_BATCH_MAX), ""), req("dry_run", Bool, "")], true),
};

pub const LTM_REEMBED: Op = Op {
    route: "long-term-memory/reembed",
    method: "POST",
    summary: "Move a bounded batch of vectors to the current embedder; repeat until `done`",
    path: &[],
    query: &[],
    body: None,
    ok: &Obj(
        &[
            req("embedder", Str(l::EMBEDDER_NAME_BYTES_MAX), ""),
            req("previous", Nullable(&Str(l::EMBEDDER_NAME_BYTES_MAX)), ""),
            req("reembedded", COUNT, ""),
            req("remaining", COUNT, ""),
            req("done", Bool, ""),
        ],
        true,
    ),
};

// ---- Summary views (AMS) ----

const GROUP_FIELD: S = Enum(&["user_id", "namespace", "session_id", "memory_type"]);

const VIEW: S = Obj(
    &[
        req("id", Str(l::ID_BYTES_MAX), ""),
        req("name", Nullable(&Str(l::SUMMARY_VIEW_NAME_BYTES_MAX)), ""),
        req("source", Enum(&["long_term"]), ""),
        req("group_by", Arr(&GROUP_FIELD, 4), ""),
        req("filters", Map, ""),
        req("time_window_days", Nullable(&Int(1, l::SUMMARY_VIEW_WINDOW_DAYS_MAX as i64)), ""),
        req("continuous", Bool, ""),
        req("prompt", Nullable(&Str(l::SUMMARY_VIEW_PROMPT_BYTES_MAX)), ""),
        req("model_name", Nullable(&Str(l::ID_BYTES_MAX)), ""),
    ],
    true,
);

const PARTITION: S = Obj(
    &[req("view_id", Str(l::ID_BYTES_MAX), ""), req("group", Map, ""), req("summary", Str(l::SUMMARY_VIEW_SUMMARY_BYTES_MAX), ""), req("memory_count", COUNT, ""), req("computed_at", DateTime, "")],
    true,
);

/// AMS's `Task`.
pub const TASK: S = Obj(
    &[
        req("id", Str(l::ID_BYTES_MAX), ""),
        req("type", Str(64), ""),
        req("status", Enum(&["pending", "running", "success", "failed"]), ""),
        req("view_id", Nullable(&Str(l::ID_BYTES_MAX)), ""),
        req("created_at", DateTime, ""),
        req("started_at", Nullable(&DateTime), ""),
        req("completed_at", Nullable(&DateTime), ""),
        req("error_message", Nullable(&Str(4096)), ""),
    ],
    true,
);

const P_VIEW: &[F] = &[req("view_id", Id, "")];

pub const VIEWS_GET: Op = Op { route: "summary-views", method: "GET", summary: "List the summary views", path: &[], query: &[], body: None, ok: &Arr(&VIEW, l::SUMMARY_VIEWS_MAX) };

pub const VIEWS_POST: Op = Op {
    route: "summary-views",
    method: "POST",
    summary: "Create a summary view: long-term memories grouped and summarized",
    path: &[],
    query: &[],
    body: Some(&Obj(
        &[
            opt("name", Nullable(&Str(l::SUMMARY_VIEW_NAME_BYTES_MAX)), ""),
            req("source", Enum(&["long_term"]), ""),
            opt("group_by", Arr(&GROUP_FIELD, 4), "each field once"),
            opt(
                "filters",
                Nullable(&Obj(&[opt("user_id", Id, ""), opt("namespace", Id, ""), opt("session_id", Id, ""), opt("memory_type", MEMORY_TYPE, "")], false)),
                "",
            ),
            opt("time_window_days", Nullable(&Int(1, l::SUMMARY_VIEW_WINDOW_DAYS_MAX as i64)), ""),
            opt("continuous", Nullable(&Bool), "re-run when its memories change"),
            opt("prompt", Nullable(&Str(l::SUMMARY_VIEW_PROMPT_BYTES_MAX)), "instructions for the summarizer"),
            opt("model_name", Nullable(&Id), ""),
        ],
        true,
    )),
    ok: &VIEW,
};

pub const VIEW_GET: Op = Op { route: "summary-views/{}", method: "GET", summary: "Read a summary view", path: P_VIEW, query: &[], body: None, ok: &VIEW };
pub const VIEW_DELETE: Op = Op { route: "summary-views/{}", method: "DELETE", summary: "Delete a summary view (ok whether or not it existed)", path: P_VIEW, query: &[], body: None, ok: &STATUS };

pub const VIEW_RUN: Op = Op {
    route: "summary-views/{}/run",
    method: "POST",
    summary: "Run a view over every partition now; answers the finished task (the body may be omitted)",
    path: P_VIEW,
    query: &[],
    body: Some(&Obj(&[opt("task_id", Nullable(&Id), "a client-chosen task id"), opt("force", Nullable(&Bool), "accepted; every run recomputes")], true)),
    ok: &TASK,
};

pub const VIEW_PARTITIONS: Op = Op {
    route: "summary-views/{}/partitions",
    method: "GET",
    summary: "The stored partitions whose group has these values",
    path: P_VIEW,
    query: &[opt("user_id", Id, ""), opt("namespace", Id, ""), opt("session_id", Id, ""), opt("memory_type", MEMORY_TYPE, "")],
    body: None,
    ok: &Arr(&PARTITION, l::SUMMARY_VIEW_PARTITIONS_KEPT_MAX),
};

pub const VIEW_PARTITION_RUN: Op = Op {
    route: "summary-views/{}/partitions/run",
    method: "POST",
    summary: "Summarize one partition now",
    path: P_VIEW,
    query: &[],
    body: Some(&Obj(&[req("group", Map, "exactly the view's `group_by` fields, with values")], true)),
    ok: &PARTITION,
};

pub const TASK_GET: Op = Op { route: "tasks/{}", method: "GET", summary: "Read a summary task", path: &[req("task_id", Id, "")], query: &[], body: None, ok: &TASK };
