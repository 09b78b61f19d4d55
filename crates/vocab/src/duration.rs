//! Human durations such as `90s`, `10m`, `1h30m`: workflow timeouts and
//! limits, `defer` times in agent operations, and ages on the task board.

use std::time::Duration;

/// Parses `30s`, `10m`, `2h`, `1h30m`, `500ms` or a bare number of seconds.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("empty duration".into());
    }
    if let Ok(secs) = text.parse::<u64>() {
        return Ok(Duration::from_secs(secs));
    }
    let mut total = Duration::ZERO;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest.chars().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 {
            return Err(format!("'{text}' is not a duration like 30s, 10m or 1h30m"));
        }
        let number: u64 = rest[..digits]
            .parse()
            .map_err(|_| format!("'{text}' is too large"))?;
        let too_large = || format!("'{text}' is too large");
        rest = &rest[digits..];
        let unit_len = rest.chars().take_while(|c| c.is_ascii_alphabetic()).count();
        let unit = &rest[..unit_len];
        rest = &rest[unit_len..];
        let seconds = |factor: u64| {
            number
                .checked_mul(factor)
                .map(Duration::from_secs)
                .ok_or_else(too_large)
        };
        let part = match unit.to_ascii_lowercase().as_str() {
            "ms" => Duration::from_millis(number),
            "s" => seconds(1)?,
            "m" => seconds(60)?,
            "h" => seconds(3600)?,
            "d" => seconds(86_400)?,
            _ => return Err(format!("'{text}' is not a duration like 30s, 10m or 1h30m")),
        };
        total = total.checked_add(part).ok_or_else(too_large)?;
    }
    Ok(total)
}

/// `90s`, `10m`, `1h30m`, `500ms`: a duration as a person writes it
/// (timeouts in messages).
pub fn human(d: Duration) -> String {
    let secs = d.as_secs();
    if secs == 0 {
        return format!("{}ms", d.as_millis());
    }
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    let mut out = String::new();
    if h > 0 {
        out.push_str(&format!("{h}h"));
    }
    if m > 0 {
        out.push_str(&format!("{m}m"));
    }
    if s > 0 || out.is_empty() {
        out.push_str(&format!("{s}s"));
    }
    out
}

/// How long ago `since` was at `now`, in a few characters: `12s`, `5m`,
/// `3h`, `2d` (a time in the future is `0s`).
pub fn age(since: chrono::DateTime<chrono::Utc>, now: chrono::DateTime<chrono::Utc>) -> String {
    let s = now.signed_duration_since(since).num_seconds().max(0);
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m", s / 60),
        3600..86400 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_stay_short() {
        let t0 = chrono::DateTime::from_timestamp(1_000_000, 0).unwrap();
        let at = |s: i64| t0 + chrono::Duration::seconds(s);
        assert_eq!(age(t0, at(-5)), "0s");
        assert_eq!(age(t0, at(59)), "59s");
        assert_eq!(age(t0, at(3599)), "59m");
        assert_eq!(age(t0, at(7200)), "2h");
        assert_eq!(age(t0, at(3 * 86400)), "3d");
    }

    #[test]
    fn parses_common_forms() {
        assert_eq!(parse_duration("90").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("10m").unwrap(), Duration::from_secs(600));
        assert_eq!(parse_duration("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert!(parse_duration("ten minutes").is_err());
        assert!(parse_duration("5x").is_err());
        assert!(parse_duration("").is_err());
    }
}
