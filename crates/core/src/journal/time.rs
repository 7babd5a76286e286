//! Millisecond timestamps: JS `toISOString()` form and short human durations. Pure: the clock
//! is read by the caller (`turnscope_store::clock`) and passed in as `now`.

/// `new Date(ms).toISOString()` for years 0000–9999.
pub fn iso_from_ms(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000
    )
}

/// Parse `YYYY-MM-DDTHH:MM:SS.mmmZ` (the only form the runtime writes).
pub fn ms_from_iso(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() != 24
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b'T'
        || b[13] != b':'
        || b[16] != b':'
        || b[19] != b'.'
        || b[23] != b'Z'
    {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = s.get(r)?;
        t.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| t.parse().ok())?
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, se, ms) = (num(11..13)?, num(14..16)?, num(17..19)?, num(20..23)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || se > 59 {
        return None;
    }
    Some(days_from_civil(y, mo, d) * 86_400_000 + h * 3_600_000 + mi * 60_000 + se * 1000 + ms)
}

/// A time an operator types, as ms since the epoch: `2026-12-01`, `2026-12-01T03:12`,
/// `2026-12-01T03:12:04`, `2026-12-01 03:12:04.5`, each optionally ending in `Z` or an offset
/// (`+02:00`, `-0530`); without one it is UTC (the time every turnscope table shows).
pub fn ms_from_typed_time(text: &str) -> Option<i64> {
    let t = text.trim();
    let (date, rest) = match t.find(['T', 't', ' ']) {
        Some(i) => (&t[..i], &t[i + 1..]),
        None => (t, ""),
    };
    if date.len() != 10 {
        return None;
    }
    // The zone: a trailing Z, or a sign after the time (a date-only text has none).
    let (clock, offset_min) = if let Some(c) = rest.strip_suffix(['Z', 'z']) {
        (c, 0)
    } else if let Some(i) = rest.rfind(['+', '-']) {
        let zone = rest[i + 1..].replace(':', "");
        if zone.len() != 4 || !zone.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let (h, m): (i64, i64) = (zone[..2].parse().ok()?, zone[2..].parse().ok()?);
        if h > 23 || m > 59 {
            return None;
        }
        let sign = if rest.as_bytes()[i] == b'-' { -1 } else { 1 };
        (&rest[..i], sign * (h * 60 + m))
    } else {
        (rest, 0)
    };
    let (hms, fraction) = match clock.split_once('.') {
        Some((a, f)) => (a, f),
        None => (clock, ""),
    };
    if !fraction.bytes().all(|b| b.is_ascii_digit()) || fraction.len() > 9 {
        return None;
    }
    let hms = match hms.len() {
        0 if fraction.is_empty() => "00:00:00".to_string(),
        5 if fraction.is_empty() => format!("{hms}:00"),
        8 => hms.to_string(),
        _ => return None,
    };
    let millis = format!("{fraction:0<3}");
    let iso = format!("{date}T{hms}.{}Z", &millis[..3]);
    let ms = ms_from_iso(&iso)?;
    // 2026-02-31 would land in March: refuse a day its month does not have.
    if iso_from_ms(ms)[..10] != *date {
        return None;
    }
    Some(ms - offset_min * 60_000)
}

// Howard Hinnant's civil-date algorithms.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `4m12s`, `2h05m`, `3d04h`, `850ms` for a non-negative duration.
pub fn human_duration(ms: i64) -> String {
    let ms = ms.max(0);
    let s = ms / 1000;
    if ms < 1000 {
        format!("{ms}ms")
    } else if s < 60 {
        format!("{s}s")
    } else if s < 3600 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else if s < 86_400 {
        format!("{}h{:02}m", s / 3600, s / 60 % 60)
    } else {
        format!("{}d{:02}h", s / 86_400, s / 3600 % 24)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_round_trip() {
        assert_eq!(iso_from_ms(1767604364131), "2026-01-05T09:12:44.131Z");
        assert_eq!(ms_from_iso("2026-01-05T09:12:44.131Z"), Some(1767604364131));
        assert_eq!(iso_from_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso_from_ms(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(iso_from_ms(1_796_014_375_640), "2026-11-30T04:52:55.640Z");
        for ms in [951_782_400_000i64, 1_796_014_375_576, 4_102_444_799_999] {
            assert_eq!(ms_from_iso(&iso_from_ms(ms)), Some(ms));
        }
        assert_eq!(ms_from_iso("2026-01-05 09:12:44Z"), None);
    }

    #[test]
    fn typed_times() {
        let at = |t| ms_from_typed_time(t);
        assert_eq!(at("2026-01-05T09:12:44.131Z"), Some(1767604364131));
        assert_eq!(at("2026-01-05 09:12:44.131"), Some(1767604364131));
        assert_eq!(at("2026-01-05T09:12:44"), Some(1767604364000));
        assert_eq!(at("2026-01-05T09:12"), Some(1767604320000));
        assert_eq!(at("2026-01-05"), ms_from_iso("2026-01-05T00:00:00.000Z"));
        assert_eq!(at("2026-01-05T09:12:44.5Z"), Some(1767604364500));
        assert_eq!(at("2026-01-05T11:12:44+02:00"), Some(1767604364000));
        assert_eq!(at("2026-01-05T04:42:44-0430"), Some(1767604364000));
        for bad in [
            "",
            "2026-1-5",
            "2026-02-31",
            "2026-01-05T25:00",
            "2026-01-05T09",
            "2026-01-05T09:12:44+2",
            "2026-01-05T09:12:44.x",
            "yesterday",
        ] {
            assert_eq!(at(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn durations() {
        assert_eq!(human_duration(252_000), "4m12s");
        assert_eq!(human_duration(18_000), "18s");
        assert_eq!(human_duration(7_500_000), "2h05m");
        assert_eq!(human_duration(-5), "0ms");
    }
}
