//! History: compaction at the threshold, tool pairs, summary folding, hook
//! failures, the tool cache's TTLs, patches and rollback, and assembly
//! within every model's window.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde_json::json;

use super::compact::{check_summary, plan, usage, CompactionConfig};
use super::extractive::summarize;
use super::prompt::{assemble, render_anthropic, render_openai, to_messages, PromptBudget, PromptParts};
use super::*;
use crate::core::budget::models::{Counting, MODELS};
use crate::core::budget::{Counter, Estimator};
use crate::core::engine::{Engine, HistoryApplied, HistoryOp, Op};
use crate::core::session::{Message, Session};
use crate::core::tokenizer::ranks::Ranks;
use crate::core::tokenizer::{Encoding, EncodingName};

fn encoding(name: EncodingName) -> &'static Encoding {
    static O200K: OnceLock<Encoding> = OnceLock::new();
    static CL100K: OnceLock<Encoding> = OnceLock::new();
    let cell = if name == EncodingName::O200kBase { &O200K } else { &CL100K };
    cell.get_or_init(|| {
        let path = format!("{}/node_modules/gpt-tokenizer/data/{}.tiktoken", env!("CARGO_MANIFEST_DIR"), name.as_str());
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e} (run `make setup`)"));
        Encoding::from_ranks(name, Ranks::from_tiktoken(&text).unwrap()).unwrap()
    })
}

fn msg(i: usize, role: &str, content: &str) -> Message {
    Message { id: format!("m{i:04}"), role: role.into(), content: content.into(), created_at: i as u64, persisted_at: None, tokens: Default::default() }
}

fn chat(n: usize) -> Vec<Message> {
    (0..n)
        .map(|i| {
            let role = if i % 2 == 0 { "user" } else { "assistant" };
            msg(i, role, &format!("Turn {i}: the shipment to warehouse {} holds {} crates of part P-{}.", i % 7, i * 3, i % 11))
        })
        .collect()
}

fn engine_with(messages: Vec<Message>) -> Engine {
    let mut e = Engine::new();
    let s = Session { messages, ..Session::new("s".into(), 0) };
    e.apply(&Op::SessionPut { session: s }, 1).unwrap();
    e
}

#[test]
fn compaction_starts_past_the_threshold_and_keeps_the_newest_turns() {
    let c = &Estimator;
    let turns = chat(40);
    let total = usage(c, &CompactionConfig::for_window(100_000), None, &turns).total_tokens();
    // A window whose 70 % threshold sits just above the history: nothing to do.
    let mut cfg = CompactionConfig::for_window(total * 10 / 7 + 10);
    assert!(cfg.summarize_at_tokens >= total);
    assert_eq!(plan(c, &cfg, None, &turns).unwrap(), None);
    // Just below: compact, keeping at most keep_recent_tokens verbatim.
    cfg = CompactionConfig::for_window(total * 10 / 7 - 10);
    assert!(cfg.summarize_at_tokens < total);
    let p = plan(c, &cfg, None, &turns).unwrap().expect("over the threshold");
    assert!(p.count > 0 && p.count < turns.len());
    assert_eq!(p.through_id, turns[p.count - 1].id);
    assert!(p.kept_tokens <= cfg.keep_recent_tokens);
    let kept = usage(c, &cfg, None, &turns[p.count..]).total_tokens();
    assert_eq!(kept, p.kept_tokens);
    // One more turn would not have fitted.
    let one_more = usage(c, &cfg, None, &turns[p.count - 1..]).total_tokens();
    assert!(one_more > cfg.keep_recent_tokens);
}

