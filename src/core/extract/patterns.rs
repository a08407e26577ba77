//! Which first-person statement a clause makes, read from its front.
//!
//! A clause must *start* with the statement ("I prefer", "my X is",
//! "please always"), after discourse markers ("oh, also, btw") are
//! dropped. That anchoring is what keeps chatter out: questions start with
//! a question word, conditionals with "if", requests with "I'd like" or
//! "I need", and none of those match.

use super::lexicon::*;
use super::{Tok, Word};

/// What kind of memory a matched clause gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    Pref,
    Fact,
    /// An event; `dated_only` when it is worth keeping only with a date
    /// ("I was charged twice on June 1" yes, "I was charged twice" no).
    Event { dated_only: bool },
    /// "my X is Y": an event when X is an event noun and a date is said.
    FactOrEvent,
}

/// How the subject is derived once the object is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Subj {
    None,
    Fixed(&'static str),
    /// The whole object, normalized: "I love sushi" and "I don't like
    /// sushi" share "sushi", "I love pizza" does not.
    Object,
    /// A choice ("I prefer X"): a category when one is known, else the
    /// object's head noun.
    Head,
    /// A category when one is known, else none.
    Category,
    /// `allergy:` and the object.
    Allergy,
    Named(String),
}

/// A matched statement: the memory is `prefix` + words `tail..end`.
#[derive(Debug, Clone)]
pub(super) struct Match {
    pub shape: Shape,
    pub prefix: &'static str,
    /// A verb said again in the third person, after `prefix`.
    pub verb: Option<String>,
    pub tail: usize,
    pub end: Option<usize>,
    /// Where the object starts (subject, deictic check).
    pub obj: usize,
    pub subj: Subj,
    /// One word of the tail said differently ("fav" -> "favorite").
    pub rewrite: Option<(usize, String)>,
}

impl Match {
    fn new(shape: Shape, prefix: &'static str, tail: usize, subj: Subj) -> Match {
        Match { shape, prefix, verb: None, tail, end: None, obj: tail, subj, rewrite: None }
    }
    fn verb(mut self, v: String) -> Match {
        self.verb = Some(v);
        self
    }
    fn obj(mut self, obj: usize) -> Match {
        self.obj = obj;
        self
    }
}

struct Cursor<'t, 'w> {
    t: &'t [Tok<'w>],
    words: &'t [Word<'w>],
}

impl Cursor<'_, '_> {
    fn s(&self, k: usize) -> &str {
        self.t.get(k).map_or("", |t| t.s)
    }
    /// The word index just after token `k` (tokens of one contraction
    /// share a word, so this is where the rest of the clause starts).
    fn after(&self, k: usize) -> usize {
        self.t.get(k).map_or(self.words.len(), |t| t.w + 1)
    }
    fn word_of(&self, k: usize) -> Option<&Word<'_>> {
        self.t.get(k).map(|t| &self.words[t.w])
    }
}

