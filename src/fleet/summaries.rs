//! The tallies several commands ask for of the same replay: the fleet summary, the fleet's
//! graph beside it, and the comparison of two rule sets.

use super::inputs::Inputs;
use crate::aggregate::{Counting, Summary};
use crate::diagnose::Diagnosis;
use crate::diff::RuleDiff;
use crate::graph::Graph;
use crate::input::Problems;
use crate::replay::replay;
use crate::rules::Ruleset;
use crate::window::Window;

/// The fleet summary under one rule set (shared with `check`).
pub fn summarize(inputs: &Inputs, rules: &Ruleset, counting: &Counting) -> (Summary, Problems) {
    if let Some(lean) = super::lean::summarize(inputs, rules, counting) {
        return lean;
    }
    careful(inputs, rules, counting)
}

/// The fleet summary, every machine held whole until its records are merged.
pub(super) fn careful(
    inputs: &Inputs,
    rules: &Ruleset,
    counting: &Counting,
) -> (Summary, Problems) {
    let folded = inputs.fold(|summary: &mut Summary, merged| {
        let trace = replay(&merged.log, rules);
        let diagnosis = Diagnosis::of(&merged.log, &trace, rules);
        summary.add_machine(&trace, &merged, counting, &diagnosis);
    });
    let mut summary = folded.value;
    summary.files_read(folded.files);
    (summary, folded.problems)
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

/// The fleet's graph and the report's summary of the same replay.
pub fn fleet_graph(
    inputs: &Inputs,
    rules: &Ruleset,
    counting: &Counting,
) -> (Graph, Summary, Problems) {
    let folded = inputs.fold(|tally: &mut GraphTally, merged| {
        let trace = replay(&merged.log, rules);
        tally.graph.add_trace(&trace, &counting.window);
        let diagnosis = Diagnosis::of(&merged.log, &trace, rules);
        tally
            .summary
            .add_machine(&trace, &merged, counting, &diagnosis);
    });
    let GraphTally { graph, mut summary } = folded.value;
    summary.files_read(folded.files);
    (graph, summary, folded.problems)
}

/// Every machine replayed under two rule sets, compared (`diff`, and `rules propose`'s
/// effect).
pub fn rule_diff(
    inputs: &Inputs,
    old: &Ruleset,
    new: &Ruleset,
    window: &Window,
) -> (RuleDiff, Problems) {
    let folded = inputs.fold(|diff: &mut RuleDiff, merged| {
        diff.add(&replay(&merged.log, old), &replay(&merged.log, new), window);
        diff.newest_event = diff.newest_event.max(merged.log.newest_event());
    });
    let mut diff = folded.value;
    diff.files = folded.files.count;
    (diff, folded.problems)
}
