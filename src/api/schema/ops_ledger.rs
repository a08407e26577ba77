//! The ledger's operations (`/v1/ledger/...`). Amounts are decimal strings
//! at the asset's scale; bodies refuse unknown fields.

use super::ops::{COUNT, LEDGER_ID, P_ACCOUNT_ID, U32};
use super::{opt, req, Op, F, S};
use crate::core::limits as l;

use S::{Any, Arr, Bool, DateTime, Decimal, Enum, Int, Map, Nullable, Obj};

const FLAGS: S = Enum(&["debits_must_not_exceed_credits", "credits_must_not_exceed_debits"]);

/// An account as answered: every amount a decimal string.
pub const ACCOUNT: S = Obj(
    &[
        req("id", LEDGER_ID, ""),
        req("index", Nullable(&Int(0, U32)), "its dense index, for typed-array batches"),
        req("asset", LEDGER_ID, ""),
        req("flags", Arr(&FLAGS, 2), ""),
        req("max_transfer", Nullable(&Decimal), ""),
        req("debits_posted", Decimal, ""),
        req("credits_posted", Decimal, ""),
        req("debits_pending", Decimal, ""),
        req("credits_pending", Decimal, ""),
        req("balance", Decimal, "credits minus debits, posted"),
        req("created_at", DateTime, ""),
    ],
    true,
);

/// A transfer as answered.
pub const TRANSFER_OUT: S = Obj(
    &[
        req("id", LEDGER_ID, ""),
        req("debit_account", LEDGER_ID, ""),
        req("credit_account", LEDGER_ID, ""),
        req("amount", Decimal, ""),
        req("pending", Bool, ""),
        req("timeout_seconds", Nullable(&COUNT), ""),
        req("linked", Bool, ""),
        req("metadata", Nullable(&Map), ""),
        req("state", Enum(&["posted", "pending", "pending_posted", "pending_voided", "pending_expired"]), ""),
        req("posted_amount", Nullable(&Decimal), ""),
        req("created_at", DateTime, ""),
        req("expires_at", Nullable(&DateTime), ""),
        req("resolved_at", Nullable(&DateTime), ""),
    ],
    true,
);

const RESOLVED: S = Obj(&[req("id", LEDGER_ID, ""), req("result", Enum(&["created"]), ""), req("transfer", TRANSFER_OUT, "")], true);

/// An idempotent intent as answered.
pub const INTENT: S = Obj(
    &[
        req("key", S::Str(128), "derived from `op` and `params`"),
        req("status", Enum(&["started", "done", "open"]), ""),
        req("op", LEDGER_ID, ""),
        req("params", Any, ""),
        req("outcome", Any, ""),
        req("begun_at", DateTime, ""),
        req("completed_at", Nullable(&DateTime), ""),
    ],
    true,
);

const DIFFERENCE: S = Obj(&[req("account", LEDGER_ID, ""), req("field", S::Str(64), ""), req("expected", Decimal, ""), req("found", Decimal, "")], true);

const P_TRANSFER_ID: &[F] = &[req("transfer_id", LEDGER_ID, "")];

pub const ASSETS_POST: Op = Op {
    route: "ledger/assets",
    method: "POST",
    summary: "Register an asset and its scale (digits after the point); idempotent",
    path: &[],
    query: &[],
    body: Some(&Obj(&[req("code", LEDGER_ID, "such as USD"), req("scale", Int(0, l::ASSET_SCALE_MAX as i64), "digits after the decimal point")], false)),
    ok: &Obj(&[req("code", LEDGER_ID, ""), req("scale", Int(0, l::ASSET_SCALE_MAX as i64), "")], true),
};

pub const ACCOUNTS_POST: Op = Op {
    route: "ledger/accounts",
    method: "POST",
    summary: "Open an account in an asset; re-opening it with the same settings is a no-op",
    path: &[],
    query: &[],
    body: Some(&Obj(
        &[
            req("id", LEDGER_ID, ""),
            req("asset", LEDGER_ID, "a registered asset code"),
            opt("flags", Arr(&FLAGS, 2), "balance guards; at most one"),
            opt("max_transfer", Nullable(&Decimal), "refuse larger transfers from this account"),
        ],
        false,
    )),
    ok: &ACCOUNT,
};

