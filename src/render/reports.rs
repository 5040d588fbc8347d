//! What a renderer is handed: the results each command computed, with what output says about
//! them besides (the rule set's name, the window). Renderers only print these.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};

use crate::aggregate::{PairTally, Summary, Verdicts};
use crate::diff::RuleDiff;
use crate::event::Pair;
use crate::explain::{Explanation, PairContext};
use crate::gate::GateResult;
use crate::graph::Graph;
use crate::input::Problems;
use crate::issues::{Audited, IssueType};
use crate::log::Dimension;
use crate::order::PairOrder;
use crate::propose::Proposal;
use crate::replay::Trace;
use crate::window::{Period, Shown};

/// What `report` prints: the fleet summary and the rule set it was judged by.
pub struct Report<'a> {
    pub rules: &'a str,
    pub summary: &'a Summary,
    /// The window occurrences were counted in.
    pub window: Shown,
    /// The trend periods, where asked for.
    pub period: Option<Period>,
    /// The dimension the pairs' counts are broken down by (`--by partition|rack|size`).
    pub breakdown: Option<Dimension>,
    /// The transition graph of the same replay (for the HTML page).
    pub graph: Option<&'a Graph>,
    /// Each pair's verdict.
    pub verdicts: &'a Verdicts,
    /// What reading met (the JSON's `inputs`, the page's problems).
    pub problems: &'a Problems,
    /// The order the pairs are listed in (`--sort-by`).
    pub order: &'a PairOrder,
    /// Labels every series of the metrics carries (`--label`, the cuts').
    pub labels: &'a [(String, String)],
}

impl Report<'_> {
    /// The unexpected pairs in the order asked for.
    pub fn pairs(&self) -> Vec<(&Pair, &PairTally)> {
        let mut pairs = self.summary.pairs_by_count();
        self.order.sort(&mut pairs, |(p, t)| Some((*p, *t)));
        pairs
    }
}

/// What `diff` prints: the changes between two rule sets.
pub struct DiffReport<'a> {
    pub old: &'a str,
    pub new: &'a str,
    pub diff: &'a RuleDiff,
    /// The window verdict changes were counted in.
    pub window: Shown,
    pub problems: &'a Problems,
}

/// What `check` prints: the gate's verdict on the fleet.
pub struct CheckReport<'a> {
    pub rules: &'a str,
    pub summary: &'a Summary,
    pub result: &'a GateResult,
    pub baseline: Option<&'a Path>,
    /// The command line's paths (SARIF names the first as the results' location).
    pub inputs: &'a [PathBuf],
    /// The window occurrences were counted in.
    pub window: Shown,
    pub problems: &'a Problems,
    /// Labels every series of the metrics carries (`--label`, the cuts').
    pub labels: &'a [(String, String)],
}

/// What `issues` prints: every judged machine, worst first.
pub struct IssuesReport<'a> {
    pub rules: &'a str,
    /// The time the machines were judged at.
    pub now: DateTime<Utc>,
    pub summary: &'a Summary,
    pub machines: &'a [Audited],
    /// The issue types judged (after the filters), for the metrics' rows of 0.
    pub types: &'a [IssueType],
    pub problems: &'a Problems,
    /// Labels every series of the metrics carries (`--label`, the cuts').
    pub labels: &'a [(String, String)],
}

/// What `explain` prints: each pair's surroundings in the logs.
pub struct ExplainReport<'a> {
    pub rules: &'a str,
    pub explanation: &'a Explanation,
    pub verdicts: &'a Verdicts,
    /// The window occurrences were counted in.
    pub window: Shown,
    /// How many stored events before and after each occurrence were taken.
    pub context: usize,
    pub problems: &'a Problems,
    /// The order the pairs are listed in (`--sort-by`).
    pub order: &'a PairOrder,
}

impl ExplainReport<'_> {
    /// The explained pairs in the order asked for.
    pub fn pairs(&self) -> Vec<(&Pair, &PairContext)> {
        let mut pairs = self.explanation.pairs_by_count();
        self.order
            .sort(&mut pairs, |(p, c)| c.tally.as_ref().map(|t| (*p, t)));
        pairs
    }
}

/// What `rules propose` prints, as its format asks.
pub enum ProposeReport<'a> {
    /// The proposal as a rule file (`-o json`).
    RuleFile(&'a str),
    /// The proposal as a rule file written as YAML (`-o yaml`): the rule file's text.
    RuleFileYaml(&'a str),
    /// A unified diff against metal-api's events.go (`-o go`).
    Patch(&'a str),
    /// The proposal and what it changes, as `diff` shows it (`-o table`).
    Effect {
        proposal: &'a Proposal,
        /// The base rules' summary of the fleet.
        summary: &'a Summary,
        diff: &'a DiffReport<'a>,
    },
}

/// What a picture of a graph says besides the graph.
pub struct GraphReport<'a> {
    pub rules: &'a str,
    pub graph: &'a Graph,
    /// Machines read (a fleet's graph).
    pub machines: u64,
}

/// Prints traces as they come: `begin` once, `machine` per trace, `end` once.
pub trait TraceRenderer {
    /// Before the first machine.
    fn begin(&mut self, rules: &str, out: &mut dyn Write) -> io::Result<()>;
    /// One machine's trace.
    fn machine(&mut self, trace: &Trace, out: &mut dyn Write) -> io::Result<()>;
    /// After the last machine.
    fn end(&mut self, out: &mut dyn Write) -> io::Result<()>;
}
