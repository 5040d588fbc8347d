//! Tables for people: the terminal (comfy-table) and Markdown for pull-request comments.

use std::io::{self, IsTerminal, Write};

use comfy_table::presets::{ASCII_MARKDOWN, UTF8_FULL_CONDENSED};
use comfy_table::{CellAlignment, ContentArrangement, Table};

use super::{CheckReport, DiffReport, Report, TraceRenderer, escape, time};
use crate::aggregate::PairTally;
use crate::diff::Change;
use crate::event::{EventKind, State};
use crate::gate::BaselineState;
use crate::replay::Trace;
use crate::rules::Ruleset;

/// How many machine ids a flagged-machines line lists before it says "and N more".
const LISTED_MACHINES: usize = 10;

/// Where the table is going.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Terminal,
    Markdown,
}

fn new_table(style: Style, header: &[&str]) -> Table {
    let mut table = Table::new();
    match style {
        Style::Terminal => {
            table.load_style(UTF8_FULL_CONDENSED);
            if io::stdout().is_terminal() {
                table.set_content_arrangement(ContentArrangement::Dynamic);
            }
        }
        Style::Markdown => {
            table.load_style(ASCII_MARKDOWN);
        }
    }
    table.set_header(header.iter().copied());
    table
}

/// Input text as a cell of this style: controls escaped, and Markdown's markup too.
fn cell(style: Style, s: &str) -> String {
    match style {
        Style::Terminal => escape::text(s).into_owned(),
        Style::Markdown => escape::markdown(s),
    }
}

