//! Every renderer from one fixed result: the seed machine and a machine with hostile input,
//! replayed once, judged at one fixed time. Each snapshot (`snapshots/`) was read by hand
//! before it was accepted; a change to one is a change to what users see.

use std::io::Write;
use std::path::PathBuf;

use chrono::{DateTime, TimeDelta, Utc};

use super::format::{CheckFormat, DiffFormat, ReplayFormat, ReportFormat, TextFormat};
use super::graph::{dot, mermaid, svg};
use super::reports::{CheckReport, DiffReport, ExplainReport, GraphReport, IssuesReport, Report};
use super::terminal::Terminal;
use super::{render_doc, trace_renderer, view};
use crate::aggregate::{Counting, Summary};
use crate::diagnose::Diagnosis;
use crate::diff::RuleDiff;
use crate::explain::{ExplainOptions, Explanation};
use crate::gate;
use crate::graph::Graph;
use crate::input::Problems;
use crate::input::{InputOptions, Record, read_reader};
use crate::issues::{Filter, MachineFacts, Policy, audit};
use crate::log::MachineLog;
use crate::propose::{Thresholds, propose};
use crate::replay::{Trace, replay};
use crate::rules::Ruleset;
use crate::window::{Shown, Window};

const SEED: &str = include_str!("../../testdata/seed-machine.txt");

/// A machine whose id and messages try to break out of every output.
const HOSTILE: &str = r#"[{"id": "m-<b>&\u202e|*x*", "events": {"log": [
  {"time": "2022-08-23T10:05:00Z", "event": "Installing", "message": "[unexpectedly received in state registering]: start installation"},
  {"time": "2022-08-23T10:04:00Z", "event": "Registering", "message": "start registering"},
  {"time": "2022-08-23T10:03:00Z", "event": "Preparing", "message": "[unexpectedly received in state preparing]: =HYPERLINK(\"x\") \u001b[31mred"},
  {"time": "2022-08-23T10:02:00Z", "event": "Preparing", "message": "starting metal-hammer"},
  {"time": "2022-08-23T10:01:00Z", "event": "PXE Booting", "message": "machine sent extended dhcp request"}
], "crash_loop": true}}]"#;

fn now() -> DateTime<Utc> {
    "2022-08-23T12:00:00Z".parse().unwrap()
}

/// The fixed input's machines, in order.
fn machines() -> Vec<MachineLog> {
    let mut logs = Vec::new();
    for (text, name) in [(SEED, "seed-machine.txt"), (HOSTILE, "fleet.json")] {
        read_reader(text.as_bytes(), name, &InputOptions::default(), &mut |r| {
            if let Record::Machine(log) = r {
                logs.push(log);
            }
        });
    }
    assert_eq!(logs.len(), 2);
    logs
}

/// The one fixed result every renderer is handed.
struct Fixture {
    rules: Ruleset,
    old: Ruleset,
    logs: Vec<MachineLog>,
    traces: Vec<Trace>,
    summary: Summary,
}

fn fixture() -> Fixture {
    let rules = Ruleset::resolve("metal-api-v0.42.2").unwrap();
    let old = Ruleset::resolve("metal-api-v0.19.0").unwrap();
    let logs = machines();
    let traces: Vec<Trace> = logs.iter().map(|log| replay(log, &rules)).collect();
    let mut summary = Summary::default();
    for (log, trace) in logs.iter().zip(&traces) {
        let diagnosis = Diagnosis::of(log, trace, &rules);
        summary.add_counted(trace, &Counting::default(), &diagnosis);
    }
    summary.files = 2;
    summary.newest_event = Some(now());
    Fixture {
        rules,
        old,
        logs,
        traces,
        summary,
    }
}

fn shown() -> Shown {
    Shown {
        window: Window::default(),
        now: Some(now()),
    }
}

fn terminal() -> Terminal {
    Terminal {
        width: Some(100),
        color: false,
        shorten: true,
        headers: true,
        template: None,
    }
}

fn piped() -> Terminal {
    Terminal {
        width: None,
        color: false,
        shorten: false,
        headers: true,
        template: None,
    }
}

