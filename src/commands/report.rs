//! `fsmlog report`: the fleet's unexpected transitions, flagged machines and disagreements.

use anyhow::{Result, bail};

use super::job::Job;
use super::shared::{no_metrics, no_metrics_of_nothing};
use crate::aggregate::Breakdown;
use crate::cli::ReportArgs;
use crate::ending::Ending;
use crate::fleet::{fleet_graph, summarize};
use crate::log::Dimension;
use crate::render::format::ReportFormat;
use crate::render::terminal::Terminal;
use crate::render::{self, Report};
use crate::window::Period;

/// Reads everything, tallies it, renders the summary.
pub fn run(args: &ReportArgs, term: &Terminal) -> Result<Ending> {
    let job = Job::new(&args.rules.name, &args.input)?;
    let (rules, inputs) = (&job.rules, &job.inputs);
    let format = args.output;
    let html = format == ReportFormat::Html;
    let (period, dimension) = breakdowns(&args.by)?;
    // The page draws a sparkline per pair: by day unless asked otherwise.
    let period = period.or(html.then_some(Period::Day));
    let (mut counting, shown) = job.counted(&args.window, period)?;
    counting.breakdown = dimension;
    let (summary, graph, problems) = if html {
        let (mut graph, summary, problems) = fleet_graph(inputs, rules, &counting);
        graph.add_untaken_rules(rules);
        (summary, Some(graph), problems)
    } else {
        let (summary, problems) = summarize(inputs, rules, &counting);
        (summary, None, problems)
    };
    let verdicts = summary.verdicts(args.min_machines.min_machines, &rules.name);
    let order = args.sort.order();
    let labels = args.labels.labels(&args.input);
    let report = Report {
        rules: &rules.name,
        summary: &summary,
        window: shown.seen(&summary),
        period,
        breakdown: dimension,
        graph: graph.as_ref(),
        verdicts: &verdicts,
        problems: &problems,
        order: &order,
        labels: &labels,
    };
    let metrics = format == ReportFormat::Openmetrics;
    if metrics && no_metrics_of_nothing(summary.machines, args.allow_empty.allow_empty) {
        return Ok(no_metrics(problems));
    }
    args.out
        .sink()
        .write(|out| Ok(render::report(format, &report, term, out)?))?;
    Ok(Ending::with(problems))
}

/// The period and the dimension `--by` asks for: at most one of each.
fn breakdowns(by: &[Breakdown]) -> Result<(Option<Period>, Option<Dimension>)> {
    let periods: Vec<Period> = by.iter().filter_map(|b| b.period()).collect();
    let dimensions: Vec<Dimension> = by.iter().filter_map(|b| b.dimension()).collect();
    if periods.len() > 1 || dimensions.len() > 1 {
        bail!(
            "--by takes at most one period (day, week) and one of partition, rack, size (as `--by day,rack`)"
        );
    }
    Ok((periods.first().copied(), dimensions.first().copied()))
}
