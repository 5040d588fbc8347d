//! The history read lean: raw streams whose machines' lines come in time order (a collector's
//! day files, read in day order) judged as they are read, each line handed on alone
//! (`ReadMode::Lines`) to its machine's `Judging`, so that memory holds per machine only what
//! the judgement keeps, never the stream. A machine whose lines do not continue what came
//! before it (a line older than the one before, a time equal to one of another file, a gap
//! marker behind its events, a record with events that is no raw line) falls back to the
//! careful path: a second pass reads its records whole and merges them as every fold does.
//! The fast-path contract holds: the answer is exactly the careful path's.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use foldhash::fast::RandomState;

use super::fold::Folded;
use super::inputs::Inputs;
use super::merge::{self, Census, Merger};
use super::spread::{self, Part};
use crate::aggregate::{Counting, Summary};
use crate::diagnose::Judged;
use crate::event::Event;
use crate::input::record::{ReadMode, Record, StreamLines};
use crate::input::{self, InputFile, Problems, StreamLine};
use crate::judge::{Facts, Judging};
use crate::log::{Format, MachineLog};
use crate::rules::Ruleset;

/// The fleet summary read lean, or `None` where the inputs are not raw streams (and lists)
/// that this path reads: then the careful fold answers.
pub(super) fn summarize(
    inputs: &Inputs,
    rules: &Ruleset,
    counting: &Counting,
) -> Option<(Summary, Problems)> {
    let mut folded = read(
        inputs,
        rules,
        counting,
        false,
        &mut |read, folded| match read {
            Read::Streamed(judged) => folded.value += judged.judging.contribution(),
            Read::Merged(merged) => folded.value.add(&Judged::of(&merged, rules), counting),
        },
    )?;
    inputs.finish(&mut folded);
    let mut summary = folded.value;
    summary.files_read(folded.files);
    Some((summary, folded.problems))
}

/// A machine as the lean read hands it on: judged as its lines came, or (where they did not
/// continue its stream) its records merged whole.
pub(super) enum Read<'r> {
    Streamed(Box<Streamed<'r>>),
    Merged(Box<merge::Merged>),
}

/// A machine judged as its lines came, and where its stream stands.
pub(super) struct Streamed<'r> {
    pub judging: Judging<'r>,
    /// Its events at the newest instant read.
    pub instant: Vec<Event>,
    pub last_time: Option<DateTime<Utc>>,
    /// A gap marker no event has followed yet, and the newest marker.
    pub pending_gap: Option<DateTime<Utc>>,
    pub last_gap: Option<DateTime<Utc>>,
    /// Its records in raw streams (one a file), and whether a list holds it.
    pub stream_records: usize,
    pub listed: bool,
    /// The file of the record a merge puts first.
    pub first_source: String,
}

