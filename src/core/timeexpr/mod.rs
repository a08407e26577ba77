//! Time expressions in a search query ("last May", "two weeks ago", "since
//! 2022") read as half-open UTC windows, so a search can favour what
//! happened then; and the first date in a record's text, for its event date.
//!
//! Days are the caller's local days at a fixed offset from UTC: without tz
//! data there are no IANA names and no DST. Queries about memory look back,
//! so a bare weekday or "in May" is the most recent one. Event-relative
//! forms ("before the trip") and numeric day/month orders (03/04/2024,
//! which differ by country) are not read. Any text reads without panic, and
//! only its first [`TIME_QUERY_BYTES_MAX`] bytes are looked at.

pub(crate) mod calendar;
#[cfg(test)]
mod tests;

use calendar::{add_months, count, day_of_month, days, is_ambiguous_month, iso, month_name, weekday, weekday_near, year, DAY_MS};

use crate::core::limits::{TIME_QUERY_BYTES_MAX, TIME_WINDOWS_MAX};
use crate::core::time::{civil_from_days as civil, days_from_civil, Millis, MILLIS_MAX};

/// How coarse a window is, so a caller can tell "in 2022" from "on 7 May
/// 2022" when it weighs or shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grain {
    /// One day, or a weekend (two days).
    Day,
    /// An ISO week, Monday to Monday.
    Week,
    /// A calendar month.
    Month,
    /// A calendar year.
    Year,
    /// A range up to or from a point: since, before, after, until, between,
    /// recently, earlier this year.
    Open,
}

impl Grain {
    /// The wire name: `day`, `week`, `month`, `year` or `open`.
    pub fn as_str(self) -> &'static str {
        match self {
            Grain::Day => "day",
            Grain::Week => "week",
            Grain::Month => "month",
            Grain::Year => "year",
            Grain::Open => "open",
        }
    }
}

/// One expression read from a query, with where it was written so the
/// caller can take its words out of a keyword query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeWindow {
    /// Byte offset of the expression's first character in the query.
    pub start: usize,
    /// Byte offset just past the expression's last character.
    pub end: usize,
    /// Inclusive; `None` is unbounded.
    pub from_ms: Option<Millis>,
    /// Exclusive; `None` is unbounded.
    pub to_ms: Option<Millis>,
    /// How precise the expression was.
    pub grain: Grain,
}

/// Every time expression of `text` (at most [`TIME_WINDOWS_MAX`]), relative
/// ones counted from `reference_ms` in the local days of `tz_offset_minutes`.
pub fn parse_query(text: &str, reference_ms: Millis, tz_offset_minutes: i32) -> Vec<TimeWindow> {
    let toks = tokens(bounded(text));
    let r = Reader::new(&toks, reference_ms, tz_offset_minutes, true);
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() && out.len() < TIME_WINDOWS_MAX {
        let Some(f) = r.read(i) else {
            i += 1;
            continue;
        };
        out.push(TimeWindow {
            start: toks[i].start,
            end: toks[f.end - 1].end,
            from_ms: f.from.map(clamp),
            to_ms: f.to.map(clamp),
            grain: f.grain,
        });
        i = f.end;
    }
    out
}

/// The first absolute date written in `text` ("on 7 May 2023", "2023-05-07",
/// "March 2024"), as the UTC ms of that local day's start: a record's event
/// date when the writer gave none. Relative forms ("yesterday") count only
/// when `allow_relative`, from `reference_ms`; a date outside 1970..=9999
/// gives `None`.
pub fn first_date(text: &str, reference_ms: Millis, tz_offset_minutes: i32, allow_relative: bool) -> Option<Millis> {
    let toks = tokens(bounded(text));
    let r = Reader::new(&toks, reference_ms, tz_offset_minutes, false);
    let mut i = 0;
    while i < toks.len() {
        let Some(f) = r.read(i) else {
            i += 1;
            continue;
        };
        if f.grain != Grain::Open && (f.absolute || allow_relative) {
            let from = f.from?;
            return (0..=MILLIS_MAX as i64).contains(&from).then_some(from as Millis);
        }
        i = f.end;
    }
    None
}

