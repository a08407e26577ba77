//! Retrieval quality and speed of the long-term-memory primitives on the
//! rustdocs set (`../shared/data/rustdocs`, see its README: only `text` is
//! indexed).
//!
//! ```text
//! cargo run --release --example ltm_quality [-- options]
//!   --data DIR            the rustdocs folder, a folder in the
//!                         conversational set's format (tests/data/convmem:
//!                         memories.jsonl, queries.jsonl with `relevant` ids,
//!                         *.minilm.f32), or the dialog set's
//!                         (tests/data/convbench: dialogs.jsonl, questions.jsonl
//!                         with `evidence` turn ids; each question is searched
//!                         within its own dialog only)
//!   --split dev|test      convbench: only that split's questions
//!   --analyzer code|natural    the preset to start from (default: BM25's)
//!   --stop short|english  --contractions on|off  --numbers on|off
//!   --static PATH         the static embedder asset (default
//!                         assets/embedder/minilm-static.bin)
//!   --stem none|plural|light|english   --no-split   --no-stop   --k1 X   --b X
//!   --dim N               embedder dimensions (default 384)
//!   --skip-embed          keyword search only
//!   --neighbours          convbench: index each turn with its session
//!                         neighbours' text (the alternative to `expand`)
//!   --alphas A,B,...      fusion priors to grid (default 0.3,0.5,0.7)
//!   --check               exit non-zero when a shipped fusion rule falls
//!                         more than 0.005 nDCG@10 below its better input
//! ```
//!
//! Prints nDCG@10, recall@5 and recall@10 (hits / relevant), hit@10 (some
//! relevant item in the top 10) and MRR@10 per query kind and overall for BM25, the offline embedders (hashed and distilled static,
//! exact cosine), the bundled MiniLM vectors (exact cosine) and their
//! fusions, plus queries/s and texts embedded per second.

use std::collections::BTreeMap;
use std::time::Instant;

use edgemem::core::limits;
use edgemem::core::retrieval::bm25::{Bm25Index, Bm25Params, Bm25Scratch, KeyFilter};
use edgemem::core::retrieval::embed::Embedder;
use edgemem::core::retrieval::{MixedEmbedder, StaticEmbedder};
use edgemem::core::retrieval::fuse;
use edgemem::core::retrieval::rank::{self, TextNorm};
use edgemem::core::retrieval::text::{Analyzer, Stem, StopList};

struct Query {
    kind: String,
    text: String,
    relevant: Vec<u64>,
    /// Its line in the queries file (its row in the query vectors).
    row: usize,
    /// The rows this query may see (its dialog's turns, ascending); all
    /// rows when empty.
    scope: std::rc::Rc<Vec<u64>>,
}

#[derive(Default, Clone, Copy)]
struct Sums {
    n: usize,
    ndcg: f64,
    recall5: f64,
    recall: f64,
    hit: f64,
    mrr: f64,
}

#[derive(Default)]
struct Report {
    by_kind: BTreeMap<String, Sums>,
}

impl Report {
    fn add(&mut self, kind: &str, ranked: &[u64], relevant: &[u64]) {
        let mut dcg = 0.0;
        let mut hits = 0usize;
        let mut hits5 = 0usize;
        let mut rr = 0.0;
        for (i, key) in ranked.iter().take(10).enumerate() {
            if relevant.contains(key) {
                dcg += 1.0 / ((i + 2) as f64).log2();
                hits += 1;
                hits5 += usize::from(i < 5);
                if rr == 0.0 {
                    rr = 1.0 / (i + 1) as f64;
                }
            }
        }
        let ideal: f64 = (0..relevant.len().min(10)).map(|i| 1.0 / ((i + 2) as f64).log2()).sum();
        for k in [kind, "overall"] {
            let s = self.by_kind.entry(k.to_string()).or_default();
            s.n += 1;
            s.ndcg += if ideal > 0.0 { dcg / ideal } else { 0.0 };
            s.recall += if relevant.is_empty() { 0.0 } else { hits as f64 / relevant.len() as f64 };
            s.recall5 += if relevant.is_empty() { 0.0 } else { hits5 as f64 / relevant.len() as f64 };
            s.hit += if hits > 0 { 1.0 } else { 0.0 };
            s.mrr += rr;
        }
    }

