//! An incremental BM25 index over caller-chosen `u64` keys.
//!
//! Postings are per-term vectors of `(slot, tf)`; each document also keeps
//! its own `(term, tf)` list, so removing it touches only its own terms'
//! postings and never rebuilds anything. A query reads only the postings of
//! its own terms and accumulates into a dense score array owned by the
//! caller's [`Bm25Scratch`], so a search allocates nothing in the steady
//! state.
//!
//! Scores are Okapi BM25 with Lucene's always-positive IDF,
//! `ln(1 + (N - df + 0.5) / (df + 0.5))`. Each document's score is summed
//! over the query's distinct terms in the order they first appear in the
//! query, whichever path computes it, so equal states give bit-identical
//! scores. Ties are broken by the smaller key.

use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::core::retrieval::hash::{term_hash, FxHashMap};
use crate::core::retrieval::text::{Analyzer, TokenBuf};

/// BM25's two free parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bm25Params {
    /// Term-frequency saturation. Default [`limits::BM25_K1_DEFAULT`] (0.9, tuned; Lucene uses 1.2).
    pub k1: f32,
    /// Length normalization, 0 (none) to 1 (full). Default [`limits::BM25_B_DEFAULT`] (0.5, tuned; Lucene uses 0.75).
    pub b: f32,
}

impl Default for Bm25Params {
    fn default() -> Self {
        Bm25Params { k1: limits::BM25_K1_DEFAULT, b: limits::BM25_B_DEFAULT }
    }
}

impl Bm25Params {
    /// Checks both parameters are finite and in their documented ranges.
    pub fn validate(&self) -> Result<()> {
        if !(self.k1.is_finite() && (0.0..=limits::BM25_K1_MAX).contains(&self.k1)) {
            return Err(Error::invalid("k1", format!("must be between 0 and {}", limits::BM25_K1_MAX)));
        }
        if !(self.b.is_finite() && (0.0..=1.0).contains(&self.b)) {
            return Err(Error::invalid("b", "must be between 0 and 1"));
        }
        Ok(())
    }
}

