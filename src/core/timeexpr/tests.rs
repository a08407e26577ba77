use super::*;
use crate::core::time::parse_rfc3339;

type W = (Option<Millis>, Option<Millis>, Grain);

fn at(s: &str) -> Millis {
    parse_rfc3339("t", s).unwrap()
}

/// UTC midnight starting a civil date.
fn day(y: i64, m: u32, d: u32) -> Millis {
    days_from_civil(y, m, d) as Millis * DAY_MS
}

/// Friday 15 March 2024, noon UTC.
fn fri() -> Millis {
    at("2024-03-15T12:00:00Z")
}

/// The one window of `q`.
fn one(q: &str, reference: Millis, tz: i32) -> W {
    let w = parse_query(q, reference, tz);
    assert_eq!(w.len(), 1, "{q}: {w:?}");
    (w[0].from_ms, w[0].to_ms, w[0].grain)
}

fn utc(q: &str) -> W {
    one(q, fri(), 0)
}

fn win(from: Millis, to: Millis, grain: Grain) -> W {
    (Some(from), Some(to), grain)
}

fn days_win(from: (i64, u32, u32), to: (i64, u32, u32), grain: Grain) -> W {
    win(day(from.0, from.1, from.2), day(to.0, to.1, to.2), grain)
}

fn on(y: i64, m: u32, d: u32) -> W {
    win(day(y, m, d), day(y, m, d) + DAY_MS, Grain::Day)
}

#[test]
fn today_tonight_this_morning() {
    for q in ["what did I do today?", "tonight", "this morning", "Today's plan"] {
        assert_eq!(utc(q), on(2024, 3, 15), "{q}");
    }
}

#[test]
fn yesterday_and_last_night() {
    assert_eq!(utc("what did I eat yesterday"), on(2024, 3, 14));
    assert_eq!(utc("last night"), on(2024, 3, 14));
    assert_eq!(utc("yesterday\u{2019}s notes"), on(2024, 3, 14));
}

#[test]
fn tomorrow() {
    assert_eq!(utc("tomorrow"), on(2024, 3, 16));
}

#[test]
fn last_this_next_week_are_iso_weeks() {
    assert_eq!(utc("last week"), days_win((2024, 3, 4), (2024, 3, 11), Grain::Week));
    assert_eq!(utc("this week"), days_win((2024, 3, 11), (2024, 3, 18), Grain::Week));
    assert_eq!(utc("next week"), days_win((2024, 3, 18), (2024, 3, 25), Grain::Week));
    // Across a year end: Friday 1 January 2021 is in the week of 28 December.
    assert_eq!(one("last week", at("2021-01-01T09:00:00Z"), 0), days_win((2020, 12, 21), (2020, 12, 28), Grain::Week));
}

#[test]
fn last_this_next_month_are_calendar_months() {
    assert_eq!(utc("last month"), days_win((2024, 2, 1), (2024, 3, 1), Grain::Month));
    assert_eq!(utc("this month"), days_win((2024, 3, 1), (2024, 4, 1), Grain::Month));
    assert_eq!(utc("next month"), days_win((2024, 4, 1), (2024, 5, 1), Grain::Month));
    assert_eq!(one("last month", at("2024-01-10T00:00:00Z"), 0), days_win((2023, 12, 1), (2024, 1, 1), Grain::Month));
    assert_eq!(one("next month", at("2024-12-31T23:00:00Z"), 0), days_win((2025, 1, 1), (2025, 2, 1), Grain::Month));
}

#[test]
fn last_this_next_year() {
    assert_eq!(utc("last year"), days_win((2023, 1, 1), (2024, 1, 1), Grain::Year));
    assert_eq!(utc("this year"), days_win((2024, 1, 1), (2025, 1, 1), Grain::Year));
    assert_eq!(utc("next year"), days_win((2025, 1, 1), (2026, 1, 1), Grain::Year));
}

