//! How the audit judges: at which instant, with which last-error threshold and after how
//! long a machine counts as stuck; each chosen as the output's reader (metalctl,
//! metal-metrics-exporter) would choose it.

use chrono::{DateTime, TimeDelta, Utc};

use crate::window::NowSpec;

/// How the audit judges.
#[derive(Debug, Clone)]
pub struct Policy {
    pub now: DateTime<Utc>,
    /// A last error younger than this is an issue; zero turns the check off (as in metal-api).
    pub last_error_threshold: TimeDelta,
    /// A machine in a transient state longer than this is stuck.
    pub stuck_after: TimeDelta,
}

/// metal-api's default for how long a last error event stays an issue
/// (`DefaultLastErrorThreshold`, seven days; metalctl's `--last-event-error-threshold` too).
pub const METAL_API_LAST_ERROR_THRESHOLD: TimeDelta = TimeDelta::days(7);

/// The threshold metal-metrics-exporter asks metal-api to judge by (its
/// pkg/collector/collector.go): one hour.
pub const EXPORTER_LAST_ERROR_THRESHOLD: TimeDelta = TimeDelta::hours(1);

/// How long a machine may stay in a state it should pass through before it is stuck, where
/// `--stuck-after` does not say (its default, `1h`).
pub const STUCK_AFTER: TimeDelta = TimeDelta::hours(1);

impl Policy {
    /// The policy metrics are judged by at `now` (the watch's): metal-metrics-exporter's
    /// last-error threshold, stuck after [`STUCK_AFTER`].
    pub fn for_metrics(now: DateTime<Utc>) -> Policy {
        Policy {
            now,
            last_error_threshold: EXPORTER_LAST_ERROR_THRESHOLD,
            stuck_after: STUCK_AFTER,
        }
    }

    /// The policy an audit judges by: at the instant `--now` named (its [`cut`]), else at the
    /// newest event read, else (nothing read) the wall clock; with the last-error threshold
    /// asked for, else the one its output's reader uses. The metrics are
    /// metal-metrics-exporter's, judged as it asks metal-api to judge them
    /// (pkg/collector/collector.go: `LastErrorThreshold: 1 * time.Hour`); every other output
    /// keeps metal-api's own default.
    pub fn at(
        cut: Option<DateTime<Utc>>,
        newest: Option<DateTime<Utc>>,
        for_metrics: bool,
        last_error_threshold: Option<TimeDelta>,
        stuck_after: TimeDelta,
    ) -> Policy {
        let default_threshold = if for_metrics {
            EXPORTER_LAST_ERROR_THRESHOLD
        } else {
            METAL_API_LAST_ERROR_THRESHOLD
        };
        Policy {
            now: cut.or(newest).unwrap_or_else(Utc::now),
            last_error_threshold: last_error_threshold.unwrap_or(default_threshold),
            stuck_after,
        }
    }
}

/// The instant `--now` names, read once before anything is read (the wall clock's for `now`):
/// a machine with newer events is judged as it was then, and the input still counted whole,
/// as `report` counts it; the audit judges at it too. `None` for the data's own clock, known
/// once everything is read.
pub fn cut(now: Option<NowSpec>) -> Option<DateTime<Utc>> {
    match now {
        Some(NowSpec::At(t)) => Some(t),
        Some(NowSpec::Wall) => Some(Utc::now()),
        _ => None,
    }
}
