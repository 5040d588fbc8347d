//! Output: renderers only print what replay and aggregate computed. One file per format;
//! report renderers take a whole [`Report`], trace renderers take one machine at a time so
//! `replay` streams.

mod csv;
pub mod doc;
pub mod escape;
pub mod graph;
mod html;
mod json;
mod junit;
mod markdown;
mod sarif;
pub mod terminal;
mod text;
pub mod view;

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use chrono::{DateTime, SecondsFormat, Utc};

use crate::aggregate::Summary;
use crate::cli::{CheckFormat, DiffFormat, ReplayFormat, ReportFormat};
use crate::diff::RuleDiff;
use crate::gate::GateResult;
use crate::replay::Trace;
use crate::window::{Period, Shown};
use doc::Doc;
use terminal::Terminal;

pub use json::explain as explain_json;
pub use json::issues as issues_json;

/// What `issues` prints: every judged machine, worst first.
pub struct IssuesReport<'a> {
    pub rules: &'a str,
    /// The time the machines were judged at.
    pub now: DateTime<Utc>,
    pub summary: &'a Summary,
    pub machines: &'a [crate::issues::Judged],
}

/// Prints a text view in one of the text formats.
pub fn render_doc(
    doc: &Doc,
    format: TextFormat,
    term: &Terminal,
    out: &mut dyn Write,
) -> io::Result<()> {
    match format {
        TextFormat::Table => text::render(doc, term, out),
        TextFormat::Markdown => markdown::render(doc, out),
        TextFormat::Csv => csv::render(doc, out),
    }
}

/// The formats a [`Doc`] prints in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextFormat {
    Table,
    Markdown,
    Csv,
}

/// What `report` prints: the fleet summary and the rule set it was judged by.
pub struct Report<'a> {
    pub rules: &'a str,
    pub summary: &'a Summary,
    /// The window occurrences were counted in.
    pub window: Shown,
    /// The trend periods, where asked for.
    pub period: Option<Period>,
    /// The transition graph of the same replay (for the HTML page).
    pub graph: Option<&'a crate::graph::Graph>,
}

/// Renders a report in the chosen format.
pub fn render_report(
    format: ReportFormat,
    report: &Report,
    term: &Terminal,
    out: &mut dyn Write,
) -> io::Result<()> {
    let doc = || view::report::doc(report);
    match format {
        ReportFormat::Table => render_doc(&doc(), TextFormat::Table, term, out),
        ReportFormat::Markdown => render_doc(&doc(), TextFormat::Markdown, term, out),
        ReportFormat::Csv => render_doc(&doc(), TextFormat::Csv, term, out),
        ReportFormat::Json => json::report(report, out),
        ReportFormat::Html => {
            let mut svg = Vec::new();
            if let Some(graph) = report.graph {
                graph::svg(
                    &graph::GraphReport {
                        rules: report.rules,
                        graph,
                        machines: report.summary.machines,
                    },
                    &mut svg,
                )?;
            }
            let title = format!("fsmlog report · rules {}", report.rules);
            let doc = view::report::doc_with_problems(report);
            html::page(&title, &doc, &String::from_utf8_lossy(&svg), out)
        }
    }
}

/// What `diff` prints: the changes between two rule sets.
pub struct DiffReport<'a> {
    pub old: &'a str,
    pub new: &'a str,
    pub diff: &'a RuleDiff,
    /// The window verdict changes were counted in.
    pub window: Shown,
}

/// Renders a rule diff in the chosen format.
pub fn render_diff(
    format: DiffFormat,
    report: &DiffReport,
    term: &Terminal,
    out: &mut dyn Write,
) -> io::Result<()> {
    match format {
        DiffFormat::Table => render_doc(&view::diff::doc(report), TextFormat::Table, term, out),
        DiffFormat::Markdown => {
            render_doc(&view::diff::doc(report), TextFormat::Markdown, term, out)
        }
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
    /// The window occurrences were counted in.
    pub window: Shown,
}

/// Renders the gate's verdict in the chosen format.
pub fn render_check(
    format: CheckFormat,
    report: &CheckReport,
    term: &Terminal,
    out: &mut dyn Write,
) -> io::Result<()> {
    match format {
        CheckFormat::Table => render_doc(&view::check::doc(report), TextFormat::Table, term, out),
        CheckFormat::Markdown => {
            render_doc(&view::check::doc(report), TextFormat::Markdown, term, out)
        }
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
pub fn trace_renderer(format: ReplayFormat, term: Terminal) -> Box<dyn TraceRenderer> {
    match format {
        ReplayFormat::Table => Box::new(TraceText { term }),
        ReplayFormat::Csv => Box::new(TraceCsv { header: false }),
        ReplayFormat::Json => Box::new(json::TraceJson::array()),
        ReplayFormat::Ndjson => Box::new(json::TraceJson::lines()),
    }
}

/// `replay -o table`: a heading and a table per machine.
struct TraceText {
    term: Terminal,
}

impl TraceRenderer for TraceText {
    fn begin(&mut self, rules: &str, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "rules {} (times in UTC)", escape::text(rules))
    }

    fn machine(&mut self, trace: &Trace, out: &mut dyn Write) -> io::Result<()> {
        text::render(&view::replay::doc(trace), &self.term, out)
    }

    fn end(&mut self, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }
}

/// `replay -o csv`: every step of every machine, the machine first.
struct TraceCsv {
    header: bool,
}

impl TraceRenderer for TraceCsv {
    fn begin(&mut self, _rules: &str, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }

    fn machine(&mut self, trace: &Trace, out: &mut dyn Write) -> io::Result<()> {
        let mut columns = vec![doc::Column::new("Machine")];
        columns.extend(view::replay::step_columns());
        let mut rows = csv::CsvRows::continuing(&mut *out, &columns, !self.header)?;
        self.header = true;
        for step in &trace.steps {
            let mut cells = vec![doc::machine(trace.machine.clone())];
            cells.extend(view::replay::step_cells(step));
            rows.row(&cells)?;
        }
        rows.finish()
    }

    fn end(&mut self, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }
}

/// A time as output shows it: RFC 3339 in UTC, milliseconds only where present.
pub fn time(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::AutoSi, true)
}
