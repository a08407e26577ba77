//! The model the simulation checks the store against: the reference
//! engine, fed the op of every log record that landed, and the ledger as
//! this file understands it.

use super::*;

// ---------------------------------------------------------------------------
// The model: the reference engine and the ledger as this file understands it.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Held {
    Posted,
    Pending,
    PendingPosted(u128),
    Voided,
    Expired,
}

#[derive(Debug, Clone)]
pub(super) struct ModelTransfer {
    pub(super) debit: String,
    pub(super) credit: String,
    pub(super) amount: u128,
    pub(super) held: Held,
}

pub(super) struct Model {
    pub(super) seed: u64,
    pub(super) reference: Engine,
    /// Each landed record's op and what the reference answered, by seq - 1.
    pub(super) log: Vec<(Op, Applied)>,
    pub(super) transfers: BTreeMap<String, ModelTransfer>,
}

/// Minor units of an amount this file wrote (scale 6).
pub(super) fn units(s: &str) -> u128 {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    let frac = format!("{frac:0<6}");
    int.parse::<u128>().unwrap() * 1_000_000 + frac.parse::<u128>().unwrap()
}

impl Model {
    /// Feeds the reference with the records that landed, in order.
    pub(super) fn absorb(&mut self, world: &World) {
        let landed = std::mem::take(&mut *world.landed.borrow_mut());
        for l in landed {
            let seed = self.seed;
            let expected = self.reference.last_seq() + 1;
            assert_eq!(l.seq, expected, "seed {seed}: log record {} landed when {expected} was next: a gap or an overwrite", l.seq);
            let entry = decode_log_entry(l.seq, &l.bytes).unwrap_or_else(|e| panic!("seed {seed}: record {} does not decode: {e}", l.seq));
            assert!(entry.op == l.op && entry.now_ms == l.now, "seed {seed}: record {} decodes to {:?}, task {} applied {:?}", l.seq, entry.op, l.task, l.op);
            let applied = self.reference.apply(&l.op, l.now).unwrap_or_else(|e| panic!("seed {seed}: the store logged op {} ({:?}) that the reference refuses: {e}", l.seq, l.op));
            self.observe(&l.op, &applied, world);
            world.trace(|| format!("landed #{}: {:?} -> {:?}", l.seq, short(&l.op), short_applied(&applied)));
            self.log.push((l.op, applied));
        }
    }

    /// Follows the ledger's transfers from the results the reference gave.
    pub(super) fn observe(&mut self, op: &Op, applied: &Applied, world: &World) {
        let seed = self.seed;
        match (op, applied) {
            (Op::Ledger(LedgerOp::CreateTransfers { transfers }), Applied::Ledger(LedgerApplied::Transfers(results))) => {
                assert_eq!(transfers.len(), results.len(), "seed {seed}: one result per transfer");
                for (req, (id, result)) in transfers.iter().zip(results) {
                    assert_eq!(&req.id, id, "seed {seed}: results in request order");
                    match result {
                        TransferResult::Created => {
                            let held = if req.pending { Held::Pending } else { Held::Posted };
                            let t = ModelTransfer { debit: req.debit_account.clone(), credit: req.credit_account.clone(), amount: units(&req.amount), held };
                            assert!(self.transfers.insert(id.clone(), t).is_none(), "seed {seed}: transfer {id} created twice");
                            world.tally.borrow_mut().transfers_created += 1;
                        }
                        TransferResult::Exists => {
                            let t = self.transfers.get(id).unwrap_or_else(|| panic!("seed {seed}: {id} `exists` but was never created"));
                            assert!(t.debit == req.debit_account && t.credit == req.credit_account && t.amount == units(&req.amount), "seed {seed}: {id} `exists` with other fields");
                            world.tally.borrow_mut().transfer_retries_exist += 1;
                        }
                        _ => {}
                    }
                }
            }
            (Op::Ledger(LedgerOp::Post { id, amount }), Applied::Ledger(LedgerApplied::Resolved(t))) => {
                let m = self.transfers.get_mut(id).unwrap_or_else(|| panic!("seed {seed}: posted unknown {id}"));
                assert_eq!(m.held, Held::Pending, "seed {seed}: posted {id} that was not pending");
                let posted = amount.as_deref().map_or(m.amount, units);
                m.held = Held::PendingPosted(posted);
                assert_eq!((t.state, t.posted_amount), (TransferState::PendingPosted, Some(posted)), "seed {seed}: post of {id}");
            }
            (Op::Ledger(LedgerOp::Void { id }), Applied::Ledger(LedgerApplied::Resolved(t))) => {
                let m = self.transfers.get_mut(id).unwrap_or_else(|| panic!("seed {seed}: voided unknown {id}"));
                assert_eq!(m.held, Held::Pending, "seed {seed}: voided {id} that was not pending");
                m.held = Held::Voided;
                assert_eq!(t.state, TransferState::PendingVoided, "seed {seed}: void of {id}");
            }
            (_, Applied::Ledger(LedgerApplied::Expired(ids))) => {
                for id in ids {
                    let m = self.transfers.get_mut(id).unwrap_or_else(|| panic!("seed {seed}: expired unknown {id}"));
                    assert_eq!(m.held, Held::Pending, "seed {seed}: expired {id} that was not pending");
                    m.held = Held::Expired;
                }
            }
            _ => {}
        }
    }

