//! Times as exports write them: RFC 3339 in JSON, and RFC 1123 as Go prints it in tables
//! (`Mon, 22 Aug 2022 06:36:15 UTC`, with a zone abbreviation or a numeric offset).

use chrono::{DateTime, FixedOffset, NaiveDateTime, TimeZone, Utc};

/// Zone abbreviations Go prints for the locations metal-stack runs in, with their UTC offsets
/// in minutes. Ambiguous ones (IST, CST) take the meaning listed here.
pub const ZONES: [(&str, i32); 28] = [
    ("UTC", 0),
    ("GMT", 0),
    ("Z", 0),
    ("WET", 0),
    ("WEST", 60),
    ("BST", 60),
    ("IST", 60),
    ("CET", 60),
    ("CEST", 120),
    ("MET", 60),
    ("MEST", 120),
    ("EET", 120),
    ("EEST", 180),
    ("MSK", 180),
    ("EST", -300),
    ("EDT", -240),
    ("CST", -360),
    ("CDT", -300),
    ("MST", -420),
    ("MDT", -360),
    ("PST", -480),
    ("PDT", -420),
    ("HST", -600),
    ("JST", 540),
    ("KST", 540),
    ("HKT", 480),
    ("AEST", 600),
    ("AEDT", 660),
];

/// Parses an RFC 3339 time, with or without fractions, `Z` or an offset.
pub fn parse_rfc3339(text: &str) -> Result<DateTime<Utc>, String> {
    let text = crate::event::trim_space(text);
    if let Some(t) = fast_rfc3339(text) {
        return Ok(t);
    }
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|err| format!("invalid RFC 3339 time {text:?}: {err}"))
}

/// `2025-09-16T04:21:54.123Z`, the one shape metal-api writes, without a general parser (a
/// replay reads one per event). `None` sends anything else to chrono, which also explains
/// what is wrong.
fn fast_rfc3339(text: &str) -> Option<DateTime<Utc>> {
    let b = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| -> Option<u32> {
        b.get(range)?.iter().try_fold(0u32, |n, &c| {
            c.is_ascii_digit().then(|| n * 10 + u32::from(c - b'0'))
        })
    };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' {
        return None;
    }
    if b[16] != b':' || *b.last()? != b'Z' {
        return None;
    }
    let date = day(b[..10].try_into().ok()?, || {
        chrono::NaiveDate::from_ymd_opt(digits(0..4)? as i32, digits(5..7)?, digits(8..10)?)
    })?;
    let (hour, minute, second) = (digits(11..13)?, digits(14..16)?, digits(17..19)?);
    // A fraction of one to nine digits; RFC 3339 allows more, which chrono reads.
    let fraction = &b[19..b.len() - 1];
    let nanos = match fraction {
        [] => 0,
        [b'.', rest @ ..] if (1..=9).contains(&rest.len()) => {
            digits(20..20 + rest.len())? * 10u32.pow(9 - rest.len() as u32)
        }
        _ => return None,
    };
    // A leap second (60) is chrono's to place.
    if second > 59 {
        return None;
    }
    Some(
        date.and_hms_nano_opt(hour, minute, second, nanos)?
            .and_utc(),
    )
}

thread_local! {
    /// The last date read on this thread: a machine's events mostly share their day, and
    /// making a date from its digits is most of reading a time.
    static LAST_DAY: std::cell::Cell<Option<([u8; 10], chrono::NaiveDate)>> =
        const { std::cell::Cell::new(None) };
}

