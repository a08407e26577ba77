//! edgemem's `/v1/ledger` routes. Every amount crosses as a decimal string at
//! the asset's scale; a JSON number where an amount belongs is refused. Bodies
//! refuse unknown fields: a misspelled `"ammount"` must not move money.

use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::{parse_json, Ctx, Request, Response};
use crate::core::engine::{Applied, Op};
use crate::core::error::{Error, Result};
use crate::core::ledger::amount::{format_signed, format_units, parse_balance};
use crate::core::ledger::intents::{intent_key, Begun, Intent};
use crate::core::ledger::types::{Account, AccountFlags, Difference, StatementLine, Transfer};
use crate::core::ledger::{validate_ledger_id, Ledger, LedgerApplied, LedgerOp, TransferColumns, TransferRequest, TransferResult};
use crate::core::limits;
use crate::core::time::{format_rfc3339, parse_rfc3339};
use crate::store::{Backend, Store};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AssetBody {
    code: String,
    scale: u32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AccountBody {
    id: String,
    asset: String,
    #[serde(default)]
    flags: Vec<String>,
    #[serde(default)]
    max_transfer: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TransfersBody {
    transfers: Vec<TransferRequest>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct IndicesBody {
    ids: Vec<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct PostBody {
    #[serde(default)]
    amount: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StatementLineBody {
    account: String,
    balance: String,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct ReconcileBody {
    #[serde(default)]
    statement: Vec<StatementLineBody>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct IntentBody {
    op: String,
    #[serde(default)]
    params: Value,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CompleteBody {
    outcome: Value,
}

fn scale_of(l: &Ledger, account: &str) -> u32 {
    l.account_scale(account).unwrap_or(0)
}

/// An account as JSON, amounts at its asset's scale.
pub fn account_json(l: &Ledger, a: &Account) -> Value {
    let scale = scale_of(l, &a.id);
    let mut flags = Vec::new();
    if a.flags.debits_must_not_exceed_credits {
        flags.push("debits_must_not_exceed_credits");
    }
    if a.flags.credits_must_not_exceed_debits {
        flags.push("credits_must_not_exceed_debits");
    }
    json!({
        "id": a.id,
        "index": l.account_index(&a.id),
        "asset": a.asset,
        "flags": flags,
        "max_transfer": a.max_transfer.map(|m| format_units(m, scale)),
        "debits_posted": format_units(a.debits_posted, scale),
        "credits_posted": format_units(a.credits_posted, scale),
        "debits_pending": format_units(a.debits_pending, scale),
        "credits_pending": format_units(a.credits_pending, scale),
        "balance": format_signed(a.balance(), scale),
        "created_at": format_rfc3339(a.created_at),
    })
}

/// A transfer as JSON.
pub fn transfer_json(l: &Ledger, t: &Transfer) -> Value {
    let scale = scale_of(l, l.account_name(t.debit));
    json!({
        "id": t.id.to_string(),
        "debit_account": l.account_name(t.debit),
        "credit_account": l.account_name(t.credit),
        "amount": format_units(t.amount, scale),
        "pending": t.pending,
        "timeout_seconds": t.timeout_seconds,
        "linked": t.linked,
        "metadata": t.metadata,
        "state": t.state.as_str(),
        "posted_amount": t.posted_amount.map(|p| format_units(p, scale)),
        "created_at": format_rfc3339(t.created_at),
        "expires_at": t.expires_at().map(format_rfc3339),
        "resolved_at": t.resolved_at.map(format_rfc3339),
    })
}

fn intent_json(status: &str, i: &Intent) -> Value {
    json!({
        "key": i.key,
        "status": status,
        "op": i.op,
        "params": i.params,
        "outcome": i.outcome,
        "begun_at": format_rfc3339(i.begun_at),
        "completed_at": i.completed_at.map(format_rfc3339),
    })
}

fn difference_json(l: &Ledger, d: &Difference) -> Value {
    let scale = scale_of(l, &d.account);
    json!({ "account": d.account, "field": d.field, "expected": format_signed(d.expected, scale), "found": format_signed(d.found, scale) })
}

async fn apply<B: Backend>(store: &Store<B>, op: LedgerOp, ctx: &Ctx<'_>) -> Result<LedgerApplied> {
    match store.apply(Op::Ledger(op), ctx.now).await? {
        Applied::Ledger(a) => Ok(a),
        other => Err(Error::Internal { detail: format!("ledger op returned {other:?}") }),
    }
}

fn parse_flags(names: &[String]) -> Result<AccountFlags> {
    let mut flags = AccountFlags::default();
    for n in names {
        match n.as_str() {
            "debits_must_not_exceed_credits" => flags.debits_must_not_exceed_credits = true,
            "credits_must_not_exceed_debits" => flags.credits_must_not_exceed_debits = true,
            other => return Err(Error::invalid("flags", format!("unknown flag {other:?}"))),
        }
    }
    Ok(flags)
}

/// Answers `/v1/ledger/...`; `segs` are the path segments after `ledger`.
pub async fn route<B: Backend>(store: &Store<B>, req: &Request<'_>, ctx: &mut Ctx<'_>, segs: &[&str]) -> Result<Response> {
    let ok = |body| Ok(Response { status: 200, body, raw: None, content_type: None });
    if req.body.len() > ctx.body_bytes_max {
        return Err(Error::too_large("request body", req.body.len(), ctx.body_bytes_max));
    }
    match (segs, req.method) {
        (["assets"], "POST") => {
            let b: AssetBody = parse_json(req.body)?;
            match apply(store, LedgerOp::CreateAsset { code: b.code, scale: b.scale }, ctx).await? {
                LedgerApplied::Asset(a) => ok(json!({ "code": a.code, "scale": a.scale })),
                other => Err(unexpected(other)),
            }
        }
        (["accounts"], "POST") => {
            let b: AccountBody = parse_json(req.body)?;
            let op = LedgerOp::CreateAccount { id: b.id, asset: b.asset, flags: parse_flags(&b.flags)?, max_transfer: b.max_transfer };
            match apply(store, op, ctx).await? {
                LedgerApplied::Account(a) => ok(store.read(|e| account_json(e.ledger(), &a)).await?),
                other => Err(unexpected(other)),
            }
        }
        (["accounts", "indices"], "POST") => {
            let b: IndicesBody = parse_json(req.body)?;
            if b.ids.len() > limits::ACCOUNT_INDICES_MAX {
                return Err(Error::LimitExceeded { what: "account ids".into(), limit: limits::ACCOUNT_INDICES_MAX as u64 });
            }
            let indices = store
                .read(|e| b.ids.iter().map(|id| e.ledger().account_index(id).ok_or_else(|| Error::not_found("account", id.as_str()))).collect::<Result<Vec<u32>>>())
                .await??;
            ok(json!({ "indices": indices }))
        }
        (["accounts", id], "GET") => {
            validate_ledger_id("id", id)?;
            store.read(|e| e.ledger().account(id).map(|a| account_json(e.ledger(), a))).await?.map(Response::ok).ok_or_else(|| Error::not_found("account", *id))
        }
        (["accounts", id, "history"], "GET") => history(store, req, id).await,
        (["transfers"], "POST") => {
            let b: TransfersBody = parse_json(req.body)?;
            // Metadata is scrubbed of secrets; the answer counts what went.
            match store.apply_reporting(Op::Ledger(LedgerOp::CreateTransfers { transfers: b.transfers }), ctx.now).await? {
                (Applied::Ledger(LedgerApplied::Transfers(results)), scrubbed) => {
                    let results: Vec<Value> = results.iter().map(|(id, r)| json!({ "id": id, "result": r.as_str() })).collect();
                    let mut v = json!({ "results": results });
                    super::privacy::report_into(&mut v, &scrubbed);
                    ok(v)
                }
                (Applied::Ledger(other), _) => Err(unexpected(other)),
                (other, _) => Err(Error::Internal { detail: format!("ledger op returned {other:?}") }),
            }
        }
        (["transfers", id], "GET") => {
            validate_ledger_id("id", id)?;
            store.read(|e| e.ledger().transfer(id).map(|t| transfer_json(e.ledger(), t))).await?.map(Response::ok).ok_or_else(|| Error::not_found("transfer", *id))
        }
        (["transfers", id, action @ ("post" | "void")], "POST") => {
            let op = if *action == "post" {
                let b: PostBody = if req.body.is_empty() { PostBody::default() } else { parse_json(req.body)? };
                LedgerOp::Post { id: (*id).to_owned(), amount: b.amount }
            } else {
                LedgerOp::Void { id: (*id).to_owned() }
            };
            match apply(store, op, ctx).await? {
                LedgerApplied::Resolved(t) => ok(store.read(|e| json!({ "id": t.id.to_string(), "result": "created", "transfer": transfer_json(e.ledger(), &t) })).await?),
                other => Err(unexpected(other)),
            }
        }
        (["reconcile"], "POST") => {
            let b: ReconcileBody = if req.body.is_empty() { ReconcileBody::default() } else { parse_json(req.body)? };
            if b.statement.len() > limits::STATEMENT_LINES_MAX {
                return Err(Error::LimitExceeded { what: "statement lines".into(), limit: limits::STATEMENT_LINES_MAX as u64 });
            }
            let body = store
                .read(|e| -> Result<Value> {
                    let l = e.ledger();
                    let mut lines = Vec::with_capacity(b.statement.len());
                    for (i, s) in b.statement.iter().enumerate() {
                        let scale = l.account_scale(&s.account).unwrap_or(limits::ASSET_SCALE_MAX);
                        lines.push(StatementLine { account: s.account.clone(), balance: parse_balance(&format!("statement[{i}].balance"), &s.balance, scale)? });
                    }
                    let books = l.reconcile();
                    let statement = l.reconcile_statement(&lines)?;
                    let (transfers, events) = l.counts();
                    Ok(json!({
                        "ok": books.is_empty() && statement.is_empty(),
                        "differences": books.iter().map(|d| difference_json(l, d)).collect::<Vec<_>>(),
                        "statement_differences": statement.iter().map(|d| difference_json(l, d)).collect::<Vec<_>>(),
                        "transfers": transfers,
                        "journal_entries": events,
                        "journal_head": l.journal_head(),
                    }))
                })
                .await??;
            ok(body)
        }
        (["intents"], "POST") => {
            let b: IntentBody = parse_json(req.body)?;
            validate_ledger_id("op", &b.op)?;
            let key = intent_key(&b.op, &b.params);
            match apply(store, LedgerOp::BeginIntent { key, op: b.op, params: b.params }, ctx).await? {
                LedgerApplied::Intent(Begun::Started(i)) => ok(intent_json("started", &i)),
                LedgerApplied::Intent(Begun::Done(i)) => ok(intent_json("done", &i)),
                LedgerApplied::Intent(Begun::Open(i)) => ok(intent_json("open", &i)),
                other => Err(unexpected(other)),
            }
        }
        (["intents"], "GET") => {
            let open = store.read(|e| e.ledger().open_intents().into_iter().map(|i| intent_json("open", i)).collect::<Vec<_>>()).await?;
            ok(json!({ "open": open }))
        }
        (["intents", key, "complete"], "POST") => {
            let b: CompleteBody = parse_json(req.body)?;
            match apply(store, LedgerOp::CompleteIntent { key: (*key).to_owned(), outcome: b.outcome }, ctx).await? {
                LedgerApplied::IntentCompleted(i) => ok(intent_json("done", &i)),
                other => Err(unexpected(other)),
            }
        }
        (["assets"] | ["accounts"] | ["accounts", "indices"] | ["transfers"] | ["reconcile"] | ["intents"] | ["accounts", _] | ["accounts", _, "history"] | ["transfers", _] | ["transfers", _, _] | ["intents", _, "complete"], other) => {
            Err(Error::MethodNotAllowed { method: other.to_owned() })
        }
        _ => Err(Error::not_found("route", req.path)),
    }
}

/// Applies a typed-array transfer batch: the binary entry point beside the
/// JSON routes (the JS `createTransferBatch`), one result per transfer.
pub async fn create_transfer_columns<B: Backend>(store: &Store<B>, cols: TransferColumns, ctx: &Ctx<'_>) -> Result<Vec<TransferResult>> {
    match apply(store, LedgerOp::CreateTransferColumns(cols), ctx).await? {
        LedgerApplied::TransferCodes(codes) => Ok(codes),
        other => Err(unexpected(other)),
    }
}

fn unexpected(a: LedgerApplied) -> Error {
    Error::Internal { detail: format!("unexpected ledger result {a:?}") }
}

async fn history<B: Backend>(store: &Store<B>, req: &Request<'_>, id: &str) -> Result<Response> {
    validate_ledger_id("id", id)?;
    let limit = req.param_usize("limit", 100, 1, limits::ACCOUNT_HISTORY_LIMIT_MAX)?;
    let cursor = req.param_usize("cursor", 0, 0, u32::MAX as usize)? as u32;
    let time = |name: &str| req.param(name).map(|v| parse_rfc3339(name, v)).transpose();
    let (since, until) = (time("since")?, time("until")?);
    let body = store
        .read(|e| -> Result<Value> {
            let l = e.ledger();
            let (page, next) = l.account_history(id, cursor, limit, since, until)?;
            let scale = scale_of(l, id);
            let entries: Vec<Value> = page
                .iter()
                .map(|(seq, ev, t)| {
                    let mut m = Map::new();
                    m.insert("seq".into(), (*seq).into());
                    m.insert("kind".into(), ev.kind.as_str().into());
                    m.insert("transfer_id".into(), t.id.to_string().into());
                    m.insert("debit_account".into(), l.account_name(t.debit).into());
                    m.insert("credit_account".into(), l.account_name(t.credit).into());
                    m.insert("amount".into(), format_units(ev.amount, scale).into());
                    m.insert("at".into(), format_rfc3339(ev.at).into());
                    Value::Object(m)
                })
                .collect();
            Ok(json!({ "entries": entries, "next_cursor": next }))
        })
        .await??;
    Ok(Response::ok(body))
}
