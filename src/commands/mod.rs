//! One module per subcommand, each the same shape: read → replay → aggregate → render.
//! What they share (finding files, the thread pool, reporting input problems) lives here.

mod replay;
mod report;
mod rules;

use std::io::{self, Write};

use anyhow::{Context, Result};
use rayon::prelude::*;

use crate::aggregate::Summary;
use crate::cli::{Cli, Command, InputArgs};
use crate::input::merge::Merger;
use crate::input::{self, InputError, InputOptions, Record};
use crate::replay::replay;
use crate::rules::Ruleset;

/// How a command ended, for the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Exit 0.
    Ok,
    /// Exit 1: `check` or `diff` found what it gates on.
    GateFailed,
    /// Exit 2: some input could not be read; the rest was reported.
    InputErrors,
}

/// Runs the command the command line names.
pub fn run(cli: Cli) -> Result<Outcome> {
    match cli.command {
        Command::Report(args) => report::run(&args),
        Command::Replay(args) => replay::run(&args),
        Command::Rules(command) => rules::run(&command),
    }
}

/// The options every reading command shares, resolved.
pub(crate) struct Inputs {
    pub files: Vec<input::InputFile>,
    pub errors: Vec<InputError>,
    pub options: InputOptions,
    pub rules: Ruleset,
    pool: Option<rayon::ThreadPool>,
}

impl Inputs {
    /// Resolves the rule set and finds the files; missing paths become input errors.
    pub fn resolve(args: &InputArgs) -> Result<Inputs> {
        let rules = Ruleset::resolve(&args.rules)?;
        let (files, errors) = input::discover(&args.paths);
        Ok(Inputs {
            files,
            errors,
            options: InputOptions {
                format: args.format,
                machine_id: args.machine_id.clone(),
                zones: args.tz.clone(),
            },
            rules,
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

    /// Reads, replays and tallies every file, in parallel; the result does not depend on the
    /// number of threads.
    pub fn summarize(&self) -> Summary {
        let merger = self.merger();
        let mut summary = self.install(|| {
            self.files
                .par_iter()
                .map(|file| self.summarize_file(file, &merger))
                .reduce(Summary::default, |mut a, b| {
                    a += b;
                    a
                })
        });
        for merged in merger.drain() {
            summary.add_machine(&replay(&merged.log, &self.rules), &merged);
        }
        summary.errors.extend(self.errors.iter().cloned());
        summary.sort();
        summary
    }

    fn summarize_file(&self, file: &input::InputFile, merger: &Merger) -> Summary {
        let mut summary = Summary::default();
        let mut read_any = false;
        input::read_file(file, &self.options, &mut |record| match record {
            Record::Machine(log) => {
                if !read_any {
                    read_any = true;
                    *summary.formats.entry(log.format).or_default() += 1;
                }
                if let Some(merged) = merger.offer(log) {
                    summary.add_machine(&replay(&merged.log, &self.rules), &merged);
                }
            }
            Record::Error(err) => summary.errors.push(err),
            Record::Skipped { path, reason } => summary.skipped.push((path, reason)),
        });
        if read_any || summary.skipped.is_empty() {
            summary.files += 1;
        }
        summary
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
