//! The extractor's word tables. Each is a `match` on a lower-case word, so
//! the compiler builds the lookup and there is nothing to initialize.

/// The topic a word belongs to (words are lower-case and singular).
pub(super) fn topic(word: &str) -> Option<&'static str> {
    Some(match word {
        "food" | "sushi" | "pizza" | "restaurant" | "coffee" | "latte" | "tea" | "vegetarian" | "vegan" | "pescatarian" | "meat"
        | "dairy" | "milk" | "recipe" | "cilantro" | "spicy" | "omakase" | "mushroom" | "dinner" | "lunch" | "breakfast" | "alcohol"
        | "wine" | "beer" | "cuisine" | "meal" | "gluten" | "egg" | "cheese" | "chocolate" | "fish" | "shellfish" | "peanut"
        | "sesame" | "white" => "food",
        "flight" | "fly" | "flie" | "flying" | "seat" | "aisle" | "hotel" | "trip" | "airport" | "airline" | "visit" | "visited"
        | "visiting" | "travel" | "traveling" | "travelling" | "vacation" | "holiday" | "passport" | "visa" | "luggage" | "bag"
        | "train" | "skymile" | "booking" | "conference" | "room" => "travel",
        "metric" | "imperial" | "unit" | "celsius" | "fahrenheit" | "km" | "kilometer" | "kilometre" | "kg" | "lbs" => "units",
        "work" | "job" | "engineer" | "developer" | "analyst" | "office" | "employer" | "company" | "career" | "manager" | "colleague"
        | "boss" | "salary" | "working" | "meeting" | "plan" => "work",
        "allergic" | "allergy" | "doctor" | "dentist" | "appointment" | "medication" | "diabetic" | "celiac" | "coeliac" | "intolerant"
        | "lactose" | "colorblind" | "health" | "hospital" | "surgery" | "penicillin" | "pregnant" => "health",
        "budget" | "bank" | "card" | "payment" | "invest" | "investor" | "stock" | "share" | "trading" | "trade" | "portfolio" | "ira"
        | "crypto" | "bitcoin" | "usdc" | "dollar" | "euro" | "currency" | "price" | "risk" | "refund" | "subscription" | "billing"
        | "charged" | "deposit" | "deposited" | "wallet" | "option" | "cap" | "chf" | "usd" | "eur" | "monthly" => "finance",
        "bet" | "odd" | "wager" | "parlay" | "sportsbook" | "stake" | "betting" => "betting",
        "wife" | "husband" | "partner" | "kid" | "child" | "children" | "son" | "daughter" | "mom" | "dad" | "mother" | "father"
        | "family" | "baby" | "anniversary" | "birthday" => "family",
        "laptop" | "phone" | "iphone" | "android" | "pixel" | "macbook" | "mac" | "windows" | "linux" | "app" | "computer" | "tablet"
        | "mode" | "software" => "tech",
        "shoe" | "size" | "shirt" | "jean" | "order" | "package" | "delivery" | "ship" | "shipping" | "blender" | "bought" | "purchase"
        | "cart" | "prime" | "membership" | "brand" | "fabric" | "sweater" | "headphone" | "medium" => "shopping",
        "team" | "football" | "soccer" | "basketball" | "tennis" | "racing" | "game" | "fan" | "lakers" | "arsenal" | "celtics" => "sports",
        "live" | "address" | "home" | "apartment" | "moved" | "moving" | "based" => "home",
        "music" | "jazz" | "movie" | "film" | "classical" | "gardening" => "leisure",
        "email" | "text" | "call" | "sms" | "notification" | "notify" | "contact" | "timezone" => "contact",
        "language" | "spanish" | "english" | "french" | "german" | "portuguese" | "italian" | "japanese" | "chinese" => "language",
        "dog" | "cat" | "puppy" | "retriever" | "pet" => "pets",
        _ => return None,
    })
}

