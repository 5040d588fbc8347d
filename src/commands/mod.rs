//! One module per subcommand, each the same shape: read → replay → aggregate → render.
//! What they share (finding files, the thread pool, merging, reporting input problems) lives
//! here.

mod check;
mod diff;
mod explain;
mod graph;
mod issues;
mod progress;
mod propose;
mod replay;
mod report;
mod rules;
mod shell;

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
use crate::explain::Explanation;
use crate::gate::Nothing;
use crate::input::merge::{Census, Merged, Merger};
use crate::input::{self, Format, InputError, InputOptions, Record};
use crate::render::escape;
use crate::render::terminal::Terminal;
use crate::window::{Window, WindowSpec};
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
    let term = Terminal::detect(cli.color, cli.wide);
    match cli.command {
        Command::Report(args) => report::run(&args, &term),
        Command::Replay(args) => replay::run(&args, &term),
        Command::Diff(args) => diff::run(&args, &term),
        Command::Check(args) => check::run(&args, &term),
        Command::Explain(args) => explain::run(&args, &term),
        Command::Graph(args) => graph::run(&args),
        Command::Issues(args) => issues::run(&args, &term),
        Command::Rules(command) => rules::run(&command, &term),
        Command::Completions { shell } => shell::completions(shell),
        Command::Man => shell::man(),
    }
}

/// What a command accumulates over the fleet: it adds up with `+=` and takes the input's
/// problems and file counts.
pub(crate) trait Tally: Default + AddAssign + Send {
    /// A problem met while reading.
    fn input_error(&mut self, error: InputError);
    /// What an ambiguous input was taken for.
    fn note(&mut self, note: InputError);
    /// A file found in a directory that holds no machine log.
    fn skipped(&mut self, path: String, reason: String);
    /// A file that was read; the format name of its first machine, if it had one.
    fn file_read(&mut self, format: Option<&'static str>);
}

impl Tally for Summary {
    fn input_error(&mut self, error: InputError) {
        self.errors.push(error);
    }

    fn note(&mut self, note: InputError) {
        self.notes.push(note);
    }

    fn skipped(&mut self, path: String, reason: String) {
        self.skipped.push((path, reason));
    }

    fn file_read(&mut self, format: Option<&'static str>) {
        self.files += 1;
        if let Some(format) = format {
            *self.formats.entry(format).or_default() += 1;
        }
    }
}

/// Implements [`Tally`] for a tally that keeps the input's problems and files in its
/// `summary`, as `report` does.
macro_rules! tally_by_summary {
    ($($tally:ty),*) => {
        $(impl $crate::commands::Tally for $tally {
            fn input_error(&mut self, error: $crate::input::InputError) {
                self.summary.input_error(error);
            }

            fn note(&mut self, note: $crate::input::InputError) {
                self.summary.note(note);
            }

            fn skipped(&mut self, path: String, reason: String) {
                self.summary.skipped(path, reason);
            }

            fn file_read(&mut self, format: Option<&'static str>) {
                self.summary.file_read(format);
            }
        })*
    };
}
pub(crate) use tally_by_summary;

tally_by_summary!(Explanation);

impl Tally for RuleDiff {
    fn input_error(&mut self, error: InputError) {
        self.errors.push(error);
    }

    fn note(&mut self, note: InputError) {
        self.notes.push(note);
    }

    fn skipped(&mut self, path: String, reason: String) {
        self.skipped.push((path, reason));
    }