#[test]
fn a_tool_call_and_its_results_are_never_split() {
    let c = &Estimator;
    let mut turns = chat(30);
    // Make the cut land inside a call/result group whatever the config.
    for (i, turn) in turns.iter_mut().enumerate().take(25).skip(5) {
        *turn = msg(i, "tool", &format!("{{\"balance\": \"{i}.00\", \"asset\": \"USDC\"}}"));
    }
    for window in (200..2_000).step_by(37) {
        let Ok(cfg) = CompactionConfig::for_window(window).validate().map(|_| CompactionConfig::for_window(window)) else { continue };
        if let Some(p) = plan(c, &cfg, None, &turns).unwrap() {
            assert!(p.count == turns.len() || turns[p.count].role != "tool", "window {window}: kept part starts with a tool result");
        }
    }
}

#[test]
fn compact_op_archives_folds_and_refuses_stale_plans() {
    let c = &Estimator;
    let turns = chat(80);
    let mut e = engine_with(turns.clone());
    let cfg = CompactionConfig::for_window(1_000);
    let p = plan(c, &cfg, None, &turns).unwrap().unwrap();
    let first = summarize(c, None, &turns[..p.count], cfg.summary_tokens_max);
    check_summary(c, &cfg, &first).unwrap();
    let op = Op::History(HistoryOp::Compact { session_id: "s".into(), count: p.count, through_id: p.through_id.clone(), summary: first.clone() });
    let Op::History(ref hop) = op else { unreachable!() };
    let stale = e.clone();
    let Ok(super::super::engine::Applied::History(HistoryApplied::Compacted { session, archived })) = e.apply(&op, 2) else { panic!() };
    assert_eq!(archived, p.count);
    assert_eq!(session.messages, turns[p.count..].to_vec());
    assert_eq!(session.context.as_deref(), Some(first.as_str()));
    let (page, total) = e.archived("s", 0, 1_000);
    assert_eq!((page, total), (turns[..p.count].to_vec(), p.count), "originals are kept, in order");
    // The same plan again no longer matches: refused, nothing changes.
    let before = e.clone();
    assert_eq!(e.apply(&Op::History(hop.clone()), 3).unwrap_err().code(), "compaction_stale");
    assert_eq!(e, before);
    // A plan made before a concurrent change is refused too.
    let mut raced = stale;
    raced.apply(&Op::SessionPut { session: Session { messages: chat(3), ..Session::new("s".into(), 0) } }, 2).unwrap();
    assert_eq!(raced.apply(&op, 3).unwrap_err().code(), "compaction_stale");

    // A second compaction folds the first summary into the new one.
    let mut more = session.messages.clone();
    more.extend((80..160).map(|i| msg(i, if i % 2 == 0 { "user" } else { "assistant" }, &format!("Later turn {i} about invoice INV-{i}."))));
    let p2 = plan(c, &cfg, Some(&first), &more).unwrap().unwrap();
    let second = summarize(c, Some(&first), &more[..p2.count], cfg.summary_tokens_max);
    check_summary(c, &cfg, &second).unwrap();
    assert!(second.contains("INV-"), "new turns are summarized: {second}");
    let kept_from_first = first.split(". ").filter(|s| second.contains(s.trim_end_matches('.'))).count();
    assert!(kept_from_first > 0, "the previous summary is folded in, not thrown away: {second}");
}

#[test]
fn bad_summaries_leave_the_history_intact() {
    let c = &Estimator;
    let cfg = CompactionConfig::for_window(1_000);
    for bad in ["", "   \n", &"word ".repeat(cfg.summary_tokens_max * 2)] {
        assert_eq!(check_summary(c, &cfg, bad).unwrap_err().code(), "hook_failed");
    }
    let mut e = engine_with(chat(10));
    let before = e.clone();
    let op = Op::History(HistoryOp::Compact { session_id: "s".into(), count: 3, through_id: "m0002".into(), summary: " ".into() });
    assert!(e.apply(&op, 2).is_err());
    assert_eq!(e, before);
}

#[test]
fn extractive_summary_respects_its_budget_with_an_exact_tokenizer() {
    let enc = encoding(EncodingName::O200kBase);
    let turns = chat(200);
    for budget in [5, 20, 64, 300] {
        let s = summarize(enc, None, &turns, budget);
        assert!(!s.is_empty());
        assert!(Counter::count(enc, &s) <= budget, "budget {budget}: {s}");
    }
}

