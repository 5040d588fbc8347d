//! `fsmlog explain`: per unexpected pair, what surrounds it in the logs.

use anyhow::Result;

use super::job::Job;
use crate::cli::ExplainArgs;
use crate::ending::Ending;
use crate::explain::ExplainOptions;
use crate::fleet::explain;
use crate::render::terminal::Terminal;
use crate::render::{self, ExplainReport};
use crate::sink::Sink;

/// Reads everything, replays it, gathers each occurrence's context, renders.
pub fn run(args: &ExplainArgs, term: &Terminal) -> Result<Ending> {
    let job = Job::new(&args.rules.name, &args.input)?;
    let rules = &job.rules;
    let (counting, shown) = job.counted(&args.window, None)?;
    let options = ExplainOptions {
        only: args.pairs.clone(),
        context: args.context,
        window: counting.window,
    };
    let (explanation, problems) = explain(&job.inputs, &job.rules, &counting, &options);
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
