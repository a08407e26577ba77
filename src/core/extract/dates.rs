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

use super::Word;
pub(super) use crate::core::timeexpr::calendar::is_calendar_word;
use crate::core::timeexpr::calendar::{
    add_months, count, day_of_month, days, is_ambiguous_month, iso, month_name, weekday, weekday_near, year, DAY_MS,
};
use crate::core::time::{civil_from_days as civil, days_in_month, Millis, MILLIS_MAX};

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
            Some(weekday_near(sign, target, today))
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

/// A month name. "May", "March" and "Mar" are also ordinary words, so
/// they count only when capitalized.
fn month(w: &Word<'_>) -> Option<u32> {
    month_name(&w.core).filter(|_| w.cap || !is_ambiguous_month(&w.core))
}

fn to_millis(day: i64) -> Option<Millis> {
    let ms = u64::try_from(day).ok()?.checked_mul(DAY_MS)?;
    (ms <= MILLIS_MAX).then_some(ms)
}