/// Reads raw streams (and lists) lean, handing each machine kept by the inputs' filter to
/// `each`, judged or merged; `None` where the inputs are not such (then nothing is read).
/// `recent` where the machines will be judged further (see `Judging::without_recent`). The
/// fold's own ending (`Inputs::finish`) is the caller's.
pub(super) fn read<'r>(
    inputs: &Inputs,
    rules: &'r Ruleset,
    counting: &Counting,
    recent: bool,
    each: &mut dyn FnMut(Read<'r>, &mut Folded<Summary>),
) -> Option<Folded<Summary>> {
    let files: Vec<&InputFile> = inputs.readable().collect();
    let streams = |f: &&InputFile| is_stream_file(&f.path);
    if files.is_empty()
        || !files.iter().any(streams)
        || !files.iter().all(|f| streams(f) || is_list_file(&f.path))
        || !inputs.keep.is_all()
        || inputs.options.machine_id.is_some()
        || inputs.options.format.is_some()
        || std::env::var_os("FSMLOG_LEAN").is_some_and(|v| v == "0")
    {
        return None;
    }
    // Lists first: what they say of a machine is known before its events come.
    let (lists, streams): (Vec<_>, Vec<_>) = files.into_iter().partition(|f| !streams(f));
    let order: Vec<&InputFile> = lists.into_iter().chain(streams).collect();
    let options = input::InputOptions {
        mode: ReadMode::Lines,
        threads: inputs.threads(),
        ..inputs.options.clone()
    };
    let mut folded: Folded<Summary> = Folded::default();
    let lean = spread::read(
        &order,
        &options,
        Lean::new(rules, counting, recent),
        &mut folded,
    );
    // A machine that fell back after part of it went to the summary cannot be taken back:
    // the careful path answers instead (the rare cost of a second whole read).
    if lean
        .machines
        .iter()
        .any(|(_, m)| m.careful && m.handed_over)
    {
        return None;
    }
    // The machines that fell back, read again whole and merged.
    let census = Census::default();
    let mut careful: HashMap<Arc<str>, ()> = HashMap::new();
    for (id, machine) in &lean.machines {
        if machine.careful {
            careful.insert(id.clone(), ());
            for _ in 0..machine.records {
                census.note_keys(&[merge::key(id)]);
            }
        }
    }
    // Sorted by id; a machine's judgement is large, so its place is what moves.
    let mut sorted: Vec<usize> = (0..lean.machines.len()).collect();
    sorted.sort_by(|&a, &b| lean.machines[a].0.cmp(&lean.machines[b].0));
    let mut machines: Vec<Option<(Arc<str>, Machine)>> =
        lean.machines.into_iter().map(Some).collect();
    for index in sorted {
        let (id, machine) = machines[index].take().expect("each machine once");
        if machine.careful {
            continue;
        }
        let (stub, judged) = machine.finish(&id, rules, counting);
        if inputs.keep.take(&stub, &mut folded.kept) {
            each(Read::Streamed(Box::new(judged)), &mut folded);
        }
    }
    if !careful.is_empty() {
        let merger = Merger::new(census.recurring());
        let whole = input::InputOptions {
            mode: ReadMode::Whole,
            ..inputs.options.clone()
        };
        let mut take = |merged: merge::Merged, folded: &mut Folded<Summary>| {
            if inputs.keep.take(&merged.log, &mut folded.kept) {
                folded.problems.notes.extend(merged.notes.iter().cloned());
                each(Read::Merged(Box::new(merged)), folded);
            }
        };
        for file in &order {
            input::read_file_decoded(file, &whole, &mut |record| {
                if let Record::Machine(log) = record
                    && careful.contains_key(log.machine.as_str())
                    && let Some(merged) = merger.offer(log)
                {
                    take(merged, &mut folded);
                }
            });
        }
        for merged in merger.drain() {
            take(merged, &mut folded);
        }
    }
    Some(folded)
}

/// A raw stream's file, by its name: `*.ndjson` or `*.jsonl`, compressed or not.
fn is_stream_file(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let name = name
        .strip_suffix(".gz")
        .or_else(|| name.strip_suffix(".zst"))
        .unwrap_or(name);
    name.ends_with(".ndjson") || name.ends_with(".jsonl")
}

/// The list a collector keeps beside its day files.
fn is_list_file(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == "machines.json")
}

/// The machines being read (of one part, while they are read in parts).
struct Lean<'a, 'r> {
    rules: &'r Ruleset,
    counting: &'a Counting,
    recent: bool,
    /// Where each machine is in `machines` (by foldhash: a lookup a line).
    ids: HashMap<Arc<str>, usize, RandomState>,
    /// The machines, each id held once (shared with its judgement).
    machines: Vec<(Arc<str>, Machine<'r>)>,
    /// The machines the file being read has named so far.
    touched: Vec<usize>,
}

/// One machine as its lines are read.
#[derive(Default)]
struct Machine<'r> {
    /// Boxed: large, and what moves when the fleet's machines grow in number.
    judging: Option<Box<Judging<'r>>>,
    /// Its event-less list records (what a list says of it besides events).
    listed: Vec<MachineLog>,
    /// Its records: one per file it is in.
    records: usize,
    /// The newest file that named it.
    last_file: Option<usize>,
    /// The file of the newest event read.
    instant_file: Option<usize>,
    /// The record that comes first in a merge (smallest file, then line): its file, line
    /// and format.
    first: Option<(Arc<str>, usize, Format)>,
    last_time: Option<DateTime<Utc>>,
    /// Its events at the newest instant read: a line identical to one of them is read twice
    /// and counts once.
    instant: Vec<Event>,
    /// A gap marker no event at or after its time has followed yet, and the newest marker.
    pending_gap: Option<DateTime<Utc>>,
    last_gap: Option<DateTime<Utc>>,
    duplicates: u64,
    gaps: u64,
    /// Whether it falls back to the careful path.
    careful: bool,
    /// Whether some of its share went to the summary already.
    handed_over: bool,
    /// The newest file that named it (its settled share is taken after that file).
    touched: Option<usize>,
}

