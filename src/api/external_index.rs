//! The host side of an external vector index (issue 21, item 6): an async
//! contract a Worker could meet with Vectorize, and [`LocalFake`], an exact
//! in-memory implementation that tests and local runs use. No remote code:
//! the contract carries Vectorize's limits (ids of at most 64 bytes, at most
//! 100 hits a query) so that what works on the fake fits the real service.

use std::cell::RefCell;
use std::collections::BTreeMap;

use futures_util::future::LocalBoxFuture;

use crate::core::error::{Error, Result, VectorCode};
use crate::core::limits;
use crate::core::longterm::external::{order, ExternalHit};
use crate::core::vector::distance::dot_f32;

/// One vector to index under a record id.
#[derive(Debug, Clone, PartialEq)]
pub struct ExternalItem {
    pub id: String,
    pub vector: Vec<f32>,
}

/// A tenant-wide vector index behind the search API.
pub trait ExternalIndex {
    /// Inserts or replaces vectors by id.
    fn upsert<'a>(&'a self, items: &'a [ExternalItem]) -> LocalBoxFuture<'a, Result<()>>;
    /// Removes ids; unknown ids are not an error.
    fn delete<'a>(&'a self, ids: &'a [String]) -> LocalBoxFuture<'a, Result<()>>;
    /// The `k` most similar vectors, best first, equal scores by id.
    fn query<'a>(&'a self, vector: &'a [f32], k: usize) -> LocalBoxFuture<'a, Result<Vec<ExternalHit>>>;
}

/// An exact external index in memory: cosine similarity over unit vectors.
#[derive(Debug, Default)]
pub struct LocalFake {
    rows: RefCell<BTreeMap<String, Vec<f32>>>,
    dim: usize,
}

impl LocalFake {
    /// An empty index of `dim`-component vectors.
    pub fn new(dim: usize) -> LocalFake {
        LocalFake { rows: RefCell::new(BTreeMap::new()), dim }
    }

    /// Vectors held.
    pub fn len(&self) -> usize {
        self.rows.borrow().len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.rows.borrow().is_empty()
    }

    fn unit(&self, v: &[f32]) -> Result<Vec<f32>> {
        if v.len() != self.dim {
            return Err(Error::vector(VectorCode::DimensionMismatch, format!("{} components, the index holds {}", v.len(), self.dim)));
        }
        let norm = dot_f32(v, v).sqrt();
        if !norm.is_finite() {
            return Err(Error::vector(VectorCode::NonFinite, "components must be finite"));
        }
        if norm == 0.0 {
            return Err(Error::vector(VectorCode::ZeroVector, "a zero vector has no direction"));
        }
        Ok(v.iter().map(|x| x / norm).collect())
    }
}

fn check_id(id: &str) -> Result<()> {
    if id.is_empty() || id.len() > limits::EXTERNAL_ID_BYTES_MAX {
        return Err(Error::invalid("id", format!("an external index takes ids of 1 to {} bytes", limits::EXTERNAL_ID_BYTES_MAX)));
    }
    Ok(())
}

impl ExternalIndex for LocalFake {
    fn upsert<'a>(&'a self, items: &'a [ExternalItem]) -> LocalBoxFuture<'a, Result<()>> {
        Box::pin(async move {
            if items.len() > limits::EXTERNAL_UPSERT_BATCH_MAX {
                return Err(Error::LimitExceeded { what: "external index upsert batch".into(), limit: limits::EXTERNAL_UPSERT_BATCH_MAX as u64 });
            }
            // All checked before any is written: a bad item changes nothing.
            let mut rows = Vec::with_capacity(items.len());
            for item in items {
                check_id(&item.id)?;
                rows.push((item.id.clone(), self.unit(&item.vector)?));
            }
            self.rows.borrow_mut().extend(rows);
            Ok(())
        })
    }

    fn delete<'a>(&'a self, ids: &'a [String]) -> LocalBoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let mut rows = self.rows.borrow_mut();
            for id in ids {
                rows.remove(id);
            }
            Ok(())
        })
    }

    fn query<'a>(&'a self, vector: &'a [f32], k: usize) -> LocalBoxFuture<'a, Result<Vec<ExternalHit>>> {
        Box::pin(async move {
            if k == 0 || k > limits::EXTERNAL_TOP_K_MAX {
                return Err(Error::invalid("k", format!("an external index answers 1 to {} hits", limits::EXTERNAL_TOP_K_MAX)));
            }
            let q = self.unit(vector)?;
            let mut hits: Vec<ExternalHit> = self.rows.borrow().iter().map(|(id, v)| ExternalHit { id: id.clone(), score: dot_f32(&q, v) }).collect();
            hits.sort_unstable_by(order);
            hits.truncate(k);
            Ok(hits)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::now_or_never;

    fn run<T>(f: LocalBoxFuture<'_, Result<T>>) -> Result<T> {
        now_or_never(f).expect("the fake never waits")
    }

    #[test]
    fn the_fake_is_exact_and_keeps_the_services_limits() {
        let fake = LocalFake::new(3);
        let items: Vec<ExternalItem> = (0..5).map(|i| ExternalItem { id: format!("r{i}"), vector: vec![1.0, i as f32, 0.5] }).collect();
        run(fake.upsert(&items)).unwrap();
        let hits = run(fake.query(&[1.0, 4.0, 0.5], 3)).unwrap();
        assert_eq!(hits.iter().map(|h| h.id.as_str()).collect::<Vec<_>>(), ["r4", "r3", "r2"]);
        assert!((hits[0].score - 1.0).abs() < 1e-6, "the same direction scores 1");
        run(fake.delete(&["r4".to_owned()])).unwrap();
        assert_eq!(run(fake.query(&[1.0, 4.0, 0.5], 1)).unwrap()[0].id, "r3");
        // Refusals change nothing.
        let long = ExternalItem { id: "x".repeat(limits::EXTERNAL_ID_BYTES_MAX + 1), vector: vec![1.0, 0.0, 0.0] };
        let bad = [ExternalItem { id: "ok".into(), vector: vec![1.0, 0.0, 0.0] }, long];
        assert_eq!(run(fake.upsert(&bad)).unwrap_err().code(), "invalid_input");
        assert_eq!(run(fake.upsert(&[ExternalItem { id: "nan".into(), vector: vec![f32::NAN, 0.0, 0.0] }])).unwrap_err().code(), "non_finite");
        assert_eq!(run(fake.upsert(&[ExternalItem { id: "short".into(), vector: vec![1.0] }])).unwrap_err().code(), "dimension_mismatch");
        assert_eq!(fake.len(), 4);
        assert_eq!(run(fake.query(&[1.0, 0.0, 0.0], limits::EXTERNAL_TOP_K_MAX + 1)).unwrap_err().code(), "invalid_input");
        assert_eq!(run(fake.query(&[0.0, 0.0, 0.0], 1)).unwrap_err().code(), "zero_vector");
    }
}
