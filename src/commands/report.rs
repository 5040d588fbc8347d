//! `fsmlog report`: the fleet's unexpected transitions, flagged machines and disagreements.

use std::io::Write;

use crate::render::terminal::Terminal;
use anyhow::Result;

use super::{Inputs, Outcome, print_problems, stdout};
use crate::aggregate::Summary;
use crate::cli::ReportArgs;
use crate::render::{Report, render_report};
use crate::replay::replay;
use crate::rules::Ruleset;

/// Reads everything, tallies it, renders the summary.
pub fn run(args: &ReportArgs, term: &Terminal) -> Result<Outcome> {
    let rules = Ruleset::resolve(&args.rules.rules)?;
    let inputs = Inputs::resolve(&args.input)?;
    let summary = summarize(&inputs, &rules);
    let report = Report {
        rules: &rules.name,
        summary: &summary,
    };
    let mut out = stdout();
    render_report(args.output, &report, term, &mut out)?;
    out.flush()?;
    print_problems(&summary.errors, &summary.skipped);
    Ok(if summary.errors.is_empty() {
        Outcome::Ok
    } else {
        Outcome::InputErrors
    })
}

/// The fleet summary under one rule set (shared with `check`).
pub(crate) fn summarize(inputs: &Inputs, rules: &Ruleset) -> Summary {
    let mut summary: Summary = inputs.fold(|summary: &mut Summary, merged| {
        summary.add_machine(&replay(&merged.log, rules), &merged);
    });
    summary.sort();
    summary
}