#[test]
fn weekends() {
    assert_eq!(utc("last weekend"), days_win((2024, 3, 9), (2024, 3, 11), Grain::Day));
    assert_eq!(utc("this weekend"), days_win((2024, 3, 16), (2024, 3, 18), Grain::Day));
    assert_eq!(utc("next weekend"), days_win((2024, 3, 23), (2024, 3, 25), Grain::Day));
}

#[test]
fn last_this_next_weekday() {
    assert_eq!(utc("last Friday"), on(2024, 3, 8));
    assert_eq!(utc("last monday"), on(2024, 3, 11));
    assert_eq!(utc("this Friday"), on(2024, 3, 15));
    assert_eq!(utc("next Friday"), on(2024, 3, 22));
    assert_eq!(utc("next Sunday"), on(2024, 3, 17));
}

#[test]
fn a_bare_weekday_looks_back() {
    let q = "what did we decide on Friday?";
    let w = parse_query(q, fri(), 0);
    assert_eq!((w[0].from_ms, w[0].to_ms), (Some(day(2024, 3, 8)), Some(day(2024, 3, 9))));
    assert_eq!(&q[w[0].start..w[0].end], "on Friday");
    assert_eq!(utc("thursday"), on(2024, 3, 14));
    assert_eq!(utc("Saturday"), on(2024, 3, 9));
}

#[test]
fn last_may_is_strictly_before_the_reference_month() {
    let may = |y| days_win((y, 5, 1), (y, 6, 1), Grain::Month);
    assert_eq!(utc("last May"), may(2023));
    assert_eq!(one("last May", at("2024-05-20T00:00:00Z"), 0), may(2023));
    assert_eq!(one("last may", at("2024-06-01T00:00:00Z"), 0), may(2024));
    assert_eq!(utc("next May"), may(2024));
    assert_eq!(utc("this May"), may(2024));
}

#[test]
fn in_may_is_the_latest_not_after_the_reference_month() {
    let may = |y| days_win((y, 5, 1), (y, 6, 1), Grain::Month);
    assert_eq!(utc("in May"), may(2023));
    assert_eq!(utc("during may"), may(2023));
    assert_eq!(one("in May", at("2024-05-20T00:00:00Z"), 0), may(2024));
    assert_eq!(utc("in March"), days_win((2024, 3, 1), (2024, 4, 1), Grain::Month));
    assert_eq!(utc("the January offsite"), days_win((2024, 1, 1), (2024, 2, 1), Grain::Month));
}

#[test]
fn month_and_year() {
    let q = "what happened in May 2023?";
    let w = parse_query(q, fri(), 0);
    assert_eq!(&q[w[0].start..w[0].end], "in May 2023");
    assert_eq!((w[0].from_ms, w[0].to_ms, w[0].grain), days_win((2023, 5, 1), (2023, 6, 1), Grain::Month));
    assert_eq!(utc("May 2023"), days_win((2023, 5, 1), (2023, 6, 1), Grain::Month));
    assert_eq!(utc("march 2024"), days_win((2024, 3, 1), (2024, 4, 1), Grain::Month));
    assert_eq!(utc("Dec 2023"), days_win((2023, 12, 1), (2024, 1, 1), Grain::Month));
}

#[test]
fn a_year_needs_a_preposition() {
    let y2022 = days_win((2022, 1, 1), (2023, 1, 1), Grain::Year);
    assert_eq!(utc("in 2022"), y2022);
    assert_eq!(utc("during 2022"), y2022);
    assert!(parse_query("the 2022 report", fri(), 0).is_empty());
    assert!(parse_query("order 2022 of 3000", fri(), 0).is_empty());
}

#[test]
fn iso_dates() {
    assert_eq!(utc("on 2023-05-07"), on(2023, 5, 7));
    assert_eq!(utc("2023/05/07"), on(2023, 5, 7));
    assert!(parse_query("2023-02-30 2023-05/07 2023-5-7", fri(), 0).is_empty());
}

