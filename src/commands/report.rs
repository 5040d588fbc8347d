//! `fsmlog report`: the fleet's unexpected transitions, flagged machines and disagreements.

use crate::render::terminal::Terminal;
use anyhow::Result;

use super::shared::{Outcome, finish, no_metrics_of_nothing, output, say_no_metrics};
use crate::cli::ReportArgs;
use crate::fleet::{Inputs, counted, fleet_graph, summarize};
use crate::render::format::ReportFormat;
use crate::render::{Report, render_report};
use crate::rules::Ruleset;
use crate::window::Period;

/// Reads everything, tallies it, renders the summary.
pub fn run(args: &ReportArgs, term: &Terminal) -> Result<Outcome> {
    let rules = Ruleset::resolve(&args.rules.name)?;
    let inputs = Inputs::resolve(&args.input.sources())?;
    let html = args.output == ReportFormat::Html;
    // The page draws a sparkline per pair: by day unless asked otherwise.
    let period = args.by.or(html.then_some(Period::Day));
    let (counting, shown) = counted(&inputs, &args.window.spec(), period)?;
    let (summary, graph) = if html {
        let (mut graph, summary) = fleet_graph(&inputs, &rules, &counting);
        graph.add_untaken_rules(&rules);
        (summary, Some(graph))
    } else {
        (summarize(&inputs, &rules, &counting), None)
    };
    let verdicts = summary.verdicts(args.min_machines);
    let report = Report {
        rules: &rules.name,
        summary: &summary,
        window: shown.seen(&summary),
        period,
        graph: graph.as_ref(),
        verdicts: &verdicts,
    };
    let metrics = args.output == ReportFormat::Openmetrics;
    if metrics && no_metrics_of_nothing(summary.machines, args.allow_empty) {
        finish(&summary.errors, &summary.skipped, &summary.notes);
        say_no_metrics();
        return Ok(Outcome::InputErrors);
    }
    output(args.out.as_deref(), |out| {
        Ok(render_report(args.output, &report, term, out)?)
    })?;
    Ok(finish(&summary.errors, &summary.skipped, &summary.notes))
}
