//! The fleet as `watch` judges it: the history in DIR read once (as `report DIR` reads it,
//! lean), then after each poll only the lines it appended, each machine judged further from
//! where it stood (`fleet::LiveFleet`, `fleet::Follow`), and the newest `machines.json` taken
//! as `issues DIR` reads it. Where the appended lines cannot be judged further as `report`
//! would read them (a torn line repaired, a line out of time order, a line that is no event),
//! the history is read again whole, and the log says why.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use chrono::{DateTime, Utc};

use crate::aggregate::Summary;
use crate::event::Pair;
use crate::explain::ExplainOptions;
use crate::fleet::{
    self, Follow, Inputs, Intake, Keep, LiveFleet, Pending, Sources, counted, take_in,
};
use crate::graph::Graph;
use crate::input::record::{InputOptions, ReadMode};
use crate::input::{self, Problems};
use crate::issues::{self, Filter, Policy, audit};
use crate::log::MachineLog;
use crate::render::format::TableFormat;
use crate::render::terminal::Terminal;
use crate::render::{self, ExplainReport};
use crate::rules::Ruleset;
use crate::window::{Period, Shown, WindowSpec};

/// The history judged: the report's summary and graph, and every machine's issues.
pub struct FleetView {
    dir: PathBuf,
    rules: &'static Ruleset,
    /// The fleet judged so far, and where its day files were read up to; `None` before the
    /// history holds a file.
    live: Option<(LiveFleet<'static>, Follow)>,
    /// Whether `machines.json` was there when the history was read.
    listed_when_read: bool,
    summary: Summary,
    graph: Graph,
    problems: Problems,
    window: Shown,
    pending: Option<Pending>,
    judged: Vec<issues::Audited>,
    /// Counts the times the summary changed, so a page is rendered once per change.
    generation: u64,
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
    /// The history in `dir` read once (a directory not made yet is an empty fleet). The rule
    /// set lives as long as the process: the judged machines hold on to it.
    pub fn load(dir: &Path, rules: &'static Ruleset) -> Result<FleetView> {
        let mut view = FleetView {
            dir: dir.to_path_buf(),
            rules,
            live: None,
            listed_when_read: false,
            summary: Summary::default(),
            graph: Graph::default(),
            problems: Problems::default(),
            window: Shown::default(),
            pending: None,
            judged: Vec::new(),
            generation: 0,
        };
        view.read()?;
        view.judge(Utc::now(), listed(dir))?;
        Ok(view)
    }

    /// After a poll was written: its lines judged, the newest `machines.json` taken, the
    /// issues judged. Says why where the history had to be read again whole.
    pub fn after_poll(&mut self) -> Result<Option<String>> {
        let listed_now = self.dir.join("machines.json").exists();
        let mut reread = None;
        match &mut self.live {
            Some((live, follow)) if self.listed_when_read || !listed_now => {
                if let Err(why) = follow.appended(live) {
                    reread = Some(why.0);
                }
            }
            _ => reread = Some(String::new()),
        }
        // What `machines.json` says is taken whole at each poll; where some of it cannot be
        // read, the history is read again whole, so that its problems are said as `report`
        // says them (the read at start met them too).
        let listed = listed(&self.dir);
        if reread.is_none() && !listed.problems.errors.is_empty() {
            reread = Some("machines.json holds what is no machine".to_string());
        }
        if reread.is_some() {
            self.read()?;
        }
        self.judge(Utc::now(), listed)?;
        Ok(reread.filter(|why| !why.is_empty()))
    }

    /// The report's summary of the whole history.
    pub fn summary(&self) -> &Summary {
        &self.summary
    }

    /// Every machine judged at the newest poll.
    pub fn issues(&self) -> &[issues::Audited] {
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
    pub fn rules(&self) -> &'static Ruleset {
        self.rules
    }

    /// Changes each time the summary may have changed.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Reads the history whole, as `report -o html DIR` reads it (by day, for the page's
    /// sparklines; the counts are the same as without), each machine kept to be judged
    /// further.
    fn read(&mut self) -> Result<()> {
        self.live = None;
        self.problems = Problems::default();
        let listed = self.dir.join("machines.json").exists();
        if !self.dir.join("events").exists() && !listed {
            return Ok(());
        }
        // Where the files end is taken first: a line appended while they are read is read
        // again (and counted once) rather than missed.
        let follow = Follow::start(&self.dir)
            .with_context(|| format!("{}: cannot read", self.dir.display()))?;
        let inputs = Inputs::resolve(&sources(&self.dir))?;
        let (counting, pending) = counted(&inputs, &WindowSpec::default(), Some(Period::Day))?;
        let (live, problems) = LiveFleet::load(&self.dir, &inputs, self.rules, &counting);
        self.live = Some((live, follow));
        self.listed_when_read = listed;
        self.problems = problems;
        self.pending = Some(pending);
        Ok(())
    }

    /// The newest `machines.json` taken (as the audit reads it), then the summary, the
    /// graph, and every machine's issues at `now`, as `issues -o openmetrics DIR` judges
    /// them (metal-metrics-exporter's last-error threshold, every type).
    fn judge(&mut self, now: DateTime<Utc>, listed: Listed) -> Result<()> {
        self.generation += 1;
        let Some((live, _)) = &mut self.live else {
            return Ok(());
        };
        live.list_all(&listed.machines);
        let summary = live.summary();
        let mut graph = live.graph();
        graph.add_untaken_rules(self.rules);
        if let Some(pending) = &self.pending {
            self.window = pending.seen(&summary);
        }
        let policy = Policy::for_metrics(now);
        self.judged = audit(live.audit_facts(), &policy, &Filter::default(), true);
        self.summary = summary;
        self.graph = graph;
        Ok(())
    }
}

/// What `machines.json` says of each machine besides its events, read as the audit reads it
/// (the BMC and the allocation's networks too), and what reading it met; none where it is not
/// there.
#[derive(Default)]
struct Listed {
    machines: HashMap<String, MachineLog>,
    problems: Problems,
}

impl Intake for Listed {
    fn machine(&mut self, log: MachineLog) {
        self.machines.insert(log.machine.clone(), log);
    }

    fn problems(&mut self) -> &mut Problems {
        &mut self.problems
    }
}

/// `machines.json` in `dir`, read as the audit reads it.
fn listed(dir: &Path) -> Listed {
    let mut listed = Listed::default();
    let path = dir.join("machines.json");
    let Ok(file) = std::fs::File::open(&path) else {
        return listed;
    };
    let options = InputOptions {
        mode: ReadMode::Audit,
        ..InputOptions::default()
    };
    let name = path.display().to_string();
    input::read_reader(
        std::io::BufReader::new(file),
        &name,
        &options,
        &mut |record| take_in(record, &mut listed),
    );
    listed
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
    let (explanation, problems) = fleet::explain(&inputs, rules, &counting, &options);
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

#[cfg(test)]
#[path = "judge_tests.rs"]
mod tests;
