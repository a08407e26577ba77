//! Calendar words and day arithmetic shared by the query reader
//! ([`super`]) and the extractor's date reader (`extract/dates.rs`), so
//! both read "May", "twelve" or "2024-03-15" the same way.
//!
//! Days are numbered from 1970-01-01 (day 0), proleptic Gregorian.

use crate::core::time::{days_from_civil, days_in_month};

/// One day in milliseconds.
pub(crate) const DAY_MS: u64 = 86_400_000;

/// Number words people use for small counts.
pub(crate) fn small_number(word: &str) -> Option<u32> {
    Some(match word {
        "a" | "an" | "one" => 1,
        "two" | "couple" => 2,
        "three" => 3,
        "four" => 4,
        "five" => 5,
        "six" => 6,
        "seven" => 7,
        "eight" => 8,
        "nine" => 9,
        "ten" => 10,
        "eleven" => 11,
        "twelve" => 12,
        _ => return None,
    })
}

/// A count of at most three digits or a number word: longer numbers are
/// not counts of days.
pub(crate) fn count(s: &str) -> Option<u32> {
    if !s.is_empty() && s.len() <= 3 && s.bytes().all(|b| b.is_ascii_digit()) {
        return s.parse().ok();
    }
    small_number(s)
}

/// A lower-case month name or abbreviation, whatever its case was.
/// Callers decide whether an ambiguous one ([`is_ambiguous_month`]) counts.
pub(crate) fn month_name(s: &str) -> Option<u32> {
    Some(match s {
        "january" | "jan" => 1,
        "february" | "feb" => 2,
        "march" | "mar" => 3,
        "april" | "apr" => 4,
        "may" => 5,
        "june" | "jun" => 6,
        "july" | "jul" => 7,
        "august" | "aug" => 8,
        "september" | "sep" | "sept" => 9,
        "october" | "oct" => 10,
        "november" | "nov" => 11,
        "december" | "dec" => 12,
        _ => return None,
    })
}

/// "May", "March" and "Mar" are also ordinary words ("it may rain").
pub(crate) fn is_ambiguous_month(s: &str) -> bool {
    matches!(s, "may" | "march" | "mar")
}

/// A lower-case weekday name, Monday 0. Abbreviations are not read: "sat",
/// "sun" and "wed" are ordinary words.
pub(crate) fn weekday(s: &str) -> Option<i64> {
    Some(match s {
        "monday" => 0,
        "tuesday" => 1,
        "wednesday" => 2,
        "thursday" => 3,
        "friday" => 4,
        "saturday" => 5,
        "sunday" => 6,
        _ => return None,
    })
}

/// Monday is 0; 1970-01-01 was a Thursday.
pub(crate) fn weekday_of(day: i64) -> i64 {
    (day + 3).rem_euclid(7)
}

/// Whether `s` names a month or a weekday (such words are dates, not entities).
pub(crate) fn is_calendar_word(s: &str) -> bool {
    weekday(s).is_some() || month_name(s).is_some()
}

/// The day of weekday `target` (Monday 0) said with last (`sign` < 0: the
/// most recent strictly before `today`), this (0: the next one, `today`
/// included) or next (> 0: the next one strictly after `today`).
pub(crate) fn weekday_near(sign: i64, target: i64, today: i64) -> i64 {
    let now = weekday_of(today);
    if sign < 0 {
        let back = (now - target).rem_euclid(7);
        today - if back == 0 { 7 } else { back }
    } else {
        let ahead = (target - now).rem_euclid(7);
        today + if ahead == 0 && sign > 0 { 7 } else { ahead }
    }
}

/// Month `m` of year `y` moved by `n` months.
pub(crate) fn add_months(y: i64, m: u32, n: i64) -> (i64, u32) {
    let total = y.saturating_mul(12).saturating_add(i64::from(m) - 1).saturating_add(n);
    (total.div_euclid(12), (total.rem_euclid(12) + 1) as u32)
}

/// `2024-03-15` or `2024/03/15` (one separator, not mixed).
pub(crate) fn iso(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() != 10 || !(b[4] == b[7] && (b[4] == b'-' || b[4] == b'/')) {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<u32> { s.get(r)?.parse().ok() };
    let y = num(0..4)?;
    days(i64::from(y), num(5..7)?, num(8..10)?)
}

/// A four-digit year in the range a memory may plausibly be about; other
/// four-digit numbers are counts, codes or prices.
pub(crate) fn year(s: &str) -> Option<i64> {
    if s.len() != 4 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let y: i64 = s.parse().ok()?;
    (1900..=2200).contains(&y).then_some(y)
}

/// `7`, `07`, `7th`, `1st`: a day of the month.
pub(crate) fn day_of_month(s: &str) -> Option<u32> {
    let digits = s.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &s[digits.len()..];
    if digits.is_empty() || digits.len() > 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if !matches!(suffix, "" | "st" | "nd" | "rd" | "th") {
        return None;
    }
    let d: u32 = digits.parse().ok()?;
    (1..=31).contains(&d).then_some(d)
}

/// Day number of a civil date, `None` when it does not exist (30 February).
pub(crate) fn days(y: i64, m: u32, d: u32) -> Option<i64> {
    if !(1..=12).contains(&m) || d == 0 || d > days_in_month(y, m) {
        return None;
    }
    Some(days_from_civil(y, m, d))
}
