//! `fsmlog explain`: per unexpected pair, what surrounds it in the logs.

use anyhow::Result;

use crate::aggregate::Summary;
use crate::cli::ExplainArgs;
use crate::diagnose::Diagnosis;
use crate::ending::Ending;
use crate::explain::{ExplainOptions, Explanation};
use crate::fleet::{Inputs, counted};
use crate::render::terminal::Terminal;
use crate::render::{self, ExplainReport};
use crate::replay::replay;
use crate::rules::Ruleset;
use crate::sink::Sink;

/// Reads everything, replays it, gathers each occurrence's context, renders.
pub fn run(args: &ExplainArgs, term: &Terminal) -> Result<Ending> {
    let rules = Ruleset::resolve(&args.rules.name)?;
    let inputs = Inputs::resolve(&args.input.sources())?;
    let (counting, shown) = counted(&inputs, &args.window.spec(), None)?;
    let options = ExplainOptions {
        only: args.pairs.clone(),
        context: args.context,
        window: counting.window,
    };
    let folded = inputs.fold(|explanation: &mut Explanation, merged| {
        let trace = replay(&merged.log, &rules);
        let mut summary = Summary::default();
        let diagnosis = Diagnosis::of(&merged.log, &trace, &rules);
        summary.add_machine(&trace, &merged, &counting, &diagnosis);
        explanation.add(&trace, summary, &options);
    });
    let (mut explanation, problems) = (folded.value, folded.problems);
    explanation.summary.files_read(folded.files);
    let verdicts = explanation
        .summary
        .verdicts(args.min_machines.min_machines, &rules.name);
    let order = args.sort.order();
    let report = ExplainReport {
        rules: &rules.name,
        explanation: &explanation,
        verdicts: &verdicts,
        window: shown.seen(&explanation.summary),
        context: args.context,
        problems: &problems,
        order: &order,
    };
    Sink::Stdout.write(|out| Ok(render::explain(args.output, &report, term, out)?))?;
    Ok(Ending::with(problems))
}