/// The date written `text` (`2025-09-16`), made by `make` unless it is the last one read.
#[inline]
fn day(
    text: [u8; 10],
    make: impl FnOnce() -> Option<chrono::NaiveDate>,
) -> Option<chrono::NaiveDate> {
    if let Some((last, date)) = LAST_DAY.get()
        && last == text
    {
        return Some(date);
    }
    let date = make()?;
    LAST_DAY.set(Some((text, date)));
    Some(date)
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// `22 Aug 2022 06:36:15` without a format string: tables parse one per row. `None` sends the
/// text to chrono's parser, which also explains what is wrong.
fn fast_naive(local: &str) -> Option<NaiveDateTime> {
    // Digits only, of the lengths Go prints: no signs, no extra fields.
    fn number(text: &str, lengths: std::ops::RangeInclusive<usize>) -> Option<u32> {
        (lengths.contains(&text.len()) && text.bytes().all(|c| c.is_ascii_digit()))
            .then(|| text.parse().ok())
            .flatten()
    }
    let mut parts = local.split(' ');
    let day = number(parts.next()?, 1..=2)?;
    let month_name = parts.next()?;
    let month = MONTHS
        .iter()
        .position(|m| m.eq_ignore_ascii_case(month_name))? as u32
        + 1;
    let year = number(parts.next()?, 4..=4)? as i32;
    let clock = parts.next()?;
    if parts.next().is_some() {
        return None;
    }
    let (hms, fraction) = match clock.split_once('.') {
        Some((hms, f))
            if !f.is_empty() && f.len() <= 9 && f.bytes().all(|c| c.is_ascii_digit()) =>
        {
            (hms, f)
        }
        Some(_) => return None,
        None => (clock, ""),
    };
    let mut hms = hms.split(':');
    let hour = number(hms.next()?, 1..=2)?;
    let minute = number(hms.next()?, 2..=2)?;
    let second = number(hms.next()?, 2..=2)?;
    if hms.next().is_some() {
        return None;
    }
    let nanos: u32 = if fraction.is_empty() {
        0
    } else {
        fraction.parse::<u32>().ok()? * 10u32.pow(9 - fraction.len() as u32)
    };
    chrono::NaiveDate::from_ymd_opt(year, month, day)?.and_hms_nano_opt(hour, minute, second, nanos)
}

/// A zone abbreviation the user resolved with `--tz NAME=OFFSET`, offset in minutes.
pub type ExtraZone = (String, i32);

/// Parses `--tz`'s `NAME=OFFSET`, e.g. `IST=+0530`.
pub fn parse_zone_arg(text: &str) -> Result<ExtraZone, String> {
    let (name, offset) = text
        .split_once('=')
        .ok_or_else(|| format!("expected NAME=OFFSET such as IST=+0530, found {text:?}"))?;
    let minutes = numeric_offset(offset.trim())
        .ok_or_else(|| format!("expected an offset such as +0530 or -0700, found {offset:?}"))?;
    Ok((name.trim().to_string(), minutes))
}

/// Parses `Mon, 22 Aug 2022 06:36:15 UTC` (or `+0200`) as Go's RFC 1123 layouts print it;
/// `extra` zones (from `--tz`) come before the built-in table.
pub fn parse_rfc1123(text: &str, extra: &[ExtraZone]) -> Result<DateTime<Utc>, String> {
    let text = text.trim();
    let without_weekday = match text.split_once(", ") {
        Some((_, rest)) => rest,
        None => text,
    };
    let Some((local, zone)) = without_weekday.rsplit_once(' ') else {
        return Err(format!("invalid RFC 1123 time {text:?}"));
    };
    let naive = match fast_naive(local) {
        Some(naive) => naive,
        None => NaiveDateTime::parse_from_str(local, "%d %b %Y %H:%M:%S%.f")
            .map_err(|err| format!("invalid RFC 1123 time {text:?}: {err}"))?,
    };
    let offset_minutes = zone_minutes(zone, extra).ok_or_else(|| {
        format!(
            "unknown time zone {zone:?} in {text:?}; known: {}; resolve others with --tz {zone}=+HHMM",
            zone_list()
        )
    })?;
    let offset = FixedOffset::east_opt(offset_minutes * 60)
        .ok_or_else(|| format!("time zone offset out of range in {text:?}"))?;
    offset
        .from_local_datetime(&naive)
        .single()
        .map(|t| t.with_timezone(&Utc))
        .ok_or_else(|| format!("invalid local time {text:?}"))
}

/// A zone's offset in minutes: the user's `--tz` zones first, then a numeric offset, then
/// the built-in table.
fn zone_minutes(zone: &str, extra: &[ExtraZone]) -> Option<i32> {
    extra
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(zone))
        .map(|(_, offset)| *offset)
        .or_else(|| zone_offset(zone))
}

