//! A sharded tenant's export as a stream (issue 21): one file in the open
//! export format, written page by page, so neither the front nor any shard
//! holds the whole of it and its size is not bounded by either's memory.
//!
//! The front asks each shard for its head (header, key counter, state),
//! then pages of its sessions, records and histories
//! ([`crate::core::engine::export_page`]), and writes them as
//! [`crate::core::engine::export_shard`] says. The shards are asked
//! through [`ExportShards`], so the same [`Exporter`] runs in the Worker
//! (calls to Durable Objects) and in native tests (stores in memory);
//! [`export_step`] is a shard's side.
//!
//! The file is not a point-in-time snapshot of the tenant (shards are read
//! one after another, as before), but each record is in it at most once:
//! records made after the heads are left out, and a split that flips the
//! map under the export cuts the stream (a shard answers `shard_moved`),
//! which the end line then reports as a cut file to any importer.

use std::collections::HashSet;

use futures_util::future::LocalBoxFuture;
use serde::{Deserialize, Serialize};

use crate::core::engine::export_page::{ExportHead, ExportHolds, ExportPage, ExportPart};
use crate::core::engine::export_shard::{end_line, longterm_line, merged_header, merged_state, rebased};
use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::shard::{Bucket, ShardId, ShardMap};
use crate::core::time::Millis;
use crate::store::{Backend, Store};

/// What the front asks a shard for: one flat object, the fields a step
/// does not use left out.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ExportAsk {
    pub step: ExportStep,
    /// The buckets the shard owns under the export's map.
    pub buckets: Vec<Bucket>,
    /// Whether records carry their vectors.
    #[serde(default)]
    pub vectors: bool,
    /// [`ExportStep::Page`]: the part, its cursor, and the items a page
    /// walks at most (absent or past it: [`limits::SHARD_EXPORT_PAGE_ITEMS_MAX`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part: Option<ExportPart>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items_max: Option<usize>,
    /// [`ExportStep::Page`] and [`ExportStep::Holds`]: the shard's cut.
    #[serde(default)]
    pub keys_below: u64,
    /// [`ExportStep::Holds`]: the ids asked (at most [`limits::SHARD_EXPORT_PAGE_ITEMS_MAX`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ids: Vec<String>,
}

/// A step of a shard's export.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExportStep {
    /// Its [`ExportHead`].
    #[default]
    Head,
    /// An [`ExportPage`].
    Page,
    /// Its [`ExportHolds`].
    Holds,
}

/// A shard's side of [`ExportAsk`], answered in the step's wire form
/// ([`ExportHead::to_text`] and the like).
pub async fn export_step<B: Backend>(store: &Store<B>, body: &[u8], now: Millis) -> Result<Vec<u8>> {
    let ask: ExportAsk = super::parse_json(body)?;
    let own = super::moves::Moving::new(store, &ask.buckets)?;
    let text = match ask.step {
        ExportStep::Head => store.read(|e| e.export_head(&own, ask.vectors, now)).await??.to_text(),
        ExportStep::Page => {
            let part = ask.part.ok_or_else(|| Error::invalid("part", "a page names its part"))?;
            let items_max = ask.items_max.unwrap_or(limits::SHARD_EXPORT_PAGE_ITEMS_MAX);
            store.read(|e| e.export_page(&own, part, ask.after.as_deref(), ask.keys_below, ask.vectors, items_max)).await??.to_text()
        }
        ExportStep::Holds => {
            if ask.ids.len() > limits::SHARD_EXPORT_PAGE_ITEMS_MAX {
                return Err(Error::LimitExceeded { what: "ids in one export ask".into(), limit: limits::SHARD_EXPORT_PAGE_ITEMS_MAX as u64 });
            }
            store.read(|e| e.export_holds(&own, &ask.ids, ask.keys_below)).await?.to_text()
        }
    };
    Ok(text.into_bytes())
}

/// How the front reaches a tenant's shards.
pub trait ExportShards {
    /// Shard `shard`'s answer to `ask`, in the step's wire form (a refusal
    /// as its typed error).
    fn ask<'a>(&'a self, shard: ShardId, ask: &'a ExportAsk) -> LocalBoxFuture<'a, Result<Vec<u8>>>;
}

