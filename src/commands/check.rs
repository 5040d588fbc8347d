//! `fsmlog check`: the fleet gate against an accepted baseline.

use anyhow::{Context, Result, bail};

use super::job::Job;
use super::shared::gated;
use crate::cli::CheckArgs;
use crate::ending::{Ending, say};
use crate::fleet::summarize;
use crate::gate::{self, Baseline, Nothing, ReadCounts};
use crate::render::terminal::Terminal;
use crate::render::{self, CheckReport, github_annotations, messages};
use crate::sink::Sink;

/// Tallies the fleet, writes or checks the baseline, renders, and gates.
pub fn run(args: &CheckArgs, term: &Terminal) -> Result<Ending> {
    // Standard output is one stream: the baseline and the report cannot both go there.
    if args
        .write_baseline
        .as_deref()
        .is_some_and(crate::stdin::is_dash)
        && matches!(args.out.sink(), Sink::Stdout)
    {
        bail!(
            "--write-baseline -: standard output carries check's report; write the report with --out FILE, or the baseline to a file"
        );
    }
    let (job, baseline) = Job::with(&args.rules.name, &args.input, None, || {
        args.baseline.as_deref().map(Baseline::load).transpose()
    })?;
    let rules = &job.rules;
    let (counting, shown) = job.counted(&args.window, None)?;
    let (summary, problems) = summarize(&job.inputs, rules, &counting);
    let shown = shown.seen(&summary);
    if let Some(path) = &args.write_baseline {
        let written = Baseline::from_summary(&rules.name, &summary);
        Sink::to(Some(path)).write(|out| Ok(out.write_all(written.to_json().as_bytes())?))?;
        say(&messages::wrote_baseline(written.accepted.len(), path));
    }
    // With --baseline the gate checks against it, whether or not a new one is written too;
    // a freshly written baseline alone is today's state, and the gate passes against it.
    let written;
    let against = match (&baseline, &args.write_baseline) {
        (Some(given), _) => Some(given),
        (None, Some(_)) => {
            written = Baseline::from_summary(&rules.name, &summary);
            Some(&written)
        }
        (None, None) => None,
    };
    let mut result = gate::check(&summary, against).context("cannot check against the baseline")?;
    let nothing = Nothing::of(ReadCounts::of(&summary), args.allow_empty.allow_empty);
    result.nothing_read = nothing;
    let labels = args.labels.labels(&args.input);
    let report = CheckReport {
        rules: &rules.name,
        summary: &summary,
        result: &result,
        baseline: args.baseline.as_deref(),
        inputs: &args.input.paths,
        window: shown,
        problems: &problems,
        labels: &labels,
    };
    args.out
        .sink()
        .write(|out| Ok(render::check(args.output, &report, term, out)?))?;
    let verbatim = if std::env::var_os("GITHUB_ACTIONS").is_some_and(|v| v == "true") {
        github_annotations(&report)
    } else {
        String::new()
    };
    Ok(Ending {
        verbatim,
        ..gated(problems, nothing, !result.passed())
    })
}
