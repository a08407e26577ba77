//! The agent's own state: per-agent profiles and the user's schema
//! versions (the seed's `AgentProfile` and `AgentState.migrate`).
//!
//! - A **profile** is a JSON object of fields per agent, with a schema
//!   version, field merges, and an atomic `increment` that is exact:
//!   decimal strings add as decimals, integers as checked integers, and a
//!   double is refused rather than rounded.
//! - A **schema** is the newest version of a kind of user state
//!   (`session_data`, `profile`) and the migration chain that reaches it:
//!   one declarative migration per version (rename, move, set a default,
//!   remove). The chain runs on read and is written back once, as one op,
//!   so a replay reaches the same state. A migration that cannot apply
//!   changes nothing; a version newer than the schema's is refused.

use std::collections::BTreeMap;

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

use crate::core::error::{ConflictCode, Error, Result};
use crate::core::limits;
use crate::core::session::validate_id;
use crate::core::time::Millis;

/// The kinds of user state that carry a schema version.
pub const KINDS: [&str; 2] = ["session_data", "profile"];

/// One agent's profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    #[serde(serialize_with = "crate::core::exact_json::map")]
    pub fields: Map<String, Value>,
    /// The user schema version the fields are in (1 when none is registered).
    pub schema_version: u32,
    pub created_at: Millis,
    pub updated_at: Millis,
}

/// One step of a declarative migration. Paths are lists of object keys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Step {
    /// Renames a top-level field.
    Rename { from: String, to: String },
    /// Moves the value at `from` to `to`, making the objects on the way
    /// (v1's flat `balance` into v2's `portfolio` map: `from: ["balance"]`,
    /// `to: ["portfolio", "USD"]`).
    Move { from: Vec<String>, to: Vec<String> },
    /// Sets `value` at `path` unless something is there.
    SetDefault {
        path: Vec<String>,
        #[serde(serialize_with = "crate::core::exact_json::value")]
        value: Value,
    },
    /// Removes the value at `path`.
    Remove { path: Vec<String> },
}

/// The steps from version `from` to `from + 1`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Migration {
    pub from: u32,
    pub steps: Vec<Step>,
}

/// The newest version of one kind of state and the chain that reaches it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Schema {
    pub version: u32,
    #[serde(default)]
    pub migrations: Vec<Migration>,
}

/// A change to profiles or schemas.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum AgentStateOp {
    /// Merges `fields` into the profile (a `null` removes a field), or
    /// replaces them all. Without `schema_version` the fields are taken to
    /// be in the newest version.
    ProfileSet {
        agent_id: String,
        #[serde(serialize_with = "crate::core::exact_json::map")]
        fields: Map<String, Value>,
        replace: bool,
        schema_version: Option<u32>,
    },
    /// Adds `by` (an integer or a decimal string) to a field.
    ProfileIncrement {
        agent_id: String,
        field: String,
        #[serde(serialize_with = "crate::core::exact_json::value")]
        by: Value,
    },
    ProfileDelete { agent_id: String },
    /// Runs the registered chain on the profile, or, with `fields`, writes
    /// what a host's migration made of version `from_version` (refused if
    /// the profile is no longer at that version).
    ProfileMigrate {
        agent_id: String,
        from_version: u32,
        to_version: u32,
        #[serde(serialize_with = "crate::core::exact_json::option_map")]
        fields: Option<Map<String, Value>>,
    },
    /// Registers the schema of a kind.
    SchemaSet { kind: String, schema: Schema },
}

/// What an [`AgentStateOp`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentStateApplied {
    Profile(Profile),
    /// The field's value after an increment.
    Incremented { field: String, value: Value },
    Deleted { existed: bool },
    Schema { kind: String, version: u32 },
}

/// Profiles and schemas of one tenant.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentState {
    profiles: BTreeMap<String, Profile>,
    schemas: BTreeMap<String, Schema>,
}