    /// Balances, counts and reconciliation of `ledger` against the model.
    pub(super) fn check_ledger(&self, ledger: &Ledger, context: &str) {
        let seed = self.seed;
        let mut sums: BTreeMap<&str, [u128; 4]> = BTreeMap::new();
        for (id, t) in &self.transfers {
            let (amount, posted) = match t.held {
                Held::Posted => (t.amount, true),
                Held::Pending => (t.amount, false),
                Held::PendingPosted(p) => (p, true),
                Held::Voided | Held::Expired => (0, true),
            };
            let (d, c) = if posted { (0, 1) } else { (2, 3) };
            sums.entry(&t.debit).or_default()[d] += amount;
            sums.entry(&t.credit).or_default()[c] += amount;
            let held = ledger.transfer(id).unwrap_or_else(|| panic!("seed {seed} {context}: transfer {id} was created and is gone"));
            let state = match t.held {
                Held::Posted => TransferState::Posted,
                Held::Pending => TransferState::Pending,
                Held::PendingPosted(_) => TransferState::PendingPosted,
                Held::Voided => TransferState::PendingVoided,
                Held::Expired => TransferState::PendingExpired,
            };
            assert_eq!(held.state, state, "seed {seed} {context}: transfer {id}");
        }
        for a in ledger.accounts() {
            let expected = sums.get(a.id.as_str()).copied().unwrap_or_default();
            let found = [a.debits_posted, a.credits_posted, a.debits_pending, a.credits_pending];
            assert_eq!(found, expected, "seed {seed} {context}: balances of {} (debits/credits posted, pending)", a.id);
        }
        assert_eq!(ledger.counts().0, self.transfers.len(), "seed {seed} {context}: the ledger holds one transfer per id created");
        let diffs = ledger.reconcile();
        assert!(diffs.is_empty(), "seed {seed} {context}: reconcile: {diffs:?}");
    }

    /// Execute-once: each call made once, after its intent was durable.
    pub(super) fn check_intents(&self, ledger: &Ledger, world: &World, context: &str) {
        let seed = self.seed;
        let ext = world.external.borrow();
        for (key, e) in ext.iter() {
            assert_eq!(e.calls, 1, "seed {seed} {context}: {key} called {} times", e.calls);
            let intent = ledger.intent(key).unwrap_or_else(|| panic!("seed {seed} {context}: {key} was called but its intent is not durable"));
            if let Some(o) = &intent.outcome {
                assert_eq!(o, &e.outcome, "seed {seed} {context}: {key} recorded another outcome than the call's");
            }
        }
        for i in ledger.open_intents() {
            assert!(i.outcome.is_none());
        }
        // An outcome is recorded only for a call that was made.
        let open: Vec<&str> = ledger.open_intents().iter().map(|i| i.key.as_str()).collect();
        for key in ext.keys() {
            let i = ledger.intent(key).unwrap();
            assert_eq!(i.outcome.is_none(), open.contains(&key.as_str()), "seed {seed} {context}: open_intents lists {key}");
        }
    }

