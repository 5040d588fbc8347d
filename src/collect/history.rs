//! The history directory: `events/YYYY-MM-DD.ndjson`, fsmlog's raw stream, one UTC day a file,
//! each machine's events in the order metal-api stored them, a gap marker
//! (`{"machine","time","gap":true}`) before a window that may not continue what came before;
//! and `machines.json`, what the newest poll showed of each machine besides its events, as a
//! v1 list. Events are appended and fsynced before `machines.json` is replaced, so a crash
//! leaves at worst a torn last line, which opening repairs, and events the next poll aligns
//! again. One collector writes a directory at a time (a lock on it).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, anyhow};
use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

use super::align::{Seen, align};
use super::shapes::{Machine, WINDOW};
use crate::render::escape;

/// How many of a machine's newest events are kept to align the next window to: more than a
/// window holds.
const KEEP: usize = 2 * WINDOW;

/// What one poll added.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Appended {
    pub machines: usize,
    pub new_machines: usize,
    pub events: usize,
    /// Machines whose window may not continue their history.
    pub gaps: Vec<String>,
}

/// An open history, locked.
pub struct History {
    dir: PathBuf,
    _lock: File,
    tails: HashMap<String, VecDeque<Seen>>,
    machines: BTreeMap<String, Machine>,
}

/// A line of an event file, as the history writes it.
#[derive(Serialize)]
struct EventLine<'a> {
    machine: &'a str,
    time: &'a str,
    event: &'a str,
    message: &'a str,
}

#[derive(Serialize)]
struct GapLine<'a> {
    machine: &'a str,
    time: &'a str,
    gap: bool,
}

/// A line of an event file, read back.
#[derive(Deserialize)]
struct ReadLine {
    machine: String,
    time: String,
    #[serde(default)]
    event: Option<String>,
    #[serde(default)]
    message: String,
    #[serde(default)]
    gap: bool,
}

fn shown(path: &Path) -> String {
    escape::text(&path.display().to_string()).into_owned()
}

impl History {
    /// Opens (creating) the history in `dir`: takes its lock, repairs a torn last line of each
    /// event file, and learns each machine's newest events. Returns what it repaired, to say.
    pub fn open(dir: &Path) -> Result<(History, Vec<String>)> {
        let events = dir.join("events");
        fs::create_dir_all(&events)
            .with_context(|| format!("{}: cannot create the history", shown(dir)))?;
        let lock = File::open(dir).with_context(|| format!("{}: cannot open", shown(dir)))?;
        lock.try_lock()
            .map_err(|_| anyhow!("{}: another fsmlog collect writes this history", shown(dir)))?;
        let _ = fs::remove_file(dir.join(".machines.json.tmp"));
        let mut notes = Vec::new();
        let mut tails: HashMap<String, VecDeque<Seen>> = HashMap::new();
        for file in day_files(&events)? {
            if let Some(cut) = repair(&file)? {
                notes.push(format!(
                    "{}: removed a torn last line ({cut} bytes) an interrupted write left; \
                     its events are collected again",
                    shown(&file)
                ));
            }
            learn(&file, &mut tails)?;
        }
        let machines = read_machines(&dir.join("machines.json"))?;
        Ok((
            History {
                dir: dir.to_path_buf(),
                _lock: lock,
                tails,
                machines,
            },
            notes,
        ))
    }

