//! The history directory: `events/YYYY-MM-DD.ndjson`, fsmlog's raw stream, one UTC day a file,
//! each machine's events in the order metal-api stored them, a gap marker
//! (`{"machine","time","gap":true}`) before a window that may not continue what came before, and
//! each Alive metal-api showed as the last error event, once, where its time puts it;
//! `machines.json`, what the newest poll showed of each machine besides its events, as a v1
//! list; and the tail file (`.fsmlog-tail.json`) (`tail.rs`), what the next poll is aligned to. Events are appended and
//! fsynced before `machines.json` and the tail file are replaced, so a crash leaves at worst a
//! torn last line, which opening repairs, and events the next poll aligns again. One collector
//! writes a directory at a time (a lock on it).

use std::collections::{BTreeMap, HashMap};
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, anyhow};
use chrono::{DateTime, NaiveDate, Utc};
use serde::Serialize;

use super::align::{Seen, align};
use super::shapes::{Machine, WINDOW};
use super::tail::{self, Backlog, Known, Lengths};
use crate::render::escape;

/// What one poll added.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Appended {
    pub machines: usize,
    pub new_machines: usize,
    pub events: usize,
    /// Alive last error events kept (lines of their own, never stored by metal-api).
    pub alive: usize,
    /// Machines whose window may not continue their history.
    pub gaps: Vec<String>,
}

/// An open history, locked.
pub struct History {
    dir: PathBuf,
    _lock: File,
    known: HashMap<String, Known>,
    /// Day files not read yet where the tail file could not be used.
    backlog: Backlog,
    /// Every day file's length, as the tail file records them.
    files: Lengths,
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

fn shown(path: &Path) -> String {
    escape::text(&path.display().to_string()).into_owned()
}

impl History {
    /// Opens (creating) the history in `dir`: takes its lock and learns each machine's newest
    /// events from the tail file, or where it cannot be used, repairs a torn last line of each
    /// event file and reads them. Returns what it met, to say.
    pub fn open(dir: &Path) -> Result<(History, Vec<String>)> {
        let events = dir.join("events");
        fs::create_dir_all(&events)
            .with_context(|| format!("{}: cannot create the history", shown(dir)))?;
        let lock = File::open(dir).with_context(|| format!("{}: cannot open", shown(dir)))?;
        lock.try_lock()
            .map_err(|_| anyhow!("{}: another fsmlog collect writes this history", shown(dir)))?;
        for temp in [".machines.json.tmp", tail::TEMP] {
            let _ = fs::remove_file(dir.join(temp));
        }
        let mut notes = Vec::new();
        let paths = day_files(&events)?;
        let mut files = lengths(&paths)?;
        let machines = read_machines(&dir.join("machines.json"))?;
        let (known, backlog) = match tail::read(dir, &files) {
            Ok(Some(known)) => (known, Backlog::default()),
            found => {
                if let Err(why) = found {
                    notes.push(why);
                }
                for file in &paths {
                    if let Some(cut) = repair(file)? {
                        notes.push(format!(
                            "{}: removed a torn last line ({cut} bytes) an interrupted write \
                             left; its events are collected again",
                            shown(file)
                        ));
                    }
                }
                files = lengths(&paths)?;
                let mut known = HashMap::new();
                let mut backlog = Backlog::new(paths);
                backlog.learn(&mut known, &mut machines.keys().map(String::as_str))?;
                (known, backlog)
            }
        };
        Ok((
            History {
                dir: dir.to_path_buf(),
                _lock: lock,
                known,
                backlog,
                files,
                machines,
            },
            notes,
        ))
    }

