//! Where each route goes when a tenant is spread over shards (issue 21).
//!
//! Every route of [`super::routes::ROUTES`] is placed here, by its pattern
//! and method. A route this file does not place is [`Placement::NotYet`]:
//! a sharded tenant refuses it (`not_sharded`, 501) rather than answer it
//! from one shard's part of the data, so a new route is safe until someone
//! decides where it goes. An unsharded tenant never consults this.
//!
//! What lives where (docs/plans/issue-21.md §2.3): long-term records and
//! consent in their user's shard (a record without a user in its own id's),
//! sessions in their id's; the ledger, agents, services, schemas, summary
//! views (a run gathers every shard's part), tasks and episodes in the
//! tenant's home object (shard 0); the
//! settings every shard applies on write (the privacy policy, tool TTLs)
//! in every shard.

use serde_json::{json, Value};

use super::routes::Route;
use crate::core::error::{Error, Result};

/// Where a request for a sharded tenant goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// The tenant's home object (shard 0).
    Home,
    /// Every shard, the same idempotent write; home's answer is returned.
    Broadcast,
    /// The shard of the session the path names.
    Session,
    /// The shard of the user the path names.
    User,
    /// A long-term create, split by each memory's bucket; each part is
    /// atomic in its shard, the whole is not.
    Create,
    /// A long-term search: the shard(s) of the users its filter pins, else
    /// every shard as a bounded, deadlined tree.
    Search,
    /// A long-term record the path names by id, found by asking the shards.
    Record,
    /// A batch delete by ids (the query's `memory_ids`): every shard.
    DeleteIds,
    /// The list of sessions: every shard's, merged in id order.
    Sessions,
    /// A forget pinned to a user (the query's `user_id`): that user's shard.
    /// Without a user its budget and limit are tenant-wide: not yet.
    Forget,
    /// A memory prompt: its search across the shards, then the prompt in
    /// the session's shard (home without a session).
    Prompt,
    /// A prompt (`/v1/prompt`): assembled in the session's shard (home
    /// without a session), with the agent's system text read at home
    /// first when the session lives elsewhere.
    AgentPrompt,
    /// A consent revoke: every shard erases what it holds of the user (its
    /// records in its own shard, its episodes at home) and records the
    /// revoke; the counts are summed.
    Erase,
    /// A summary view's creation: at home, and when the view is
    /// continuous every shard learns that long-term changes must be told
    /// to home from now on.
    ViewCreate,
    /// The same request to every shard, the answers combined
    /// ([`combine`]): the stats summed, re-embedding's progress summed,
    /// encryption's status and rotation per shard.
    EveryShard,
    /// An export: every shard's, merged into one file
    /// ([`crate::core::engine::export_shard::merge`]).
    Export,
    /// An import: split by owner into one file per shard
    /// ([`crate::core::engine::export_shard::split`]), checked by every
    /// shard, then imported by each.
    Import,
    /// Publishing: every shard's state merged into one replica.
    Publish,
    /// Must span shards in a way not built yet: refused with `not_sharded`.
    NotYet,
}

/// Where `method` on `route` goes for a sharded tenant.
pub fn placement(route: &Route, method: &str) -> Placement {
    use Placement::*;
    let p = route.pattern;
    match (p, method) {
        ("long-term-memory" | "long-term-memory/", "POST") => Create,
        ("long-term-memory" | "long-term-memory/", "DELETE") => DeleteIds,
        ("long-term-memory/search", _) => Search,
        ("long-term-memory/forget", _) => Forget,
        ("memory/prompt", _) => Prompt,
        ("prompt", _) => AgentPrompt,
        ("long-term-memory/{}" | "long-term-memory/{}/versions" | "long-term-memory/{}/restore" | "long-term-memory/{}/redact", _) => Record,
        ("consent/{}", "GET") => User,
        // Every shard checks consent on the writes it takes (a session's
        // shard too), so every shard holds the user's consent.
        ("consent/{}", "PUT") => Broadcast,
        ("consent/{}", "DELETE") => Erase,
        ("privacy/policy" | "tool-ttls", "PUT") => Broadcast,
        ("privacy/policy" | "tool-ttls", "GET") => Home,
        ("working-memory/", _) => Sessions,
        _ if p.starts_with("working-memory/{}") => Session,
        _ if p.starts_with("ledger/") || p.starts_with("services") || p.starts_with("agents/") || p.starts_with("schemas") || p.starts_with("episodes") => Home,
        ("tools/schemas" | "tasks/{}", _) => Home,
        // Views, tasks and results live at home; a run there gathers
        // every other shard's part of the view.
        ("summary-views", "POST") => ViewCreate,
        ("summary-views" | "summary-views/{}" | "summary-views/{}/run" | "summary-views/{}/partitions" | "summary-views/{}/partitions/run", _) => Home,
        // Each shard is sealed on its own: each reports and rotates its own.
        ("stats", "GET") | ("long-term-memory/reembed", "POST") | ("encryption", "GET") | ("encryption/rotate", "POST") => EveryShard,
        ("export", "GET") => Export,
        ("import", "POST") => Import,
        // Home's log is the tenant's feed: other shards relay their events
        // into it (`worker::shard::feed`).
        ("events", "GET") => Home,
        ("snapshots/publish", "POST") => Publish,
        _ => NotYet,
    }
}

