//! Quality against data: precision and recall on the labelled set
//! (`tests/data/privacy/labelled.jsonl`, made by `gen.mjs` beside it), and
//! zero secrets in the shared token corpus (real docs, man pages and Python
//! source: text that must pass through untouched).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::*;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// What both filters find in `text`, as `(kind, value)`: PII inside a
/// secret is part of the secret.
fn predicted(text: &str) -> Vec<(String, String)> {
    let secrets = find_secrets(text);
    let mut out: Vec<(String, String)> = secrets.iter().map(|s| (s.kind.name().to_string(), text[s.start..s.end].to_string())).collect();
    for p in find_pii(text) {
        if !secrets.iter().any(|s| p.start < s.end && s.start < p.end) {
            out.push((p.kind.name().to_string(), text[p.start..p.end].to_string()));
        }
    }
    out
}

#[derive(Default, Debug)]
struct Counts {
    tp: u32,
    fp: u32,
    fn_: u32,
}

fn ratio(a: u32, b: u32) -> f64 {
    if b == 0 { 1.0 } else { f64::from(a) / f64::from(b) }
}

#[test]
fn labelled_set_precision_and_recall() {
    let path = root().join("tests/data/privacy/labelled.jsonl");
    let data = std::fs::read_to_string(&path).unwrap();
    let mut by_kind: BTreeMap<String, Counts> = BTreeMap::new();
    let mut problems = Vec::new();
    let mut lookalikes = 0;
    for line in data.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let text = v["text"].as_str().unwrap();
        let mut want: Vec<(String, String)> = v["spans"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| (s["kind"].as_str().unwrap().to_string(), s["value"].as_str().unwrap().to_string()))
            .collect();
        for got in predicted(text) {
            match want.iter().position(|w| *w == got) {
                Some(k) => {
                    want.swap_remove(k);
                    by_kind.entry(got.0).or_default().tp += 1;
                }
                None => {
                    problems.push(format!("false positive {got:?} in {text:?}"));
                    by_kind.entry(got.0).or_default().fp += 1;
                }
            }
        }
        for missed in want {
            problems.push(format!("missed {missed:?} in {text:?}"));
            by_kind.entry(missed.0).or_default().fn_ += 1;
        }
        let mut report = Report::default();
        let redacted = redact_secrets(text, &mut report).unwrap_or_else(|| text.to_string());
        let out = Anonymizer::new(None).anonymize(&redacted, &mut report).unwrap_or(redacted);
        for l in v["lookalikes"].as_array().unwrap() {
            lookalikes += 1;
            let l = l.as_str().unwrap();
            if !out.contains(l) {
                problems.push(format!("look-alike {l:?} lost: {out:?}"));
            }
        }
    }
    let total = by_kind.values().fold(Counts::default(), |a, c| Counts { tp: a.tp + c.tp, fp: a.fp + c.fp, fn_: a.fn_ + c.fn_ });
    for (kind, c) in &by_kind {
        println!("{kind:>15}: precision {:.3} recall {:.3} ({} labelled)", ratio(c.tp, c.tp + c.fp), ratio(c.tp, c.tp + c.fn_), c.tp + c.fn_);
    }
    let (precision, recall) = (ratio(total.tp, total.tp + total.fp), ratio(total.tp, total.tp + total.fn_));
    println!("{:>15}: precision {precision:.3} recall {recall:.3} ({} labelled, {lookalikes} look-alikes)", "all", total.tp + total.fn_);
    for p in &problems {
        println!("{p}");
    }
    assert!(by_kind.len() >= 10 && total.tp + total.fn_ >= 300 && lookalikes >= 150);
    assert!(precision >= 0.99, "precision {precision}");
    assert!(recall >= 0.97, "recall {recall}");
    assert!(!problems.iter().any(|p| p.starts_with("look-alike")), "a look-alike was replaced");
}

fn corpus_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            corpus_files(&p, out);
        } else {
            out.push(p);
        }
    }
}

#[test]
fn token_corpus_has_no_secrets() {
    let dir = root().join("../shared/data/tokens");
    if !dir.is_dir() {
        println!("skipped: {} is absent", dir.display());
        return;
    }
    let mut files = Vec::new();
    corpus_files(&dir, &mut files);
    files.sort();
    let (mut secrets, mut pii, mut bytes) = (Vec::new(), BTreeMap::<&str, u32>::new(), 0);
    for f in &files {
        let Ok(text) = std::fs::read_to_string(f) else { continue };
        bytes += text.len();
        for s in find_secrets(&text) {
            let from = text[..s.start].rfind('\n').map_or(0, |p| p + 1);
            let line_end = text[s.end..].find('\n').map_or(text.len(), |p| s.end + p);
            secrets.push(format!("{} {}: {:?}", f.display(), s.kind.name(), &text[from..line_end.min(from + 200)]));
        }
        for p in find_pii(&text) {
            *pii.entry(p.kind.name()).or_default() += 1;
        }
    }
    println!("token corpus: {} files, {bytes} bytes, {} secrets, PII {pii:?}", files.len(), secrets.len());
    for s in &secrets {
        println!("{s}");
    }
    assert!(secrets.is_empty());
}
