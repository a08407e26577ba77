use crate::core::limits;
use crate::core::retrieval::embed::Embedder;
use crate::core::retrieval::hash::stable_hash;

fn cos(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn deterministic_unit_vectors() {
    let e = Embedder::default();
    assert_eq!(e.dim(), limits::EMBED_DIM_DEFAULT);
    let a = e.embed_vec("The user prefers dark mode in the editor").unwrap();
    let b = e.embed_vec("The user prefers dark mode in the editor").unwrap();
    assert_eq!(a, b);
    assert!((cos(&a, &a) - 1.0).abs() < 1e-5);
    // Pinned: if this changes, stored vectors no longer match new queries,
    // so EMBEDDER_NAME must change with it.
    let bits: Vec<u8> = a.iter().flat_map(|x| x.to_le_bytes()).collect();
    assert_eq!(stable_hash(0, &bits), 16_701_041_291_355_892_839, "update EMBEDDER_NAME and this value together");
}

#[test]
fn similar_texts_score_higher_than_unrelated() {
    let e = Embedder::default();
    let q = e.embed_vec("what editor theme does the user like").unwrap();
    let near = e.embed_vec("The user likes a dark editor theme").unwrap();
    let far = e.embed_vec("Invoices are due within thirty days of shipment").unwrap();
    assert!(cos(&q, &near) > cos(&q, &far) + 0.2, "{} vs {}", cos(&q, &near), cos(&q, &far));
    // Word pieces match across forms.
    let a = e.embed_vec("borrowing").unwrap();
    let b = e.embed_vec("borrowed").unwrap();
    let c = e.embed_vec("shipment").unwrap();
    assert!(cos(&a, &b) > cos(&a, &c));
}

#[test]
fn empty_text_gets_a_valid_vector() {
    let e = Embedder::new(16).unwrap();
    let v = e.embed_vec("  ...  ").unwrap();
    assert_eq!(v[0], 1.0);
    assert!(v[1..].iter().all(|&x| x == 0.0));
}

#[test]
fn bad_dimensions_and_sizes() {
    assert!(Embedder::new(limits::EMBED_DIM_MIN - 1).is_err());
    assert!(Embedder::new(limits::VECTOR_DIM_MAX + 1).is_err());
    let e = Embedder::new(32).unwrap();
    let mut out = vec![0.0; 31];
    assert_eq!(e.embed("x", &mut out).unwrap_err().code(), "dimension_mismatch");
    let mut out = vec![0.0; 32];
    let big = "x ".repeat(limits::MEMORY_TEXT_BYTES_MAX);
    assert_eq!(e.embed(&big, &mut out).unwrap_err().code(), "payload_too_large");
    e.embed("Grüße, 東京! \u{1F600}", &mut out).unwrap();
    assert!(out.iter().all(|x| x.is_finite()));
}