/// Which documents a search may return.
#[derive(Clone, Copy)]
pub enum KeyFilter<'a> {
    /// Every document.
    All,
    /// Documents whose key satisfies the predicate. The predicate only sees
    /// documents that match at least one query term.
    Predicate(&'a dyn Fn(u64) -> bool),
    /// Only these keys, sorted ascending without duplicates. A small subset
    /// is scored directly from its documents' own term lists instead of
    /// walking the postings.
    Subset(&'a [u64]),
}

/// Reusable per-caller buffers for [`Bm25Index::search`].
#[derive(Debug, Default)]
pub struct Bm25Scratch {
    acc: Vec<f32>,
    touched: Vec<u32>,
    candidates: Vec<(f32, u32)>,
    query_terms: Vec<(u32, f32)>,
    buf: TokenBuf,
}

/// One posting packed in a `u32`: the slot in the high 24 bits (slots stay
/// below [`SLOTS_MAX`]), the term frequency in the low 8, saturating at 255
/// (where BM25's saturation makes the difference negligible: with k1 = 1.2
/// a tf of 255 already scores 99.5 % of an infinite one).
type Posting = u32;

const SLOTS_MAX: usize = 1 << 24;

fn posting(slot: u32, tf: u32) -> Posting {
    slot << 8 | tf.min(255)
}

fn posting_slot(p: Posting) -> u32 {
    p >> 8
}

fn posting_tf(p: Posting) -> u32 {
    p & 255
}

/// A term's postings. Most terms (word pairs above all) occur in a single
/// document, so that case is held inline rather than in a heap vector.
#[derive(Debug, Clone, Default)]
enum Postings {
    #[default]
    Empty,
    One(Posting),
    Many(Vec<Posting>),
}

impl Postings {
    fn as_slice(&self) -> &[Posting] {
        match self {
            Postings::Empty => &[],
            Postings::One(p) => std::slice::from_ref(p),
            Postings::Many(v) => v,
        }
    }

    fn len(&self) -> usize {
        self.as_slice().len()
    }

    fn is_empty(&self) -> bool {
        matches!(self, Postings::Empty)
    }

    fn push(&mut self, p: Posting) {
        match self {
            Postings::Empty => *self = Postings::One(p),
            Postings::One(first) => *self = Postings::Many(vec![*first, p]),
            Postings::Many(v) => v.push(p),
        }
    }

    /// Removes the posting of `slot`; order is not kept.
    fn remove_slot(&mut self, slot: u32) {
        match self {
            Postings::One(p) if posting_slot(*p) == slot => *self = Postings::Empty,
            Postings::Many(v) => {
                if let Some(pos) = v.iter().position(|&p| posting_slot(p) == slot) {
                    v.swap_remove(pos);
                }
                match v.as_slice() {
                    [] => *self = Postings::Empty,
                    [only] => *self = Postings::One(*only),
                    _ if v.capacity() > 4 * v.len() => v.shrink_to(2 * v.len()),
                    _ => {}
                }
            }
            _ => {}
        }
    }

    fn heap_bytes(&self) -> usize {
        match self {
            Postings::Many(v) => v.capacity() * std::mem::size_of::<Posting>(),
            _ => 0,
        }
    }
}

#[derive(Debug, Default, Clone)]
struct Term {
    hash: u64,
    postings: Postings,
}

#[derive(Debug, Default, Clone)]
struct Doc {
    key: u64,
    /// Tokens, the BM25 document length.
    len: u32,
    /// Distinct term ids, sorted, and their frequencies (saturating at 255).
    term_ids: Box<[u32]>,
    tfs: Box<[u8]>,
}

/// The index. Not serialized: it is derived from the records' text and
/// rebuilt from them on load (see `examples/ltm_quality.rs` for the build
/// time).
#[derive(Debug, Clone)]
pub struct Bm25Index {
    analyzer: Analyzer,
    params: Bm25Params,
    term_ids: FxHashMap<u64, u32>,
    terms: Vec<Term>,
    free_terms: Vec<u32>,
    slots: FxHashMap<u64, u32>,
    docs: Vec<Doc>,
    free_slots: Vec<u32>,
    live_docs: usize,
    total_len: u64,
    postings_total: usize,
}

impl Default for Bm25Index {
    fn default() -> Self {
        Bm25Index::new(Analyzer::default(), Bm25Params::default())
    }
}

impl Bm25Index {
    /// An empty index. Invalid parameters fall back to the defaults; call
    /// [`Bm25Params::validate`] first to refuse them instead.
    pub fn new(analyzer: Analyzer, params: Bm25Params) -> Self {
        let params = if params.validate().is_ok() { params } else { Bm25Params::default() };
        Bm25Index {
            analyzer,
            params,
            term_ids: FxHashMap::default(),
            terms: Vec::new(),
            free_terms: Vec::new(),
            slots: FxHashMap::default(),
            docs: Vec::new(),
            free_slots: Vec::new(),
            live_docs: 0,
            total_len: 0,
            postings_total: 0,
        }
    }

    /// The analyzer this index was built with.
    pub fn analyzer(&self) -> Analyzer {
        self.analyzer
    }

    /// The scoring parameters.
    pub fn params(&self) -> Bm25Params {
        self.params
    }

    /// Number of documents.
    pub fn len(&self) -> usize {
        self.live_docs
    }

    /// Whether the index holds no document.
    pub fn is_empty(&self) -> bool {
        self.live_docs == 0
    }

    /// Whether `key` is indexed.
    pub fn contains(&self, key: u64) -> bool {
        self.slots.contains_key(&key)
    }

    /// Distinct terms currently indexed.
    pub fn vocabulary_len(&self) -> usize {
        self.term_ids.len()
    }

    /// Indexes `text` under `key`, replacing what `key` held before.
    /// Refuses text over [`limits::MEMORY_TEXT_BYTES_MAX`] and a new key
    /// past [`limits::BM25_DOCS_MAX`], changing nothing.
    pub fn add(&mut self, key: u64, text: &str) -> Result<()> {
        if text.len() > limits::MEMORY_TEXT_BYTES_MAX {
            return Err(Error::too_large("text", text.len(), limits::MEMORY_TEXT_BYTES_MAX));
        }
        if !self.slots.contains_key(&key) && self.live_docs >= limits::BM25_DOCS_MAX.min(SLOTS_MAX) {
            return Err(Error::LimitExceeded { what: "documents in the keyword index".into(), limit: limits::BM25_DOCS_MAX as u64 });
        }
        self.remove(key);
        // Intern every token (in order of first appearance, so the layout
        // does not depend on hash order), then count by sorting the ids.
        let analyzer = self.analyzer;
        let mut buf = TokenBuf::default();
        let mut ids: Vec<u32> = Vec::new();
        analyzer.for_each_token(text, &mut buf, |t| ids.push(self.intern(t)));
        let len = u32::try_from(ids.len()).unwrap_or(u32::MAX);
        ids.sort_unstable();
        let mut term_ids: Vec<u32> = Vec::new();
        let mut tfs: Vec<u32> = Vec::new();
        for id in ids {
            match (term_ids.last(), tfs.last_mut()) {
                (Some(&last), Some(tf)) if last == id => *tf += 1,
                _ => {
                    term_ids.push(id);
                    tfs.push(1);
                }
            }
        }
        let slot = match self.free_slots.pop() {
            Some(s) => s,
            None => {
                self.docs.push(Doc::default());
                (self.docs.len() - 1) as u32
            }
        };
        for (&id, &tf) in term_ids.iter().zip(&tfs) {
            if let Some(term) = self.terms.get_mut(id as usize) {
                term.postings.push(posting(slot, tf));
            }
        }
        self.postings_total += term_ids.len();
        if let Some(doc) = self.docs.get_mut(slot as usize) {
            *doc = Doc {
                key,
                len,
                term_ids: term_ids.into_boxed_slice(),
                tfs: tfs.iter().map(|&tf| tf.min(255) as u8).collect(),
            };
        }
        self.slots.insert(key, slot);
        self.live_docs += 1;
        self.total_len += u64::from(len);
        Ok(())
    }

    fn intern(&mut self, t: &str) -> u32 {
        let hash = term_hash(t);
        if let Some(&id) = self.term_ids.get(&hash) {
            return id;
        }
        let term = Term { hash, postings: Postings::Empty };
        let id = match self.free_terms.pop() {
            Some(id) => {
                if let Some(slot) = self.terms.get_mut(id as usize) {
                    *slot = term;
                }
                id
            }
            None => {
                self.terms.push(term);
                (self.terms.len() - 1) as u32
            }
        };
        self.term_ids.insert(hash, id);
        id
    }

    /// Removes `key`. Returns whether it was indexed.
    pub fn remove(&mut self, key: u64) -> bool {
        let Some(slot) = self.slots.remove(&key) else { return false };
        let Some(doc) = self.docs.get_mut(slot as usize) else { return false };
        let term_ids = std::mem::take(&mut doc.term_ids);
        doc.tfs = Box::default();
        let len = std::mem::take(&mut doc.len);
        for &id in term_ids.iter() {
            let Some(term) = self.terms.get_mut(id as usize) else { continue };
            term.postings.remove_slot(slot);
            if term.postings.is_empty() {
                // Recycle the term id so churn does not grow the vocabulary.
                self.term_ids.remove(&term.hash);
                self.free_terms.push(id);
            }
        }
        self.postings_total -= term_ids.len();
        self.free_slots.push(slot);
        self.live_docs -= 1;
        self.total_len -= u64::from(len);
        true
    }

    /// The `k` best documents for `query` under `filter`, written to `out`
    /// as `(key, score)` by descending score, ties by ascending key. A query
    /// with no indexed term returns nothing. `k` is capped at
    /// [`limits::KEYWORD_RESULTS_MAX`]; a query over
    /// [`limits::QUERY_TEXT_BYTES_MAX`] or an unsorted subset is refused.
    pub fn search(
        &self,
        query: &str,
        k: usize,
        filter: KeyFilter<'_>,
        scratch: &mut Bm25Scratch,
        out: &mut Vec<(u64, f32)>,
    ) -> Result<()> {
        out.clear();
        if query.len() > limits::QUERY_TEXT_BYTES_MAX {
            return Err(Error::too_large("query", query.len(), limits::QUERY_TEXT_BYTES_MAX));
        }
        if let KeyFilter::Subset(keys) = filter {
            if keys.windows(2).any(|w| w[0] >= w[1]) {
                return Err(Error::invalid("subset", "keys must be sorted ascending without duplicates"));
            }
        }
        let k = k.min(limits::KEYWORD_RESULTS_MAX);
        if k == 0 || self.live_docs == 0 {
            return Ok(());
        }
        self.query_terms(query, scratch);
        let avgdl = self.total_len as f32 / self.live_docs as f32;
        self.search_weighted(avgdl, k, filter, scratch, out);
        Ok(())
    }

    /// One query's corpus statistics here: what a search over several
    /// indexes (shards) sums, so that each scores with the same IDF and
    /// average length as one index holding every document would. Lists
    /// every distinct query token, known here or not (bounded by
    /// [`limits::QUERY_TEXT_BYTES_MAX`]).
    pub fn query_stats(&self, query: &str, scratch: &mut Bm25Scratch) -> Result<QueryStats> {
        if query.len() > limits::QUERY_TEXT_BYTES_MAX {
            return Err(Error::too_large("query", query.len(), limits::QUERY_TEXT_BYTES_MAX));
        }
        let mut terms: Vec<(u64, u32, u64)> = Vec::new();
        let mut buf = std::mem::take(&mut scratch.buf);
        self.analyzer.for_each_token(query, &mut buf, |t| {
            let hash = term_hash(t);
            match terms.iter_mut().find(|e| e.0 == hash) {
                Some(e) => e.1 = e.1.saturating_add(1),
                None => {
                    let df = self.term_ids.get(&hash).and_then(|&id| self.terms.get(id as usize)).map_or(0, |t| t.postings.len()) as u64;
                    terms.push((hash, 1, df));
                }
            }
        });
        scratch.buf = buf;
        Ok(QueryStats { docs: self.live_docs as u64, total_len: self.total_len, terms })
    }

    /// [`Bm25Index::search`] under corpus statistics summed over several
    /// indexes ([`QueryStats::merge`]): the scores, and so the merged order,
    /// are exactly those of one index holding every document.
    pub fn search_with_stats(&self, stats: &QueryStats, k: usize, filter: KeyFilter<'_>, scratch: &mut Bm25Scratch, out: &mut Vec<(u64, f32)>) -> Result<()> {
        out.clear();
        if let KeyFilter::Subset(keys) = filter {
            if keys.windows(2).any(|w| w[0] >= w[1]) {
                return Err(Error::invalid("subset", "keys must be sorted ascending without duplicates"));
            }
        }
        let k = k.min(limits::KEYWORD_RESULTS_MAX);
        if k == 0 || self.live_docs == 0 || stats.docs == 0 {
            return Ok(());
        }
        // The terms one index would weigh: known somewhere, in order of
        // first appearance, at most QUERY_TERMS_MAX of them.
        let (n, k1) = (stats.docs as f32, self.params.k1);
        scratch.query_terms.clear();
        for &(hash, qtf, df) in stats.terms.iter().filter(|t| t.2 > 0).take(limits::QUERY_TERMS_MAX) {
            if let Some(&id) = self.term_ids.get(&hash) {
                // Associated as `query_terms` does, so the weights are bit for bit equal.
                scratch.query_terms.push((id, qtf as f32 * (idf(n, df as f32) * (k1 + 1.0))));
            }
        }
        let avgdl = stats.total_len as f32 / n;
        self.search_weighted(avgdl, k, filter, scratch, out);
        Ok(())
    }

    /// Scores the documents matching `scratch.query_terms` (term id and
    /// weight) with average length `avgdl`, and writes the top `k`.
    fn search_weighted(&self, avgdl: f32, k: usize, filter: KeyFilter<'_>, scratch: &mut Bm25Scratch, out: &mut Vec<(u64, f32)>) {
        if scratch.query_terms.is_empty() {
            return;
        }
        let (k1, b) = (self.params.k1, self.params.b);
        // Per-document length factor of the denominator.
        let norm = |len: u32| k1 * (1.0 - b + b * (len as f32 / avgdl.max(f32::MIN_POSITIVE)));
        scratch.candidates.clear();

        let subset_direct = match filter {
            KeyFilter::Subset(keys) => {
                let walk: usize = scratch.query_terms.iter().filter_map(|&(id, _)| self.terms.get(id as usize)).map(|t| t.postings.len()).sum();
                keys.len().saturating_mul(4) < walk
            }
            _ => false,
        };
        if let (true, KeyFilter::Subset(keys)) = (subset_direct, filter) {
            for key in keys {
                let Some(&slot) = self.slots.get(key) else { continue };
                let Some(doc) = self.docs.get(slot as usize) else { continue };
                let n = norm(doc.len);
                let mut score = 0.0f32;
                for &(id, weight) in &scratch.query_terms {
                    if let Ok(i) = doc.term_ids.binary_search(&id) {
                        let tf = f32::from(doc.tfs.get(i).copied().unwrap_or(0));
                        score += weight * tf / (tf + n);
                    }
                }
                if score > 0.0 {
                    scratch.candidates.push((score, slot));
                }
            }
        } else {
            if scratch.acc.len() < self.docs.len() {
                scratch.acc.resize(self.docs.len(), 0.0);
            }
            scratch.touched.clear();
            for &(id, weight) in &scratch.query_terms {
                let Some(term) = self.terms.get(id as usize) else { continue };
                for &p in term.postings.as_slice() {
                    let slot = posting_slot(p);
                    let len = self.docs.get(slot as usize).map_or(0, |d| d.len);
                    let tf = posting_tf(p) as f32;
                    let Some(acc) = scratch.acc.get_mut(slot as usize) else { continue };
                    if *acc == 0.0 {
                        scratch.touched.push(slot);
                    }
                    *acc += weight * tf / (tf + norm(len));
                }
            }
            for &slot in &scratch.touched {
                let Some(acc) = scratch.acc.get_mut(slot as usize) else { continue };
                let score = std::mem::take(acc);
                let key = self.docs.get(slot as usize).map_or(0, |d| d.key);
                let keep = match filter {
                    KeyFilter::All => true,
                    KeyFilter::Predicate(p) => p(key),
                    KeyFilter::Subset(keys) => keys.binary_search(&key).is_ok(),
                };
                if keep {
                    scratch.candidates.push((score, slot));
                }
            }
        }
        self.top_k(k, scratch, out);
    }

    /// The score a document matching every known term of `query` would
    /// approach (each term's `idf · (k1 + 1) · qtf`): the best score divided
    /// by it says how much of the query the best document covers, which
    /// fusion reads as keyword search's confidence.
    pub fn score_ceiling(&self, query: &str, scratch: &mut Bm25Scratch) -> f32 {
        self.query_terms(query, scratch);
        scratch.query_terms.iter().map(|t| t.1).sum()
    }

    /// [`Bm25::score_ceiling`] under a whole tenant's statistics: the same
    /// weights, summed in the same order, as one index of every shard's
    /// documents would compute.
    pub fn ceiling_with_stats(&self, stats: &QueryStats) -> f32 {
        let (n, k1) = (stats.docs as f32, self.params.k1);
        stats.terms.iter().filter(|t| t.2 > 0).take(limits::QUERY_TERMS_MAX).map(|&(_, qtf, df)| qtf as f32 * (idf(n, df as f32) * (k1 + 1.0))).sum()
    }

    /// Distinct known query terms with their weight `idf · (k1 + 1) · qtf`,
    /// in order of first appearance.
    fn query_terms(&self, query: &str, scratch: &mut Bm25Scratch) {
        scratch.query_terms.clear();
        let n = self.live_docs as f32;
        let k1 = self.params.k1;
        let mut buf = std::mem::take(&mut scratch.buf);
        let terms = &mut scratch.query_terms;
        self.analyzer.for_each_token(query, &mut buf, |t| {
            let Some(&id) = self.term_ids.get(&term_hash(t)) else { return };
            if let Some(entry) = terms.iter_mut().find(|(i, _)| *i == id) {
                entry.1 += 1.0;
            } else if terms.len() < limits::QUERY_TERMS_MAX {
                terms.push((id, 1.0));
            }
        });
        scratch.buf = buf;
        for (id, weight) in terms.iter_mut() {
            let df = self.terms.get(*id as usize).map_or(0, |t| t.postings.len()) as f32;
            *weight *= idf(n, df) * (k1 + 1.0);
        }
    }

    fn top_k(&self, k: usize, scratch: &mut Bm25Scratch, out: &mut Vec<(u64, f32)>) {
        let key = |slot: u32| self.docs.get(slot as usize).map_or(0, |d| d.key);
        let order = |a: &(f32, u32), b: &(f32, u32)| b.0.total_cmp(&a.0).then_with(|| key(a.1).cmp(&key(b.1)));
        let c = &mut scratch.candidates;
        if c.len() > k {
            c.select_nth_unstable_by(k - 1, order);
            c.truncate(k);
        }
        c.sort_unstable_by(order);
        out.extend(c.iter().map(|&(score, slot)| (key(slot), score)));
    }

    /// Total postings held (one per distinct term per document).
    pub fn postings_len(&self) -> usize {
        self.postings_total
    }

    /// Approximate heap bytes held: every vector's capacity and the hash
    /// tables' buckets (allocator overhead not included).
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let map = |cap: usize, entry: usize| cap * (entry + 1);
        map(self.term_ids.capacity(), size_of::<(u64, u32)>())
            + map(self.slots.capacity(), size_of::<(u64, u32)>())
            + self.terms.capacity() * size_of::<Term>()
            + self.terms.iter().map(|t| t.postings.heap_bytes()).sum::<usize>()
            + self.docs.capacity() * size_of::<Doc>()
            + self.docs.iter().map(|d| d.term_ids.len() * size_of::<u32>() + d.tfs.len()).sum::<usize>()
            + (self.free_terms.capacity() + self.free_slots.capacity()) * size_of::<u32>()
    }
}