#[test]
fn numeric_day_month_orders_are_not_read() {
    assert!(parse_query("on 03/04/2024", fri(), 0).is_empty());
    assert!(parse_query("03-04-2024", fri(), 0).is_empty());
}

#[test]
fn day_month_year_forms() {
    for q in ["7 May 2023", "7th of May 2023", "May 7, 2023", "may 7th 2023", "on the 7th of May, 2023"] {
        assert_eq!(utc(q), on(2023, 5, 7), "{q}");
    }
}

#[test]
fn a_day_without_a_year_is_the_latest_not_after_today() {
    assert_eq!(utc("May 7th"), on(2023, 5, 7));
    assert_eq!(utc("March 1st"), on(2024, 3, 1));
    assert_eq!(utc("15 March"), on(2024, 3, 15));
    assert_eq!(utc("16 March"), on(2023, 3, 16));
}

#[test]
fn days_ago() {
    for (q, d) in [("3 days ago", 12), ("three days ago", 12), ("a day ago", 14), ("a couple of days ago", 13), ("a few days ago", 12)] {
        assert_eq!(utc(q), on(2024, 3, d), "{q}");
    }
}

#[test]
fn weeks_ago_is_the_iso_week_of_that_day() {
    // 15 March - 14 days = 1 March, a Friday, in the week of 26 February.
    assert_eq!(utc("two weeks ago"), days_win((2024, 2, 26), (2024, 3, 4), Grain::Week));
    assert_eq!(utc("a week ago"), days_win((2024, 3, 4), (2024, 3, 11), Grain::Week));
}

#[test]
fn months_ago_is_that_calendar_month() {
    assert_eq!(utc("2 months ago"), days_win((2024, 1, 1), (2024, 2, 1), Grain::Month));
    assert_eq!(utc("three months ago"), days_win((2023, 12, 1), (2024, 1, 1), Grain::Month));
    assert_eq!(utc("twelve months ago"), days_win((2023, 3, 1), (2023, 4, 1), Grain::Month));
}

#[test]
fn years_ago_is_that_year() {
    assert_eq!(utc("a year ago"), days_win((2023, 1, 1), (2024, 1, 1), Grain::Year));
    assert_eq!(utc("5 years ago"), days_win((2019, 1, 1), (2020, 1, 1), Grain::Year));
}

#[test]
fn the_unit_before_last() {
    assert_eq!(utc("the week before last"), days_win((2024, 2, 26), (2024, 3, 4), Grain::Week));
    assert_eq!(utc("the day before yesterday"), on(2024, 3, 13));
    assert_eq!(utc("the month before last"), days_win((2024, 1, 1), (2024, 2, 1), Grain::Month));
}

#[test]
fn earlier_this_year_and_month_run_to_the_reference() {
    assert_eq!(utc("earlier this year"), (Some(day(2024, 1, 1)), Some(fri()), Grain::Open));
    assert_eq!(utc("earlier this month"), (Some(day(2024, 3, 1)), Some(fri()), Grain::Open));
}

#[test]
fn recently_is_the_last_thirty_days() {
    let want = (Some(day(2024, 2, 14)), Some(fri()), Grain::Open);
    assert_eq!(utc("what have I been reading recently"), want);
    assert_eq!(utc("lately"), want);
}

#[test]
fn since_runs_to_the_reference() {
    assert_eq!(utc("since last week"), (Some(day(2024, 3, 4)), Some(fri()), Grain::Open));
    assert_eq!(utc("since 2022"), (Some(day(2022, 1, 1)), Some(fri()), Grain::Open));
    // A start after the reference gives an empty window, not a reversed one.
    assert_eq!(utc("since tomorrow"), (Some(day(2024, 3, 16)), Some(day(2024, 3, 16)), Grain::Open));
}

#[test]
fn after_starts_at_the_end() {
    assert_eq!(utc("after May 2023"), (Some(day(2023, 6, 1)), None, Grain::Open));
}