impl<'a, 'r> Lean<'a, 'r> {
    /// No machine yet: a part's machines, judged under `rules`.
    fn new(rules: &'r Ruleset, counting: &'a Counting, recent: bool) -> Self {
        Lean {
            rules,
            counting,
            recent,
            ids: HashMap::default(),
            machines: Vec::new(),
            touched: Vec::new(),
        }
    }
}

impl<'r> Lean<'_, 'r> {
    /// The machine named `id`, made where it is new; it is marked as named by `file`.
    fn entry(&mut self, id: &str, file: usize) -> &mut Machine<'r> {
        let index = self.entry_index(id, file);
        &mut self.machines[index].1
    }

    /// Where the machine named `id` is, made where it is new; it is marked as named by `file`.
    fn entry_index(&mut self, id: &str, file: usize) -> usize {
        let index = match self.ids.get(id) {
            Some(&index) => index,
            None => {
                let id: Arc<str> = Arc::from(id);
                self.ids.insert(Arc::clone(&id), self.machines.len());
                self.machines.push((id, Machine::default()));
                self.machines.len() - 1
            }
        };
        let machine = &mut self.machines[index].1;
        if machine.touched != Some(file) {
            machine.touched = Some(file);
            self.touched.push(index);
        }
        index
    }

    /// Takes one record: a raw stream's line, or any other record of a machine.
    fn record(&mut self, mut log: MachineLog, file: usize) {
        if log.format == Format::Ndjson && log.events.len() + log.gaps.len() == 1 {
            let what = match log.gaps.first() {
                Some(&gap) => StreamLine::Gap(gap),
                None => StreamLine::Event(log.events.pop().expect("one event")),
            };
            let source = Arc::from(log.source.as_str());
            self.line(&log.machine, what, log.line, file, &source);
            return;
        }
        let m = self.entry(&log.machine, file);
        m.records += 1;
        m.first_at(&Arc::from(log.source.as_str()), log.line, log.format);
        if m.careful {
            return;
        }
        if log.events.is_empty() && log.gaps.is_empty() && m.judging.is_none() {
            m.listed.push(log);
        } else {
            m.fall_back();
        }
    }

    /// Takes a raw stream's line of machine `id`: line `line` of `source`, the file read
    /// `file`th.
    fn line(&mut self, id: &str, what: StreamLine, line: usize, file: usize, source: &Arc<str>) {
        let (rules, counting, recent) = (self.rules, self.counting, self.recent);
        let index = self.entry_index(id, file);
        let (id, m) = &mut self.machines[index];
        // A raw stream's lines of one file are one record, as it is read whole; and the
        // first line of a file is the file's smallest.
        if m.last_file != Some(file) {
            m.last_file = Some(file);
            m.records += 1;
            m.first_at(source, line, Format::Ndjson);
        }
        if m.careful {
            return;
        }
        let event = match what {
            StreamLine::Gap(gap) => {
                m.gap(gap);
                return;
            }
            StreamLine::Event(event) => event,
        };
        let tie_elsewhere = m.last_time == Some(event.time) && m.instant_file != Some(file);
        if m.last_time.is_some_and(|t| event.time < t) || tie_elsewhere {
            m.fall_back();
            return;
        }
        let judging = m.judging.get_or_insert_with(|| {
            let facts = listed_facts(&m.listed);
            let judging = Judging::new(Arc::clone(id), false, facts, rules, counting);
            Box::new(if recent {
                judging
            } else {
                judging.without_recent()
            })
        });
        if m.last_time == Some(event.time) {
            if m.instant.iter().any(|e| identical(e, &event)) {
                m.duplicates += 1;
                return;
            }
        } else {
            m.instant.clear();
            // One event an instant is the rule: room for more is made when a tie comes.
            if m.instant.capacity() == 0 {
                m.instant.reserve_exact(1);
            }
        }
        let seam = m.pending_gap.is_some_and(|g| event.time >= g);
        if seam {
            m.pending_gap = None;
        }
        judging.push(&event, source, seam);
        m.last_time = Some(event.time);
        m.instant_file = Some(file);
        m.instant.push(event);
    }
}

