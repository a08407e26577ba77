//! Measures the vector index on the rustdocs set (`../shared/data/rustdocs`):
//! flat-scan bandwidth, graph build time, queries/s and recall@10 over an
//! ef sweep, encode/decode, and the flat-versus-graph crossover. These
//! numbers chose the defaults in `limits.rs`.
//!
//! `cargo run --release --example vector_probe [links_max] [int8] [keep_pruned]`

use std::time::Instant;

use edgemem::core::vector::{dot_f32, Config, Eligible, Metric, Quantization, Scratch, SearchParams, VectorIndex};

const DIM: usize = 384;

fn read(path: &str) -> Vec<u8> {
    std::fs::read(format!("../shared/data/rustdocs/{path}")).unwrap_or_else(|e| panic!("{path}: {e} (run from the project root)"))
}

fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

struct Data {
    p: Vec<f32>,
    q: Vec<f32>,
    gt_scores: Vec<f32>,
}

impl Data {
    fn n(&self) -> usize {
        self.p.len() / DIM
    }

    /// Recall@10 with ties counted as the dataset's README says.
    fn recall(&self, qi: usize, keys: &[u64]) -> f64 {
        let q = &self.q[qi * DIM..(qi + 1) * DIM];
        let kth = self.gt_scores[qi * 100 + 9] - 1e-6;
        let hits = keys.iter().take(10).filter(|&&k| dot_f32(q, &self.p[k as usize * DIM..(k as usize + 1) * DIM]) >= kth).count();
        hits as f64 / 10.0
    }
}

fn sweep(idx: &VectorIndex, d: &Data, efs: &[usize]) {
    let (mut s, mut out) = (Scratch::default(), Vec::new());
    let nq = d.q.len() / DIM;
    for &ef in efs {
        let p = SearchParams { k: 10, ef: Some(ef) };
        let t = Instant::now();
        let mut r = 0.0;
        for qi in 0..nq {
            idx.search(&d.q[qi * DIM..(qi + 1) * DIM], &p, &Eligible::All, &mut s, &mut out).unwrap();
            let keys: Vec<u64> = out.iter().map(|h| h.key).collect();
            r += d.recall(qi, &keys);
        }
        let secs = t.elapsed().as_secs_f64();
        println!("  ef {ef:4}: {:8.0} q/s  recall@10 {:.4}", nq as f64 / secs, r / nq as f64);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let links: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(32);
    let int8 = args.iter().any(|a| a == "int8");
    let keep_pruned = args.iter().any(|a| a == "keep_pruned");
    let d = Data { p: f32s(&read("passages.f32")), q: f32s(&read("queries.f32")), gt_scores: f32s(&read("gt_top100_scores.f32")) };
    let n = d.n();
    let keys: Vec<u64> = (0..n as u64).collect();
    let quant = if int8 { Quantization::Int8 } else { Quantization::None };
    let config = |seal: usize| Config::new(DIM, Metric::Cosine).quantization(quant).seal_points(seal).links_max(links).keep_pruned(keep_pruned).seed(42);
    println!("rustdocs: {n} passages, {} queries; links_max {links}, int8 {int8}, keep_pruned {keep_pruned}", d.q.len() / DIM);

    // Flat scan: an unsealed index, exact search.
    let mut flat = VectorIndex::new(config(65_536)).unwrap();
    let t = Instant::now();
    flat.add_batch(&keys, &d.p).unwrap();
    println!("add_batch {n}: {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
    let (mut s, mut out) = (Scratch::default(), Vec::new());
    let nq = 500;
    let t = Instant::now();
    for qi in 0..nq {
        flat.search(&d.q[qi * DIM..(qi + 1) * DIM], &SearchParams { k: 10, ef: None }, &Eligible::All, &mut s, &mut out).unwrap();
    }
    let secs = t.elapsed().as_secs_f64() / nq as f64;
    let row_bytes = if int8 { DIM + 4 } else { DIM * 4 };
    println!("flat scan: {:.0} q/s, {:.2} ms/query, {:.1} GB/s", 1.0 / secs, secs * 1e3, (n * row_bytes) as f64 / secs / 1e9);

    // One graph over everything.
    let mut idx = VectorIndex::new(config(n)).unwrap();
    idx.add_batch(&keys, &d.p).unwrap();
    let t = Instant::now();
    let r = idx.compact(usize::MAX).unwrap();
    let build = t.elapsed().as_secs_f64();
    println!("build {} points: {:.2} s ({:.3} ms/point), memory {:.1} MB", r.work_points, build, build * 1e3 / n as f64, idx.memory_bytes() as f64 / 1e6);
    sweep(&idx, &d, &[10, 16, 24, 32, 48, 64, 96, 128, 200]);

    let t = Instant::now();
    let bytes = idx.encode();
    let enc = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let back = VectorIndex::decode(&bytes).unwrap();
    let dec = t.elapsed().as_secs_f64();
    assert_eq!(back.len(), n);
    println!("encode {:.1} ms, decode {:.1} ms, {:.2} MB", enc * 1e3, dec * 1e3, bytes.len() as f64 / 1e6);

    // Crossover: flat scan against one graph of the same size.
    println!("crossover (k=10, ef=64; flat q/s vs graph q/s):");
    for size in [512, 1024, 2048, 4096, 8192] {
        let mut f = VectorIndex::new(config(65_536)).unwrap();
        f.add_batch(&keys[..size], &d.p[..size * DIM]).unwrap();
        let mut g = VectorIndex::new(config(size)).unwrap();
        g.add_batch(&keys[..size], &d.p[..size * DIM]).unwrap();
        g.compact(usize::MAX).unwrap();
        let qps = |ix: &VectorIndex, s: &mut Scratch, out: &mut Vec<_>| {
            let t = Instant::now();
            for qi in 0..1000 {
                ix.search(&d.q[qi * DIM..(qi + 1) * DIM], &SearchParams { k: 10, ef: Some(64) }, &Eligible::All, s, out).unwrap();
            }
            1000.0 / t.elapsed().as_secs_f64()
        };
        println!("  {size:6}: flat {:8.0}  graph {:8.0}", qps(&f, &mut s, &mut out), qps(&g, &mut s, &mut out));
    }
}
