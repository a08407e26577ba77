//! Quality and speed of the privacy filters: precision and recall per kind
//! on the labelled set, hits in the shared token corpus (where no secret
//! may be found), and throughput of `anonymize` + `redact_secrets`.
//!
//! `cargo run --release --example privacy_eval`

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use edgemem::core::privacy::{find_pii, find_secrets, redact_secrets, Anonymizer, PseudonymKey, Report};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn ratio(a: u32, b: u32) -> f64 {
    if b == 0 { 1.0 } else { f64::from(a) / f64::from(b) }
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    // kind -> (true positives, false positives, false negatives)
    let mut counts: BTreeMap<String, (u32, u32, u32)> = BTreeMap::new();
    let data = std::fs::read_to_string(root.join("tests/data/privacy/labelled.jsonl")).unwrap();
    for line in data.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let text = v["text"].as_str().unwrap();
        let mut want: Vec<(String, String)> =
            v["spans"].as_array().unwrap().iter().map(|s| (s["kind"].as_str().unwrap().into(), s["value"].as_str().unwrap().into())).collect();
        let secrets = find_secrets(text);
        let mut got: Vec<(String, String)> = secrets.iter().map(|s| (s.kind.name().into(), text[s.start..s.end].into())).collect();
        got.extend(
            find_pii(text)
                .into_iter()
                .filter(|p| !secrets.iter().any(|s| p.start < s.end && s.start < p.end))
                .map(|p| (p.kind.name().into(), text[p.start..p.end].into())),
        );
        for g in got {
            match want.iter().position(|w| *w == g) {
                Some(k) => {
                    want.swap_remove(k);
                    counts.entry(g.0).or_default().0 += 1;
                }
                None => counts.entry(g.0).or_default().1 += 1,
            }
        }
        for w in want {
            counts.entry(w.0).or_default().2 += 1;
        }
    }
    println!("labelled set ({} lines)", data.lines().count());
    let (mut tp, mut fp, mut fn_) = (0, 0, 0);
    for (kind, (t, p, n)) in &counts {
        println!("  {kind:>15}  precision {:.3}  recall {:.3}  ({} labelled)", ratio(*t, t + p), ratio(*t, t + n), t + n);
        (tp, fp, fn_) = (tp + t, fp + p, fn_ + n);
    }
    println!("  {:>15}  precision {:.3}  recall {:.3}  ({} labelled)", "all", ratio(tp, tp + fp), ratio(tp, tp + fn_), tp + fn_);

    let dir = root.join("../shared/data/tokens");
    if !dir.is_dir() {
        println!("token corpus absent ({}): skipped", dir.display());
        return;
    }
    let mut paths = Vec::new();
    files(&dir, &mut paths);
    paths.sort();
    let texts: Vec<String> = paths.iter().filter_map(|p| std::fs::read_to_string(p).ok()).collect();
    let bytes: usize = texts.iter().map(String::len).sum();
    let (mut secrets, mut pii) = (0, BTreeMap::<&str, u32>::new());
    for t in &texts {
        secrets += find_secrets(t).len();
        for p in find_pii(t) {
            *pii.entry(p.kind.name()).or_default() += 1;
            if std::env::args().any(|a| a == "--show") {
                let from = p.start.saturating_sub(40);
                let from = (0..=from).rev().find(|&i| t.is_char_boundary(i)).unwrap_or(0);
                let to = (p.end + 40).min(t.len());
                let to = (to..=t.len()).find(|&i| t.is_char_boundary(i)).unwrap_or(t.len());
                println!("    {}: {:?}", p.kind.name(), &t[from..to]);
            }
        }
    }
    println!("token corpus: {} files, {:.1} MB; secrets found: {secrets}; PII found: {pii:?}", texts.len(), bytes as f64 / 1e6);

    let key = PseudonymKey::derive(b"privacy-eval-secret-0123456789ab", "bench").unwrap();
    for (name, anon) in [("placeholders", Anonymizer::new(None)), ("pseudonyms", Anonymizer::new(Some(&key)))] {
        let rounds = 5;
        let start = Instant::now();
        let mut report = Report::default();
        for _ in 0..rounds {
            for t in &texts {
                let r = redact_secrets(t, &mut report);
                let r = r.as_deref().unwrap_or(t);
                std::hint::black_box(anon.anonymize(r, &mut report));
            }
        }
        let secs = start.elapsed().as_secs_f64();
        println!("redact_secrets + anonymize ({name}): {:.1} MB/s", (bytes * rounds) as f64 / 1e6 / secs);
    }
}