/// metalctl's own time at the start of a row, Go's `time.RFC1123` (`Mon, 02 Jan 2006
/// 15:04:05 MST`, every field of fixed width), read at fixed offsets with its length: the
/// table rows' fast path. `None` for any other shape and wherever `parse_rfc1123` would not
/// read it the plain way; where it answers, `time_prefix_len` and `parse_rfc1123` answer
/// the same.
pub(crate) fn fixed_rfc1123(line: &str, extra: &[ExtraZone]) -> Option<(DateTime<Utc>, usize)> {
    let b = line.as_bytes();
    if b.len() < 27
        || !b[..3].iter().all(u8::is_ascii_alphabetic)
        || &b[3..5] != b", "
        || b[7] != b' '
        || b[11] != b' '
        || b[16] != b' '
        || b[19] != b':'
        || b[22] != b':'
        || b[25] != b' '
    {
        return None;
    }
    let digits = |range: std::ops::Range<usize>| b[range].iter().all(u8::is_ascii_digit);
    let fields = digits(5..7) && digits(12..16) && digits(17..19) && digits(20..22);
    if !(fields && digits(23..25) && b[8..11].iter().all(u8::is_ascii_alphabetic)) {
        return None;
    }
    // The zone's end as `rfc1123_prefix_len` finds it: `+HH`, `+HHMM`, or one to five letters.
    let end = if matches!(b[26], b'+' | b'-') {
        match b[27..].iter().take_while(|c| c.is_ascii_digit()).count() {
            n @ (2 | 4) => 27 + n,
            _ => return None,
        }
    } else {
        match b[26..]
            .iter()
            .take_while(|c| c.is_ascii_alphabetic())
            .count()
        {
            n @ 1..=5 => 26 + n,
            _ => return None,
        }
    };
    let two = |i: usize| u32::from(b[i] - b'0') * 10 + u32::from(b[i + 1] - b'0');
    let date = fixed_day(b[5..16].try_into().ok()?, || {
        let month = MONTHS
            .iter()
            .position(|m| m.as_bytes().eq_ignore_ascii_case(&b[8..11]))? as u32
            + 1;
        let year = two(12) * 100 + two(14);
        chrono::NaiveDate::from_ymd_opt(year as i32, month, two(5))
    })?;
    let naive = date.and_hms_opt(two(17), two(20), two(23))?;
    let offset = FixedOffset::east_opt(zone_minutes(&line[26..end], extra)? * 60)?;
    let time = offset.from_local_datetime(&naive).single()?;
    Some((time.with_timezone(&Utc), end))
}

thread_local! {
    /// The last date a table row's fast path read on this thread, as written (`22 Aug
    /// 2022`): a machine's rows mostly share their day.
    static LAST_FIXED_DAY: std::cell::Cell<Option<([u8; 11], chrono::NaiveDate)>> =
        const { std::cell::Cell::new(None) };
}

/// The date written `text`, made by `make` unless it is the last one read.
#[inline]
fn fixed_day(
    text: [u8; 11],
    make: impl FnOnce() -> Option<chrono::NaiveDate>,
) -> Option<chrono::NaiveDate> {
    if let Some((last, date)) = LAST_FIXED_DAY.get()
        && last == text
    {
        return Some(date);
    }
    let date = make()?;
    LAST_FIXED_DAY.set(Some((text, date)));
    Some(date)
}

/// `+0200`, `-0700`, or `+03` as Go prints a zone that has no abbreviation.
fn numeric_offset(zone: &str) -> Option<i32> {
    let bytes = zone.as_bytes();
    let sign = match bytes.first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let digits = &bytes[1..];
    if !(digits.len() == 2 || digits.len() == 4) || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let number = |d: &[u8]| i32::from(d[0] - b'0') * 10 + i32::from(d[1] - b'0');
    let hours = number(&digits[..2]);
    let minutes = if digits.len() == 4 {
        number(&digits[2..])
    } else {
        0
    };
    (minutes < 60).then_some(sign * (hours * 60 + minutes))
}

fn zone_offset(zone: &str) -> Option<i32> {
    if let Some(minutes) = numeric_offset(zone) {
        return Some(minutes);
    }
    ZONES
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(zone))
        .map(|(_, offset)| *offset)
}

fn zone_list() -> String {
    ZONES.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
}

/// The length of the time a row starts with: RFC 3339 (`2020-09-17T07:29:22.780Z`) or RFC
/// 1123 as Go prints it.
pub(crate) fn time_prefix_len(line: &str) -> Option<usize> {
    rfc3339_prefix_len(line).or_else(|| rfc1123_prefix_len(line))
}

/// `2020-09-17T07:29:22.780Z` or with an offset, checked by hand (it runs for every row).
pub(crate) fn rfc3339_prefix_len(line: &str) -> Option<usize> {
    let b = line.as_bytes();
    let digits = |from: usize, n: usize| {
        b.get(from..from + n)
            .is_some_and(|s| s.iter().all(u8::is_ascii_digit))
    };
    let at = |i: usize, c: u8| b.get(i) == Some(&c);
    if !(digits(0, 4) && at(4, b'-') && digits(5, 2) && at(7, b'-') && digits(8, 2)) {
        return None;
    }
    if !(matches!(b.get(10), Some(b'T' | b't'))
        && digits(11, 2)
        && at(13, b':')
        && digits(14, 2)
        && at(16, b':')
        && digits(17, 2))
    {
        return None;
    }
    let mut i = 19;
    if at(i, b'.') {
        let fraction = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if fraction == 0 {
            return None;
        }
        i += 1 + fraction;
    }
    match b.get(i) {
        Some(b'Z' | b'z') => Some(i + 1),
        Some(b'+' | b'-') if digits(i + 1, 2) && at(i + 3, b':') && digits(i + 4, 2) => Some(i + 6),
        _ => None,
    }
}

