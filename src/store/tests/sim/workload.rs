//! The simulation's workload: what a seed does (its [`Plan`]) and the
//! scripts its tasks run, drawn from the seed's generator; and the same
//! ops as a plain sequence for the fuzzers' corpora ([`sample_ops`]).

use super::*;


pub(super) const ACCOUNTS: [&str; 4] = ["bank", "agent", "casino", "escrow"];
pub(super) const TRANSFER_IDS: u64 = 12;
pub(super) const SESSIONS: u64 = 5;
/// Whether long-term creates without deduplication may give two live
/// memories the same hash: the case where a restart once changed what a
/// later deduplicating create decided
/// (`deduplication_decides_the_same_after_a_restart`).
pub(super) const LTM_SHARED_HASHES: bool = true;

/// What one seed does and how hostile its world is.
pub(super) struct Plan {
    pub(super) ops: u64,
    pub(super) concurrency: usize,
    pub(super) p_fail: f64,
    pub(super) p_crash: f64,
    pub(super) tick_ms: usize,
    pub(super) config: StoreConfig,
    pub(super) now: Millis,
    pub(super) submitted: u64,
    pub(super) next_task: usize,
    pub(super) next_message: u64,
}

/// The fields of transfer `n`: the same on every retry.
pub(super) fn transfer(n: u64, variant: bool) -> TransferRequest {
    let units = (n % 5 + 1) * 1_000_000 + n * 137 + u64::from(variant);
    let pending = n % 3 == 0;
    TransferRequest {
        id: format!("t{n}"),
        debit_account: ACCOUNTS[(n % 4) as usize].into(),
        credit_account: ACCOUNTS[((n + 1 + n / 4) % 4) as usize].into(),
        amount: format!("{}.{:06}", units / 1_000_000, units % 1_000_000),
        pending,
        timeout_seconds: if pending && n % 2 == 0 { Some(1 + n % 3) } else { None },
        linked: false,
        metadata: if n % 4 == 1 { Some(json!({ "bet": n, "odds": "2.50" }).as_object().unwrap().clone()) } else { None },
    }
}

pub(super) fn setup_ops() -> Vec<Op> {
    let mut ops = vec![Op::Ledger(LedgerOp::CreateAsset { code: "USDC".into(), scale: 6 })];
    for (i, a) in ACCOUNTS.iter().enumerate() {
        let flags = AccountFlags { debits_must_not_exceed_credits: i == 1, ..AccountFlags::default() };
        ops.push(Op::Ledger(LedgerOp::CreateAccount { id: (*a).into(), asset: "USDC".into(), flags, max_transfer: if i == 2 { Some("4.5".into()) } else { None } }));
    }
    ops
}

/// What a task does.
pub(super) enum Script {
    /// One op, retried after storage errors.
    Apply(Box<Op>, u32),
    /// Execute-once: begin, call the outside service if new, complete.
    ExecuteOnce { order: u64, retries: u32 },
    Snapshot,
}