/// An answer's text.
fn text(shard: ShardId, bytes: &[u8]) -> Result<&str> {
    std::str::from_utf8(bytes).map_err(|_| Error::Internal { detail: format!("shard {shard}'s export answer is not UTF-8") })
}

/// The head ask of a shard owning `buckets`.
pub fn head_ask(buckets: Vec<Bucket>, vectors: bool) -> ExportAsk {
    ExportAsk { step: ExportStep::Head, buckets, vectors, ..ExportAsk::default() }
}

/// A sharded tenant's export under way: [`Exporter::next_chunk`] until `None`.
pub struct Exporter<S> {
    src: S,
    /// Every shard of the map, in its order, with its buckets.
    shards: Vec<(ShardId, Vec<Bucket>)>,
    /// Each shard's cut (its key counter at its head) and key base.
    cuts: Vec<u64>,
    bases: Vec<u64>,
    vectors: bool,
    /// The part being written; `None`: the state and the end line are left.
    part: Option<ExportPart>,
    /// The shard being read (an index into `shards`) and its cursor.
    at: usize,
    after: Option<String>,
    state: Vec<String>,
    /// Items a page walks at most (see [`ExportStep::Page`]).
    page_items: Option<usize>,
    /// Lines written so far, for the end line.
    lines: usize,
    done: bool,
}

impl<S: ExportShards> Exporter<S> {
    /// An export of the shards of `map`, from their `heads` (one per shard,
    /// asked with [`head_ask`]; a refusal among them is the caller's to
    /// answer before anything is written). Answers the exporter and the
    /// file's first chunk, its header.
    pub fn new(src: S, map: &ShardMap, vectors: bool, heads: Vec<(ShardId, Vec<u8>)>) -> Result<(Exporter<S>, String)> {
        let heads: Vec<(ShardId, ExportHead)> = heads.into_iter().map(|(s, bytes)| Ok((s, ExportHead::from_text(text(s, &bytes)?)?))).collect::<Result<_>>()?;
        let shards: Vec<(ShardId, Vec<Bucket>)> = map.shards().into_iter().map(|s| (s, map.buckets_of(s))).collect();
        if heads.iter().map(|(s, _)| *s).ne(shards.iter().map(|(s, _)| *s)) {
            return Err(Error::Internal { detail: "an export's heads are not the map's shards".into() });
        }
        let state_bytes: usize = heads.iter().flat_map(|(_, h)| &h.state).map(String::len).sum();
        if state_bytes > limits::SHARD_EXPORT_BYTES_MAX {
            return Err(Error::too_large("a sharded tenant's state lines", state_bytes, limits::SHARD_EXPORT_BYTES_MAX));
        }
        let refs: Vec<(ShardId, &ExportHead)> = heads.iter().map(|(s, h)| (*s, h)).collect();
        let header = merged_header(&refs)?;
        let state = merged_state(&refs)?;
        let cuts: Vec<u64> = heads.iter().map(|(_, h)| h.next_key).collect();
        let mut bases = Vec::with_capacity(cuts.len());
        let mut base = 0u64;
        for cut in &cuts {
            bases.push(base);
            base = base.checked_add(*cut).ok_or_else(|| Error::Internal { detail: "record keys overflow".into() })?;
        }
        let mut ex = Exporter { src, shards, cuts, bases, vectors, part: Some(ExportPart::Sessions), at: 0, after: None, state, page_items: None, lines: 0, done: false };
        let mut first = String::new();
        ex.push(&mut first, &header);
        Ok((ex, first))
    }

    /// Pages of at most `items` items walked (a test's small pages; the
    /// default and the most: [`limits::SHARD_EXPORT_PAGE_ITEMS_MAX`]).
    pub fn page_items(mut self, items: usize) -> Self {
        self.page_items = Some(items);
        self
    }

    fn push(&mut self, out: &mut String, line: &str) {
        out.push_str(line);
        out.push('\n');
        self.lines += 1;
    }

