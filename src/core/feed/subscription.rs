//! One live subscriber's position and flow control.
//!
//! A host (the Worker's Durable Object) keeps one [`Subscription`] per open
//! WebSocket or event stream; on a hibernating WebSocket it lives in the
//! socket's attachment, so it is plain data. The rules it enforces:
//! - **No duplicate, no gap.** An event at or below `sent_seq` is never
//!   sent again, and `sent_seq` moves past filtered events too, so a
//!   subscriber that resumes with `since = last seq received` misses
//!   nothing it asked for.
//! - **Bounded buffering.** Bytes sent and not yet acknowledged stay under
//!   [`limits::FEED_SUBSCRIBER_BUFFER_BYTES_MAX`]; an event that would pass
//!   it is refused ([`Offer::Overflow`]) and the host closes the subscriber
//!   with [`CLOSE_SLOW_CONSUMER`].

use serde::{Deserialize, Serialize};

use super::{FeedEvent, Interest};
use crate::core::error::{Error, Result};
use crate::core::limits;

/// WebSocket close code for a subscriber that fell
/// [`limits::FEED_SUBSCRIBER_BUFFER_BYTES_MAX`] behind. The close reason
/// says `since=N`: reconnect with it and nothing is lost.
pub const CLOSE_SLOW_CONSUMER: u16 = 4008;

/// What to do with one event for one subscriber.
#[derive(Debug, PartialEq, Eq)]
pub enum Offer {
    /// Already sent, or filtered out.
    Skip,
    /// Send this JSON text.
    Send(String),
    /// Sending would pass the buffer limit: close the subscriber.
    Overflow,
}

/// One subscriber's filter, position and unacknowledged bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Subscription {
    /// The `kinds` filter as given (validated when the subscription opened).
    pub kinds: Option<String>,
    /// The `keys` filter as given.
    pub keys: Option<String>,
    /// The last seq this subscriber has been brought past.
    pub sent_seq: u64,
    /// Event bytes sent since the subscription opened.
    pub sent_bytes: u64,
    /// Of those, the bytes the subscriber has acknowledged.
    pub acked_bytes: u64,
    /// `(seq, sent_bytes after it)` checkpoints, oldest first, to credit an
    /// ack of a seq below `sent_seq`.
    pub marks: Vec<(u64, u64)>,
}

impl Subscription {
    /// A subscription positioned after `since`, with its filter checked
    /// (400 `invalid_query` for an unknown kind).
    pub fn open(kinds: Option<&str>, keys: Option<&str>, since: u64) -> Result<(Subscription, Interest)> {
        let interest = Interest::parse(kinds, keys)?;
        let sub = Subscription { kinds: kinds.map(str::to_owned), keys: keys.map(str::to_owned), sent_seq: since, sent_bytes: 0, acked_bytes: 0, marks: Vec::new() };
        Ok((sub, interest))
    }

    /// The filter, parsed again (it was valid when the subscription opened).
    pub fn interest(&self) -> Result<Interest> {
        Interest::parse(self.kinds.as_deref(), self.keys.as_deref())
    }

    /// Bytes sent and not acknowledged.
    pub fn unacked_bytes(&self) -> u64 {
        self.sent_bytes - self.acked_bytes
    }

    /// Decides about `e`, and counts it as sent when the answer is
    /// [`Offer::Send`].
    pub fn offer(&mut self, e: &FeedEvent, interest: &Interest) -> Offer {
        if e.seq <= self.sent_seq {
            return Offer::Skip;
        }
        if !interest.admits(e) {
            self.sent_seq = e.seq;
            return Offer::Skip;
        }
        let text = match serde_json::to_string(e) {
            Ok(t) => t,
            // An event is ids, counts and a fixed kind: it always encodes.
            Err(_) => return Offer::Skip,
        };
        self.send_text(e.seq, text)
    }

    /// Counts `text` (about position `seq`) as sent, unless it would pass
    /// the buffer limit. For messages the host makes itself (a
    /// `resync_required` notice).
    pub fn send_text(&mut self, seq: u64, text: String) -> Offer {
        let bytes = text.len() as u64;
        if self.unacked_bytes() + bytes > limits::FEED_SUBSCRIBER_BUFFER_BYTES_MAX as u64 {
            return Offer::Overflow;
        }
        self.sent_seq = self.sent_seq.max(seq);
        self.sent_bytes += bytes;
        let spacing = (limits::FEED_SUBSCRIBER_BUFFER_BYTES_MAX / 16) as u64;
        let last_mark = self.marks.last().map_or(self.acked_bytes, |m| m.1);
        if self.sent_bytes - last_mark >= spacing {
            if self.marks.len() == limits::FEED_ACK_MARKS_MAX {
                // Unreachable while marks are spaced by 1/16 of the buffer;
                // dropping the oldest only makes acks credit less.
                self.marks.remove(0);
            }
            self.marks.push((self.sent_seq, self.sent_bytes));
        }
        Offer::Send(text)
    }

