use super::*;
use crate::core::time::parse_rfc3339;

/// 2024-06-12T15:00:00Z, a Wednesday.
const NOW: Millis = 1_718_204_400_000;

fn day(s: &str) -> Millis {
    parse_rfc3339("t", &format!("{s}T00:00:00Z")).unwrap()
}

fn run_with(strategy: &Strategy, turns: &[(&str, &str)]) -> Vec<Candidate> {
    let turns: Vec<Turn<'_>> = turns
        .iter()
        .enumerate()
        .map(|(i, (role, content))| Turn { id: ["t0", "t1", "t2", "t3", "t4", "t5"][i % 6], role, content, created_at: NOW })
        .collect();
    let mut out = Vec::new();
    extract(strategy, &turns, &mut out);
    out
}

fn run(content: &str) -> Vec<Candidate> {
    run_with(&Strategy::Discrete, &[("user", content)])
}

fn texts(content: &str) -> Vec<String> {
    run(content).into_iter().map(|c| c.text).collect()
}

fn one(content: &str) -> Candidate {
    let mut c = run(content);
    assert_eq!(c.len(), 1, "{content:?} gave {c:#?}");
    c.pop().unwrap()
}

#[test]
fn preferences_in_the_third_person_with_subjects() {
    let c = one("I prefer metric units");
    assert_eq!((c.text.as_str(), c.kind, c.subject.as_deref()), ("User prefers metric units.", CandidateKind::Preference, Some("units")));
    assert!(c.topics.contains(&"units".to_owned()), "{:?}", c.topics);
    assert_eq!(one("I prefer imperial units.").subject.as_deref(), Some("units"));
    assert_eq!(one("I like window seats").subject.as_deref(), Some("seat"));
    assert_eq!(one("I prefer aisle seats").subject.as_deref(), Some("seat"));
    assert_eq!(one("I love sushi").text, "User loves sushi.");
    assert_eq!(one("I enjoy hiking in the Alps").text, "User enjoys hiking in the Alps.");
    assert_eq!(one("I'd rather fly direct").text, "User would rather fly direct.");
    assert_eq!(one("I really like jazz").text, "User likes jazz.");
}

#[test]
fn a_negated_preference_has_the_positive_ones_subject() {
    for (yes, no) in [
        ("I like sushi", "I don't like sushi"),
        ("I love spicy food", "I hate spicy food"),
        ("I like window seats", "I can't stand window seats"),
        ("I like Nike", "I dislike Nike"),
        ("Please always show prices in euros", "Please never show prices in euros"),
    ] {
        let (a, b) = (one(yes), one(no));
        assert!(a.subject.is_some(), "{yes}");
        assert_eq!(a.subject, b.subject, "{yes} / {no}");
    }
    assert_eq!(one("i dont like mushrooms").text, "User doesn't like mushrooms.");
    assert_eq!(one("I can't stand cilantro").text, "User can't stand cilantro.");
}

#[test]
fn favorites_habits_and_settings() {
    let c = one("My favorite color is navy.");
    assert_eq!((c.text.as_str(), c.kind, c.subject.as_deref()), ("User's favorite color is navy.", CandidateKind::Preference, Some("favorite:color")));
    assert_eq!(one("my fav team is the Celtics").text, "User's favorite team is the Celtics.");
    assert_eq!(one("I always fly Delta").text, "User always flies Delta.");
    assert_eq!(one("I usually watch the news at night").text, "User usually watches the news at night.");
    assert_eq!(one("I never check bags").kind, CandidateKind::Preference);
    let c = one("Please always reply in Spanish.");
    assert_eq!((c.text.as_str(), c.subject.as_deref()), ("User wants the assistant to always reply in Spanish.", Some("language")));
    assert_eq!(one("Never book red-eye flights for me").text, "User wants the assistant to never book red-eye flights for them.");
}

