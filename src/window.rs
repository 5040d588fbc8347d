//! Time windows and periods: which occurrences a view counts (`--since`, `--until`, relative
//! to `--now`), and how trends bucket them (`--by day|week`). Every machine is still replayed
//! in full — a state depends on its history — and only what happened inside the window counts.

use chrono::{DateTime, Datelike, Duration, NaiveDate, TimeDelta, Utc};

use crate::input::time::parse_rfc3339;

/// A point in time as the command line names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeSpec {
    /// RFC 3339, or a date at midnight UTC.
    At(DateTime<Utc>),
    /// This long before `--now`.
    Ago(TimeDelta),
}

/// `--now`: the newest event in the input (the data's own clock), the wall clock, or a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NowSpec {
    #[default]
    Data,
    Wall,
    At(DateTime<Utc>),
}

/// Parses `--since`/`--until`: RFC 3339 (`2025-09-16T04:00:00Z`), a date (`2025-09-16`,
/// midnight UTC), or a duration before `--now` (`7d`, `36h`, `90m`, `30s`, `2w`).
pub fn parse_time_spec(text: &str) -> Result<TimeSpec, String> {
    let text = text.trim();
    if let Some(ago) = parse_duration(text) {
        return Ok(TimeSpec::Ago(ago));
    }
    parse_instant(text).map(TimeSpec::At).map_err(|_| {
        format!("expected RFC 3339, a date like 2025-09-16, or a duration like 7d, 36h or 90m; found {text:?}")
    })
}

/// Parses `--now`: `now` for the wall clock, or a time as `--since` takes it.
pub fn parse_now(text: &str) -> Result<NowSpec, String> {
    if text.trim().eq_ignore_ascii_case("now") {
        return Ok(NowSpec::Wall);
    }
    parse_instant(text.trim())
        .map(NowSpec::At)
        .map_err(|_| format!("expected `now`, RFC 3339 or a date like 2025-09-16; found {text:?}"))
}

fn parse_instant(text: &str) -> Result<DateTime<Utc>, String> {
    if let Ok(date) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        return Ok(date
            .and_hms_opt(0, 0, 0)
            .expect("midnight exists")
            .and_utc());
    }
    parse_rfc3339(text)
}

/// A duration like `7d`, `36h`, `1h30m`, `90m`, `30s` or `2w` (Go's `168h` too); `None` when
/// the text is none.
pub fn parse_duration(text: &str) -> Option<TimeDelta> {
    // humantime also reads a bare number as an error and `1 day`; a date is no duration.
    let parsed = humantime::parse_duration(text).ok()?;
    // Capped far beyond any real window, so no arithmetic on it can overflow.
    let cap = std::time::Duration::from_secs(100 * 365 * 86_400);
    TimeDelta::from_std(parsed.min(cap)).ok()
}

/// The window occurrences are counted in: `since ≤ time < until`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Window {
    pub since: Option<DateTime<Utc>>,
    pub until: Option<DateTime<Utc>>,
}

impl Window {
    /// Whether an occurrence at `time` counts.
    pub fn contains(&self, time: DateTime<Utc>) -> bool {
        self.since.is_none_or(|since| since <= time) && self.until.is_none_or(|until| time < until)
    }

    /// Whether the window lets everything in.
    pub fn is_all(&self) -> bool {
        self.since.is_none() && self.until.is_none()
    }
}

/// The window as the command line asked for it, before `--now` is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WindowSpec {
    pub since: Option<TimeSpec>,
    pub until: Option<TimeSpec>,
    pub now: NowSpec,
}

impl WindowSpec {
    /// Whether resolving needs the newest event of the input first.
    pub fn needs_data_clock(&self) -> bool {
        self.now == NowSpec::Data
            && [self.since, self.until]
                .iter()
                .any(|t| matches!(t, Some(TimeSpec::Ago(_))))
    }

    /// The time `--now` names, given the newest event in the input.
    pub fn now(&self, newest: Option<DateTime<Utc>>) -> Option<DateTime<Utc>> {
        match self.now {
            NowSpec::Data => newest,
            NowSpec::Wall => Some(Utc::now()),
            NowSpec::At(t) => Some(t),
        }
    }

    /// The window, with relative times counted back from `now`.
    pub fn resolve(&self, now: Option<DateTime<Utc>>) -> Window {
        let at = |spec: Option<TimeSpec>| match spec? {
            TimeSpec::At(t) => Some(t),
            // No event at all, so no clock to count back from: there is nothing to count
            // either, and no bound to show.
            TimeSpec::Ago(ago) => now.map(|now| now - ago),
        };
        Window {
            since: at(self.since),
            until: at(self.until),
        }
    }
}

/// The window a view counted in, and the `--now` it was counted back from, as output shows
/// them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Shown {
    pub window: Window,
    pub now: Option<DateTime<Utc>>,
}

/// How trend series bucket occurrences.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Period {
    /// UTC days, `2025-09-16`.
    Day,
    /// ISO weeks, `2025-W38` (Monday to Sunday, UTC).
    Week,
}

impl Period {
    /// The first day of the period `time` falls in.
    pub fn start(self, time: DateTime<Utc>) -> NaiveDate {
        let day = time.date_naive();
        match self {
            Period::Day => day,
            Period::Week => day - Duration::days(day.weekday().num_days_from_monday() as i64),
        }
    }

