//! Makes the compact BPE rank assets the npm package loads at run time.
//!
//!     cargo run --release --example gen_ranks -- <dir with .tiktoken files> <out dir>
//!
//! Each source file must hash to the SHA-256 OpenAI publishes for it (the
//! values tiktoken pins in `tiktoken_ext/openai_public.py`), so an asset can
//! only be made from the genuine ranks.

use edgemem::core::tokenizer::ranks::Ranks;
use sha2::{Digest, Sha256};
use std::process::ExitCode;

const SOURCES: [(&str, &str, usize); 2] = [
    ("cl100k_base", "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7", 100_256),
    ("o200k_base", "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d", 199_998),
];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let (Some(src), Some(out)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: gen_ranks <dir with .tiktoken files> <out dir>");
        return ExitCode::FAILURE;
    };
    if let Err(e) = std::fs::create_dir_all(out) {
        eprintln!("{out}: {e}");
        return ExitCode::FAILURE;
    }
    for (name, sha256, tokens) in SOURCES {
        let path = format!("{src}/{name}.tiktoken");
        let text = match std::fs::read(&path) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("{path}: {e}");
                return ExitCode::FAILURE;
            }
        };
        let digest: String = Sha256::digest(&text).iter().map(|b| format!("{b:02x}")).collect();
        if digest != sha256 {
            eprintln!("{path}: SHA-256 {digest} is not OpenAI's {sha256}");
            return ExitCode::FAILURE;
        }
        let ranks = match std::str::from_utf8(&text).map_err(|e| e.to_string()).and_then(|t| Ranks::from_tiktoken(t).map_err(|e| e.to_string())) {
            Ok(r) if r.len() == tokens => r,
            Ok(r) => {
                eprintln!("{path}: {} tokens, expected {tokens}", r.len());
                return ExitCode::FAILURE;
            }
            Err(e) => {
                eprintln!("{path}: {e}");
                return ExitCode::FAILURE;
            }
        };
        let asset = ranks.to_asset();
        let dest = format!("{out}/{name}.bin");
        if let Err(e) = std::fs::write(&dest, &asset) {
            eprintln!("{dest}: {e}");
            return ExitCode::FAILURE;
        }
        println!("{dest}: {} bytes, {} tokens", asset.len(), ranks.len());
    }
    ExitCode::SUCCESS
}
