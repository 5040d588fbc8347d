//! `fsmlog graph`: the rule set, or what the fleet did, as a picture.

use anyhow::Result;

use super::job::Job;
use crate::cli::GraphArgs;
use crate::ending::{Ending, Gate};
use crate::fleet::fleet_graph;
use crate::graph::Graph;
use crate::input::Problems;
use crate::render::{self, GraphReport, messages};
use crate::sink::Sink;

/// Replays the fleet (if any) into a graph and draws it.
pub fn run(args: &GraphArgs) -> Result<Ending> {
    let fleet = !args.input.paths.is_empty();
    let (rules, graph, machines, problems) = if fleet {
        let job = Job::new(&args.rules.name, &args.input)?;
        let (counting, _) = job.counted(&args.window, None)?;
        let (mut graph, summary, problems) = fleet_graph(&job.inputs, &job.rules, &counting);
        graph.add_untaken_rules(&job.rules);
        (job.rules, graph, summary.machines, problems)
    } else {
        let rules = Job::rules(&args.rules.name)?;
        let graph = Graph::of_rules(&rules);
        (rules, graph, 0, Problems::default())
    };
    if fleet && machines == 0 {
        // Not the rule set's picture in place of the fleet's: an artifact would mislead.
        return Ok(Ending {
            after: vec![messages::no_fleet()],
            gate: Gate::Refused,
            ..Ending::with(problems)
        });
    }
    let report = GraphReport {
        rules: &rules.name,
        graph: &graph,
        machines,
    };
    Sink::Stdout.write(|out| Ok(render::graph(args.output, &report, out)?))?;
    Ok(Ending::with(problems))
}
