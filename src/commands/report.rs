//! `fsmlog report`: the fleet's unexpected transitions, flagged machines and disagreements.

use std::io::{self, BufWriter, Write};

use anyhow::Result;

use super::{Inputs, Outcome, print_problems};
use crate::cli::ReportArgs;
use crate::render::{Report, render_report};

/// Reads everything, tallies it, renders the summary.
pub fn run(args: &ReportArgs) -> Result<Outcome> {
    let inputs = Inputs::resolve(&args.input)?;
    let summary = inputs.summarize();
    let report = Report {
        rules: &inputs.rules.name,
        summary: &summary,
    };
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    render_report(args.output, &report, &mut out)?;
    out.flush()?;
    print_problems(&summary.errors, &summary.skipped);
    Ok(if summary.errors.is_empty() {
        Outcome::Ok
    } else {
        Outcome::InputErrors
    })
}