/// Parses a fixed offset ("+01:00", "-05:30", "Z", "UTC") into minutes east
/// of UTC. IANA names ("Europe/Paris") give `None`: there is no tz data.
pub fn parse_tz_offset(s: &str) -> Option<i32> {
    let s = s.trim();
    if s.eq_ignore_ascii_case("z") || s.eq_ignore_ascii_case("utc") {
        return Some(0);
    }
    let b = s.as_bytes();
    if b.len() != 6 || !matches!(b[0], b'+' | b'-') || b[3] != b':' {
        return None;
    }
    let two = |at: usize| -> Option<i32> {
        let (h, l) = (b[at], b[at + 1]);
        (h.is_ascii_digit() && l.is_ascii_digit()).then(|| i32::from(h - b'0') * 10 + i32::from(l - b'0'))
    };
    let (h, m) = (two(1)?, two(4)?);
    if h > 23 || m > 59 {
        return None;
    }
    Some(if b[0] == b'-' { -(h * 60 + m) } else { h * 60 + m })
}

/// An offset of a day or more is not a time zone.
const TZ_MINUTES_MAX: i32 = 24 * 60 - 1;
const DAY: i64 = DAY_MS as i64;

fn clamp(ms: i64) -> Millis {
    ms.clamp(0, MILLIS_MAX as i64) as Millis
}

/// The first [`TIME_QUERY_BYTES_MAX`] bytes of `text`, cut back to whole words.
fn bounded(text: &str) -> &str {
    if text.len() <= TIME_QUERY_BYTES_MAX {
        return text;
    }
    let mut cut = TIME_QUERY_BYTES_MAX;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let head = &text[..cut];
    if text[cut..].starts_with(char::is_whitespace) {
        return head;
    }
    &head[..head.rfind(char::is_whitespace).unwrap_or(0)]
}

/// One word of the text.
struct Tok {
    /// Byte range of the word without its outer punctuation.
    start: usize,
    end: usize,
    /// Lower case, without a possessive "'s" ("yesterday's").
    core: String,
    /// Starts with a capital: "May" the month rather than the verb.
    cap: bool,
    /// First of its sentence, where a capital says nothing.
    sentence_start: bool,
}

fn tokens(text: &str) -> Vec<Tok> {
    let edge = |c: char| !c.is_alphanumeric();
    let mut out = Vec::new();
    let mut sentence_start = true;
    for raw in text.split_whitespace() {
        let lead = raw.len() - raw.trim_start_matches(edge).len();
        let word = raw.trim_matches(edge);
        let tail = if word.is_empty() { raw } else { &raw[lead + word.len()..] };
        let ends_sentence = tail.contains(['.', '!', '?']);
        if let Some(first) = word.chars().next() {
            let core = word.to_lowercase();
            let core = core.strip_suffix("'s").or_else(|| core.strip_suffix("\u{2019}s")).unwrap_or(&core).to_owned();
            let start = raw.as_ptr() as usize - text.as_ptr() as usize + lead;
            out.push(Tok { start, end: start + word.len(), core, cap: first.is_uppercase(), sentence_start });
            sentence_start = false;
        }
        sentence_start |= ends_sentence;
    }
    out
}

/// A period named by a date expression, in UTC ms, `[from, to)`.
#[derive(Debug, Clone, Copy)]
struct Span {
    from: i64,
    to: i64,
    grain: Grain,
    /// Needs no reference time ("7 May 2023", "in 2022").
    absolute: bool,
}

/// What [`Reader::read`] found: a span, or a range built on one.
struct Found {
    end: usize,
    from: Option<i64>,
    to: Option<i64>,
    grain: Grain,
    absolute: bool,
}

impl From<(usize, Span)> for Found {
    fn from((end, s): (usize, Span)) -> Found {
        Found { end, from: Some(s.from), to: Some(s.to), grain: s.grain, absolute: s.absolute }
    }
}

/// Words that make "May" the month and a bare year a year.
fn is_preposition(s: &str) -> bool {
    matches!(s, "in" | "during" | "last" | "since" | "before" | "after" | "until" | "till" | "of" | "between")
}

struct Reader<'t> {
    toks: &'t [Tok],
    /// The reference time, UTC ms.
    now: i64,
    /// The local day of the reference time.
    today: i64,
    tz_ms: i64,
    /// A query looks back; a record's text is read as the extractor reads it.
    query: bool,
}

