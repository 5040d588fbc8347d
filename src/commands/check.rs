//! `fsmlog check`: the fleet gate against an accepted baseline.

use crate::render::terminal::Terminal;
use anyhow::{Context, Result};

use super::shared::{Outcome, output, print_problems, write_file};
use crate::cli::CheckArgs;
use crate::fleet::{Inputs, summarize};
use crate::gate::{self, Baseline, Nothing};
use crate::render::{CheckReport, github_annotations, render_check};
use crate::rules::Ruleset;

/// Tallies the fleet, writes or checks the baseline, renders, and gates.
pub fn run(args: &CheckArgs, term: &Terminal) -> Result<Outcome> {
    let rules = Ruleset::resolve(&args.rules.name)?;
    let baseline = args.baseline.as_deref().map(Baseline::load).transpose()?;
    let inputs = Inputs::resolve(&args.input.sources())?;
    let (counting, shown) = crate::fleet::counted(&inputs, &args.window.spec(), None)?;
    let summary = summarize(&inputs, &rules, &counting);
    let shown = shown.seen(&summary);
    if let Some(path) = &args.write_baseline {
        let written = Baseline::from_summary(&rules.name, &summary);
        write_file(path, |out| Ok(out.write_all(written.to_json().as_bytes())?))?;
        eprintln!(
            "fsmlog: wrote {} accepted pairs to {}",
            written.accepted.len(),
            path.display()
        );
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
    let nothing = Nothing::of(summary.machines, summary.events, args.allow_empty);
    result.nothing_read = nothing;
    let verdicts = summary.verdicts(args.min_machines);
    let report = CheckReport {
        rules: &rules.name,
        summary: &summary,
        result: &result,
        baseline: args.baseline.as_deref(),
        inputs: &args.input.paths,
        window: shown,
        verdicts: &verdicts,
    };
    output(args.out.as_deref(), |out| {
        Ok(render_check(args.output, &report, term, out)?)
    })?;
    print_problems(&summary.errors, &summary.skipped, &summary.notes);
    super::shared::say_nothing_read(nothing);
    if std::env::var_os("GITHUB_ACTIONS").is_some_and(|v| v == "true") {
        github_annotations(&report, &mut std::io::stderr().lock())?;
    }
    Ok(if !summary.errors.is_empty() || nothing.is_some() {
        Outcome::InputErrors
    } else if !result.passed() {
        Outcome::GateFailed
    } else {
        Outcome::Ok
    })
}
