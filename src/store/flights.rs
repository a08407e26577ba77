//! Single-flight for read-through: concurrent misses of one key make one
//! upstream call. The first caller of a key leads the flight; the others
//! wait for its outcome, then read what it stored (or share its error, so
//! a failing upstream is not called once per waiter).
//!
//! Process-local, like the store's counters: a flight never outlives the
//! process that started it.

use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use crate::core::error::{Error, Result};

#[derive(Default)]
struct Flight {
    outcome: RefCell<Option<Result<()>>>,
    waiters: RefCell<Vec<Waker>>,
}

/// The flights in progress, by key.
#[derive(Default)]
pub struct Flights {
    map: RefCell<HashMap<String, Rc<Flight>>>,
}

/// The caller's part in a flight.
pub enum Turn<'a> {
    /// Make the upstream call, then [`Leader::land`] with its outcome.
    Leader(Leader<'a>),
    /// Another caller made the call: this is its outcome.
    Follower(Result<()>),
}

/// The leader of one flight. Dropped without landing (its future was
/// cancelled), it lands with an error so that no waiter waits forever.
pub struct Leader<'a> {
    flights: &'a Flights,
    key: String,
    flight: Rc<Flight>,
    landed: bool,
}

struct Wait(Rc<Flight>);

impl Future for Wait {
    type Output = Result<()>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
        if let Some(outcome) = self.0.outcome.borrow().as_ref() {
            return Poll::Ready(outcome.clone());
        }
        self.0.waiters.borrow_mut().push(cx.waker().clone());
        Poll::Pending
    }
}

impl Flights {
    /// Joins the flight of `key`, leading it if there is none.
    pub async fn join(&self, key: &str) -> Turn<'_> {
        let existing = self.map.borrow().get(key).cloned();
        match existing {
            Some(flight) => Turn::Follower(Wait(flight).await),
            None => {
                let flight = Rc::new(Flight::default());
                self.map.borrow_mut().insert(key.to_owned(), flight.clone());
                Turn::Leader(Leader { flights: self, key: key.to_owned(), flight, landed: false })
            }
        }
    }

    /// Flights in progress.
    pub fn len(&self) -> usize {
        self.map.borrow().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Leader<'_> {
    /// Ends the flight: every waiter gets `outcome`.
    pub fn land(mut self, outcome: Result<()>) {
        self.finish(outcome);
    }

    fn finish(&mut self, outcome: Result<()>) {
        self.landed = true;
        self.flights.map.borrow_mut().remove(&self.key);
        *self.flight.outcome.borrow_mut() = Some(outcome);
        for w in self.flight.waiters.borrow_mut().drain(..) {
            w.wake();
        }
    }
}

impl Drop for Leader<'_> {
    fn drop(&mut self) {
        if !self.landed {
            self.finish(Err(Error::Internal { detail: format!("the call that led the flight of {:?} was cancelled", self.key) }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::future::join_all;
    use std::cell::Cell;

    /// Polls to completion: every future here is woken by another one, never by I/O.
    fn block_on<F: Future>(f: F) -> F::Output {
        let waker = futures_util::task::noop_waker();
        let mut cx = Context::from_waker(&waker);
        let mut f = std::pin::pin!(f);
        for _ in 0..100_000 {
            if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
                return v;
            }
        }
        panic!("the futures did not finish");
    }

    async fn yield_now() {
        let mut yielded = false;
        std::future::poll_fn(|cx| {
            if yielded {
                Poll::Ready(())
            } else {
                yielded = true;
                cx.waker().wake_by_ref();
                Poll::Pending
            }
        })
        .await
    }

    #[test]
    fn concurrent_joins_make_one_call_and_share_its_outcome() {
        let flights = Flights::default();
        let calls = Cell::new(0);
        let run = |fail: bool| {
            let (flights, calls) = (&flights, &calls);
            async move {
                match flights.join("a/wallet").await {
                    Turn::Leader(l) => {
                        calls.set(calls.get() + 1);
                        // Let the others join before landing.
                        for _ in 0..3 {
                            yield_now().await;
                        }
                        let outcome = if fail { Err(Error::storage("down")) } else { Ok(()) };
                        l.land(outcome.clone());
                        outcome
                    }
                    Turn::Follower(outcome) => outcome,
                }
            }
        };
        let outcomes = block_on(join_all((0..100).map(|_| run(false))));
        assert_eq!(calls.get(), 1);
        assert!(outcomes.iter().all(Result::is_ok));
        assert!(flights.is_empty());
        let outcomes = block_on(join_all((0..10).map(|_| run(true))));
        assert_eq!(calls.get(), 2, "a failure is shared, not retried once per waiter");
        assert!(outcomes.iter().all(|o| o.as_ref().unwrap_err().code() == "storage_error"));
    }

    #[test]
    fn a_dropped_leader_releases_its_waiters() {
        let flights = Flights::default();
        let leader = block_on(flights.join("k"));
        let Turn::Leader(l) = leader else { panic!("first caller leads") };
        drop(l);
        assert!(flights.is_empty());
        assert!(matches!(block_on(flights.join("k")), Turn::Leader(_)));
    }
}