fn written(write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> String {
    let mut out = Vec::new();
    write(&mut out).unwrap();
    String::from_utf8(out).unwrap()
}

fn graph(f: &Fixture) -> Graph {
    let mut graph = Graph::default();
    for trace in &f.traces {
        graph.add_trace(trace, &Window::default());
    }
    graph.add_untaken_rules(&f.rules);
    graph
}

#[test]
fn report_in_every_format() {
    let f = fixture();
    let graph = graph(&f);
    let verdicts = f.summary.verdicts(2, &f.rules.name);
    let report = Report {
        rules: &f.rules.name,
        summary: &f.summary,
        window: shown(),
        period: None,
        breakdown: None,
        graph: Some(&graph),
        verdicts: &verdicts,
        problems: &Problems::default(),
        order: &crate::order::PairOrder::default(),
        labels: &[],
    };
    for (name, format, term) in [
        ("report_table", ReportFormat::Table, terminal()),
        ("report_piped", ReportFormat::Table, piped()),
        ("report_markdown", ReportFormat::Markdown, piped()),
        ("report_csv", ReportFormat::Csv, piped()),
        ("report_json", ReportFormat::Json, piped()),
        ("report_html", ReportFormat::Html, piped()),
        ("report_openmetrics", ReportFormat::Openmetrics, piped()),
    ] {
        let out = written(|out| super::report(format, &report, &term, out));
        insta::assert_snapshot!(name, out);
    }
    // The page the watch serves: each pair links to its explanation, and nothing else moves.
    let page = written(|out| super::report(ReportFormat::Html, &report, &piped(), out));
    let linked = written(|out| super::report_page(&report, Some("/explain"), out));
    let mut unlinked = linked.clone();
    for (state, event) in f.summary.pairs.keys() {
        let href = format!(
            r#"<a href="/explain?pair={}/{}">"#,
            state.name().replace(' ', "%20"),
            event.name().replace(' ', "%20")
        );
        // The state and the event in the pairs table, the pair's name under "Verdicts".
        let links = linked.matches(&href).count();
        let judged = verdicts.contains_key(&(*state, *event));
        assert_eq!(links, 2 + usize::from(judged), "{href}");
        unlinked = unlinked.replace(&href, "");
    }
    assert_eq!(unlinked.replace("</a>", ""), page.replace("</a>", ""));
    assert_eq!(written(|out| super::report_page(&report, None, out)), page);
    for width in 80..=120 {
        let term = Terminal {
            width: Some(width),
            ..terminal()
        };
        let out = written(|out| super::report(ReportFormat::Table, &report, &term, out));
        for line in out.lines() {
            assert!(line.chars().count() <= width, "{width}: {line}");
        }
    }
}

#[test]
fn replay_in_every_format() {
    let f = fixture();
    for (name, format) in [
        ("replay_table", ReplayFormat::Table),
        ("replay_csv", ReplayFormat::Csv),
        ("replay_json", ReplayFormat::Json),
        ("replay_ndjson", ReplayFormat::Ndjson),
    ] {
        let out = written(|out| {
            let mut renderer = trace_renderer(format, terminal());
            renderer.begin(&f.rules.name, out)?;
            for trace in &f.traces {
                renderer.machine(trace, out)?;
            }
            renderer.end(out)
        });
        insta::assert_snapshot!(name, out);
    }
}

fn rule_diff(f: &Fixture) -> RuleDiff {
    let mut diff = RuleDiff::default();
    for log in &f.logs {
        diff.add_traces(
            &replay(log, &f.old),
            &replay(log, &f.rules),
            &Window::default(),
        );
    }
    diff.files = 2;
    diff
}

#[test]
fn diff_in_every_format() {
    let f = fixture();
    let diff = rule_diff(&f);
    let report = DiffReport {
        old: &f.old.name,
        new: &f.rules.name,
        diff: &diff,
        window: shown(),
        problems: &Problems::default(),
    };
    for (name, format) in [
        ("diff_table", DiffFormat::Table),
        ("diff_markdown", DiffFormat::Markdown),
        ("diff_json", DiffFormat::Json),
    ] {
        let out = written(|out| super::diff(format, &report, &terminal(), out));
        insta::assert_snapshot!(name, out);
    }
}

#[test]
fn check_in_every_format() {
    let f = fixture();
    let result = gate::check(&f.summary, None).unwrap();
    let inputs = [PathBuf::from("fleet/")];
    let report = CheckReport {
        rules: &f.rules.name,
        summary: &f.summary,
        result: &result,
        baseline: None,
        inputs: &inputs,
        window: shown(),
        problems: &Problems::default(),
        labels: &[],
    };
    for (name, format) in [
        ("check_table", CheckFormat::Table),
        ("check_markdown", CheckFormat::Markdown),
        ("check_json", CheckFormat::Json),
        ("check_sarif", CheckFormat::Sarif),
        ("check_junit", CheckFormat::Junit),
        ("check_openmetrics", CheckFormat::Openmetrics),
    ] {
        let out = written(|out| super::check(format, &report, &terminal(), out));
        insta::assert_snapshot!(name, out);
    }
    let annotations = super::github_annotations(&report);
    insta::assert_snapshot!("check_github_annotations", annotations);
}

#[test]
fn explain_in_every_format() {
    let f = fixture();
    let options = ExplainOptions {
        only: Vec::new(),
        context: 3,
        window: Window::default(),
    };
    let mut explanation = Explanation::default();
    for (log, trace) in f.logs.iter().zip(&f.traces) {
        let mut summary = Summary::default();
        let diagnosis = Diagnosis::of(log, trace, &f.rules);
        summary.add_counted(trace, &Counting::default(), &diagnosis);
        explanation.add_trace(trace, summary, &options);
    }
    let verdicts = explanation.summary.verdicts(2, &f.rules.name);
    let problems = Problems::default();
    let report = ExplainReport {
        rules: &f.rules.name,
        explanation: &explanation,
        verdicts: &verdicts,
        window: shown(),
        context: 3,
        problems: &problems,
        order: &crate::order::PairOrder::default(),
    };
    let doc = view::explain::doc(&report);
    for (name, format) in [
        ("explain_table", TextFormat::Table),
        ("explain_markdown", TextFormat::Markdown),
        ("explain_csv", TextFormat::Csv),
    ] {
        let out = written(|out| render_doc(&doc, format, &terminal(), out));
        insta::assert_snapshot!(name, out);
    }
    // Every line, table or prose, fits any terminal from 80 columns on.
    for width in 80..=120 {
        let term = Terminal {
            width: Some(width),
            ..terminal()
        };
        let out = written(|out| render_doc(&doc, TextFormat::Table, &term, out));
        for line in out.lines() {
            assert!(line.chars().count() <= width, "{width}: {line}");
        }
    }
    let json = written(|out| super::json::explain(&report, out));
    insta::assert_snapshot!("explain_json", json);
}

#[test]
fn issues_in_every_format() {
    let f = fixture();
    let facts: Vec<MachineFacts> = f
        .logs
        .iter()
        .zip(&f.traces)
        .map(|(log, trace)| MachineFacts::of(log, trace))
        .collect();
    let policy = Policy {
        now: now(),
        last_error_threshold: TimeDelta::days(7),
        stuck_after: TimeDelta::hours(1),
    };
    let judged = audit(facts, &policy, &Filter::default(), true);
    let types = super::judged_types(|_| true);
    let report = IssuesReport {
        rules: &f.rules.name,
        now: now(),
        summary: &f.summary,
        machines: &judged,
        types: &types,
        problems: &Problems::default(),
        labels: &[],
    };
    let doc = view::issues::doc(&report);
    for (name, format) in [
        ("issues_table", TextFormat::Table),
        ("issues_markdown", TextFormat::Markdown),
        ("issues_csv", TextFormat::Csv),
    ] {
        let out = written(|out| render_doc(&doc, format, &terminal(), out));
        insta::assert_snapshot!(name, out);
    }
    let json = written(|out| super::json::issues(&report, out));
    insta::assert_snapshot!("issues_json", json);
    let metrics = written(|out| super::metrics::issues(&report, out));
    insta::assert_snapshot!("issues_openmetrics", metrics);
}

#[test]
fn graph_in_every_format() {
    let f = fixture();
    let graph = graph(&f);
    let report = GraphReport {
        rules: &f.rules.name,
        graph: &graph,
        machines: 2,
    };
    insta::assert_snapshot!("graph_svg", written(|out| svg(&report, out)));
    insta::assert_snapshot!("graph_dot", written(|out| dot(&report, out)));
    insta::assert_snapshot!("graph_mermaid", written(|out| mermaid(&report, out)));
}

#[test]
fn propose_and_rules() {
    let f = fixture();
    let thresholds = Thresholds {
        min_share: 0.0,
        named: Vec::new(),
    };
    let verdicts = f.summary.verdicts(1, &f.rules.name);
    let proposal = propose(&f.rules, &f.summary, &verdicts, &thresholds, "proposed");
    let diff = rule_diff(&f);
    let effect = DiffReport {
        old: &f.old.name,
        new: &f.rules.name,
        diff: &diff,
        window: shown(),
        problems: &Problems::default(),
    };
    let doc = view::propose::doc(&proposal, &f.summary, &effect);
    let out = written(|out| render_doc(&doc, TextFormat::Table, &terminal(), out));
    insta::assert_snapshot!("propose_table", out);
    let matrix = view::rules::matrix(&f.rules);
    let out = written(|out| render_doc(&matrix, TextFormat::Table, &piped(), out));
    insta::assert_snapshot!("rules_matrix", out);
}

#[test]
fn a_column_left_out_comes_back_when_a_wider_one_made_the_room() {
    use super::doc::{Column, Doc, Grid, label};
    // 40 columns: Key and Short (10) fit, Long (40) does not; Short goes first by rank.
    let mut grid = Grid::new(vec![
        Column::new("Key"),
        Column::new("Short").or_left_out(0),
        Column::new("Long").or_left_out(1),
    ]);
    grid.row(vec![
        label("k"),
        label("s".repeat(10)),
        label("l".repeat(40)),
    ]);
    let mut doc = Doc::default();
    doc.table(grid);
    let narrow = Terminal {
        width: Some(40),
        ..terminal()
    };
    let out = written(|out| render_doc(&doc, TextFormat::Table, &narrow, out));
    assert!(out.contains(&"s".repeat(10)), "{out}");
    assert!(!out.contains("llll"), "{out}");
    assert!(out.contains("(Long left out to fit 40 columns"), "{out}");
    assert!(out.lines().all(|l| l.chars().count() <= 40), "{out}");
    // Where neither fits, both stay out.
    let narrower = Terminal {
        width: Some(15),
        ..terminal()
    };
    let out = written(|out| render_doc(&doc, TextFormat::Table, &narrower, out));
    assert!(out.contains("(Short, Long"), "{out}");
}

#[test]
fn watch_metrics_of_the_fixed_result() {
    let f = fixture();
    let facts: Vec<MachineFacts> = f
        .logs
        .iter()
        .zip(&f.traces)
        .map(|(log, trace)| MachineFacts::of(log, trace))
        .collect();
    let policy = Policy {
        now: now(),
        last_error_threshold: TimeDelta::hours(1),
        stuck_after: TimeDelta::hours(1),
    };
    let judged = audit(facts, &policy, &Filter::default(), true);
    let verdicts = f.summary.verdicts(2, &f.rules.name);
    let report = Report {
        rules: &f.rules.name,
        summary: &f.summary,
        window: shown(),
        period: None,
        breakdown: None,
        graph: None,
        verdicts: &verdicts,
        problems: &Problems::default(),
        order: &crate::order::PairOrder::default(),
        labels: &[],
    };
    let collected = super::Collected {
        polls_ok: 3,
        polls_failed: 1,
        last_good_poll: Some(now()),
        last_poll_seconds: Some(0.25),
        events: 12,
        last_judge_seconds: Some(0.125),
        load_seconds: Some(1.5),
    };
    let metrics = |exporter_issues| {
        written(|out| {
            super::watch_metrics(
                &super::WatchMetrics {
                    report: &report,
                    machines: &judged,
                    exporter_issues,
                    collected: &collected,
                    version: "0.1.0",
                },
                out,
            )
        })
    };
    let own = metrics(false);
    insta::assert_snapshot!("watch_metrics", own);
    // The exporter's families only when asked, and then nothing else changes.
    let both = metrics(true);
    assert!(!own.contains("metal_machine_issues"));
    let exporter: Vec<&str> = both.lines().filter(|l| !own.contains(l)).collect();
    assert!(
        exporter.iter().all(|l| l.contains("metal_machine_issues")),
        "{exporter:?}"
    );
    assert_eq!(both.lines().count(), own.lines().count() + exporter.len());
}
