//! `fsmlog issues`: every machine's issues at `--now`, worst first.

use anyhow::Result;

use super::job::Job;
use super::shared::{gated, no_metrics, no_metrics_of_nothing};
use crate::cli::IssuesArgs;
use crate::ending::Ending;
use crate::fleet::gather_audit;
use crate::gate::{Nothing, ReadCounts};
use crate::input::record::ReadMode;
use crate::issues::{Filter, Policy, audit, cut};
use crate::render::format::IssuesFormat;
use crate::render::terminal::Terminal;
use crate::render::{self, IssuesReport, judged_types};

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
    let job = Job::reading(&args.rules.name, &args.input, Some(ReadMode::Audit))?;
    let rules = &job.rules;
    let cut = cut(args.now);
    let (mut gathered, problems) = gather_audit(&job.inputs, rules, cut);
    let metrics = args.output == IssuesFormat::Openmetrics;
    let policy = Policy::at(
        cut,
        gathered.summary.newest_event,
        metrics,
        args.last_error_threshold,
        args.stuck_after,
    );
    let now = policy.now;
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