impl<'a, 'r> Part for Lean<'a, 'r> {
    fn fresh(&self) -> Self {
        Lean::new(self.rules, self.counting, self.recent)
    }

    fn machine(&mut self, log: MachineLog, file: usize) {
        self.record(log, file);
    }

    fn lines(&mut self, lines: StreamLines, file: usize) {
        let path = lines.shared_path();
        lines.each(&mut |line, id, what| self.line(id, what, line, file, &path));
    }

    /// What is settled goes to the fleet's summary: a machine keeps only what is open. A
    /// machine no line of the file named has nothing newly settled.
    fn settle(&mut self, settled: &mut Summary) {
        for index in self.touched.drain(..) {
            let machine = &mut self.machines[index].1;
            if !self.recent
                && let Some(part) = machine
                    .judging
                    .as_deref_mut()
                    .and_then(Judging::take_settled)
            {
                *settled += part;
                machine.handed_over = true;
            }
        }
    }

    fn gather(&mut self, others: Vec<Self>) {
        // One list, made once at its size: a fleet's worth of machines.
        self.ids = HashMap::default();
        let more: usize = others.iter().map(|o| o.machines.len()).sum();
        self.machines.reserve_exact(more);
        for other in others {
            self.machines.extend(other.machines);
        }
    }
}

impl<'r> Machine<'r> {
    /// Takes a record's place where a merge would put it before the first so far.
    fn first_at(&mut self, source: &Arc<str>, line: usize, format: Format) {
        if self
            .first
            .as_ref()
            .is_none_or(|f| (&**source, line) < (&*f.0, f.1))
        {
            self.first = Some((Arc::clone(source), line, format));
        }
    }

    fn fall_back(&mut self) {
        self.careful = true;
        self.judging = None;
        self.instant = Vec::new();
        self.listed = Vec::new();
    }

    fn gap(&mut self, gap: DateTime<Utc>) {
        // A marker behind an event read already would move a seam back onto it; one behind
        // another marker changes how markers are counted.
        if self.last_time.is_some_and(|t| gap <= t) || self.last_gap.is_some_and(|g| gap < g) {
            self.fall_back();
            return;
        }
        if self.last_gap != Some(gap) {
            self.gaps += 1;
            self.last_gap = Some(gap);
        }
        self.pending_gap = Some(self.pending_gap.map_or(gap, |g| g.min(gap)));
    }

    /// The machine's judgement with what its records said, and the log the fold's filter
    /// is asked about.
    fn finish(
        mut self,
        id: &Arc<str>,
        rules: &'r Ruleset,
        counting: &Counting,
    ) -> (MachineLog, Streamed<'r>) {
        let (source, line, format) = self
            .first
            .take()
            .map_or((String::new(), 0, Format::Ndjson), |(s, l, f)| {
                (s.to_string(), l, f)
            });
        let mut facts = listed_facts(&self.listed);
        facts.last_error_source = source.clone();
        let mut judging = match self.judging.take() {
            Some(judging) => *judging,
            // Only a list said it: no raw line came.
            None => Judging::new(Arc::clone(id), true, facts.clone(), rules, counting),
        };
        judging.set_facts(facts);
        let accounting = judging.accounting_mut();
        accounting.duplicates = self.duplicates;
        accounting.records = self.records;
        accounting.gaps = self.gaps;
        let mut stub = MachineLog::new(id.to_string(), &source, line, format);
        if let Some(list) = self.listed.first() {
            stub.machine_info = list.machine_info.clone();
        }
        let judged = Streamed {
            judging,
            instant: self.instant,
            last_time: self.last_time,
            pending_gap: self.pending_gap,
            last_gap: self.last_gap,
            stream_records: self.records - self.listed.len(),
            listed: !self.listed.is_empty(),
            first_source: source,
        };
        (stub, judged)
    }
}

/// What a machine's list records say of it, merged as the careful path merges them.
fn listed_facts(listed: &[MachineLog]) -> Facts {
    if listed.is_empty() {
        return Facts::default();
    }
    Facts::of(&merge::merge(listed.to_vec()).log)
}

/// Whether two lines of raw streams are the same event (as merging decides).
fn identical(a: &Event, b: &Event) -> bool {
    a.time == b.time
        && a.name == b.name
        && a.message == b.message
        && a.recorded_state == b.recorded_state
}

#[cfg(test)]
#[path = "lean_tests.rs"]
mod tests;
