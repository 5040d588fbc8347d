//! The tallies several commands ask for of the same replay: the fleet summary, and the fleet's
//! graph beside it.

use super::inputs::Inputs;
use crate::aggregate::{Counting, Summary};
use crate::diagnose::Diagnosis;
use crate::graph::Graph;
use crate::replay::replay;
use crate::rules::Ruleset;

/// The fleet summary under one rule set (shared with `check`).
pub fn summarize(inputs: &Inputs, rules: &Ruleset, counting: &Counting) -> Summary {
    let mut summary: Summary = inputs.fold(|summary: &mut Summary, merged| {
        let trace = replay(&merged.log, rules);
        let diagnosis = Diagnosis::of(&merged.log, &trace, rules);
        summary.add_machine(&trace, &merged, counting, &diagnosis);
    });
    summary.sort();
    summary
}

/// A fleet's graph and the report's summary of the same replay, added up together.
#[derive(Default)]
struct GraphTally {
    graph: Graph,
    summary: Summary,
}

impl std::ops::AddAssign for GraphTally {
    fn add_assign(&mut self, other: GraphTally) {
        self.graph += other.graph;
        self.summary += other.summary;
    }
}

super::tally::tally_by_summary!(GraphTally);

/// The fleet's graph and the report's summary of the same replay.
pub fn fleet_graph(inputs: &Inputs, rules: &Ruleset, counting: &Counting) -> (Graph, Summary) {
    let mut tally: GraphTally = inputs.fold(|tally: &mut GraphTally, merged| {
        let trace = replay(&merged.log, rules);
        tally.graph.add_trace(&trace, &counting.window);
        let diagnosis = Diagnosis::of(&merged.log, &trace, rules);
        tally
            .summary
            .add_machine(&trace, &merged, counting, &diagnosis);
    });
    tally.summary.sort();
    (tally.graph, tally.summary)
}
