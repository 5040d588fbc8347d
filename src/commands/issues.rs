//! `fsmlog issues`: every machine's issues at `--now`, worst first.

use anyhow::Result;
use chrono::Utc;

use super::shared::{gated, no_metrics, no_metrics_of_nothing};
use crate::aggregate::{Counting, Summary};
use crate::cli::IssuesArgs;
use crate::diagnose::Diagnosis;
use crate::ending::Ending;
use crate::fleet::Inputs;
use crate::gate::{Nothing, ReadCounts};
use crate::input::record::ReadMode;
use crate::issues::{
    EXPORTER_LAST_ERROR_THRESHOLD, Filter, METAL_API_LAST_ERROR_THRESHOLD, MachineFacts, Policy,
    audit,
};
use crate::render::format::IssuesFormat;
use crate::render::terminal::Terminal;
use crate::render::{self, IssuesReport, judged_types};
use crate::replay::replay;
use crate::rules::Ruleset;
use crate::window::NowSpec;

/// What the audit gathers while reading: each machine, and the report's summary.
#[derive(Default)]
struct Gathered {
    machines: Vec<MachineFacts>,
    summary: Summary,
}

impl std::ops::AddAssign for Gathered {
    fn add_assign(&mut self, other: Gathered) {
        self.machines.extend(other.machines);
        self.summary += other.summary;
    }
}

/// Whether `issues list` asks for the issue types: `list` is the one path, and no file or
/// directory of that name is there (then it is read, as any path is; `./list` always is).
fn lists_types(args: &IssuesArgs) -> bool {
    let list = std::path::Path::new("list");
    matches!(args.input.paths.as_slice(), [only] if only == list)
        && std::fs::symlink_metadata(list).is_err()
}

/// `issues list`: the types fsmlog judges, as metalctl's `machine issues list` lists
/// metal-api's, and which export each needs; `--only`, `--omit` and `--severity` filter them.
fn list_types(args: &IssuesArgs, term: &Terminal) -> Result<Ending> {
    let filter = Filter {
        only: args.only.clone(),
        omit: args.omit.clone(),
        severity: args.severity,
    };
    let types = judged_types(|kind| filter.keeps(kind));
    args.out
        .sink()
        .write(|out| Ok(render::issue_types(args.output, &types, term, out)?))?;
    Ok(Ending::default())
}

/// Reads and replays everything, then judges every machine at `--now`.
pub fn run(args: &IssuesArgs, term: &Terminal) -> Result<Ending> {
    if lists_types(args) {
        return list_types(args, term);
    }
    let rules = Ruleset::resolve(&args.rules.name)?;
    let mut sources = args.input.sources();
    // The BMC and the allocation's networks: no other command reads them (nor pays for them).
    sources.options.mode = ReadMode::Audit;
    let inputs = Inputs::resolve(&sources)?;
    // A `--now` before some of the input judges the machines as they were then (a machine not
    // heard of yet is not judged at all); the input is still counted whole, as `report`
    // counts it.
    let cut = match args.now {
        Some(NowSpec::At(t)) => Some(t),
        Some(NowSpec::Wall) => Some(Utc::now()),
        _ => None,
    };
    let folded = inputs.fold(|g: &mut Gathered, merged| {
        let trace = replay(&merged.log, &rules);
        g.summary
            .add_machine(&trace, &merged, &Counting::default(), &Diagnosis::default());
        let facts = match cut {
            Some(cut) if merged.log.newest_event().is_some_and(|t| t > cut) => {
                let mut then = merged.log.clone();
                then.as_it_was_at(cut);
                if then.newest_event().is_none() {
                    return;
                }
                MachineFacts::of(&then, &replay(&then, &rules))
            }
            _ => MachineFacts::of(&merged.log, &trace),
        };
        g.machines.push(facts);
    });
    let (mut gathered, problems) = (folded.value, folded.problems);
    gathered.summary.files_read(folded.files);
    let spec = crate::window::WindowSpec {
        now: args.now.unwrap_or_default(),
        ..Default::default()
    };
    let now = spec
        .now(gathered.summary.newest_event)
        .unwrap_or_else(Utc::now);
    // The metrics are metal-metrics-exporter's, judged as it asks metal-api to judge them
    // (pkg/collector/collector.go: `LastErrorThreshold: 1 * time.Hour`); every other output
    // keeps metal-api's own default.
    let metrics = args.output == IssuesFormat::Openmetrics;
    let default_threshold = if metrics {
        EXPORTER_LAST_ERROR_THRESHOLD
    } else {
        METAL_API_LAST_ERROR_THRESHOLD
    };
    let policy = Policy {
        now,
        last_error_threshold: args.last_error_threshold.unwrap_or(default_threshold),
        stuck_after: args.stuck_after,
    };
    let filter = Filter {
        only: args.only.clone(),
        omit: args.omit.clone(),
        severity: args.severity,
    };
    // The metrics hold every machine, with a row of 0 for each type it does not have.
    let mut judged = audit(
        std::mem::take(&mut gathered.machines),
        &policy,
        &filter,
        args.all || metrics,
    );
    args.order().sort(&mut judged, |j| Some(j));
    let types = judged_types(|kind| filter.keeps(kind));
    let labels = args.labels.labels(&args.input);
    let report = IssuesReport {
        rules: &rules.name,
        now,
        summary: &gathered.summary,
        machines: &judged,
        types: &types,
        problems: &problems,
        labels: &labels,
    };
    let s = &gathered.summary;
    if metrics && no_metrics_of_nothing(s.machines, args.allow_empty.allow_empty) {
        return Ok(no_metrics(problems));
    }
    args.out
        .sink()
        .write(|out| Ok(render::issues(args.output, &report, term, out)?))?;
    let nothing = Nothing::of(
        ReadCounts::of(s),
        args.allow_empty.allow_empty || args.fail_on.is_none(),
    );
    let failed = args
        .fail_on
        .is_some_and(|at| judged.iter().any(|j| j.worst().is_some_and(|w| w >= at)));
    Ok(gated(problems, nothing, failed))
}
