//! Ledger unit tests and property tests.

use super::amount::parse_amount;
use super::intents::{intent_key, Begun};
use super::types::*;
use super::*;
use proptest::prelude::*;
use serde_json::json;

const USDC: u32 = 6;

fn usdc(s: &str) -> Units {
    parse_amount("amount", s, USDC).unwrap()
}

fn ledger() -> Ledger {
    let mut l = Ledger::default();
    l.create_asset("USDC", USDC).unwrap();
    l.create_asset("EUR", 2).unwrap();
    let wallet = AccountFlags { debits_must_not_exceed_credits: true, ..AccountFlags::default() };
    l.create_account("bank", "USDC", AccountFlags::default(), None, 0).unwrap();
    l.create_account("agent", "USDC", wallet, Some(usdc("50")), 0).unwrap();
    l.create_account("casino", "USDC", AccountFlags::default(), None, 0).unwrap();
    l.create_account("eur", "EUR", AccountFlags::default(), None, 0).unwrap();
    l
}

fn tx(id: &str, dr: &str, cr: &str, amount: &str) -> TransferInput {
    TransferInput { id: id.into(), debit_account: dr.into(), credit_account: cr.into(), amount: usdc(amount), pending: false, timeout_seconds: None, linked: false, metadata: None }
}

fn pending(id: &str, dr: &str, cr: &str, amount: &str, timeout: Option<u64>) -> TransferInput {
    TransferInput { pending: true, timeout_seconds: timeout, ..tx(id, dr, cr, amount) }
}

#[test]
fn assets_and_accounts_are_idempotent_and_conflict_on_change() {
    let mut l = ledger();
    assert_eq!(l.create_asset("USDC", 6).unwrap().scale, 6);
    assert_eq!(l.create_asset("USDC", 2).unwrap_err().code(), "asset_exists_with_different_scale");
    assert_eq!(l.create_asset("X", 19).unwrap_err().code(), "invalid_input");
    assert!(l.create_account("bank", "USDC", AccountFlags::default(), None, 5).is_ok());
    assert_eq!(l.create_account("bank", "EUR", AccountFlags::default(), None, 5).unwrap_err().code(), "account_exists_with_different_fields");
    assert_eq!(l.create_account("x", "GBP", AccountFlags::default(), None, 5).unwrap_err().code(), "not_found");
    let both = AccountFlags { debits_must_not_exceed_credits: true, credits_must_not_exceed_debits: true };
    assert_eq!(l.create_account("y", "USDC", both, None, 5).unwrap_err().code(), "invalid_input");
}

#[test]
fn transfers_are_idempotent_by_id() {
    let mut l = ledger();
    let t = tx("t1", "bank", "agent", "100");
    assert_eq!(l.create_transfers(std::slice::from_ref(&t), 1), vec![TransferResult::Created]);
    assert_eq!(l.create_transfers(std::slice::from_ref(&t), 2), vec![TransferResult::Exists]);
    let cases = [
        (TransferInput { debit_account: "casino".into(), ..t.clone() }, TransferResult::ExistsWithDifferentDebitAccount),
        (TransferInput { credit_account: "casino".into(), ..t.clone() }, TransferResult::ExistsWithDifferentCreditAccount),
        (TransferInput { amount: usdc("100.000001"), ..t.clone() }, TransferResult::ExistsWithDifferentAmount),
        (TransferInput { pending: true, ..t.clone() }, TransferResult::ExistsWithDifferentFlags),
        (TransferInput { metadata: Some(json!({"memo": "x"}).as_object().unwrap().clone()), ..t.clone() }, TransferResult::ExistsWithDifferentMetadata),
    ];
    for (input, want) in cases {
        assert_eq!(l.create_transfers(&[input], 3), vec![want]);
    }
    assert_eq!(l.account("agent").unwrap().credits_posted, usdc("100"), "exactly one effect");
    assert!(l.reconcile().is_empty());
}

