//! AMS's search filters (agent_memory_server/filters.py), parsed from the
//! JSON of a search request and evaluated against a [`MemoryRecord`].
//!
//! Operator names are the server's (`eq`, `ne`, `any`, `all`, `startswith`;
//! `gt`, `lt`, `gte`, `lte`, `eq`, `ne`, `between` + `inclusive` for times)
//! and the official client's, which it sends verbatim from its own filter
//! models (`in_` = `any`, `not_eq` = `ne`, `not_in` and `none` = none of).
//! An unknown operator is refused rather than ignored, since ignoring a
//! filter widens a search.
//!
//! Semantics, where the AMS Redis backend differs:
//! - Every operator present must hold (AMS's `to_filter` silently uses only
//!   the first of `startswith`, `eq`, `ne`, `any`, `all`).
//! - `all` means every listed value is present. AMS turns `all` into the
//!   same Redis tag union as `any`.
//! - Identifiers (`session_id`, `user_id`, `namespace`,
//!   `extraction_strategy`) match exactly. Redis tags are case-insensitive,
//!   which for ids would let `Alice` see `alice`'s memories; topics and
//!   entities, which are free text, do match case-insensitively as in AMS.
//! - Times compare to the millisecond; AMS truncates the bounds to whole
//!   seconds.

use serde_json::{Map, Value};

use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::retrieval::record::{MemoryRecord, MemoryType};
use crate::core::time::{parse_rfc3339, Millis, MILLIS_MAX};

/// A filter on a string tag: a scalar field (`session_id`, ...) is the set of
/// its value, or the empty set when absent.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TagFilter {
    pub eq: Option<String>,
    pub ne: Option<String>,
    pub any: Option<Vec<String>>,
    pub all: Option<Vec<String>>,
    pub none: Option<Vec<String>>,
    pub startswith: Option<String>,
    /// Topics and entities compare case-insensitively, identifiers exactly.
    pub case_insensitive: bool,
}

/// A filter on `memory_type`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TypeFilter {
    pub eq: Option<MemoryType>,
    pub ne: Option<MemoryType>,
    pub any: Option<Vec<MemoryType>>,
    pub all: Option<Vec<MemoryType>>,
    pub none: Option<Vec<MemoryType>>,
}

/// Which ends of `between` are included (redisvl's `inclusive`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Inclusive {
    #[default]
    Both,
    Neither,
    Left,
    Right,
}

/// A filter on a time field.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TimeFilter {
    pub gt: Option<Millis>,
    pub lt: Option<Millis>,
    pub gte: Option<Millis>,
    pub lte: Option<Millis>,
    pub eq: Option<Millis>,
    pub ne: Option<Millis>,
    pub between: Option<(Millis, Millis)>,
    pub inclusive: Inclusive,
}

/// All the filters of one search; a record must pass every one present.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Filter {
    pub session_id: Option<TagFilter>,
    pub user_id: Option<TagFilter>,
    pub namespace: Option<TagFilter>,
    pub topics: Option<TagFilter>,
    pub entities: Option<TagFilter>,
    pub extraction_strategy: Option<TagFilter>,
    pub memory_type: Option<TypeFilter>,
    pub created_at: Option<TimeFilter>,
    pub last_accessed: Option<TimeFilter>,
    pub event_date: Option<TimeFilter>,
    /// An edgemem extension: who said a dialog turn, read from the record's
    /// `metadata.speaker` (a string; a record without one fails the filter).
    pub speaker: Option<TagFilter>,
    /// An edgemem extension: the record's `fact_key` (issue 20); a record
    /// without one fails an `eq`.
    pub fact_key: Option<TagFilter>,
}

/// The request keys [`Filter::from_request`] reads.
pub const FILTER_KEYS: [&str; 13] = [
    "session_id",
    "user_id",
    "namespace",
    "topics",
    "entities",
    "extraction_strategy",
    "memory_type",
    "created_at",
    "last_accessed",
    "event_date",
    "event_at",
    "speaker",
    "fact_key",
];

