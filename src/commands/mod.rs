//! One module per subcommand, each the same shape: read → replay → aggregate → render.
//! What they share (finding files, the thread pool, merging, reporting input problems) lives
//! here.

mod check;
mod diff;
mod replay;
mod report;
mod rules;

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::ops::AddAssign;
use std::path::Path;

use anyhow::{Context, Result};
use rayon::prelude::*;

use crate::aggregate::Summary;
use crate::cli::{Cli, Command, InputArgs};
use crate::diff::RuleDiff;
use crate::input::merge::{Merged, Merger};
use crate::input::{self, Format, InputError, InputOptions, Record};

/// How a command ended, for the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Exit 0.
    Ok,
    /// Exit 1: `check`, `diff` or `rules lint` found what it gates on.
    GateFailed,
    /// Exit 2: some input could not be read; the rest was reported.
    InputErrors,
}

/// Runs the command the command line names.
pub fn run(cli: Cli) -> Result<Outcome> {
    match cli.command {
        Command::Report(args) => report::run(&args),
        Command::Replay(args) => replay::run(&args),
        Command::Diff(args) => diff::run(&args),
        Command::Check(args) => check::run(&args),
        Command::Rules(command) => rules::run(&command),
    }
}

/// What a command accumulates over the fleet: it adds up with `+=` and takes the input's
/// problems and file counts.
pub(crate) trait Tally: Default + AddAssign + Send {
    /// A problem met while reading.
    fn input_error(&mut self, error: InputError);
    /// A file found in a directory that holds no machine log.
    fn skipped(&mut self, path: String, reason: String);
    /// A file that was read; `format` of its first machine, if it had one.
    fn file_read(&mut self, format: Option<Format>);
}

impl Tally for Summary {
    fn input_error(&mut self, error: InputError) {
        self.errors.push(error);
    }

    fn skipped(&mut self, path: String, reason: String) {
        self.skipped.push((path, reason));
    }

    fn file_read(&mut self, format: Option<Format>) {
        self.files += 1;
        if let Some(format) = format {
            *self.formats.entry(format).or_default() += 1;
        }
    }
}

impl Tally for RuleDiff {
    fn input_error(&mut self, error: InputError) {
        self.errors.push(error);
    }

    fn skipped(&mut self, path: String, reason: String) {
        self.skipped.push((path, reason));
    }

    fn file_read(&mut self, _format: Option<Format>) {
        self.files += 1;
    }
}

/// The files and reading options every reading command shares, resolved.
pub(crate) struct Inputs {
    pub files: Vec<input::InputFile>,
    pub errors: Vec<InputError>,
    pub options: InputOptions,
    pool: Option<rayon::ThreadPool>,
}

impl Inputs {
    /// Finds the files; missing paths become input errors.
    pub fn resolve(args: &InputArgs) -> Result<Inputs> {
        let (files, errors) = input::discover(&args.paths);
        Ok(Inputs {
            files,
            errors,
            options: InputOptions {
                format: args.format,
                machine_id: args.machine_id.clone(),
                zones: args.tz.clone(),
            },
            pool: match args.threads {
                Some(n) => Some(
                    rayon::ThreadPoolBuilder::new()
                        .num_threads(n)
                        .build()
                        .context("cannot start the worker threads")?,
                ),
                None => None,
            },
        })
    }

    /// Runs `work` on the chosen number of threads.
    pub fn install<T: Send>(&self, work: impl FnOnce() -> T + Send) -> T {
        match &self.pool {
            Some(pool) => pool.install(work),
            None => work(),
        }
    }

    /// Learns which machines have records in several places (see [`Merger::plan`]).
    pub fn merger(&self) -> Merger {
        self.install(|| Merger::plan(&self.files, &self.options))
    }

    /// Reads every file in parallel and folds each machine into a tally; the result does not
    /// depend on the number of threads.
    pub fn fold<T: Tally>(&self, per_machine: impl Fn(&mut T, Merged) + Sync) -> T {
        let merger = self.merger();
        let mut total = self.install(|| {
            self.files
                .par_iter()
                .map(|file| {
                    let mut tally = T::default();
                    let mut format = None;
                    let mut skipped = false;
                    input::read_file(file, &self.options, &mut |record| match record {
                        Record::Machine(log) => {
                            format.get_or_insert(log.format);
                            if let Some(merged) = merger.offer(log) {
                                per_machine(&mut tally, merged);
                            }
                        }
                        Record::Error(err) => tally.input_error(err),
                        Record::Skipped { path, reason } => {
                            skipped = true;
                            tally.skipped(path, reason);
                        }
                    });
                    if !skipped {
                        tally.file_read(format);
                    }
                    tally
                })
                .reduce(T::default, |mut a, b| {
                    a += b;
                    a
                })
        });
        for merged in merger.drain() {
            per_machine(&mut total, merged);
        }
        for error in &self.errors {
            total.input_error(error.clone());
        }
        total
    }
}

/// Tells on stderr what could not be read, so that stdout stays clean for programs.
pub(crate) fn print_problems(errors: &[InputError], skipped: &[(String, String)]) {
    let stderr = io::stderr();
    let mut err = stderr.lock();
    for (path, reason) in skipped {
        let _ = writeln!(err, "fsmlog: skipped {path}: {reason}");
    }
    for error in errors {
        let _ = writeln!(err, "fsmlog: {error}");
    }
}

/// Standard output, buffered.
pub(crate) fn stdout() -> BufWriter<io::StdoutLock<'static>> {
    BufWriter::new(io::stdout().lock())
}

/// Writes a file through `write`, naming the file in any error.
pub(crate) fn write_file(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> Result<()>,
) -> Result<()> {
    let file = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut out = BufWriter::new(file);
    write(&mut out).with_context(|| format!("cannot write {}", path.display()))?;
    out.flush()
        .with_context(|| format!("cannot write {}", path.display()))
}
