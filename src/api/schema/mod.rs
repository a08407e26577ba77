//! One static description of every route's inputs and outputs, rendered as
//! JSON Schema (draft 2020-12) for the LLM tools, MCP's `tools/list` and the
//! OpenAPI document.
//!
//! The table is data, not derived code: `schemars` would add a visitor per
//! body to the wasm, which the size budget cannot afford. The routes keep
//! their own parsers; `schema_tests.rs` sends bodies generated from this
//! table through [`super::route`] and checks that the two agree, so the
//! description cannot drift from the validation.

mod ops;
mod ops_agents;
mod ops_ledger;
mod ops_memory;
mod ops_sessions;
#[cfg(test)]
mod tests;

pub use ops::*;
pub use ops_agents::*;
pub use ops_ledger::*;
pub use ops_memory::*;
pub use ops_sessions::*;

use serde_json::{json, Map, Value};

use crate::core::error::{Error, Result};

/// A JSON value's shape. Bounds are `limits` constants.
#[derive(Debug)]
pub enum S {
    /// A string of at most this many bytes.
    Str(usize),
    /// An id: 1 to `ID_BYTES_MAX` bytes, no `/`, control characters or `..`.
    Id,
    /// An RFC 3339 date-time string.
    DateTime,
    /// A decimal amount string such as `"12.50"`; a JSON number is refused.
    Decimal,
    /// An integer in `[min, max]`.
    Int(i64, i64),
    /// A finite number in `[min, max]`.
    Num(f64, f64),
    Bool,
    /// One of these strings.
    Enum(&'static [&'static str]),
    /// An array of at most this many items.
    Arr(&'static S, usize),
    /// An object with these fields; `true` admits other keys.
    Obj(&'static [F], bool),
    /// Any JSON object (its size is bounded by the route).
    Map,
    /// Any JSON value.
    Any,
    /// Any one of these.
    OneOf(&'static [S]),
    /// This, or `null`.
    Nullable(&'static S),
}

/// A named field of an object, path or query.
#[derive(Debug)]
pub struct F {
    pub name: &'static str,
    pub s: S,
    pub required: bool,
    pub doc: &'static str,
}

/// A required field.
pub const fn req(name: &'static str, s: S, doc: &'static str) -> F {
    F { name, s, required: true, doc }
}

/// An optional field.
pub const fn opt(name: &'static str, s: S, doc: &'static str) -> F {
    F { name, s, required: false, doc }
}

/// One operation: a method on a route of [`super::routes::ROUTES`].
#[derive(Debug)]
pub struct Op {
    /// The route's pattern after `/v1/`, as in `ROUTES`.
    pub route: &'static str,
    pub method: &'static str,
    /// One sentence for the OpenAPI summary.
    pub summary: &'static str,
    /// The `{}` segments of the pattern, in order.
    pub path: &'static [F],
    pub query: &'static [F],
    pub body: Option<&'static S>,
    /// The 200 answer.
    pub ok: &'static S,
}

impl S {
    /// The JSON Schema (2020-12) of this shape.
    pub fn json(&self) -> Value {
        match self {
            S::Str(max) => json!({ "type": "string", "maxLength": max }),
            S::Id => json!({ "type": "string", "minLength": 1, "maxLength": crate::core::limits::ID_BYTES_MAX, "pattern": "^[^/\\u0000-\\u001f\\u007f]+$" }),
            S::DateTime => json!({ "type": "string", "format": "date-time" }),
            S::Decimal => json!({ "type": "string", "pattern": "^-?[0-9]+(\\.[0-9]+)?$", "maxLength": crate::core::limits::AMOUNT_DIGITS_MAX + 2 }),
            S::Int(min, max) => json!({ "type": "integer", "minimum": min, "maximum": max }),
            S::Num(min, max) => json!({ "type": "number", "minimum": min, "maximum": max }),
            S::Bool => json!({ "type": "boolean" }),
            S::Enum(values) => json!({ "type": "string", "enum": values }),
            S::Arr(item, max) => json!({ "type": "array", "items": item.json(), "maxItems": max }),
            S::Obj(fields, additional) => object_json(fields.iter(), *additional),
            S::Map => json!({ "type": "object" }),
            S::Any => json!({}),
            S::OneOf(options) => json!({ "anyOf": options.iter().map(S::json).collect::<Vec<_>>() }),
            S::Nullable(inner) => {
                let mut v = inner.json();
                match v.get_mut("type") {
                    Some(Value::String(t)) => {
                        let t = std::mem::take(t);
                        v["type"] = json!([t, "null"]);
                        if let Some(Value::Array(e)) = v.get_mut("enum") {
                            e.push(Value::Null);
                        }
                        v
                    }
                    _ => json!({ "anyOf": [v, { "type": "null" }] }),
                }
            }
        }
    }

    /// Checks `v` against this shape; the error names the field at `path`.
    pub fn check(&self, v: &Value, path: &str) -> Result<()> {
        let bad = |why: &str| Err(Error::invalid(if path.is_empty() { "arguments" } else { path }, why.to_owned()));
        match (self, v) {
            (S::Any, _) => Ok(()),
            (S::Nullable(_), Value::Null) => Ok(()),
            (S::Nullable(inner), v) => inner.check(v, path),
            (S::Str(max), Value::String(s)) if s.len() <= *max => Ok(()),
            (S::Str(max), Value::String(s)) => Err(Error::too_large(path, s.len(), *max)),
            (S::Id, Value::String(s)) => crate::core::session::validate_id(path, s),
            (S::DateTime, Value::String(s)) => crate::core::time::parse_rfc3339(path, s).map(|_| ()),
            (S::Decimal, Value::String(s)) if is_decimal(s) => Ok(()),
            (S::Decimal, Value::Number(_)) => bad("must be a decimal string such as \"12.50\", not a JSON number"),
            (S::Decimal, _) => bad("must be a decimal string such as \"12.50\""),
            (S::Int(min, max), Value::Number(n)) => match n.as_i64() {
                Some(i) if (*min..=*max).contains(&i) => Ok(()),
                _ => bad(&format!("must be an integer from {min} to {max}")),
            },
            (S::Num(min, max), Value::Number(n)) => match n.as_f64() {
                Some(x) if x >= *min && x <= *max => Ok(()),
                _ => bad(&format!("must be a number from {min} to {max}")),
            },
            (S::Bool, Value::Bool(_)) => Ok(()),
            (S::Enum(values), Value::String(s)) if values.contains(&s.as_str()) => Ok(()),
            (S::Enum(values), _) => bad(&format!("must be one of {}", values.join(", "))),
            (S::Arr(item, max), Value::Array(a)) => {
                if a.len() > *max {
                    return Err(Error::LimitExceeded { what: format!("items in {path}"), limit: *max as u64 });
                }
                a.iter().enumerate().try_for_each(|(i, x)| item.check(x, &format!("{path}[{i}]")))
            }
            (S::Obj(fields, additional), Value::Object(o)) => check_object(fields, *additional, o, path),
            (S::Map, Value::Object(_)) => Ok(()),
            (S::OneOf(options), v) => {
                if options.iter().any(|s| s.check(v, path).is_ok()) {
                    return Ok(());
                }
                // The first option of the value's own type says best what
                // is wrong (it names the field inside an object).
                match options.iter().find(|s| s.admits_type(v)) {
                    Some(s) => s.check(v, path),
                    None => bad("matches none of the allowed shapes"),
                }
            }
            (s, _) => bad(&format!("must be {}", s.kind())),
        }
    }

    /// Whether `v` has this shape's JSON type (whatever its value).
    fn admits_type(&self, v: &Value) -> bool {
        match (self, v) {
            (S::Any, _) | (S::Nullable(_), Value::Null) => true,
            (S::Nullable(inner), v) => inner.admits_type(v),
            (S::OneOf(options), v) => options.iter().any(|s| s.admits_type(v)),
            (S::Str(_) | S::Id | S::DateTime | S::Decimal | S::Enum(_), Value::String(_)) => true,
            (S::Int(..) | S::Num(..), Value::Number(_)) => true,
            (S::Bool, Value::Bool(_)) => true,
            (S::Arr(..), Value::Array(_)) => true,
            (S::Obj(..) | S::Map, Value::Object(_)) => true,
            _ => false,
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            S::Str(_) | S::Id | S::DateTime | S::Decimal | S::Enum(_) => "a string",
            S::Int(..) => "an integer",
            S::Num(..) => "a number",
            S::Bool => "a boolean",
            S::Arr(..) => "an array",
            S::Obj(..) | S::Map => "an object",
            S::Any | S::OneOf(_) | S::Nullable(_) => "a valid value",
        }
    }
}

fn is_decimal(s: &str) -> bool {
    let digits = s.strip_prefix('-').unwrap_or(s);
    let (int, frac) = digits.split_once('.').unwrap_or((digits, "1"));
    !int.is_empty() && !frac.is_empty() && int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) && s.len() <= crate::core::limits::AMOUNT_DIGITS_MAX + 2
}

/// An object schema from fields.
pub fn object_json<'a>(fields: impl Iterator<Item = &'a F>, additional: bool) -> Value {
    let mut props = Map::new();
    let mut required = Vec::new();
    for f in fields {
        let mut s = f.s.json();
        if !f.doc.is_empty() {
            s["description"] = json!(f.doc);
        }
        props.insert(f.name.to_owned(), s);
        if f.required {
            required.push(json!(f.name));
        }
    }
    json!({ "type": "object", "properties": props, "required": required, "additionalProperties": additional })
}

/// Checks an object against fields: required ones present, known ones well
/// formed, unknown ones refused unless `additional`.
pub fn check_object(fields: &[F], additional: bool, o: &Map<String, Value>, path: &str) -> Result<()> {
    let at = |name: &str| if path.is_empty() { name.to_owned() } else { format!("{path}.{name}") };
    for f in fields {
        match o.get(f.name) {
            None if f.required => return Err(Error::invalid(at(f.name), "is required")),
            None => {}
            Some(v) => f.s.check(v, &at(f.name))?,
        }
    }
    if !additional {
        if let Some(k) = o.keys().find(|k| !fields.iter().any(|f| f.name == k.as_str())) {
            return Err(Error::invalid(at(k), "is not a known field"));
        }
    }
    Ok(())
}
