//! The drift tests: the schema table against the route table and against
//! the routes' own parsers.
//!
//! For every operation with a body, bodies generated from its schema go
//! through [`crate::api::handle`] on an in-memory store: the minimal and the
//! maximal valid body must not be refused as malformed (400/422), and a
//! wrong type, an unknown sibling (where the schema says `additional:
//! false`) and one item past an array bound must be refused by both
//! [`S::check`] and the route, each naming the field.

use serde_json::{json, Map, Value};

use super::*;
use crate::api::routes::ROUTES;
use crate::api::tests::TestServices;
use crate::api::{handle, Ctx, Request, Response};
use crate::store::{now_or_never, MemoryBackend, Store, StoreConfig};

const NOW: u64 = 1_750_000_000_000;

/// A sample value for a field, where the shape alone does not give a
/// valid one (a model must be in the table, a role must be a role).
fn sample_for(op: &Op, name: &str, s: &S, all: bool) -> Option<Value> {
    Some(match (op.route, name) {
        ("schemas/{}", "version") => json!(if all { 2 } else { 1 }),
        ("working-memory/{}/compact", "context_window_max") => json!(4096),
        ("working-memory/{}/compact", "summarize_at_tokens") => json!(2000),
        ("working-memory/{}/compact", "keep_recent_tokens") => json!(500),
        ("working-memory/{}/compact", "summary_tokens_max") => json!(200),
        (_, "role") => json!("user"),
        (_, "model_name" | "model") => json!("gpt-5"),
        ("admin/keys", "expires_at") => json!("2099-01-01T00:00:00Z"),
        ("tools/call", "name") => json!("get_current_datetime"),
        // The tool's own schema governs its arguments; this one takes none.
        ("tools/call", "arguments") => json!({}),
        ("tools/call", "result_tokens_max") => json!(4000),
        ("tool-ttls", "ttls") => json!({ "s1": 60 }),
        ("prompt", "window_tokens") => json!(4096),
        (_, "long_term_memory_strategy") => json!({ "strategy": "discrete", "config": {} }),
        ("long-term-memory/search", "tz") => json!("+01:00"),
        // Every field at once must not contradict itself: as_of with the defaults.
        ("long-term-memory/search", "latest_only") => json!(true),
        ("long-term-memory/search", "include_superseded") => json!(false),
        _ => return matches!(s, S::Any).then(|| json!({ "k": "v" })),
    })
}

/// A valid body of `op`: required fields only, or every field.
fn body_sample(op: &Op, all: bool) -> Value {
    let body = op.body.expect("a body");
    let mut v = sample(op, body, all);
    if let (Some(o), S::Obj(fields, _)) = (v.as_object_mut(), body) {
        if o.is_empty() && BODY_NONEMPTY.contains(&(op.route, op.method)) {
            o.insert(fields[0].name.to_owned(), sample(op, &fields[0].s, all));
        }
    }
    v
}

/// A valid value of `s`: required fields only, or every field.
fn sample(op: &Op, s: &S, all: bool) -> Value {
    match s {
        S::Str(_) | S::Id => json!("s1"),
        S::DateTime => json!("2025-01-01T00:00:00Z"),
        S::Decimal => json!("1.50"),
        S::Int(min, max) => json!(1.clamp(*min, *max)),
        S::Num(min, max) => json!(0.5f64.clamp(*min, *max)),
        S::Bool => json!(true),
        S::Enum(v) => json!(v[0]),
        S::Arr(item, _) => json!([sample(op, item, all)]),
        S::Obj(fields, _) => {
            let mut o = Map::new();
            for f in fields.iter() {
                if !(f.required || (all && !excluded(f.name, &o))) {
                    continue;
                }
                o.insert(f.name.to_owned(), sample_for(op, f.name, &f.s, all).unwrap_or_else(|| sample(op, &f.s, all)));
            }
            Value::Object(o)
        }
        S::Map => json!({ "k": "v" }),
        S::Any => json!({ "k": "v" }),
        S::OneOf(options) => sample(op, &options[0], all),
        S::Nullable(inner) => sample(op, inner, all),
    }
}

