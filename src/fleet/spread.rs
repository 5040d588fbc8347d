//! The lean read spread over the threads: the fleet's machines parted among them by their id
//! (a fixed hash), each part judged on a thread of its own from the lines the reading thread
//! hands on, a machine's lines in the order they came; what each part settled added up, and
//! the parts gathered into one at the end.

use std::hash::BuildHasher;
use std::sync::mpsc::SyncSender;

use foldhash::fast::FixedState;

use super::fold::Folded;
use super::intake::{self, Intake};
use crate::aggregate::Summary;
use crate::input::record::{Record, StreamLines};
use crate::input::{self, InputFile, InputOptions, Problems};
use crate::log::{Format, MachineLog, Shape};

/// A part of the fleet's machines as the lean read keeps them.
pub(super) trait Part: Send + Sized {
    /// No machine yet, judged as this part judges them.
    fn fresh(&self) -> Self;
    /// Takes a record of one of its machines, read from the file read `file`th.
    fn machine(&mut self, log: MachineLog, file: usize);
    /// Takes lines of its machines from the file read `file`th.
    fn lines(&mut self, lines: StreamLines, file: usize);
    /// A file ended: what is settled goes to `settled`.
    fn settle(&mut self, settled: &mut Summary);
    /// Takes another part's machines in (`others`: every other part's, to make room once).
    fn gather(&mut self, others: Vec<Self>);
}

/// How many parts the machines are judged in at most.
const MAX_PARTS: usize = 16;

/// How many pieces of work wait for a part at most: the reader waits for a part that lags.
const QUEUED: usize = 16;

/// The part of the fleet a machine is judged in (by a fixed hash of its id, so that a run
/// parts the fleet as every other run does).
fn part_of(id: &str, parts: usize) -> usize {
    if parts == 1 {
        return 0;
    }
    (FixedState::with_seed(0).hash_one(id) % parts as u64) as usize
}

/// What a part of the fleet is handed to do.
enum Work {
    /// A record of one of its machines, read from the file read `file`th.
    Machine(Box<MachineLog>, usize),
    /// Lines of its machines.
    Lines(StreamLines, usize),
    /// A file ended: what is settled goes to the part's summary.
    Settle,
}

/// The lean read's records filed: each machine's to its part (judged on the reading thread
/// where there is one part, sent to its thread where there are more), a problem where the
/// fold keeps them.
struct Dispatch<'d, P> {
    own: Option<&'d mut P>,
    /// Whether a part stopped (it panicked): the reading stops after the file.
    stopped: bool,
    parts: &'d [SyncSender<Work>],
    file: usize,
    problems: &'d mut Problems,
}

impl<P: Part> Intake for Dispatch<'_, P> {
    fn machine(&mut self, log: MachineLog) {
        match self.own.as_mut() {
            Some(own) => own.machine(log, self.file),
            None => {
                let part = part_of(&log.machine, self.parts.len());
                let sent = self.parts[part].send(Work::Machine(Box::new(log), self.file));
                self.stopped |= sent.is_err();
            }
        }
    }

    fn problems(&mut self) -> &mut Problems {
        self.problems
    }

    fn lines(&mut self, lines: StreamLines) {
        if let Some(own) = self.own.as_mut() {
            own.lines(lines, self.file);
            return;
        }
        let parts = self.parts.len();
        let split = lines.split(parts, &|id| part_of(id, parts));
        for (tx, part) in self.parts.iter().zip(split) {
            if !part.is_empty() {
                self.stopped |= tx.send(Work::Lines(part, self.file)).is_err();
            }
        }
    }
}

