//! Output: renderers only print what replay and aggregate computed. One file per format;
//! report renderers take a whole [`Report`], trace renderers take one machine at a time so
//! `replay` streams.

pub mod escape;
mod json;
mod junit;
mod sarif;
mod table;

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use chrono::{DateTime, SecondsFormat, Utc};

use crate::aggregate::Summary;
use crate::cli::{CheckFormat, DiffFormat, ReplayFormat, ReportFormat};
use crate::diff::RuleDiff;
use crate::gate::GateResult;
use crate::replay::Trace;

pub use table::rules_matrix;

/// What `report` prints: the fleet summary and the rule set it was judged by.
pub struct Report<'a> {
    pub rules: &'a str,
    pub summary: &'a Summary,
}

/// Renders a report in the chosen format.
pub fn render_report(format: ReportFormat, report: &Report, out: &mut dyn Write) -> io::Result<()> {
    match format {
        ReportFormat::Table => table::report(report, out, table::Style::Terminal),
        ReportFormat::Markdown => table::report(report, out, table::Style::Markdown),
        ReportFormat::Json => json::report(report, out),
    }
}

/// What `diff` prints: the changes between two rule sets.
pub struct DiffReport<'a> {
    pub old: &'a str,
    pub new: &'a str,
    pub diff: &'a RuleDiff,
}

/// Renders a rule diff in the chosen format.
pub fn render_diff(format: DiffFormat, report: &DiffReport, out: &mut dyn Write) -> io::Result<()> {
    match format {
        DiffFormat::Table => table::diff(report, out, table::Style::Terminal),
        DiffFormat::Markdown => table::diff(report, out, table::Style::Markdown),
        DiffFormat::Json => json::diff(report, out),
    }
}

/// What `check` prints: the gate's verdict on the fleet.
pub struct CheckReport<'a> {
    pub rules: &'a str,
    pub summary: &'a Summary,
    pub result: &'a GateResult,
    pub baseline: Option<&'a Path>,
    /// The command line's paths (SARIF names the first as the results' location).
    pub inputs: &'a [PathBuf],
}

/// Renders the gate's verdict in the chosen format.
pub fn render_check(
    format: CheckFormat,
    report: &CheckReport,
    out: &mut dyn Write,
) -> io::Result<()> {
    match format {
        CheckFormat::Table => table::check(report, out, table::Style::Terminal),
        CheckFormat::Markdown => table::check(report, out, table::Style::Markdown),
        CheckFormat::Json => json::check(report, out),
        CheckFormat::Sarif => sarif::check(report, out),
        CheckFormat::Junit => junit::check(report, out),
    }
}

/// GitHub shows at most ten error annotations per step.
const GITHUB_ANNOTATIONS: usize = 10;

/// `::error` workflow commands for the top violations, for GitHub Actions. They go to stderr
/// so that stdout stays the chosen output; the runner reads commands from both streams.
pub fn github_annotations(report: &CheckReport, out: &mut dyn Write) -> io::Result<()> {
    let escape = |s: &str| {
        s.replace('%', "%25")
            .replace('\r', "%0D")
            .replace('\n', "%0A")
    };
    for pair in report.result.violations().take(GITHUB_ANNOTATIONS) {
        writeln!(
            out,
            "::error title={}::{}",
            escape(&format!("fsmlog: {} / {}", pair.state, pair.event))
                .replace(',', "%2C")
                .replace(':', "%3A"),
            escape(&pair.message())
        )?;
    }
    Ok(())
}

/// Prints traces as they come: `begin` once, `machine` per trace, `end` once.
pub trait TraceRenderer {
    /// Before the first machine.
    fn begin(&mut self, rules: &str, out: &mut dyn Write) -> io::Result<()>;
    /// One machine's trace.
    fn machine(&mut self, trace: &Trace, out: &mut dyn Write) -> io::Result<()>;
    /// After the last machine.
    fn end(&mut self, out: &mut dyn Write) -> io::Result<()>;
}

/// The trace renderer for a format.
pub fn trace_renderer(format: ReplayFormat) -> Box<dyn TraceRenderer> {
    match format {
        ReplayFormat::Table => Box::new(table::TraceTable),
        ReplayFormat::Json => Box::new(json::TraceJson::array()),
        ReplayFormat::Ndjson => Box::new(json::TraceJson::lines()),
    }
}

/// A time as output shows it: RFC 3339 in UTC, milliseconds only where present.
pub fn time(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::AutoSi, true)
}
