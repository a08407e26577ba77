//! Every route of the HTTP API in one table: its path pattern, its methods
//! and the scope each needs.
//!
//! The Worker answers unknown paths (404) and wrong methods (405 with an
//! `Allow` header) from it before any tenant is touched, and authorizes
//! each request by the scope it names. A native test walks the table
//! against [`super::route`], so the table cannot drift from the router.

use crate::core::auth::Scope;

use Scope::{Admin, Read, Write};

/// One path pattern: `{}` stands for any one non-empty segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    /// The path after `/v1/`.
    pub pattern: &'static str,
    /// Each method and the scope it needs.
    pub methods: &'static [(&'static str, Scope)],
    /// Answered by the Worker itself, not by [`super::route`].
    pub worker_only: bool,
}

const fn r(pattern: &'static str, methods: &'static [(&'static str, Scope)]) -> Route {
    Route { pattern, methods, worker_only: false }
}

const fn w(pattern: &'static str, methods: &'static [(&'static str, Scope)]) -> Route {
    Route { pattern, methods, worker_only: true }
}

/// The table. Searches, prompts and token counts are `POST`s that only read.
pub const ROUTES: &[Route] = &[
    r("health", &[("GET", Read)]),
    r("stats", &[("GET", Read)]),
    r("events", &[("GET", Read)]),
    // Ledger.
    r("ledger/assets", &[("POST", Write)]),
    r("ledger/accounts", &[("POST", Write)]),
    r("ledger/accounts/indices", &[("POST", Read)]),
    r("ledger/accounts/{}", &[("GET", Read)]),
    r("ledger/accounts/{}/history", &[("GET", Read)]),
    r("ledger/transfers", &[("POST", Write)]),
    r("ledger/transfers/{}", &[("GET", Read)]),
    r("ledger/transfers/{}/post", &[("POST", Write)]),
    r("ledger/transfers/{}/void", &[("POST", Write)]),
    r("ledger/reconcile", &[("POST", Read)]),
    r("ledger/intents", &[("GET", Read), ("POST", Write)]),
    r("ledger/intents/{}/complete", &[("POST", Write)]),
    // Service-state cache.
    r("services", &[("GET", Read)]),
    r("services/", &[("GET", Read)]),
    r("services/snapshot", &[("GET", Read)]),
    r("services/state", &[("DELETE", Write)]),
    r("services/{}", &[("PUT", Write)]),
    r("services/{}/state", &[("GET", Read), ("PUT", Write), ("DELETE", Write)]),
    // Episodic log.
    r("episodes", &[("GET", Read), ("POST", Write)]),
    r("episodes/", &[("GET", Read), ("POST", Write)]),
    r("episodes/summary", &[("GET", Read)]),
    r("episodes/config", &[("PUT", Write)]),
    // Long-term memory.
    r("long-term-memory", &[("POST", Write), ("DELETE", Write)]),
    r("long-term-memory/", &[("POST", Write), ("DELETE", Write)]),
    r("long-term-memory/search", &[("POST", Read)]),
    r("long-term-memory/forget", &[("POST", Write)]),
    r("long-term-memory/reembed", &[("POST", Write)]),
    r("long-term-memory/{}", &[("GET", Read), ("PATCH", Write)]),
    r("long-term-memory/{}/versions", &[("GET", Read)]),
    r("long-term-memory/{}/restore", &[("POST", Write)]),
    r("long-term-memory/{}/redact", &[("POST", Write)]),
    // Summary views and their tasks (AMS).
    r("summary-views", &[("GET", Read), ("POST", Write)]),
    r("summary-views/{}", &[("GET", Read), ("DELETE", Write)]),
    r("summary-views/{}/run", &[("POST", Write)]),
    r("summary-views/{}/partitions", &[("GET", Read)]),
    r("summary-views/{}/partitions/run", &[("POST", Write)]),
    r("tasks/{}", &[("GET", Read)]),
    // Working memory and history.
    r("working-memory/", &[("GET", Read)]),
    r("working-memory/{}", &[("GET", Read), ("PUT", Write), ("DELETE", Write)]),
    r("working-memory/{}/messages", &[("GET", Read), ("POST", Write)]),
    r("working-memory/{}/compact", &[("POST", Write)]),
    r("working-memory/{}/archive", &[("GET", Read)]),
    r("working-memory/{}/tool-cache", &[("GET", Read), ("PUT", Write), ("DELETE", Write)]),
    r("working-memory/{}/data/migrate", &[("POST", Write)]),
    r("working-memory/{}/decisions", &[("GET", Read), ("POST", Write)]),
    // Privacy: the policy is the operator's; consent is recorded by the app.
    r("privacy/policy", &[("GET", Read), ("PUT", Admin)]),
    // The whole namespace, every user's data: the operator's.
    r("export", &[("GET", Admin)]),
    r("import", &[("POST", Admin)]),
    r("consent/{}", &[("GET", Read), ("PUT", Write), ("DELETE", Write)]),
    r("tool-ttls", &[("GET", Read), ("PUT", Write)]),
    // Agents: profiles, schemas, prompts and tools.
    r("agents/{}/profile", &[("GET", Read), ("PUT", Write), ("DELETE", Write)]),
    r("agents/{}/profile/increment", &[("POST", Write)]),
    r("agents/{}/profile/migrate", &[("POST", Write)]),
    r("schemas", &[("GET", Read)]),
    r("schemas/", &[("GET", Read)]),
    r("schemas/{}", &[("GET", Read), ("PUT", Write)]),
    r("agents/{}/config", &[("GET", Read)]),
    r("agents/{}/prompt", &[("PUT", Write)]),
    r("agents/{}/prompt/rollback", &[("POST", Write)]),
    r("agents/{}/patches", &[("POST", Write), ("DELETE", Write)]),
    r("agents/{}/tools", &[("PUT", Write)]),
    // Guardrails bind the agent's own prompt changes, so its write key cannot lift them.
    r("agents/{}/guardrails", &[("PUT", Admin)]),
    r("prompt", &[("POST", Read)]),
    r("memory/prompt", &[("POST", Read)]),
    r("tools/schemas", &[("GET", Read)]),
    // Each tool then needs its own route's scope (the Worker checks it per call).
    r("tools/call", &[("POST", Read)]),
    // The Worker's own.
    w("budget/count", &[("POST", Read)]),
    w("budget/build", &[("POST", Read)]),
    w("snapshots/publish", &[("POST", Admin)]),
    w("admin/keys", &[("GET", Admin), ("POST", Admin)]),
    w("admin/shards", &[("GET", Admin)]),
    w("admin/shards/split", &[("POST", Admin)]),
    w("admin/shards/abort", &[("POST", Admin)]),
    w("admin/keys/{}", &[("GET", Admin), ("DELETE", Admin)]),
    w("admin/keys/{}/rotate", &[("POST", Admin)]),
    w("admin/keys/{}/revoke", &[("POST", Admin)]),
    w("admin/keys/{}/encryption", &[("PUT", Admin), ("DELETE", Admin)]),
    // Encryption at rest with the tenant's key (its headers carry the keys).
    w("encryption", &[("GET", Read)]),
    w("encryption/rotate", &[("POST", Admin)]),
];

/// What the table says about a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Match {
    /// A route with this method: it needs `scope`.
    Found { route: &'static Route, scope: Scope },
    /// The path exists, not with this method; `allow` lists the methods.
    MethodNotAllowed { allow: String },
    /// No route has this path.
    NotFound,
}

fn matches(pattern: &str, path: &str) -> Option<usize> {
    let (mut p, mut s) = (pattern.split('/'), path.split('/'));
    let mut literal = 0;
    loop {
        match (p.next(), s.next()) {
            (None, None) => return Some(literal),
            (Some("{}"), Some(seg)) if !seg.is_empty() => {}
            (Some(a), Some(b)) if a == b => literal += 1,
            _ => return None,
        }
    }
}

/// Looks a request up. `path` is the full path (`/v1/...`); a literal
/// segment beats a placeholder (`long-term-memory/search` over `{}`).
pub fn lookup(method: &str, path: &str) -> Match {
    let Some(rest) = path.strip_prefix("/v1/") else { return Match::NotFound };
    let best = ROUTES.iter().filter_map(|r| matches(r.pattern, rest).map(|n| (n, r))).max_by_key(|(n, _)| *n);
    let Some((_, route)) = best else { return Match::NotFound };
    match route.methods.iter().find(|(m, _)| *m == method) {
        Some((_, scope)) => Match::Found { route, scope: *scope },
        None => Match::MethodNotAllowed { allow: allow(route) },
    }
}

/// The `Allow` header of a route (with `OPTIONS`, which CORS answers).
pub fn allow(route: &Route) -> String {
    let mut v: Vec<&str> = route.methods.iter().map(|(m, _)| *m).collect();
    v.push("OPTIONS");
    v.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::services::Offline;
    use crate::api::{handle, Ctx, Request};
    use crate::store::{now_or_never, MemoryBackend, Store, StoreConfig};

    #[test]
    fn literals_beat_placeholders_and_methods_are_listed() {
        assert!(matches!(lookup("POST", "/v1/long-term-memory/search"), Match::Found { scope: Scope::Read, .. }));
        assert!(matches!(lookup("GET", "/v1/long-term-memory/01ABC"), Match::Found { scope: Scope::Read, .. }));
        assert!(matches!(lookup("PATCH", "/v1/long-term-memory/01ABC"), Match::Found { scope: Scope::Write, .. }));
        assert_eq!(lookup("PUT", "/v1/long-term-memory/search"), Match::MethodNotAllowed { allow: "POST, OPTIONS".into() });
        assert_eq!(lookup("GET", "/v1/nope"), Match::NotFound);
        assert_eq!(lookup("GET", "/v1/working-memory/a/b/c/d"), Match::NotFound);
        assert_eq!(lookup("GET", "/v2/health"), Match::NotFound);
        assert!(matches!(lookup("POST", "/v1/admin/keys/0123/rotate"), Match::Found { scope: Scope::Admin, .. }));
    }

    /// Every method the table lists reaches a handler of the router, and
    /// every other method is refused by it: the table and the router agree.
    #[test]
    fn the_table_agrees_with_the_router() {
        let store = now_or_never(Store::open(MemoryBackend::new(), StoreConfig::default())).unwrap().unwrap();
        let services = Offline;
        let mut rand = || [7u8; 10];
        for route in ROUTES.iter().filter(|r| !r.worker_only) {
            let path = format!("/v1/{}", route.pattern.replace("{}", "x1"));
            for method in ["GET", "POST", "PUT", "PATCH", "DELETE"] {
                let req = Request { method, path: &path, query: Vec::new(), body: b"{}" };
                let mut ctx = Ctx::new(1_000, &mut rand, None, 1 << 20, &services);
                let resp = now_or_never(handle(&store, &req, &mut ctx)).expect("in-memory");
                let route_missing = resp.status == 404 && resp.body["detail"].as_str().is_some_and(|d| d.starts_with("route not found"));
                let listed = route.methods.iter().any(|(m, _)| *m == method);
                if listed {
                    assert!(resp.status != 405 && !route_missing, "{method} {path} is in the table but the router answers {resp:?}");
                } else {
                    // Not always 405: a placeholder route the literal shadows
                    // may answer (`GET ledger/accounts/indices` reads an
                    // account named "indices" and finds none). The Worker
                    // answers 405 from the table; the router must not serve it.
                    assert!(resp.status >= 400, "{method} {path} is not in the table but the router serves it: {}", resp.status);
                }
            }
        }
    }
}