#[test]
fn before_ends_at_the_start() {
    assert_eq!(utc("before 2023"), (None, Some(day(2023, 1, 1)), Grain::Open));
    assert_eq!(utc("before Friday"), (None, Some(day(2024, 3, 8)), Grain::Open));
}

#[test]
fn until_ends_at_the_end() {
    assert_eq!(utc("until last month"), (None, Some(day(2024, 3, 1)), Grain::Open));
    assert_eq!(utc("till 2023"), (None, Some(day(2024, 1, 1)), Grain::Open));
}

#[test]
fn between_spans_both() {
    let q = "between May 2023 and August 2023?";
    let w = parse_query(q, fri(), 0);
    assert_eq!((w[0].from_ms, w[0].to_ms, w[0].grain), (Some(day(2023, 5, 1)), Some(day(2023, 9, 1)), Grain::Open));
    assert_eq!(&q[w[0].start..w[0].end], "between May 2023 and August 2023");
    assert_eq!(utc("between 2020 and 2021"), (Some(day(2020, 1, 1)), Some(day(2022, 1, 1)), Grain::Open));
    // Without an end, the start alone is read.
    assert_eq!(utc("between May 2023 and the trip"), days_win((2023, 5, 1), (2023, 6, 1), Grain::Month));
}

#[test]
fn month_and_year_ends() {
    let nye = at("2024-12-31T23:00:00Z");
    assert_eq!(one("tomorrow", nye, 0), on(2025, 1, 1));
    assert_eq!(one("next year", nye, 0), days_win((2025, 1, 1), (2026, 1, 1), Grain::Year));
    assert_eq!(one("yesterday", at("2023-01-01T00:00:00Z"), 0), on(2022, 12, 31));
    assert_eq!(one("last month", at("2024-03-31T12:00:00Z"), 0), days_win((2024, 2, 1), (2024, 3, 1), Grain::Month));
    assert_eq!(one("yesterday", at("2024-05-01T00:00:00Z"), 0), on(2024, 4, 30));
}

#[test]
fn the_29th_of_february() {
    assert_eq!(one("yesterday", at("2024-03-01T08:00:00Z"), 0), on(2024, 2, 29));
    assert_eq!(one("yesterday", at("2023-03-01T08:00:00Z"), 0), on(2023, 2, 28));
    assert_eq!(utc("29 February 2024"), on(2024, 2, 29));
    assert!(parse_query("29 February 2023", fri(), 0).is_empty());
    assert_eq!(utc("February 29th"), on(2024, 2, 29));
    assert_eq!(one("February 29th", at("2023-06-01T00:00:00Z"), 0), on(2020, 2, 29));
    assert_eq!(one("a year ago", at("2024-02-29T12:00:00Z"), 0), days_win((2023, 1, 1), (2024, 1, 1), Grain::Year));
}

#[test]
fn offsets_of_plus_fourteen_and_minus_twelve() {
    // 12:00Z is 02:00 on the 16th at +14:00: the local day starts at 10:00Z on the 15th.
    let w = one("today", fri(), 14 * 60);
    assert_eq!(w, win(at("2024-03-15T10:00:00Z"), at("2024-03-16T10:00:00Z"), Grain::Day));
    // 06:00Z is 18:00 on the 14th at -12:00: the local day starts at 12:00Z on the 14th.
    let w = one("today", at("2024-03-15T06:00:00Z"), -12 * 60);
    assert_eq!(w, win(at("2024-03-14T12:00:00Z"), at("2024-03-15T12:00:00Z"), Grain::Day));
    assert_eq!(one("2023-05-07", fri(), -12 * 60), win(at("2023-05-07T12:00:00Z"), at("2023-05-08T12:00:00Z"), Grain::Day));
}

