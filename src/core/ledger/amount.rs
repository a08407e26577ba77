//! Amounts: decimal strings at every boundary, integer minor units inside.
//!
//! An asset has a fixed scale (USDC: 6), so `"12.5"` of USDC is 12,500,000
//! minor units. Inside the ledger every amount is a `u128` of minor units and
//! every sum is checked; parsing and formatting go through `rust_decimal`
//! after a strict grammar check, so nothing is ever rounded.

use rust_decimal::Decimal;

use crate::core::error::{Error, Result};
use crate::core::limits;

/// Minor units of an asset.
pub type Units = u128;

/// Parses a positive decimal string with at most `scale` fraction digits into
/// minor units. Refuses signs, exponents, spaces, underscores, `NaN`, empty
/// parts, zero, and values past [`limits::AMOUNT_DIGITS_MAX`] digits.
pub fn parse_amount(field: &str, s: &str, scale: u32) -> Result<Units> {
    let bad = |why: &str| Error::invalid(field, format!("{s:?} {why}"));
    if s.len() > limits::AMOUNT_DIGITS_MAX + 1 {
        return Err(bad("has too many digits"));
    }
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    if int.is_empty() || !int.bytes().all(|b| b.is_ascii_digit()) || !frac.bytes().all(|b| b.is_ascii_digit()) || s.ends_with('.') {
        return Err(bad("is not a plain decimal string like \"12.50\" (no sign, exponent or spaces)"));
    }
    if frac.len() as u32 > scale {
        return Err(bad(&format!("has more than {scale} decimal places")));
    }
    if int.len() + scale as usize > limits::AMOUNT_DIGITS_MAX {
        return Err(bad("is past the largest amount"));
    }
    // The grammar and the digit limit above leave nothing to round and keep
    // every value far inside u128, so the digits are accumulated directly:
    // the hot path of a transfer batch, with no Decimal in between.
    let mut units: Units = 0;
    for b in int.bytes().chain(frac.bytes()) {
        units = units * 10 + Units::from(b - b'0');
    }
    units *= (10 as Units).pow(scale - frac.len() as u32);
    if units == 0 {
        return Err(bad("must be greater than zero"));
    }
    Ok(units)
}

/// Formats minor units with exactly `scale` fraction digits.
pub fn format_units(units: Units, scale: u32) -> String {
    format_signed(units as i128, scale)
}

/// Formats a signed balance with exactly `scale` fraction digits.
pub fn format_signed(units: i128, scale: u32) -> String {
    match Decimal::try_from_i128_with_scale(units, scale) {
        Ok(d) => d.to_string(),
        // Past rust_decimal's 96-bit range: format the integer by hand.
        Err(_) => {
            let neg = units < 0;
            let digits = units.unsigned_abs().to_string();
            let scale = scale as usize;
            let padded = format!("{digits:0>width$}", width = scale + 1);
            let (i, f) = padded.split_at(padded.len() - scale);
            let sign = if neg { "-" } else { "" };
            if scale == 0 { format!("{sign}{i}") } else { format!("{sign}{i}.{f}") }
        }
    }
}

/// Parses a signed balance (`"-12.50"`, `"0"`) at `scale`, for statements.
pub fn parse_balance(field: &str, s: &str, scale: u32) -> Result<i128> {
    let (neg, digits) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    if digits.bytes().all(|b| b == b'0' || b == b'.') && digits.starts_with('0') && !digits.ends_with('.') && digits.matches('.').count() <= 1 {
        let frac = digits.split_once('.').map_or(0, |(_, f)| f.len());
        if frac as u32 <= scale {
            return Ok(0);
        }
    }
    let units = parse_amount(field, digits, scale)? as i128;
    Ok(if neg { -units } else { units })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_exactly() {
        assert_eq!(parse_amount("a", "12.5", 6).unwrap(), 12_500_000);
        assert_eq!(parse_amount("a", "0.000001", 6).unwrap(), 1);
        assert_eq!(parse_amount("a", "100", 0).unwrap(), 100);
        assert_eq!(parse_amount("a", "007.10", 2).unwrap(), 710);
        assert_eq!(parse_amount("a", "9999999999999999999999.999999", 6).unwrap(), 9_999_999_999_999_999_999_999_999_999);
    }

    #[test]
    fn refuses_everything_else() {
        for s in [
            "", "-1", "+1", "1e3", "1E3", "NaN", "nan", "inf", "Infinity", " 1", "1 ", "1_000", "1,5", ".5", "5.", "0", "0.000",
            "0.0000001", "1.2.3", "0x10", "١٢", "12.5\n",
        ] {
            assert_eq!(parse_amount("amount", s, 6).unwrap_err().code(), "invalid_input", "{s:?}");
        }
        let huge = "9".repeat(limits::AMOUNT_DIGITS_MAX);
        assert!(parse_amount("amount", &huge, 6).is_err());
        assert!(parse_amount("amount", &"9".repeat(limits::AMOUNT_DIGITS_MAX - 6), 6).is_ok());
    }

    #[test]
    fn balances_may_be_zero_or_negative() {
        assert_eq!(parse_balance("b", "-12.5", 2).unwrap(), -1250);
        assert_eq!(parse_balance("b", "0", 2).unwrap(), 0);
        assert_eq!(parse_balance("b", "0.00", 2).unwrap(), 0);
        assert_eq!(parse_balance("b", "7", 0).unwrap(), 7);
        for bad in ["", "-", "--1", "0.000", "+1", "-0.", "1e2", "0..0"] {
            assert!(parse_balance("b", bad, 2).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn formats_at_scale() {
        assert_eq!(format_units(12_500_000, 6), "12.500000");
        assert_eq!(format_units(5, 2), "0.05");
        assert_eq!(format_signed(-5, 2), "-0.05");
        assert_eq!(format_units(42, 0), "42");
        let big: Units = 10u128.pow(35) + 7;
        assert_eq!(format_units(big, 6), "100000000000000000000000000000.000007");
        assert_eq!(parse_amount("a", &format_units(big, 6), 6).unwrap_err().code(), "invalid_input", "past the limit: refused");
    }
}
