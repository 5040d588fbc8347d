//! Output: renderers only print what replay and aggregate computed. One file per format;
//! report renderers take a whole [`Report`], trace renderers take one machine at a time so
//! `replay` streams.

mod csv;
pub mod doc;
pub mod escape;
pub mod format;
pub mod graph;
mod html;
mod json;
mod junit;
mod markdown;
mod metrics;
pub mod report;
mod sarif;
pub mod sentence;
pub mod terminal;
#[cfg(test)]
mod tests;
mod text;
mod trace;
pub mod view;

pub use report::{CheckReport, DiffReport, IssuesReport, Report};
pub use trace::trace_renderer;

use std::io::{self, Write};

use doc::Doc;
use format::{CheckFormat, DiffFormat, ReportFormat, TextFormat};
use terminal::Terminal;

pub use json::explain as explain_json;
pub use json::issues as issues_json;
pub use metrics::{issues as issues_metrics, judged_types};

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
        ReportFormat::Openmetrics => metrics::report(report, out),
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
        CheckFormat::Openmetrics => metrics::check(report, out),
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
            escape(&sentence::pair(pair))
        )?;
    }
    Ok(())
}