    fn file_read(&mut self, _format: Option<&'static str>) {
        self.files += 1;
    }
}

/// The files and reading options every reading command shares, resolved.
pub(crate) struct Inputs {
    pub files: Vec<input::InputFile>,
    pub errors: Vec<InputError>,
    /// Entries of the paths that are not read, with the reason.
    pub skipped: Vec<(String, String)>,
    pub options: InputOptions,
    pool: Option<rayon::ThreadPool>,
}

impl Inputs {
    /// Finds the files; missing paths become input errors.
    pub fn resolve(args: &InputArgs) -> Result<Inputs> {
        let found = input::discover(&args.paths);
        Ok(Inputs {
            files: found.files,
            errors: found.errors,
            skipped: found.skipped,
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

    /// Learns which machines have several records by reading every input once without its
    /// events (streams are spooled on the way), for a command that hands machines on as it
    /// reads them and so must know beforehand.
    pub fn merger(&self) -> Merger {
        let options = InputOptions {
            ids_only: true,
            bytes_read: None,
            ..self.options.clone()
        };
        let census = Census::default();
        self.install(|| {
            self.files.par_iter().for_each(|file| {
                let mut ids = Vec::new();
                input::read_file_decoded(file, &options, &mut |record| {
                    if let Record::Machine(log) = record {
                        ids.push(log.machine);
                    }
                });
                census.note(ids.iter().map(String::as_str));
            })
        });
        Merger::new(census.recurring())
    }

    /// Reads every input in parallel and folds each machine into a tally; the result does
    /// not depend on the number of threads, on timing, or on how the machines are split into
    /// files. Batches of a large array are decoded, replayed and folded on every core while
    /// the file's thread reads on; at most a few batches are in flight, so memory stays
    /// bounded. A first pass takes every record as a machine and counts each machine's
    /// records; only when a machine has several does a second pass (over spooled copies of
    /// streams) merge them.
    pub fn fold<T: Tally>(&self, per_machine: impl Fn(&mut T, Merged) + Sync) -> T {
        let census = Census::default();
        let mut total = self.pass(&Merger::default(), Some(&census), &per_machine);
        let recurring = census.recurring();
        if !recurring.is_empty() {
            total = self.pass(&Merger::new(recurring), None, &per_machine);
        }
        for error in &self.errors {
            total.input_error(error.clone());
        }
        for (path, reason) in &self.skipped {
            total.skipped(path.clone(), reason.clone());
        }
        total
    }

    /// One pass over every input, with a progress bar where one is wanted.
    fn pass<T: Tally>(
        &self,
        merger: &Merger,
        census: Option<&Census>,
        per_machine: &(impl Fn(&mut T, Merged) + Sync),
    ) -> T {
        let progress = match &self.options.bytes_read {
            Some(counter) => {
                counter.store(0, Ordering::Relaxed);
                let sizes = self.files.iter().filter_map(|f| f.size()).sum();
                Progress::start(Arc::clone(counter), sizes)
            }
            None => Progress::none(),
        };
        let total = self.install(|| self.fold_quietly(merger, census, per_machine));
        progress.finish();
        total
    }

    fn fold_quietly<T: Tally>(
        &self,
        merger: &Merger,
        census: Option<&Census>,
        per_machine: &(impl Fn(&mut T, Merged) + Sync),
    ) -> T {
        let handle = |tally: &mut T, ids: &mut Vec<String>, record: Record| match record {
            Record::Machine(log) => {
                if census.is_some() {
                    ids.push(log.machine.clone());
                }
                if let Some(merged) = merger.offer(log) {
                    per_machine(tally, merged);
                }
            }
            Record::Error(err) => tally.input_error(err),
            Record::Note(note) => tally.note(note),
            Record::Skipped { path, reason } => tally.skipped(path, reason),
            Record::Batch(_) => unreachable!("batches are decoded before they are handled"),
        };
        let note = |ids: &[String]| {
            if let Some(census) = census {
                census.note(ids.iter().map(String::as_str));
            }
        };
        let max_in_flight = 2 * rayon::current_num_threads().max(1);
        // Files fold into one tally per run of files a worker takes on (rayon's splits), not
        // a tally each: a directory of small files would otherwise build and merge one per
        // file.
        let read_one = |mut tally: T, file: &input::InputFile| {
            let decoded: Mutex<Option<T>> = Mutex::new(None);
            let in_flight = AtomicUsize::new(0);
            let mut ids = Vec::new();
            let mut format = None;
            let mut skipped = false;
            let opened = rayon::scope(|scope| {
                input::read_file(file, &self.options, &mut |record| match record {
                    Record::Batch(batch) => {
                        format
                            .get_or_insert(batch.format_name().unwrap_or(Format::ListJson.name()));
                        while in_flight.load(Ordering::Acquire) >= max_in_flight {
                            // Help with the batches in flight instead of blocking a worker
                            // that they may need.
                            if !matches!(rayon::yield_now(), Some(rayon::Yield::Executed)) {
                                std::thread::sleep(std::time::Duration::from_micros(200));
                            }
                        }
                        in_flight.fetch_add(1, Ordering::AcqRel);
                        let (decoded, in_flight, handle, note) =
                            (&decoded, &in_flight, &handle, &note);
                        scope.spawn(move |_| {
                            let mut local = T::default();
                            let mut ids = Vec::new();
                            batch.decode(&mut |r| handle(&mut local, &mut ids, r));
                            note(&ids);
                            let mut decoded = decoded.lock().unwrap_or_else(|e| e.into_inner());
                            match decoded.as_mut() {
                                Some(sum) => *sum += local,
                                None => *decoded = Some(local),
                            }
                            in_flight.fetch_sub(1, Ordering::AcqRel);
                        });
                    }
                    Record::Skipped { path, reason } => {
                        skipped = true;
                        tally.skipped(path, reason);
                    }
                    Record::Machine(log) => {
                        format.get_or_insert(log.format_name());
                        handle(&mut tally, &mut ids, Record::Machine(log));
                    }
                    other => handle(&mut tally, &mut ids, other),
                })
            });
            note(&ids);
            if let Some(sum) = decoded.into_inner().unwrap_or_else(|e| e.into_inner()) {
                tally += sum;
            }
            if opened && !skipped {
                tally.file_read(format);
            }
            tally
        };
        let mut total =
            self.files
                .par_iter()
                .fold(T::default, read_one)
                .reduce(T::default, |mut a, b| {
                    a += b;
                    a
                });
        for merged in merger.drain() {
            per_machine(&mut total, merged);
        }
        total
    }
}

/// The newest event in the input, machine by machine (one more pass over the input, for a
/// window counted back from the data's own clock).
#[derive(Default)]
struct Clock(Option<chrono::DateTime<chrono::Utc>>);

impl AddAssign for Clock {
    fn add_assign(&mut self, other: Clock) {
        self.0 = self.0.max(other.0);
    }
}

impl Tally for Clock {
    fn input_error(&mut self, _error: InputError) {}
    fn note(&mut self, _note: InputError) {}
    fn skipped(&mut self, _path: String, _reason: String) {}
    fn file_read(&mut self, _format: Option<&'static str>) {}
}

impl Inputs {
    /// The window a view counts in, and the `--now` it was counted back from. A window
    /// relative to the data's own clock needs the newest event first: one more pass.
    /// A window that ends before it begins is a usage error: a gate over it would pass on
    /// nothing.
    pub fn window(
        &self,
        spec: &WindowSpec,
    ) -> Result<(Window, Option<chrono::DateTime<chrono::Utc>>)> {
        let newest = if spec.needs_data_clock() {
            let clock: Clock = self.fold(|clock: &mut Clock, merged| {
                clock.0 = clock.0.max(merged.log.newest_event());
            });
            clock.0
        } else {
            None
        };
        let now = spec.now(newest);
        let window = spec.resolve(now);
        if let (Some(since), Some(until)) = (window.since, window.until)
            && since >= until
        {
            anyhow::bail!(
                "the window is empty: --since {} is not before --until {}",
                crate::event::format_time(since),
                crate::event::format_time(until)
            );
        }
        Ok((window, now))
    }
}

/// Tells on stderr why a gate has nothing to judge (see [`Nothing`]), after the input's
/// problems.
pub(crate) fn say_nothing_read(nothing: Option<Nothing>) {
    if let Some(nothing) = nothing {
        eprintln!(
            "fsmlog: {}, so there is nothing to gate on; check the paths, or pass --allow-empty to accept an empty input",
            crate::render::sentence::nothing(nothing)
        );
    }
}

/// Tells what could not be read (see [`print_problems`]) and ends a command that gates on
/// nothing: exit code 2 where some input could not be read, else 0.
pub(crate) fn finish(
    errors: &[InputError],
    skipped: &[(String, String)],
    notes: &[InputError],
) -> Outcome {
    print_problems(errors, skipped, notes);
    if errors.is_empty() {
        Outcome::Ok
    } else {
        Outcome::InputErrors
    }
}

/// Tells on stderr what could not be read and how ambiguous inputs were taken, so that
/// stdout stays clean for programs.
pub(crate) fn print_problems(
    errors: &[InputError],
    skipped: &[(String, String)],
    notes: &[InputError],
) {
    let stderr = io::stderr();
    let mut err = stderr.lock();
    for note in notes {
        let _ = writeln!(err, "fsmlog: note: {}", escape::text(&note.to_string()));
    }
    for (path, reason) in skipped {
        let line = format!("skipped {path}: {reason}");
        let _ = writeln!(err, "fsmlog: {}", escape::text(&line));
    }
    for error in errors {
        let _ = writeln!(err, "fsmlog: {}", escape::text(&error.to_string()));
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
