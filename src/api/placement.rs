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
//! views, tasks and episodes in the tenant's home object (shard 0); the
//! settings every shard applies on write (the privacy policy, tool TTLs)
//! in every shard.

use super::routes::Route;

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
    /// A consent revoke: every shard erases what it holds of the user (its
    /// records in its own shard, its episodes at home) and records the
    /// revoke; the counts are summed.
    Erase,
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
        // Definitions live at home; a run pages records from every shard.
        ("summary-views" | "summary-views/{}", _) => Home,
        ("summary-views/{}/partitions", _) => Home,
        // Tenant-wide reads and writes that need an orchestrator: stats,
        // the change feed, re-embedding, export and import, erasure,
        // summary runs, encryption status and rotation, publishing.
        _ => NotYet,
    }
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
        for (m, p) in [("POST", "/v1/ledger/transfers"), ("GET", "/v1/services"), ("PUT", "/v1/agents/a/prompt"), ("GET", "/v1/schemas/x"), ("POST", "/v1/episodes"), ("GET", "/v1/tasks/t"), ("POST", "/v1/summary-views")] {
            assert_eq!(place(m, p), Home, "{m} {p}");
        }
        assert_eq!(place("GET", "/v1/working-memory/"), Sessions);
        assert_eq!(place("POST", "/v1/memory/prompt"), Prompt);
        assert_eq!(place("POST", "/v1/long-term-memory/forget"), Forget);
        for (m, p) in [("POST", "/v1/prompt"), ("GET", "/v1/export"), ("GET", "/v1/stats"), ("GET", "/v1/events"), ("POST", "/v1/summary-views/v/run"), ("POST", "/v1/long-term-memory/reembed")] {
            assert_eq!(place(m, p), NotYet, "{m} {p}");
        }
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