    fn ndcg(&self) -> f64 {
        self.by_kind.get("overall").map_or(0.0, |s| s.ndcg / s.n.max(1) as f64)
    }

    fn print(&self, name: &str, qps: Option<f64>) {
        for (kind, s) in &self.by_kind {
            let n = s.n as f64;
            println!(
                "{name:<28} {kind:<12} n={:<5} nDCG@10={:.4} recall@5={:.4} recall@10={:.4} hit@10={:.4} MRR@10={:.4}",
                s.n,
                s.ndcg / n,
                s.recall5 / n,
                s.recall / n,
                s.hit / n,
                s.mrr / n
            );
        }
        if let Some(qps) = qps {
            println!("{name:<28} queries/s={qps:.0}");
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let flag = |name: &str| args.iter().any(|a| a == name);
    let dir = arg("--data").unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/data/rustdocs").to_string());

    let mut analyzer = match arg("--analyzer").as_deref() {
        Some("code") => Analyzer::code(),
        Some("natural") => Analyzer::natural(),
        _ => Analyzer::default(),
    };
    if let Some(s) = arg("--stem") {
        analyzer.stem = match s.as_str() {
            "none" => Stem::None,
            "plural" => Stem::Plural,
            "english" => Stem::English,
            _ => Stem::Light,
        };
    }
    if let Some(s) = arg("--stop") {
        analyzer.stop_list = if s == "english" { StopList::English } else { StopList::Short };
    }
    if let Some(s) = arg("--contractions") {
        analyzer.contractions = s == "on";
    }
    if let Some(s) = arg("--numbers") {
        analyzer.numbers = s == "on";
    }
    if flag("--no-split") {
        analyzer.split_identifiers = false;
    }
    if flag("--no-stop") {
        analyzer.stop_words = false;
    }
    if flag("--no-bigrams") {
        analyzer.bigrams = false;
    }
    let mut params = Bm25Params::default();
    if let Some(k1) = arg("--k1") {
        params.k1 = k1.parse()?;
    }
    if let Some(b) = arg("--b") {
        params.b = b.parse()?;
    }
    params.validate()?;

    let data = load(&dir, arg("--split").as_deref())?;
    let (mut passages, queries, minilm_docs, minilm_queries) = (data.passages, data.queries, data.minilm_docs, data.minilm_queries);
    // The "neighbours in the index" variant of issue 19: each turn indexed
    // with the text of the turns before and after it in its session.
    if flag("--neighbours") {
        let own = passages.clone();
        for (i, text) in passages.iter_mut().enumerate() {
            for j in [i.wrapping_sub(1), i + 1] {
                if data.sessions.get(j).is_some_and(|s| s.is_some() && *s == data.sessions[i]) {
                    text.push(' ');
                    text.push_str(&own[j]);
                }
            }
        }
    }
    println!("{} passages, {} queries; analyzer {analyzer:?}, {params:?}", passages.len(), queries.len());

    // ---- BM25 ----
    let t = Instant::now();
    let mut buf = edgemem::core::retrieval::text::TokenBuf::default();
    let mut tokens = 0usize;
    for text in &passages {
        analyzer.for_each_token(text, &mut buf, |_| tokens += 1);
    }
    println!("analysis alone {:.0} ms, {tokens} tokens", t.elapsed().as_secs_f64() * 1e3);
    let t = Instant::now();
    let mut index = Bm25Index::new(analyzer, params);
    for (row, text) in passages.iter().enumerate() {
        index.add(row as u64, text)?;
    }
    let build = t.elapsed();
    println!(
        "bm25 build {:.0} ms ({:.1} µs/passage), {} terms, {} postings, {:.1} MB heap",
        build.as_secs_f64() * 1e3,
        build.as_secs_f64() * 1e6 / passages.len() as f64,
        index.vocabulary_len(),
        index.postings_len(),
        index.heap_bytes() as f64 / 1e6
    );
    let mut scratch = Bm25Scratch::default();
    let mut out = Vec::new();
    let mut keyword: Vec<Vec<(u64, f32)>> = Vec::with_capacity(queries.len());
    let ceilings: Vec<f32> = queries.iter().map(|q| index.score_ceiling(&q.text, &mut scratch)).collect();
    let t = Instant::now();
    for q in &queries {
        index.search(&q.text, 100, scope(q), &mut scratch, &mut out)?;
        keyword.push(out.clone());
    }
    let qps = queries.len() as f64 / t.elapsed().as_secs_f64();
    // Timed again at k = 10, what a caller asks for.
    let t = Instant::now();
    for q in &queries {
        index.search(&q.text, 10, scope(q), &mut scratch, &mut out)?;
    }
    let qps10 = queries.len() as f64 / t.elapsed().as_secs_f64();
    let mut report = Report::default();
    for (q, hits) in queries.iter().zip(&keyword) {
        let ranked: Vec<u64> = hits.iter().map(|h| h.0).collect();
        report.add(&q.kind, &ranked, &q.relevant);
    }
    report.print("bm25", Some(qps10));
    println!("bm25 queries/s at k=100: {qps:.0}");

    if flag("--skip-embed") {
        return Ok(());
    }

    // ---- Offline embedder, exact cosine ----
    let dim: usize = arg("--dim").map(|d| d.parse()).transpose()?.unwrap_or(limits::EMBED_DIM_DEFAULT);
    let mut embedder = Embedder::new(dim)?;
    if let Some(w) = arg("--pair-weight") {
        embedder.pair_weight = w.parse()?;
    }
    if let Some(w) = arg("--char-weight") {
        embedder.char_weight = w.parse()?;
    }
    let t = Instant::now();
    let mut hashed = vec![0.0f32; passages.len() * dim];
    for (text, row) in passages.iter().zip(hashed.chunks_exact_mut(dim)) {
        embedder.embed(text, row)?;
    }
    let embed_ms = t.elapsed().as_secs_f64() * 1e3;
    println!("embedder {dim}-d: {:.1} µs/passage", embed_ms * 1e3 / passages.len() as f64);
    let mut q = vec![0.0f32; dim];
    let mut hashed_hits = Vec::with_capacity(queries.len());
    for query in &queries {
        embedder.embed(&query.text, &mut q)?;
        hashed_hits.push(exact_top(&hashed, dim, &q, 100, &query.scope));
    }
    let mut report = Report::default();
    for (query, hits) in queries.iter().zip(&hashed_hits) {
        report.add(&query.kind, &hits.iter().map(|h| h.0).collect::<Vec<_>>(), &query.relevant);
    }
    report.print("hash-embed", None);

    // ---- The distilled static embedder, exact cosine ----
    let asset = arg("--static").unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/assets/embedder/minilm-static.bin").to_string());
    let model = StaticEmbedder::from_asset(&std::fs::read(&asset)?)?;
    let sdim = model.dim();
    let t = Instant::now();
    let mut statics = vec![0.0f32; passages.len() * sdim];
    for (text, row) in passages.iter().zip(statics.chunks_exact_mut(sdim)) {
        model.embed(text, row)?;
    }
    let secs = t.elapsed().as_secs_f64();
    println!("static embedder {} ({sdim}-d): {:.1} µs/text, {:.0} texts/s", model.name(), secs * 1e6 / passages.len() as f64, passages.len() as f64 / secs);
    let mut sq = vec![0.0f32; sdim];
    let mut static_hits = Vec::with_capacity(queries.len());
    for query in &queries {
        model.embed(&query.text, &mut sq)?;
        static_hits.push(exact_top(&statics, sdim, &sq, 100, &query.scope));
    }
    let mut report = Report::default();
    for (query, hits) in queries.iter().zip(&static_hits) {
        report.add(&query.kind, &hits.iter().map(|h| h.0).collect::<Vec<_>>(), &query.relevant);
    }
    report.print("static-embed", None);

    // ---- The shipped offline default: MixedEmbedder (static and hashed side by side) ----
    let mixed = MixedEmbedder::new(std::rc::Rc::new(StaticEmbedder::from_asset(&std::fs::read(&asset)?)?));
    let t = Instant::now();
    let mixed_docs: Vec<f32> = passages.iter().map(|p| mixed.embed_vec(p)).collect::<Result<Vec<_>, _>>()?.concat();
    let secs = t.elapsed().as_secs_f64();
    println!("mixed embedder {} ({}-d): {:.1} µs/text, {:.0} texts/s", mixed.identity(), mixed.dim(), secs * 1e6 / passages.len() as f64, passages.len() as f64 / secs);
    let mut mixed_hits = Vec::with_capacity(queries.len());
    for query in &queries {
        mixed_hits.push(exact_top(&mixed_docs, mixed.dim(), &mixed.embed_vec(&query.text)?, 100, &query.scope));
    }
    let mut report = Report::default();
    for (query, hits) in queries.iter().zip(&mixed_hits) {
        report.add(&query.kind, &hits.iter().map(|h| h.0).collect::<Vec<_>>(), &query.relevant);
    }
    report.print("mixed-embed", None);

    // ---- Both offline embedders in one vector: cosine = w·static + (1-w)·hash ----
    if let Some(weights) = arg("--mix") {
        for w in weights.split(',') {
            let w: f32 = w.parse()?;
            let (ws, wh) = (w.sqrt(), (1.0 - w).sqrt());
            let mut report = Report::default();
            for query in &queries {
                model.embed(&query.text, &mut sq)?;
                embedder.embed(&query.text, &mut q)?;
                let scores: Vec<(u64, f32)> = statics
                    .chunks_exact(sdim)
                    .zip(hashed.chunks_exact(dim))
                    .enumerate()
                    .map(|(i, (s, h))| {
                        let cs: f32 = s.iter().zip(&sq).map(|(a, b)| a * b).sum();
                        let ch: f32 = h.iter().zip(&q).map(|(a, b)| a * b).sum();
                        (i as u64, ws * ws * cs + wh * wh * ch)
                    })
                    .collect();
                let mut ranked: Vec<(u64, f32)> = scores.into_iter().filter(|h| in_scope(&query.scope, h.0)).collect();
                ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
                report.add(&query.kind, &ranked.iter().take(100).map(|h| h.0).collect::<Vec<_>>(), &query.relevant);
            }
            report.print(&format!("mix(static {w})"), None);
        }
    }

    if flag("--skip-minilm") {
        return Ok(());
    }

    // ---- MiniLM vectors shipped with the data, exact cosine ----
    let minilm = read_f32(&format!("{dir}/{minilm_docs}"))?;
    let minilm_q = read_f32(&format!("{dir}/{minilm_queries}"))?;
    let mut minilm_hits = Vec::with_capacity(queries.len());
    for query in &queries {
        let qi = query.row;
        let qv = minilm_q.get(qi * 384..(qi + 1) * 384).ok_or("short queries.f32")?;
        minilm_hits.push(exact_top(&minilm, 384, qv, 100, &query.scope));
    }
    let mut report = Report::default();
    for (query, hits) in queries.iter().zip(&minilm_hits) {
        report.add(&query.kind, &hits.iter().map(|h| h.0).collect::<Vec<_>>(), &query.relevant);
    }
    report.print("minilm", None);

    // ---- Fusions of BM25 top-100 with each vector top-100 ----
    // The shipped rule (`LongTerm::search`): min-max blend or weighted RRF
    // with the vector weight set per query by keyword coverage and vector
    // confidence from the prior; next to AMS's blend and plain RRF (the
    // rules before issue 19) and fixed-weight blends for reference.
    let alphas: Vec<f64> = arg("--alphas").map_or(Ok(vec![0.3, 0.5, 0.7]), |a| a.split(',').map(str::parse).collect())?;
    let keyword_report = {
        let mut r = Report::default();
        for (q, hits) in queries.iter().zip(&keyword) {
            r.add(&q.kind, &hits.iter().map(|h| h.0).collect::<Vec<_>>(), &q.relevant);
        }
        r
    };
    let mut worst_gap = f64::INFINITY;
    for (name, vector) in [("hash-embed", &hashed_hits), ("mixed-embed", &mixed_hits), ("minilm", &minilm_hits)] {
        let mut reports: BTreeMap<String, Report> = BTreeMap::new();
        let mut vector_report = Report::default();
        let mut fused = Vec::new();
        for (((query, kw), vec_hits), &ceiling) in queries.iter().zip(&keyword).zip(vector.iter()).zip(&ceilings) {
            vector_report.add(&query.kind, &vec_hits.iter().map(|h| h.0).collect::<Vec<_>>(), &query.relevant);
            let mut add = |label: String, fused: &[(u64, f64)]| reports.entry(label).or_default().add(&query.kind, &fused.iter().map(|h| h.0).collect::<Vec<_>>(), &query.relevant);
            let kw_keys: Vec<u64> = kw.iter().map(|h| h.0).collect();
            let vec_keys: Vec<u64> = vec_hits.iter().map(|h| h.0).collect();
            rank::rrf(&[&kw_keys, &vec_keys], limits::RRF_K_DEFAULT, &mut fused);
            add("before: rrf".into(), &fused);
            let dist: Vec<(u64, f32)> = vec_hits.iter().map(|&(k, sim)| (k, 1.0 - sim)).collect();
            rank::alpha_hybrid(kw, &dist, limits::HYBRID_ALPHA_DEFAULT, TextNorm::Max, &mut fused)?;
            add("before: ams-alpha0.7".into(), &fused);
            let coverage = fuse::coverage(kw.first().map_or(0.0, |h| h.1), ceiling);
            let sure = fuse::confidence(&vec_hits.iter().map(|h| f64::from(h.1)).collect::<Vec<_>>()) / limits::FUSION_Z_CLIP;
            for &a in &alphas {
                fuse::fuse(kw, vec_hits, a, fuse::Norm::MinMax, &mut fused)?;
                add(format!("fixed minmax{a}"), &fused);
                let w = fuse::coverage_weight(coverage, sure, a)?;
                fuse::fuse(kw, vec_hits, w, fuse::Norm::MinMax, &mut fused)?;
                add(format!("coverage minmax{a}"), &fused);
                fuse::weighted_rrf(&kw_keys, &vec_keys, w, limits::RRF_K_DEFAULT, &mut fused)?;
                add(format!("coverage rrf{a}"), &fused);
            }
        }
        let better = keyword_report.ndcg().max(vector_report.ndcg());
        for (label, report) in &reports {
            let gap = report.ndcg() - better;
            report.print(&format!("{label}(bm25,{name})"), None);
            println!("{:<28} gap to the better input: {gap:+.4}", format!("{label}(bm25,{name})"));
            let shipped = label == &format!("coverage minmax{}", limits::HYBRID_ALPHA_PRIOR) || label == &format!("coverage rrf{}", limits::HYBRID_ALPHA_PRIOR);
            if shipped && name != "hash-embed" {
                worst_gap = worst_gap.min(gap);
            }
        }
    }
    println!("fusion check: worst gap of the shipped rules (mixed, MiniLM) to their better input {worst_gap:+.4} (goal >= -0.005)");
    if flag("--check") && worst_gap < -0.005 {
        return Err("fusion check failed".into());
    }
    Ok(())
}

fn in_scope(scope: &[u64], row: u64) -> bool {
    scope.is_empty() || scope.binary_search(&row).is_ok()
}

fn scope(q: &Query) -> KeyFilter<'_> {
    if q.scope.is_empty() {
        KeyFilter::All
    } else {
        KeyFilter::Subset(&q.scope)
    }
}

/// A data set read from `--data`.
struct Data {
    passages: Vec<String>,
    queries: Vec<Query>,
    minilm_docs: &'static str,
    minilm_queries: &'static str,
    /// Each passage's session, for the dialog set (turns in file order).
    sessions: Vec<Option<String>>,
}

fn jsonl(path: &str) -> Result<Vec<serde_json::Value>, Box<dyn std::error::Error>> {
    Ok(std::fs::read_to_string(path)?.lines().filter(|l| !l.trim().is_empty()).map(serde_json::from_str).collect::<Result<_, _>>()?)
}

/// Reads rustdocs, convmem or convbench from `dir`.
fn load(dir: &str, split: Option<&str>) -> Result<Data, Box<dyn std::error::Error>> {
    let all = std::rc::Rc::new(Vec::new());
    if std::path::Path::new(&format!("{dir}/dialogs.jsonl")).exists() {
        let turns = jsonl(&format!("{dir}/dialogs.jsonl"))?;
        let mut by_dialog: BTreeMap<String, Vec<u64>> = BTreeMap::new();
        let mut row_of = std::collections::HashMap::new();
        for (i, t) in turns.iter().enumerate() {
            by_dialog.entry(t["dialog_id"].as_str().unwrap_or_default().to_string()).or_default().push(i as u64);
            row_of.insert(t["turn_id"].as_str().unwrap_or_default().to_string(), i as u64);
        }
        let scopes: BTreeMap<String, std::rc::Rc<Vec<u64>>> = by_dialog.into_iter().map(|(d, rows)| (d, std::rc::Rc::new(rows))).collect();
        let mut queries = Vec::new();
        for (row, q) in jsonl(&format!("{dir}/questions.jsonl"))?.iter().enumerate() {
            if split.is_some_and(|s| q["split"].as_str() != Some(s)) {
                continue;
            }
            let dialog = q["dialog_id"].as_str().unwrap_or_default();
            queries.push(Query {
                kind: q["kind"].as_str().unwrap_or_default().to_string(),
                text: q["question"].as_str().unwrap_or_default().to_string(),
                relevant: q["evidence"].as_array().map(|a| a.iter().filter_map(|x| x.as_str().and_then(|id| row_of.get(id).copied())).collect()).unwrap_or_default(),
                scope: scopes.get(dialog).cloned().ok_or("a question names an unknown dialog")?,
                row,
            });
        }
        let passages = turns.iter().map(|t| t["text"].as_str().unwrap_or_default().to_string()).collect();
        let sessions = turns.iter().map(|t| t["session_id"].as_str().map(str::to_owned)).collect();
        return Ok(Data { passages, queries, minilm_docs: "turns.minilm.f32", minilm_queries: "questions.minilm.f32", sessions });
    }
    let conversational = std::path::Path::new(&format!("{dir}/memories.jsonl")).exists();
    let (docs_file, minilm_docs, minilm_queries) =
        if conversational { ("memories", "memories.minilm.f32", "queries.minilm.f32") } else { ("passages", "passages.f32", "queries.f32") };
    let docs = jsonl(&format!("{dir}/{docs_file}.jsonl"))?;
    let passages = docs.iter().map(|v| v["text"].as_str().unwrap_or_default().to_string()).collect();
    let row_of: std::collections::HashMap<&str, u64> = docs.iter().enumerate().filter_map(|(i, v)| v["id"].as_str().map(|id| (id, i as u64))).collect();
    let mut queries = Vec::new();
    for (row, v) in jsonl(&format!("{dir}/queries.jsonl"))?.iter().enumerate() {
        let relevant = if conversational {
            v["relevant"].as_array().map(|a| a.iter().filter_map(|x| x.as_str().and_then(|id| row_of.get(id).copied())).collect()).unwrap_or_default()
        } else {
            v["relevant_rows"].as_array().map(|a| a.iter().filter_map(|x| x.as_u64()).collect()).unwrap_or_default()
        };
        let kind = if conversational { &v["type"] } else { &v["kind"] };
        let text = v["text"].as_str().unwrap_or_default().to_string();
        queries.push(Query { kind: kind.as_str().unwrap_or_default().to_string(), text, relevant, scope: all.clone(), row });
    }
    Ok(Data { passages, queries, minilm_docs, minilm_queries, sessions: Vec::new() })
}

fn read_f32(path: &str) -> Result<Vec<f32>, std::io::Error> {
    Ok(std::fs::read(path)?.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect())
}

/// The `k` rows most similar to `q` by dot product (rows are unit vectors),
/// ties by lower row.
fn exact_top(rows: &[f32], dim: usize, q: &[f32], k: usize, scope: &[u64]) -> Vec<(u64, f32)> {
    let mut all: Vec<(u64, f32)> = rows
        .chunks_exact(dim)
        .enumerate()
        .filter(|(i, _)| in_scope(scope, *i as u64))
        .map(|(i, r)| (i as u64, r.iter().zip(q).map(|(a, b)| a * b).sum::<f32>()))
        .collect();
    let order = |a: &(u64, f32), b: &(u64, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if all.len() > k {
        all.select_nth_unstable_by(k - 1, order);
        all.truncate(k);
    }
    all.sort_by(order);
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A three-turn, two-dialog toy in convbench's layout.
    fn toy() -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("edgemem-convbench-toy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let turns = [
            r#"{"dialog_id":"d01","session_id":"d01-s1","session_date":"2023-01-02","turn_id":"d01-s1-t01","speaker":"Ana","role":"user","text":"My dog is called Tofu."}"#,
            r#"{"dialog_id":"d01","session_id":"d01-s1","session_date":"2023-01-02","turn_id":"d01-s1-t02","speaker":"assistant","role":"assistant","text":"What a lovely name."}"#,
            r#"{"dialog_id":"d02","session_id":"d02-s1","session_date":"2023-02-03","turn_id":"d02-s1-t01","speaker":"Rui","role":"user","text":"My dog is called Miso."}"#,
        ];
        std::fs::write(dir.join("dialogs.jsonl"), turns.join("\n")).unwrap();
        let questions = [
            r#"{"qid":"d01-q01","dialog_id":"d01","split":"dev","kind":"single_hop","question":"What is my dog called?","evidence":["d01-s1-t01"],"answer":"Tofu"}"#,
            r#"{"qid":"d02-q01","dialog_id":"d02","split":"test","kind":"multi_hop","question":"What is my dog called?","evidence":["d02-s1-t01","nope"],"answer":"Miso"}"#,
        ];
        std::fs::write(dir.join("questions.jsonl"), questions.join("\n")).unwrap();
        dir
    }

    #[test]
    fn convbench_questions_see_only_their_dialog_and_labels_map_to_rows() {
        let dir = toy();
        let data = load(dir.to_str().unwrap(), None).unwrap();
        assert_eq!(data.passages.len(), 3);
        assert_eq!(data.queries.len(), 2);
        assert_eq!((data.queries[0].scope.as_slice(), data.queries[0].relevant.as_slice()), (&[0u64, 1][..], &[0u64][..]));
        // An unknown evidence id is dropped, not guessed.
        assert_eq!((data.queries[1].scope.as_slice(), data.queries[1].relevant.as_slice()), (&[2u64][..], &[2u64][..]));
        assert_eq!(data.sessions[0], data.sessions[1]);
        let test = load(dir.to_str().unwrap(), Some("test")).unwrap();
        assert_eq!((test.queries.len(), test.queries[0].row), (1, 1));
        // BM25 through the same scope finds each dialog's own dog only.
        let mut index = Bm25Index::new(Analyzer::default(), Bm25Params::default());
        for (row, text) in data.passages.iter().enumerate() {
            index.add(row as u64, text).unwrap();
        }
        let (mut scratch, mut out) = (Bm25Scratch::default(), Vec::new());
        for q in &data.queries {
            index.search(&q.text, 10, scope(q), &mut scratch, &mut out).unwrap();
            assert!(out.iter().all(|h| q.scope.contains(&h.0)));
        }
        assert_eq!(exact_top(&[1.0, 0.0, 0.0, 1.0, 1.0, 0.0], 2, &[1.0, 0.0], 5, &[1, 2]), [(2, 1.0), (1, 0.0)]);
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn metrics_by_hand() {
        let mut r = Report::default();
        // Relevant at ranks 1 and 3 of two relevant: DCG 1 + 1/2, ideal 1 + 1/log2(3).
        r.add("a", &[7, 1, 8, 2], &[7, 8]);
        let s = r.by_kind["a"];
        let ideal = 1.0 + 1.0 / 3f64.log2();
        assert!((s.ndcg - 1.5 / ideal).abs() < 1e-12);
        assert_eq!((s.recall5, s.recall, s.hit, s.mrr), (1.0, 1.0, 1.0, 1.0));
        // Found only at rank 6: in recall@10 and hit@10, not in recall@5.
        let mut r = Report::default();
        r.add("b", &[1, 2, 3, 4, 5, 9], &[9]);
        let s = r.by_kind["b"];
        assert_eq!((s.recall5, s.recall, s.hit), (0.0, 1.0, 1.0));
        assert!((s.mrr - 1.0 / 6.0).abs() < 1e-12);
        // Nothing found, and the overall row sums both kinds.
        r.add("c", &[1], &[2]);
        assert_eq!((r.by_kind["c"].ndcg, r.by_kind["c"].hit), (0.0, 0.0));
        assert_eq!(r.by_kind["overall"].n, 2);
        assert!((r.ndcg() - r.by_kind["b"].ndcg / 2.0).abs() < 1e-12);
    }
}
