//! One module per subcommand, each the same shape: read → replay → aggregate → render.
//! What they share (finding files, the thread pool, merging, reporting input problems) lives
//! here.

mod check;
mod diff;
mod progress;
mod replay;
mod report;
mod rules;

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::ops::AddAssign;
use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use rayon::prelude::*;

use crate::aggregate::Summary;
use crate::cli::{Cli, Command, InputArgs};
use crate::diff::RuleDiff;
use crate::input::merge::{Merged, Merger};
use crate::input::{self, Format, InputError, InputOptions, Record};
use progress::Progress;

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
                // Counting costs an atomic add per read; only a visible bar needs it.
                bytes_read: progress::wanted(args.quiet).then(|| Arc::new(AtomicU64::new(0))),
                ids_only: false,
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
    /// depend on the number of threads. Batches of a large array are decoded, replayed and
    /// folded on every core while the file's thread reads on; at most a few batches are in
    /// flight, so memory stays bounded.
    pub fn fold<T: Tally>(&self, per_machine: impl Fn(&mut T, Merged) + Sync) -> T {
        let progress = match &self.options.bytes_read {
            Some(counter) => {
                let sizes: u64 = self
                    .files
                    .iter()
                    .filter_map(|f| std::fs::metadata(&f.path).ok())
                    .map(|m| m.len())
                    .sum();
                // With several files, each is read twice: once to learn which machines recur.
                let passes = if self.files.len() > 1 { 2 } else { 1 };
                Progress::start(Arc::clone(counter), sizes * passes)
            }
            None => Progress::none(),
        };
        let mut total = self.install(|| self.fold_quietly(&per_machine));
        progress.finish();
        for error in &self.errors {
            total.input_error(error.clone());
        }
        total
    }

    fn fold_quietly<T: Tally>(&self, per_machine: &(impl Fn(&mut T, Merged) + Sync)) -> T {
        let merger = Merger::plan(&self.files, &self.options);
        let handle = |tally: &mut T, format: &mut Option<Format>, record: Record| match record {
            Record::Machine(log) => {
                format.get_or_insert(log.format);
                if let Some(merged) = merger.offer(log) {
                    per_machine(tally, merged);
                }
            }
            Record::Error(err) => tally.input_error(err),
            Record::Skipped { path, reason } => tally.skipped(path, reason),
            Record::Batch(_) => unreachable!("batches are decoded before they are handled"),
        };
        let max_in_flight = 2 * rayon::current_num_threads().max(1);
        let mut total = {
            self.files
                .par_iter()
                .map(|file| {
                    let decoded = Mutex::new(T::default());
                    let in_flight = AtomicUsize::new(0);
                    let mut tally = T::default();
                    let mut format = None;
                    let mut skipped = false;
                    rayon::scope(|scope| {
                        input::read_file(file, &self.options, &mut |record| match record {
                            Record::Batch(batch) => {
                                format.get_or_insert(batch.format().unwrap_or(Format::ListJson));
                                while in_flight.load(Ordering::Acquire) >= max_in_flight {
                                    // Help with the batches in flight instead of blocking a
                                    // worker that they may need.
                                    if !matches!(rayon::yield_now(), Some(rayon::Yield::Executed)) {
                                        std::thread::sleep(std::time::Duration::from_micros(200));
                                    }
                                }
                                in_flight.fetch_add(1, Ordering::AcqRel);
                                let (decoded, in_flight, handle) = (&decoded, &in_flight, &handle);
                                scope.spawn(move |_| {
                                    let mut local = T::default();
                                    let mut ignored = None;
                                    batch.decode(&mut |r| handle(&mut local, &mut ignored, r));
                                    *decoded.lock().unwrap_or_else(|e| e.into_inner()) += local;
                                    in_flight.fetch_sub(1, Ordering::AcqRel);
                                });
                            }
                            Record::Skipped { path, reason } => {
                                skipped = true;
                                tally.skipped(path, reason);
                            }
                            other => handle(&mut tally, &mut format, other),
                        });
                    });
                    tally += decoded.into_inner().unwrap_or_else(|e| e.into_inner());
                    if !skipped {
                        tally.file_read(format);
                    }
                    tally
                })
                .reduce(T::default, |mut a, b| {
                    a += b;
                    a
                })
        };
        for merged in merger.drain() {
            per_machine(&mut total, merged);
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