/// Index of the first token after leading discourse markers.
pub(super) fn skip_markers(t: &[Tok<'_>]) -> usize {
    let s = |k: usize| t.get(k).map_or("", |t| t.s);
    let mut k = 0;
    while k < t.len() {
        let w = s(k);
        let step = if w == "please" && matches!(s(k + 1), "remember" | "note") {
            2
        } else if matches!(w, "remember" | "note" | "noted") {
            1
        } else if is_leading_marker(w) {
            // "No, I prefer" drops "no"; "just" and "now" likewise.
            1
        } else if (w, s(k + 1), s(k + 2)) == ("by", "the", "way") || (w, s(k + 1), s(k + 2)) == ("to", "be", "honest") {
            3
        } else if (w, s(k + 1)) == ("you", "know") || (w, s(k + 1)) == ("oh", "and") {
            2
        } else if w == "i" && matches!(s(k + 1), "think" | "guess" | "believe" | "mean") {
            let j = k + 2 + usize::from(s(k + 2) == "that");
            if !matches!(s(j), "i" | "my") {
                break;
            }
            j - k
        } else {
            break;
        };
        k += step;
        if s(k) == "that" && matches!(s(k - 1), "remember" | "note" | "noted") {
            k += 1;
        }
    }
    k
}

/// The statement `t` (markers already skipped) makes, if any.
pub(super) fn match_clause(t: &[Tok<'_>], words: &[Word<'_>]) -> Option<Match> {
    let c = Cursor { t, words };
    match (c.s(0), c.s(1), c.s(2), c.s(3)) {
        ("i", ..) => match_i(&c),
        ("my", ..) => match_my(&c),
        ("call", "me", ..) => name(&c, 2),
        ("you", "can", "call", "me") => name(&c, 4),
        ("please", ..) | ("always", ..) | ("never", ..) => match_setting(&c).or_else(|| language(&c)),
        _ => language(&c),
    }
}

/// "Reply in English", "please answer in Spanish": the language to use.
fn language(c: &Cursor<'_, '_>) -> Option<Match> {
    let mut k = usize::from(c.s(0) == "please");
    if !matches!(c.s(k), "reply" | "respond" | "answer" | "write" | "talk" | "speak") {
        return None;
    }
    k += 1;
    if matches!(c.s(k), "to" | "with") && c.s(k + 1) == "me" {
        k += 2;
    }
    if c.s(k) != "in" || !is_language(c.s(k + 1)) {
        return None;
    }
    let mut m = Match::new(Shape::Pref, "User wants replies", c.t[k].w, Subj::Fixed("language"));
    m.end = Some(c.after(k + 1));
    Some(m)
}

fn match_i(c: &Cursor<'_, '_>) -> Option<Match> {
    let mut k = 1;
    loop {
        let w = c.s(k);
        if is_dropped_adverb(w) {
            k += 1 + usize::from(matches!(w, "kind" | "sort") && c.s(k + 1) == "of");
        } else if w == "do" && matches!(c.s(k + 1), "like" | "love" | "enjoy" | "prefer" | "hate") {
            k += 1;
        } else {
            break;
        }
    }
    let v = c.s(k);
    let pref = |prefix, tail, subj| Some(Match::new(Shape::Pref, prefix, tail, subj));
    match v {
        _ if is_habit(v) => {
            let verb = c.s(k + 1);
            let past = verb.ends_with("ed") && !matches!(verb, "need" | "feed" | "speed" | "breed" | "seed" | "proceed" | "exceed");
            if verb.is_empty() || verb == "not" || past || is_not_habit_verb(verb) || !verb.chars().all(char::is_alphabetic) {
                return None;
            }
            let m = Match::new(Shape::Pref, "User", c.after(k + 1), Subj::Category);
            Some(m.verb(format!("{v} {}", third_person(verb))))
        }
        "prefer" => pref("User prefers", c.after(k), Subj::Head),
        "would" => match c.s(k + 1) {
            "prefer" => pref("User would prefer", c.after(k + 1), Subj::Head),
            "rather" => pref("User would rather", c.after(k + 1), Subj::Category),
            "never" => pref("User would never", c.after(k + 1), Subj::Object),
            _ => None,
        },
        "go" if c.s(k + 1) == "by" => name(c, k + 2),
        "like" | "love" | "enjoy" | "adore" | "dislike" | "hate" | "detest" | "loathe" => {
            Some(Match::new(Shape::Pref, "User", c.after(k), Subj::Object).verb(third_person(v)))
        }
        "do" if c.s(k + 1) == "not" => {
            let j = (k + 2..c.t.len()).find(|&j| !is_dropped_adverb(c.s(j)))?;
            match c.s(j) {
                w @ ("like" | "love" | "enjoy" | "eat" | "drink" | "smoke") => {
                    Some(Match::new(Shape::Pref, "User doesn't", c.after(j), Subj::Object).verb(w.to_owned()))
                }
                _ => None,
            }
        }
        "can" if c.s(k + 1) == "not" => match c.s(k + 2) {
            "stand" => pref("User can't stand", c.after(k + 2), Subj::Object),
            // A restriction, not a taste: "I can't eat gluten".
            w @ ("eat" | "drink" | "have" | "tolerate" | "digest") => {
                Some(Match::new(Shape::Fact, "User can't", c.after(k + 2), Subj::Object).verb(w.to_owned()))
            }
            _ => None,
        },
        "am" => match_am(c, k),
        "was" => match c.s(k + 1) {
            "born" => {
                let subj = if c.s(k + 2) == "in" { "birthplace" } else { "birthday" };
                Some(Match::new(Shape::Fact, "User was", c.after(k), Subj::Fixed(subj)))
            }
            "wondering" | "thinking" | "asking" | "told" | "going" | "hoping" | "trying" | "looking" | "just" | "not" => None,
            _ => Some(Match::new(Shape::Event { dated_only: true }, "User was", c.after(k), Subj::None)),
        },
        "will" => match_will(c, k),
        "have" => match_have(c, k),
        "work" => {
            let subj = match c.s(k + 1) {
                "at" | "for" => "employer",
                "as" => "job",
                "in" => "field",
                "from" | "remotely" => "work location",
                _ => return None,
            };
            Some(Match::new(Shape::Fact, "User works", c.after(k), Subj::Fixed(subj)))
        }
        "live" | "reside" if matches!(c.s(k + 1), "in" | "near" | "at" | "on") => {
            Some(Match::new(Shape::Fact, "User", c.after(k), Subj::Fixed("home")).verb(third_person(v)))
        }
        "use" | "own" | "hold" | "wear" | "speak" | "drive" => {
            Some(Match::new(Shape::Fact, "User", c.after(k), Subj::None).verb(third_person(v)))
        }
        "support" | "follow" => Some(Match::new(Shape::Pref, "User", c.after(k), Subj::Object).verb(third_person(v))),
        _ if is_activity_verb(v) && !matches!(c.s(k + 1), "into" | "out" | "over" | "across" | "through" | "away" | "late") => {
            Some(Match::new(Shape::Fact, "User", c.after(k), Subj::None).verb(third_person(v)))
        }
        _ if is_chatter_past(v) => None,
        _ if is_eventful_past(v) => Some(Match::new(Shape::Event { dated_only: false }, "User", c.after(k), Subj::None).verb(v.to_owned())),
        _ if is_irregular_past(v) || (v.len() > 4 && v.ends_with("ed") && v.chars().all(char::is_alphabetic)) => {
            Some(Match::new(Shape::Event { dated_only: true }, "User", c.after(k), Subj::None).verb(v.to_owned()))
        }
        _ => None,
    }
}

/// "I'm ...": traits, roles, origins, names, ages and planned events.
fn match_am(c: &Cursor<'_, '_>, am: usize) -> Option<Match> {
    let tail = c.after(am);
    let neg = c.s(am + 1) == "not";
    let r = am + 1 + usize::from(neg);
    let a = c.s(r);
    let fact = |subj| Some(Match::new(Shape::Fact, "User is", tail, subj));
    // "a big Lakers fan", "a huge fan of Patagonia", "not a fan of X"
    if let Some(f) = (r..(r + 6).min(c.t.len())).find(|&f| matches!(c.s(f), "fan" | "fans")) {
        if matches!(a, "a" | "an" | "big" | "huge" | "massive" | "great" | "no") {
            let subj = if c.s(f + 1) == "of" {
                Subj::Object
            } else {
                let words: Vec<&str> =
                    (r..f).map(|k| c.s(k)).filter(|w| !matches!(*w, "a" | "an" | "big" | "huge" | "massive" | "great" | "no")).collect();
                if words.is_empty() { Subj::None } else { Subj::Named(words.join(" ")) }
            };
            let obj = if c.s(f + 1) == "of" { c.after(f + 1) } else { c.after(r) };
            return Some(Match::new(Shape::Pref, "User is", tail, subj).obj(obj));
        }
    }
    // "a morning person", "more of a tea person"
    let p = if (a, c.s(r + 1)) == ("more", "of") { r + 2 } else { r };
    if matches!(c.s(p), "a" | "an") {
        if let Some(f) = (p + 2..(p + 4).min(c.t.len())).find(|&f| c.s(f) == "person") {
            let what: Vec<&str> = (p + 1..f).map(|j| c.s(j)).collect();
            return Some(Match::new(Shape::Pref, "User is", tail, Subj::Named(what.join(" "))).obj(c.after(p)));
        }
    }
    match a {
        "hard" if (c.s(r + 1), c.s(r + 2)) == ("of", "hearing") => return fact(Subj::Fixed("hearing")).map(|m| m.obj(c.t[r].w)),
        "saving" if !neg && matches!(c.s(r + 1), "for" | "up") => return fact(Subj::None).map(|m| m.obj(c.after(r + 1))),
        "allergic" if !neg && c.s(r + 1) == "to" => {
            return Some(Match::new(Shape::Fact, "User is", tail, Subj::Allergy).obj(c.after(r + 1)));
        }
        "a" | "an" => {
            if matches!(c.s(r + 1), "bit" | "little" | "lot" | "tad" | "few" | "couple" | "fan" | "big" | "huge") {
                return None;
            }
            let subj = (r + 1..(r + 5).min(c.t.len())).find_map(|k| noun_subject(&singular(c.s(k))));
            if neg && subj.is_none() {
                return None;
            }
            return Some(Match::new(Shape::Fact, "User is", tail, subj.map_or(Subj::None, Subj::Fixed)).obj(c.after(r)));
        }
        "from" if !neg => return fact(Subj::Fixed("origin")).map(|m| m.obj(c.after(r))),
        "based" | "located" | "living" if !neg && matches!(c.s(r + 1), "in" | "near" | "at" | "out") => {
            return fact(Subj::Fixed("home")).map(|m| m.obj(c.after(r + 1)));
        }
        "working" if !neg => {
            let subj = match c.s(r + 1) {
                "at" | "for" => "employer",
                "as" => "job",
                _ => return None,
            };
            return fact(Subj::Fixed(subj)).map(|m| m.obj(c.after(r + 1)));
        }
        "on" if !neg && (r + 1..(r + 5).min(c.t.len())).any(|k| matches!(c.s(k), "plan" | "tier")) => return fact(Subj::Fixed("plan")),
        "in" if !neg && is_timezone(c.s(r + 1), c.s(c.t.len() - 1)) => return fact(Subj::Fixed("timezone")),
        _ => {}
    }
    if let Some(subj) = trait_subject(a) {
        return fact(Subj::Fixed(subj)).map(|m| m.obj(c.t[r].w));
    }
    if neg {
        return None;
    }
    if !a.is_empty() && a.len() <= 3 && a.bytes().all(|b| b.is_ascii_digit()) {
        let years = matches!(c.s(r + 1), "years" | "yo" | "y/o");
        let rest = r + 1 + if years { 1 + usize::from(c.s(r + 2) == "old") } else { 0 };
        if rest == c.t.len() && (1..=120).contains(&a.parse::<u32>().unwrap_or(0)) {
            return fact(Subj::Fixed("age"));
        }
        return None;
    }
    if let Some(m) = name(c, r) {
        return Some(m);
    }
    let (plans, travel) = match ing_event(a) {
        Some(travel) => (true, travel),
        None => (false, false),
    };
    if !plans {
        return None;
    }
    let dated_only = if a == "going" && c.s(r + 1) == "to" {
        let next = c.word_of(r + 2)?;
        let place = next.cap || matches!(next.core.as_str(), "the" | "a" | "an" | "see" | "visit");
        !(place || is_travel_base(&next.core))
    } else {
        !travel
    };
    Some(Match::new(Shape::Event { dated_only }, "User is", tail, Subj::None).obj(c.after(r)))
}

/// "I'm Tom" / "I'm Ana Silva," : a name, when the clause ends there.
fn name(c: &Cursor<'_, '_>, r: usize) -> Option<Match> {
    let first = c.t.get(r)?.w;
    let mut end = first;
    while end < c.words.len() && end < first + 3 {
        let w = &c.words[end];
        let shouted = w.raw.chars().filter(|ch| ch.is_alphabetic()).all(char::is_uppercase);
        if !w.cap || !w.core.chars().all(char::is_alphabetic) || w.core.len() < 2 || shouted {
            break;
        }
        end += 1;
        if w.raw.ends_with(',') {
            break;
        }
    }
    let stops_clause = end == c.words.len() || c.words[end - 1].raw.ends_with(',');
    let common = matches!(
        c.s(r),
        "ok" | "okay" | "good" | "fine" | "sorry" | "back" | "here" | "done" | "ready" | "new" | "sure" | "happy" | "glad" | "excited"
            | "sad" | "tired" | "busy" | "free" | "home" | "so" | "just" | "still" | "also" | "afraid" | "confused" | "lost" | "interested"
    );
    if end == first || !stops_clause || common {
        return None;
    }
    let mut m = Match::new(Shape::Fact, "User's name is", first, Subj::Fixed("name"));
    m.end = Some(end);
    Some(m)
}

fn is_timezone(next: &str, last: &str) -> bool {
    matches!(last, "time" | "timezone" | "zone")
        || matches!(
            next,
            "pst" | "pdt" | "est" | "edt" | "cst" | "cdt" | "mst" | "mdt" | "utc" | "gmt" | "cet" | "cest" | "bst" | "ist" | "jst" | "aest"
        )
}

/// Base verbs after "I'll" that name an event worth a date.
fn is_event_base(w: &str) -> bool {
    is_travel_base(w)
        || matches!(
            w,
            "buy" | "sell" | "start" | "join" | "quit" | "graduate" | "marry" | "arrive" | "leave" | "return" | "land" | "depart" | "meet"
                | "host" | "celebrate" | "run" | "begin" | "finish" | "open" | "close" | "renew" | "cancel" | "deposit" | "withdraw"
                | "invest" | "be" | "have" | "go" | "move" | "get"
        )
}

fn match_will(c: &Cursor<'_, '_>, k: usize) -> Option<Match> {
    let n = c.s(k + 1);
    let event = |dated_only| Some(Match::new(Shape::Event { dated_only }, "User will", c.after(k), Subj::None).obj(c.after(k + 1)));
    if n == "be" {
        let m = c.s(k + 2);
        let fact = |subj| Some(Match::new(Shape::Fact, "User will", c.after(k), Subj::Fixed(subj)).obj(c.after(k + 3)));
        return match (m, c.s(k + 3)) {
            ("working", "at" | "for") => fact("employer"),
            ("working", "as") => fact("job"),
            ("living" | "based", "in") => fact("home"),
            ("in" | "at" | "away" | "abroad" | "traveling" | "travelling", _) => event(true),
            _ => match ing_event(m) {
                Some(travel) => event(!travel),
                None => None,
            },
        };
    }
    if is_travel_base(n) {
        return event(false);
    }
    if is_event_base(n) {
        return event(true);
    }
    None
}

fn match_have(c: &Cursor<'_, '_>, k: usize) -> Option<Match> {
    let n = c.s(k + 1);
    let tail = c.after(k);
    if n == "been" {
        let ing = c.s(k + 2);
        let waiting = matches!(
            ing,
            "waiting" | "trying" | "looking" | "thinking" | "meaning" | "wondering" | "having" | "getting" | "calling" | "searching"
                | "asking"
        );
        let span = (k + 3..c.t.len()).any(|j| matches!(c.s(j), "for" | "since"));
        return (!waiting && span).then(|| Match::new(Shape::Fact, "User has", tail, Subj::None));
    }
    // "I've got a dog" is "I have a dog".
    let (k, tail) = if n == "got" { (k + 1, c.after(k + 1)) } else { (k, tail) };
    let n = c.s(k + 1);
    let amount = |w: &str| w.starts_with(['$', '€', '£']) || (!w.is_empty() && w.len() <= 3 && w.bytes().all(|b| b.is_ascii_digit()));
    let count = matches!(n, "a" | "an")
        || small_number(n).is_some()
        || amount(n)
        || (matches!(n, "about" | "around" | "over" | "nearly" | "almost" | "roughly") && amount(c.s(k + 2)))
        // A proper noun: "I have Global Entry", "I have Prime".
        || c.word_of(k + 1).is_some_and(|w| w.cap && c.t[k + 1].w > 0);
    if !count || is_have_stop(c.s(k + 2)) || is_have_stop(n) {
        return None;
    }
    if let Some(a) = (k + 2..c.t.len()).find(|&j| c.s(j) == "allergy") {
        let what: Vec<&str> = (k + 2..a).map(|j| c.s(j)).collect();
        if what.is_empty() {
            return None;
        }
        return Some(Match::new(Shape::Fact, "User has", tail, Subj::Named(format!("allergy:{}", what.join(" ")))));
    }
    let kids = (k + 2..(k + 5).min(c.t.len())).any(|j| matches!(c.s(j), "kid" | "kids" | "child" | "children" | "sons" | "daughters"));
    let subj = if kids { Subj::Fixed("children") } else { Subj::None };
    Some(Match::new(Shape::FactOrEvent, "User has", tail, subj).obj(c.after(k + 1)))
}

/// "my X is Y", "my favorite X is Y", "my email's ...".
fn match_my(c: &Cursor<'_, '_>) -> Option<Match> {
    let copula = (2..(7).min(c.t.len())).find(|&k| matches!(c.s(k), "is" | "are" | "was" | "were"));
    if copula.is_none() {
        if let Some(m) = my_x_verb(c) {
            return Some(m);
        }
    }
    let (x_end_tok, rewrite) = match copula {
        Some(k) => (k, None),
        None => {
            // "my name's Ana": the 's is the verb.
            let k = (1..(4).min(c.t.len())).find(|&k| c.s(k).ends_with("'s") && c.s(k).len() > 2)?;
            let w = c.t[k].w;
            let raw = c.words[w].raw;
            let at = raw.rfind("'s")?;
            (k + 1, Some((w, format!("{} is{}", &raw[..at], &raw[at + 2..]))))
        }
    };
    let x_from = c.t[1].w;
    let x_toks: Vec<&str> = (1..x_end_tok).map(|k| c.s(k).trim_end_matches("'s")).collect();
    let odd = |w: &&str| matches!(*w, "and" | "or" | "i" | "you" | "not") || !w.chars().any(char::is_alphabetic);
    if x_toks.is_empty() || x_toks.len() > 4 || x_toks.iter().any(odd) {
        return None;
    }
    let head = singular(x_toks[x_toks.len() - 1]);
    if is_talk_noun(&head) {
        return None;
    }
    let y = if rewrite.is_some() { x_end_tok } else { x_end_tok + 1 };
    let first_y = c.s(y);
    if first_y.is_empty() || is_transient(first_y) || is_deictic(first_y) {
        return None;
    }
    let past = matches!(copula.map(|k| c.s(k)), Some("was" | "were"));
    let fav = matches!(x_toks[0], "favorite" | "favourite" | "fav" | "fave");
    let (shape, subj) = if past {
        (Shape::Event { dated_only: true }, Subj::None)
    } else if fav {
        if x_toks.len() < 2 {
            return None;
        }
        let what: Vec<String> = x_toks[1..].iter().map(|w| singular(w)).collect();
        (Shape::Pref, Subj::Named(format!("favorite:{}", what.join(" "))))
    } else if x_toks.len() == 1 && is_relation(x_toks[0]) {
        (Shape::FactOrEvent, Subj::None)
    } else {
        let key: Vec<&str> = c.t[1..x_end_tok]
            .iter()
            .map(|t| t.s)
            .filter(|w| !matches!(*w, "new" | "current" | "old" | "actual" | "main" | "primary" | "usual" | "real" | "full"))
            .collect();
        let key = key.join(" ");
        let key = key.strip_suffix("'s").unwrap_or(&key).to_owned();
        (Shape::FactOrEvent, if key.is_empty() { Subj::None } else { Subj::Named(key) })
    };
    let mut m = Match::new(shape, "User's", x_from, subj).obj(c.t.get(y).map_or(c.words.len(), |t| t.w));
    m.rewrite = if fav && matches!(x_toks[0], "fav" | "fave") { Some((x_from, "favorite".to_owned())) } else { rewrite };
    Some(m)
}

/// "my son Leo loves dinosaurs" (a relation's taste), "my card got
/// declined yesterday", "my lease ends in August" (dated events).
fn my_x_verb(c: &Cursor<'_, '_>) -> Option<Match> {
    let tail = c.t.get(1)?.w;
    for v in 2..(5).min(c.t.len()) {
        let w = c.s(v);
        if matches!(w, "loves" | "likes" | "hates" | "enjoys" | "prefers" | "adores" | "dislikes") {
            return is_relation(c.s(1)).then(|| Match::new(Shape::Pref, "User's", tail, Subj::None).obj(c.after(v)));
        }
        let past = (w.len() > 4 && w.ends_with("ed")) || is_irregular_past(w) || is_eventful_past(w);
        let present = v == 2 && w.len() > 3 && w.ends_with('s') && !w.ends_with("ss") && !w.ends_with("'s");
        if past || present {
            return Some(Match::new(Shape::Event { dated_only: true }, "User's", tail, Subj::None).obj(c.after(v)));
        }
        if !w.chars().all(char::is_alphabetic) {
            return None;
        }
    }
    None
}

/// "please always/never X", "always X": a standing instruction.
fn match_setting(c: &Cursor<'_, '_>) -> Option<Match> {
    let k = usize::from(c.s(0) == "please");
    let (prefix, verb) = match (c.s(k), c.s(k + 1), c.s(k + 2)) {
        ("always", _, _) => ("User wants the assistant to always", k + 1),
        ("never", _, _) => ("User wants the assistant to never", k + 1),
        ("do", "not", "ever") => ("User wants the assistant to never", k + 3),
        _ => return None,
    };
    let v = c.s(verb);
    let not_a_verb = matches!(v, "mind" | "the" | "a" | "an" | "been" | "was" | "is" | "said" | "again" | "heard");
    if v.is_empty() || !v.chars().all(char::is_alphabetic) || not_a_verb {
        return None;
    }
    Some(Match::new(Shape::Pref, prefix, c.t[verb].w, Subj::Category))
}

/// "fly" -> "flies", "watch" -> "watches", "have" -> "has".
pub(super) fn third_person(v: &str) -> String {
    match v {
        "have" => return "has".into(),
        "do" => return "does".into(),
        "go" => return "goes".into(),
        "be" => return "is".into(),
        _ => {}
    }
    let b = v.as_bytes();
    let vowel = |c: u8| matches!(c, b'a' | b'e' | b'i' | b'o' | b'u');
    if v.ends_with('y') && b.len() > 1 && !vowel(b[b.len() - 2]) {
        format!("{}ies", &v[..v.len() - 1])
    } else if ["s", "sh", "ch", "x", "z", "o"].iter().any(|e| v.ends_with(e)) {
        format!("{v}es")
    } else {
        format!("{v}s")
    }
}

/// A plural noun's singular, by spelling alone ("seats" -> "seat",
/// "allergies" -> "allergy"); good enough to compare subjects.
pub(super) fn singular(w: &str) -> String {
    let n = w.len();
    if n > 4 && w.ends_with("ies") {
        format!("{}y", &w[..n - 3])
    } else if n > 4 && ["ches", "shes", "sses", "xes"].iter().any(|e| w.ends_with(e)) {
        w[..n - 2].to_owned()
    } else if n > 3 && w.ends_with('s') && !["ss", "us", "is"].iter().any(|e| w.ends_with(e)) {
        w[..n - 1].to_owned()
    } else {
        w.to_owned()
    }
}
