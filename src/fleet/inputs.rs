//! The inputs every reading command shares, resolved once: the files, the reading options and
//! the worker threads; and the parallel fold of every machine into a tally.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use anyhow::{Context, Result};
use rayon::prelude::*;

use super::progress::{self, Progress};
use super::tally::Tally;
use crate::input;
use crate::input::merge::{self, Census, Merged, Merger};
use crate::input::record::{InputError, InputOptions, ReadMode, Record};
use crate::log::Format;

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
}

/// The files and reading options every reading command shares, resolved.
pub struct Inputs {
    /// Every file listed; one reached twice is read once (see [`Inputs::readable`]).
    pub files: Vec<input::InputFile>,
    pub errors: Vec<InputError>,
    /// Entries of the paths that are not read, with the reason (see also
    /// [`Inputs::skipped_all`]).
    pub skipped: Vec<(String, String)>,
    pub options: InputOptions,
    pool: Option<rayon::ThreadPool>,
    /// The files that are a file listed before them, once every identity is known: at once
    /// for paths named on the command line, after the first pass for files found in
    /// directories, which learn theirs as they are opened.
    duplicates: OnceLock<Vec<(usize, String)>>,
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
        let early = input::duplicates(&found.files);
        let duplicates = OnceLock::new();
        if input::identities_known(&found.files) {
            let _ = duplicates.set(early.clone());
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
            early,
            duplicates,
        })
    }

    /// The files that are a file listed before them, learning the identity of any file that
    /// has not been opened yet from its path.
    fn settled(&self) -> &[(usize, String)] {
        self.duplicates.get_or_init(|| {
            self.install(|| self.files.par_iter().for_each(|f| f.learn_identity()));
            input::duplicates(&self.files)
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
    pub fn skipped_all(&self) -> Vec<(String, String)> {
        let mut all = self.skipped.clone();
        for (index, reason) in self.settled() {
            all.push((self.files[*index].display(), reason.clone()));
        }
        all
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

    /// Reads every input in parallel and folds each machine into a tally; the result does
    /// not depend on the number of threads, on timing, or on how the machines are split into
    /// files. Batches of a large array are decoded, replayed and folded on every core while
    /// the file's thread reads on; at most a few batches are in flight, so memory stays
    /// bounded. A first pass takes every record as a machine and counts each machine's
    /// records; only when a machine has several does a second pass (over spooled copies of
    /// streams) merge them.
    pub fn fold<T: Tally>(&self, per_machine: impl Fn(&mut T, Merged) + Sync) -> T {
        let mut census = Census::default();
        let learning = self.duplicates.get().is_none();
        let mut total = self.pass(&Merger::default(), Some(&census), &per_machine);
        // The first pass read every file found in a directory and learnt its identity; where
        // one turns out to be a file read already, the pass is made again without it.
        if learning && !self.settled().is_empty() {
            census = Census::default();
            total = self.pass(&Merger::default(), Some(&census), &per_machine);
        }
        let recurring = census.recurring();
        if !recurring.is_empty() {
            total = self.pass(&Merger::new(recurring), None, &per_machine);
        }
        for error in &self.errors {
            total.input_error(error.clone());
        }
        for (path, reason) in self.skipped_all() {
            total.skipped(path, reason);
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
        // The census counts machines by key, so that no id is copied for it.
        let handle = |tally: &mut T, ids: &mut Vec<u64>, record: Record| match record {
            Record::Machine(log) => {
                if census.is_some() {
                    ids.push(merge::key(&log.machine));
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
        let note = |ids: &[u64]| {
            if let Some(census) = census {
                census.note_keys(ids);
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
                            input::decode(batch.as_ref(), &mut |r| handle(&mut local, &mut ids, r));
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
        // Before the files' identities are known, every file is read (and learns its own) but
        // those known to be a repeat already.
        let twice = self.duplicates.get().unwrap_or(&self.early);
        let mut total = self
            .files
            .par_iter()
            .enumerate()
            .filter(|(i, _)| twice.binary_search_by_key(i, |d| d.0).is_err())
            .map(|(_, f)| f)
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