/// The attribute a preference about this word (or two-word phrase) chooses
/// a value of, when it is one of a few exclusive choices: "metric" and
/// "imperial" are both a choice of "units", so one supersedes the other.
/// Food, brands and hobbies are not here: liking sushi does not contradict
/// liking pizza.
pub(super) fn category(word: &str) -> Option<&'static str> {
    Some(match word {
        "metric" | "imperial" | "unit" | "celsius" | "fahrenheit" | "kilometer" | "kilometre" | "mile" | "km" | "kg" | "lbs" => "units",
        "seat" | "aisle" | "window seat" => "seat",
        "currency" | "euro" | "eur" | "usd" | "dollar" | "gbp" | "chf" | "jpy" | "yen" => "currency",
        "odd" | "odds" => "odds",
        "dark mode" | "light mode" | "theme" => "theme",
        "text" | "texts" | "call" | "calls" | "sms" | "phone call" => "contact method",
        "limit order" | "market order" | "order type" => "order type",
        "paypal" | "apple pay" | "google pay" | "cash" | "credit card" | "debit card" => "payment method",
        _ => return None,
    })
}

/// A language name, which makes "reply in Spanish" a choice of language.
pub(super) fn is_language(word: &str) -> bool {
    matches!(
        word,
        "english" | "spanish" | "french" | "german" | "portuguese" | "italian" | "japanese" | "chinese" | "mandarin" | "dutch" | "korean"
            | "arabic" | "hindi" | "russian" | "polish" | "swedish" | "turkish"
    )
}

/// What "I'm a/an <word>" says about the user, by the head noun.
pub(super) fn noun_subject(word: &str) -> Option<&'static str> {
    Some(match word {
        "vegetarian" | "vegan" | "pescatarian" => "diet",
        "beginner" | "novice" | "expert" | "intermediate" | "professional" | "pro" | "newbie" | "veteran" => "experience",
        "engineer" | "developer" | "programmer" | "designer" | "teacher" | "nurse" | "doctor" | "lawyer" | "analyst" | "accountant"
        | "student" | "consultant" | "writer" | "chef" | "pilot" | "architect" | "scientist" | "researcher" | "freelancer" | "founder"
        | "manager" | "dentist" | "pharmacist" | "electrician" | "plumber" | "journalist" | "photographer" | "musician" | "artist"
        | "professor" | "paramedic" | "firefighter" | "officer" | "banker" | "broker" | "economist" | "therapist" | "secretary"
        | "cashier" | "driver" | "mechanic" | "farmer" | "retiree" => "job",
        _ => return None,
    })
}

/// "I'm <word>" traits worth keeping, with what they are about. Moods and
/// states ("tired", "sure", "late") are deliberately absent.
pub(super) fn trait_subject(word: &str) -> Option<&'static str> {
    Some(match word {
        "vegetarian" | "vegan" | "pescatarian" | "keto" | "kosher" | "halal" => "diet",
        "lactose" => "lactose intolerance",
        "gluten-free" | "celiac" | "coeliac" => "gluten",
        "diabetic" => "diabetes",
        "colorblind" | "colourblind" => "colorblind",
        "deaf" | "blind" | "pregnant" | "left-handed" | "right-handed" | "vaccinated" => "health",
        "married" | "single" | "divorced" | "engaged" | "widowed" => "marital status",
        "retired" | "unemployed" | "self-employed" | "freelance" => "job",
        _ if is_nationality(word) => "nationality",
        _ => return None,
    })
}

fn is_nationality(word: &str) -> bool {
    matches!(
        word,
        "american" | "british" | "english" | "scottish" | "welsh" | "irish" | "canadian" | "australian" | "german" | "french" | "spanish"
            | "italian" | "portuguese" | "dutch" | "belgian" | "swiss" | "austrian" | "swedish" | "norwegian" | "danish" | "finnish"
            | "polish" | "czech" | "greek" | "turkish" | "russian" | "ukrainian" | "mexican" | "brazilian" | "argentinian" | "chilean"
            | "colombian" | "japanese" | "chinese" | "korean" | "indian" | "pakistani" | "nigerian" | "kenyan" | "egyptian"
            | "israeli" | "filipino" | "vietnamese" | "thai" | "indonesian" | "peruvian"
    )
}

/// People a "my X is Y" may be about: their attributes are not one value
/// (my daughter is 7, my daughter is allergic to nuts), so no subject.
pub(super) fn is_relation(word: &str) -> bool {
    matches!(
        word,
        "wife" | "husband" | "partner" | "son" | "daughter" | "kid" | "kids" | "child" | "children" | "mom" | "mother" | "dad"
            | "father" | "brother" | "sister" | "boss" | "friend" | "girlfriend" | "boyfriend" | "dog" | "cat" | "family" | "parents"
            | "baby" | "colleague" | "roommate" | "fiance" | "fiancee"
    )
}