/// Whether an optional field must stay out of a maximal object, given the
/// fields already in it: the filters' operators exclude one another, as
/// their docs say.
fn excluded(name: &str, o: &Map<String, Value>) -> bool {
    let has = |k: &str| o.contains_key(k);
    match name {
        "ne" => has("eq"),
        "all" => has("any"),
        "startswith" => !o.is_empty(),
        "between" => ["eq", "ne", "gt", "gte", "lt", "lte"].iter().any(|k| has(k)),
        "inclusive" => !has("between"),
        "namespace_prefix" => has("namespace"),
        _ => false,
    }
}

/// A value of the wrong JSON type for `s`, if there is one.
fn wrong(s: &S) -> Option<Value> {
    [json!(12345), json!("x"), json!(true), json!([]), json!({})].into_iter().find(|v| !s.admits_type(v) && !v.is_null())
}

/// One step into a body: an object key or an array index.
#[derive(Clone, Debug)]
enum Step {
    Key(&'static str),
    Index,
}

fn at<'a>(v: &'a mut Value, path: &[Step]) -> &'a mut Value {
    path.iter().fold(v, |v, step| match step {
        Step::Key(k) => &mut v[*k],
        Step::Index => &mut v[0],
    })
}

fn name(path: &[Step]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            Step::Key(k) if out.is_empty() => out.push_str(k),
            Step::Key(k) => out.push_str(&format!(".{k}")),
            Step::Index => out.push_str("[0]"),
        }
    }
    out
}

/// Every field path of the maximal body with its shape: object fields,
/// and the fields of an array's first item.
fn walk(s: &'static S, path: Vec<Step>, out: &mut Vec<(Vec<Step>, &'static S)>) {
    match s {
        S::Obj(fields, _) => {
            for f in fields.iter() {
                let mut p = path.clone();
                p.push(Step::Key(f.name));
                out.push((p.clone(), &f.s));
                walk(&f.s, p, out);
            }
        }
        S::Arr(item, _) => {
            let mut p = path.clone();
            p.push(Step::Index);
            walk(item, p, out);
        }
        S::Nullable(inner) => walk(inner, path, out),
        S::OneOf(options) => walk(&options[0], path, out),
        _ => {}
    }
}

/// The shape objects are checked by (the first option of a `OneOf`).
fn object_of(s: &'static S) -> Option<(&'static [F], bool)> {
    match s {
        S::Obj(fields, additional) => Some((fields, *additional)),
        S::Nullable(inner) => object_of(inner),
        S::OneOf(options) => object_of(&options[0]),
        _ => None,
    }
}

fn is_worker_only(op: &Op) -> bool {
    ROUTES.iter().any(|r| r.worker_only && r.pattern == op.route)
}

struct Api {
    store: Store<MemoryBackend>,
    services: TestServices,
}

impl Api {
    /// A store with something behind the sample ids: session `s1`, asset
    /// and account `s1`, memory `s1`, service `s1`, agent `s1`.
    fn new() -> Api {
        let api = Api { store: now_or_never(Store::open(MemoryBackend::new(), StoreConfig::default())).unwrap().unwrap(), services: TestServices::default() };
        for (method, path, body) in [
            ("PUT", "/v1/working-memory/s1", json!({ "messages": [{ "role": "user", "content": "hello there" }] })),
            ("POST", "/v1/ledger/assets", json!({ "code": "s1", "scale": 2 })),
            ("POST", "/v1/ledger/accounts", json!({ "id": "s1", "asset": "s1" })),
            ("POST", "/v1/ledger/accounts", json!({ "id": "s2", "asset": "s1" })),
            ("POST", "/v1/long-term-memory", json!({ "memories": [{ "id": "s1", "text": "the user likes tea" }] })),
            ("PUT", "/v1/services/s1", json!({ "ttl_seconds": 60 })),
            ("PUT", "/v1/agents/s1/prompt", json!({ "text": "You are helpful." })),
            ("PUT", "/v1/agents/s1/profile", json!({ "fields": { "s1": 1 } })),
        ] {
            let r = api.call(method, path, Vec::new(), body.to_string().as_bytes());
            assert_eq!(r.status, 200, "fixture {method} {path}: {r:?}");
        }
        api
    }

