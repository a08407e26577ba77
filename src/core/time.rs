//! Timestamps: the core has no clock. Callers pass `now_ms` (milliseconds since
//! the Unix epoch, UTC) into every call that needs it, which keeps `apply`
//! deterministic and replayable.
//!
//! At the HTTP boundary timestamps are RFC 3339 strings, as Agent Memory
//! Server sends them; this module converts both ways without a date crate.

use crate::core::error::{Error, Result};

/// Milliseconds since 1970-01-01T00:00:00Z.
pub type Millis = u64;

/// Latest instant we accept: 9999-12-31T23:59:59.999Z.
pub const MILLIS_MAX: Millis = 253_402_300_799_999;

/// Formats `ms` as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub fn format_rfc3339(ms: Millis) -> String {
    let ms = ms.min(MILLIS_MAX);
    let days = (ms / 86_400_000) as i64;
    let rem = ms % 86_400_000;
    let (y, m, d) = civil_from_days(days);
    let (hh, mm, ss, milli) = (rem / 3_600_000, rem / 60_000 % 60, rem / 1000 % 60, rem % 1000);
    format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}.{milli:03}Z")
}

/// Parses an RFC 3339 / ISO 8601 date-time with a `Z` or `±HH:MM` offset, or
/// no offset (taken as UTC, as Python's `datetime.isoformat()` emits for naive
/// values). Fractions past milliseconds are truncated.
pub fn parse_rfc3339(field: &str, s: &str) -> Result<Millis> {
    let bad = |why: &str| Error::invalid(field, format!("{why}: {s:?} is not an RFC 3339 date-time"));
    let b = s.as_bytes();
    if b.len() < 19 || b.len() > 40 {
        return Err(bad("bad length"));
    }
    let num = |r: std::ops::Range<usize>| -> Result<u32> {
        let part = &b[r];
        if !part.iter().all(u8::is_ascii_digit) {
            return Err(bad("expected digits"));
        }
        Ok(part.iter().fold(0u32, |acc, d| acc * 10 + u32::from(d - b'0')))
    };
    if b[4] != b'-' || b[7] != b'-' || !(b[10] == b'T' || b[10] == b't' || b[10] == b' ') || b[13] != b':' || b[16] != b':' {
        return Err(bad("bad separators"));
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, se) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || d == 0 || d > days_in_month(i64::from(y), mo) || h > 23 || mi > 59 || se > 60 {
        return Err(bad("field out of range"));
    }
    let mut i = 19;
    let mut milli = 0u32;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            if i - start < 3 {
                milli = milli * 10 + u32::from(b[i] - b'0');
            }
            i += 1;
        }
        let digits = i - start;
        if digits == 0 {
            return Err(bad("empty fraction"));
        }
        for _ in digits..3 {
            milli *= 10;
        }
    }
    let offset_minutes: i64 = if i == b.len() {
        0
    } else if b[i] == b'Z' || b[i] == b'z' {
        if i + 1 != b.len() {
            return Err(bad("trailing characters"));
        }
        0
    } else if (b[i] == b'+' || b[i] == b'-') && b.len() == i + 6 && b[i + 3] == b':' {
        let sign = if b[i] == b'-' { -1 } else { 1 };
        let (oh, om) = (num(i + 1..i + 3)?, num(i + 4..i + 6)?);
        if oh > 23 || om > 59 {
            return Err(bad("offset out of range"));
        }
        sign * (i64::from(oh) * 60 + i64::from(om))
    } else {
        return Err(bad("bad offset"));
    };
    let days = days_from_civil(i64::from(y), mo, d);
    let secs = days * 86_400 + i64::from(h) * 3600 + i64::from(mi) * 60 + i64::from(se.min(59)) - offset_minutes * 60;
    let ms = secs * 1000 + i64::from(milli);
    if ms < 0 || ms as u64 > MILLIS_MAX {
        return Err(bad("before 1970 or after 9999"));
    }
    Ok(ms as u64)
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

/// Days in month `m` (1 to 12) of year `y`, proleptic Gregorian.
pub(crate) fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

// Howard Hinnant's days_from_civil / civil_from_days: exact for the proleptic
// Gregorian calendar, no tables.
/// Days since 1970-01-01 of a civil date (not checked: see [`days_in_month`]).
pub(crate) fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date `(year, month, day)` of a day number since 1970-01-01.
pub(crate) fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_instants() {
        assert_eq!(format_rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_rfc3339(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(format_rfc3339(1_795_000_000_123), "2026-11-18T11:06:40.123Z");
        assert_eq!(format_rfc3339(MILLIS_MAX), "9999-12-31T23:59:59.999Z");
    }

    #[test]
    fn parse_accepts_python_and_js_forms() {
        let want = 1_795_000_000_123;
        for s in [
            "2026-11-18T11:06:40.123Z",
            "2026-11-18T11:06:40.123456",
            "2026-11-18T11:06:40.123456+00:00",
            "2026-11-18T13:06:40.123+02:00",
            "2026-11-18 11:06:40.123Z",
        ] {
            assert_eq!(parse_rfc3339("t", s).unwrap(), want, "{s}");
        }
        assert_eq!(parse_rfc3339("t", "2026-11-18T11:06:40").unwrap(), want - 123);
    }

    #[test]
    fn round_trip_every_day_boundary() {
        let mut ms = 0u64;
        while ms < MILLIS_MAX {
            assert_eq!(parse_rfc3339("t", &format_rfc3339(ms)).unwrap(), ms);
            ms += 86_400_000 * 37 + 3_600_007;
        }
    }

    #[test]
    fn parse_rejects_garbage_without_panicking() {
        for s in [
            "", "2026", "2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z", "2026-01-01T24:00:00Z",
            "2026-01-01T00:00:00.Z", "2026-01-01T00:00:00+1:00", "1969-12-31T23:59:59Z",
            "2026-01-01T00:00:00Zjunk", "２０２６-01-01T00:00:00Z", "2026-01-01T00:00:00+99:00",
        ] {
            let err = parse_rfc3339("created_at", s).unwrap_err();
            assert_eq!(err.code(), "invalid_input", "{s}");
        }
    }
}