#[test]
fn flags_guards_and_validation() {
    let mut l = ledger();
    use TransferResult as R;
    let r = l.create_transfers(
        &[
            tx("a", "agent", "casino", "1"),
            tx("b", "bank", "agent", "60"),
            tx("c", "agent", "casino", "50.000001"),
            tx("d", "agent", "casino", "50"),
            tx("e", "agent", "casino", "10.000001"),
            tx("f", "bank", "bank", "1"),
            tx("g", "bank", "nobody", "1"),
            tx("h", "nobody", "bank", "1"),
            tx("i", "bank", "eur", "1"),
            TransferInput { timeout_seconds: Some(5), ..tx("j", "bank", "agent", "1") },
        ],
        1,
    );
    assert_eq!(
        r,
        vec![
            R::ExceedsCredits,
            R::Created,
            R::ExceedsMaxTransfer,
            R::Created,
            R::ExceedsCredits,
            R::AccountsMustBeDifferent,
            R::CreditAccountNotFound,
            R::DebitAccountNotFound,
            R::AccountsMustHaveTheSameAsset,
            R::TimeoutReservedForPendingTransfer,
        ]
    );
    assert_eq!(l.account("agent").unwrap().balance(), usdc("10") as i128);
    // A failed id is not remembered: a retry may succeed later.
    assert!(l.transfer("a").is_none());
}

#[test]
fn linked_chains_are_all_or_nothing() {
    let mut l = ledger();
    let link = |t: TransferInput| TransferInput { linked: true, ..t };
    let before = l.clone();
    let r = l.create_transfers(&[link(tx("l1", "bank", "agent", "5")), link(tx("l2", "agent", "casino", "5")), tx("l3", "agent", "casino", "1")], 1);
    assert_eq!(r, vec![TransferResult::LinkedEventFailed, TransferResult::LinkedEventFailed, TransferResult::ExceedsCredits]);
    assert_eq!(l, before, "a failed chain leaves no trace");
    let r = l.create_transfers(&[link(tx("l1", "bank", "agent", "5")), tx("l2", "agent", "casino", "5"), tx("solo", "bank", "casino", "1")], 2);
    assert_eq!(r, vec![TransferResult::Created; 3]);
    // Retrying the whole chain is idempotent.
    let r = l.create_transfers(&[link(tx("l1", "bank", "agent", "5")), tx("l2", "agent", "casino", "5")], 3);
    assert_eq!(r, vec![TransferResult::Exists; 2]);
    let r = l.create_transfers(&[tx("x", "bank", "casino", "1"), link(tx("y", "bank", "casino", "1"))], 4);
    assert_eq!(r, vec![TransferResult::Created, TransferResult::LinkedEventChainOpen]);
    assert!(l.reconcile().is_empty());
}

#[test]
fn pending_post_void_and_expiry() {
    let mut l = ledger();
    l.create_transfers(&[tx("fund", "bank", "agent", "40")], 0);
    let r = l.create_transfers(&[pending("hold", "agent", "casino", "30", Some(60)), pending("hold2", "agent", "casino", "15", None)], 1_000);
    assert_eq!(r, vec![TransferResult::Created, TransferResult::ExceedsCredits], "pending debits count against the wallet");
    let a = l.account("agent").unwrap();
    assert_eq!((a.debits_pending, a.balance()), (usdc("30"), usdc("40") as i128));
    assert_eq!(l.next_expiry(), Some(61_000));
    assert_eq!(l.post("hold", Some(usdc("30.000001")), 2_000), TransferResult::ExceedsPendingTransferAmount);
    assert_eq!(l.post("hold", Some(usdc("25")), 2_000), TransferResult::Created);
    assert_eq!(l.post("hold", None, 2_000), TransferResult::PendingTransferAlreadyPosted);
    assert_eq!(l.void("hold", 2_000), TransferResult::PendingTransferAlreadyPosted);
    assert_eq!(l.post("fund", None, 2_000), TransferResult::PendingTransferNotPending);
    assert_eq!(l.post("nope", None, 2_000), TransferResult::PendingTransferNotFound);
    let a = l.account("agent").unwrap();
    assert_eq!((a.debits_pending, a.balance()), (0, usdc("15") as i128), "the unposted 5 was released");
    assert_eq!(l.next_expiry(), None);

    l.create_transfers(&[pending("h3", "agent", "casino", "10", Some(1)), pending("h4", "agent", "casino", "5", None)], 10_000);
    assert_eq!(l.void("h4", 10_500), TransferResult::Created);
    let before = l.clone();
    assert_eq!(l.post("h3", None, 11_000), TransferResult::PendingTransferExpired, "overdue even before the sweep");
    assert_eq!(l, before, "a refused post changes nothing");
    assert_eq!(l.expire(11_000), vec!["h3".to_string()]);
    assert_eq!(l.transfer("h3").unwrap().state, TransferState::PendingExpired);
    assert_eq!(l.account("agent").unwrap().debits_pending, 0);
    assert!(l.reconcile().is_empty());
    assert_eq!(l.counts(), (4, 7), "fund, hold, h3, h4; and created ×4, posted, voided, expired");
}