/// One answer for an [`Placement::EveryShard`] route from every shard's
/// (`answers[i]` from shard `shards[i]`; home's is shard 0's).
///
/// - `GET /v1/stats`: counts summed (sessions, long-term memories, log
///   records since the snapshots, snapshot bytes, and the object storage's
///   bytes and rows), the earliest expiry, home's log position and
///   embedder, re-embedding's staged records summed, and each shard's own
///   answer under `shards`.
/// - `POST /v1/long-term-memory/reembed`: records re-embedded and remaining
///   summed, `done` when every shard is.
/// - `GET /v1/encryption`: `encrypted` when every shard is (a key given
///   to a sharded tenant seals each shard as a request reaches it),
///   `key_id` when every shard is sealed under the same key, each
///   shard's own under `shards`.
/// - `POST /v1/encryption/rotate`: the new key and the previous one,
///   any shard's leftovers, each shard's own under `shards` (a rotation
///   that failed in one shard is finished by the same request again).
pub fn combine(pattern: &str, shards: &[crate::core::shard::ShardId], answers: &[Value]) -> Result<Value> {
    let home = shards.iter().position(|&s| s == 0).and_then(|i| answers.get(i)).ok_or_else(|| Error::Internal { detail: "home did not answer".into() })?;
    let sum = |get: &dyn Fn(&Value) -> &Value| answers.iter().map(|a| get(a).as_u64().unwrap_or(0)).fold(0u64, u64::saturating_add);
    match pattern {
        "stats" => {
            let mut out = home.clone();
            for field in ["sessions", "long_term_memories", "log_records_since_snapshot", "snapshot_bytes"] {
                out[field] = json!(sum(&|a| &a[field]));
            }
            out["next_expiry"] = json!(answers.iter().filter_map(|a| a["next_expiry"].as_u64()).min());
            let staging: Vec<&Value> = answers.iter().map(|a| &a["reembedding"]).filter(|r| !r.is_null()).collect();
            if let Some(first) = staging.first() {
                out["reembedding"] = json!({ "embedder": first["embedder"], "staged": staging.iter().map(|r| r["staged"].as_u64().unwrap_or(0)).sum::<u64>() });
            }
            if out["storage"].is_object() {
                for field in ["database_bytes", "rows_read", "rows_written", "sql_statements"] {
                    out["storage"][field] = json!(sum(&|a| &a["storage"][field]));
                }
            }
            out["shards"] = Value::Array(shards.iter().zip(answers).map(|(s, a)| json!({ "shard": s, "stats": a })).collect());
            Ok(out)
        }
        "long-term-memory/reembed" => {
            let mut out = home.clone();
            out["reembedded"] = json!(sum(&|a| &a["reembedded"]));
            out["remaining"] = json!(sum(&|a| &a["remaining"]));
            out["done"] = json!(answers.iter().all(|a| a["done"] == true));
            Ok(out)
        }
        "encryption" => {
            let mut out = home.clone();
            let sealed = answers.iter().all(|a| a["encrypted"] == true);
            let same = answers.iter().all(|a| a["key_id"] == home["key_id"]);
            out["encrypted"] = json!(sealed);
            if !(sealed && same) {
                out["key_id"] = Value::Null;
                out["algorithm"] = Value::Null;
            }
            out["shards"] = per_shard(shards, answers);
            Ok(out)
        }
        "encryption/rotate" => {
            let mut out = home.clone();
            out["leftovers"] = json!(answers.iter().any(|a| a["leftovers"] == true));
            out["shards"] = per_shard(shards, answers);
            Ok(out)
        }
        other => Err(Error::Internal { detail: format!("no combination for {other}") }),
    }
}

/// `[{shard, status}]`: each shard's own answer.
fn per_shard(shards: &[crate::core::shard::ShardId], answers: &[Value]) -> Value {
    Value::Array(shards.iter().zip(answers).map(|(s, a)| json!({ "shard": s, "status": a })).collect())
}

