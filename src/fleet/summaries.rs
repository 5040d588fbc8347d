//! The results several commands ask for of the same machines judged: the fleet summary, the
//! fleet's graph beside it, the explanation of its pairs, the issues audit's gathering, and
//! the comparison of two rule sets.

use chrono::{DateTime, Utc};

use super::inputs::Inputs;
use crate::aggregate::{Counting, Summary};
use crate::diagnose::Judged;
use crate::diff::RuleDiff;
use crate::explain::{ExplainOptions, Explanation};
use crate::graph::Graph;
use crate::input::Problems;
use crate::issues::MachineFacts;
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
        summary.add(&Judged::of(&merged, rules), counting);
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
        let judged = Judged::of(&merged, rules);
        tally.graph.add(&judged, &counting.window);
        tally.summary.add(&judged, counting);
    });
    let GraphTally { graph, mut summary } = folded.value;
    summary.files_read(folded.files);
    (graph, summary, folded.problems)
}

/// Each unexpected pair's occurrences in context, with the report's summary (`explain`, and
/// the watch's explanation pages).
pub fn explain(
    inputs: &Inputs,
    rules: &Ruleset,
    counting: &Counting,
    options: &ExplainOptions,
) -> (Explanation, Problems) {
    let folded = inputs.fold(|explanation: &mut Explanation, merged| {
        explanation.add(&Judged::of(&merged, rules), counting, options);
    });
    let mut explanation = folded.value;
    explanation.summary.files_read(folded.files);
    (explanation, folded.problems)
}

/// What the issues audit gathers while reading: each machine's facts, and the report's
/// summary.
#[derive(Default)]
pub struct Gathered {
    pub machines: Vec<MachineFacts>,
    pub summary: Summary,
}

impl std::ops::AddAssign for Gathered {
    fn add_assign(&mut self, other: Gathered) {
        self.machines.extend(other.machines);
        self.summary += other.summary;
    }
}

/// Each machine's facts as they were at `cut`, and the report's summary of the input counted
/// whole (`issues`).
pub fn gather_audit(
    inputs: &Inputs,
    rules: &Ruleset,
    cut: Option<DateTime<Utc>>,
) -> (Gathered, Problems) {
    let folded = inputs.fold(|gathered: &mut Gathered, merged| {
        let judged = Judged::of(&merged, rules);
        gathered.summary.add_undiagnosed(&judged);
        gathered.machines.extend(MachineFacts::at(&judged, cut));
    });
    let mut gathered = folded.value;
    gathered.summary.files_read(folded.files);
    (gathered, folded.problems)
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
        diff.add(&Judged::of(&merged, old), &Judged::of(&merged, new), window);
    });
    let mut diff = folded.value;
    diff.files = folded.files.count;
    (diff, folded.problems)
}