/// Nouns for which "my X is <date>" or "I have a X <date>" is an event.
pub(super) fn is_event_noun(word: &str) -> bool {
    matches!(
        word,
        "flight" | "trip" | "appointment" | "meeting" | "interview" | "wedding" | "surgery" | "exam" | "party" | "vacation" | "holiday"
            | "reservation" | "checkup" | "check-up" | "package" | "order" | "delivery" | "deadline" | "call" | "move" | "operation"
            | "concert" | "game" | "match" | "race" | "conference" | "shift" | "class" | "test"
    )
}

/// Past-tense verbs that are an event by themselves ("I moved to Chicago"),
/// dated or not.
pub(super) fn is_eventful_past(word: &str) -> bool {
    matches!(
        word,
        "visited" | "went" | "flew" | "traveled" | "travelled" | "moved" | "bought" | "purchased" | "booked" | "sold" | "won" | "lost"
            | "deposited" | "withdrew" | "married" | "graduated" | "joined" | "quit" | "retired" | "attended" | "adopted" | "opened"
            | "invested" | "placed" | "returned" | "relocated" | "ordered" | "cancelled" | "canceled" | "rented" | "leased" | "signed"
            | "started" | "finished" | "completed" | "ran" | "climbed" | "hiked" | "transferred" | "paid"
    )
}

/// Irregular past forms that are not in [`is_eventful_past`] but can carry a
/// dated event ("I got back from Rome yesterday").
pub(super) fn is_irregular_past(word: &str) -> bool {
    matches!(
        word,
        "got" | "had" | "made" | "met" | "left" | "took" | "came" | "spent" | "sent" | "saw" | "ate" | "drove" | "gave" | "began"
            | "broke" | "fell" | "found" | "heard" | "kept" | "led" | "rode" | "swam" | "wrote" | "won" | "built" | "did" | "caught"
    )
}

/// Past verbs about the conversation itself ("I tried that", "I asked
/// before"): not events even with a date.
pub(super) fn is_chatter_past(word: &str) -> bool {
    matches!(
        word,
        "tried" | "asked" | "checked" | "meant" | "said" | "told" | "thought" | "noticed" | "mentioned" | "wanted" | "needed" | "clicked"
            | "typed" | "forgot" | "wondered" | "hoped" | "guessed" | "expected" | "figured" | "replied" | "answered" | "used"
            | "liked" | "loved" | "preferred" | "enjoyed" | "hated" | "saw" | "did" | "read" | "looked" | "searched" | "refreshed"
            | "reloaded" | "restarted" | "updated" | "uploaded" | "entered" | "pressed" | "tapped" | "seemed"
    )
}

/// "I'm <verb>ing ..." that plans or reports an event; travel ones are
/// events even with no date ("I'm moving to Berlin").
pub(super) fn ing_event(word: &str) -> Option<bool> {
    Some(match word {
        "flying" | "traveling" | "travelling" | "going" | "heading" | "moving" | "visiting" | "leaving" | "driving" | "relocating"
        | "returning" | "sailing" | "cruising" => true,
        "attending" | "meeting" | "retiring" | "starting" | "staying" | "coming" | "getting" | "having" | "taking" | "spending"
        | "celebrating" | "hosting" | "running" | "graduating" | "marrying" | "joining" | "seeing" | "buying" | "selling" | "opening"
        | "closing" | "renting" | "hiking" | "competing" | "presenting" | "speaking" | "interviewing" | "training" | "preparing"
        | "planning" => false,
        _ => return None,
    })
}

/// Base forms after "I'll" / "I'm going to" that are events with no date.
pub(super) fn is_travel_base(word: &str) -> bool {
    matches!(word, "fly" | "travel" | "move" | "visit" | "drive" | "relocate" | "attend" | "retire" | "emigrate" | "sail")
}