fn check_path(field: &str, path: &[String]) -> Result<()> {
    if path.is_empty() || path.len() > limits::USER_SCHEMA_PATH_DEPTH_MAX {
        return Err(Error::invalid(field, format!("a path has 1 to {} keys", limits::USER_SCHEMA_PATH_DEPTH_MAX)));
    }
    if path.iter().any(|k| k.is_empty() || k.len() > limits::ID_BYTES_MAX) {
        return Err(Error::invalid(field, format!("a key is 1 to {} bytes", limits::ID_BYTES_MAX)));
    }
    Ok(())
}

impl Schema {
    /// Checks the chain: versions 1 to `version - 1` each migrate once.
    pub fn validate(&self, kind: &str) -> Result<()> {
        if !KINDS.contains(&kind) {
            return Err(Error::not_found("schema kind", kind));
        }
        if !(1..=limits::USER_SCHEMA_VERSION_MAX).contains(&self.version) {
            return Err(Error::invalid("version", format!("must be 1 to {}", limits::USER_SCHEMA_VERSION_MAX)));
        }
        let froms: Vec<u32> = self.migrations.iter().map(|m| m.from).collect();
        let want: Vec<u32> = (1..self.version).collect();
        if froms != want {
            return Err(Error::invalid("migrations", format!("must migrate from each version 1 to {} once, in order; got {froms:?}", self.version - 1)));
        }
        for (i, m) in self.migrations.iter().enumerate() {
            if m.steps.len() > limits::USER_SCHEMA_STEPS_MAX {
                return Err(Error::LimitExceeded { what: format!("steps in migrations[{i}]"), limit: limits::USER_SCHEMA_STEPS_MAX as u64 });
            }
            for s in &m.steps {
                match s {
                    Step::Rename { from, to } => check_path("rename.from", std::slice::from_ref(from)).and(check_path("rename.to", std::slice::from_ref(to)))?,
                    Step::Move { from, to } => check_path("move.from", from).and(check_path("move.to", to))?,
                    Step::SetDefault { path, .. } | Step::Remove { path } => check_path("path", path)?,
                }
            }
        }
        Ok(())
    }

    /// Runs the chain from `version` on `fields`.
    pub fn migrate(&self, kind: &str, version: u32, fields: &Map<String, Value>) -> Result<Map<String, Value>> {
        if version > self.version {
            return Err(Error::conflict(ConflictCode::SchemaVersionTooNew, format!("{kind} is at version {version}; the newest migration reaches {}", self.version)));
        }
        let mut out = fields.clone();
        for m in self.migrations.iter().filter(|m| m.from >= version) {
            for (i, s) in m.steps.iter().enumerate() {
                apply_step(&mut out, s).map_err(|reason| Error::MigrationFailed { what: format!("{kind} v{} step {i}", m.from), reason })?;
            }
        }
        Ok(out)
    }
}

fn take(obj: &mut Map<String, Value>, path: &[String]) -> Option<Value> {
    let (last, parents) = path.split_last()?;
    let mut cur = obj;
    for k in parents {
        cur = cur.get_mut(k)?.as_object_mut()?;
    }
    cur.remove(last)
}

fn slot<'a>(obj: &'a mut Map<String, Value>, path: &'a [String]) -> std::result::Result<(&'a mut Map<String, Value>, &'a str), String> {
    let (last, parents) = path.split_last().ok_or("an empty path")?;
    let mut cur = obj;
    for k in parents {
        let next = cur.entry(k.clone()).or_insert_with(|| Value::Object(Map::new()));
        cur = next.as_object_mut().ok_or_else(|| format!("{k:?} is not an object"))?;
    }
    Ok((cur, last.as_str()))
}