#[test]
fn facts() {
    let c = one("my name is Ana");
    assert_eq!((c.text.as_str(), c.kind, c.subject.as_deref()), ("User's name is Ana.", CandidateKind::Fact, Some("name")));
    // Anonymization happens where candidates become records.
    let c = one("My email is ana.silva@example.com");
    assert_eq!(c.text, "User's email is ana.silva@example.com.");
    assert!(c.entities.is_empty(), "{:?}", c.entities);
    assert_eq!(one("my email's jo@example.org").text, "User's email is jo@example.org.");
    let c = one("I'm allergic to peanuts.");
    assert_eq!((c.text.as_str(), c.subject.as_deref()), ("User is allergic to peanuts.", Some("allergy:peanuts")));
    assert!(c.topics.contains(&"health".to_owned()));
    for (said, subject) in [
        ("I'm a vegetarian", "diet"),
        ("I am vegetarian", "diet"),
        ("im vegan", "diet"),
        ("I'm a software engineer", "job"),
        ("I work at Acme Corp", "employer"),
        ("I work as a nurse", "job"),
        ("I live in Lisbon", "home"),
        ("I'm based in Toronto", "home"),
        ("I'm from Spain", "origin"),
        ("I'm 34", "age"),
        ("I'm Tom", "name"),
        ("I'm not a beginner", "experience"),
        ("My risk tolerance is low", "risk tolerance"),
        ("My new address is 5 Main St", "address"),
    ] {
        let c = one(said);
        assert_eq!((c.kind, c.subject.as_deref()), (CandidateKind::Fact, Some(subject)), "{said}: {c:?}");
    }
    assert_eq!(one("I have a golden retriever named Max").text, "User has a golden retriever named Max.");
    assert_eq!(one("I work at Acme Corp").entities, vec!["Acme Corp"]);
    assert_eq!(one("I'm Tom").text, "User's name is Tom.");
}

#[test]
fn events_with_dates() {
    let c = one("I visited Paris in March 2024");
    assert_eq!((c.text.as_str(), c.kind, c.event_date), ("User visited Paris in March 2024.", CandidateKind::Event, Some(day("2024-03-01"))));
    assert_eq!(c.entities, vec!["Paris"]);
    let c = one("I'm flying to Tokyo on 2024-05-03.");
    assert_eq!((c.text.as_str(), c.event_date), ("User is flying to Tokyo on 2024-05-03.", Some(day("2024-05-03"))));
    assert!(c.topics.contains(&"travel".to_owned()));
    for (said, date) in [
        ("I bought a car on 15 March 2024", "2024-03-15"),
        ("I bought a car on March 15, 2024", "2024-03-15"),
        ("I bought a car on March 15th", "2024-03-15"),
        ("I bought a car on the 2nd of May 2023", "2023-05-02"),
        ("I sold my bike yesterday", "2024-06-11"),
        ("I sold my bike today", "2024-06-12"),
        ("I'm moving to Oslo tomorrow", "2024-06-13"),
        ("I sold my bike last week", "2024-06-05"),
        ("I'm moving to Oslo next Friday", "2024-06-14"),
        ("I'm moving to Oslo next Wednesday", "2024-06-19"),
        ("I sold my bike last Wednesday", "2024-06-05"),
        ("I'm moving to Oslo next month", "2024-07-01"),
        ("I sold my bike last year", "2023-01-01"),
        ("I'm moving to Oslo in 3 weeks", "2024-07-03"),
        ("I sold my bike two days ago", "2024-06-10"),
        ("I'm retiring in 2030", "2030-01-01"),
        ("Yesterday I sold my bike", "2024-06-11"),
        ("Last week, I sold my bike", "2024-06-05"),
    ] {
        let c = one(said);
        assert_eq!((c.kind, c.event_date), (CandidateKind::Event, Some(day(date))), "{said}: {c:?}");
    }
    assert_eq!(one("Yesterday I sold all my bitcoin.").text, "User sold all their bitcoin yesterday.");
    // Undated travel is still an event; an undated "was charged" is not worth one.
    assert_eq!(one("I'm moving to Berlin").event_date, None);
    assert!(run("I was charged twice").is_empty());
    assert_eq!(one("I was charged twice on 2024-06-01").event_date, Some(day("2024-06-01")));
    // "may" and "march" are words too.
    assert!(run("I may visit soon").iter().all(|c| c.event_date.is_none()));
}

#[test]
fn invalid_dates_are_not_dates() {
    for s in ["I bought a car on 2024-02-30", "I bought a car on February 30, 2024", "I bought a car on 2024-13-01"] {
        assert!(run(s).iter().all(|c| c.event_date.is_none()), "{s}");
    }
    // Before 1970 there is no Millis; the fact stays, undated.
    assert_eq!(one("My birthday is 1960-04-12").kind, CandidateKind::Fact);
}