/// Habit adverbs: "I always/never/usually X" states a standing preference.
pub(super) fn is_habit(word: &str) -> bool {
    matches!(
        word,
        "always" | "usually" | "normally" | "typically" | "generally" | "mostly" | "often" | "rarely" | "never" | "only" | "mainly"
            | "seldom" | "regularly"
    )
}

/// Intensifiers and softeners between "I" and the verb, dropped from the
/// memory ("I really like" -> "User likes").
pub(super) fn is_dropped_adverb(word: &str) -> bool {
    matches!(
        word,
        "really" | "also" | "actually" | "just" | "definitely" | "absolutely" | "totally" | "truly" | "honestly" | "personally"
            | "kinda" | "still" | "much" | "strongly" | "recently" | "already" | "finally" | "certainly" | "genuinely" | "kind" | "sort"
    )
}

/// Verbs after a habit adverb that make a request or a thought, not a habit.
pub(super) fn is_not_habit_verb(word: &str) -> bool {
    matches!(
        word,
        "need" | "want" | "have" | "had" | "got" | "know" | "think" | "mean" | "meant" | "said" | "say" | "wanted" | "needed"
            | "wonder" | "ask" | "asked" | "see" | "hope" | "guess" | "would" | "will" | "can" | "could" | "should" | "do" | "did" | "am"
            | "was" | "is" | "a" | "the" | "if" | "when" | "because" | "to"
    )
}

/// First words of an object that point at something on screen or said
/// before ("I love that one", "I prefer the second option"): nothing a
/// later session could understand.
pub(super) fn is_deictic(word: &str) -> bool {
    matches!(
        word,
        "it" | "that" | "this" | "these" | "those" | "them" | "there" | "here" | "one" | "ones" | "him" | "her" | "so" | "too" | "yours"
            | "both" | "either" | "neither" | "anything" | "everything" | "nothing" | "same" | "first" | "second" | "third" | "fourth"
            | "last" | "other" | "former" | "latter" | "previous" | "cheapest" | "cheaper" | "latest" | "option" | "options" | "idea"
            | "sound" | "way" | "what" | "which" | "whatever" | "whichever" | "you" | "again"
    )
}

/// "I have a <word>": things said in passing, not possessions.
pub(super) fn is_have_stop(word: &str) -> bool {
    matches!(
        word,
        "question" | "questions" | "problem" | "problems" | "issue" | "issues" | "quick" | "doubt" | "complaint" | "request"
            | "suggestion" | "favor" | "favour" | "idea" | "feeling" | "query" | "concern" | "minute" | "moment" | "look" | "chance"
            | "great" | "good" | "nice" | "lot" | "bit" | "few" | "couple" | "hard" | "tough" | "bad" | "similar" | "different"
            | "follow-up" | "followup" | "second"
    )
}

/// "my X is <word>": states of the moment, not lasting facts
/// ("my phone is dead", "my order is late").
pub(super) fn is_transient(word: &str) -> bool {
    matches!(
        word,
        "delayed" | "late" | "broken" | "dead" | "missing" | "lost" | "wrong" | "stuck" | "down" | "empty" | "gone" | "here" | "there"
            | "ready" | "done" | "fine" | "ok" | "okay" | "not" | "still" | "too" | "so" | "very" | "pretty" | "being" | "getting"
            | "showing" | "saying" | "taking" | "frozen" | "locked" | "blocked" | "pending" | "declined" | "expired" | "full"
    )
}

/// "my X is ...": X that are talk, not facts ("my question is", "my bad").
pub(super) fn is_talk_noun(word: &str) -> bool {
    matches!(
        word,
        "question" | "problem" | "issue" | "point" | "guess" | "concern" | "bad" | "pleasure" | "answer" | "idea" | "thought"
            | "understanding" | "worry" | "mistake" | "fault" | "apologies" | "apology" | "reply" | "response" | "message" | "comment"
            | "request" | "feedback" | "take" | "opinion" | "impression" | "suggestion" | "hunch" | "turn" | "fear" | "hope"
    )
}

/// Words dropped from the end of a memory ("I prefer aisle seats btw").
pub(super) fn is_trailing_filler(word: &str) -> bool {
    matches!(
        word,
        "btw" | "lol" | "haha" | "hahaha" | "lmao" | "though" | "tbh" | "fyi" | "please" | "pls" | "plz" | "thanks" | "thx" | "now"
            | "too" | "then" | "anyway" | "anyways" | "obviously" | "honestly" | "really" | "actually" | "ok" | "okay" | "xd" | "imo"
            | "haha," | "lol," | "though," | "either" | "also"
    )
}