impl<'t> Reader<'t> {
    fn new(toks: &'t [Tok], reference_ms: Millis, tz_offset_minutes: i32, query: bool) -> Reader<'t> {
        let now = reference_ms.min(MILLIS_MAX) as i64;
        let tz_ms = i64::from(tz_offset_minutes.clamp(-TZ_MINUTES_MAX, TZ_MINUTES_MAX)) * 60_000;
        Reader { toks, now, today: (now + tz_ms).div_euclid(DAY), tz_ms, query }
    }

    fn core(&self, i: usize) -> &str {
        self.toks.get(i).map_or("", |t| t.core.as_str())
    }

    /// The UTC ms at which local day `day` starts.
    fn start(&self, day: i64) -> i64 {
        day.saturating_mul(DAY).saturating_sub(self.tz_ms)
    }

    fn days(&self, from: i64, to: i64, grain: Grain, absolute: bool) -> Span {
        Span { from: self.start(from), to: self.start(to), grain, absolute }
    }

    fn month(&self, y: i64, m: u32, absolute: bool) -> Span {
        let (ny, nm) = add_months(y, m, 1);
        self.days(days_from_civil(y, m, 1), days_from_civil(ny, nm, 1), Grain::Month, absolute)
    }

    /// A range (since, after, before, until, between) or a date, with the
    /// preposition that introduces it. A record's text gets the date alone.
    fn read(&self, i: usize) -> Option<Found> {
        let c = self.core(i);
        match c {
            "in" | "during" => self.primary(i + 1, true, true).map(Found::from),
            "on" => self.primary(i + 1, false, false).map(Found::from),
            "since" | "after" | "before" | "until" | "till" | "between" => {
                let (end, x) = self.primary(i + 1, true, true)?;
                if !self.query {
                    return Some((end, x).into());
                }
                let (end, from, to) = match c {
                    "since" => (end, Some(x.from), Some(self.now.max(x.from))),
                    "after" => (end, Some(x.to), None),
                    "before" => (end, None, Some(x.from)),
                    "between" => {
                        if self.core(end) != "and" {
                            return None;
                        }
                        let (end, y) = self.primary(end + 1, true, true)?;
                        (end, Some(x.from.min(y.from)), Some(x.to.max(y.to)))
                    }
                    _ => (end, None, Some(x.to)),
                };
                Some(Found { end, from, to, grain: Grain::Open, absolute: x.absolute })
            }
            _ => {
                let loose = i > 0 && is_preposition(self.core(i - 1));
                self.primary(i, loose, false).map(Found::from)
            }
        }
    }

    /// The date expression starting at word `i`: (its end, its span).
    /// `loose`: a preposition came before, so "May" is the month.
    /// `year_ok`: a bare year ("2022") is a year, not a number.
    fn primary(&self, i: usize, loose: bool, year_ok: bool) -> Option<(usize, Span)> {
        let c = self.core(i);
        let d = self.today;
        if let Some(day) = iso(c) {
            return Some((i + 1, self.days(day, day + 1, Grain::Day, true)));
        }
        let one_day = |end: usize, day: i64| Some((end, self.days(day, day + 1, Grain::Day, false)));
        match c {
            "" => return None,
            "today" | "tonight" => return one_day(i + 1, d),
            "yesterday" => return one_day(i + 1, d - 1),
            "tomorrow" => return one_day(i + 1, d + 1),
            "recently" | "lately" => return Some((i + 1, Span { to: self.now, grain: Grain::Open, ..self.days(d - 30, d, Grain::Open, false) })),
            "this" if matches!(self.core(i + 1), "morning" | "afternoon" | "evening") => return one_day(i + 2, d),
            "last" if self.core(i + 1) == "night" => return one_day(i + 2, d - 1),
            "last" | "this" | "next" => return self.relative(i, c),
            "earlier" if self.core(i + 1) == "this" => {
                let s = self.unit(self.core(i + 2), 0)?;
                return Some((i + 3, Span { to: self.now.max(s.from), grain: Grain::Open, ..s }));
            }
            // "the day before yesterday", "the week before last".
            "the" if self.core(i + 2) == "before" => {
                let unit = self.core(i + 1);
                let ok = matches!((unit, self.core(i + 3)), ("day", "yesterday") | ("week" | "month" | "year", "last"));
                return if ok { self.unit(unit, 2).map(|s| (i + 4, s)) } else { None };
            }
            _ => {}
        }
        if let Some((j, n)) = self.count_phrase(i) {
            let unit = self.core(j);
            if self.core(j + 1) == "ago" {
                return self.unit(unit.strip_suffix('s').unwrap_or(unit), n).map(|s| (j + 2, s));
            }
        }
        if let Some(m) = month_name(c) {
            // After a day that does not exist ("29 February 2023") the month
            // alone is not what was meant.
            let of = usize::from(i > 0 && self.core(i - 1) == "of");
            if i > of && day_of_month(self.core(i - 1 - of)).is_some() {
                return None;
            }
            if let Some(dd) = day_of_month(self.core(i + 1)) {
                return match year(self.core(i + 2)) {
                    Some(y) => days(y, m, dd).map(|x| (i + 3, self.days(x, x + 1, Grain::Day, true))),
                    None => self.yearless(m, dd).map(|s| (i + 2, s)),
                };
            }
            if let Some(y) = year(self.core(i + 1)) {
                return Some((i + 2, self.month(y, m, true)));
            }
            let tok = &self.toks[i];
            let full_name = c.len() > 3 || c == "may";
            let bare_ok = loose || (full_name && (!is_ambiguous_month(c) || (tok.cap && !tok.sentence_start)));
            if !bare_ok {
                return None;
            }
            let (ry, rm, _) = civil(d);
            let y = if self.query && m > rm { ry - 1 } else { ry };
            return Some((i + 1, self.month(y, m, false)));
        }
        if let Some(dd) = day_of_month(c) {
            let j = if self.core(i + 1) == "of" { i + 2 } else { i + 1 };
            let m = month_name(self.core(j))?;
            return match year(self.core(j + 1)) {
                Some(y) => days(y, m, dd).map(|x| (j + 2, self.days(x, x + 1, Grain::Day, true))),
                None => self.yearless(m, dd).map(|s| (j + 1, s)),
            };
        }
        if self.query {
            if let Some(target) = weekday(c) {
                return one_day(i + 1, weekday_near(-1, target, d));
            }
        }
        if year_ok {
            if let Some(y) = year(c) {
                let span = self.days(days_from_civil(y, 1, 1), days_from_civil(y + 1, 1, 1), Grain::Year, true);
                return Some((i + 1, span));
            }
        }
        None
    }

    /// last/this/next + week, month, year, weekend, a weekday or a month.
    fn relative(&self, i: usize, which: &str) -> Option<(usize, Span)> {
        let sign: i64 = match which {
            "last" => -1,
            "next" => 1,
            _ => 0,
        };
        let unit = self.core(i + 1);
        let d = self.today;
        if let Some(target) = weekday(unit) {
            let day = weekday_near(sign, target, d);
            return Some((i + 2, self.days(day, day + 1, Grain::Day, false)));
        }
        if let Some(m) = month_name(unit) {
            let (ry, rm, _) = civil(d);
            let y = match sign {
                -1 if m < rm => ry,
                -1 => ry - 1,
                1 if m > rm => ry,
                1 => ry + 1,
                _ => ry,
            };
            return Some((i + 2, self.month(y, m, false)));
        }
        if unit == "day" {
            return None;
        }
        self.unit(unit, -sign).map(|s| (i + 2, s))
    }

    /// The day, ISO week, weekend, month or year `back` of them before the
    /// current one (negative: after).
    fn unit(&self, unit: &str, back: i64) -> Option<Span> {
        let d = self.today;
        let monday = d - calendar::weekday_of(d) - 7 * back;
        let (ry, rm, _) = civil(d);
        Some(match unit {
            "day" => self.days(d - back, d - back + 1, Grain::Day, false),
            "week" => self.days(monday, monday + 7, Grain::Week, false),
            "weekend" => self.days(monday + 5, monday + 7, Grain::Day, false),
            "month" => {
                let (y, m) = add_months(ry, rm, -back);
                self.month(y, m, false)
            }
            "year" => {
                let y = ry - back;
                self.days(days_from_civil(y, 1, 1), days_from_civil(y + 1, 1, 1), Grain::Year, false)
            }
            _ => return None,
        })
    }

    /// "3", "three", "a", "a couple of", "a few": (the next word, the count).
    fn count_phrase(&self, i: usize) -> Option<(usize, i64)> {
        let i = if self.core(i) == "a" && matches!(self.core(i + 1), "couple" | "few") { i + 1 } else { i };
        let n = match self.core(i) {
            "few" => 3,
            w => count(w)?,
        };
        let of = self.core(i) == "couple" && self.core(i + 1) == "of";
        Some((i + 1 + usize::from(of), i64::from(n)))
    }

    /// Day `dd` of month `m` with no year: in a query the most recent one not
    /// after today, in a record's text the reference year's (as the
    /// extractor reads it).
    fn yearless(&self, m: u32, dd: u32) -> Option<Span> {
        let (ry, _, _) = civil(self.today);
        let day = if self.query {
            // 29 February comes back within eight years.
            (0..=8).filter_map(|back| days(ry - back, m, dd)).find(|&x| x <= self.today)?
        } else {
            days(ry, m, dd)?
        };
        Some(self.days(day, day + 1, Grain::Day, false))
    }
}
