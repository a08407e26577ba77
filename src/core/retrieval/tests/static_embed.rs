//! The static embedder on a small hand-made asset: BERT's tokenizer rules,
//! sums of rows, and typed refusals of damaged assets. The shipped asset is
//! checked against the Python reference in `golden_vectors_match_the_reference`.

use crate::core::retrieval::StaticEmbedder;

const DIM: usize = 16;
const VOCAB: &[&str] = &["[PAD]", "[UNK]", "un", "##aff", "##able", "cafe", "hello", ",", "!", "the", "世", "##s", "user", "like"];

/// An asset whose token `i` has the basis row `i % DIM` (scale 1), and
/// whose `[PAD]` and `[UNK]` rows are zero (ignored), as the distiller writes.
fn asset() -> Vec<u8> {
    let mut b = b"EMB1".to_vec();
    let name = b"test-static-v1";
    for n in [DIM, VOCAB.len(), name.len()] {
        b.extend_from_slice(&(n as u32).to_le_bytes());
    }
    b.extend_from_slice(name);
    for n in [1u32, 512, 100] {
        b.extend_from_slice(&n.to_le_bytes());
    }
    for t in VOCAB {
        b.push(t.len() as u8);
        b.extend_from_slice(t.as_bytes());
    }
    for i in 0..VOCAB.len() {
        let scale: f32 = if i < 2 { 0.0 } else { 1.0 };
        b.extend_from_slice(&scale.to_le_bytes());
    }
    for i in 0..VOCAB.len() {
        for j in 0..DIM {
            b.push(if i >= 2 && j == i % DIM { 100 } else { 0 });
        }
    }
    let crc = crc32fast::hash(&b);
    b.extend_from_slice(&crc.to_le_bytes());
    b
}

fn tokens(e: &StaticEmbedder, text: &str) -> Vec<&'static str> {
    let mut out = Vec::new();
    e.for_each_token(text, |id| out.push(VOCAB[id as usize]));
    out
}

#[test]
fn tokenizes_as_bert_uncased_does() {
    let e = StaticEmbedder::from_asset(&asset()).unwrap();
    assert_eq!((e.name(), e.dim()), ("test-static-v1", DIM));
    assert_eq!(tokens(&e, "unaffable"), ["un", "##aff", "##able"]);
    // Lowercase, accents folded, punctuation split off, CJK one per word.
    assert_eq!(tokens(&e, "Hello, CAFÉ!"), ["hello", ",", "cafe", "!"]);
    assert_eq!(tokens(&e, "Cafe\u{301}\u{200b}s"), ["cafe", "##s"]);
    assert_eq!(tokens(&e, "世世"), ["世", "世"]);
    // A word with a piece missing is one unknown token, as is an overlong word.
    assert_eq!(tokens(&e, "unaffx the"), ["[UNK]", "the"]);
    assert_eq!(tokens(&e, &"un".repeat(51)), ["[UNK]"]);
    assert!(tokens(&e, " \t\n\u{0}").is_empty());
}

#[test]
fn a_vector_is_the_normalized_sum_of_known_rows() {
    let e = StaticEmbedder::from_asset(&asset()).unwrap();
    let v = e.embed_vec("user like user zzz").unwrap();
    // user = row 12, like = row 13; the unknown word's zero row adds nothing.
    let norm = (2.0f32 * 2.0 + 1.0).sqrt();
    assert!((v[12] - 2.0 / norm).abs() < 1e-6 && (v[13] - 1.0 / norm).abs() < 1e-6, "{v:?}");
    assert!((v.iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-5);
    // Nothing known: the first basis vector, a valid cosine vector.
    let none = e.embed_vec("zzz ???").unwrap();
    assert_eq!(none[0], 1.0);
    assert_eq!(e.embed(&"x".repeat(crate::core::limits::MEMORY_TEXT_BYTES_MAX + 1), &mut [0.0; DIM]).unwrap_err().code(), "payload_too_large");
    assert_eq!(e.embed("x", &mut [0.0; 3]).unwrap_err().code(), "dimension_mismatch");
}

#[test]
fn damaged_assets_are_typed_errors() {
    let good = asset();
    let mut flipped = good.clone();
    flipped[40] ^= 1;
    let mut bad_magic = good.clone();
    bad_magic[0] = b'X';
    for (what, bytes) in [("truncated", &good[..good.len() - 9]), ("checksum", &flipped[..]), ("magic", &bad_magic[..]), ("empty", &[][..])] {
        let err = StaticEmbedder::from_asset(bytes).unwrap_err();
        assert_eq!(err.code(), "invalid_input", "{what}: {err}");
    }
    // A consistent file (checksum and all) whose header lies about its size.
    let mut lying = good[..good.len() - 4].to_vec();
    lying[8..12].copy_from_slice(&(VOCAB.len() as u32 + 1).to_le_bytes());
    let crc = crc32fast::hash(&lying);
    lying.extend_from_slice(&crc.to_le_bytes());
    assert_eq!(StaticEmbedder::from_asset(&lying).unwrap_err().code(), "invalid_input");
}

#[test]
fn golden_vectors_match_the_reference() {
    let root = env!("CARGO_MANIFEST_DIR");
    let asset = std::fs::read(format!("{root}/assets/embedder/minilm-static.bin")).expect("the shipped asset (scripts/embedder/distill.py)");
    let e = StaticEmbedder::from_asset(&asset).unwrap();
    let golden = std::fs::read_to_string(format!("{root}/tests/data/embedder/golden.jsonl")).unwrap();
    let mut checked = 0;
    for line in golden.lines().filter(|l| !l.trim().is_empty()) {
        let g: serde_json::Value = serde_json::from_str(line).unwrap();
        let text = g["text"].as_str().unwrap();
        let mut toks = Vec::new();
        e.for_each_token(text, |id| toks.push(id));
        let want_tokens = g["tokens"].as_array().unwrap().len();
        assert_eq!(toks.len(), want_tokens, "token count of {text:?}");
        let Some(want) = g["vector"].as_array() else { continue };
        let got = e.embed_vec(text).unwrap();
        let cos: f64 = got.iter().zip(want).map(|(a, b)| f64::from(*a) * b.as_f64().unwrap()).sum();
        assert!(cos > 0.9999, "{text:?}: cosine {cos} with the reference");
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} golden vectors");
}

#[test]
fn the_mixed_vector_blends_both_cosines_by_the_named_weight() {
    use crate::core::limits::EMBED_MIX_STATIC_WEIGHT as W;
    use crate::core::retrieval::{Embedder, MixedEmbedder};
    let model = std::rc::Rc::new(StaticEmbedder::from_asset(&asset()).unwrap());
    let mixed = MixedEmbedder::new(model.clone());
    assert_eq!(mixed.dim(), DIM + crate::core::limits::EMBED_DIM_DEFAULT);
    assert_eq!(mixed.identity(), format!("test-static-v1+edgemem-hash-v1/384@{W}"));
    let hash = Embedder::default();
    let cos = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
    let (a, b) = ("user like cafe", "the user, hello");
    let (ma, mb) = (mixed.embed_vec(a).unwrap(), mixed.embed_vec(b).unwrap());
    let want = W * cos(&model.embed_vec(a).unwrap(), &model.embed_vec(b).unwrap()) + (1.0 - W) * cos(&hash.embed_vec(a).unwrap(), &hash.embed_vec(b).unwrap());
    assert!((cos(&ma, &mb) - want).abs() < 1e-5, "{} vs {want}", cos(&ma, &mb));
    assert!((cos(&ma, &ma) - 1.0).abs() < 1e-5);
}