    fn call(&self, method: &str, path: &str, query: Vec<(String, String)>, body: &[u8]) -> Response {
        // Distinct ids across calls: a fixture's turn and a test's must differ.
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let mut rand = || {
            let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed).to_be_bytes();
            [0, 0, n[0], n[1], n[2], n[3], n[4], n[5], n[6], n[7]]
        };
        let req = Request { method, path, query, body };
        let mut ctx = Ctx::new(NOW, &mut rand, None, 8 << 20, &self.services);
        now_or_never(handle(&self.store, &req, &mut ctx)).expect("in-memory")
    }

    /// Calls `op` on a fresh copy of the fixtures, with sample path and
    /// required query values and `body`.
    fn op(&self, op: &Op, body: &[u8]) -> Response {
        Api::new().op_here(op, body)
    }

    fn op_here(&self, op: &Op, body: &[u8]) -> Response {
        let mut path = format!("/v1/{}", op.route);
        for f in op.path {
            let v = sample_for(op, f.name, &f.s, false).unwrap_or_else(|| sample(op, &f.s, false));
            path = path.replacen("{}", v.as_str().unwrap(), 1);
        }
        let query = op
            .query
            .iter()
            .filter(|f| f.required || f.name == "agent_id")
            .map(|f| {
                let v = sample(op, &f.s, false);
                (f.name.to_owned(), v.as_str().map_or_else(|| v.to_string(), str::to_owned))
            })
            .collect();
        self.call(op.method, &path, query, body)
    }
}

/// Refused for the shape or value of the input (not for the state of the
/// store: a missing entity, a rule, a conflict).
fn refused_as_malformed(r: &Response) -> bool {
    matches!(r.body["code"].as_str(), Some("invalid_json" | "invalid_input" | "invalid_query" | "unknown_kind" | "limit_exceeded" | "payload_too_large"))
}

#[test]
fn ops_and_routes_match_one_to_one() {
    let mut listed: Vec<(&str, &str)> = ROUTES.iter().flat_map(|r| r.methods.iter().map(move |(m, _)| (r.pattern, *m))).collect();
    let mut ops: Vec<(&str, &str)> = OPS.iter().map(|o| (o.route, o.method)).collect();
    listed.sort_unstable();
    ops.sort_unstable();
    let n = ops.len();
    ops.dedup();
    assert_eq!(n, ops.len(), "an operation is listed twice in OPS");
    let missing: Vec<_> = listed.iter().filter(|r| !ops.contains(r)).collect();
    let extra: Vec<_> = ops.iter().filter(|o| !listed.contains(o)).collect();
    assert!(missing.is_empty() && extra.is_empty(), "routes without an op: {missing:?}; ops without a route: {extra:?}");
    for op in OPS {
        assert_eq!(op.route.matches("{}").count(), op.path.len(), "{} {}: one path field per {{}}", op.method, op.route);
        assert!(!op.summary.is_empty());
    }
    for (route, method) in BODY_OPTIONAL {
        assert!(op(route, method).is_some_and(|o| o.body.is_some()), "{method} {route} in BODY_OPTIONAL has no body");
    }
}

#[test]
fn valid_bodies_are_accepted() {
    let api = Api::new();
    let mut failures = Vec::new();
    for op in OPS.iter().filter(|o| !is_worker_only(o)) {
        let Some(body) = op.body else { continue };
        for all in [false, true] {
            let v = body_sample(op, all);
            if let Err(e) = body.check(&v, "") {
                failures.push(format!("{} {}: the sample {} fails its own schema: {e}", op.method, op.route, short(&v)));
            }
            let r = api.op(op, v.to_string().as_bytes());
            if refused_as_malformed(&r) {
                failures.push(format!("{} {} refuses the {} valid body {}: {} {}", op.method, op.route, if all { "maximal" } else { "minimal" }, short(&v), r.status, short(&r.body)));
            }
        }
    }
    report(failures);
}

#[test]
fn optional_bodies_are_the_ones_listed() {
    let api = Api::new();
    let mut failures = Vec::new();
    for op in OPS.iter().filter(|o| !is_worker_only(o) && o.body.is_some()) {
        let r = api.op(op, b"");
        let listed = BODY_OPTIONAL.contains(&(op.route, op.method));
        if listed && refused_as_malformed(&r) {
            failures.push(format!("{} {} is listed as taking no body but refuses an empty one: {} {}", op.method, op.route, r.status, r.body));
        } else if !listed && !refused_as_malformed(&r) {
            failures.push(format!("{} {} takes an empty body; list it in BODY_OPTIONAL: {} {}", op.method, op.route, r.status, r.body));
        }
    }
    report(failures);
}