#[test]
fn statement_reconciliation_and_history() {
    let mut l = ledger();
    for i in 0..25 {
        l.create_transfers(&[tx(&format!("t{i}"), "bank", "agent", "1")], i);
    }
    let diffs = l
        .reconcile_statement(&[
            StatementLine { account: "agent".into(), balance: usdc("25") as i128 },
            StatementLine { account: "bank".into(), balance: -(usdc("24") as i128) },
            StatementLine { account: "ghost".into(), balance: 0 },
        ])
        .unwrap();
    assert_eq!(diffs.len(), 2);
    assert_eq!((diffs[0].account.as_str(), diffs[0].found), ("bank", -(usdc("25") as i128)));
    assert_eq!(diffs[1].field, "missing_account");
    let (page, next) = l.account_history("agent", 0, 10, None, None).unwrap();
    assert_eq!((page.len(), next), (10, Some(10)));
    assert_eq!((page[3].0, page[3].2.id.to_string()), (3, "t3".to_owned()));
    let (page, next) = l.account_history("agent", 20, 10, None, None).unwrap();
    assert_eq!((page.len(), next), (5, None));
    // Transfer i was made at time i: a window by time, paged.
    let (page, next) = l.account_history("agent", 0, 3, Some(5), Some(12)).unwrap();
    assert_eq!((page.iter().map(|p| p.1.at).collect::<Vec<_>>(), next), (vec![5, 6, 7], Some(8)));
    let (page, next) = l.account_history("agent", 8, 10, Some(5), Some(12)).unwrap();
    assert_eq!((page.len(), next), (4, None));
    assert_eq!(l.account_history("ghost", 0, 10, None, None).unwrap_err().code(), "not_found");
}

#[test]
fn snapshot_round_trip_and_tamper_detection() {
    let mut l = ledger();
    l.create_transfers(&[tx("a", "bank", "agent", "20"), pending("p", "agent", "casino", "5", Some(9))], 1);
    l.post("p", Some(usdc("2")), 2);
    let key = intent_key("pay", &json!({"to": "casino"}));
    l.begin_intent(&key, "pay", &json!({"to": "casino"}), 3).unwrap();
    let back = Ledger::from_snapshot(l.to_snapshot()).unwrap();
    assert_eq!(back, l);
    assert_eq!(back.journal_head(), l.journal_head());

    let mut s = l.to_snapshot();
    s.events[1].amount += 1;
    assert_eq!(Ledger::from_snapshot(s).unwrap_err().code(), "snapshot_corrupt", "an edited entry");
    let mut s = l.to_snapshot();
    s.events.remove(1);
    assert_eq!(Ledger::from_snapshot(s).unwrap_err().code(), "snapshot_corrupt", "a lost entry");
    let mut s = l.to_snapshot();
    s.accounts[0].credits_posted += 1;
    assert_eq!(Ledger::from_snapshot(s).unwrap_err().code(), "snapshot_corrupt", "a cached balance that does not reconcile");
}

#[test]
fn execute_once_intents() {
    let mut l = Ledger::default();
    let params = json!({"market": "AAPL", "qty": "10"});
    let key = intent_key("buy", &params);
    assert_eq!(key, intent_key("buy", &json!({"qty": "10", "market": "AAPL"})), "key ignores field order");
    assert!(matches!(l.begin_intent(&key, "buy", &params, 1).unwrap(), Begun::Started(_)));
    assert!(matches!(l.begin_intent(&key, "buy", &params, 2).unwrap(), Begun::Open(_)), "an unfinished intent is not re-run");
    assert_eq!(l.open_intents().len(), 1);
    l.complete_intent(&key, &json!({"order": 7}), 3).unwrap();
    assert!(l.complete_intent(&key, &json!({"order": 7}), 4).is_ok());
    assert_eq!(l.complete_intent(&key, &json!({"order": 8}), 4).unwrap_err().code(), "intent_completed_with_different_outcome");
    let Begun::Done(i) = l.begin_intent(&key, "buy", &params, 5).unwrap() else { panic!() };
    assert_eq!(i.outcome, Some(json!({"order": 7})));
    assert!(l.open_intents().is_empty());
    assert_eq!(l.complete_intent("nope", &json!(1), 1).unwrap_err().code(), "not_found");
}

