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
pub mod messages;
mod metrics;
pub mod reports;
mod sarif;
pub mod sentence;
pub mod template;
pub mod terminal;
#[cfg(test)]
mod tests;
mod text;
mod trace;
pub mod view;
mod watch;
pub mod watch_log;
mod yaml;

pub use reports::{
    CheckReport, DiffReport, ExplainReport, GraphReport, IssuesReport, ProposeReport, Report,
};
pub use trace::trace_renderer;
pub use watch::{Collected, WatchMetrics, watch_metrics};

use std::io::{self, Write};

use crate::event::Pair;
use crate::issues::IssueType;
use doc::Doc;
use format::{
    CheckFormat, DiffFormat, GraphFormat, IssuesFormat, OutputFormat, ReportFormat, TableFormat,
    TextFormat,
};
use terminal::Terminal;

pub use metrics::judged_types;

/// Prints a text view in one of the text formats.
fn render_doc(
    doc: &Doc,
    format: TextFormat,
    term: &Terminal,
    out: &mut dyn Write,
) -> io::Result<()> {
    match format {
        TextFormat::Table => text::render(doc, term, out),
        TextFormat::Markdown => markdown::render(doc, out),
        TextFormat::Csv => csv::render(doc, term.headers, out),
    }
}

/// A command's JSON document in one of the formats every such command takes: itself
/// (`json`), as YAML (`yaml`), or through `--template` (`template`; each row of the array
/// under `rows`, or the whole document).
fn document(
    format: impl OutputFormat,
    term: &Terminal,
    rows: Option<&str>,
    write_json: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    out: &mut dyn Write,
) -> io::Result<()> {
    if format.is_template() {
        match &term.template {
            Some(t) => t.document(rows, write_json, out),
            None => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "-o template needs --template",
            )),
        }
    } else if format.is_yaml() {
        yaml::from_json(out, write_json)
    } else {
        write_json(out)
    }
}

/// `report` in the chosen format.
pub fn report(
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
        ReportFormat::Json | ReportFormat::Yaml | ReportFormat::Template => document(
            format,
            term,
            Some("unexpected"),
            |w| json::report(report, w),
            out,
        ),
        ReportFormat::Openmetrics => metrics::report(report, out),
        ReportFormat::Html => report_page(report, None, out),
    }
}

/// `report`'s HTML page; with `explain_at` (a path such as `/explain`), each pair, in the
/// pairs table and under "Verdicts", links to its explanation page there:
/// `/explain?pair=STATE/EVENT`, the names percent-encoded ([`html::explain_query`]).
/// `report -o html` writes it without links: a file has no explanation beside it.
pub fn report_page(
    report: &Report,
    explain_at: Option<&str>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let link = |pair: &Pair| format!("{}?{}", explain_at.unwrap_or(""), html::explain_query(pair));
    let pair_link: Option<&dyn Fn(&Pair) -> String> = explain_at.map(|_| &link as _);
    let mut svg = Vec::new();
    if let Some(graph) = report.graph {
        graph::svg(
            &GraphReport {
                rules: report.rules,
                graph,
                machines: report.summary.machines,
            },
            &mut svg,
        )?;
    }
    let title = format!("fsmlog report · rules {}", report.rules);
    let doc = view::report::doc_with_problems(report, pair_link);
    html::page(&title, &doc, Some(&String::from_utf8_lossy(&svg)), out)
}

/// `diff` in the chosen format.
pub fn diff(
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
        DiffFormat::Json | DiffFormat::Yaml | DiffFormat::Template => {
            document(format, term, None, |w| json::diff(report, w), out)
        }
    }
}

/// `check` in the chosen format.
pub fn check(
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
        CheckFormat::Json | CheckFormat::Yaml | CheckFormat::Template => {
            document(format, term, Some("pairs"), |w| json::check(report, w), out)
        }
        CheckFormat::Sarif => sarif::check(report, out),
        CheckFormat::Junit => junit::check(report, out),
        CheckFormat::Openmetrics => metrics::check(report, out),
    }
}

/// `explain` in the chosen format.
pub fn explain(
    format: TableFormat,
    report: &ExplainReport,
    term: &Terminal,
    out: &mut dyn Write,
) -> io::Result<()> {
    let text = match format {
        TableFormat::Json | TableFormat::Yaml | TableFormat::Template => {
            return document(
                format,
                term,
                Some("pairs"),
                |w| json::explain(report, w),
                out,
            );
        }
        TableFormat::Html => {
            let title = format!("fsmlog explain · rules {}", report.rules);
            return html::page(&title, &view::explain::doc(report), None, out);
        }
        TableFormat::Table => TextFormat::Table,
        TableFormat::Markdown => TextFormat::Markdown,
        TableFormat::Csv => TextFormat::Csv,
    };
    render_doc(&view::explain::doc(report), text, term, out)
}