    /// The period's name: `2025-09-16`, or `2025-W38`.
    pub fn label(self, start: NaiveDate) -> String {
        match self {
            Period::Day => start.format("%Y-%m-%d").to_string(),
            Period::Week => {
                let week = start.iso_week();
                format!("{}-W{:02}", week.year(), week.week())
            }
        }
    }

    /// The start of the next period.
    pub fn next(self, start: NaiveDate) -> NaiveDate {
        start
            + Duration::days(match self {
                Period::Day => 1,
                Period::Week => 7,
            })
    }
}

/// A duration for people: `45s`, `3m20s`, `1h40m`, `2d3h`; the two largest units.
pub fn duration(seconds: f64) -> String {
    if !seconds.is_finite() {
        return "—".to_string();
    }
    let negative = seconds < 0.0;
    let total = seconds.abs();
    let sign = if negative { "-" } else { "" };
    if total < 10.0 && total.fract() != 0.0 {
        return format!("{sign}{total:.1}s");
    }
    let s = total.round() as u64;
    let (d, h, m, sec) = (s / 86_400, s / 3600 % 24, s / 60 % 60, s % 60);
    let text = match (d, h, m) {
        (0, 0, 0) => format!("{sec}s"),
        (0, 0, _) if sec == 0 => format!("{m}m"),
        (0, 0, _) => format!("{m}m{sec}s"),
        (0, _, 0) => format!("{h}h"),
        (0, _, _) => format!("{h}h{m}m"),
        (_, 0, _) => format!("{d}d"),
        _ => format!("{d}d{h}h"),
    };
    format!("{sign}{text}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_like_people_say_them() {
        assert_eq!(duration(42.0), "42s");
        assert_eq!(duration(2.5), "2.5s");
        assert_eq!(duration(200.0), "3m20s");
        assert_eq!(duration(6000.0), "1h40m");
        assert_eq!(duration(3600.0), "1h");
        assert_eq!(duration(183_600.0), "2d3h");
        assert_eq!(duration(-60.0), "-1m");
    }

    fn t(text: &str) -> DateTime<Utc> {
        parse_rfc3339(text).unwrap()
    }

    #[test]
    fn specs_parse_as_times_dates_and_durations() {
        assert_eq!(
            parse_time_spec("2025-09-16"),
            Ok(TimeSpec::At(t("2025-09-16T00:00:00Z")))
        );
        assert_eq!(
            parse_time_spec("2025-09-16T04:00:00+02:00"),
            Ok(TimeSpec::At(t("2025-09-16T02:00:00Z")))
        );
        assert_eq!(
            parse_time_spec("36h"),
            Ok(TimeSpec::Ago(TimeDelta::hours(36)))
        );
        assert_eq!(parse_time_spec("7d"), Ok(TimeSpec::Ago(TimeDelta::days(7))));
        assert_eq!(
            parse_time_spec("90m"),
            Ok(TimeSpec::Ago(TimeDelta::minutes(90)))
        );
        assert_eq!(
            parse_time_spec("1h30m"),
            Ok(TimeSpec::Ago(TimeDelta::minutes(90)))
        );
        assert_eq!(
            parse_time_spec("168h"),
            Ok(TimeSpec::Ago(TimeDelta::days(7)))
        );
        assert_eq!(
            parse_time_spec("2w"),
            Ok(TimeSpec::Ago(TimeDelta::weeks(2)))
        );
        assert!(parse_time_spec("yesterday").is_err());
        assert!(parse_duration("12").is_none(), "a number without a unit");
        assert!(parse_time_spec("99999999999999999999d").is_err());
        assert_eq!(parse_now("now"), Ok(NowSpec::Wall));
    }

    #[test]
    fn the_window_is_half_open() {
        let w = Window {
            since: Some(t("2025-09-16T00:00:00Z")),
            until: Some(t("2025-09-17T00:00:00Z")),
        };
        assert!(w.contains(t("2025-09-16T00:00:00Z")));
        assert!(w.contains(t("2025-09-16T23:59:59.999Z")));
        assert!(!w.contains(t("2025-09-17T00:00:00Z")));
        assert!(!w.contains(t("2025-09-15T23:59:59Z")));
    }

    #[test]
    fn relative_times_count_back_from_now() {
        let spec = WindowSpec {
            since: Some(TimeSpec::Ago(TimeDelta::days(7))),
            until: None,
            now: NowSpec::Data,
        };
        assert!(spec.needs_data_clock());
        let w = spec.resolve(Some(t("2025-09-22T12:00:00Z")));
        assert_eq!(w.since, Some(t("2025-09-15T12:00:00Z")));
    }

    #[test]
    fn iso_weeks() {
        let p = Period::Week;
        let start = p.start(t("2025-09-18T10:00:00Z"));
        assert_eq!(start, NaiveDate::from_ymd_opt(2025, 9, 15).unwrap());
        assert_eq!(p.label(start), "2025-W38");
        assert_eq!(
            Period::Week.label(Period::Week.start(t("2021-01-01T00:00:00Z"))),
            "2020-W53"
        );
    }
}
