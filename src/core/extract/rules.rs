//! The offline, rule-based extractor: what a user says about themselves,
//! as preference, fact and event candidates, with no model.
//!
//! Only user turns are read, each cut to [`EXTRACT_TURN_BYTES_MAX`], split
//! into sentences and then clauses ("I'm vegetarian and I hate noisy rooms"
//! is two). A clause yields a candidate only when it starts with a
//! first-person statement the patterns know ("I prefer", "my X is", "I'm
//! allergic to", "I visited", "please always"), so greetings, thanks,
//! acknowledgements, questions, requests ("I'd like", "I need") and
//! reactions to something on screen ("I love that one") yield nothing. The
//! memory is the clause said again in the third person: "I prefer metric
//! units" -> "User prefers metric units."
//!
//! Known limits: English only; statements about others ("she loves
//! gardening"), about "we", or that need the context ("it's 200 Main St")
//! are missed; a bare weekday is not read as a date.

use super::{Candidate, CandidateKind, Strategy, Turn};
use crate::core::limits::{EXTRACT_CANDIDATES_MAX, EXTRACT_CANDIDATE_BYTES_MAX, EXTRACT_ENTITIES_MAX, EXTRACT_TOPICS_MAX, EXTRACT_TURN_BYTES_MAX};
use crate::core::time::Millis;

#[path = "dates.rs"]
mod dates;
#[cfg(test)]
#[path = "rules_eval_tests.rs"]
mod eval_tests;
#[path = "lexicon.rs"]
mod lexicon;
#[path = "patterns.rs"]
mod patterns;
#[cfg(test)]
#[path = "rules_tests.rs"]
mod tests;

use lexicon::*;
use patterns::{match_clause, singular, skip_markers, Match, Shape, Subj};

/// Appends to `out` what the user turns of `turns` say worth remembering
/// under `strategy`: nothing for [`Strategy::Summary`] (summaries are made
/// elsewhere), preferences only for [`Strategy::Preferences`], and facts,
/// preferences and events otherwise. At most [`EXTRACT_CANDIDATES_MAX`] are
/// appended; a memory said twice is one candidate naming both turns.
/// Deterministic, and total: any text, of any size, is read without panic.
pub fn extract(strategy: &Strategy, turns: &[Turn<'_>], out: &mut Vec<Candidate>) {
    if matches!(strategy, Strategy::Summary) {
        return;
    }
    let prefs_only = matches!(strategy, Strategy::Preferences);
    let first = out.len();
    let mut text = String::new();
    let mut sentences = Vec::new();
    for turn in turns.iter().filter(|t| t.role.eq_ignore_ascii_case("user")) {
        text.clear();
        normalize_quotes(bounded(turn.content), &mut text);
        sentences.clear();
        split_sentences(&text, &mut sentences);
        for &(start, end, question) in &sentences {
            let words: Vec<Word<'_>> = text[start..end].split_whitespace().filter_map(Word::new).collect();
            for (from, to) in clauses(&words, turn.created_at) {
                let clause = &words[from..to];
                // The clause that carries the question mark is the question;
                // statements before it in the sentence still count.
                if question && to == words.len() {
                    continue;
                }
                let Some(c) = candidate(clause, turn.created_at) else { continue };
                if prefs_only && c.kind != CandidateKind::Preference {
                    continue;
                }
                if let Some(same) = out[first..].iter_mut().find(|o| o.text == c.text) {
                    if !same.extracted_from.iter().any(|id| id == turn.id) {
                        same.extracted_from.push(turn.id.to_owned());
                    }
                    continue;
                }
                let mut c = c;
                c.extracted_from.push(turn.id.to_owned());
                out.push(c);
                if out.len() - first >= EXTRACT_CANDIDATES_MAX {
                    return;
                }
            }
        }
    }
}

/// One whitespace-separated word of a sentence.
#[derive(Debug)]
struct Word<'a> {
    /// As written (punctuation included), for the memory's text.
    raw: &'a str,
    /// Lower case, outer punctuation trimmed, for matching.
    core: String,
    /// Starts with a capital letter (names, "May" the month).
    cap: bool,
}