#[test]
fn chatter_questions_requests_and_reactions_give_nothing() {
    for s in [
        "hi", "Hello!", "hey there", "thanks", "Thank you so much!", "ok", "OK.", "sure", "sounds good", "Sounds good, thanks.",
        "Got it", "cool", "perfect", "lol", "👍", "bye!", "How are you?", "What's the weather in Oslo?", "Can I change my seat?",
        "Do I need a visa?", "Is my order shipped?", "What if I miss my connection?", "I'd like to book a table for two.",
        "I'd love a recommendation", "I want the cheapest option.", "I need a taxi.", "I love it!", "I like that one better",
        "I hate this", "I prefer the second option", "I'm not sure", "I'm sorry", "I'm looking for shoes", "I think so",
        "I have a question", "I tried that already", "I'll check tomorrow", "never mind", "If I like it I'll buy two",
        "my bad", "My question is simple", "My phone is dead", "I was wondering", "I'm good, you?", "I'm fine thanks",
    ] {
        assert!(run(s).is_empty(), "{s:?} gave {:#?}", run(s));
    }
}

#[test]
fn names_possessions_restrictions_and_routines() {
    assert_eq!(one("Call me Rick.").text, "User's name is Rick.");
    assert_eq!(one("I go by Sam").subject.as_deref(), Some("name"));
    assert_eq!(one("I've got a dog").text, "User has a dog.");
    assert_eq!(one("I have Global Entry").text, "User has Global Entry.");
    assert_eq!(one("I have about $40k in an index fund").text, "User has about $40k in an index fund.");
    let c = one("I can't eat gluten");
    assert_eq!((c.text.as_str(), c.kind, c.subject.as_deref()), ("User can't eat gluten.", CandidateKind::Fact, Some("gluten")));
    let c = one("I'm more of a tea person");
    assert_eq!((c.kind, c.subject.as_deref()), (CandidateKind::Preference, Some("tea")));
    assert_eq!(one("I manage a team of 12 engineers").text, "User manages a team of 12 engineers.");
    assert!(run("I run into this error a lot").is_empty());
    let c = one("Reply in English though.");
    assert_eq!((c.text.as_str(), c.subject.as_deref()), ("User wants replies in English.", Some("language")));
    assert_eq!(one("My partner is Sam, by the way.").text, "User's partner is Sam.");
    assert_eq!(one("I don't really like bright colors").subject, one("I like bright colors").subject);
    assert_eq!(one("My card got declined yesterday").event_date, Some(day("2024-06-11")));
    assert!(run("My app keeps crashing").is_empty(), "undated states of things are not events");
    assert_eq!(one("I love anything with mushrooms").subject.as_deref(), Some("mushrooms"));
    assert_eq!(
        one("I returned the headphones on May 28 and still haven't got my refund").text,
        "User returned the headphones on May 28 and still hasn't got their refund."
    );
}

#[test]
fn statements_before_a_question_still_count() {
    assert_eq!(texts("I'm vegetarian, what do you recommend?"), ["User is vegetarian."]);
    assert_eq!(texts("I have a dog. Can I bring him?"), ["User has a dog."]);
    assert_eq!(texts("Can you find me a sushi place? I love omakase."), ["User loves omakase."]);
}

#[test]
fn clauses_markers_contractions_and_case() {
    assert_eq!(texts("Hi, my name is Ana and I live in Lisbon."), ["User's name is Ana.", "User lives in Lisbon."]);
    assert_eq!(texts("i'm vegetarian and i hate noisy rooms"), ["User is vegetarian.", "User hates noisy rooms."]);
    assert_eq!(texts("Oh btw, I prefer aisle seats lol"), ["User prefers aisle seats."]);
    assert_eq!(texts("I’m based in Toronto and I’d rather get texts than calls."), ["User is based in Toronto.", "User would rather get texts than calls."]);
    assert_eq!(texts("I AM ALLERGIC TO PEANUTS"), ["User is ALLERGIC TO PEANUTS."]);
    assert!(one("I AM ALLERGIC TO PEANUTS").entities.is_empty());
    assert_eq!(texts("Just so you know, I'm allergic to sesame"), ["User is allergic to sesame."]);
    assert_eq!(texts("I'm vegan, so please never suggest recipes with eggs."), ["User is vegan.", "User wants the assistant to never suggest recipes with eggs."]);
}