/// One query's corpus statistics in one index ([`Bm25Index::query_stats`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct QueryStats {
    /// Live documents.
    pub docs: u64,
    /// Their summed lengths in tokens.
    pub total_len: u64,
    /// Each distinct query token, in order of first appearance: its hash,
    /// its count in the query and its document frequency.
    pub terms: Vec<(u64, u32, u64)>,
}

impl QueryStats {
    /// Sums the statistics of one query from several indexes. They must
    /// list the same tokens in the same order (the same query, analyzer
    /// and build), else the merge is refused.
    pub fn merge(parts: &[QueryStats]) -> Result<QueryStats> {
        let Some(first) = parts.first() else { return Ok(QueryStats::default()) };
        let mut out = QueryStats { docs: 0, total_len: 0, terms: first.terms.iter().map(|&(h, q, _)| (h, q, 0)).collect() };
        for p in parts {
            if p.terms.len() != out.terms.len() || p.terms.iter().zip(&out.terms).any(|(a, b)| a.0 != b.0 || a.1 != b.1) {
                return Err(Error::invalid("stats", "the indexes analyzed the query differently"));
            }
            out.docs = out.docs.saturating_add(p.docs);
            out.total_len = out.total_len.saturating_add(p.total_len);
            for (o, t) in out.terms.iter_mut().zip(&p.terms) {
                o.2 = o.2.saturating_add(t.2);
            }
        }
        Ok(out)
    }
}

/// Lucene's BM25 IDF: positive for every document frequency.
pub fn idf(n: f32, df: f32) -> f32 {
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}
