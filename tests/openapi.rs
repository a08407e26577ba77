//! `www/openapi.json` is generated from the route and schema tables.
//!
//! This test renders [`edgemem::api::openapi::document`]; when the
//! committed file differs it rewrites it and fails, so a developer commits
//! the regenerated file and CI never sees drift (the pattern of
//! `tests/registry.rs` and rust-analyzer's sourcegen tests). The Worker
//! serves the file as a static asset at `/openapi.json`.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeSet;
use std::fs;
use std::path::PathBuf;

use edgemem::api::openapi::document;
use edgemem::api::routes::ROUTES;

#[test]
fn www_openapi_json_is_generated_from_the_tables() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("www/openapi.json");
    let mut text = serde_json::to_string_pretty(&document()).unwrap();
    text.push('\n');
    let old = fs::read_to_string(&path).unwrap_or_default();
    if old != text {
        fs::write(&path, &text).unwrap();
        panic!("www/openapi.json was stale and has been regenerated: commit it");
    }
}

#[test]
fn every_route_and_method_is_described_once() {
    let doc = document();
    let paths = doc["paths"].as_object().unwrap();
    let mut ids = BTreeSet::new();
    let mut n = 0;
    for route in ROUTES {
        for (method, _) in route.methods {
            let item = paths.iter().find(|(p, _)| {
                let pat: Vec<&str> = p.trim_start_matches("/v1/").split('/').map(|s| if s.starts_with('{') { "{}" } else { s }).collect();
                pat.join("/") == route.pattern
            });
            let (p, item) = item.unwrap_or_else(|| panic!("{} has no path", route.pattern));
            let o = &item[method.to_ascii_lowercase()];
            assert!(o.is_object(), "{method} {p} is missing");
            assert!(ids.insert(o["operationId"].as_str().unwrap().to_owned()), "operationId {} twice", o["operationId"]);
            // Every `{name}` of the path is a path parameter.
            for name in p.split('/').filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}'))) {
                assert!(o["parameters"].as_array().unwrap().iter().any(|q| q["in"] == "path" && q["name"] == name), "{method} {p}: {name} is not a parameter");
            }
            n += 1;
        }
    }
    let described: usize = paths.values().map(|i| i.as_object().unwrap().len()).sum();
    assert_eq!(n, described, "the document has operations no route lists");
}