#[test]
fn a_query_in_utc_plus_13_just_after_midnight() {
    // 00:05 on 1 January 2025 at +13:00.
    let r = at("2024-12-31T11:05:00Z");
    let tz = 13 * 60;
    assert_eq!(one("today", r, tz), win(at("2024-12-31T11:00:00Z"), at("2025-01-01T11:00:00Z"), Grain::Day));
    assert_eq!(one("yesterday", r, tz), win(at("2024-12-30T11:00:00Z"), at("2024-12-31T11:00:00Z"), Grain::Day));
    assert_eq!(one("this year", r, tz), win(at("2024-12-31T11:00:00Z"), at("2025-12-31T11:00:00Z"), Grain::Year));
    assert_eq!(one("last year", r, tz), win(at("2023-12-31T11:00:00Z"), at("2024-12-31T11:00:00Z"), Grain::Year));
}

#[test]
fn may_the_verb_is_not_a_month() {
    for q in ["may I ask what I did last week?", "May I ask what I did last week?", "it may rain last week"] {
        let w = parse_query(q, fri(), 0);
        assert_eq!(w.len(), 1, "{q}: {w:?}");
        assert_eq!(&q[w[0].start..w[0].end], "last week");
    }
    for q in ["it may rain", "you may go. May we?", "they march on", "I may be late"] {
        assert!(parse_query(q, fri(), 0).is_empty(), "{q}");
    }
    let may23 = days_win((2023, 5, 1), (2023, 6, 1), Grain::Month);
    for q in ["the May meeting", "we met in may", "end of may", "since May"] {
        assert_eq!(one(q, fri(), 0).0, may23.0, "{q}");
    }
    assert_eq!(utc("may 7"), on(2023, 5, 7));
}

#[test]
fn unparseable_and_event_relative_input_gives_nothing() {
    for q in ["", "   ", "before the trip", "after the wedding", "since the move", "between jobs", "hello world", "in 12345", "2022", "the day before the party", "an hour ago", "99999 days ago", "¿Qué hice ayer?"] {
        assert!(parse_query(q, fri(), 0).is_empty(), "{q}");
    }
}

#[test]
fn at_most_time_windows_max_per_query() {
    let q = "today yesterday tomorrow last week last month last year";
    assert_eq!(parse_query(q, fri(), 0).len(), TIME_WINDOWS_MAX);
}

#[test]
fn only_the_first_bytes_are_scanned() {
    let pad = "word ".repeat(TIME_QUERY_BYTES_MAX / 5 + 1);
    assert!(parse_query(&format!("{pad}yesterday"), fri(), 0).is_empty());
    assert_eq!(parse_query(&format!("yesterday {pad}"), fri(), 0).len(), 1);
    // A cut inside a word or a character drops that word.
    let text = format!("{}é 2023-05-07", "x".repeat(TIME_QUERY_BYTES_MAX - 1));
    assert!(parse_query(&text, fri(), 0).is_empty());
}

#[test]
fn bounds_saturate() {
    assert_eq!(one("yesterday", 0, -12 * 60), win(0, 0, Grain::Day));
    assert_eq!(one("tomorrow", u64::MAX, 0).1, Some(MILLIS_MAX));
    assert_eq!(one("today", 0, i32::MIN).0, Some(0));
    assert_eq!(utc("999 years ago"), win(0, 0, Grain::Year));
    assert_eq!(utc("9999-12-31").1, Some(MILLIS_MAX));
    assert_eq!(utc("in 1900"), win(0, 0, Grain::Year));
}

#[test]
fn first_date_reads_absolute_dates() {
    let r = fri();
    assert_eq!(first_date("we met on 7 May 2023 in Lyon", r, 0, false), Some(day(2023, 5, 7)));
    assert_eq!(first_date("2023-05-07: kickoff", r, 0, false), Some(day(2023, 5, 7)));
    assert_eq!(first_date("signed May 7, 2023", r, 0, false), Some(day(2023, 5, 7)));
    assert_eq!(first_date("moved in March 2024", r, 0, false), Some(day(2024, 3, 1)));
    assert_eq!(first_date("since 2022 I run", r, 0, false), Some(day(2022, 1, 1)));
    assert_eq!(first_date("on 2023-05-07", r, 60, false), Some(day(2023, 5, 7) - 3_600_000));
    assert_eq!(first_date("I flew yesterday, then on 7 May 2023 back", r, 0, false), Some(day(2023, 5, 7)));
    assert_eq!(first_date("born in 1950", r, 0, false), None);
    assert_eq!(first_date("May I ask?", r, 0, true), None);
}