impl<'a> Word<'a> {
    fn new(raw: &'a str) -> Option<Word<'a>> {
        let trimmed = raw.trim_matches(|c: char| !(c.is_alphanumeric() || matches!(c, '$' | '€' | '£' | '%' | '#' | '+' | '@')));
        let first = trimmed.chars().next()?;
        Some(Word { raw, core: trimmed.to_lowercase(), cap: first.is_uppercase() })
    }
}

/// A token of the matcher: contractions are expanded ("I'm" -> "i", "am"),
/// each token remembering its word.
#[derive(Debug, Clone, Copy)]
struct Tok<'w> {
    s: &'w str,
    w: usize,
}

fn expand<'w>(words: &'w [Word<'_>], out: &mut Vec<Tok<'w>>) {
    for (w, word) in words.iter().enumerate() {
        let pair: &[&'static str] = match word.core.as_str() {
            "i'm" | "im" => &["i", "am"],
            "i've" | "ive" => &["i", "have"],
            "i'd" => &["i", "would"],
            "i'll" => &["i", "will"],
            "don't" | "dont" => &["do", "not"],
            "doesn't" | "doesnt" => &["does", "not"],
            "didn't" | "didnt" => &["did", "not"],
            "can't" | "cant" | "cannot" => &["can", "not"],
            "won't" | "wont" => &["will", "not"],
            "isn't" => &["is", "not"],
            "aren't" => &["are", "not"],
            "wasn't" => &["was", "not"],
            "haven't" | "havent" => &["have", "not"],
            "wouldn't" => &["would", "not"],
            _ => {
                out.push(Tok { s: word.core.as_str(), w });
                continue;
            }
        };
        out.extend(pair.iter().map(|s| Tok { s, w }));
    }
}

/// At most [`EXTRACT_TURN_BYTES_MAX`] bytes of `content`; when it is cut, up
/// to the last whole sentence, so no half clause becomes a memory.
fn bounded(content: &str) -> &str {
    if content.len() <= EXTRACT_TURN_BYTES_MAX {
        return content;
    }
    let mut cut = EXTRACT_TURN_BYTES_MAX;
    while !content.is_char_boundary(cut) {
        cut -= 1;
    }
    let head = &content[..cut];
    head.rfind(['.', '!', '?', '\n']).map_or("", |i| &head[..=i])
}

/// Curly apostrophes and quotes as straight ones, so "I’m" matches "I'm".
fn normalize_quotes(s: &str, out: &mut String) {
    out.extend(s.chars().map(|c| match c {
        '\u{2019}' | '\u{2018}' | '\u{02BC}' | '\u{FF07}' => '\'',
        '\u{201C}' | '\u{201D}' => '"',
        c => c,
    }));
}

/// Sentence spans of `text` as (start, end, ends with '?').
fn split_sentences(text: &str, out: &mut Vec<(usize, usize, bool)>) {
    let mut start = 0;
    let mut prev = ' ';
    let mut it = text.char_indices().peekable();
    while let Some((i, c)) = it.next() {
        let next = it.peek().map_or(' ', |&(_, n)| n);
        let ends = match c {
            '\n' | '!' | '?' | ';' | '\u{2026}' | '\u{2014}' => true,
            '.' => next.is_whitespace() && !abbreviation(&text[start..i]),
            '-' | '\u{2013}' => prev.is_whitespace() && next.is_whitespace(),
            _ => false,
        };
        if ends {
            let end = i + c.len_utf8();
            if text[start..end].chars().any(char::is_alphanumeric) {
                out.push((start, end, c == '?'));
            } else if c == '?' {
                // "Really??" : the question mark belongs to the sentence before.
                if let Some(last) = out.last_mut().filter(|l| l.1 == start) {
                    last.2 = true;
                }
            }
            start = end;
        }
        prev = c;
    }
    if text[start..].chars().any(char::is_alphanumeric) {
        out.push((start, text.len(), false));
    }
}