fn align_right(table: &mut Table, columns: &[usize]) {
    for &i in columns {
        if let Some(column) = table.column_mut(i) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
}

/// `1 machine`, `2 machines`.
fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

fn heading(style: Style, text: &str, out: &mut dyn Write) -> io::Result<()> {
    match style {
        Style::Terminal => writeln!(out, "\n{text}"),
        Style::Markdown => writeln!(out, "\n### {text}\n"),
    }
}

fn machine_list(style: Style, ids: &std::collections::BTreeSet<String>) -> String {
    if ids.is_empty() {
        return "none".to_string();
    }
    let mut listed: Vec<String> = ids
        .iter()
        .take(LISTED_MACHINES)
        .map(|id| cell(style, id))
        .collect();
    let more = ids.len().saturating_sub(LISTED_MACHINES);
    let mut text = listed.join(", ");
    if more > 0 {
        listed.clear();
        text.push_str(&format!(" and {more} more"));
    }
    text
}

/// Writes `report` as tables.
pub fn report(report: &Report, out: &mut dyn Write, style: Style) -> io::Result<()> {
    let s = report.summary;
    let unknown: u64 = s.unknown_events.values().map(|t| t.count).sum();
    if style == Style::Markdown {
        writeln!(out, "## fsmlog report\n")?;
    }
    writeln!(
        out,
        "rules {} · {} · {} · {} ({} replayed, {} rejected, {} unknown, {} duplicates) · {}",
        report.rules,
        count(s.files, "file"),
        count(s.machines, "machine"),
        count(s.events, "event"),
        s.replayed,
        s.rejected,
        unknown,
        s.duplicates,
        count(s.errors.len() as u64, "input error")
    )?;
    if s.merged_machines > 0 {
        writeln!(
            out,
            "{} machines had records in several inputs and were merged; {} duplicate events counted once",
            s.merged_machines, s.duplicates
        )?;
    }

    let pairs = s.pairs_by_count();
    heading(
        style,
        &format!(
            "Unexpected transitions: {}",
            count(pairs.len() as u64, "pair")
        ),
        out,
    )?;
    if pairs.is_empty() {
        writeln!(out, "none")?;
    } else {
        let mut table = new_table(
            style,
            &[
                "State",
                "Event",
                "Count",
                "Machines",
                "First seen",
                "Last seen",
                "Examples",
            ],
        );
        for ((state, event), t) in pairs {
            let examples: Vec<String> = t.examples.iter().map(|id| cell(style, id)).collect();
            table.add_row(vec![
                state.name().to_string(),
                event.name().to_string(),
                t.count.to_string(),
                t.machines.to_string(),
                time(t.first_seen),
                time(t.last_seen),
                examples.join(", "),
            ]);
        }
        align_right(&mut table, &[2, 3]);
        writeln!(out, "{table}")?;
    }

    if !s.unknown_events.is_empty() {
        heading(style, "Unknown events (skipped by the replay)", out)?;
        for (name, t) in &s.unknown_events {
            writeln!(
                out,
                "unknown event \"{}\" ×{} on {} machines",
                cell(style, name),
                t.count,
                t.machines
            )?;
        }
    }

    heading(style, "Machines", out)?;
    writeln!(
        out,
        "crash loop ({}): {}",
        s.crash_loop.len(),
        machine_list(style, &s.crash_loop)
    )?;
    if style == Style::Markdown {
        writeln!(out)?;
    }
    writeln!(
        out,
        "failed reclaim ({}): {}",
        s.failed_machine_reclaim.len(),
        machine_list(style, &s.failed_machine_reclaim)
    )?;

    heading(
        style,
        "Recorded verdicts this replay does not reproduce",
        out,
    )?;
    if s.disagreements.is_empty() {
        writeln!(out, "none")?;
    } else {
        let mut table = new_table(style, &["Event", "Recorded", "Replayed", "Count"]);
        for ((event, recorded, replayed), count) in &s.disagreements {
            table.add_row(vec![
                event.name().to_string(),
                verdict_text(*recorded),
                verdict_text(*replayed),
                count.to_string(),
            ]);
        }
        align_right(&mut table, &[3]);
        writeln!(out, "{table}")?;
    }
    Ok(())
}

fn verdict_text(state: Option<State>) -> String {
    match state {
        Some(state) => format!("unexpected in {state}"),
        None => "expected".to_string(),
    }
}

fn tally_cells(style: Style, t: &PairTally) -> Vec<String> {
    vec![
        t.count.to_string(),
        t.machines.to_string(),
        time(t.first_seen),
        time(t.last_seen),
        t.examples
            .iter()
            .map(|id| cell(style, id))
            .collect::<Vec<_>>()
            .join(", "),
    ]
}

/// Writes `diff` as tables.
pub fn diff(report: &DiffReport, out: &mut dyn Write, style: Style) -> io::Result<()> {
    let d = report.diff;
    if style == Style::Markdown {
        writeln!(out, "## fsmlog diff\n")?;
    }
    writeln!(
        out,
        "{} → {} · {} · {} · {} · {}",
        report.old,
        report.new,
        count(d.files, "file"),
        count(d.machines, "machine"),
        count(d.events, "event"),
        count(d.errors.len() as u64, "input error")
    )?;
    let sections = [
        (
            Change::NewlyUnexpected,
            "Newly unexpected (regressions)",
            "state (new rules)",
        ),
        (
            Change::NewlyExpected,
            "Newly expected (fixed, or hidden)",
            "state (old rules)",
        ),
    ];
    for (change, title, state_header) in sections {
        let rows = d.changes(change);
        heading(
            style,
            &format!("{title}: {}", count(rows.len() as u64, "pair")),
            out,
        )?;
        if rows.is_empty() {
            writeln!(out, "none")?;
            continue;
        }
        let mut table = new_table(
            style,
            &[
                state_header,
                "Event",
                "Count",
                "Machines",
                "First seen",
                "Last seen",
                "Examples",
            ],
        );
        for ((state, event), t) in rows {
            let mut row = vec![state.name().to_string(), event.name().to_string()];
            row.extend(tally_cells(style, t));
            table.add_row(row);
        }
        align_right(&mut table, &[2, 3]);
        writeln!(out, "{table}")?;
    }
    heading(
        style,
        &format!("Flags that flip: {}", count(d.flips.len() as u64, "flag")),
        out,
    )?;
    if d.flips.is_empty() {
        writeln!(out, "none")?;
    } else {
        let mut table = new_table(style, &["Machine", "Flag", "Old", "New"]);
        for (flag, machine, old, new) in &d.flips {
            table.add_row(vec![
                cell(style, machine),
                flag.name().to_string(),
                old.to_string(),
                new.to_string(),
            ]);
        }
        writeln!(out, "{table}")?;
    }
    Ok(())
}

/// Writes `check` as tables.
pub fn check(report: &CheckReport, out: &mut dyn Write, style: Style) -> io::Result<()> {
    let result = report.result;
    let failed = result.violations().count();
    if style == Style::Markdown {
        writeln!(out, "## fsmlog check\n")?;
    }
    let verdict = if failed == 0 {
        "passed".to_string()
    } else {
        format!("FAILED: {failed} pairs beyond the baseline")
    };
    let baseline = report.baseline.map_or_else(
        || "no baseline".to_string(),
        |p| format!("baseline {}", cell(style, &p.display().to_string())),
    );
    let prefix = if style == Style::Markdown { "**" } else { "" };
    writeln!(out, "{prefix}{verdict}{prefix}")?;
    if style == Style::Markdown {
        writeln!(out)?;
    }
    writeln!(
        out,
        "rules {} · {baseline} · {} · {} · {}",
        report.rules,
        count(report.summary.machines, "machine"),
        count(report.summary.events, "event"),
        count(report.summary.errors.len() as u64, "input error")
    )?;
    heading(style, "Unexpected pairs against the baseline", out)?;
    if result.pairs.is_empty() {
        writeln!(out, "none")?;
        return Ok(());
    }
    let mut table = new_table(
        style,
        &[
            "State", "Event", "Baseline", "Count", "Machines", "Share", "Ceiling", "Verdict",
        ],
    );
    for pair in &result.pairs {
        let (count, machines) = pair
            .tally
            .as_ref()
            .map_or((0, 0), |t| (t.count, t.machines));
        let verdict = match (&pair.violation, pair.baseline) {
            (Some(v), _) => v.id().to_string(),
            (None, BaselineState::Absent) => "not seen".to_string(),
            (None, _) => "accepted".to_string(),
        };
        table.add_row(vec![
            pair.state.name().to_string(),
            pair.event.name().to_string(),
            pair.baseline.name().to_string(),
            count.to_string(),
            machines.to_string(),
            format!("{:.1}%", pair.share * 100.0),
            pair.ceiling
                .map_or_else(|| "—".to_string(), |c| format!("{:.1}%", c * 100.0)),
            verdict,
        ]);
    }
    align_right(&mut table, &[3, 4, 5, 6]);
    writeln!(out, "{table}")
}

/// `replay -o table`: a heading and a table per machine.
pub struct TraceTable;

impl TraceRenderer for TraceTable {
    fn begin(&mut self, rules: &str, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "rules {rules}")
    }

    fn machine(&mut self, trace: &Trace, out: &mut dyn Write) -> io::Result<()> {
        let c = &trace.container;
        writeln!(
            out,
            "\nmachine {} ({}) · state {} · crash loop {} · failed reclaim {} · {} stored events",
            escape::text(&trace.machine),
            escape::text(&trace.source),
            c.state(),
            c.crash_loop,
            c.failed_machine_reclaim,
            c.events.len()
        )?;
        let mut table = new_table(
            Style::Terminal,
            &[
                "Time", "Event", "From", "Verdict", "To", "Stored", "Message",
            ],
        );
        for step in &trace.steps {
            table.add_row(vec![
                time(step.time),
                step.event.name().to_string(),
                step.from.name().to_string(),
                step.verdict.name().to_string(),
                step.to.name().to_string(),
                if step.stored { "yes" } else { "no" }.to_string(),
                escape::text(&step.message).into_owned(),
            ]);
        }
        writeln!(out, "{table}")?;
        for unknown in &trace.unknown {
            writeln!(
                out,
                "unknown event \"{}\" at line {} (skipped)",
                escape::text(&unknown.name),
                unknown.line
            )?;
        }
        Ok(())
    }

    fn end(&mut self, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }
}

/// A rule set as a state × event matrix: the target state, `self`, or `—` for unexpected.
pub fn rules_matrix(rules: &Ruleset) -> Table {
    let mut header = vec!["state \\ event"];
    header.extend(EventKind::ALL.iter().map(|e| e.name()));
    let mut table = new_table(Style::Terminal, &header);
    for state in State::ALL {
        let mut row = vec![state.name().to_string()];
        for event in EventKind::ALL {
            row.push(match rules.lookup(state, event) {
                Some(target) => target.to_string(),
                None => "—".to_string(),
            });
        }
        table.add_row(row);
    }
    table
}