#[test]
fn first_date_reads_relative_dates_only_when_allowed() {
    let r = fri();
    assert_eq!(first_date("I flew yesterday", r, 0, false), None);
    assert_eq!(first_date("I flew yesterday", r, 0, true), Some(day(2024, 3, 14)));
    assert_eq!(first_date("two weeks ago", r, 0, true), Some(day(2024, 2, 26)));
    // As the extractor reads them: no bare weekday, a year-less date in the reference year.
    assert_eq!(first_date("on Friday", r, 0, true), None);
    assert_eq!(first_date("on May 7th", r, 0, true), Some(day(2024, 5, 7)));
    assert_eq!(first_date("in May", r, 0, true), Some(day(2024, 5, 1)));
    assert_eq!(first_date("recently", r, 0, true), None);
}

#[test]
fn tz_offsets() {
    for (s, want) in [("+01:00", Some(60)), ("-05:30", Some(-330)), ("Z", Some(0)), ("UTC", Some(0)), ("utc", Some(0)), ("+14:00", Some(840)), ("-12:00", Some(-720)), ("-00:00", Some(0))] {
        assert_eq!(parse_tz_offset(s), want, "{s}");
    }
    for s in ["", "Europe/Paris", "+1:00", "+0100", "+24:00", "+01:60", "01:00", "\u{ff0b}01:00", "+01:0é"] {
        assert_eq!(parse_tz_offset(s), None, "{s}");
    }
}

/// A deterministic xorshift generator: no dependency, same cases every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn arbitrary_input_never_panics() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let words = [
        "in", "May", "may", "last", "next", "this", "since", "before", "after", "until", "between", "and", "the", "week", "before", "ago",
        "days", "weeks", "months", "years", "a", "couple", "of", "few", "999", "0", "31st", "29", "February", "2022", "9999", "1900",
        "2200", "0000-00-00", "9999-12-31", "0001-01-01", "Friday", "weekend", "earlier", "recently", "yesterday\u{2019}s", "é", "?",
        ".", "\u{200b}", "İ", "day", "year", "month", "on", "of", "03/04/2024", "2024/02/29", "12345678901234567890",
    ];
    let refs = [0, 1, DAY_MS - 1, MILLIS_MAX, u64::MAX, fri()];
    let tzs = [0, i32::MIN, i32::MAX, 14 * 60, -12 * 60, 1439, -1440];
    for n in 0..3000 {
        let text = if n % 2 == 0 {
            let len = (rng.next() % 64) as usize;
            let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            String::from_utf8_lossy(&bytes).into_owned()
        } else {
            let len = (rng.next() % 12) as usize;
            (0..len).map(|_| words[(rng.next() % words.len() as u64) as usize]).collect::<Vec<_>>().join(" ")
        };
        let r = refs[(rng.next() % refs.len() as u64) as usize];
        let tz = tzs[(rng.next() % tzs.len() as u64) as usize];
        for w in parse_query(&text, r, tz) {
            assert!(w.start < w.end && w.end <= text.len() && text.is_char_boundary(w.start) && text.is_char_boundary(w.end), "{text:?}");
            assert!(w.from_ms.unwrap_or(0) <= MILLIS_MAX && w.to_ms.unwrap_or(0) <= MILLIS_MAX);
            if let (Some(f), Some(t)) = (w.from_ms, w.to_ms) {
                assert!(f <= t, "{text:?} at {r} {tz}: {w:?}");
            }
        }
        let _ = first_date(&text, r, tz, n % 3 == 0);
        let _ = parse_tz_offset(&text);
    }
}
