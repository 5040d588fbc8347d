//! `fsmlog report`: the fleet's unexpected transitions, flagged machines and disagreements.

use std::io::Write;

use crate::render::terminal::Terminal;
use anyhow::Result;

use super::{Inputs, Outcome, finish, stdout};
use crate::aggregate::{Counting, Summary};
use crate::cli::ReportArgs;
use crate::render::format::ReportFormat;
use crate::render::{Report, render_report};
use crate::replay::replay;
use crate::rules::Ruleset;
use crate::window::{Period, Shown, Window, WindowSpec};

/// Reads everything, tallies it, renders the summary.
pub fn run(args: &ReportArgs, term: &Terminal) -> Result<Outcome> {
    let rules = Ruleset::resolve(&args.rules.rules)?;
    let inputs = Inputs::resolve(&args.input)?;
    let html = args.output == ReportFormat::Html;
    // The page draws a sparkline per pair: by day unless asked otherwise.
    let period = args.by.or(html.then_some(Period::Day));
    let (counting, shown) = counted(&inputs, &args.window.spec(), period)?;
    let (summary, graph) = if html {
        let (mut graph, summary) = super::graph::fleet_graph(&inputs, &rules, &counting);
        graph.add_untaken_rules(&rules);
        (summary, Some(graph))
    } else {
        (summarize(&inputs, &rules, &counting), None)
    };
    let report = Report {
        rules: &rules.name,
        summary: &summary,
        window: shown.seen(&summary),
        period,
        graph: graph.as_ref(),
    };
    let mut out = stdout();
    render_report(args.output, &report, term, &mut out)?;
    out.flush()?;
    Ok(finish(&summary.errors, &summary.skipped, &summary.notes))
}

/// What a view counts: the window (with one more pass first where it counts back from the
/// data's own clock), and the trend periods.
pub(crate) fn counted(
    inputs: &Inputs,
    spec: &WindowSpec,
    period: Option<Period>,
) -> Result<(Counting, Pending)> {
    let (window, now) = inputs.window(spec)?;
    Ok((
        Counting { window, period },
        Pending {
            window,
            now,
            spec: *spec,
        },
    ))
}

/// The window to show once the input was read: `--now` from the data's clock is the newest
/// event, known by then.
pub(crate) struct Pending {
    window: Window,
    now: Option<chrono::DateTime<chrono::Utc>>,
    spec: WindowSpec,
}

impl Pending {
    /// The window as output shows it.
    pub fn seen(&self, summary: &Summary) -> Shown {
        self.seen_at(summary.newest_event)
    }

    /// The window as output shows it, given the newest event read.
    pub fn seen_at(&self, newest: Option<chrono::DateTime<chrono::Utc>>) -> Shown {
        Shown {
            window: self.window,
            now: self.now.or_else(|| self.spec.now(newest)),
        }
    }
}

/// The fleet summary under one rule set (shared with `check`).
pub(crate) fn summarize(inputs: &Inputs, rules: &Ruleset, counting: &Counting) -> Summary {
    let mut summary: Summary = inputs.fold(|summary: &mut Summary, merged| {
        summary.add_machine(&replay(&merged.log, rules), &merged, counting);
    });
    summary.sort();
    summary
}
