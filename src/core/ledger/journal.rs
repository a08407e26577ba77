//! The ledger journal: every balance change as an event, chained by BLAKE3
//! so that a lost, reordered or edited event is detected when a snapshot is
//! loaded. Hashes are recomputed on load rather than stored per event.

use serde::{Deserialize, Serialize};

use super::amount::Units;
use crate::core::time::Millis;

/// What happened to a transfer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum EventKind {
    Created,
    Posted,
    Voided,
    Expired,
}

impl EventKind {
    /// The name used in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Created => "created",
            EventKind::Posted => "posted",
            EventKind::Voided => "voided",
            EventKind::Expired => "expired",
        }
    }
}

/// One journal entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    pub kind: EventKind,
    /// Index of the transfer in creation order.
    pub transfer: u32,
    /// The amount moved or released.
    pub amount: Units,
    pub at: Millis,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Journal {
    events: Vec<Event>,
    head: [u8; 32],
}

/// Where to roll a journal back to.
pub struct Mark {
    pub events_len: usize,
    head: [u8; 32],
}

/// The chain step: H(prev ‖ kind ‖ len-prefixed transfer id, accounts ‖ amount ‖ at).
/// `names` are the transfer's id and its debit and credit account ids.
pub fn chain(prev: &[u8; 32], e: &Event, names: [&str; 3]) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    h.update(prev);
    h.update(&[e.kind as u8]);
    for s in names {
        h.update(&(s.len() as u32).to_le_bytes());
        h.update(s.as_bytes());
    }
    h.update(&e.amount.to_le_bytes());
    h.update(&e.at.to_le_bytes());
    *h.finalize().as_bytes()
}

impl Journal {
    /// Appends an event for the transfer `names` (see [`chain`]); returns
    /// its sequence number.
    pub fn append(&mut self, e: Event, names: [&str; 3]) -> u32 {
        self.head = chain(&self.head, &e, names);
        self.events.push(e);
        (self.events.len() - 1) as u32
    }

    pub fn mark(&self) -> Mark {
        Mark { events_len: self.events.len(), head: self.head }
    }

    pub fn rollback(&mut self, mark: Mark) {
        self.events.truncate(mark.events_len);
        self.head = mark.head;
    }

    pub fn event(&self, i: u32) -> &Event {
        &self.events[i as usize]
    }

    pub fn events(&self) -> &[Event] {
        &self.events
    }

    pub fn len(&self) -> usize {
        self.events.len()
    }

    pub fn head_hex(&self) -> String {
        self.head.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Rebuilds a journal from stored events, recomputing the chain.
    /// `names(i)` gives transfer `i`'s id and its two account ids.
    pub fn rebuild<'a>(events: Vec<Event>, names: impl Fn(u32) -> Option<(super::TransferId, [&'a str; 2])>) -> Option<Journal> {
        let mut head = [0; 32];
        let mut buf = [0; 39];
        for e in &events {
            let (id, [dr, cr]) = names(e.transfer)?;
            head = chain(&head, e, [id.as_str(&mut buf), dr, cr]);
        }
        Some(Journal { events, head })
    }
}
