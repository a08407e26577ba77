//! The change feed's live surfaces on a tenant's Durable Object:
//! `GET /v1/events` upgraded to a WebSocket (hibernatable: an idle
//! subscriber costs no duration) or answered as `text/event-stream`.
//!
//! Each subscriber's position and flow control is a
//! [`Subscription`]; a WebSocket keeps it in its attachment, so it survives
//! hibernation, and an event stream keeps it in memory (a stream holds the
//! object awake anyway). Events reach subscribers through the store's
//! listener, which runs after the write is durable.
//!
//! Gap-free resume: the replay is read from the store's recent events and
//! the subscriber is registered with no `await` in between, so no write can
//! land after the replay and before the subscriber is live.

use std::cell::RefCell;
use std::rc::Rc;

use futures_channel::mpsc::{unbounded, UnboundedSender};
use futures_util::StreamExt;
use worker::{Headers, Request, Response, State, WebSocket, WebSocketIncomingMessage, WebSocketPair};

use crate::core::error::{Error, Result};
use crate::core::feed::{resync_notice, FeedEvent, Interest, Offer, Subscription, CLOSE_SLOW_CONSUMER};
use crate::core::limits;
use crate::store::{Backend, Listener, Store};

/// How a subscriber asked to follow the feed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    WebSocket,
    EventStream,
}

/// An open event stream.
struct Stream {
    sub: Rc<RefCell<Subscription>>,
    interest: Interest,
    tx: UnboundedSender<(u64, Vec<u8>)>,
}

/// The tenant's live subscribers.
pub struct Hub {
    state: Rc<State>,
    streams: RefCell<Vec<Stream>>,
}

fn internal(e: worker::Error) -> Error {
    Error::Internal { detail: e.to_string() }
}

/// One server-sent event: `id` is the seq, so a reconnecting `EventSource`
/// resumes by itself (`Last-Event-ID`).
fn sse_frame(seq: u64, json: &str) -> Vec<u8> {
    format!("id: {seq}\ndata: {json}\n\n").into_bytes()
}

fn slow_reason(since: u64) -> String {
    format!("slow consumer: resume with since={since}")
}

/// The last frame of an event stream whose reader fell too far behind.
fn sse_close(since: u64) -> Vec<u8> {
    format!("event: close\ndata: {{\"code\":{CLOSE_SLOW_CONSUMER},\"reason\":\"{}\",\"since\":{since}}}\n\n", slow_reason(since)).into_bytes()
}

impl Hub {
    pub fn new(state: Rc<State>) -> Hub {
        Hub { state, streams: RefCell::new(Vec::new()) }
    }

    /// The store listener that fans each event out to every subscriber.
    pub fn listener(self: &Rc<Self>) -> Listener {
        let hub = self.clone();
        Box::new(move |e| hub.deliver(e))
    }

    /// Live subscribers (WebSockets and event streams).
    pub fn subscribers(&self) -> usize {
        self.state.get_websockets().len() + self.streams.borrow().len()
    }

    fn deliver(&self, e: &FeedEvent) {
        for ws in self.state.get_websockets() {
            let Ok(Some(mut sub)) = ws.deserialize_attachment::<Subscription>() else { continue };
            let Ok(interest) = sub.interest() else { continue };
            let before = sub.sent_seq;
            match sub.offer(e, &interest) {
                Offer::Skip if sub.sent_seq == before => {}
                Offer::Skip => {
                    let _ = ws.serialize_attachment(&sub);
                }
                Offer::Send(text) => {
                    let _ = ws.send_with_str(&text);
                    let _ = ws.serialize_attachment(&sub);
                }
                Offer::Overflow => close_slow(&ws, sub.sent_seq),
            }
        }
        self.streams.borrow_mut().retain(|s| {
            let mut sub = s.sub.borrow_mut();
            match sub.offer(e, &s.interest) {
                Offer::Skip => !s.tx.is_closed(),
                Offer::Send(text) => s.tx.unbounded_send((e.seq, sse_frame(e.seq, &text))).is_ok(),
                Offer::Overflow => {
                    let _ = s.tx.unbounded_send((sub.sent_seq, sse_close(sub.sent_seq)));
                    false
                }
            }
        });
    }

