//! `POST /v1/long-term-memory/forget` (AMS): selects by the policy,
//! deletes unless `dry_run` (AMS's default is a dry run). The selection is
//! [`crate::core::longterm::forget`]'s two steps, so a sharded tenant runs
//! the same code: each shard's [`part`], one [`choose`] at the front, then
//! each shard's [`delete`] of what was chosen there.

use serde_json::{json, Map, Value};

use super::{num, uint};
use crate::api::privacy::stored_user_id;
use crate::api::{parse_json, Request};
use crate::core::engine::Op;
use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::longterm::forget::{choose, ForgetPart, ForgetPolicy, ForgetScope};
use crate::core::longterm::LtmOp;
use crate::core::retrieval::record::MemoryType;
use crate::core::time::Millis;
use crate::store::{Backend, Store};

/// A forget request, read and checked.
#[derive(Debug, Clone)]
pub struct Forget {
    pub policy: ForgetPolicy,
    pub pinned_ids: Vec<String>,
    /// AMS's default: true.
    pub dry_run: bool,
    /// At most this many are chosen (`?limit=`, 1 to
    /// [`limits::LTM_DELETE_BATCH_MAX`], default 1,000).
    pub limit: usize,
    /// `?user_id=` as given (a sealed id or a raw one).
    pub user_id: Option<String>,
    pub session_id: Option<String>,
    pub namespace: Option<String>,
}

impl Forget {
    /// Reads the body's `policy` and `pinned_ids` and the query's
    /// `dry_run`, `limit` and scope.
    pub fn read(req: &Request<'_>) -> Result<Forget> {
        let body: Value = if req.body.is_empty() { json!({}) } else { parse_json(req.body)? };
        let p = match body.get("policy") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(p)) => p.clone(),
            Some(_) => return Err(Error::invalid("policy", "must be an object")),
        };
        let policy = ForgetPolicy {
            max_age_days: num(&p, "max_age_days")?,
            max_inactive_days: num(&p, "max_inactive_days")?,
            budget: match p.get("budget") {
                None | Some(Value::Null) => None,
                Some(_) => Some(uint(&p, "budget", 0, limits::LTM_RECORDS_MAX)?),
            },
            memory_type_allowlist: match p.get("memory_type_allowlist") {
                None | Some(Value::Null) => None,
                Some(Value::Array(a)) => Some(a.iter().map(|x| x.as_str().map_or_else(|| Err(Error::invalid("memory_type_allowlist", "must be strings")), |s| MemoryType::parse("memory_type_allowlist", s))).collect::<Result<Vec<_>>>()?),
                Some(_) => return Err(Error::invalid("memory_type_allowlist", "must be an array")),
            },
        };
        let pinned_ids: Vec<String> = match body.get("pinned_ids") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) if a.len() <= limits::LTM_DELETE_BATCH_MAX => a.iter().filter_map(|x| x.as_str().map(str::to_owned)).collect(),
            Some(Value::Array(_)) => return Err(Error::LimitExceeded { what: "pinned_ids".into(), limit: limits::LTM_DELETE_BATCH_MAX as u64 }),
            Some(_) => return Err(Error::invalid("pinned_ids", "must be an array of ids")),
        };
        let dry_run = match req.param("dry_run") {
            None => true,
            Some("true" | "True" | "1") => true,
            Some("false" | "False" | "0") => false,
            Some(_) => return Err(Error::invalid("dry_run", "must be true or false")),
        };
        let limit = req.param_usize("limit", 1000, 1, limits::LTM_DELETE_BATCH_MAX)?;
        let owned = |name: &str| req.param(name).map(str::to_owned);
        Ok(Forget { policy, pinned_ids, dry_run, limit, user_id: owned("user_id"), session_id: owned("session_id"), namespace: owned("namespace") })
    }
}

/// This store's part of `f` at `now`.
pub async fn part<B: Backend>(store: &Store<B>, f: &Forget, now: Millis) -> Result<ForgetPart> {
    let sealed = f.user_id.as_deref().map(|u| stored_user_id(store, u));
    let scope = ForgetScope { user_id: sealed.as_deref(), session_id: f.session_id.as_deref(), namespace: f.namespace.as_deref(), pinned_ids: &f.pinned_ids, limit: f.limit };
    store.read(|e| crate::core::longterm::forget::part(e.longterm().records(), &f.policy, &scope, now)).await
}

/// Deletes `ids` as forgotten (their history says so) by `actor`; ids no
/// longer here are skipped. Answers how many went.
pub async fn delete<B: Backend>(store: &Store<B>, ids: Vec<String>, now: Millis, actor: &str) -> Result<usize> {
    if ids.len() > limits::LTM_DELETE_BATCH_MAX {
        return Err(Error::LimitExceeded { what: "ids in one forget".into(), limit: limits::LTM_DELETE_BATCH_MAX as u64 });
    }
    if ids.is_empty() {
        return Ok(0);
    }
    match store.apply(Op::Ltm(LtmOp::Delete { ids, forget: true, actor: Some(actor.to_owned()) }), now).await? {
        crate::core::engine::Applied::Ltm(crate::core::longterm::LtmApplied::Deleted { deleted }) => Ok(deleted.len()),
        _ => Ok(0),
    }
}

/// AMS's answer: `{scanned, deleted, deleted_ids, dry_run}`.
pub fn answer(scanned: u64, ids: Vec<String>, dry_run: bool) -> Value {
    json!({ "scanned": scanned, "deleted": ids.len(), "deleted_ids": ids, "dry_run": dry_run })
}

/// The route in one store.
pub async fn forget<B: Backend>(store: &Store<B>, req: &Request<'_>, now: Millis, actor: &str) -> Result<Value> {
    let f = Forget::read(req)?;
    let p = part(store, &f, now).await?;
    let scanned = p.scanned;
    let ids = choose(&[p], f.policy.budget, f.limit);
    if !f.dry_run {
        delete(store, ids.clone(), now, actor).await?;
    }
    Ok(answer(scanned, ids, f.dry_run))
}