/// Reads `order`'s files in parts as `options` say (one part a thread), each part's machines
/// made as `first` makes them; what the parts settled goes to `folded`'s summary, problems and
/// files read to it too. The machines of every part, gathered into `first`.
pub(super) fn read<P: Part>(
    order: &[&InputFile],
    options: &InputOptions,
    first: P,
    folded: &mut Folded<Summary>,
) -> P {
    // The machines parted among the threads by their id: each part judged on a thread of
    // its own, a machine's lines in the order they came (docs/performance.md).
    let parts = options.threads.clamp(1, MAX_PARTS);
    let (all, settled) = std::thread::scope(|scope| {
        // One part is judged on the reading thread; more each on a thread of their own, the
        // reading thread only handing lines on (it also takes the parsed blocks in order).
        let mut senders = Vec::new();
        let mut handles = Vec::new();
        let threads = if parts == 1 { 0 } else { parts };
        for _ in 0..threads {
            let (tx, rx) = std::sync::mpsc::sync_channel::<Work>(QUEUED);
            let mut part = first.fresh();
            handles.push(scope.spawn(move || {
                let mut settled = Summary::default();
                for work in rx {
                    match work {
                        Work::Machine(log, file) => part.machine(*log, file),
                        Work::Lines(lines, file) => part.lines(lines, file),
                        Work::Settle => part.settle(&mut settled),
                    }
                }
                (part, settled)
            }));
            senders.push(tx);
        }
        // The first part's machines gather every part's at the end.
        let (mut own, gather) = if parts == 1 {
            (Some(first), None)
        } else {
            (None, Some(first))
        };
        let mut settled = Summary::default();
        for (index, file) in order.iter().enumerate() {
            let mut format = None;
            let mut skipped = false;
            let mut dispatch = Dispatch {
                own: own.as_mut(),
                stopped: false,
                parts: &senders,
                file: index,
                problems: &mut folded.problems,
            };
            let opened = input::read_file(file, options, &mut |record| {
                skipped |= matches!(record, Record::Skipped(_));
                if let Some(shape) = shape_of(&record) {
                    format.get_or_insert(shape);
                }
                intake::take_in(record, &mut dispatch);
            });
            let mut stopped = dispatch.stopped;
            if opened && !skipped {
                folded.files.add(format);
            }
            if let Some(own) = own.as_mut() {
                own.settle(&mut settled);
            }
            for tx in &senders {
                stopped |= tx.send(Work::Settle).is_err();
            }
            // A part that stopped has panicked: its join below says so, with no more read.
            if stopped {
                break;
            }
        }
        drop(senders);
        let mut all = own.take().or(gather).expect("the first part");
        let mut others = Vec::new();
        for handle in handles {
            let (part, part_settled) = handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            others.push(part);
            settled += part_settled;
        }
        all.gather(others);
        (all, settled)
    });
    folded.value += settled;
    all
}