    /// Serves `GET /v1/events` when it asks to follow live; `None` for a
    /// plain page request.
    pub async fn open<B: Backend>(&self, store: &Store<B>, req: &Request, query: &[(String, String)]) -> Result<Option<Response>> {
        let headers = req.headers();
        let header = |name: &str| headers.get(name).ok().flatten();
        let mode = if header("upgrade").is_some_and(|v| v.eq_ignore_ascii_case("websocket")) {
            Mode::WebSocket
        } else if header("accept").is_some_and(|v| v.contains("text/event-stream")) {
            Mode::EventStream
        } else {
            return Ok(None);
        };
        let param = |name: &str| query.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
        let since_text = param("since").map(str::to_owned).or_else(|| (mode == Mode::EventStream).then(|| header("last-event-id")).flatten());
        let since = match since_text {
            None => None,
            Some(v) => Some(v.trim().parse::<u64>().map_err(|_| Error::InvalidQuery { param: "since".into(), reason: format!("must be a non-negative integer, got {v:?}") })?),
        };
        let (mut sub, interest) = Subscription::open(param("kinds"), param("keys"), 0)?;
        if self.subscribers() >= limits::FEED_SUBSCRIBERS_MAX {
            return Err(Error::Overloaded { what: "live feed subscribers of this namespace".into(), limit: limits::FEED_SUBSCRIBERS_MAX as u64 });
        }
        let page = store.events_since(since, &interest, limits::FEED_EVENTS_KEPT).await?;
        // From here to the registration below there is no `await`.
        sub.sent_seq = since.unwrap_or(page.last_seq);
        let mut replay: Vec<(u64, String)> = Vec::new();
        let mut overflow = false;
        if page.resync_required {
            if let Offer::Send(text) = sub.send_text(page.last_seq, resync_notice(page.last_seq)) {
                replay.push((page.last_seq, text));
            }
        } else {
            for e in &page.events {
                match sub.offer(e, &interest) {
                    Offer::Send(text) => replay.push((e.seq, text)),
                    Offer::Overflow => {
                        overflow = true;
                        break;
                    }
                    Offer::Skip => {}
                }
            }
        }
        if !overflow {
            sub.sent_seq = page.last_seq;
        }
        match mode {
            Mode::WebSocket => {
                let pair = WebSocketPair::new().map_err(internal)?;
                self.state.accept_web_socket(&pair.server);
                for (_, text) in &replay {
                    pair.server.send_with_str(text).map_err(internal)?;
                }
                if overflow {
                    close_slow(&pair.server, sub.sent_seq);
                } else {
                    pair.server.serialize_attachment(&sub).map_err(internal)?;
                }
                let resp = Response::from_websocket(pair.client).map_err(internal)?;
                // A client that authenticated by subprotocol gets it echoed,
                // or its browser drops the connection.
                let offered = header("sec-websocket-protocol").is_some_and(|p| p.split(',').any(|x| x.trim() == super::auth::WS_PROTOCOL));
                if offered {
                    let h = worker::Headers::new();
                    h.set("sec-websocket-protocol", super::auth::WS_PROTOCOL).map_err(internal)?;
                    return Ok(Some(resp.with_headers(h)));
                }
                Ok(Some(resp))
            }
            Mode::EventStream => {
                let (tx, rx) = unbounded::<(u64, Vec<u8>)>();
                for (seq, text) in &replay {
                    let _ = tx.unbounded_send((*seq, sse_frame(*seq, text)));
                }
                let sub = Rc::new(RefCell::new(sub));
                if overflow {
                    let since = sub.borrow().sent_seq;
                    let _ = tx.unbounded_send((since, sse_close(since)));
                } else {
                    self.streams.borrow_mut().push(Stream { sub: sub.clone(), interest, tx });
                }
                // The stream's reads are its acks.
                let body = rx.map(move |(seq, bytes)| {
                    let _ = sub.borrow_mut().ack(seq);
                    Ok::<Vec<u8>, worker::Error>(bytes)
                });
                let headers = Headers::new();
                headers.set("content-type", "text/event-stream; charset=utf-8").map_err(internal)?;
                headers.set("cache-control", "no-store").map_err(internal)?;
                Ok(Some(Response::from_stream(body).map_err(internal)?.with_headers(headers)))
            }
        }
    }
}

/// Closes a subscriber that fell too far behind, and stops delivering to it.
fn close_slow(ws: &WebSocket, since: u64) {
    let _ = ws.serialize_attachment(Option::<Subscription>::None);
    let _ = ws.close(Some(CLOSE_SLOW_CONSUMER), Some(slow_reason(since)));
}

/// A message from a WebSocket subscriber: an ack. A bad one is answered
/// with an `error` event; the subscription stays open.
pub fn receive(ws: &WebSocket, message: WebSocketIncomingMessage) {
    let Ok(Some(mut sub)) = ws.deserialize_attachment::<Subscription>() else { return };
    let r = match message {
        WebSocketIncomingMessage::String(text) => sub.receive(&text),
        WebSocketIncomingMessage::Binary(_) => Err(Error::invalid("message", "expected a text message {\"ack\": seq}")),
    };
    match r {
        Ok(()) => {
            let _ = ws.serialize_attachment(&sub);
        }
        Err(e) => {
            let notice = serde_json::json!({ "kind": "error", "code": e.code(), "detail": e.to_string() });
            let _ = ws.send_with_str(notice.to_string());
        }
    }
}