#[test]
fn entities_are_names_not_patterns_or_sentence_starts() {
    assert_eq!(one("I work at Bank of America").entities, vec!["Bank of America"]);
    assert_eq!(one("I hold 100 shares of AAPL and some TSLA").entities, vec!["AAPL", "TSLA"]);
    assert_eq!(one("My laptop is a 2019 MacBook Pro").entities, vec!["MacBook Pro"]);
    assert_eq!(one("I use an iPhone").entities, vec!["iPhone"]);
    assert!(one("My website is https://Example.com/Me").entities.is_empty());
    assert!(one("I'm flying to Rome on Friday, May 3").entities.iter().all(|e| e == "Rome"));
    assert!(!one("I love Rome").entities.iter().any(|e| e == "I"));
}

#[test]
fn strategies_choose_kinds() {
    let said = [("user", "I prefer metric units. I'm allergic to peanuts. I visited Paris in March 2024.")];
    let kinds = |s: &Strategy| run_with(s, &said).into_iter().map(|c| c.kind).collect::<Vec<_>>();
    let all = vec![CandidateKind::Preference, CandidateKind::Fact, CandidateKind::Event];
    assert_eq!(kinds(&Strategy::Discrete), all);
    assert_eq!(kinds(&Strategy::Custom { prompt: "x".into() }), all);
    assert_eq!(kinds(&Strategy::Preferences), vec![CandidateKind::Preference]);
    assert!(kinds(&Strategy::Summary).is_empty());
}

#[test]
fn only_user_turns_and_repeats_merge() {
    let out = run_with(
        &Strategy::Discrete,
        &[("assistant", "I love Lisbon!"), ("user", "I prefer aisle seats."), ("system", "I am a bot"), ("user", "i prefer aisle seats")],
    );
    assert_eq!(out.len(), 1, "{out:#?}");
    assert_eq!(out[0].extracted_from, vec!["t1", "t3"]);
    // Candidates already in `out` are left alone.
    let mut out = vec![out[0].clone()];
    extract(&Strategy::Discrete, &[Turn { id: "x", role: "User", content: "I prefer aisle seats.", created_at: NOW }], &mut out);
    assert_eq!(out.len(), 2);
}

#[test]
fn candidates_per_call_are_bounded() {
    let many = (0..200).map(|i| format!("I like thing{i}.")).collect::<Vec<_>>().join(" ");
    let turns: Vec<String> = (0..10).map(|_| many.clone()).collect();
    let turns: Vec<Turn<'_>> = turns.iter().map(|c| Turn { id: "t", role: "user", content: c, created_at: NOW }).collect();
    let mut out = Vec::new();
    extract(&Strategy::Discrete, &turns, &mut out);
    assert_eq!(out.len(), EXTRACT_CANDIDATES_MAX);
}

#[test]
fn long_turns_are_cut_at_a_sentence() {
    let filler = "The weather was fine. ".repeat(EXTRACT_TURN_BYTES_MAX / 22 + 10);
    assert!(run(&format!("{filler}I prefer metric units.")).is_empty(), "past the bound is not read");
    let c = run(&format!("I prefer metric units. {filler}"));
    assert_eq!(c.len(), 1);
    // A statement cut by the bound is dropped, not stored half.
    let pad = "x".repeat(EXTRACT_TURN_BYTES_MAX - 20);
    assert!(run(&format!("{pad}. I prefer metric units and more")).is_empty());
    // The cut lands inside a four-byte character.
    let emoji = format!("{}I prefer tea. {}", "🙂".repeat(3), "🙂".repeat(EXTRACT_TURN_BYTES_MAX));
    assert_eq!(texts(&emoji), ["User prefers tea."]);
}