/// `issues` in the chosen format.
pub fn issues(
    format: IssuesFormat,
    report: &IssuesReport,
    term: &Terminal,
    out: &mut dyn Write,
) -> io::Result<()> {
    let text = match format {
        IssuesFormat::Json | IssuesFormat::Yaml | IssuesFormat::Template => {
            return document(
                format,
                term,
                Some("machines"),
                |w| json::issues(report, w),
                out,
            );
        }
        IssuesFormat::Openmetrics => return metrics::issues(report, out),
        IssuesFormat::Table => TextFormat::Table,
        IssuesFormat::Markdown => TextFormat::Markdown,
        IssuesFormat::Csv => TextFormat::Csv,
    };
    render_doc(&view::issues::doc(report), text, term, out)
}

/// `issues list` in the chosen format (`-o openmetrics`: the exporter's info family alone).
pub fn issue_types(
    format: IssuesFormat,
    types: &[IssueType],
    term: &Terminal,
    out: &mut dyn Write,
) -> io::Result<()> {
    let text = match format {
        IssuesFormat::Json | IssuesFormat::Yaml | IssuesFormat::Template => {
            return document(format, term, None, |w| json::issue_types(types, w), out);
        }
        IssuesFormat::Openmetrics => return metrics::issue_types(types, out),
        IssuesFormat::Table => TextFormat::Table,
        IssuesFormat::Markdown => TextFormat::Markdown,
        IssuesFormat::Csv => TextFormat::Csv,
    };
    render_doc(&view::issues::types(types), text, term, out)
}

/// `graph` in the chosen format.
pub fn graph(format: GraphFormat, report: &GraphReport, out: &mut dyn Write) -> io::Result<()> {
    match format {
        GraphFormat::Svg => graph::svg(report, out),
        GraphFormat::Dot => graph::dot(report, out),
        GraphFormat::Mermaid => graph::mermaid(report, out),
    }
}

/// `rules propose`: the rule file, the patch, or the proposal with its effect.
pub fn propose(report: &ProposeReport, term: &Terminal, out: &mut dyn Write) -> io::Result<()> {
    match report {
        ProposeReport::RuleFile(text) | ProposeReport::Patch(text) => {
            out.write_all(text.as_bytes())
        }
        ProposeReport::RuleFileYaml(text) => yaml::from_json(out, |w| w.write_all(text.as_bytes())),
        ProposeReport::Effect {
            proposal,
            summary,
            diff,
        } => render_doc(
            &view::propose::doc(proposal, summary, diff),
            TextFormat::Table,
            term,
            out,
        ),
    }
}

/// `rules list`: each built-in rule set with its line.
pub fn rules_list(rules: &[crate::rules::Ruleset], out: &mut dyn Write) -> io::Result<()> {
    for r in rules {
        writeln!(out, "{:<20} {}", r.name, r.description)?;
    }
    writeln!(
        out,
        "{:<20} alias of the newest, {}",
        "metal-api",
        crate::rules::DEFAULT_RULES
    )
}

/// `rules show`: a rule set's matrix and the behaviour its rows do not say.
pub fn rules_show(
    rules: &crate::rules::Ruleset,
    term: &Terminal,
    out: &mut dyn Write,
) -> io::Result<()> {
    if !term.headers {
        // The matrix's rows alone, as every table prints them with `--no-headers`.
        return render_doc(&view::rules::matrix(rules), TextFormat::Table, term, out);
    }
    writeln!(
        out,
        "{}: {}",
        escape::text(&rules.name),
        escape::text(&rules.description)
    )?;
    render_doc(&view::rules::matrix(rules), TextFormat::Table, term, out)?;
    let window = match rules.buffered_phoned_home {
        Some(w) => format!("{} s", w.num_seconds()),
        None => "none".to_string(),
    };
    writeln!(
        out,
        "buffered phoned home: {window} · failed reclaim after {} s · keeps {} events",
        rules.failed_reclaim_threshold.num_seconds(),
        rules.kept_events
    )
}

/// GitHub shows at most ten error annotations per step.
const GITHUB_ANNOTATIONS: usize = 10;

/// `::error` workflow commands for the top violations, for GitHub Actions. They go to stderr
/// so that stdout stays the chosen output; the runner reads commands from both streams.
pub fn github_annotations(report: &CheckReport) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let escape = |s: &str| {
        s.replace('%', "%25")
            .replace('\r', "%0D")
            .replace('\n', "%0A")
    };
    for pair in report.result.violations().take(GITHUB_ANNOTATIONS) {
        let _ = writeln!(
            out,
            "::error title={}::{}",
            escape(&format!("fsmlog: {} / {}", pair.state, pair.event))
                .replace(',', "%2C")
                .replace(':', "%3A"),
            escape(&sentence::pair(pair))
        );
    }
    out
}