pub(super) fn script(rng: &mut Rng, plan: &mut Plan) -> Script {
    let retries = rng.below(3) as u32;
    let now = plan.now;
    let session = |rng: &mut Rng| format!("s{}", rng.below(SESSIONS as usize));
    let op = match rng.below(100) {
        0..=24 => {
            let n = rng.below(TRANSFER_IDS as usize) as u64;
            let mut transfers = vec![transfer(n, rng.chance(0.15))];
            if rng.chance(0.15) {
                transfers[0].linked = true;
                let m = (n + 1 + rng.below(3) as u64) % TRANSFER_IDS;
                transfers.push(transfer(m, false));
            }
            Op::Ledger(LedgerOp::CreateTransfers { transfers })
        }
        25..=31 => {
            let n = 3 * rng.below(TRANSFER_IDS as usize / 3) as u64;
            let id = format!("t{n}");
            if rng.chance(0.5) {
                let full = units(&transfer(n, false).amount);
                let amount = rng.chance(0.5).then(|| format!("{}.{:06}", full / 2 / 1_000_000, full / 2 % 1_000_000));
                Op::Ledger(LedgerOp::Post { id, amount })
            } else {
                Op::Ledger(LedgerOp::Void { id })
            }
        }
        32..=34 => Op::Ledger(LedgerOp::Expire),
        35..=44 => return Script::ExecuteOnce { order: rng.below(6) as u64, retries },
        45..=57 => {
            let mut s = Session::new(session(rng), 0);
            s.ttl_seconds = rng.chance(0.4).then(|| rng.range(1, 6));
            s.context = rng.chance(0.5).then(|| format!("summary at {now} ").repeat(rng.below(6)));
            s.user_id = rng.chance(0.3).then(|| "u1".to_owned());
            s.data = rng.chance(0.3).then(|| json!({ "cart": ["apple"], "budget": "12.50", "n": now }).as_object().unwrap().clone());
            if rng.chance(0.25) {
                Op::SessionCreate { session: s }
            } else {
                Op::SessionPut { session: s }
            }
        }
        58..=69 => {
            let messages = (0..rng.range(1, 2))
                .map(|_| {
                    plan.next_message += 1;
                    // Now and then an id already used: a refused append.
                    let n = if rng.chance(0.1) { plan.next_message.saturating_sub(3) } else { plan.next_message };
                    Message { id: format!("m{n}"), role: "user".into(), content: format!("turn {n} ✓"), created_at: now, persisted_at: None, tokens: Default::default() }
                })
                .collect();
            Op::SessionAppend { session_id: session(rng), messages }
        }
        70..=73 => Op::SessionDelete { session_id: session(rng) },
        74..=76 => Op::SessionsExpire,
        77..=82 => {
            let n = rng.below(4);
            Op::History(HistoryOp::ToolCachePut {
                session_id: session(rng),
                tool: "search".into(),
                args: format!("{{\"q\":{n}}}"),
                result: json!({ "hits": n, "price": "0.10" }),
                ttl_seconds: Some(rng.range(1, 5)),
            })
        }
        83..=84 => Op::History(HistoryOp::ToolCacheInvalidate { session_id: session(rng), tool: rng.chance(0.5).then(|| "search".to_owned()), args: None }),
        92..=93 => Op::Ltm(LtmOp::Delete { ids: (0..rng.range(1, 3)).map(|_| format!("l{}", rng.below(6))).collect(), forget: false, actor: None }),
        85..=91 => {
            let deduplicate = rng.chance(0.5);
            let records = (0..rng.range(1, 2))
                .map(|_| {
                    let i = rng.below(6);
                    let texts = ["likes green tea", "bets on red", "prefers window seats"];
                    let mut text = texts[rng.below(3)].to_owned();
                    if !deduplicate && !LTM_SHARED_HASHES {
                        // Without deduplication, a text of this id's own: two
                        // live memories never share a hash (see
                        // `deduplication_decides_the_same_after_a_restart`).
                        text = format!("{text} (l{i})");
                    }
                    let mut r = MemoryRecord::new(format!("l{i}"), text, MemoryType::Semantic, now);
                    r.user_id = Some("u1".into());
                    r.refresh_hash();
                    let vector = (0..4).map(|k| if k == 0 { 1.0 } else { (rng.below(2001) as f32 - 1000.0) / 1000.0 }).collect();
                    NewRecord { record: r, vector }
                })
                .collect::<Vec<_>>();
            let mut seen = std::collections::HashSet::new();
            let records = records.into_iter().filter(|r| seen.insert(r.record.id.clone())).collect();
            Op::Ltm(LtmOp::Create { records, deduplicate, embedder: Some("sim-embedder".into()), actor: None })
        }
        94..=95 => {
            let kind = DecisionKind::ALL[rng.below(DecisionKind::ALL.len())];
            let entry = DecisionEntry { seq: 0, ts: 0, kind, text: format!("step at {now}"), data: None, refs: None };
            Op::DecisionAppend { session_id: session(rng), entry }
        }
        // Consent and erasure: a revoke snapshots inside its own apply, so
        // faults land in the middle of it too.
        96 => match rng.below(3) {
            0 => Op::PrivacySet { policy: Policy { require_consent: rng.chance(0.5), ..Policy::default() } },
            1 => Op::ConsentGrant { user_id: "u1".into(), granted_by: "local".into() },
            _ => Op::ConsentRevoke { user_id: "u1".into(), session_user_id: None },
        },
        _ => return Script::Snapshot,
    };
    Script::Apply(Box::new(op), retries)
}

/// Ops of the simulation's workload, applied in order to an engine with the
/// setup ops first (for the fuzzers' corpora): `(op, now)`.
pub(in crate::store::tests) fn sample_ops(seed: u64, n: usize) -> Vec<(Op, Millis)> {
    let mut rng = Rng::new(seed);
    let mut plan = Plan {
        ops: n as u64,
        concurrency: 1,
        p_fail: 0.0,
        p_crash: 0.0,
        tick_ms: 500,
        config: StoreConfig::default(),
        now: 1_700_000_000_000,
        submitted: 0,
        next_task: 0,
        next_message: 0,
    };
    let mut out: Vec<(Op, Millis)> = setup_ops().into_iter().map(|op| (op, plan.now)).collect();
    while out.len() < n {
        plan.now += rng.below(plan.tick_ms) as Millis;
        match script(&mut rng, &mut plan) {
            Script::Apply(op, _) => out.push((*op, plan.now)),
            Script::ExecuteOnce { order, .. } => {
                let params = json!({ "order": order, "amount": "12.50" });
                let key = intent_key("pay", &params);
                out.push((Op::Ledger(LedgerOp::BeginIntent { key: key.clone(), op: "pay".into(), params }), plan.now));
                out.push((Op::Ledger(LedgerOp::CompleteIntent { key, outcome: json!({ "receipt": order }) }), plan.now));
            }
            Script::Snapshot => {}
        }
    }
    out
}
