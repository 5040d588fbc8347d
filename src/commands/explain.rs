//! `fsmlog explain`: per unexpected pair, what surrounds it in the logs.

use std::io::Write;

use anyhow::Result;

use super::shared::{Outcome, finish, stdout};
use crate::aggregate::Summary;
use crate::cli::ExplainArgs;
use crate::diagnose::Diagnosis;
use crate::explain::{ExplainOptions, Explanation};
use crate::fleet::Inputs;
use crate::render::terminal::Terminal;
use crate::render::{render_doc, view};
use crate::replay::replay;
use crate::rules::Ruleset;

/// Reads everything, replays it, gathers each occurrence's context, renders.
pub fn run(args: &ExplainArgs, term: &Terminal) -> Result<Outcome> {
    let rules = Ruleset::resolve(&args.rules.name)?;
    let inputs = Inputs::resolve(&args.input.sources())?;
    let (counting, shown) = crate::fleet::counted(&inputs, &args.window.spec(), None)?;
    let options = ExplainOptions {
        only: args.pairs.clone(),
        context: args.context,
        window: counting.window,
    };
    let mut explanation: Explanation = inputs.fold(|explanation: &mut Explanation, merged| {
        let trace = replay(&merged.log, &rules);
        let mut summary = Summary::default();
        let diagnosis = Diagnosis::of(&merged.log, &trace, &rules);
        summary.add_machine(&trace, &merged, &counting, &diagnosis);
        explanation.add(&trace, summary, &options);
    });
    let shown = shown.seen(&explanation.summary);
    let verdicts = explanation.summary.verdicts(args.min_machines);
    explanation.summary.sort();
    let mut out = stdout();
    match args.output.text() {
        None => {
            crate::render::explain_json(&rules.name, &explanation, &verdicts, &shown, &mut out)?
        }
        Some(format) => {
            let doc = view::explain::doc(&rules.name, &explanation, &verdicts, args.context);
            render_doc(&doc, format, term, &mut out)?;
        }
    }
    out.flush()?;
    let s = &explanation.summary;
    Ok(finish(&s.errors, &s.skipped, &s.notes))
}