fn abbreviation(before: &str) -> bool {
    let last = before.rsplit(char::is_whitespace).next().unwrap_or("");
    let mut letters = last.chars().filter(|c| c.is_alphabetic());
    let single = letters.next().is_some() && letters.next().is_none() && last.chars().count() == 1;
    single
        || matches!(
            last.to_ascii_lowercase().as_str(),
            "mr" | "mrs" | "ms" | "dr" | "st" | "jr" | "sr" | "vs" | "etc" | "e.g" | "i.e" | "approx" | "inc" | "ltd" | "co" | "corp"
                | "ave" | "mt" | "ft" | "u.s" | "a.m" | "p.m" | "no"
        )
}

/// Clause spans of a sentence's words: a break after a comma when a clause
/// starter follows ("Yes, I prefer"), and before a conjunction followed by a
/// first-person word ("... and I hate noisy rooms"). A clause that is only a
/// date ("Yesterday, I sold ...") joins the next one.
fn clauses(words: &[Word<'_>], now: Millis) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = 0;
    for j in 0..words.len() {
        let next = words.get(j + 1).map_or("", |w| w.core.as_str());
        let after = words.get(j + 2).map_or("", |w| w.core.as_str());
        let comma = matches!(words[j].raw.chars().last(), Some(',' | ':')) && is_clause_starter(next);
        let conj = is_conjunction(next) && (is_first_person(after) || matches!(after, "please" | "always" | "never"));
        if j + 1 < words.len() && (comma || conj) {
            spans.push((start, j + 1));
            start = j + 1;
        }
    }
    if start < words.len() {
        spans.push((start, words.len()));
    }
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(spans.len());
    let mut carry = None;
    for (from, to) in spans {
        let from = carry.take().unwrap_or(from);
        let only_date = dates::find(&words[from..to], now).is_some_and(|d| d.start == 0 && d.end == to - from);
        if only_date && to < words.len() {
            carry = Some(from);
        } else {
            merged.push((from, to));
        }
    }
    merged
}

/// The candidate a clause gives, if it makes a statement the rules know.
fn candidate(clause: &[Word<'_>], now: Millis) -> Option<Candidate> {
    let mut toks = Vec::with_capacity(clause.len() + 2);
    expand(clause, &mut toks);
    let mut k = skip_markers(&toks);
    // A date leading the clause ("Last week I opened ...") goes to the end.
    let mut lead = None;
    if let Some(first) = toks.get(k) {
        if let Some(d) = dates::find(&clause[first.w..], now).filter(|d| d.start == 0) {
            let after = first.w + d.end;
            let rest = toks[k..].iter().position(|t| t.w >= after).map(|p| k + p);
            if let Some(r) = rest.filter(|&r| matches!(toks[r].s, "i" | "my")) {
                lead = Some((first.w, after, d.at));
                k = r;
            }
        }
    }
    let m = match_clause(&toks[k..], clause)?;
    build(m, clause, lead, now)
}

fn build(m: Match, words: &[Word<'_>], lead: Option<(usize, usize, Millis)>, now: Millis) -> Option<Candidate> {
    let mut end = m.end.unwrap_or(words.len());
    loop {
        if end > m.tail && is_trailing_filler(&words[end - 1].core) {
            end -= 1;
            continue;
        }
        let last: Vec<&str> = words[m.tail..end].iter().rev().take(5).rev().map(|w| w.core.as_str()).collect();
        let n = trailing_phrase_len(&last);
        if n == 0 || end - n <= m.tail {
            break;
        }
        end -= n;
    }
    if end <= m.tail || m.obj >= end || m.obj < m.tail {
        return None;
    }
    let obj = &words[m.obj..end];
    if m.subj != Subj::Fixed("name") && m.subj != Subj::Fixed("age") && points_elsewhere(obj) {
        return None;
    }
    let date = lead.map(|l| l.2).or_else(|| dates::find(&words[m.tail..end], now).map(|d| d.at));
    let kind = match m.shape {
        Shape::Pref => CandidateKind::Preference,
        Shape::Fact => CandidateKind::Fact,
        Shape::Event { dated_only } => {
            if dated_only && date.is_none() {
                return None;
            }
            CandidateKind::Event
        }
        Shape::FactOrEvent => {
            let event_noun = words[m.tail..m.obj].iter().chain(obj.iter().take(4)).any(|w| is_event_noun(&singular(&w.core)));
            match (event_noun, date) {
                (true, Some(_)) => CandidateKind::Event,
                (true, None) => return None,
                (false, _) => CandidateKind::Fact,
            }
        }
    };
    let text = say(&m, words, end, lead)?;
    let subject = subject(&m.subj, obj);
    let entities = entities(&words[m.tail..end]);
    let topics = topics(&text, subject.as_deref());
    Some(Candidate {
        text,
        kind,
        topics,
        entities,
        event_date: if kind == CandidateKind::Event { date } else { None },
        extracted_from: Vec::new(),
        subject,
    })
}

/// Whether an object only points at something said or shown before
/// ("it", "that one", "the second option").
fn points_elsewhere(obj: &[Word<'_>]) -> bool {
    let skip = |w: &str| matches!(w, "the" | "a" | "an" | "to" | "with" | "about" | "for" | "on" | "in" | "at");
    let Some(i) = obj.iter().position(|w| !skip(&w.core)) else { return true };
    let first = obj[i].core.as_str();
    // "anything with mushrooms" names something; a bare "anything" does not.
    let qualified = matches!(first, "anything" | "everything" | "something") && i + 1 < obj.len();
    let last = obj.last().map_or("", |w| w.core.as_str());
    (is_deictic(first) && !qualified) || matches!(last, "it" | "that" | "this" | "them" | "these" | "those")
}

/// The memory's sentence: the prefix, then the clause's words with the
/// user's pronouns in the third person, then a leading date.
fn say(m: &Match, words: &[Word<'_>], end: usize, lead: Option<(usize, usize, Millis)>) -> Option<String> {
    let mut text = String::with_capacity(EXTRACT_CANDIDATE_BYTES_MAX);
    text.push_str(m.prefix);
    if let Some(v) = &m.verb {
        text.push(' ');
        text.push_str(v);
    }
    for i in m.tail..end {
        let raw = match &m.rewrite {
            Some((at, s)) if *at == i => s.as_str(),
            _ => words[i].raw,
        };
        text.push(' ');
        match elided_subject_verb(&words[m.tail..i], &words[i].core) {
            Some(said) => {
                text.push_str(said);
                text.push_str(&raw[raw.trim_end_matches(|c: char| !c.is_alphanumeric()).len()..]);
            }
            None => push_third_person(raw, &mut text),
        }
    }
    if let Some((from, to, _)) = lead {
        trim_end_punctuation(&mut text);
        for (n, w) in words[from..to].iter().enumerate() {
            text.push(' ');
            let raw = w.raw.trim_end_matches(',');
            let relative = matches!(w.core.as_str(), "yesterday" | "today" | "tomorrow" | "tonight" | "last" | "next" | "this" | "in");
            if n == 0 && relative {
                text.extend(raw.chars().flat_map(char::to_lowercase).take(1));
                text.push_str(raw.get(raw.chars().next().map_or(0, char::len_utf8)..).unwrap_or(""));
            } else {
                text.push_str(raw);
            }
        }
    }
    trim_end_punctuation(&mut text);
    text.push('.');
    (text.len() <= EXTRACT_CANDIDATE_BYTES_MAX).then_some(text)
}

fn trim_end_punctuation(text: &mut String) {
    let kept = text.trim_end_matches(|c: char| !(c.is_alphanumeric() || matches!(c, ')' | '%' | '"' | '\'' | '$'))).len();
    text.truncate(kept);
}

/// The verb of a second clause whose "I" was left out ("I returned it
/// and still haven't got a refund"), said in the third person.
fn elided_subject_verb(before: &[Word<'_>], verb: &str) -> Option<&'static str> {
    let said = match verb {
        "haven't" | "havent" => "hasn't",
        "don't" | "dont" => "doesn't",
        "have" => "has",
        "am" => "is",
        _ => return None,
    };
    let mut back = before.iter().rev().map(|w| w.core.as_str());
    let mut w = back.next()?;
    if matches!(w, "still" | "also" | "now" | "then" | "never" | "really") {
        w = back.next()?;
    }
    matches!(w, "and" | "but").then_some(said)
}

/// `raw` with a first-person pronoun said in the third person ("my" ->
/// "their"), its punctuation kept.
fn push_third_person(raw: &str, out: &mut String) {
    let core_len = raw.trim_end_matches(|c: char| !c.is_alphanumeric()).len();
    let (core, rest) = raw.split_at(core_len);
    let said = match core.to_lowercase().as_str() {
        "my" => "their",
        "me" => "them",
        "mine" => "theirs",
        "myself" => "themselves",
        "i" => "they",
        "i'm" => "they're",
        "i've" => "they've",
        "i'll" => "they'll",
        "i'd" => "they'd",
        _ => core,
    };
    out.push_str(said);
    out.push_str(rest);
}

/// The normalized subject from the match's rule and the object's words.
fn subject(rule: &Subj, obj: &[Word<'_>]) -> Option<String> {
    match rule {
        Subj::None => None,
        Subj::Fixed(s) => Some((*s).to_owned()),
        Subj::Named(s) => Some(s.clone()),
        Subj::Category => category_of(obj).map(str::to_owned),
        Subj::Object => category_of(obj).map(str::to_owned).or_else(|| object_key(obj)),
        Subj::Allergy => object_key(obj).map(|k| format!("allergy:{k}")),
        Subj::Head => category_of(obj).map(str::to_owned).or_else(|| {
            if matches!(obj.first().map(|w| w.core.as_str()), Some("to" | "not")) {
                return object_key(obj);
            }
            let key = object_key(obj)?;
            let head = singular(key.rsplit(' ').next().unwrap_or(&key));
            (!matches!(head.as_str(), "something" | "anything" | "one" | "thing" | "stuff" | "way")).then_some(head)
        }),
    }
}

/// The category any word or two-word phrase of `obj` chooses a value of.
fn category_of(obj: &[Word<'_>]) -> Option<&'static str> {
    let singles: Vec<String> = obj.iter().map(|w| singular(&w.core)).collect();
    for (i, w) in singles.iter().enumerate() {
        if let Some(next) = singles.get(i + 1) {
            if let Some(c) = category(&format!("{w} {next}")) {
                return Some(c);
            }
        }
        if let Some(c) = category(w).or_else(|| category(&obj[i].core)) {
            return Some(c);
        }
        if is_language(w) && (obj.len() == 1 || (i > 0 && obj[i - 1].core == "in")) {
            return Some("language");
        }
    }
    None
}

/// The object as a key: lower case, no leading article, cut at the first
/// preposition or comma, at most four words ("spicy food", "nike").
fn object_key(obj: &[Word<'_>]) -> Option<String> {
    let mut key = String::new();
    let mut n = 0;
    let mut after_anything = false;
    for w in obj {
        let c = w.core.as_str();
        if n == 0 && matches!(c, "a" | "an" | "the" | "some" | "to" | "not" | "being" | "big" | "huge" | "massive" | "great" | "my" | "your") {
            continue;
        }
        // "anything with mushrooms" is about mushrooms.
        if n == 0 && matches!(c, "anything" | "everything" | "something") {
            after_anything = true;
            continue;
        }
        if n == 0 && after_anything && matches!(c, "with" | "about" | "involving" | "containing" | "made" | "from" | "of") {
            continue;
        }
        if n > 0 && is_cut(c) {
            break;
        }
        if n > 0 {
            key.push(' ');
        }
        key.push_str(c);
        n += 1;
        if n == 4 || matches!(w.raw.chars().last(), Some(',' | ';' | ':')) {
            break;
        }
    }
    (!key.is_empty()).then_some(key)
}

fn is_cut(w: &str) -> bool {
    matches!(
        w,
        "for" | "in" | "on" | "at" | "with" | "when" | "during" | "from" | "because" | "but" | "so" | "if" | "than" | "over"
            | "instead" | "that" | "which" | "who" | "while" | "since" | "as" | "by" | "to" | "after" | "before" | "until" | "every"
            | "whenever" | "though" | "although" | "especially" | "anymore" | "lately" | "more" | "most" | "a" | "the"
    )
}

/// Named things in the memory's words: capitalized runs ("Acme Corp",
/// "Bank of America"), camel-case brands ("iPhone") and tickers ("AAPL");
/// not emails or URLs, not "I", months or weekdays, and none at all when
/// the text is shouted in capitals.
fn entities(words: &[Word<'_>]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let letters: Vec<&Word<'_>> = words.iter().filter(|w| w.raw.chars().any(char::is_alphabetic)).collect();
    let shouted = letters.iter().filter(|w| w.raw.chars().filter(|c| c.is_alphabetic()).all(char::is_uppercase)).count();
    if letters.len() > 2 && shouted * 2 > letters.len() {
        return out;
    }
    let mut i = 0;
    while i < words.len() && out.len() < EXTRACT_ENTITIES_MAX {
        if !is_name_word(&words[i]) {
            i += 1;
            continue;
        }
        let mut parts = vec![name_part(words[i].raw)];
        let mut j = i + 1;
        while j < words.len() && !ends_phrase(words[j - 1].raw) {
            if is_name_word(&words[j]) {
                parts.push(name_part(words[j].raw));
                j += 1;
            } else if matches!(words[j].core.as_str(), "of" | "de" | "da" | "del" | "la" | "van" | "von" | "&")
                && words.get(j + 1).is_some_and(is_name_word)
                && !ends_phrase(words[j].raw)
            {
                parts.push(words[j].raw);
                parts.push(name_part(words[j + 1].raw));
                j += 2;
            } else {
                break;
            }
        }
        let name = parts.join(" ");
        if !out.contains(&name) {
            out.push(name);
        }
        i = j;
    }
    out
}

fn ends_phrase(raw: &str) -> bool {
    matches!(raw.chars().last(), Some(',' | '.' | ';' | ':' | '!' | '?' | ')'))
}

/// A word as it goes into an entity: outer punctuation and a possessive 's off.
fn name_part(raw: &str) -> &str {
    let t = raw.trim_matches(|c: char| !(c.is_alphanumeric() || c == '&'));
    t.strip_suffix("'s").unwrap_or(t)
}

fn is_name_word(w: &Word<'_>) -> bool {
    let part = name_part(w.raw);
    let mut chars = part.chars();
    let Some(first) = chars.next() else { return false };
    let camel = first.is_lowercase() && chars.clone().any(char::is_uppercase) && part.chars().all(char::is_alphanumeric);
    let pattern = part.contains('@') || part.contains("://") || w.core.starts_with("www.");
    let pronoun = matches!(w.core.as_str(), "i" | "i'm" | "i've" | "i'd" | "i'll" | "user");
    let filler = matches!(part, "OK" | "AM" | "PM" | "FYI" | "BTW" | "LOL" | "TBH" | "ASAP");
    (first.is_uppercase() || camel) && !pattern && !pronoun && !filler && !dates::is_calendar_word(&w.core)
}

/// Topics of the memory's words and subject, sorted, at most [`EXTRACT_TOPICS_MAX`].
fn topics(text: &str, subject: Option<&str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let words = text.split(|c: char| !(c.is_alphanumeric() || c == '-')).chain(subject.into_iter().flat_map(|s| s.split([' ', ':'])));
    for w in words.filter(|w| !w.is_empty()) {
        let lower = w.to_lowercase();
        if let Some(t) = topic(&lower).or_else(|| topic(&singular(&lower))) {
            if !out.iter().any(|o| o == t) {
                out.push(t.to_owned());
            }
        }
    }
    if text.contains(['$', '€', '£']) && !out.iter().any(|o| o == "finance") {
        out.push("finance".to_owned());
    }
    if let Some(s) = subject.filter(|s| matches!(*s, "units" | "currency" | "language")) {
        if !out.iter().any(|o| o == s) {
            out.insert(0, s.to_owned());
        }
    }
    out.truncate(EXTRACT_TOPICS_MAX);
    out.sort();
    out
}
