//! Tables for people: the terminal (comfy-table) and Markdown for pull-request comments.

use std::io::{self, IsTerminal, Write};

use comfy_table::presets::{ASCII_MARKDOWN, UTF8_FULL_CONDENSED};
use comfy_table::{CellAlignment, ContentArrangement, Table};

use super::{Report, TraceRenderer, time};
use crate::event::{EventKind, State};
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

fn align_right(table: &mut Table, columns: &[usize]) {
    for &i in columns {
        if let Some(column) = table.column_mut(i) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
}

fn heading(style: Style, text: &str, out: &mut dyn Write) -> io::Result<()> {
    match style {
        Style::Terminal => writeln!(out, "\n{text}"),
        Style::Markdown => writeln!(out, "\n### {text}\n"),
    }
}

fn machine_list(ids: &std::collections::BTreeSet<String>) -> String {
    if ids.is_empty() {
        return "none".to_string();
    }
    let mut listed: Vec<&str> = ids
        .iter()
        .take(LISTED_MACHINES)
        .map(String::as_str)
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
        "rules {} · {} files · {} machines · {} events ({} replayed, {} rejected, {} unknown, {} duplicates) · {} input errors",
        report.rules,
        s.files,
        s.machines,
        s.events,
        s.replayed,
        s.rejected,
        unknown,
        s.duplicates,
        s.errors.len()
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
        &format!("Unexpected transitions: {} pairs", pairs.len()),
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
            let examples: Vec<&str> = t.examples.iter().map(String::as_str).collect();
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
                "unknown event {name:?} ×{} on {} machines",
                t.count, t.machines
            )?;
        }
    }

    heading(style, "Machines", out)?;
    writeln!(
        out,
        "crash loop ({}): {}",
        s.crash_loop.len(),
        machine_list(&s.crash_loop)
    )?;
    if style == Style::Markdown {
        writeln!(out)?;
    }
    writeln!(
        out,
        "failed reclaim ({}): {}",
        s.failed_machine_reclaim.len(),
        machine_list(&s.failed_machine_reclaim)
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
            trace.machine,
            trace.source,
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
                step.message.clone(),
            ]);
        }
        writeln!(out, "{table}")?;
        for unknown in &trace.unknown {
            writeln!(
                out,
                "unknown event {:?} at line {} (skipped)",
                unknown.name, unknown.line
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