    /// The next chunk of the file (a page's lines), `None` past its end.
    pub async fn next_chunk(&mut self) -> Result<Option<String>> {
        loop {
            if self.done {
                return Ok(None);
            }
            let mut out = String::new();
            let Some(part) = self.part else {
                for line in std::mem::take(&mut self.state) {
                    self.push(&mut out, &line);
                }
                out.push_str(&end_line(self.lines));
                out.push('\n');
                self.done = true;
                return Ok(Some(out));
            };
            if self.at == self.shards.len() {
                (self.at, self.after) = (0, None);
                self.part = match part {
                    ExportPart::Sessions => Some(ExportPart::Memories),
                    ExportPart::Memories => Some(ExportPart::Versions),
                    ExportPart::Versions => None,
                };
                if self.part == Some(ExportPart::Memories) {
                    let total = self.bases.last().copied().unwrap_or(0).saturating_add(self.cuts.last().copied().unwrap_or(0));
                    self.push(&mut out, &longterm_line(total));
                    return Ok(Some(out));
                }
                continue;
            }
            let (shard, buckets) = (self.shards[self.at].0, self.shards[self.at].1.clone());
            let ask = ExportAsk { step: ExportStep::Page, buckets, vectors: self.vectors, part: Some(part), after: self.after.take(), items_max: self.page_items, keys_below: self.cuts[self.at], ids: Vec::new() };
            let page = ExportPage::from_text(text(shard, &self.src.ask(shard, &ask).await?)?)?;
            let dropped = self.orphans_dropped(&page.orphans).await?;
            for (i, line) in page.lines.iter().enumerate() {
                if dropped.contains(&i) {
                    continue;
                }
                let line = if part == ExportPart::Memories { rebased(line, self.bases[self.at])? } else { line.clone() };
                self.push(&mut out, &line);
            }
            match page.next {
                Some(next) => self.after = Some(next),
                None => self.at += 1,
            }
            if !out.is_empty() {
                return Ok(Some(out));
            }
        }
    }

    /// Of the histories the shard being read holds of records it does not
    /// own (`orphans`: their lines' places and ids), the places of those
    /// not written: a record's that another shard owns, or that a shard
    /// before this one holds a history of (a deleted record's history is
    /// written once, from the first shard holding one).
    async fn orphans_dropped(&self, orphans: &[(usize, String)]) -> Result<HashSet<usize>> {
        if orphans.is_empty() {
            return Ok(HashSet::new());
        }
        let ids: Vec<String> = orphans.iter().map(|(_, id)| id.clone()).collect();
        let others: Vec<usize> = (0..self.shards.len()).filter(|&i| i != self.at).collect();
        let (mut held, mut earlier) = (HashSet::new(), HashSet::new());
        for group in others.chunks(limits::SHARD_FANOUT_BRANCHING_MAX) {
            let asks: Vec<(usize, ExportAsk)> = group.iter().map(|&i| (i, ExportAsk { step: ExportStep::Holds, buckets: self.shards[i].1.clone(), keys_below: self.cuts[i], ids: ids.clone(), ..ExportAsk::default() })).collect();
            let answers = futures_util::future::join_all(asks.iter().map(|(i, ask)| self.src.ask(self.shards[*i].0, ask))).await;
            for ((i, _), answer) in asks.iter().zip(answers) {
                let holds = ExportHolds::from_text(text(self.shards[*i].0, &answer?)?)?;
                held.extend(holds.held);
                if *i < self.at {
                    earlier.extend(holds.histories);
                }
            }
        }
        Ok(orphans.iter().filter(|(_, id)| held.contains(id) || earlier.contains(id)).map(|(i, _)| *i).collect())
    }

    /// The whole file, `first` (from [`Exporter::new`]) and every chunk
    /// after it, at most `bytes_max` (`payload_too_large` past it).
    #[cfg(test)]
    pub async fn collect(mut self, first: String, bytes_max: usize) -> Result<String> {
        let mut text = first;
        while let Some(chunk) = self.next_chunk().await? {
            text.push_str(&chunk);
            if text.len() > bytes_max {
                return Err(Error::too_large("a sharded tenant's export", text.len(), bytes_max));
            }
        }
        Ok(text)
    }
}

/// A replica in export form is published as the export streams.
impl<S: ExportShards> crate::store::ExportSource for Exporter<S> {
    async fn next_chunk(&mut self) -> Result<Option<String>> {
        Exporter::next_chunk(self).await
    }
}
