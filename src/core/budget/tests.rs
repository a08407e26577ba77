//! Budget allocation: order, the priority threshold, the reserve, tools,
//! token- and character-boundary truncation, and bad input.

use super::models::{Counting, MODELS};
use super::*;
use crate::core::tokenizer::ranks::Ranks;
use crate::core::tokenizer::{Encoding, EncodingName};
use std::sync::OnceLock;

fn o200k() -> &'static Encoding {
    static ENC: OnceLock<Encoding> = OnceLock::new();
    ENC.get_or_init(|| {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/node_modules/gpt-tokenizer/data/o200k_base.tiktoken");
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e} (run `make setup`)"));
        Encoding::from_ranks(EncodingName::O200kBase, Ranks::from_tiktoken(&text).unwrap()).unwrap()
    })
}

fn slot(name: &str, content: &str, priority: u8) -> Slot {
    Slot { name: name.into(), content: content.into(), priority }
}

#[test]
fn slots_go_in_priority_order_and_the_threshold_decides_truncate_or_drop() {
    let enc = o200k();
    let words = |n: usize| vec!["word"; n].join(" "); // one token per word in o200k
    let slots = [
        slot("history", &words(40), 5),
        slot("system", &words(10), 10),
        slot("memories", &words(90), 7),
        slot("scratch", &words(5), 1),
    ];
    let budget = Budget { reserve_for_output_tokens: 20, ..Budget::new(100) };
    let b = build(enc, &budget, &slots, None).unwrap();
    let got: Vec<(&str, SlotStatus, usize)> = b.slots.iter().map(|r| (r.name.as_str(), r.status, r.tokens)).collect();
    // 80 available: system 10+3, memories truncated to the 67 left (64 + 3),
    // history (priority 5) dropped, scratch (priority 1) dropped.
    assert_eq!(
        got,
        vec![("system", SlotStatus::Kept, 13), ("memories", SlotStatus::Truncated, 67), ("history", SlotStatus::Dropped, 0), ("scratch", SlotStatus::Dropped, 0)]
    );
    assert_eq!((b.used_tokens, b.left_tokens, b.window_tokens), (80, 0, 100));
    assert!(b.context.starts_with("word word"));
    // At the boundary: priority 6 is below the default threshold of 7.
    let six = [slot("a", &words(200), 6)];
    assert_eq!(build(enc, &Budget::new(50), &six, None).unwrap().slots[0].status, SlotStatus::Dropped);
    let seven = [slot("a", &words(200), 7)];
    assert_eq!(build(enc, &Budget::new(50), &seven, None).unwrap().slots[0].status, SlotStatus::Truncated);
    // Equal priorities keep the caller's order.
    let ties = [slot("first", "a", 3), slot("second", "b", 3)];
    let names: Vec<String> = build(enc, &Budget::new(50), &ties, None).unwrap().slots.into_iter().map(|r| r.name).collect();
    assert_eq!(names, ["first", "second"]);
}

#[test]
fn tools_and_overhead_are_counted() {
    let enc = o200k();
    let tools = r#"[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]"#;
    let with = build(enc, &Budget::new(1000), &[slot("s", "hello", 5)], Some(tools)).unwrap();
    let without = build(enc, &Budget::new(1000), &[slot("s", "hello", 5)], None).unwrap();
    assert_eq!(with.tools_tokens, Counter::count(enc, tools));
    assert_eq!(with.used_tokens, without.used_tokens + with.tools_tokens);
    assert_eq!(without.used_tokens, 1 + 3, "one token plus the per-message overhead");
}

#[test]
fn truncation_never_splits_a_character_and_always_fits() {
    let enc = o200k();
    let text = "Grüße 👩‍👩‍👧 中文字符测试 e\u{301} 🇫🇷 naïve — done. ".repeat(8);
    let total = Counter::count(enc, &text);
    for k in 0..=total {
        let cut = Counter::truncate(enc, &text, k);
        assert!(text.starts_with(cut));
        assert!(Counter::count(enc, cut) <= k, "budget {k}");
        // A &str cannot hold half a character; JS sees whole UTF-16 pairs too.
        assert!(text.is_char_boundary(cut.len()));
    }
    assert_eq!(Counter::truncate(enc, &text, total), text);
    let est = Estimator;
    for k in 0..40 {
        let cut = est.truncate(&text, k);
        assert!(est.count(cut) <= k && text.is_char_boundary(cut.len()));
    }
}

#[test]
fn every_model_in_the_table_builds_within_its_window() {
    let enc = o200k();
    let big = "lorem ipsum dolor ".repeat(5_000);
    for m in MODELS {
        let window = m.context_window_tokens as usize;
        let budget = Budget { reserve_for_output_tokens: m.output_tokens_max as usize, ..Budget::new(window.min(20_000)) };
        let counter: &dyn Counter = match m.counting {
            Counting::Exact(_) => enc,
            Counting::Estimate | Counting::Custom => &Estimator,
        };
        if budget.reserve_for_output_tokens >= budget.window_tokens {
            continue;
        }
        let b = build(counter, &budget, &[slot("a", &big, 9), slot("b", &big, 3)], None).unwrap();
        assert!(b.used_tokens + budget.reserve_for_output_tokens <= budget.window_tokens, "{}", m.name);
        assert_eq!(b.used_tokens, counter.count(&b.context) + 3, "{}: the report matches the context", m.name);
    }
}

#[test]
fn bad_budgets_are_refused() {
    let e = Estimator;
    let s = [slot("a", "x", 5)];
    for (budget, slots) in [
        (Budget::new(0), s.to_vec()),
        (Budget::new(limits::WINDOW_TOKENS_MAX + 1), s.to_vec()),
        (Budget { reserve_for_output_tokens: 100, ..Budget::new(100) }, s.to_vec()),
        (Budget::new(100), vec![slot("a", "x", limits::SLOT_PRIORITY_MAX + 1)]),
        (Budget::new(100), vec![slot("", "x", 1)]),
        (Budget { message_overhead_tokens: 1_000, ..Budget::new(100) }, s.to_vec()),
    ] {
        assert_eq!(build(&e, &budget, &slots, None).unwrap_err().code(), "invalid_input", "{budget:?}");
    }
    let many = vec![slot("a", "x", 1); limits::SLOTS_MAX + 1];
    assert_eq!(build(&e, &Budget::new(100), &many, None).unwrap_err().code(), "limit_exceeded");
}
