//! `fsmlog replay`: every machine's events, one machine at a time, as they are read.

use std::io::{self, Write};

use anyhow::Result;

use super::job::Job;
use crate::cli::ReplayArgs;
use crate::diagnose::Judged;
use crate::ending::Ending;
use crate::fleet::{Intake, Keep, Kept, Merger, take_in};
use crate::input;
use crate::input::Problems;
use crate::input::record::Record;
use crate::log::MachineLog;
use crate::render::reports::TraceRenderer;
use crate::render::terminal::Terminal;
use crate::render::trace_renderer;
use crate::rules::Ruleset;
use crate::sink::Sink;

/// Streams the traces in input order.
pub fn run(args: &ReplayArgs, term: &Terminal) -> Result<Ending> {
    let Job { rules, inputs } = Job::new(&args.rules.name, &args.input)?;
    let mut problems = Problems {
        errors: inputs.errors.clone(),
        skipped: inputs.skipped_all(),
        ..Problems::default()
    };
    let merger = inputs.merger();
    Sink::Stdout.write(|out| {
        let mut stream = Stream {
            rules: &rules,
            merger: &merger,
            keep: &inputs.keep,
            counted: Kept::default(),
            renderer: trace_renderer(args.output, term.clone()),
            out,
            problems: &mut problems,
            write_error: None,
        };
        stream.renderer.begin(&rules.name, stream.out)?;
        for file in inputs.readable() {
            input::read_file(file, &inputs.options, &mut |record| stream.take(record));
            if let Some(err) = stream.write_error.take() {
                return Err(err.into());
            }
        }
        for mut merged in merger.drain() {
            if inputs.keep.take(&merged.log, &mut stream.counted) {
                stream.problems.notes.append(&mut merged.notes);
                let judged = Judged::of(&merged, &rules);
                stream.renderer.machine(judged.trace(), stream.out)?;
            }
        }
        stream.renderer.end(stream.out)?;
        if !inputs.keep.is_all() {
            stream
                .problems
                .notes
                .push(inputs.keep.note(&stream.counted));
        }
        let misnamed = inputs.keep.misnamed(&stream.counted);
        stream.problems.errors.extend(misnamed);
        Ok(())
    })?;
    problems.sort();
    Ok(Ending::with(problems))
}

/// Each record as it is read: a machine replayed and printed once complete, a problem kept.
struct Stream<'a> {
    rules: &'a Ruleset,
    merger: &'a Merger,
    keep: &'a Keep,
    /// Machines kept and left out by `keep`.
    counted: Kept,
    renderer: Box<dyn TraceRenderer>,
    out: &'a mut dyn Write,
    problems: &'a mut Problems,
    /// The first failed write; nothing is printed after it.
    write_error: Option<io::Error>,
}

impl Stream<'_> {
    fn take(&mut self, record: Record) {
        take_in(record, self);
    }
}

impl Intake for Stream<'_> {
    fn machine(&mut self, log: MachineLog) {
        if self.write_error.is_none()
            && let Some(mut merged) = self.merger.offer(log)
            && self.keep.take(&merged.log, &mut self.counted)
        {
            self.problems.notes.append(&mut merged.notes);
            let judged = Judged::of(&merged, self.rules);
            if let Err(err) = self.renderer.machine(judged.trace(), self.out) {
                self.write_error = Some(err);
            }
        }
    }

    fn problems(&mut self) -> &mut Problems {
        self.problems
    }
}