/// (id, debit, credit, amount, pending, linked, timeout) of a random transfer.
type RandomTransfer = (u8, u8, u8, u64, bool, bool, Option<u8>);

/// A random step against a small ledger.
#[derive(Debug, Clone)]
enum Step {
    Batch(Vec<RandomTransfer>),
    Post(u8, Option<u64>),
    Void(u8),
    Expire,
    Advance(u16),
}

fn step() -> impl Strategy<Value = Step> {
    let t = (0u8..30, 0u8..5, 0u8..5, 1u64..2_000, any::<bool>(), prop::bool::weighted(0.2), prop::option::of(0u8..20));
    prop_oneof![
        4 => prop::collection::vec(t, 1..6).prop_map(Step::Batch),
        2 => (0u8..30, prop::option::of(1u64..2_000)).prop_map(|(i, a)| Step::Post(i, a)),
        1 => (0u8..30).prop_map(Step::Void),
        1 => Just(Step::Expire),
        1 => (0u16..5_000).prop_map(Step::Advance),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Balances equal the sum of their entries, every transfer nets to zero,
    /// no id has more than one effect, and flags are never violated.
    #[test]
    fn invariants_hold_under_random_histories(steps in prop::collection::vec(step(), 1..60)) {
        let mut l = Ledger::default();
        l.create_asset("T", 2).unwrap();
        let wallet = AccountFlags { debits_must_not_exceed_credits: true, ..AccountFlags::default() };
        let capped = AccountFlags { credits_must_not_exceed_debits: true, ..AccountFlags::default() };
        let flags = [AccountFlags::default(), wallet, wallet, capped, AccountFlags::default()];
        for (i, f) in flags.iter().enumerate() {
            l.create_account(&format!("a{i}"), "T", *f, if i == 2 { Some(500) } else { None }, 0).unwrap();
        }
        let mut now = 1_000u64;
        let mut effects: HashMap<String, usize> = HashMap::new();
        for s in steps {
            match s {
                Step::Batch(ts) => {
                    let inputs: Vec<TransferInput> = ts.iter().map(|&(id, dr, cr, amount, pend, linked, timeout)| TransferInput {
                        id: format!("t{id}"), debit_account: format!("a{dr}"), credit_account: format!("a{cr}"), amount: amount as Units,
                        pending: pend, timeout_seconds: if pend { timeout.map(u64::from) } else { None }, linked, metadata: None,
                    }).collect();
                    let results = l.create_transfers(&inputs, now);
                    prop_assert_eq!(results.len(), inputs.len());
                    for (input, r) in inputs.iter().zip(&results) {
                        if *r == TransferResult::Created {
                            *effects.entry(input.id.clone()).or_default() += 1;
                        }
                    }
                }
                Step::Post(i, a) => { l.post(&format!("t{i}"), a.map(|x| x as Units), now); }
                Step::Void(i) => { l.void(&format!("t{i}"), now); }
                Step::Expire => { l.expire(now); }
                Step::Advance(ms) => now += u64::from(ms) * 10,
            }
            prop_assert!(l.reconcile().is_empty(), "{:?}", l.reconcile());
            prop_assert!(effects.values().all(|&n| n == 1), "an id had two effects");
            let mut net: i128 = 0;
            for a in l.accounts.iter() {
                net += a.balance();
                if a.flags.debits_must_not_exceed_credits {
                    prop_assert!(a.debits_posted + a.debits_pending <= a.credits_posted);
                }
                if a.flags.credits_must_not_exceed_debits {
                    prop_assert!(a.credits_posted + a.credits_pending <= a.debits_posted);
                }
            }
            prop_assert_eq!(net, 0, "postings net to zero");
            let pending_net: i128 = l.accounts.iter().map(|a| a.credits_pending as i128 - a.debits_pending as i128).sum();
            prop_assert_eq!(pending_net, 0);
        }
        prop_assert_eq!(Ledger::from_snapshot(l.to_snapshot()).unwrap(), l);
    }
}