/// The shape of the file a record says, where it says one (the first record that does
/// names the file's).
fn shape_of(record: &Record) -> Option<Shape> {
    if let Record::Batch(batch) = record {
        return Some(batch.shape().unwrap_or(Shape::of(Format::ListJson)));
    }
    if let Record::Machine(log) = record {
        return Some(log.shape());
    }
    if let Record::Lines(_) = record {
        return Some(Shape::of(Format::Ndjson));
    }
    None
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::fleet::Sources;
    use crate::fleet::inputs::Inputs;
    use crate::input::record::ReadMode;

    /// What a part was handed, in order.
    #[derive(Debug, Clone, PartialEq)]
    enum Call {
        Machine(String, usize),
        Line(String, usize, usize),
        Settle,
    }

    /// A part that notes what it is handed.
    struct Noting {
        made: Arc<AtomicUsize>,
        calls: Vec<Call>,
        gathered: Vec<Vec<Call>>,
    }

    impl Part for Noting {
        fn fresh(&self) -> Self {
            self.made.fetch_add(1, Ordering::SeqCst);
            Noting {
                made: Arc::clone(&self.made),
                calls: Vec::new(),
                gathered: Vec::new(),
            }
        }

        fn machine(&mut self, log: MachineLog, file: usize) {
            self.calls.push(Call::Machine(log.machine, file));
        }

        fn lines(&mut self, lines: StreamLines, file: usize) {
            lines.each(&mut |line, id, _| self.calls.push(Call::Line(id.to_string(), line, file)));
        }

        fn settle(&mut self, _: &mut Summary) {
            self.calls.push(Call::Settle);
        }

        fn gather(&mut self, others: Vec<Self>) {
            self.gathered = others.into_iter().map(|o| o.calls).collect();
        }
    }

    /// Three day files of 30 machines, and a list of some of them, read in `threads` parts:
    /// what each part was handed.
    fn handed(threads: usize) -> (Vec<Vec<Call>>, usize) {
        let dir =
            std::env::temp_dir().join(format!("fsmlog-spread-{}-{threads}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        for day in 1..=3 {
            let mut text = String::new();
            for n in 0..90 {
                let m = (n * 7 + day) % 30;
                text.push_str(&format!(
                    "{{\"machine\":\"m{m}\",\"time\":\"2025-09-0{day}T00:{:02}:{:02}Z\",\"event\":\"Waiting\",\"message\":\"\"}}\n",
                    n / 60,
                    n % 60
                ));
            }
            fs::write(dir.join(format!("2025-09-0{day}.ndjson")), text).unwrap();
        }
        let list: Vec<String> = (0..30)
            .step_by(3)
            .map(|m| format!("{{\"id\":\"m{m}\",\"events\":{{\"log\":[]}}}}"))
            .collect();
        fs::write(dir.join("machines.json"), format!("[{}]", list.join(","))).unwrap();
        let inputs = Inputs::resolve(&Sources {
            paths: vec![dir.clone()],
            threads: Some(threads),
            ..Sources::default()
        })
        .unwrap();
        let mut order: Vec<&InputFile> = inputs.readable().collect();
        order.sort_by_key(|f| !f.path.ends_with("machines.json"));
        let options = InputOptions {
            mode: ReadMode::Lines,
            threads,
            ..inputs.options.clone()
        };
        let made = Arc::new(AtomicUsize::new(0));
        let first = Noting {
            made: Arc::clone(&made),
            calls: Vec::new(),
            gathered: Vec::new(),
        };
        let mut folded = Folded::default();
        let all = read(&order, &options, first, &mut folded);
        let _ = fs::remove_dir_all(&dir);
        assert!(
            folded.problems.errors.is_empty(),
            "{:?}",
            folded.problems.errors
        );
        let mut parts = vec![all.calls];
        parts.extend(all.gathered);
        (parts, made.load(Ordering::SeqCst))
    }

    #[test]
    fn each_machine_is_one_parts_in_the_order_its_lines_came_each_file_settled_after_its_lines() {
        for threads in [1, 3] {
            let (parts, made) = handed(threads);
            // One part judges on the reading thread; three are made fresh for their threads.
            assert_eq!(made, if threads == 1 { 0 } else { 3 });
            assert_eq!(parts.len(), if threads == 1 { 1 } else { 4 });
            let mut part_of = std::collections::HashMap::new();
            let mut lines = 0;
            for (p, calls) in parts.iter().enumerate() {
                let mut settled = 0;
                let mut last: std::collections::HashMap<&str, (usize, usize)> = Default::default();
                for call in calls {
                    let (id, file, line) = match call {
                        Call::Settle => {
                            settled += 1;
                            continue;
                        }
                        Call::Machine(id, file) => (id.as_str(), *file, 0),
                        Call::Line(id, line, file) => {
                            lines += 1;
                            (id.as_str(), *file, *line)
                        }
                    };
                    // A file's lines come before the part hears that the file ended.
                    assert_eq!(
                        settled, file,
                        "part {p}: {call:?} after {settled} files ended"
                    );
                    assert_eq!(
                        *part_of.entry(id.to_string()).or_insert(p),
                        p,
                        "{id} in two parts"
                    );
                    let at = (file, line);
                    assert!(
                        last.insert(id, at).is_none_or(|before| before < at),
                        "{id} out of order"
                    );
                }
                if !calls.is_empty() {
                    assert_eq!(settled, 4, "part {p}: every file's end, the list's too");
                }
            }
            assert_eq!(lines, 270);
            assert_eq!(part_of.len(), 30);
            let busy = parts
                .iter()
                .filter(|calls| calls.iter().any(|c| matches!(c, Call::Line(..))));
            assert!(
                threads == 1 || busy.count() == 3,
                "every part judges machines"
            );
        }
    }
}