    /// The whole state of `store` equals the reference, and the ledger checks hold.
    pub(super) fn check_store(&self, store: &Store<FaultBackend>, world: &World, context: &str) {
        let seed = self.seed;
        let r = run(store.read(|e| {
            if e != &self.reference {
                panic!("seed {seed} {context}: the store's state differs from the reference: {}", diff(e, &self.reference));
            }
            self.check_ledger(e.ledger(), context);
            self.check_intents(e.ledger(), world, context);
        }));
        r.unwrap_or_else(|e| panic!("seed {seed} {context}: read failed: {e}"));
    }
}

/// Where two engines differ, through their public views.
pub(in super::super) fn diff(a: &Engine, b: &Engine) -> String {
    let mut out = Vec::new();
    if a.last_seq() != b.last_seq() {
        out.push(format!("last_seq {} vs {}", a.last_seq(), b.last_seq()));
    }
    let (sa, sb) = (a.list_sessions(0, None, 0, 1_000), b.list_sessions(0, None, 0, 1_000));
    if sa != sb {
        out.push(format!("sessions {:?} vs {:?}", sa.sessions, sb.sessions));
    } else {
        for id in &sa.sessions {
            if a.session(id, 0) != b.session(id, 0) {
                out.push(format!("session {id}: {:?} vs {:?}", a.session(id, 0), b.session(id, 0)));
            }
        }
    }
    if a.ledger() != b.ledger() {
        out.push(format!("ledger counts {:?} vs {:?}, journal {} vs {}", a.ledger().counts(), b.ledger().counts(), a.ledger().journal_head(), b.ledger().journal_head()));
    }
    if a.longterm() != b.longterm() {
        let (la, lb) = (a.longterm(), b.longterm());
        let records = |l: &crate::core::longterm::LongTerm| l.records().cloned().collect::<Vec<_>>();
        let vectors = |l: &crate::core::longterm::LongTerm| l.index().map(|i| i.live_entries()).unwrap_or_default();
        if records(la) != records(lb) {
            out.push(format!("long-term records {:?} vs {:?}", records(la), records(lb)));
        }
        if vectors(la) != vectors(lb) {
            out.push(format!("long-term vectors {:?} vs {:?}", vectors(la), vectors(lb)));
        }
        out.push(format!("long-term {} vs {} records", la.len(), lb.len()));
    }
    if a.tool_ttls() != b.tool_ttls() {
        out.push(format!("tool TTLs {:?} vs {:?}", a.tool_ttls(), b.tool_ttls()));
    }
    let agents = |e: &Engine| e.agent_ids().map(|id| (id.to_owned(), e.agent(id).cloned())).collect::<Vec<_>>();
    if agents(a) != agents(b) {
        out.push(format!("agents {:?} vs {:?}", agents(a), agents(b)));
    }
    for id in &sa.sessions {
        if a.archived(id, 0, usize::MAX) != b.archived(id, 0, usize::MAX) {
            out.push(format!("archive of {id}"));
        }
        let (ca, cb) = (a.tool_cache_entries(id, 0), b.tool_cache_entries(id, 0));
        if ca != cb {
            out.push(format!("tool cache of {id}: {ca:?} vs {cb:?}"));
        }
    }
    if a.episodes() != b.episodes() {
        out.push(format!("episodes {:?} vs {:?}", a.episodes(), b.episodes()));
    }
    if a.services() != b.services() {
        out.push(format!("services {:?} vs {:?}", a.services(), b.services()));
    }
    if a.agent_state() != b.agent_state() {
        out.push(format!("agent state {:?} vs {:?}", a.agent_state(), b.agent_state()));
    }
    if out.is_empty() {
        out.push("nothing a public view shows (tool caches of sessions gone, or expired entries)".into());
    }
    out.join("; ")
}

pub(super) fn short(op: &Op) -> String {
    let s = format!("{op:?}");
    s.chars().take(160).collect()
}

pub(super) fn short_applied(a: &Applied) -> String {
    let s = format!("{a:?}");
    s.chars().take(120).collect()
}