fn apply_step(obj: &mut Map<String, Value>, s: &Step) -> std::result::Result<(), String> {
    match s {
        Step::Rename { from, to } => apply_step(obj, &Step::Move { from: vec![from.clone()], to: vec![to.clone()] }),
        Step::Move { from, to } => {
            if let Some(v) = take(obj, from) {
                let (parent, key) = slot(obj, to)?;
                if parent.contains_key(key) {
                    return Err(format!("{to:?} is already set"));
                }
                parent.insert(key.to_owned(), v);
            }
            Ok(())
        }
        Step::SetDefault { path, value } => {
            let (parent, key) = slot(obj, path)?;
            parent.entry(key.to_owned()).or_insert_with(|| value.clone());
            Ok(())
        }
        Step::Remove { path } => {
            take(obj, path);
            Ok(())
        }
    }
}

/// `current + by`, exactly: decimal strings as decimals (the result keeps
/// the larger scale), integers as checked integers; a missing field starts
/// at zero of `by`'s kind.
pub fn increment(current: Option<&Value>, by: &Value) -> Result<Value> {
    let bad = |reason: String| Error::invalid("by", reason);
    let decimal = |text: &str| Decimal::from_str_exact(text).map_err(|e| bad(format!("{text:?} is not a decimal: {e}")));
    match (current, by) {
        (None | Some(Value::Null), Value::String(b)) => Ok(Value::String(decimal(b)?.to_string())),
        (None | Some(Value::Null), Value::Number(n)) if n.as_i64().is_some() || n.as_u64().is_some() => Ok(Value::Number(n.clone())),
        (Some(Value::String(c)), Value::String(b)) => {
            let (c, b) = (decimal(c).map_err(|e| Error::invalid("field", e.to_string()))?, decimal(b)?);
            c.checked_add(b).map(|v| Value::String(v.to_string())).ok_or_else(|| bad("the sum overflows a decimal".into()))
        }
        (Some(Value::Number(c)), Value::Number(b)) => match (c.as_i64(), b.as_i64()) {
            (Some(c), Some(b)) => c.checked_add(b).map(|v| Value::Number(Number::from(v))).ok_or_else(|| bad("the sum overflows a 64-bit integer".into())),
            _ => Err(bad("only integers add as numbers; use decimal strings for amounts".into())),
        },
        (None | Some(Value::Null), b) => Err(bad(format!("{b} is not an integer or a decimal string"))),
        (Some(c), b) => Err(bad(format!("cannot add {b} to the field's {c}: use two integers or two decimal strings"))),
    }
}

impl AgentState {
    /// The registered schema of `kind`, if any.
    pub fn schema(&self, kind: &str) -> Option<&Schema> {
        self.schemas.get(kind)
    }

    /// The newest version of `kind` (1 when no schema is registered).
    pub fn newest(&self, kind: &str) -> u32 {
        self.schemas.get(kind).map_or(1, |s| s.version)
    }

    /// What state of `kind` at `from_version` becomes at `to_version`: a
    /// host's own migration (`given`), or the registered chain run on `current`.
    pub fn migrated(&self, kind: &str, from_version: u32, to_version: u32, given: Option<&Map<String, Value>>, current: &Map<String, Value>) -> Result<Map<String, Value>> {
        if let Some(g) = given {
            return Ok(g.clone());
        }
        let schema = self.schemas.get(kind).ok_or_else(|| Error::not_found("schema", kind))?;
        if to_version != schema.version {
            return Err(Error::invalid("to_version", format!("the registered chain reaches {}", schema.version)));
        }
        schema.migrate(kind, from_version, current)
    }

    pub fn profile(&self, agent_id: &str) -> Option<&Profile> {
        self.profiles.get(agent_id)
    }