impl Filter {
    /// Reads the filter keys of a search request body (other keys are left
    /// to the caller); `null` or absent means no filter on that field.
    pub fn from_request(body: &Map<String, Value>) -> Result<Filter> {
        let tag = |name: &str, ci: bool| -> Result<Option<TagFilter>> {
            match body.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => TagFilter::parse(name, v, ci).map(Some),
            }
        };
        let time = |name: &str| -> Result<Option<TimeFilter>> {
            match body.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => TimeFilter::parse(name, v).map(Some),
            }
        };
        Ok(Filter {
            session_id: tag("session_id", false)?,
            user_id: tag("user_id", false)?,
            namespace: tag("namespace", false)?,
            topics: tag("topics", true)?,
            entities: tag("entities", true)?,
            extraction_strategy: tag("extraction_strategy", false)?,
            memory_type: match body.get("memory_type") {
                None | Some(Value::Null) => None,
                Some(v) => Some(TypeFilter::parse("memory_type", v)?),
            },
            created_at: time("created_at")?,
            last_accessed: time("last_accessed")?,
            // `event_at` is issue 19's name for AMS's `event_date`.
            event_date: match (time("event_date")?, time("event_at")?) {
                (Some(d), Some(a)) if d != a => return Err(Error::invalid("event_at", "differs from event_date (they name the same field)")),
                (d, a) => d.or(a),
            },
            speaker: tag("speaker", false)?,
            fact_key: tag("fact_key", false)?,
        })
    }

    /// The request names of the fields filtered, in [`FILTER_KEYS`] order
    /// (`event_at` reads as `event_date`).
    pub fn names(&self) -> Vec<&'static str> {
        let set = [
            self.session_id.is_some(),
            self.user_id.is_some(),
            self.namespace.is_some(),
            self.topics.is_some(),
            self.entities.is_some(),
            self.extraction_strategy.is_some(),
            self.memory_type.is_some(),
            self.created_at.is_some(),
            self.last_accessed.is_some(),
            self.event_date.is_some(),
            false,
            self.speaker.is_some(),
            self.fact_key.is_some(),
        ];
        FILTER_KEYS.iter().zip(set).filter(|(_, on)| *on).map(|(k, _)| *k).collect()
    }

    /// Whether no field is filtered.
    pub fn is_empty(&self) -> bool {
        *self == Filter::default()
    }

    /// Whether `r` passes every filter present.
    pub fn matches(&self, r: &MemoryRecord) -> bool {
        let tag = |f: &Option<TagFilter>, v: &[String]| f.as_ref().is_none_or(|f| f.matches(v));
        let time = |f: &Option<TimeFilter>, v: Option<Millis>| f.as_ref().is_none_or(|f| f.matches(v));
        tag(&self.session_id, r.session_id.as_slice())
            && tag(&self.user_id, r.user_id.as_slice())
            && tag(&self.namespace, r.namespace.as_slice())
            && tag(&self.topics, &r.topics)
            && tag(&self.entities, &r.entities)
            && tag(&self.extraction_strategy, std::slice::from_ref(&r.extraction_strategy))
            && self.memory_type.as_ref().is_none_or(|f| f.matches(r.memory_type))
            && time(&self.created_at, Some(r.created_at))
            && time(&self.last_accessed, Some(r.last_accessed))
            && time(&self.event_date, r.event_date)
            && self.speaker.as_ref().is_none_or(|f| match r.metadata.get("speaker").and_then(Value::as_str) {
                Some(s) => f.matches(std::slice::from_ref(&s.to_owned())),
                None => f.matches(&[]),
            })
            && tag(&self.fact_key, r.fact_key.as_slice())
    }
}

/// The operators of one filter object, each under its canonical name, with
/// the client's aliases folded in and unknown names refused.
fn operators<'a>(field: &str, v: &'a Value, allowed: &[&str]) -> Result<Vec<(&'static str, &'a Value)>> {
    let Value::Object(obj) = v else {
        return Err(Error::invalid(field, "must be an object of operators, such as {\"eq\": ...}"));
    };
    let mut out: Vec<(&'static str, &'a Value)> = Vec::new();
    for (k, v) in obj {
        let canonical: &'static str = match k.as_str() {
            "eq" => "eq",
            "ne" | "not_eq" => "ne",
            "any" | "in_" => "any",
            "all" => "all",
            "none" | "not_in" => "none",
            "startswith" => "startswith",
            "gt" => "gt",
            "lt" => "lt",
            "gte" => "gte",
            "lte" => "lte",
            "between" => "between",
            "inclusive" => "inclusive",
            // AMS's filter models carry their own field name.
            "field" if v.as_str() == Some(field) => continue,
            _ => return Err(Error::invalid(field, format!("unknown filter operator {k:?}"))),
        };
        if !allowed.contains(&canonical) {
            return Err(Error::invalid(field, format!("operator {k:?} does not apply to {field}")));
        }
        if v.is_null() {
            continue;
        }
        if out.iter().any(|(c, _)| *c == canonical) {
            return Err(Error::invalid(field, format!("operator {canonical:?} given twice (under an alias)")));
        }
        out.push((canonical, v));
    }
    if out.is_empty() {
        return Err(Error::invalid(field, "no filter operator given"));
    }
    let has = |name: &str| out.iter().any(|(c, _)| *c == name);
    for (a, b) in [("eq", "ne"), ("any", "all")] {
        if has(a) && has(b) {
            return Err(Error::invalid(field, format!("{a} and {b} cannot both be set")));
        }
    }
    if has("startswith") && out.len() > 1 {
        return Err(Error::invalid(field, "startswith cannot be combined with other operators"));
    }
    if has("between") && ["eq", "ne", "gt", "lt", "gte", "lte"].iter().any(|o| has(o)) {
        return Err(Error::invalid(field, "between cannot be combined with eq, ne, gt, lt, gte or lte"));
    }
    if has("inclusive") && !has("between") {
        return Err(Error::invalid(field, "inclusive applies only to between"));
    }
    Ok(out)
}

