//! The fleet as `watch` judges it: the one seam the incremental judged fleet replaces. For
//! now the whole history is read again after each poll that added to it, as `report DIR`
//! reads it (and its issues as `issues DIR` judges them, after every good poll: the newest
//! poll's `machines.json` moves liveliness and last errors without an event).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Result;
use chrono::{DateTime, Utc};

use crate::aggregate::Summary;
use crate::collect::Appended;
use crate::diagnose::Diagnosis;
use crate::event::Pair;
use crate::explain::{ExplainOptions, Explanation};
use crate::fleet::{Inputs, Keep, Sources, counted, fleet_graph};
use crate::graph::Graph;
use crate::input::Problems;
use crate::input::record::{InputOptions, ReadMode};
use crate::issues::{self, EXPORTER_LAST_ERROR_THRESHOLD, Filter, MachineFacts, Policy, audit};
use crate::render::format::TableFormat;
use crate::render::terminal::Terminal;
use crate::render::{self, ExplainReport};
use crate::replay::replay;
use crate::rules::Ruleset;
use crate::window::{Period, Shown, WindowSpec};

/// The history judged: the report's summary and graph, and every machine's issues.
pub struct FleetView {
    dir: PathBuf,
    rules: Arc<Ruleset>,
    summary: Summary,
    graph: Graph,
    problems: Problems,
    window: Shown,
    judged: Vec<issues::Judged>,
    /// Counts the times the summary was read again, so a page is rendered once per change.
    generation: u64,
}

/// Every machine's facts, as the fold adds them up.
#[derive(Default)]
struct Facts(Vec<MachineFacts>);

impl std::ops::AddAssign for Facts {
    fn add_assign(&mut self, other: Facts) {
        self.0.extend(other.0);
    }
}

/// What `report DIR` reads: the history, with no option.
fn sources(dir: &Path) -> Sources {
    Sources {
        paths: vec![dir.to_path_buf()],
        options: InputOptions::default(),
        threads: None,
        progress: false,
        keep: Keep::default(),
    }
}

impl FleetView {
    /// The history in `dir` read once (a directory not made yet is an empty fleet).
    pub fn load(dir: &Path, rules: Arc<Ruleset>) -> Result<FleetView> {
        let mut view = FleetView {
            dir: dir.to_path_buf(),
            rules,
            summary: Summary::default(),
            graph: Graph::default(),
            problems: Problems::default(),
            window: Shown::default(),
            judged: Vec::new(),
            generation: 0,
        };
        if dir.exists() {
            view.read()?;
            view.audit(Utc::now())?;
        }
        Ok(view)
    }

    /// After a poll was written: the history read again where it grew, the issues judged.
    pub fn after_poll(&mut self, appended: &Appended) -> Result<()> {
        if appended.events > 0 || appended.new_machines > 0 || self.generation == 0 {
            self.read()?;
        }
        self.audit(Utc::now())
    }

    /// The report's summary of the whole history.
    pub fn summary(&self) -> &Summary {
        &self.summary
    }

    /// Every machine judged at the newest poll.
    pub fn issues(&self) -> &[issues::Judged] {
        &self.judged
    }

    /// The fleet's graph, for the page.
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// What reading the history met.
    pub fn problems(&self) -> &Problems {
        &self.problems
    }

    /// The window the summary counted in (the whole history).
    pub fn window(&self) -> Shown {
        self.window
    }

    /// The history's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The rule set it is judged by.
    pub fn rules(&self) -> Arc<Ruleset> {
        Arc::clone(&self.rules)
    }

    /// Changes each time the summary is read again.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The summary and graph, as `report -o html DIR` reads them (by day, for the page's
    /// sparklines; the counts are the same as without).
    fn read(&mut self) -> Result<()> {
        let inputs = Inputs::resolve(&sources(&self.dir))?;
        let (counting, shown) = counted(&inputs, &WindowSpec::default(), Some(Period::Day))?;
        let (mut graph, summary, problems) = fleet_graph(&inputs, &self.rules, &counting);
        graph.add_untaken_rules(&self.rules);
        self.window = shown.seen(&summary);
        self.summary = summary;
        self.graph = graph;
        self.problems = problems;
        self.generation += 1;
        Ok(())
    }

    /// Every machine's issues at `now`, as `issues -o openmetrics DIR` judges them
    /// (metal-metrics-exporter's last-error threshold, every type).
    fn audit(&mut self, now: DateTime<Utc>) -> Result<()> {
        // As `issues` reads: the BMC and the allocation's networks are read for the audit only.
        let mut sources = sources(&self.dir);
        sources.options.mode = ReadMode::Audit;
        let inputs = Inputs::resolve(&sources)?;
        let rules = &self.rules;
        let folded = inputs.fold(|facts: &mut Facts, merged| {
            let trace = replay(&merged.log, rules);
            facts.0.push(MachineFacts::of(&merged.log, &trace));
        });
        let policy = Policy {
            now,
            last_error_threshold: EXPORTER_LAST_ERROR_THRESHOLD,
            stuck_after: chrono::TimeDelta::hours(1),
        };
        self.judged = audit(folded.value.0, &policy, &Filter::default(), true);
        Ok(())
    }
}

/// One pair's explanation as `explain --pair STATE/EVENT -o html DIR` renders it.
pub fn explain_page(dir: &Path, rules: &Ruleset, pair: Pair, min_machines: u64) -> Result<Vec<u8>> {
    let inputs = Inputs::resolve(&sources(dir))?;
    let (counting, shown) = counted(&inputs, &WindowSpec::default(), None)?;
    let options = ExplainOptions {
        only: vec![pair],
        context: 3,
        window: counting.window,
    };
    let folded = inputs.fold(|explanation: &mut Explanation, merged| {
        let trace = replay(&merged.log, rules);
        let mut summary = Summary::default();
        let diagnosis = Diagnosis::of(&merged.log, &trace, rules);
        summary.add_machine(&trace, &merged, &counting, &diagnosis);
        explanation.add(&trace, summary, &options);
    });
    let (mut explanation, problems) = (folded.value, folded.problems);
    explanation.summary.files_read(folded.files);
    let verdicts = explanation.summary.verdicts(min_machines, &rules.name);
    let report = ExplainReport {
        rules: &rules.name,
        explanation: &explanation,
        verdicts: &verdicts,
        window: shown.seen(&explanation.summary),
        context: options.context,
        problems: &problems,
        order: &Default::default(),
    };
    let plain = Terminal {
        width: None,
        color: false,
        shorten: false,
        headers: true,
        template: None,
    };
    let mut out = Vec::new();
    render::explain(TableFormat::Html, &report, &plain, &mut out)?;
    Ok(out)
}