#[test]
fn tool_cache_hits_until_the_ttl_then_misses() {
    let mut e = engine_with(chat(2));
    let mut ttls = BTreeMap::new();
    ttls.insert("wallet.balance".to_owned(), 30);
    e.apply(&Op::History(HistoryOp::ToolTtlsSet { ttls }), 1).unwrap();
    let a = canonical_args(&json!({"asset": "USDC", "account": "a1"})).unwrap();
    let b = canonical_args(&json!({"account": "a1", "asset": "USDC"})).unwrap();
    assert_eq!(a, b, "key order does not matter");
    let put = |tool: &str, ttl| Op::History(HistoryOp::ToolCachePut { session_id: "s".into(), tool: tool.into(), args: a.clone(), result: json!({"balance": "10.5"}), ttl_seconds: ttl });
    e.apply(&put("wallet.balance", None), 1_000).unwrap();
    e.apply(&put("casino.odds", None), 1_000).unwrap();
    e.apply(&put("trading.quote", Some(2)), 1_000).unwrap();
    assert_eq!(e.tool_cached("s", "wallet.balance", &a, 30_999).unwrap().result, json!({"balance": "10.5"}));
    assert!(e.tool_cached("s", "wallet.balance", &a, 31_000).is_none(), "the tool's own TTL");
    assert!(e.tool_cached("s", "trading.quote", &a, 3_000).is_none(), "the call's TTL");
    assert!(e.tool_cached("s", "casino.odds", &a, 300_999).is_some(), "the default TTL");
    assert!(e.tool_cached("s", "casino.odds", &a, 301_000).is_none());
    // Invalidation by tool, then a sweep on expiry.
    let Ok(super::super::engine::Applied::History(HistoryApplied::Invalidated { count })) =
        e.apply(&Op::History(HistoryOp::ToolCacheInvalidate { session_id: "s".into(), tool: Some("casino.odds".into()), args: None }), 2_000)
    else {
        panic!()
    };
    assert_eq!(count, 1);
    assert!(e.tool_cached("s", "casino.odds", &a, 2_000).is_none());
    e.apply(&Op::SessionsExpire, 400_000).unwrap();
    assert!(e.tool_cache_entries("s", 0).is_empty(), "expired entries are swept");
    // Refusals change nothing.
    let before = e.clone();
    for op in [
        put("bad name!", None),
        put("ok", Some(0)),
        Op::History(HistoryOp::ToolCachePut { session_id: "missing".into(), tool: "t".into(), args: a.clone(), result: json!(1), ttl_seconds: None }),
        Op::History(HistoryOp::ToolCachePut { session_id: "s".into(), tool: "t".into(), args: a.clone(), result: json!("x".repeat(70_000)), ttl_seconds: None }),
    ] {
        assert!(e.apply(&op, 5).is_err(), "{op:?}");
        assert_eq!(e, before);
    }
}