/// Phrases dropped from the end of a memory ("my partner is Sam, by the way").
pub(super) fn trailing_phrase_len(cores: &[&str]) -> usize {
    let n = cores.len();
    let ends = |p: &[&str]| n >= p.len() && cores[n - p.len()..] == *p;
    const PHRASES: &[&[&str]] = &[
        &["by", "the", "way"],
        &["if", "that", "matters"],
        &["if", "that", "helps"],
        &["if", "possible"],
        &["just", "so", "you", "know"],
        &["for", "what", "it's", "worth"],
        &["for", "the", "record"],
        &["just", "saying"],
        &["as", "well"],
        &["in", "case", "that", "matters"],
    ];
    PHRASES.iter().find(|p| ends(p)).map_or(0, |p| p.len())
}

/// Present-tense verbs of lasting activities: "I run 30 miles a week",
/// "I manage a team of 12".
pub(super) fn is_activity_verb(word: &str) -> bool {
    matches!(
        word,
        "run" | "swim" | "cook" | "play" | "travel" | "commute" | "teach" | "study" | "manage" | "lead" | "coach" | "volunteer" | "bike"
            | "cycle" | "ski" | "surf" | "hike" | "trade" | "invest" | "practice" | "practise" | "garden" | "bake" | "knit" | "paint"
            | "collect" | "rent"
    )
}

/// Words that open a clause after a comma ("Yes, I prefer ...",
/// "I'm vegetarian, what do you have?"); the comma is then a clause break.
pub(super) fn is_clause_starter(word: &str) -> bool {
    is_first_person(word)
        || matches!(
            word,
            "we" | "we're" | "you" | "can" | "could" | "would" | "will" | "do" | "does" | "did" | "is" | "are" | "what" | "where" | "when"
                | "why" | "how" | "which" | "who" | "so" | "but" | "and" | "because" | "since" | "please" | "also" | "though"
                | "although" | "btw" | "plus" | "it's" | "that's" | "thanks" | "thank" | "if" | "any" | "anything" | "maybe" | "or"
                | "then" | "not" | "should" | "shall" | "let's" | "let" | "show" | "book" | "find" | "send"
                | "tell" | "give" | "make" | "add" | "remind" | "schedule" | "use" | "keep" | "skip"
                | "cancel" | "check" | "their" | "they" | "they're" | "he" | "she" | "it"
        )
}

/// Words that open a first-person clause.
pub(super) fn is_first_person(word: &str) -> bool {
    matches!(word, "i" | "i'm" | "im" | "i've" | "ive" | "i'd" | "i'll" | "my")
}

/// Conjunctions that start a new clause when a first-person word (or a
/// request) follows: "I'm vegetarian and my wife is vegan".
pub(super) fn is_conjunction(word: &str) -> bool {
    matches!(word, "and" | "but" | "so" | "because" | "since" | "although" | "though" | "while" | "plus" | "cause" | "cuz" | "whereas")
}

/// Words at the front of a clause that carry nothing ("Oh, also, ...").
pub(super) fn is_leading_marker(word: &str) -> bool {
    matches!(
        word,
        "oh" | "also" | "and" | "but" | "so" | "well" | "btw" | "fyi" | "actually" | "anyway" | "anyways" | "plus" | "since"
            | "because" | "cause" | "cuz" | "yes" | "yeah" | "yep" | "yup" | "no" | "nope" | "ok" | "okay" | "sure" | "hi" | "hey"
            | "hello" | "hola" | "honestly" | "personally" | "basically" | "um" | "uh" | "hmm" | "tbh" | "fwiw" | "ah" | "ahh"
            | "alright" | "right" | "great" | "cool" | "perfect" | "thanks" | "remember" | "note" | "noted" | "although" | "though"
            | "whereas" | "while" | "just" | "again" | "now"
    )
}

// Number words people use for small counts (shared with the query reader).
pub(super) use crate::core::timeexpr::calendar::small_number;