    pub fn apply(&mut self, op: &AgentStateOp, now: Millis) -> Result<AgentStateApplied> {
        match op {
            AgentStateOp::SchemaSet { kind, schema } => {
                schema.validate(kind)?;
                let bytes = serde_json::to_vec(schema).map(|b| b.len()).unwrap_or(usize::MAX);
                if bytes > limits::USER_SCHEMA_BYTES_MAX {
                    return Err(Error::too_large("schema", bytes, limits::USER_SCHEMA_BYTES_MAX));
                }
                if let Some(old) = self.schemas.get(kind) {
                    if schema.version < old.version {
                        return Err(Error::invalid("version", format!("{kind} is already at version {}; a schema never goes back", old.version)));
                    }
                }
                self.schemas.insert(kind.clone(), schema.clone());
                Ok(AgentStateApplied::Schema { kind: kind.clone(), version: schema.version })
            }
            AgentStateOp::ProfileSet { agent_id, fields, replace, schema_version } => {
                validate_id("agent_id", agent_id)?;
                let newest = self.newest("profile");
                let version = schema_version.unwrap_or(newest);
                if version > newest {
                    return Err(Error::conflict(ConflictCode::SchemaVersionTooNew, format!("profile version {version}; the newest is {newest}")));
                }
                let mut next = match (self.profiles.get(agent_id), replace) {
                    (Some(p), false) => p.clone(),
                    (p, _) => Profile { fields: Map::new(), schema_version: version, created_at: p.map_or(now, |p| p.created_at), updated_at: now },
                };
                if !replace && next.schema_version != version {
                    return Err(Error::conflict(ConflictCode::SchemaVersionChanged, format!("the profile is at version {}; merge fields of the same version", next.schema_version)));
                }
                for (k, v) in fields {
                    if v.is_null() {
                        next.fields.remove(k);
                    } else {
                        next.fields.insert(k.clone(), v.clone());
                    }
                }
                self.store(agent_id, next, now)
            }
            AgentStateOp::ProfileIncrement { agent_id, field, by } => {
                validate_id("agent_id", agent_id)?;
                validate_id("field", field)?;
                let newest = self.newest("profile");
                let mut next = self.profiles.get(agent_id).cloned().unwrap_or(Profile { fields: Map::new(), schema_version: newest, created_at: now, updated_at: now });
                let value = increment(next.fields.get(field), by)?;
                next.fields.insert(field.clone(), value.clone());
                self.store(agent_id, next, now)?;
                Ok(AgentStateApplied::Incremented { field: field.clone(), value })
            }
            AgentStateOp::ProfileDelete { agent_id } => Ok(AgentStateApplied::Deleted { existed: self.profiles.remove(agent_id).is_some() }),
            AgentStateOp::ProfileMigrate { agent_id, from_version, to_version, fields } => {
                let p = self.profiles.get(agent_id).ok_or_else(|| Error::not_found("profile", agent_id))?;
                if p.schema_version != *from_version {
                    return Err(Error::conflict(ConflictCode::SchemaVersionChanged, format!("the profile is at version {}, not {from_version}", p.schema_version)));
                }
                let migrated = self.migrated("profile", *from_version, *to_version, fields.as_ref(), &p.fields)?;
                let next = Profile { fields: migrated, schema_version: *to_version, ..p.clone() };
                self.store(agent_id, next, now)
            }
        }
    }

    fn store(&mut self, agent_id: &str, mut p: Profile, now: Millis) -> Result<AgentStateApplied> {
        let bytes = serde_json::to_vec(&p.fields).map(|b| b.len()).unwrap_or(usize::MAX);
        if bytes > limits::PROFILE_BYTES_MAX {
            return Err(Error::too_large("profile", bytes, limits::PROFILE_BYTES_MAX));
        }
        if !self.profiles.contains_key(agent_id) && self.profiles.len() >= limits::PROFILES_MAX {
            return Err(Error::LimitExceeded { what: "agent profiles".into(), limit: limits::PROFILES_MAX as u64 });
        }
        p.updated_at = now;
        self.profiles.insert(agent_id.to_owned(), p.clone());
        Ok(AgentStateApplied::Profile(p))
    }
}

#[cfg(test)]
mod tests;