pub const INDICES_POST: Op = Op {
    route: "ledger/accounts/indices",
    method: "POST",
    summary: "Look up accounts' dense indices, for typed-array transfer batches",
    path: &[],
    query: &[],
    body: Some(&Obj(&[req("ids", Arr(&LEDGER_ID, l::ACCOUNT_INDICES_MAX), "")], false)),
    ok: &Obj(&[req("indices", Arr(&Int(0, U32), l::ACCOUNT_INDICES_MAX), "in the order asked")], true),
};

pub const ACCOUNT_HISTORY: Op = Op {
    route: "ledger/accounts/{}/history",
    method: "GET",
    summary: "Page an account's journal: postings, pendings and their resolutions",
    path: P_ACCOUNT_ID,
    query: &[
        opt("limit", Int(1, l::ACCOUNT_HISTORY_LIMIT_MAX as i64), "default 100"),
        opt("cursor", Int(0, U32), "the previous page's `next_cursor`"),
        opt("since", DateTime, ""),
        opt("until", DateTime, ""),
    ],
    body: None,
    ok: &Obj(
        &[
            req(
                "entries",
                Arr(
                    &Obj(
                        &[
                            req("seq", COUNT, ""),
                            req("kind", S::Str(64), ""),
                            req("transfer_id", LEDGER_ID, ""),
                            req("debit_account", LEDGER_ID, ""),
                            req("credit_account", LEDGER_ID, ""),
                            req("amount", Decimal, ""),
                            req("at", DateTime, ""),
                        ],
                        true,
                    ),
                    l::ACCOUNT_HISTORY_LIMIT_MAX,
                ),
                "",
            ),
            req("next_cursor", Nullable(&Int(0, U32)), "null on the last page"),
        ],
        true,
    ),
};

pub const TRANSFER_GET: Op = Op { route: "ledger/transfers/{}", method: "GET", summary: "Read a transfer", path: P_TRANSFER_ID, query: &[], body: None, ok: &TRANSFER_OUT };

pub const TRANSFER_POST_PENDING: Op = Op {
    route: "ledger/transfers/{}/post",
    method: "POST",
    summary: "Post a pending transfer, in full or in part (the body may be omitted)",
    path: P_TRANSFER_ID,
    query: &[],
    body: Some(&Obj(&[opt("amount", Nullable(&Decimal), "post less than the pending amount")], false)),
    ok: &RESOLVED,
};

pub const TRANSFER_VOID: Op = Op { route: "ledger/transfers/{}/void", method: "POST", summary: "Void a pending transfer", path: P_TRANSFER_ID, query: &[], body: None, ok: &RESOLVED };

pub const RECONCILE: Op = Op {
    route: "ledger/reconcile",
    method: "POST",
    summary: "Check the books (and optionally an external statement) for differences (the body may be omitted)",
    path: &[],
    query: &[],
    body: Some(&Obj(&[opt("statement", Arr(&Obj(&[req("account", LEDGER_ID, ""), req("balance", Decimal, "")], false), l::STATEMENT_LINES_MAX), "balances to compare")], false)),
    ok: &Obj(
        &[
            req("ok", Bool, "no differences"),
            req("differences", Arr(&DIFFERENCE, l::ACCOUNTS_MAX), "within the books"),
            req("statement_differences", Arr(&DIFFERENCE, l::STATEMENT_LINES_MAX), "against the statement"),
            req("transfers", COUNT, ""),
            req("journal_entries", COUNT, ""),
            req("journal_head", Any, "a digest of the journal"),
        ],
        true,
    ),
};

pub const INTENTS_GET: Op = Op {
    route: "ledger/intents",
    method: "GET",
    summary: "List the open intents (begun, not completed)",
    path: &[],
    query: &[],
    body: None,
    ok: &Obj(&[req("open", Arr(&INTENT, l::INTENTS_MAX), "")], true),
};

pub const INTENTS_POST: Op = Op {
    route: "ledger/intents",
    method: "POST",
    summary: "Begin an idempotent external operation: `started` once, then `open` or `done` with its outcome",
    path: &[],
    query: &[],
    body: Some(&Obj(&[req("op", LEDGER_ID, "the operation's name"), opt("params", Any, "its parameters; with `op` they make the key")], false)),
    ok: &INTENT,
};

pub const INTENT_COMPLETE: Op = Op {
    route: "ledger/intents/{}/complete",
    method: "POST",
    summary: "Record an intent's outcome",
    path: &[req("intent_key", S::Str(128), "")],
    query: &[],
    body: Some(&Obj(&[req("outcome", Any, "")], false)),
    ok: &INTENT,
};
