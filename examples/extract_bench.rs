//! Throughput of the offline extractor (`src/core/extract/rules.rs`): the
//! labelled dialogues (`tests/data/extract/dialogues.jsonl`) extracted over
//! and over, one call per dialogue as a background pass would make it, and
//! long user turns (every user sentence of the set run together up to the
//! per-turn bound), in MB/s of turn text.
//!
//! `cargo run --release --example extract_bench`

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use edgemem::core::extract::rules::extract;
use edgemem::core::extract::{Strategy, Turn};
use edgemem::core::limits::EXTRACT_TURN_BYTES_MAX;

struct Owned {
    id: String,
    role: String,
    content: String,
    created_at: u64,
}

/// Runs `pass` for about `time`; returns (passes, seconds).
fn timed(time: Duration, mut pass: impl FnMut()) -> (u32, f64) {
    pass();
    let start = Instant::now();
    let mut passes = 0;
    while start.elapsed() < time {
        pass();
        passes += 1;
    }
    (passes, start.elapsed().as_secs_f64())
}

fn main() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/extract/dialogues.jsonl");
    let dialogues: Vec<Vec<Owned>> = std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            v["turns"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| Owned {
                    id: t["id"].as_str().unwrap().into(),
                    role: t["role"].as_str().unwrap().into(),
                    content: t["content"].as_str().unwrap().into(),
                    created_at: t["created_at"].as_u64().unwrap(),
                })
                .collect()
        })
        .collect();
    let dialogues: Vec<Vec<Turn<'_>>> = dialogues
        .iter()
        .map(|d| d.iter().map(|t| Turn { id: &t.id, role: &t.role, content: &t.content, created_at: t.created_at }).collect())
        .collect();
    let turns: usize = dialogues.iter().map(Vec::len).sum();
    let bytes: usize = dialogues.iter().flatten().map(|t| t.content.len()).sum();
    let user_bytes: usize = dialogues.iter().flatten().filter(|t| t.role == "user").map(|t| t.content.len()).sum();

    let mut out = Vec::new();
    let mut found = 0;
    let (passes, secs) = timed(Duration::from_secs(2), || {
        for d in &dialogues {
            out.clear();
            extract(&Strategy::Discrete, d, &mut out);
            found += black_box(out.len());
        }
    });
    let per_pass = secs / f64::from(passes);
    println!(
        "dialogues: {} dialogues, {turns} turns, {bytes} bytes ({user_bytes} in user turns); {passes} passes in {secs:.2} s",
        dialogues.len()
    );
    println!(
        "  {:.1} MB/s of all turns, {:.1} MB/s of user turns, {:.0} turns/s, {:.1} µs per dialogue",
        bytes as f64 / per_pass / 1e6,
        user_bytes as f64 / per_pass / 1e6,
        turns as f64 / per_pass,
        per_pass / dialogues.len() as f64 * 1e6
    );

    // Long turns: what one turn at the bound costs.
    let mut long = String::new();
    for t in dialogues.iter().flatten().filter(|t| t.role == "user") {
        if long.len() + t.content.len() + 2 > EXTRACT_TURN_BYTES_MAX {
            break;
        }
        long.push_str(t.content.trim_end_matches(['.', '!', '?']));
        long.push_str(". ");
    }
    let turn = [Turn { id: "long", role: "user", content: &long, created_at: 1_718_204_400_000 }];
    let (passes, secs) = timed(Duration::from_secs(2), || {
        out.clear();
        extract(&Strategy::Discrete, &turn, &mut out);
        found += black_box(out.len());
    });
    let per_pass = secs / f64::from(passes);
    println!(
        "one {}-byte user turn ({} candidates): {:.1} MB/s, {:.1} µs per turn",
        long.len(),
        out.len(),
        long.len() as f64 / per_pass / 1e6,
        per_pass * 1e6
    );
    black_box(found);
}
