//! `fsmlog graph`: the rule set, or what the fleet did, as a picture.

use std::io::Write;

use anyhow::Result;

use super::shared::{Outcome, finish, print_problems, stdout};
use crate::aggregate::Summary;
use crate::cli::GraphArgs;
use crate::fleet::Inputs;
use crate::graph::Graph;
use crate::render::format::GraphFormat;
use crate::render::graph::{GraphReport, dot, mermaid, svg};
use crate::rules::Ruleset;

/// Replays the fleet (if any) into a graph and draws it.
pub fn run(args: &GraphArgs) -> Result<Outcome> {
    let rules = Ruleset::resolve(&args.rules.name)?;
    let (graph, summary) = if args.input.paths.is_empty() {
        (Graph::of_rules(&rules), Summary::default())
    } else {
        let inputs = Inputs::resolve(&args.input.sources())?;
        let (counting, _) = crate::fleet::counted(&inputs, &args.window.spec(), None)?;
        let (mut graph, summary) = crate::fleet::fleet_graph(&inputs, &rules, &counting);
        graph.add_untaken_rules(&rules);
        (graph, summary)
    };
    if !args.input.paths.is_empty() && summary.machines == 0 {
        // Not the rule set's picture in place of the fleet's: an artifact would mislead.
        print_problems(&summary.errors, &summary.skipped, &summary.notes);
        eprintln!(
            "fsmlog: no machine was read, so there is no fleet to draw (without PATH, graph draws the rule set)"
        );
        return Ok(Outcome::InputErrors);
    }
    let report = GraphReport {
        rules: &rules.name,
        graph: &graph,
        machines: summary.machines,
    };
    let mut out = stdout();
    match args.output {
        GraphFormat::Svg => svg(&report, &mut out)?,
        GraphFormat::Dot => dot(&report, &mut out)?,
        GraphFormat::Mermaid => mermaid(&report, &mut out)?,
    }
    out.flush()?;
    Ok(finish(&summary.errors, &summary.skipped, &summary.notes))
}
