//! What crosses into TypeScript by hand comes from one Rust registry.
//!
//! The error-code unions of `pkg-template/index.d.ts` are generated from
//! [`Error::codes`] and [`TransferResult::ALL`]: this test renders them, and
//! when the file differs it rewrites the generated blocks and fails, so a
//! developer commits the regenerated file and CI never sees drift (the
//! pattern of rust-analyzer's sourcegen tests). It also checks that every
//! code the hand-written JS raises is in the registry.
#![cfg(not(target_arch = "wasm32"))]

use std::fs;
use std::path::PathBuf;

use edgemem::core::error::Error;
use edgemem::core::ledger::TransferResult;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn union(name: &str, doc: &str, codes: &[&str]) -> String {
    let mut out = format!("/** {doc} */\nexport type {name} =\n");
    for (i, c) in codes.iter().enumerate() {
        out.push_str(&format!("  | \"{c}\"{}\n", if i + 1 == codes.len() { ";" } else { "" }));
    }
    out
}

/// Replaces the text between `// <generated NAME>` and `// </generated NAME>`.
fn splice(text: &str, name: &str, body: &str) -> String {
    let open = format!("// <generated {name}: tests/registry.rs writes this block; do not edit>\n");
    let close = format!("// </generated {name}>");
    let start = text.find(&open).unwrap_or_else(|| panic!("index.d.ts has no {open:?} marker")) + open.len();
    let end = text[start..].find(&close).unwrap_or_else(|| panic!("index.d.ts has no {close:?} marker")) + start;
    format!("{}{}{}", &text[..start], body, &text[end..])
}

#[test]
fn index_d_ts_error_unions_are_generated_from_the_registry() {
    let path = root().join("pkg-template/index.d.ts");
    let text = fs::read_to_string(&path).unwrap();
    let transfer: Vec<&str> = TransferResult::ALL.iter().map(|r| r.as_str()).collect();
    let wanted = splice(
        &splice(&text, "ErrorCode", &union("ErrorCode", "Stable error codes; `EdgememError.code` is one of these.", &Error::codes())),
        "TransferResultCode",
        &union("TransferResultCode", "Per-transfer results (TigerBeetle's names where one exists).", &transfer),
    );
    if wanted != text {
        fs::write(&path, &wanted).unwrap();
        panic!("pkg-template/index.d.ts was out of date with Error::codes() and has been regenerated: review and commit it");
    }
}

#[test]
fn every_code_the_js_raises_is_in_the_registry() {
    let codes = Error::codes();
    let mut seen = 0;
    for entry in fs::read_dir(root().join("pkg-template")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "js") {
            continue;
        }
        let text = fs::read_to_string(&path).unwrap();
        for (at, _) in text.match_indices("new EdgememError(") {
            let rest = text[at + "new EdgememError(".len()..].trim_start();
            let Some(rest) = rest.strip_prefix('"') else { continue };
            let code = &rest[..rest.find('"').unwrap()];
            assert!(codes.contains(&code), "{} raises {code:?}, which Error::codes() lacks", path.display());
            seen += 1;
        }
    }
    assert!(seen >= 5, "found only {seen} codes raised in pkg-template/*.js");
}