/// The length of the RFC 1123 time a row starts with, as Go prints it:
/// `Mon, 22 Aug 2022 06:36:15 UTC` (weekday optional, fractions allowed, the zone an
/// abbreviation or `-0700` / `+03`). Checked by hand: this runs for every row of a table.
fn rfc1123_prefix_len(line: &str) -> Option<usize> {
    let b = line.as_bytes();
    let mut i = 0;
    let alpha = |i: usize, n: usize| {
        b.get(i..i + n)
            .is_some_and(|s| s.iter().all(u8::is_ascii_alphabetic))
    };
    let digits = |i: usize| {
        b[i.min(b.len())..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count()
    };
    let byte = |i: usize, c: u8| b.get(i) == Some(&c);
    if alpha(0, 3) && byte(3, b',') && byte(4, b' ') {
        i = 5;
    }
    let day = digits(i);
    if !(1..=2).contains(&day) || !byte(i + day, b' ') {
        return None;
    }
    i += day + 1;
    if !alpha(i, 3) || !byte(i + 3, b' ') {
        return None;
    }
    i += 4;
    if digits(i) != 4 || !byte(i + 4, b' ') {
        return None;
    }
    i += 5;
    let hour = digits(i);
    if !(1..=2).contains(&hour) || !byte(i + hour, b':') {
        return None;
    }
    i += hour + 1;
    if digits(i) != 2 || !byte(i + 2, b':') || digits(i + 3) != 2 {
        return None;
    }
    i += 5;
    if byte(i, b'.') {
        let fraction = digits(i + 1);
        if fraction == 0 {
            return None;
        }
        i += 1 + fraction;
    }
    if !byte(i, b' ') {
        return None;
    }
    i += 1;
    let zone = if matches!(b.get(i), Some(b'+' | b'-')) {
        match digits(i + 1) {
            n @ (2 | 4) => n + 1,
            _ => return None,
        }
    } else {
        let n = b[i.min(b.len())..]
            .iter()
            .take_while(|c| c.is_ascii_alphabetic())
            .count();
        if !(1..=5).contains(&n) {
            return None;
        }
        n
    };
    Some(i + zone)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metalctls_fixed_time_reads_as_the_careful_path_reads_it() {
        let extra = [("XST".to_string(), 330)];
        let mut read = 0;
        for day in ["01", "28", "29", "30", "31", "00", "32"] {
            for month in ["Jan", "feb", "Sep", "Dec", "Foo"] {
                for clock in ["00:00:00", "23:59:59", "24:00:00", "12:60:00", "23:59:60"] {
                    for zone in ["UTC", "cest", "XST", "+0130", "-07", "+1", "ABC", "ABCDEF"] {
                        let line = format!("Tue, {day} {month} 2024 {clock} {zone}  Waiting");
                        let Some((time, end)) = fixed_rfc1123(&line, &extra) else {
                            continue;
                        };
                        read += 1;
                        assert_eq!(time_prefix_len(&line), Some(end), "{line}");
                        assert_eq!(parse_rfc1123(&line[..end], &extra), Ok(time), "{line}");
                    }
                }
            }
        }
        assert!(read > 50, "only {read} read");
        assert_eq!(fixed_rfc1123("Mon, 22 Aug 2022 06:36:15.5 UTC", &[]), None);
        assert_eq!(fixed_rfc1123("Mon, 2 Aug 2022 06:36:15 UTC", &[]), None);
    }

    #[test]
    fn the_fast_rfc3339_path_reads_as_chrono_reads() {
        for text in [
            "2025-09-16T04:21:54Z",
            "2025-09-16T04:21:54.1Z",
            "2025-09-16T04:21:54.123Z",
            "2025-09-16T04:21:54.123456789Z",
            "2024-02-29T23:59:59.999999Z",
            "0001-01-01T00:00:00Z",
        ] {
            let chrono = DateTime::parse_from_rfc3339(text)
                .unwrap()
                .with_timezone(&Utc);
            assert_eq!(fast_rfc3339(text), Some(chrono), "{text}");
        }
        for text in [
            "2025-02-30T04:21:54Z",
            "2025-09-16T24:00:00Z",
            "2025-09-16T04:21:60Z",
            "2025-09-16T04:21:54.Z",
            "2025-09-16T04:21:54.1234567891Z",
            "2025-09-16t04:21:54Z",
            "2025-09-16T04:21:54+02:00",
            "2025-9-16T04:21:54Z",
            "+025-09-16T04:21:54Z",
            "2025-09-16T04:21:5aZ",
            "2025-09-16T04:21:54.1a3Z",
            "2025-09-16T04:21:54/1Z",
            "2025-13-16T04:21:54Z",
        ] {
            assert_eq!(fast_rfc3339(text), None, "{text}");
        }
        // What the fast path leaves, chrono still reads.
        assert_eq!(
            parse_rfc3339("2025-09-16T06:21:54+02:00").unwrap(),
            parse_rfc3339("2025-09-16T04:21:54Z").unwrap()
        );
        assert!(parse_rfc3339("2025-02-30T04:21:54Z").is_err());
    }

    #[test]
    fn rfc1123_with_abbreviation_and_offset() {
        let utc = parse_rfc1123("Mon, 22 Aug 2022 06:36:15 UTC", &[]).unwrap();
        assert_eq!(utc.to_rfc3339(), "2022-08-22T06:36:15+00:00");
        let cest = parse_rfc1123("Sun, 21 Sep 2025 16:19:52 CEST", &[]).unwrap();
        assert_eq!(cest.to_rfc3339(), "2025-09-21T14:19:52+00:00");
        let numeric = parse_rfc1123("Mon, 22 Aug 2022 06:36:15 -0130", &[]).unwrap();
        assert_eq!(numeric.to_rfc3339(), "2022-08-22T08:06:15+00:00");
    }

    #[test]
    fn rfc1123_rejects_unknown_zone_and_garbage() {
        assert!(
            parse_rfc1123("Mon, 22 Aug 2022 06:36:15 XYZT", &[])
                .unwrap_err()
                .contains("unknown time zone")
        );
        assert!(parse_rfc1123("yesterday", &[]).is_err());
        assert!(parse_rfc1123("Mon, 32 Aug 2022 06:36:15 UTC", &[]).is_err());
    }

    #[test]
    fn fast_path_agrees_with_chrono() {
        for text in [
            "22 Aug 2022 06:36:15",
            "2 Feb 2024 23:59:59.5",
            "29 Feb 2024 00:00:00.123456789",
        ] {
            let slow = NaiveDateTime::parse_from_str(text, "%d %b %Y %H:%M:%S%.f").unwrap();
            assert_eq!(fast_naive(text), Some(slow), "{text}");
        }
        assert_eq!(fast_naive("30 Feb 2024 00:00:00"), None);
        assert_eq!(fast_naive("22 Foo 2022 06:36:15"), None);
        assert_eq!(fast_naive("22 Aug 2022 06:36:15."), None);
        assert_eq!(fast_naive("22 Aug 2022 21:01:09:99"), None);
        assert_eq!(fast_naive("+2 Aug 2022 21:01:09"), None);
    }

    #[test]
    fn numeric_offsets_need_digits() {
        assert_eq!(numeric_offset("+0530"), Some(330));
        assert_eq!(numeric_offset("-07"), Some(-420));
        assert_eq!(numeric_offset("+-130"), None);
        assert_eq!(numeric_offset("+0575"), None);
        assert_eq!(numeric_offset("0530"), None);
        assert!(parse_rfc1123("Mon, 22 Aug 2022 06:36:15 +-130", &[]).is_err());
        let t = parse_rfc1123("Mon, 22 Aug 2022 06:36:15 +03", &[]).unwrap();
        assert_eq!(t.to_rfc3339(), "2022-08-22T03:36:15+00:00");
    }

    #[test]
    fn tz_argument_resolves_an_unknown_abbreviation() {
        let zone = parse_zone_arg("IST=+0530").unwrap();
        let t = parse_rfc1123("Mon, 22 Aug 2022 06:36:15 IST", &[zone]).unwrap();
        assert_eq!(t.to_rfc3339(), "2022-08-22T01:06:15+00:00");
        assert!(parse_zone_arg("IST").is_err());
        assert!(parse_zone_arg("IST=5:30").is_err());
    }

    #[test]
    fn rfc3339_with_fraction_and_offset() {
        let t = parse_rfc3339("2025-09-22T12:23:48.063Z").unwrap();
        assert_eq!(t.timestamp_subsec_millis(), 63);
        let t = parse_rfc3339("2025-09-22T14:23:48+02:00").unwrap();
        assert_eq!(t.to_rfc3339(), "2025-09-22T12:23:48+00:00");
        assert!(parse_rfc3339("2025-13-22").is_err());
    }
}
