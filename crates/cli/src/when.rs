//! Moments on the command line: `--as-of` takes a date (RFC 3339) or an age (`90m`, `1h30m`,
//! `2d`), and dates are printed in RFC 3339, UTC.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// A moment as milliseconds since the Unix epoch, from an RFC 3339 date
/// (`2026-11-28T12:00:00Z`, any offset; to the second, the end of that second) or an age
/// before now: numbers each followed by `s`,
/// `m`, `h` or `d` (`45s`, `90m`, `1h30m`, `2d`).
pub fn parse_when(s: &str) -> Result<u64, String> {
    if let Ok(t) = OffsetDateTime::parse(s, &Rfc3339) {
        // A date to the second (as `show` prints them) means that whole second.
        let whole_second = if t.nanosecond() == 0 { 999 } else { 0 };
        let ms = t.unix_timestamp_nanos() / 1_000_000 + whole_second;
        return u64::try_from(ms).map_err(|_| format!("{s}: before 1970"));
    }
    let age = parse_age(s).ok_or_else(|| {
        format!("{s:?}: give a date (2026-11-28T12:00:00Z) or an age (45s, 90m, 1h30m, 2d)")
    })?;
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    Ok(now.saturating_sub(age).as_millis() as u64)
}

fn parse_age(s: &str) -> Option<Duration> {
    let mut total = 0u64;
    let mut digits = String::new();
    for c in s.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let n: u64 = digits.parse().ok()?;
        digits.clear();
        let unit = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            _ => return None,
        };
        total = total.checked_add(n.checked_mul(unit)?)?;
    }
    digits.is_empty().then_some(Duration::from_secs(total)).filter(|_| !s.is_empty())
}

/// `ms` since the Unix epoch as an RFC 3339 date in UTC, to the second.
pub fn show(ms: u64) -> String {
    let t = i128::from(ms / 1000) * 1_000_000_000;
    OffsetDateTime::from_unix_timestamp_nanos(t)
        .ok()
        .and_then(|t| t.format(&Rfc3339).ok())
        .unwrap_or_else(|| format!("{ms} ms after 1970"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_ages() {
        assert_eq!(parse_when("2026-11-28T12:00:00Z"), Ok(1_795_867_200_999));
        assert_eq!(parse_when("2026-11-28T13:00:00+01:00"), Ok(1_795_867_200_999));
        assert_eq!(parse_when("2026-11-28T12:00:00.250Z"), Ok(1_795_867_200_250));
        assert_eq!(show(1_795_867_200_999), "2026-11-28T12:00:00Z");
        assert_eq!(parse_age("1h30m"), Some(Duration::from_secs(5400)));
        assert_eq!(parse_age("2d"), Some(Duration::from_secs(172_800)));
        for bad in ["", "5", "h", "1x", "1h5", "-1h", "1.5h"] {
            assert!(parse_age(bad).is_none(), "{bad:?}");
        }
        let now = parse_when("0s").unwrap();
        let hour_ago = parse_when("1h").unwrap();
        assert!((3_599_000..=3_601_000).contains(&(now - hour_ago)), "{}", now - hour_ago);
        assert!(parse_when("yesterday").is_err());
    }
}
