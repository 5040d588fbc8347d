//! `fsmlog watch`'s `/metrics` (docs/watch.md): `report -o openmetrics`'s families over the
//! whole history, its occurrence and event counts as counters (the history only grows, so
//! `increase()` is their rate), fsmlog's own issue types per machine, metal-metrics-exporter's
//! issue families only when asked, and the collector's own. Prometheus' text format 0.0.4: no
//! `# EOF`.

use std::io::{self, Write};

use chrono::{DateTime, Utc};

use super::metrics::{Family, fleet, info_rows, issue_family, write_families};
use super::reports::Report;
use crate::issues::{Audited, IssueType};

/// What the collector counted since this process started.
#[derive(Debug, Clone, Default)]
pub struct Collected {
    pub polls_ok: u64,
    pub polls_failed: u64,
    /// The end of the newest poll that was written.
    pub last_good_poll: Option<DateTime<Utc>>,
    /// How long the newest poll took, written or not.
    pub last_poll_seconds: Option<f64>,
    /// Events appended to the history by this process.
    pub events: u64,
    /// How long judging the newest poll's lines took (the history read again, where it was).
    pub last_judge_seconds: Option<f64>,
    /// How long reading the history at start took.
    pub load_seconds: Option<f64>,
}

/// What `/metrics` shows.
pub struct WatchMetrics<'a> {
    /// The report of the whole history.
    pub report: &'a Report<'a>,
    /// Every machine judged at the newest poll.
    pub machines: &'a [Audited],
    /// Whether metal-metrics-exporter's issue families are served too.
    pub exporter_issues: bool,
    pub collected: &'a Collected,
    pub version: &'a str,
}

/// `/metrics`.
pub fn watch_metrics(m: &WatchMetrics, out: &mut dyn Write) -> io::Result<()> {
    let mut families = fleet(m.report);
    for family in &mut families {
        // The history only grows: the whole history's counts are counters.
        match family.name {
            "fsmlog_unexpected_transitions" => {
                family.name = "fsmlog_unexpected_transitions_total";
                family.help = "Occurrences of an event in a state that has no rule for it, over the whole history";
                family.kind = "counter";
            }
            "fsmlog_events" => {
                family.name = "fsmlog_events_total";
                family.help = "Events of the history, by what became of them (they add up to every event read)";
                family.kind = "counter";
            }
            _ => {}
        }
    }
    let own: Vec<IssueType> = IssueType::ALL
        .into_iter()
        .filter(|k| !k.metal_api())
        .collect();
    families.push(issue_family(
        Family::new(
            "fsmlog_machine_issues",
            "Whether the machine has the issue (1) or not (0), of fsmlog's own issue types",
        ),
        m.machines,
        &own,
    ));
    families.push(info_rows(
        Family::new(
            "fsmlog_machine_issues_info",
            "fsmlog's own issue types: their severity, description and reference",
        ),
        &own,
    ));
    if m.exporter_issues {
        let metal_api: Vec<IssueType> = IssueType::ALL
            .into_iter()
            .filter(|k| k.metal_api())
            .collect();
        families.push(issue_family(
            Family::new(
                "metal_machine_issues",
                "Provide information on machine issues",
            ),
            m.machines,
            &metal_api,
        ));
        families.push(info_rows(
            Family::new(
                "metal_machine_issues_info",
                "Provide general information on issues that are evaluated by the metal-api",
            ),
            &metal_api,
        ));
    }
    families.extend(collector(m));
    write_families(families, &[], out)
}

/// The collector's own families.
fn collector(m: &WatchMetrics) -> Vec<Family> {
    let c = m.collected;
    let seconds = |t: DateTime<Utc>| t.timestamp_millis() as f64 / 1000.0;
    vec![
        Family::counter(
            "fsmlog_polls_total",
            "Polls of metal-api since start, by result",
        )
        .sample(vec![("result", "ok".into())], c.polls_ok as f64)
        .sample(vec![("result", "error".into())], c.polls_failed as f64),
        Family::new(
            "fsmlog_last_good_poll_timestamp_seconds",
            "When the newest poll was written, in seconds since 1970 (0 before the first)",
        )
        .sample(vec![], c.last_good_poll.map_or(0.0, seconds)),
        Family::new(
            "fsmlog_poll_duration_seconds",
            "How long the newest poll took (request, read and write), in seconds",
        )
        .sample(vec![], c.last_poll_seconds.unwrap_or(0.0)),
        Family::new(
            "fsmlog_judge_duration_seconds",
            "How long judging the newest poll's lines took, or reading the history at start",
        )
        .sample(
            vec![("stage", "start".into())],
            c.load_seconds.unwrap_or(0.0),
        )
        .sample(
            vec![("stage", "poll".into())],
            c.last_judge_seconds.unwrap_or(0.0),
        ),
        Family::counter(
            "fsmlog_collected_events_total",
            "Events this process appended to the history since it started",
        )
        .sample(vec![], c.events as f64),
        Family::new(
            "fsmlog_history_gaps",
            "Gaps marked in the history: polls that may have missed a machine's events",
        )
        .sample(vec![], m.report.summary.gaps as f64),
        Family::new("fsmlog_build_info", "The fsmlog version serving")
            .sample(vec![("version", m.version.to_string())], 1.0),
    ]
}