    /// The subscriber has processed everything up to `seq`.
    pub fn ack(&mut self, seq: u64) -> Result<()> {
        if seq > self.sent_seq {
            return Err(Error::invalid("ack", format!("{seq} is past the last seq sent, {}", self.sent_seq)));
        }
        if seq == self.sent_seq {
            self.acked_bytes = self.sent_bytes;
            self.marks.clear();
            return Ok(());
        }
        let covered = self.marks.iter().take_while(|m| m.0 <= seq).count();
        if let Some(&(_, bytes)) = covered.checked_sub(1).and_then(|i| self.marks.get(i)) {
            self.acked_bytes = self.acked_bytes.max(bytes);
        }
        self.marks.drain(..covered);
        Ok(())
    }

    /// Applies one message from the subscriber: `{"ack": seq}`.
    pub fn receive(&mut self, text: &str) -> Result<()> {
        if text.len() > limits::FEED_CLIENT_MESSAGE_BYTES_MAX {
            return Err(Error::too_large("subscriber message", text.len(), limits::FEED_CLIENT_MESSAGE_BYTES_MAX));
        }
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Ack {
            ack: u64,
        }
        let m: Ack = serde_json::from_str(text).map_err(|e| Error::InvalidJson { detail: format!("expected {{\"ack\": seq}}: {e}") })?;
        self.ack(m.ack)
    }
}

/// The notice sent instead of events when `since` is older than what is
/// kept: reload state, then follow from `last_seq`.
pub fn resync_notice(last_seq: u64) -> String {
    format!("{{\"seq\":{last_seq},\"kind\":\"resync_required\",\"key\":\"\",\"last_seq\":{last_seq}}}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(seq: u64, kind: &'static str, key: &str) -> FeedEvent {
        FeedEvent { seq, ts: 0, kind, key: key.into(), count: None, ids: Vec::new() }
    }

    #[test]
    fn sends_each_seq_once_and_moves_past_filtered_events() {
        let (mut s, all) = Subscription::open(None, None, 3).unwrap();
        assert_eq!(s.offer(&ev(3, "working_memory.updated", "a"), &all), Offer::Skip, "at since: already seen");
        assert!(matches!(s.offer(&ev(4, "working_memory.updated", "a"), &all), Offer::Send(_)));
        assert_eq!(s.offer(&ev(4, "working_memory.updated", "a"), &all), Offer::Skip, "never twice");
        let (mut f, only_b) = Subscription::open(None, Some("b"), 0).unwrap();
        assert_eq!(f.offer(&ev(1, "working_memory.updated", "a"), &only_b), Offer::Skip);
        assert_eq!(f.sent_seq, 1, "a filtered event still moves the position");
        assert!(matches!(f.offer(&ev(2, "working_memory.updated", "b"), &only_b), Offer::Send(_)));
    }

    #[test]
    fn an_unknown_kind_is_refused_when_the_subscription_opens() {
        assert_eq!(Subscription::open(Some("nope.nope"), None, 0).unwrap_err().code(), "invalid_query");
    }

    #[test]
    fn a_consumer_that_never_acks_overflows_at_the_buffer_limit_and_acks_release_it() {
        let (mut s, all) = Subscription::open(None, None, 0).unwrap();
        let mut seq = 0;
        let overflow_at = loop {
            seq += 1;
            match s.offer(&ev(seq, "working_memory.updated", "session-with-a-name"), &all) {
                Offer::Send(_) => {}
                Offer::Overflow => break seq,
                Offer::Skip => unreachable!(),
            }
        };
        assert!(s.unacked_bytes() <= limits::FEED_SUBSCRIBER_BUFFER_BYTES_MAX as u64);
        assert_eq!(s.sent_seq, overflow_at - 1, "the refused event is not counted as sent");
        assert!(s.marks.len() <= 17, "{} marks", s.marks.len());
        // A partial ack credits the marks it covers, conservatively.
        let before = s.unacked_bytes();
        s.ack(s.sent_seq / 2).unwrap();
        assert!(s.unacked_bytes() < before, "{} of {before}", s.unacked_bytes());
        s.ack(s.sent_seq).unwrap();
        assert_eq!(s.unacked_bytes(), 0);
        assert!(matches!(s.offer(&ev(overflow_at, "working_memory.updated", "x"), &all), Offer::Send(_)));
    }

    #[test]
    fn acks_are_checked() {
        let (mut s, all) = Subscription::open(None, None, 0).unwrap();
        s.offer(&ev(1, "working_memory.updated", "a"), &all);
        assert_eq!(s.receive(r#"{"ack": 2}"#).unwrap_err().code(), "invalid_input");
        assert_eq!(s.receive("hello").unwrap_err().code(), "invalid_json");
        assert_eq!(s.receive(&" ".repeat(1000)).unwrap_err().code(), "payload_too_large");
        s.receive(r#"{"ack": 1}"#).unwrap();
        assert_eq!(s.unacked_bytes(), 0);
    }

    #[test]
    fn the_resync_notice_is_json_with_the_last_seq() {
        let v: serde_json::Value = serde_json::from_str(&resync_notice(42)).unwrap();
        assert_eq!(v["kind"], "resync_required");
        assert_eq!(v["last_seq"], 42);
    }
}
