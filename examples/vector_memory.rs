//! Peak heap while a vector index grows to `n` points with bounded
//! compaction after every batch, the way the long-term store drives it
//! (issue 16, point 6). A counting global allocator tracks live and peak
//! bytes; the input vectors are generated one batch at a time so only the
//! index is measured.
//!
//! `cargo run --release --example vector_memory -- [points] [int8|f32] [dim] [work points per compact]`
//! (defaults: 100000 int8 384, and the long-term store's work bound)

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Instant;

use edgemem::core::limits;
use edgemem::core::vector::{Config, Eligible, Metric, Quantization, Scratch, SearchParams, VectorIndex};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            let now = LIVE.fetch_add(l.size(), Relaxed) + l.size();
            PEAK.fetch_max(now, Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        LIVE.fetch_sub(l.size(), Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, l, new) };
        if !q.is_null() {
            if new >= l.size() {
                let now = LIVE.fetch_add(new - l.size(), Relaxed) + new - l.size();
                // A moving realloc holds both blocks for a moment.
                PEAK.fetch_max(now + if q != p { l.size() } else { 0 }, Relaxed);
            } else {
                LIVE.fetch_sub(l.size() - new, Relaxed);
            }
        }
        q
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

const MB: f64 = 1024.0 * 1024.0;

/// Clustered unit-ish vectors (xorshift; 64 centres plus noise), so graphs
/// look like embedding graphs rather than uniform noise.
struct Gen {
    s: u64,
    centres: Vec<f32>,
    dim: usize,
}

impl Gen {
    fn next(&mut self) -> f32 {
        self.s ^= self.s << 13;
        self.s ^= self.s >> 7;
        self.s ^= self.s << 17;
        (self.s >> 40) as f32 / (1u64 << 24) as f32 - 0.5
    }
    fn new(dim: usize) -> Gen {
        let mut g = Gen { s: 0x9E37_79B9_7F4A_7C15, centres: Vec::new(), dim };
        g.centres = (0..64 * dim).map(|_| 0.0).collect();
        for i in 0..64 * dim {
            g.centres[i] = g.next();
        }
        g
    }
    fn batch(&mut self, n: usize, out: &mut Vec<f32>) {
        out.clear();
        for _ in 0..n {
            let c = (self.s % 64) as usize;
            for j in 0..self.dim {
                let x = self.centres[c * self.dim + j] + 0.35 * self.next();
                out.push(x);
            }
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let int8 = args.get(2).map(|a| a != "f32").unwrap_or(true);
    let dim: usize = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(384);
    let work: usize = args.get(4).and_then(|a| a.parse().ok()).unwrap_or(limits::LTM_COMPACT_WORK_POINTS_PER_WRITE);
    let q = if int8 { Quantization::Int8 } else { Quantization::None };
    let mut idx = VectorIndex::new(Config::new(dim, Metric::Cosine).quantization(q)).expect("config");
    let mut gen = Gen::new(dim);
    let mut rows = Vec::with_capacity(limits::LTM_CREATE_BATCH_MAX * dim);
    let base = LIVE.load(Relaxed);
    PEAK.store(base, Relaxed);
    let t = Instant::now();
    let mut added = 0usize;
    let mut worst_call = 0f64;
    while added < n {
        let b = (n - added).min(limits::LTM_CREATE_BATCH_MAX);
        gen.batch(b, &mut rows);
        let keys: Vec<u64> = (added as u64..(added + b) as u64).collect();
        idx.add_batch(&keys, &rows).expect("add");
        added += b;
        let c = Instant::now();
        idx.compact(work).expect("compact");
        worst_call = worst_call.max(c.elapsed().as_secs_f64());
        if added % 10_000 == 0 {
            println!(
                "{added:7} points: live {:6.1} MB, peak {:6.1} MB, index {:6.1} MB, {:.1} s",
                (LIVE.load(Relaxed) - base) as f64 / MB,
                (PEAK.load(Relaxed) - base) as f64 / MB,
                idx.memory_bytes() as f64 / MB,
                t.elapsed().as_secs_f64()
            );
        }
    }
    let rows_bytes = rows.capacity() * 4;
    drop(rows);
    println!(
        "built {n} × {dim} {}: peak {:.1} MB over the start (input batch {:.1} MB included), live {:.1} MB, index {:.1} MB, {} segments, slowest compact call {:.0} ms, {:.1} s",
        if int8 { "int8" } else { "f32" },
        (PEAK.load(Relaxed) - base) as f64 / MB,
        rows_bytes as f64 / MB,
        (LIVE.load(Relaxed) - base) as f64 / MB,
        idx.memory_bytes() as f64 / MB,
        idx.stats().segments.len(),
        worst_call * 1000.0,
        t.elapsed().as_secs_f64()
    );
    let mut s = Scratch::default();
    let mut out = Vec::new();
    let mut qv = Vec::new();
    gen.batch(1, &mut qv);
    let before = PEAK.load(Relaxed);
    idx.search(&qv, &SearchParams { k: 10, ef: None }, &Eligible::All, &mut s, &mut out).expect("search");
    println!("a search added {:.2} MB to the peak; {} hits", (PEAK.load(Relaxed) - before) as f64 / MB, out.len());
}