/// The value of the path's first `{}` (a session id, user id or record
/// id), percent-decoding left to the caller's router.
pub fn placeholder<'a>(route: &Route, path: &'a str) -> Option<&'a str> {
    let rest = path.strip_prefix("/v1/")?;
    let at = route.pattern.split('/').position(|seg| seg == "{}")?;
    rest.split('/').nth(at).filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::routes::{lookup, Match, ROUTES};

    fn place(method: &str, path: &str) -> Placement {
        match lookup(method, path) {
            Match::Found { route, .. } => placement(route, method),
            other => panic!("{method} {path}: {other:?}"),
        }
    }

    #[test]
    fn each_route_class_has_its_placement() {
        use Placement::*;
        assert_eq!(place("POST", "/v1/long-term-memory/"), Create);
        assert_eq!(place("DELETE", "/v1/long-term-memory"), DeleteIds);
        assert_eq!(place("POST", "/v1/long-term-memory/search"), Search);
        for (m, p) in [("GET", "/v1/long-term-memory/01A"), ("PATCH", "/v1/long-term-memory/01A"), ("GET", "/v1/long-term-memory/01A/versions"), ("POST", "/v1/long-term-memory/01A/restore"), ("POST", "/v1/long-term-memory/01A/redact")] {
            assert_eq!(place(m, p), Record, "{m} {p}");
        }
        for (m, p) in [("GET", "/v1/working-memory/s1"), ("PUT", "/v1/working-memory/s1"), ("DELETE", "/v1/working-memory/s1"), ("POST", "/v1/working-memory/s1/messages"), ("GET", "/v1/working-memory/s1/decisions"), ("POST", "/v1/working-memory/s1/compact")] {
            assert_eq!(place(m, p), Session, "{m} {p}");
        }
        assert_eq!(place("GET", "/v1/consent/u1"), User);
        assert_eq!(place("PUT", "/v1/consent/u1"), Broadcast);
        assert_eq!(place("DELETE", "/v1/consent/u1"), Erase);
        assert_eq!(place("PUT", "/v1/privacy/policy"), Broadcast);
        assert_eq!(place("GET", "/v1/privacy/policy"), Home);
        for (m, p) in [("POST", "/v1/ledger/transfers"), ("GET", "/v1/services"), ("PUT", "/v1/agents/a/prompt"), ("GET", "/v1/schemas/x"), ("POST", "/v1/episodes"), ("GET", "/v1/tasks/t"), ("GET", "/v1/summary-views"), ("POST", "/v1/summary-views/v/run"), ("POST", "/v1/summary-views/v/partitions/run")] {
            assert_eq!(place(m, p), Home, "{m} {p}");
        }
        assert_eq!(place("POST", "/v1/summary-views"), ViewCreate);
        assert_eq!(place("GET", "/v1/working-memory/"), Sessions);
        assert_eq!(place("POST", "/v1/memory/prompt"), Prompt);
        assert_eq!(place("POST", "/v1/prompt"), AgentPrompt);
        assert_eq!(place("GET", "/v1/encryption"), EveryShard);
        assert_eq!(place("POST", "/v1/encryption/rotate"), EveryShard);
        assert_eq!(place("POST", "/v1/long-term-memory/forget"), Forget);
        assert_eq!(place("GET", "/v1/stats"), EveryShard);
        assert_eq!(place("POST", "/v1/long-term-memory/reembed"), EveryShard);
        assert_eq!(place("GET", "/v1/export"), Export);
        assert_eq!(place("POST", "/v1/import"), Import);
        assert_eq!(place("GET", "/v1/events"), Home);
        assert_eq!(place("POST", "/v1/snapshots/publish"), Publish);
    }

    #[test]
    fn every_shards_stats_and_reembedding_progress_are_combined() {
        let a = json!({"last_seq": 9, "snapshot_gen": 2, "sessions": 3, "long_term_memories": 10, "log_records_since_snapshot": 4, "snapshot_bytes": 100, "next_expiry": 5000, "embedder": "e1", "reembedding": null, "storage": {"backend": "durable-object-sql", "database_bytes": 1000, "rows_read": 1, "rows_written": 2, "sql_statements": 3}});
        let b = json!({"last_seq": 4, "snapshot_gen": 1, "sessions": 1, "long_term_memories": 7, "log_records_since_snapshot": 1, "snapshot_bytes": 50, "next_expiry": 4000, "embedder": "e1", "reembedding": {"embedder": "e2", "staged": 3}, "storage": {"backend": "durable-object-sql", "database_bytes": 500, "rows_read": 4, "rows_written": 5, "sql_statements": 6}});
        let c = json!({"last_seq": 1, "snapshot_gen": 0, "sessions": 0, "long_term_memories": 0, "log_records_since_snapshot": 0, "snapshot_bytes": 0, "next_expiry": null, "embedder": null, "reembedding": null, "storage": {"backend": "durable-object-sql", "database_bytes": 10, "rows_read": 0, "rows_written": 0, "sql_statements": 0}});
        let got = combine("stats", &[2, 0, 5], &[b.clone(), a.clone(), c.clone()]).unwrap();
        assert_eq!((got["sessions"].as_u64(), got["long_term_memories"].as_u64(), got["log_records_since_snapshot"].as_u64(), got["snapshot_bytes"].as_u64()), (Some(4), Some(17), Some(5), Some(150)));
        assert_eq!((got["last_seq"].as_u64(), got["embedder"].as_str(), got["next_expiry"].as_u64()), (Some(9), Some("e1"), Some(4000)), "home's log and embedder, the earliest expiry");
        assert_eq!(got["reembedding"], json!({"embedder": "e2", "staged": 3}));
        assert_eq!(got["storage"], json!({"backend": "durable-object-sql", "database_bytes": 1510, "rows_read": 5, "rows_written": 7, "sql_statements": 9}));
        assert_eq!(got["shards"][1], json!({"shard": 0, "stats": a}));
        assert!(combine("stats", &[1, 2], &[b, c]).is_err(), "home must answer");
        let r = |done: bool, n: u64, left: u64| json!({"embedder": "e2", "previous": "e1", "reembedded": n, "remaining": left, "done": done});
        let got = combine("long-term-memory/reembed", &[0, 1], &[r(true, 5, 0), r(false, 200, 40)]).unwrap();
        assert_eq!(got, json!({"embedder": "e2", "previous": "e1", "reembedded": 205, "remaining": 40, "done": false}));
        assert_eq!(combine("long-term-memory/reembed", &[0, 1], &[r(true, 5, 0), r(true, 0, 0)]).unwrap()["done"], true);
    }

    #[test]
    fn encryption_is_reported_whole_only_when_every_shard_is_sealed_alike() {
        let sealed = |k: &str| json!({"encrypted": true, "key_id": k, "algorithm": "AES-256-GCM"});
        let plain = json!({"encrypted": false, "key_id": null, "algorithm": null});
        let all = combine("encryption", &[0, 1, 2], &[sealed("k1"), sealed("k1"), sealed("k1")]).unwrap();
        assert_eq!((all["encrypted"].as_bool(), all["key_id"].as_str(), all["algorithm"].as_str()), (Some(true), Some("k1"), Some("AES-256-GCM")));
        assert_eq!(all["shards"][2], json!({"shard": 2, "status": sealed("k1")}));
        let some = combine("encryption", &[0, 1], &[sealed("k1"), plain.clone()]).unwrap();
        assert_eq!((some["encrypted"].as_bool(), some["key_id"].is_null(), some["algorithm"].is_null()), (Some(false), true, true), "one plaintext shard: not encrypted");
        let mixed = combine("encryption", &[0, 1], &[sealed("k1"), sealed("k2")]).unwrap();
        assert_eq!((mixed["encrypted"].as_bool(), mixed["key_id"].is_null()), (Some(true), true), "two keys: no one key id");
        let none = combine("encryption", &[0, 1], &[plain.clone(), plain]).unwrap();
        assert_eq!(none["encrypted"], false);
        let rot = |l: bool| json!({"key_id": "k2", "previous_key_id": "k1", "leftovers": l});
        let got = combine("encryption/rotate", &[1, 0], &[rot(true), rot(false)]).unwrap();
        assert_eq!((got["key_id"].as_str(), got["previous_key_id"].as_str(), got["leftovers"].as_bool()), (Some("k2"), Some("k1"), Some(true)));
        assert_eq!(combine("encryption/rotate", &[0, 1], &[rot(false), rot(false)]).unwrap()["leftovers"], false);
        assert_eq!(got["shards"].as_array().map(Vec::len), Some(2));
    }

    #[test]
    fn every_route_and_method_is_placed_and_keyed_routes_name_their_key() {
        for route in ROUTES.iter().filter(|r| !r.worker_only) {
            for (method, _) in route.methods {
                let path = format!("/v1/{}", route.pattern.replace("{}", "key-1"));
                let p = placement(route, method);
                if matches!(p, Placement::Session | Placement::User | Placement::Record) {
                    assert_eq!(placeholder(route, &path), Some("key-1"), "{method} {path}");
                }
            }
        }
        let Match::Found { route, .. } = lookup("GET", "/v1/working-memory/s-9/decisions") else { panic!() };
        assert_eq!(placeholder(route, "/v1/working-memory/s-9/decisions"), Some("s-9"));
    }
}