#[test]
fn patches_append_and_go_by_glob_and_prompts_roll_back() {
    let mut e = Engine::new();
    let agent = |op| Op::History(op);
    e.apply(&agent(HistoryOp::PromptSet { agent_id: "bot".into(), text: "You are v1.".into(), note: None }), 1).unwrap();
    e.apply(&agent(HistoryOp::PromptSet { agent_id: "bot".into(), text: "You are v2.".into(), note: Some("tone".into()) }), 2).unwrap();
    for (i, t) in ["CRITICAL: Warehouse Ohio closed", "CRITICAL: Warehouse Ohio-2 flooded", "CRITICAL: Warehouse Texas closed", "Note: be brief"].iter().enumerate() {
        e.apply(&agent(HistoryOp::PatchAppend { agent_id: "bot".into(), patch_id: format!("p{i}"), text: (*t).into() }), 3).unwrap();
    }
    let Ok(super::super::engine::Applied::History(HistoryApplied::Agent { removed, config, .. })) =
        e.apply(&agent(HistoryOp::PatchRemove { agent_id: "bot".into(), glob: "CRITICAL: Warehouse Ohio*".into() }), 4)
    else {
        panic!()
    };
    assert_eq!(removed, vec!["p0", "p1"]);
    assert_eq!(config.system_text(), "You are v2.\n\nCRITICAL: Warehouse Texas closed\n\nNote: be brief");
    e.apply(&agent(HistoryOp::PromptRollback { agent_id: "bot".into(), version: 1 }), 5).unwrap();
    assert_eq!(e.agent("bot").unwrap().active_prompt().unwrap().text, "You are v1.");
    assert_eq!(e.agent("bot").unwrap().prompts.len(), 2, "rollback keeps every version");
    let before = e.clone();
    for op in [
        HistoryOp::PromptRollback { agent_id: "bot".into(), version: 9 },
        HistoryOp::PromptSet { agent_id: "bot".into(), text: "  ".into(), note: None },
        HistoryOp::PatchRemove { agent_id: "bot".into(), glob: String::new() },
        HistoryOp::ToolsAllow { agent_id: "bot".into(), tools: Some(vec!["bad tool".into()]) },
        HistoryOp::PromptSet { agent_id: "a/b".into(), text: "x".into(), note: None },
    ] {
        assert!(e.apply(&agent(op.clone()), 6).is_err(), "{op:?}");
        assert_eq!(e, before);
    }
    e.apply(&agent(HistoryOp::ToolsAllow { agent_id: "bot".into(), tools: Some(vec!["get_working_memory".into()]) }), 7).unwrap();
    assert!(e.agent("bot").unwrap().tool_allowed("get_working_memory"));
    assert!(!e.agent("bot").unwrap().tool_allowed("create_transfer"));
    let back = Engine::decode_snapshot(&e.encode_snapshot().unwrap()).unwrap();
    assert_eq!(back, e, "configuration survives a snapshot");
}

#[test]
fn glob_matching() {
    for (p, t, want) in [
        ("CRITICAL: Warehouse Ohio*", "CRITICAL: Warehouse Ohio is closed", true),
        ("CRITICAL: Warehouse Ohio*", "critical: Warehouse Ohio", false),
        ("*Ohio*", "a\nOhio\nb", true),
        ("a?c", "abc", true),
        ("a?c", "ac", false),
        ("a\\*", "a*", true),
        ("a\\*", "ab", false),
        ("*a*a*a*a*b", &"a".repeat(200), false),
        ("*", "", true),
        ("é*", "été", true),
    ] {
        assert_eq!(glob_match(p, t), want, "{p:?} on {t:?}");
    }
}

#[test]
fn assembly_fits_every_model_in_the_table() {
    let turns: Vec<Message> = (0..500)
        .map(|i| {
            let role = match i % 3 {
                0 => "user",
                1 => "assistant",
                _ => "tool",
            };
            msg(i, role, &format!("Turn {i}: {}", "numbers 12345 and words ".repeat(1 + i % 17)))
        })
        .collect();
    let memories: Vec<String> = (0..40).map(|i| format!("Memory {i}: the user prefers {} shipping.", if i % 2 == 0 { "fast" } else { "cheap" })).collect();
    let summary = "The user asked about crates ".repeat(30);
    for m in MODELS {
        let counter: &dyn Counter = match m.counting {
            Counting::Exact(name) => encoding(name),
            Counting::Estimate | Counting::Custom => &Estimator,
        };
        // Full windows would hold everything; small ones force every cut.
        for window in [m.context_window_tokens as usize, 2_000, 600] {
            let reserve = (m.output_tokens_max as usize).min(window / 4);
            let budget = PromptBudget { reserve_for_output_tokens: reserve, tools_tokens: 50, ..PromptBudget::new(window) };
            let parts = PromptParts { system: Some("You are a logistics agent."), summary: Some(&summary), turns: &turns, memories: &memories, query: Some("Where are my crates?") };
            let a = assemble(counter, &budget, &parts).unwrap();
            let counted: usize = a.messages.iter().map(|x| counter.count(&x.content) + 3).sum();
            assert_eq!(a.used_tokens, counted + 50, "{} @ {window}: the report matches the messages", m.name);
            assert!(a.used_tokens + reserve <= window, "{} @ {window}: over the window", m.name);
            assert_eq!(a.messages.last().unwrap().content, "Where are my crates?");
            assert_eq!(a.turns_kept + a.dropped.turns, turns.len());
            assert_eq!(a.memories_kept + a.dropped.memories, memories.len());
            // The kept turns are the newest, whole groups: never a tool result first.
            let first_turn = &turns[a.dropped.turns..];
            assert!(first_turn.first().is_none_or(|t| t.role != "tool"), "{}: split a tool group", m.name);
            if window == 600 {
                assert!(a.dropped.turns > 0);
            }
        }
    }
}

