//! Dates said in a clause, as the UTC midnight of the day they name.
//!
//! Absolute forms: `2024-03-15`, `2024/03/15`, `March 2024` (the 1st),
//! `15 March 2024`, `15th of March`, `March 15, 2024`, `March 15` and
//! `in March` (the turn's year), `in 2030` (1 January). Relative forms count
//! from the turn's `created_at`: today, tonight, yesterday, tomorrow,
//! last/this/next week|month|year|weekend|<weekday>, in N days|weeks|
//! months|years, N days|weeks|... ago. A bare weekday ("on Friday") is not
//! read: it is as often past as future, and a wrong date is worse than none.
//! Numeric day/month orders (03/04/2024) are not read either: they differ
//! by country.

use super::lexicon::small_number;
use super::Word;
use crate::core::time::{civil_from_days as civil, days_from_civil, days_in_month, Millis, MILLIS_MAX};

const DAY_MS: u64 = 86_400_000;

/// A date said in `words[start..end]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Found {
    pub start: usize,
    pub end: usize,
    pub at: Millis,
}

/// The first date in `words`, relative ones counted from `now`.
pub(super) fn find(words: &[Word<'_>], now: Millis) -> Option<Found> {
    let today = (now.min(MILLIS_MAX) / DAY_MS) as i64;
    (0..words.len()).find_map(|i| {
        let (end, day) = at(words, i, today)?;
        Some(Found { start: i, end, at: to_millis(day)? })
    })
}

fn core<'w>(w: &'w [Word<'_>], i: usize) -> &'w str {
    w.get(i).map_or("", |x| x.core.as_str())
}

/// The date starting at word `i`: (end, day number since 1970-01-01).
fn at(w: &[Word<'_>], i: usize, today: i64) -> Option<(usize, i64)> {
    let c = core(w, i);
    if let Some(day) = iso(c) {
        return Some((i + 1, day));
    }
    match c {
        "today" | "tonight" => return Some((i + 1, today)),
        "yesterday" => return Some((i + 1, today - 1)),
        "tomorrow" => return Some((i + 1, today + 1)),
        "this" if matches!(core(w, i + 1), "morning" | "afternoon" | "evening") => return Some((i + 2, today)),
        "last" | "next" | "this" => return relative(c, core(w, i + 1), today).map(|d| (i + 2, d)),
        "in" => {
            if let (Some(n), Some(day)) = (count(core(w, i + 1)), Some(core(w, i + 2))) {
                if let Some(d) = shift(today, day, i64::from(n)) {
                    return Some((i + 3, d));
                }
            }
            if let Some(y) = year(core(w, i + 1)) {
                // "in March 2024" is read at "March"; only a bare year here.
                return days(y, 1, 1).map(|d| (i + 2, d));
            }
            return None;
        }
        _ => {}
    }
    if let Some(n) = count(c) {
        if core(w, i + 2) == "ago" {
            if let Some(d) = shift(today, core(w, i + 1), -i64::from(n)) {
                return Some((i + 3, d));
            }
        }
    }
    let this_year = civil(today).0;
    if let Some(m) = month(&w[i]) {
        if let Some(d) = day_of_month(core(w, i + 1)) {
            return match year(core(w, i + 2)) {
                Some(y) => days(y, m, d).map(|x| (i + 3, x)),
                None => days(this_year, m, d).map(|x| (i + 2, x)),
            };
        }
        if let Some(y) = year(core(w, i + 1)) {
            return days(y, m, 1).map(|x| (i + 2, x));
        }
        if i > 0 && matches!(core(w, i - 1), "in" | "since" | "during" | "until") {
            return days(this_year, m, 1).map(|x| (i + 1, x));
        }
        return None;
    }
    if let Some(d) = day_of_month(c) {
        let j = if core(w, i + 1) == "of" { i + 2 } else { i + 1 };
        let m = month(w.get(j)?)?;
        return match year(core(w, j + 1)) {
            Some(y) => days(y, m, d).map(|x| (j + 2, x)),
            None => days(this_year, m, d).map(|x| (j + 1, x)),
        };
    }
    None
}

/// last/this/next + week, month, year, weekend or a weekday.
fn relative(which: &str, unit: &str, today: i64) -> Option<i64> {
    let sign = match which {
        "last" => -1,
        "next" => 1,
        _ => 0,
    };
    let (y, m, _) = civil(today);
    match unit {
        "week" => Some(today + 7 * sign),
        "month" => {
            let (y, m) = add_months(y, m, sign);
            days(y, m, 1)
        }
        "year" => days(y + sign, 1, 1),
        unit => {
            let target = if unit == "weekend" { 5 } else { weekday(unit)? };
            let now = weekday_of(today);
            Some(if sign < 0 {
                let back = (now - target).rem_euclid(7);
                today - if back == 0 { 7 } else { back }
            } else {
                let ahead = (target - now).rem_euclid(7);
                today + if ahead == 0 && sign > 0 { 7 } else { ahead }
            })
        }
    }
}

/// `today` moved by `n` days, weeks, months or years.
fn shift(today: i64, unit: &str, n: i64) -> Option<i64> {
    match unit {
        "day" | "days" => Some(today + n),
        "week" | "weeks" => Some(today + 7 * n),
        "month" | "months" | "year" | "years" => {
            let (y, m, d) = civil(today);
            let months = if unit.starts_with('m') { n } else { n * 12 };
            let (y, m) = add_months(y, m, months);
            days(y, m, d.min(days_in_month(y, m)))
        }
        _ => None,
    }
}

fn add_months(y: i64, m: u32, n: i64) -> (i64, u32) {
    let total = y * 12 + i64::from(m) - 1 + n;
    (total.div_euclid(12), (total.rem_euclid(12) + 1) as u32)
}

fn count(s: &str) -> Option<u32> {
    if !s.is_empty() && s.len() <= 3 && s.bytes().all(|b| b.is_ascii_digit()) {
        return s.parse().ok();
    }
    small_number(s)
}

fn iso(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() != 10 || !(b[4] == b[7] && (b[4] == b'-' || b[4] == b'/')) {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<u32> { s.get(r)?.parse().ok() };
    let y = num(0..4)?;
    days(i64::from(y), num(5..7)?, num(8..10)?)
}

fn year(s: &str) -> Option<i64> {
    if s.len() != 4 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let y: i64 = s.parse().ok()?;
    (1900..=2200).contains(&y).then_some(y)
}

fn day_of_month(s: &str) -> Option<u32> {
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

/// A month name. "May", "March" and "Mar" are also ordinary words, so
/// they count only when capitalized.
fn month(w: &Word<'_>) -> Option<u32> {
    let m = match w.core.as_str() {
        "january" | "jan" => 1,
        "february" | "feb" => 2,
        "march" | "mar" if w.cap => 3,
        "april" | "apr" => 4,
        "may" if w.cap => 5,
        "june" | "jun" => 6,
        "july" | "jul" => 7,
        "august" | "aug" => 8,
        "september" | "sep" | "sept" => 9,
        "october" | "oct" => 10,
        "november" | "nov" => 11,
        "december" | "dec" => 12,
        _ => return None,
    };
    Some(m)
}

/// Monday is 0.
fn weekday(s: &str) -> Option<i64> {
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

/// 1970-01-01 was a Thursday.
fn weekday_of(day: i64) -> i64 {
    (day + 3).rem_euclid(7)
}

/// Whether `s` names a month or a weekday (such words are dates, not entities).
pub(super) fn is_calendar_word(s: &str) -> bool {
    weekday(s).is_some()
        || matches!(
            s,
            "january" | "february" | "march" | "april" | "may" | "june" | "july" | "august" | "september" | "october" | "november"
                | "december" | "jan" | "feb" | "mar" | "apr" | "jun" | "jul" | "aug" | "sep" | "sept" | "oct" | "nov" | "dec"
        )
}

fn to_millis(day: i64) -> Option<Millis> {
    let ms = u64::try_from(day).ok()?.checked_mul(DAY_MS)?;
    (ms <= MILLIS_MAX).then_some(ms)
}

/// Day number of a valid civil date.
fn days(y: i64, m: u32, d: u32) -> Option<i64> {
    if !(1..=12).contains(&m) || d == 0 || d > days_in_month(y, m) {
        return None;
    }
    Some(days_from_civil(y, m, d))
}

