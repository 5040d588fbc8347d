//! `fsmlog replay`: every machine's events, one machine at a time, as they are read.

use std::io::{self, BufWriter, Write};

use crate::render::terminal::Terminal;
use anyhow::Result;

use super::shared::{Outcome, finish};
use crate::cli::ReplayArgs;
use crate::fleet::Inputs;
use crate::input;
use crate::input::record::Record;
use crate::render::trace_renderer;
use crate::replay::replay;
use crate::rules::Ruleset;

/// Streams the traces in input order.
pub fn run(args: &ReplayArgs, term: &Terminal) -> Result<Outcome> {
    let rules = Ruleset::resolve(&args.rules.name)?;
    let inputs = Inputs::resolve(&args.input.sources())?;
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut renderer = trace_renderer(args.output, *term);
    renderer.begin(&rules.name, &mut out)?;
    let mut errors = inputs.errors.clone();
    let mut skipped = inputs.skipped_all();
    let mut notes = Vec::new();
    let mut write_error: Option<io::Error> = None;
    let merger = inputs.merger();
    for file in inputs.readable() {
        input::read_file_decoded(file, &inputs.options, &mut |record| match record {
            Record::Machine(log) => {
                if write_error.is_none()
                    && let Some(merged) = merger.offer(log)
                {
                    let trace = replay(&merged.log, &rules);
                    if let Err(err) = renderer.machine(&trace, &mut out) {
                        write_error = Some(err);
                    }
                }
            }
            Record::Error(err) => errors.push(err),
            Record::Note(note) => notes.push(note),
            Record::Skipped { path, reason } => skipped.push((path, reason)),
            Record::Batch(_) => unreachable!("read_file_decoded decodes batches"),
        });
        if let Some(err) = write_error {
            return Err(err.into());
        }
    }
    for merged in merger.drain() {
        renderer.machine(&replay(&merged.log, &rules), &mut out)?;
    }
    renderer.end(&mut out)?;
    out.flush()?;
    errors.sort();
    skipped.sort();
    notes.sort();
    Ok(finish(&errors, &skipped, &notes))
}