#[test]
fn to_messages_puts_the_summary_first_in_both_vendor_shapes() {
    let turns = vec![msg(0, "user", "hi"), msg(1, "assistant", "calling"), msg(2, "tool", "{\"ok\":true}"), msg(3, "user", "thanks")];
    let m = to_messages(Some("Earlier: the user is Ana."), &turns);
    assert_eq!(m[0].role, "system");
    assert!(m[0].content.ends_with("Earlier: the user is Ana."));
    let o = render_openai(&m);
    assert_eq!(o[3], json!({"role": "user", "content": "[tool result]\n{\"ok\":true}"}));
    let a = render_anthropic(&m);
    assert!(a["system"].as_str().unwrap().contains("Ana"));
    let roles: Vec<&str> = a["messages"].as_array().unwrap().iter().map(|x| x["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "user"], "tool result merged into the following user turn");
}

/// Counts how often each text is tokenized.
struct Tally(std::cell::RefCell<Vec<String>>, Option<u8>);

impl Counter for Tally {
    fn count(&self, text: &str) -> usize {
        self.0.borrow_mut().push(text.to_owned());
        Estimator.count(text)
    }
    fn truncate<'a>(&self, text: &'a str, tokens_max: usize) -> &'a str {
        Estimator.truncate(text, tokens_max)
    }
    fn cache_key(&self) -> Option<u8> {
        self.1
    }
}

#[test]
fn each_turn_is_counted_once_across_prompts_unless_the_counter_may_change() {
    let turns: Vec<Message> = (0..200).map(|i| msg(i, if i % 2 == 0 { "user" } else { "assistant" }, &format!("turn {i} about crates and ports"))).collect();
    let budget = PromptBudget::new(128_000);
    let parts = PromptParts { system: None, summary: None, turns: &turns, memories: &[], query: Some("where now?") };
    let is_turn = |t: &String| t.starts_with("turn ");
    let keyed = Tally(Default::default(), Some(42));
    let first = assemble(&keyed, &budget, &parts).unwrap();
    assert_eq!(keyed.0.borrow().iter().filter(|t| is_turn(t)).count(), 200, "every turn counted once");
    let second = assemble(&keyed, &budget, &parts).unwrap();
    assert_eq!(keyed.0.borrow().iter().filter(|t| is_turn(t)).count(), 200, "and never again");
    assert_eq!(first.used_tokens, second.used_tokens);
    assert_eq!(turns[7].tokens.get(42), Some(Estimator.count("turn 7 about crates and ports")));
    // Another encoding counts afresh; a caller's counter (no key) every time.
    let other = Tally(Default::default(), Some(43));
    assemble(&other, &budget, &parts).unwrap();
    assert_eq!(other.0.borrow().iter().filter(|t| is_turn(t)).count(), 200);
    let unkeyed = Tally(Default::default(), None);
    assemble(&unkeyed, &budget, &parts).unwrap();
    assemble(&unkeyed, &budget, &parts).unwrap();
    assert_eq!(unkeyed.0.borrow().iter().filter(|t| is_turn(t)).count(), 400);
}