#[test]
fn odd_input_never_panics() {
    let odd = [
        "", " ", "\n\n", ".", "?!?!", "I", "i'm", "my", "my is", "my x's", "I'm a", "I have a", "please always", "always",
        "I'm allergic to", "My favorite is", "I'm going to", "Yesterday", "Yesterday I", "last", "in", "3 days ago", "in 99999 years",
        "I visited on 9999-12-31", "I visited on 0000-01-01", "I bought it on 31st", "I'm 999", "I'm 0",
        "İ prefer İstanbul", "I prefer ß and ﬁ", "I prefer \u{0301}\u{0301}", "I prefer 日本語の本", "我喜欢寿司", "أنا أحب السوشي",
        "I\u{200B}prefer\u{200B}tea", "I prefer tea\u{0}", "my name's 's", "my 's is", "I'm 's", "\u{feff}I prefer tea",
        "I love 🍣🍣🍣", "I’m", "’", "“I prefer tea”", "I — prefer — tea", "I prefer tea -", "- - -", "I'm Tom,", ",,,,",
        "I'd", "I'd rather", "I was born", "I was born in", "I've been", "I will be", "My husband and I are", "I'm on the plan",
    ];
    for s in odd {
        for strategy in [Strategy::Discrete, Strategy::Preferences] {
            let _ = run_with(&strategy, &[("user", s)]);
        }
    }
    let long = "I prefer metric units and ".repeat(100_000);
    let _ = run(&long);
    let word = "a".repeat(1_000_000);
    let _ = run(&word);
    let _ = run(&format!("I prefer {word}"));
    let zalgo = "I\u{0336} p\u{0336}r\u{0336}e\u{0336}f\u{0336}e\u{0336}r\u{0336} tea".repeat(500);
    let _ = run(&zalgo);
    // Every cut point of a multi-byte text, so the bound lands everywhere.
    let mixed = "I prefer crème brûlée 🍮 and ünïcödé. ".repeat(200);
    for cut in 0..200 {
        let s: String = mixed.chars().skip(cut).collect();
        let _ = run(&s);
    }
    // Extremes of time.
    for now in [0, 1, crate::core::time::MILLIS_MAX, u64::MAX] {
        let turn = Turn { id: "t", role: "user", content: "I'm flying to Oslo tomorrow. I sold it 3 days ago. Last year I moved to Rome.", created_at: now };
        let mut out = Vec::new();
        extract(&Strategy::Discrete, &[turn], &mut out);
    }
}

#[test]
fn output_is_deterministic_and_bounded() {
    let s = "Hi! I'm Ana, I live in Lisbon and I prefer metric units. I visited Paris in March 2024. My email is a@b.co";
    let a = run(s);
    assert_eq!(a, run(s));
    for c in &a {
        assert!(c.text.len() <= EXTRACT_CANDIDATE_BYTES_MAX && c.text.ends_with('.') && c.text.starts_with("User"), "{c:?}");
        assert!(c.entities.len() <= EXTRACT_ENTITIES_MAX && c.topics.len() <= EXTRACT_TOPICS_MAX);
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod prop {
    use super::*;
    use proptest::prelude::{any, prop_assert, prop_oneof, proptest, Just, ProptestConfig};

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        #[test]
        fn any_text_is_read_without_panic(s in "\\PC{0,300}", now in any::<u64>()) {
            let turn = Turn { id: "t", role: "user", content: &s, created_at: now };
            let mut out = Vec::new();
            extract(&Strategy::Discrete, &[turn], &mut out);
            for c in &out {
                prop_assert!(c.text.len() <= EXTRACT_CANDIDATE_BYTES_MAX);
            }
        }

        #[test]
        fn statement_shaped_text_is_read_without_panic(
            parts in proptest::collection::vec(prop_oneof![
                Just("I"), Just("I'm"), Just("my"), Just("prefer"), Just("favorite"), Just("is"), Just("a"), Just("not"),
                Just("allergic"), Just("to"), Just("March"), Just("15,"), Just("2024"), Just("next"), Just("Friday"),
                Just("always"), Just("please"), Just("and"), Just(","), Just("?"), Just("."), Just("’s"), Just("🙂"), Just("Ünï"),
                Just("yesterday"), Just("in"), Just("3"), Just("days"), Just("ago"), Just("have"), Just("been"), Just("for"),
            ], 0..40),
        ) {
            let s = parts.join(" ");
            let _ = run(&s);
        }
    }
}