    /// Appends what the poll shows that the history does not hold, fsyncs it, then replaces
    /// `machines.json` and the tail file. Nothing is written where a time cannot be read. After
    /// an error the history must be opened again.
    pub fn append(&mut self, mut polled: Vec<Machine>) -> Result<Appended> {
        // By id; of a machine sent twice, the last.
        polled.reverse();
        polled.sort_by(|a, b| a.id.cmp(&b.id));
        polled.dedup_by(|later, kept| later.id == kept.id);
        if !self.backlog.done() {
            self.backlog
                .learn(&mut self.known, &mut polled.iter().map(|m| m.id.as_str()))?;
        }
        let mut days: BTreeMap<NaiveDate, Vec<u8>> = BTreeMap::new();
        let mut updates = Vec::new();
        let mut appended = Appended {
            machines: polled.len(),
            ..Appended::default()
        };
        let empty = Known::default();
        for machine in &mut polled {
            let log = std::mem::take(&mut machine.events.log);
            let mut times = Vec::with_capacity(log.len());
            let mut window = Vec::with_capacity(log.len());
            for e in log.into_iter().rev() {
                window.push(Seen {
                    time: event_time(&machine.id, &e.time)?,
                    event: e.event,
                    message: e.message,
                });
                times.push(e.time);
            }
            let alive = match &machine.events.last_error_event {
                Some(e) if e.event == "Alive" => Some((event_time(&machine.id, &e.time)?, e)),
                _ => None,
            };
            let id = machine.id.as_str();
            let known = self.known.get(id);
            let is_new = known.is_none();
            appended.new_machines += usize::from(is_new);
            let known = known.unwrap_or(&empty);
            let step = align(&known.tail, &window, window.len() >= WINDOW);
            let alive = alive.filter(|(time, _)| known.alive_is_new(*time));
            let new = &window[step.first_new..];
            let times = &times[step.first_new..];
            // The Alive goes where its time puts it among the new events.
            let alive_at =
                alive.map(|(time, _)| new.iter().position(|e| e.time > time).unwrap_or(new.len()));
            if step.gap {
                appended.gaps.push(machine.id.clone());
                // The marker comes before every line that follows it, an older Alive too.
                let (time, text) = match alive {
                    Some((time, e)) if alive_at == Some(0) => (time, e.time.as_str()),
                    _ => (new[0].time, times[0].as_str()),
                };
                let line = GapLine {
                    machine: id,
                    time: text,
                    gap: true,
                };
                push_line(&mut days, time, &line);
            }
            let mut keep_alive = |days: &mut BTreeMap<NaiveDate, Vec<u8>>| {
                if let Some((time, e)) = alive {
                    let line = EventLine {
                        machine: id,
                        time: &e.time,
                        event: &e.event,
                        message: &e.message,
                    };
                    push_line(days, time, &line);
                    appended.alive += 1;
                }
            };
            for (at, (seen, time)) in new.iter().zip(times).enumerate() {
                if alive_at == Some(at) {
                    keep_alive(&mut days);
                }
                let line = EventLine {
                    machine: id,
                    time,
                    event: &seen.event,
                    message: &seen.message,
                };
                push_line(&mut days, seen.time, &line);
            }
            if alive_at == Some(new.len()) {
                keep_alive(&mut days);
            }
            appended.events += new.len();
            if !new.is_empty() || alive.is_some() || is_new {
                let kept_alive = alive.map(|(time, _)| time);
                window.drain(..step.first_new);
                updates.push((machine.id.clone(), window, kept_alive));
            }
        }
        let written = self.write_days(&days)?;
        self.files.extend(written);
        for machine in polled {
            self.machines.insert(machine.id.clone(), machine);
        }
        for (id, new, alive) in updates {
            let known = self.known.entry(id).or_default();
            known.extend(&new);
            if alive.is_some() {
                known.alive = alive;
            }
        }
        self.write_machines()?;
        tail::write(&self.dir, &self.files, &self.known)?;
        sync_dir(&self.dir)?;
        Ok(appended)
    }

    /// Appends each day's lines to its file (one write each) and makes them durable; returns
    /// the files' new lengths.
    fn write_days(&self, days: &BTreeMap<NaiveDate, Vec<u8>>) -> Result<Lengths> {
        let events = self.dir.join("events");
        let mut created = false;
        let mut files = Vec::new();
        let mut lengths = Lengths::new();
        for (day, lines) in days {
            let name = format!("{}.ndjson", day.format("%Y-%m-%d"));
            let path = events.join(&name);
            created |= !path.exists();
            let mut file = OpenOptions::new()
                .append(true)
                .create(true)
                .open(&path)
                .with_context(|| format!("{}: cannot open", shown(&path)))?;
            file.write_all(lines)
                .with_context(|| format!("{}: cannot append", shown(&path)))?;
            files.push((path, name, file));
        }
        for (path, name, file) in files {
            file.sync_all()
                .with_context(|| format!("{}: cannot sync", shown(&path)))?;
            lengths.insert(name, file.metadata()?.len());
        }
        if created {
            sync_dir(&events)?;
        }
        Ok(lengths)
    }

    /// Replaces `machines.json` whole: a temporary file, synced, renamed over it (the
    /// directory is synced after the tail file).
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
        fs::rename(&temp, &path).with_context(|| format!("{}: cannot replace", shown(&path)))
    }
}

/// An event time metal-api sent a machine, read.
fn event_time(machine: &str, text: &str) -> Result<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|_| {
            anyhow!(
                "metal-api sent machine {:?} an event time {:?} that is not RFC 3339",
                escape::text(machine),
                escape::text(text)
            )
        })
}

/// The day files' lengths, by name.
fn lengths(paths: &[PathBuf]) -> Result<Lengths> {
    paths
        .iter()
        .map(|p| {
            let len = fs::metadata(p)
                .with_context(|| format!("{}: cannot read", shown(p)))?
                .len();
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            Ok((name.to_string(), len))
        })
        .collect()
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
