//! What a command asks to read (`Sources`), resolved once into `Inputs`: the files and which
//! of them repeat one listed before, the reading options, the machines kept and the worker
//! threads; and the census read that learns which machines have several records
//! (`Inputs::merger`). The passes that fold the inputs are `fold.rs`'s.

use super::keep::Keep;
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, OnceLock};

use anyhow::{Context, Result};
use rayon::prelude::*;

use super::merge::{Census, Merger};
use super::progress;
use crate::input;
use crate::input::Skipped;
use crate::input::record::{InputError, InputOptions, ReadMode, Record};

/// What a command asks the pipeline to read: paths as the command line named them, how to read
/// them, on how many threads, and whether a progress bar may show.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    pub paths: Vec<PathBuf>,
    pub options: InputOptions,
    /// Worker threads; `None` for one per core.
    pub threads: Option<usize>,
    /// Whether a progress bar may show (it still shows only on a terminal, outside CI).
    pub progress: bool,
    /// The machines to keep (`--partition`, `--rack`, `--size`).
    pub keep: Keep,
}

/// The files and reading options every reading command shares, resolved.
pub struct Inputs {
    /// Every file listed; one reached twice is read once (see [`Inputs::readable`]).
    pub files: Vec<input::InputFile>,
    pub errors: Vec<InputError>,
    /// Entries of the paths that are not read, with the reason (see also
    /// [`Inputs::skipped_all`]).
    pub skipped: Vec<Skipped>,
    pub options: InputOptions,
    /// The machines to keep; the others are read, counted as left out, and folded into
    /// nothing.
    pub keep: Keep,
    pool: Option<rayon::ThreadPool>,
    /// The files that are a file listed before them, once every identity is known: at once
    /// for paths named on the command line, after the first pass for files found in
    /// directories, which learn theirs as they are opened.
    repeats: OnceLock<Vec<(usize, String)>>,
    /// The files known to be a repeat before anything is read (their identity was known).
    early: Vec<(usize, String)>,
}

impl Inputs {
    /// Finds the files; missing paths become input errors.
    pub fn resolve(sources: &Sources) -> Result<Inputs> {
        let pool = match sources.threads {
            Some(n) => Some(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(n)
                    .build()
                    .context("cannot start the worker threads")?,
            ),
            None => None,
        };
        let found = input::discover(&sources.paths);
        // What is a repeat already (a path named twice, `-` beside `/dev/stdin`) is never
        // read a second time, not even in the pass that learns the other files' identities:
        // a stream cannot be read twice.
        let early = input::repeats(&found.files);
        let repeats = OnceLock::new();
        if input::identities_known(&found.files) {
            let _ = repeats.set(early.clone());
        }
        Ok(Inputs {
            files: found.files,
            errors: found.errors,
            skipped: found.skipped,
            options: InputOptions {
                // Counting costs an atomic add per read; only a visible bar needs it.
                bytes_read: (sources.progress && progress::wanted())
                    .then(|| Arc::new(AtomicU64::new(0))),
                ..sources.options.clone()
            },
            pool,
            keep: sources.keep.clone(),
            early,
            repeats,
        })
    }

    /// The files that are a file listed before them, learning the identity of any file that
    /// has not been opened yet from its path.
    pub(super) fn settled(&self) -> &[(usize, String)] {
        self.repeats.get_or_init(|| {
            self.install(|| self.files.par_iter().for_each(|f| f.learn_identity()));
            input::repeats(&self.files)
        })
    }

    /// The files to read, in order: every file listed, but one reached a second time.
    pub fn readable(&self) -> impl Iterator<Item = &input::InputFile> {
        let twice = self.settled();
        self.files
            .iter()
            .enumerate()
            .filter(move |(i, _)| twice.binary_search_by_key(i, |d| d.0).is_err())
            .map(|(_, f)| f)
    }

    /// What is not read, with the reason: [`Inputs::skipped`] and each file reached twice.
    pub fn skipped_all(&self) -> Vec<Skipped> {
        let mut all = self.skipped.clone();
        for (index, reason) in self.settled() {
            all.push(Skipped {
                path: self.files[*index].display(),
                reason: reason.clone(),
            });
        }
        all
    }

    /// The chosen number of threads (`--threads`, else one per core).
    pub fn threads(&self) -> usize {
        self.pool
            .as_ref()
            .map_or_else(rayon::current_num_threads, |pool| {
                pool.current_num_threads()
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
            mode: ReadMode::IdsOnly,
            bytes_read: None,
            ..self.options.clone()
        };
        let census = Census::default();
        let readable: Vec<_> = self.readable().collect();
        self.install(|| {
            readable.par_iter().for_each(|file| {
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

    /// Whether every file's identity, and so every repeat, is known already.
    pub(super) fn repeats_known(&self) -> bool {
        self.repeats.get().is_some()
    }

    /// The files known to be a repeat: all of them once every identity is known, else those
    /// whose identity was known before anything was read.
    pub(super) fn known_repeats(&self) -> &[(usize, String)] {
        self.repeats.get().unwrap_or(&self.early)
    }

    /// The indices of the files that are none of `repeats`.
    pub(super) fn unrepeated(&self, repeats: &[(usize, String)]) -> Vec<usize> {
        (0..self.files.len())
            .filter(|i| repeats.binary_search_by_key(i, |d| d.0).is_err())
            .collect()
    }
}
