//! The in-memory backend: a sorted map of bytes. Clones share the same map,
//! so a test can "restart" by opening a new store over a clone.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

use super::{Backend, KeyRange};
use crate::core::error::{Error, Result};

/// A shared in-memory key-value map.
#[derive(Debug, Clone, Default)]
pub struct MemoryBackend {
    pub(super) map: Rc<RefCell<BTreeMap<String, Vec<u8>>>>,
    /// Successful writes left before every write fails (fault injection).
    pub(super) writes_left: Rc<Cell<Option<u64>>>,
    /// Whether [`Backend::commit_head`] is one atomic write, as on a
    /// backend with transactions (Durable Object SQL). Default `false`.
    pub(super) transactions: Rc<Cell<bool>>,
}

impl MemoryBackend {
    /// An empty map.
    pub fn new() -> MemoryBackend {
        MemoryBackend::default()
    }

    /// An empty map whose head commits are atomic with the deletes they
    /// retire, as on a backend with transactions.
    pub fn with_transactions() -> MemoryBackend {
        let backend = MemoryBackend::default();
        backend.transactions.set(true);
        backend
    }

    /// Lets `n` more writes (puts or deletes) succeed, then fails every write,
    /// as a process that dies mid-run would. `None` heals the backend.
    pub fn fail_writes_after(&self, n: Option<u64>) {
        self.writes_left.set(n);
    }

    /// A copy of the raw contents.
    pub fn dump(&self) -> BTreeMap<String, Vec<u8>> {
        self.map.borrow().clone()
    }

    /// Overwrites one raw value (tests corrupt stores with it).
    pub fn poke(&self, key: &str, value: Vec<u8>) {
        self.map.borrow_mut().insert(key.to_owned(), value);
    }

    fn take_write(&self) -> Result<()> {
        match self.writes_left.get() {
            None => Ok(()),
            Some(0) => Err(Error::storage("injected write failure")),
            Some(n) => {
                self.writes_left.set(Some(n - 1));
                Ok(())
            }
        }
    }
}

impl Backend for MemoryBackend {
    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        Ok(self.map.borrow().get(key).cloned())
    }

    async fn put(&self, key: &str, value: Vec<u8>) -> Result<()> {
        self.take_write()?;
        self.map.borrow_mut().insert(key.to_owned(), value);
        Ok(())
    }

    async fn delete(&self, keys: &[String]) -> Result<()> {
        self.take_write()?;
        let mut map = self.map.borrow_mut();
        for k in keys {
            map.remove(k);
        }
        Ok(())
    }

    async fn list(&self, range: KeyRange<'_>) -> Result<Vec<String>> {
        Ok(self.entries(range, |k, _| k.clone()))
    }

    async fn get_range(&self, range: KeyRange<'_>) -> Result<Vec<(String, Vec<u8>)>> {
        Ok(self.entries(range, |k, v| (k.clone(), v.clone())))
    }

    /// One write, all or nothing, when built [`MemoryBackend::with_transactions`].
    async fn commit_head(&self, key: &str, value: &[u8], retire: &[KeyRange<'_>]) -> Result<bool> {
        if !self.transactions.get() {
            return Ok(false);
        }
        self.take_write()?;
        let mut map = self.map.borrow_mut();
        map.retain(|k, _| !retire.iter().any(|r| r.contains(k)));
        map.insert(key.to_owned(), value.to_vec());
        Ok(true)
    }
}

impl MemoryBackend {
    /// Seeks to the range's first key, as a sorted store does.
    fn entries<T>(&self, range: KeyRange<'_>, mut f: impl FnMut(&String, &Vec<u8>) -> T) -> Vec<T> {
        let from = range.prefix.max(range.start).to_owned();
        self.map.borrow().range(from..).take_while(|(k, _)| range.contains(k)).take(range.limit).map(|(k, v)| f(k, v)).collect()
    }
}