fn string_value(field: &str, op: &str, v: &Value) -> Result<String> {
    let Value::String(s) = v else {
        return Err(Error::invalid(format!("{field}.{op}"), "must be a string"));
    };
    if s.is_empty() {
        return Err(Error::invalid(format!("{field}.{op}"), "must not be empty"));
    }
    if s.len() > limits::FILTER_VALUE_BYTES_MAX {
        return Err(Error::too_large(format!("{field}.{op}"), s.len(), limits::FILTER_VALUE_BYTES_MAX));
    }
    Ok(s.clone())
}

fn list_value<T>(field: &str, op: &str, v: &Value, item: impl Fn(&Value) -> Result<T>) -> Result<Vec<T>> {
    let Value::Array(a) = v else {
        return Err(Error::invalid(format!("{field}.{op}"), "must be a list"));
    };
    if a.is_empty() {
        return Err(Error::invalid(format!("{field}.{op}"), "cannot be an empty list"));
    }
    if a.len() > limits::FILTER_VALUES_MAX {
        return Err(Error::LimitExceeded { what: format!("values in {field}.{op}"), limit: limits::FILTER_VALUES_MAX as u64 });
    }
    a.iter().map(item).collect()
}

fn eq_ci(a: &str, b: &str) -> bool {
    a == b || a.chars().flat_map(char::to_lowercase).eq(b.chars().flat_map(char::to_lowercase))
}

fn starts_with_ci(s: &str, prefix: &str) -> bool {
    let mut s = s.chars().flat_map(char::to_lowercase);
    prefix.chars().flat_map(char::to_lowercase).all(|p| s.next() == Some(p))
}

impl TagFilter {
    /// Parses one filter object for `field`.
    pub fn parse(field: &str, v: &Value, case_insensitive: bool) -> Result<TagFilter> {
        let mut f = TagFilter { case_insensitive, ..TagFilter::default() };
        for (op, v) in operators(field, v, &["eq", "ne", "any", "all", "none", "startswith"])? {
            let list = || list_value(field, op, v, |x| string_value(field, op, x));
            match op {
                "eq" => f.eq = Some(string_value(field, op, v)?),
                "ne" => f.ne = Some(string_value(field, op, v)?),
                "any" => f.any = Some(list()?),
                "all" => f.all = Some(list()?),
                "none" => f.none = Some(list()?),
                _ => f.startswith = Some(string_value(field, op, v)?),
            }
        }
        Ok(f)
    }

    /// Whether the record's values (none, one, or a list) pass.
    pub fn matches(&self, values: &[String]) -> bool {
        let eq = |a: &str, b: &str| if self.case_insensitive { eq_ci(a, b) } else { a == b };
        let has = |want: &str| values.iter().any(|v| eq(v, want));
        self.eq.as_deref().is_none_or(has)
            && self.ne.as_deref().is_none_or(|x| !has(x))
            && self.any.as_ref().is_none_or(|l| l.iter().any(|x| has(x)))
            && self.all.as_ref().is_none_or(|l| l.iter().all(|x| has(x)))
            && self.none.as_ref().is_none_or(|l| !l.iter().any(|x| has(x)))
            && self.startswith.as_deref().is_none_or(|p| {
                values.iter().any(|v| if self.case_insensitive { starts_with_ci(v, p) } else { v.starts_with(p) })
            })
    }
}