#[test]
fn nonempty_bodies_refuse_an_empty_object() {
    let api = Api::new();
    for (route, method) in BODY_NONEMPTY {
        let op = op(route, method).expect("an op");
        let r = api.op(op, b"{}");
        assert!(refused_as_malformed(&r), "{method} {route} accepts {{}}: {r:?}");
        assert!(op.body.unwrap().check(&json!({}), "").is_ok(), "the schema alone cannot say minProperties; the OpenAPI document adds it");
    }
}

#[test]
fn bodies_without_a_schema_are_ignored() {
    // Routes without a body in the table must not read one.
    let api = Api::new();
    let mut failures = Vec::new();
    for op in OPS.iter().filter(|o| !is_worker_only(o) && o.body.is_none() && o.method != "GET" && !BODY_NDJSON.contains(&(o.route, o.method))) {
        let r = api.op(op, b"{\"unexpected\": 1}");
        if refused_as_malformed(&r) {
            failures.push(format!("{} {} reads a body the table does not describe: {} {}", op.method, op.route, r.status, r.body));
        }
    }
    report(failures);
}

/// Checks both the schema and the route refuse `v`, naming `field`; a
/// failure is pushed to `failures`.
fn refused(api: &Api, op: &Op, body: &S, v: &Value, field: &str, what: &str, failures: &mut Vec<String>) {
    let leaf = field.rsplit(['.', '[']).find(|p| !p.is_empty() && !p.ends_with(']')).unwrap_or(field);
    match body.check(v, "") {
        Ok(()) => failures.push(format!("{} {}: the schema accepts {what} at {field}: {}", op.method, op.route, short(v))),
        Err(e) if !e.to_string().contains(leaf) => failures.push(format!("{} {}: the schema's error for {what} at {field} does not name it: {e}", op.method, op.route)),
        Err(_) => {}
    }
    let r = api.op(op, v.to_string().as_bytes());
    let detail = r.body["detail"].as_str().unwrap_or("");
    if !matches!(r.status, 400 | 413 | 422) {
        failures.push(format!("{} {}: the route accepts {what} at {field}: {} -> {} {}", op.method, op.route, short(v), r.status, r.body));
    } else if !detail.contains(leaf) {
        failures.push(format!("{} {}: the route's error for {what} at {field} does not name it: {detail}", op.method, op.route));
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 300 {
        format!("{}…", &s[..300])
    } else {
        s
    }
}

fn report(failures: Vec<String>) {
    assert!(failures.is_empty(), "{} disagreements:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn wrong_types_are_refused_by_both() {
    let api = Api::new();
    let mut failures = Vec::new();
    for op in OPS.iter().filter(|o| !is_worker_only(o)) {
        let Some(body) = op.body else { continue };
        let mut fields = Vec::new();
        walk(body, Vec::new(), &mut fields);
        for (path, s) in fields {
            let Some(bad) = wrong(s) else { continue };
            let mut v = body_sample(op, true);
            *at(&mut v, &path) = bad;
            refused(&api, op, body, &v, &name(&path), "a wrong type", &mut failures);
        }
    }
    report(failures);
}

#[test]
fn unknown_fields_are_refused_where_the_schema_says_so() {
    let api = Api::new();
    let mut failures = Vec::new();
    for op in OPS.iter().filter(|o| !is_worker_only(o)) {
        let Some(body) = op.body else { continue };
        let mut objects = vec![(Vec::new(), body)];
        let mut fields = Vec::new();
        walk(body, Vec::new(), &mut fields);
        objects.extend(fields.into_iter().filter(|(_, s)| object_of(s).is_some()));
        for (path, s) in objects {
            let Some((_, false)) = object_of(s) else { continue };
            let mut v = body_sample(op, true);
            at(&mut v, &path)["zz_unknown"] = json!(1);
            let mut p = path.clone();
            p.push(Step::Key("zz_unknown"));
            refused(&api, op, body, &v, &name(&p), "an unknown field", &mut failures);
        }
    }
    report(failures);
}

#[test]
fn lenient_objects_accept_unknown_fields() {
    // `additional: true` must be true of the route too: AMS's clients send
    // model fields edgemem ignores.
    let api = Api::new();
    let mut failures = Vec::new();
    for op in OPS.iter().filter(|o| !is_worker_only(o)) {
        let Some(body) = op.body else { continue };
        let Some((_, true)) = object_of(body) else { continue };
        let mut v = body_sample(op, true);
        v["zz_unknown"] = json!(1);
        let r = api.op(op, v.to_string().as_bytes());
        if refused_as_malformed(&r) {
            failures.push(format!("{} {}: the schema admits unknown fields but the route refuses them: {} {}", op.method, op.route, r.status, r.body));
        }
    }
    report(failures);
}

/// Arrays of at most this many items are tested one past their bound;
/// larger bounds are nominal (the body cap binds first).
const TESTED_BOUND_MAX: usize = 20_000;

#[test]
fn arrays_one_past_their_bound_are_refused_by_both() {
    let api = Api::new();
    let mut failures = Vec::new();
    for op in OPS.iter().filter(|o| !is_worker_only(o)) {
        let Some(body) = op.body else { continue };
        let mut fields = Vec::new();
        walk(body, Vec::new(), &mut fields);
        for (path, s) in fields {
            let (item, max) = match s {
                S::Arr(item, max) | S::Nullable(S::Arr(item, max)) => (*item, *max),
                _ => continue,
            };
            // A set of enum values cannot pass its bound without a repeat,
            // which is a different rule.
            if max > TESTED_BOUND_MAX || matches!(item, S::Enum(_)) {
                continue;
            }
            let mut v = body_sample(op, true);
            let one = sample(op, item, true);
            // Distinct items, so the bound is what is tested, not a repeat.
            let items: Vec<Value> = (0..=max)
                .map(|i| match &one {
                    Value::String(_) => json!(format!("s{i}")),
                    Value::Object(o) if o.contains_key("id") => {
                        let mut o: Map<String, Value> = o.clone();
                        o["id"] = json!(format!("s{i}"));
                        Value::Object(o)
                    }
                    other => other.clone(),
                })
                .collect();
            *at(&mut v, &path) = Value::Array(items);
            refused(&api, op, body, &v, &name(&path), "one item past the bound", &mut failures);
        }
    }
    report(failures);
}

/// The Worker's own bodies, through the parsers the Worker runs (natively;
/// `budget/count`'s parser lives in the Worker, so it is not covered).
#[test]
fn worker_bodies_agree_with_their_parsers() {
    type Parse = fn(&[u8]) -> crate::core::error::Result<()>;
    let parsers: [(&Op, Parse); 2] = [
        (&BUDGET_BUILD, |b| crate::api::budget::BuildBody::parse(b).map(drop)),
        (&KEYS_POST, |b| crate::core::auth::KeyRequest::parse(b, NOW).map(drop)),
    ];
    let mut failures = Vec::new();
    for (op, parse) in parsers {
        let body = op.body.expect("a body");
        let code = |v: &Value| parse(v.to_string().as_bytes()).err().map(|e| (e.code(), e.to_string()));
        // A window (or a coverage) is required in practice: the maximal body has one.
        let v = body_sample(op, true);
        if let Some((c, d)) = code(&v) {
            failures.push(format!("{} {} refuses the maximal valid body {}: {c} {d}", op.method, op.route, short(&v)));
        }
        let mut fields = Vec::new();
        walk(body, Vec::new(), &mut fields);
        for (path, s) in fields {
            let Some(bad) = wrong(s) else { continue };
            let mut v = body_sample(op, true);
            *at(&mut v, &path) = bad;
            let field = name(&path);
            let leaf = field.rsplit(['.', '[']).find(|p| !p.is_empty() && !p.ends_with(']')).unwrap_or(&field).to_owned();
            match code(&v) {
                None => failures.push(format!("{} {}: the parser accepts a wrong type at {field}", op.method, op.route)),
                Some((_, d)) if !d.contains(&leaf) => failures.push(format!("{} {}: the parser's error for {field} does not name it: {d}", op.method, op.route)),
                Some(_) => {}
            }
        }
        let mut v = body_sample(op, true);
        v["zz_unknown"] = json!(1);
        if code(&v).is_none() {
            failures.push(format!("{} {}: the parser accepts an unknown field", op.method, op.route));
        }
    }
    report(failures);
}
