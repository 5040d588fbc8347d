//! `fsmlog diff`: every machine replayed under two rule sets, and what changes.

use anyhow::Result;

use super::job::Job;
use super::shared::gated;
use crate::cli::{DiffArgs, FailOn};
use crate::ending::Ending;
use crate::fleet::rule_diff;
use crate::gate::{Nothing, ReadCounts};
use crate::render::terminal::Terminal;
use crate::render::{self, DiffReport};
use crate::sink::Sink;

/// Replays under both rule sets, compares, renders, and gates on `--fail-on`.
pub fn run(args: &DiffArgs, term: &Terminal) -> Result<Ending> {
    let (job, new) = Job::with(&args.old, &args.input, None, || Job::rules(&args.new))?;
    let old = &job.rules;
    let (counting, shown) = job.counted(&args.window, None)?;
    let (diff, problems) = rule_diff(&job.inputs, old, &new, &counting.window);
    let report = DiffReport {
        old: &old.name,
        new: &new.name,
        diff: &diff,
        window: shown.seen_at(diff.newest_event),
        problems: &problems,
    };
    Sink::Stdout.write(|out| Ok(render::diff(args.output, &report, term, out)?))?;
    let failed = match args.fail_on {
        FailOn::NewlyUnexpected => diff.has_regressions(),
        FailOn::Any => !diff.changes.is_empty() || !diff.flips.is_empty(),
        FailOn::Never => false,
    };
    let read = ReadCounts {
        machines: diff.machines,
        events: diff.events + diff.unknown,
        judged: diff.events,
        in_window: diff.in_window,
    };
    let nothing = Nothing::of(
        read,
        args.allow_empty.allow_empty || args.fail_on == FailOn::Never,
    );
    Ok(gated(problems, nothing, failed))
}
