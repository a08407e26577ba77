//! A record as a split moves it between shards (issue 21): taken whole,
//! with its vector and its history, and put back exactly as it was, not
//! through a create (which would stamp a new version).

use super::versions::Version;
use super::*;

impl LongTerm {
    /// Checks that `record` with `vector` (embedded by `embedder`) can be
    /// moved in, without changing anything: a batch is checked whole
    /// before any of it is applied. `fresh`: records of the batch not held
    /// here yet, counted against the cap.
    pub fn check_move_in(&self, record: &MemoryRecord, vector: &[f32], embedder: Option<&str>, fresh: usize) -> Result<()> {
        record.validate()?;
        check_components(vector)?;
        self.check_embedder(embedder, vector.len())?;
        if !self.starts_afresh(embedder, vector.len()) {
            check_vector(self.dim(), vector)?;
        }
        if self.records.len().saturating_add(fresh) > limits::LTM_RECORDS_MAX {
            return Err(Error::LimitExceeded { what: "long-term memories".into(), limit: limits::LTM_RECORDS_MAX as u64 });
        }
        Ok(())
    }

    /// Puts `record` (checked by [`LongTerm::check_move_in`]) with its
    /// vector and history, replacing what this store holds under its id.
    pub fn move_in(&mut self, record: MemoryRecord, vector: &[f32], versions: Vec<Version>, embedder: Option<&str>) -> Result<()> {
        self.claim_embedder(embedder, vector.len());
        self.index_mut(vector.len())?;
        let id = record.id.clone();
        self.put(record, vector, 0)?;
        if versions.is_empty() {
            self.histories.take(&id);
            Ok(())
        } else {
            self.histories.replace(&id, versions, true)
        }
    }

    /// Drops the record `id` and its history (a split collecting what its
    /// new shard now holds); answers whether it was here.
    pub fn move_out(&mut self, id: &str) -> bool {
        let had = self.remove(id).is_some();
        self.histories.take(id);
        had
    }

    /// The vector stored for the record `id`.
    pub fn vector_of(&self, id: &str) -> Option<Vec<f32>> {
        let key = self.ids.get(id)?;
        self.index.as_ref()?.get(*key)
    }
}