impl TypeFilter {
    /// Parses the `memory_type` filter; values must be memory type names.
    pub fn parse(field: &str, v: &Value) -> Result<TypeFilter> {
        let one = |op: &str, x: &Value| -> Result<MemoryType> {
            let s = string_value(field, op, x)?;
            MemoryType::parse(&format!("{field}.{op}"), &s)
        };
        let mut f = TypeFilter::default();
        for (op, v) in operators(field, v, &["eq", "ne", "any", "all", "none"])? {
            match op {
                "eq" => f.eq = Some(one(op, v)?),
                "ne" => f.ne = Some(one(op, v)?),
                "any" => f.any = Some(list_value(field, op, v, |x| one(op, x))?),
                "all" => f.all = Some(list_value(field, op, v, |x| one(op, x))?),
                _ => f.none = Some(list_value(field, op, v, |x| one(op, x))?),
            }
        }
        Ok(f)
    }

    /// Whether a record of type `t` passes.
    pub fn matches(&self, t: MemoryType) -> bool {
        self.eq.is_none_or(|x| x == t)
            && self.ne.is_none_or(|x| x != t)
            && self.any.as_ref().is_none_or(|l| l.contains(&t))
            && self.all.as_ref().is_none_or(|l| l.iter().all(|&x| x == t))
            && self.none.as_ref().is_none_or(|l| !l.contains(&t))
    }
}

/// A time as the client sends it: an RFC 3339 string (Python's
/// `isoformat()`, with or without offset, or a bare date), or a number of
/// seconds since the epoch, read as milliseconds past 2e10 (pydantic's rule).
pub fn parse_time(field: &str, v: &Value) -> Result<Millis> {
    match v {
        Value::String(s) if s.len() == 10 => parse_rfc3339(field, &format!("{s}T00:00:00Z")),
        Value::String(s) => parse_rfc3339(field, s),
        Value::Number(n) => {
            let x = n.as_f64().filter(|x| x.is_finite()).ok_or_else(|| Error::invalid(field, "must be a finite number"))?;
            let ms = if x.abs() > 2e10 { x } else { x * 1000.0 };
            if ms < 0.0 || ms > MILLIS_MAX as f64 {
                return Err(Error::invalid(field, "must be between 1970 and 9999"));
            }
            Ok(ms.floor() as Millis)
        }
        _ => Err(Error::invalid(field, "must be an RFC 3339 date-time string or a number of seconds since the epoch")),
    }
}

impl TimeFilter {
    /// Parses one time filter object for `field`.
    pub fn parse(field: &str, v: &Value) -> Result<TimeFilter> {
        let mut f = TimeFilter::default();
        for (op, v) in operators(field, v, &["gt", "lt", "gte", "lte", "eq", "ne", "between", "inclusive"])? {
            let path = format!("{field}.{op}");
            match op {
                "gt" => f.gt = Some(parse_time(&path, v)?),
                "lt" => f.lt = Some(parse_time(&path, v)?),
                "gte" => f.gte = Some(parse_time(&path, v)?),
                "lte" => f.lte = Some(parse_time(&path, v)?),
                "eq" => f.eq = Some(parse_time(&path, v)?),
                "ne" => f.ne = Some(parse_time(&path, v)?),
                "between" => match v.as_array().map(Vec::as_slice) {
                    Some([a, b]) => f.between = Some((parse_time(&path, a)?, parse_time(&path, b)?)),
                    _ => return Err(Error::invalid(path, "must be a list of two date-times")),
                },
                _ => {
                    f.inclusive = match v.as_str() {
                        Some("both") => Inclusive::Both,
                        Some("neither") => Inclusive::Neither,
                        Some("left") => Inclusive::Left,
                        Some("right") => Inclusive::Right,
                        _ => return Err(Error::invalid(path, "must be one of both, neither, left, right")),
                    }
                }
            }
        }
        Ok(f)
    }

    /// Whether a record whose field holds `v` (`None` when unset) passes. An
    /// unset time fails every comparison except `ne`, as a missing Redis
    /// numeric field does.
    pub fn matches(&self, v: Option<Millis>) -> bool {
        let Some(v) = v else {
            return self.gt.is_none()
                && self.lt.is_none()
                && self.gte.is_none()
                && self.lte.is_none()
                && self.eq.is_none()
                && self.between.is_none();
        };
        self.gt.is_none_or(|a| v > a)
            && self.lt.is_none_or(|a| v < a)
            && self.gte.is_none_or(|a| v >= a)
            && self.lte.is_none_or(|a| v <= a)
            && self.eq.is_none_or(|a| v == a)
            && self.ne.is_none_or(|a| v != a)
            && self.between.is_none_or(|(lo, hi)| match self.inclusive {
                Inclusive::Both => lo <= v && v <= hi,
                Inclusive::Neither => lo < v && v < hi,
                Inclusive::Left => lo <= v && v < hi,
                Inclusive::Right => lo < v && v <= hi,
            })
    }
}
