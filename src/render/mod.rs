//! Output: renderers only print what replay and aggregate computed. One file per format;
//! report renderers take a whole [`Report`], trace renderers take one machine at a time so
//! `replay` streams.

mod json;
mod table;

use std::io::{self, Write};

use chrono::{DateTime, SecondsFormat, Utc};

use crate::aggregate::Summary;
use crate::cli::{ReplayFormat, ReportFormat};
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