    /// Appends what the poll shows that the history does not hold, fsyncs it, then replaces
    /// `machines.json`. Nothing is written where a time cannot be read.
    pub fn append(&mut self, polled: Vec<Machine>) -> Result<Appended> {
        let mut by_id: BTreeMap<String, Machine> = BTreeMap::new();
        for machine in polled {
            by_id.insert(machine.id.clone(), machine);
        }
        let mut days: BTreeMap<NaiveDate, Vec<u8>> = BTreeMap::new();
        let mut tails = Vec::new();
        let mut appended = Appended {
            machines: by_id.len(),
            ..Appended::default()
        };
        for machine in by_id.values() {
            let window = machine
                .events
                .log
                .iter()
                .rev()
                .map(|e| {
                    Ok(Seen {
                        time: parse_time(&e.time).ok_or_else(|| {
                            anyhow!(
                                "metal-api sent machine {:?} an event time {:?} that is not RFC 3339",
                                escape::text(&machine.id),
                                escape::text(&e.time)
                            )
                        })?,
                        event: e.event.clone(),
                        message: e.message.clone(),
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            let raw: Vec<_> = machine.events.log.iter().rev().collect();
            let tail = self.tails.get(&machine.id);
            let collected: Vec<Seen> = tail
                .map(|t| t.iter().cloned().collect())
                .unwrap_or_default();
            if tail.is_none() {
                appended.new_machines += 1;
            }
            let step = align(&collected, &window, window.len() >= WINDOW);
            if step.gap {
                appended.gaps.push(machine.id.clone());
                let line = GapLine {
                    machine: &machine.id,
                    time: &raw[step.first_new].time,
                    gap: true,
                };
                push_line(&mut days, window[step.first_new].time, &line);
            }
            for (seen, event) in window.iter().zip(&raw).skip(step.first_new) {
                let line = EventLine {
                    machine: &machine.id,
                    time: &event.time,
                    event: &event.event,
                    message: &event.message,
                };
                push_line(&mut days, seen.time, &line);
                appended.events += 1;
            }
            if step.first_new < window.len() || tail.is_none() {
                tails.push((machine.id.clone(), window[step.first_new..].to_vec()));
            }
        }
        self.write_days(&days)?;
        for machine in by_id.values() {
            self.machines
                .insert(machine.id.clone(), machine.without_log());
        }
        self.write_machines()?;
        for (id, new) in tails {
            let tail = self.tails.entry(id).or_default();
            tail.extend(new);
            while tail.len() > KEEP {
                tail.pop_front();
            }
        }
        Ok(appended)
    }

    /// Appends each day's lines to its file and makes them durable.
    fn write_days(&self, days: &BTreeMap<NaiveDate, Vec<u8>>) -> Result<()> {
        let events = self.dir.join("events");
        let mut created = false;
        let mut files = Vec::new();
        for (day, lines) in days {
            let path = events.join(format!("{}.ndjson", day.format("%Y-%m-%d")));
            created |= !path.exists();
            let mut file = OpenOptions::new()
                .append(true)
                .create(true)
                .open(&path)
                .with_context(|| format!("{}: cannot open", shown(&path)))?;
            file.write_all(lines)
                .with_context(|| format!("{}: cannot append", shown(&path)))?;
            files.push((path, file));
        }
        for (path, file) in files {
            file.sync_all()
                .with_context(|| format!("{}: cannot sync", shown(&path)))?;
        }
        if created {
            sync_dir(&events)?;
        }
        Ok(())
    }

    /// Replaces `machines.json` whole: a temporary file, synced, renamed over it.
    fn write_machines(&self) -> Result<()> {
        let path = self.dir.join("machines.json");
        let temp = self.dir.join(".machines.json.tmp");
        let list: Vec<&Machine> = self.machines.values().collect();
        let mut text = serde_json::to_vec_pretty(&list)?;
        text.push(b'\n');
        let mut file =
            File::create(&temp).with_context(|| format!("{}: cannot create", shown(&temp)))?;
        file.write_all(&text)
            .and_then(|()| file.sync_all())
            .with_context(|| format!("{}: cannot write", shown(&temp)))?;
        fs::rename(&temp, &path).with_context(|| format!("{}: cannot replace", shown(&path)))?;
        sync_dir(&self.dir)
    }
}

fn parse_time(text: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

fn push_line(days: &mut BTreeMap<NaiveDate, Vec<u8>>, time: DateTime<Utc>, line: &impl Serialize) {
    let buf = days.entry(time.date_naive()).or_default();
    serde_json::to_writer(&mut *buf, line).expect("a line of strings serialises");
    buf.push(b'\n');
}

fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .with_context(|| format!("{}: cannot sync", shown(dir)))
}

/// The event files, oldest day first.
fn day_files(events: &Path) -> Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = fs::read_dir(events)
        .with_context(|| format!("{}: cannot list", shown(events)))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".ndjson"))
                .is_some_and(|d| NaiveDate::parse_from_str(d, "%Y-%m-%d").is_ok())
        })
        .collect();
    files.sort();
    Ok(files)
}

/// Cuts a last line that has no newline (a write a crash interrupted); returns how many
/// bytes were cut.
fn repair(path: &Path) -> Result<Option<u64>> {
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .with_context(|| format!("{}: cannot open", shown(path)))?;
    let len = file.metadata()?.len();
    let mut end = len;
    let mut chunk = vec![0u8; 64 * 1024];
    while end > 0 {
        let start = end.saturating_sub(chunk.len() as u64);
        let part = &mut chunk[..(end - start) as usize];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(part)?;
        if let Some(at) = part.iter().rposition(|&b| b == b'\n') {
            end = start + at as u64 + 1;
            break;
        }
        end = start;
    }
    if end == len {
        return Ok(None);
    }
    file.set_len(end)
        .and_then(|()| file.sync_all())
        .with_context(|| format!("{}: cannot repair", shown(path)))?;
    Ok(Some(len - end))
}

/// Learns the newest events of each machine from one event file.
fn learn(path: &Path, tails: &mut HashMap<String, VecDeque<Seen>>) -> Result<()> {
    let file = File::open(path).with_context(|| format!("{}: cannot open", shown(path)))?;
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let mut buf = Vec::new();
    let mut line_no = 0;
    loop {
        buf.clear();
        if reader
            .read_until(b'\n', &mut buf)
            .with_context(|| format!("{}: cannot read", shown(path)))?
            == 0
        {
            return Ok(());
        }
        line_no += 1;
        if buf.trim_ascii().is_empty() {
            continue;
        }
        let bad = |what: &str| anyhow!("{}:{line_no}: {what}", shown(path));
        let line: ReadLine = serde_json::from_slice(&buf)
            .map_err(|e| bad(&format!("not a line of the history ({e})")))?;
        if line.gap {
            continue;
        }
        let time = parse_time(&line.time).ok_or_else(|| bad("the time is not RFC 3339"))?;
        let event = line
            .event
            .ok_or_else(|| bad("a line with neither event nor gap"))?;
        let tail = tails.entry(line.machine).or_default();
        tail.push_back(Seen {
            time,
            event,
            message: line.message,
        });
        if tail.len() > KEEP {
            tail.pop_front();
        }
    }
}

fn read_machines(path: &Path) -> Result<BTreeMap<String, Machine>> {
    let text = match fs::read(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(e) => return Err(e).with_context(|| format!("{}: cannot read", shown(path))),
    };
    let list: Vec<Machine> = serde_json::from_slice(&text).map_err(|e| {
        anyhow!(
            "{}:{}: not the list the collector writes",
            shown(path),
            e.line()
        )
    })?;
    Ok(list.into_iter().map(|m| (m.id.clone(), m)).collect())
}

#[cfg(test)]
#[path = "history_tests.rs"]
mod tests;
