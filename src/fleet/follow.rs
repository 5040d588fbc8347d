//! A history's day files followed: after a poll, only what was appended to them since they
//! were last read is read, each line with the number it has in its file, and handed to the
//! live fleet. What the live fleet cannot take as `report` would read it — a file that shrank
//! (a torn line repaired), a file that ended in a line cut short when the history was read
//! (its problem is gone once the collector repairs it), a line that is no raw event or gap marker, a machine's lines out of
//! time order — is said instead, and the caller reads the history again whole.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use super::live::LiveFleet;
use crate::days;
use crate::input;
use crate::input::record::{InputOptions, ReadMode, Record, StreamLine};
use crate::log::Format;
use crate::render::escape;

/// Where each day file of a history was read up to.
#[derive(Debug, Default)]
pub struct Follow {
    events: PathBuf,
    files: BTreeMap<String, ReadTo>,
}

/// How far a day file was read: the byte after its last whole line, and how many lines.
#[derive(Debug, Default, Clone, Copy)]
struct ReadTo {
    offset: u64,
    lines: usize,
    /// Whether the file ended in a line cut short when the history was read: the read counted
    /// it as a problem, and the collector removes it when it opens the history, after which
    /// `report` no longer sees it.
    torn: bool,
}

/// Why the appended lines cannot be judged further: the history must be read again.
#[derive(Debug)]
pub struct Reread(pub String);

impl Follow {
    /// Where the day files of the history in `dir` end now (at their last whole line): what
    /// a read of the history that starts now has judged.
    pub fn start(dir: &Path) -> std::io::Result<Follow> {
        let events = dir.join("events");
        let mut files = BTreeMap::new();
        let mut buffer = vec![0; 1 << 20];
        for (name, path) in days::list(&events)? {
            // Streamed: a day file of a large fleet is not held whole.
            let mut file = File::open(&path)?;
            let (mut at, mut whole, mut lines) = (0u64, 0u64, 0);
            loop {
                let n = file.read(&mut buffer)?;
                if n == 0 {
                    break;
                }
                let chunk = &buffer[..n];
                lines += memchr::memchr_iter(b'\n', chunk).count();
                if let Some(last) = memchr::memrchr(b'\n', chunk) {
                    whole = at + last as u64 + 1;
                }
                at += n as u64;
            }
            let read = ReadTo {
                offset: whole,
                lines,
                torn: at > whole,
            };
            files.insert(name, read);
        }
        Ok(Follow { events, files })
    }

    /// Reads the lines appended to the day files since, in the files' order (by day), and
    /// judges each machine further by them; the events taken.
    pub fn appended(&mut self, live: &mut LiveFleet) -> Result<u64, Reread> {
        let io = |path: &Path, err: std::io::Error| {
            Reread(format!("{}: cannot read: {err}", shown(path)))
        };
        // The part appended is a raw stream whatever its first line looks like.
        let options = InputOptions {
            mode: ReadMode::Lines,
            format: Some(Format::Ndjson),
            ..InputOptions::default()
        };
        let mut events = 0;
        for (name, path) in days::list(&self.events).map_err(|e| io(&self.events, e))? {
            let read = self.files.get(&name).copied().unwrap_or_default();
            let len = fs::metadata(&path).map_err(|e| io(&path, e))?.len();
            if len < read.offset {
                return Err(Reread(format!(
                    "{}: shorter than it was read",
                    shown(&path)
                )));
            }
            if read.torn {
                return Err(Reread(format!(
                    "{}: its last line was cut short when the history was read",
                    shown(&path)
                )));
            }
            if len == read.offset {
                continue;
            }
            let mut bytes = Vec::with_capacity((len - read.offset) as usize);
            let mut file = File::open(&path).map_err(|e| io(&path, e))?;
            file.seek(SeekFrom::Start(read.offset))
                .and_then(|_| file.take(len - read.offset).read_to_end(&mut bytes))
                .map_err(|e| io(&path, e))?;
            // A line being written is read once it is whole.
            let Some(end) = bytes.iter().rposition(|&b| b == b'\n') else {
                continue;
            };
            let bytes = &bytes[..=end];
            let display = path.display().to_string();
            let mut failed = None;
            input::read_reader(bytes, &display, &options, &mut |record| {
                if failed.is_none() {
                    match take(record, read.lines, live) {
                        Ok(n) => events += n,
                        Err(why) => failed = Some(why),
                    }
                }
            });
            if let Some(why) = failed {
                return Err(why);
            }
            self.files.insert(
                name,
                ReadTo {
                    offset: read.offset + bytes.len() as u64,
                    lines: read.lines + memchr::memchr_iter(b'\n', bytes).count(),
                    torn: false,
                },
            );
        }
        Ok(events)
    }
}

/// Judges a machine further by one appended line's record (`base`: the lines of its file
/// read before); the events taken.
fn take(record: Record, base: usize, live: &mut LiveFleet) -> Result<u64, Reread> {
    match record {
        Record::Machine(mut log) if log.events.len() + log.gaps.len() == 1 => {
            let what = match log.gaps.first() {
                Some(&time) => StreamLine::Gap(time),
                None => StreamLine::Event(log.events.pop().expect("one event")),
            };
            take_line(&log.machine, what, log.line + base, live)
        }
        Record::Lines(lines) => {
            let mut taken = Ok(0);
            lines.each(&mut |line, machine, what| {
                if let Ok(n) = taken {
                    taken = take_line(machine, what, line + base, live).map(|m| n + m);
                }
            });
            taken
        }
        Record::ReadBy { .. } => Ok(0),
        Record::Batch(batch) => {
            let mut taken = Ok(0);
            input::decode(batch.as_ref(), &mut |r| {
                if let Ok(n) = taken {
                    taken = take(r, base, live).map(|m| n + m);
                }
            });
            taken
        }
        Record::Error(err) => Err(Reread(format!(
            "{}:{}: {}",
            escape::text(&err.path),
            err.line + base,
            escape::text(&err.message)
        ))),
        Record::Machine(log) => Err(Reread(format!(
            "{}:{}: a line that is no event of a collector's history",
            escape::text(&log.source),
            log.line + base
        ))),
        Record::Note(note) => Err(Reread(format!(
            "{}:{}: {}",
            escape::text(&note.path),
            note.line + base,
            escape::text(&note.message)
        ))),
        Record::Skipped(_) => Err(Reread("a day file was skipped".to_string())),
    }
}

/// Judges a machine further by one line: an event, numbered `line` in its file, or a gap
/// marker; the events taken.
fn take_line(
    machine: &str,
    what: StreamLine,
    line: usize,
    live: &mut LiveFleet,
) -> Result<u64, Reread> {
    let taken = match what {
        StreamLine::Gap(time) => live.gap(machine, time).then_some(0),
        StreamLine::Event(mut event) => {
            event.line = line;
            live.push(machine, &event).then_some(1)
        }
    };
    taken.ok_or_else(|| out_of_order(machine))
}

fn out_of_order(machine: &str) -> Reread {
    Reread(format!(
        "machine {:?}: a line older than one read before it",
        escape::text(machine)
    ))
}

fn shown(path: &Path) -> String {
    escape::text(&path.display().to_string()).into_owned()
}
