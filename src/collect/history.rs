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
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, anyhow};
use chrono::{DateTime, NaiveDate, Utc};

use super::align::{Shown, align};
use super::quoted;
use super::shapes::{Machine, WINDOW};
use super::tail::{self, Backlog, Interner, Known, Lengths};
use super::tail_direct;
use crate::days;
use crate::input::time;
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
    /// What `machines.json` holds, once it has been read: a poll that shows every machine
    /// known replaces it whole without reading it.
    machines: Option<BTreeMap<String, Machine>>,
    /// The one copy of each event name and message the known events hold.
    names: Interner,
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
        let mut names = Interner::default();
        let (known, backlog, machines) =
            match tail::read(dir, &files, &mut names, tail_direct::read) {
                // Every machine in machines.json is known to the tail file.
                Ok(Some(known)) => (known, Backlog::default(), None),
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
                    let machines = read_machines(&dir.join("machines.json"))?;
                    let mut known = HashMap::new();
                    let mut backlog = Backlog::new(paths);
                    let ids = &mut machines.keys().map(String::as_str);
                    backlog.learn(&mut known, &mut names, ids)?;
                    // A machine polled without an event is known all the same (every file was
                    // read to look for one).
                    for id in machines.keys() {
                        known.entry(id.clone()).or_default();
                    }
                    (known, backlog, Some(machines))
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
                names,
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
            let ids = &mut polled.iter().map(|m| m.id.as_str());
            self.backlog.learn(&mut self.known, &mut self.names, ids)?;
        }
        let mut appended = Appended {
            machines: polled.len(),
            ..Appended::default()
        };
        // Every time read and every window aligned before a byte is written.
        let plans = polled
            .iter()
            .map(|machine| self.plan(machine))
            .collect::<Result<Vec<Plan>>>()?;
        let mut days = Days::new(self.dir.join("events"));
        for (machine, plan) in polled.iter().zip(&plans) {
            appended.new_machines += usize::from(plan.is_new);
            appended.events += plan.times.len();
            appended.alive += usize::from(plan.alive.is_some());
            if plan.gap {
                appended.gaps.push(machine.id.clone());
            }
            write_machine(&mut days, machine, plan)?;
        }
        self.files.extend(days.finish()?);
        let mut machines = match self.machines.take() {
            Some(machines) => machines,
            None if self.known.keys().all(|id| {
                polled
                    .binary_search_by(|m| m.id.as_str().cmp(id.as_str()))
                    .is_ok()
            }) =>
            {
                BTreeMap::new()
            }
            None => read_machines(&self.dir.join("machines.json"))?,
        };
        for (mut machine, plan) in polled.into_iter().zip(plans) {
            if !plan.times.is_empty() || plan.alive.is_some() || plan.is_new {
                let known = self.known.entry(machine.id.clone()).or_default();
                let log = &machine.events.log;
                let new: Vec<Shown> = plan
                    .times
                    .iter()
                    .enumerate()
                    .map(|(k, &time)| {
                        let e = &log[plan.times.len() - 1 - k];
                        Shown {
                            time,
                            event: &e.event,
                            message: &e.message,
                        }
                    })
                    .collect();
                known.extend(&new, &mut self.names);
                if let Some((time, _)) = plan.alive {
                    known.alive = Some(time);
                }
            }
            // The events are in the day files: an empty log merges with them without a
            // duplicate.
            machine.events.log = Vec::new();
            machines.insert(machine.id.clone(), machine);
        }
        self.machines = Some(machines);
        self.write_machines()?;
        tail::write(&self.dir, &self.files, &self.known)?;
        sync_dir(&self.dir)?;
        Ok(appended)
    }

    /// Where a machine's window continues its history, and whether its last error event is
    /// an Alive not kept yet.
    fn plan(&self, machine: &Machine) -> Result<Plan> {
        let log = &machine.events.log;
        // metal-api sends the newest first.
        let window = log
            .iter()
            .rev()
            .map(|e| {
                Ok(Shown {
                    time: event_time(&machine.id, &e.time)?,
                    event: &e.event,
                    message: &e.message,
                })
            })
            .collect::<Result<Vec<Shown>>>()?;
        let alive = match &machine.events.last_error_event {
            Some(e) if *e.event == *"Alive" => Some(event_time(&machine.id, &e.time)?),
            _ => None,
        };
        let known = self.known.get(&machine.id);
        let empty = Known::default();
        let kept = known.unwrap_or(&empty);
        let step = align(&kept.tail, &window, window.len() >= WINDOW);
        let times: Vec<DateTime<Utc>> = window[step.first_new..].iter().map(|e| e.time).collect();
        let alive = alive.filter(|&time| kept.alive_is_new(time)).map(|time| {
            // Where its time puts it among the new events.
            let at = times.iter().position(|&t| t > time).unwrap_or(times.len());
            (time, at)
        });
        Ok(Plan {
            is_new: known.is_none(),
            gap: step.gap,
            times,
            alive,
        })
    }

    /// Replaces `machines.json` whole: a temporary file, synced, renamed over it (the
    /// directory is synced after the tail file).
    fn write_machines(&self) -> Result<()> {
        let path = self.dir.join("machines.json");
        let temp = self.dir.join(".machines.json.tmp");
        let list: Vec<&Machine> = self.machines.iter().flat_map(|m| m.values()).collect();
        let file =
            File::create(&temp).with_context(|| format!("{}: cannot create", shown(&temp)))?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        serde_json::to_writer_pretty(&mut out, &list)
            .map_err(anyhow::Error::from)
            .and_then(|()| {
                out.write_all(b"\n")?;
                Ok(out.into_inner().map_err(|e| e.into_error())?.sync_all()?)
            })
            .with_context(|| format!("{}: cannot write", shown(&temp)))?;
        fs::rename(&temp, &path).with_context(|| format!("{}: cannot replace", shown(&path)))
    }
}

/// An event time metal-api sent a machine, read.
fn event_time(machine: &str, text: &str) -> Result<DateTime<Utc>> {
    // The readers' own parse reads metal-api's one shape without chrono (a poll reads 200,000
    // times); it trims space first, which chrono does not, so a time with space around it
    // still goes to chrono alone and is refused.
    let solid = |b: Option<&u8>| b.is_some_and(u8::is_ascii_graphic);
    let read = if solid(text.as_bytes().first()) && solid(text.as_bytes().last()) {
        time::parse_rfc3339(text).ok()
    } else {
        DateTime::parse_from_rfc3339(text)
            .ok()
            .map(|t| t.with_timezone(&Utc))
    };
    read.ok_or_else(|| {
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

/// What a poll adds of one machine.
struct Plan {
    is_new: bool,
    /// Events may have been lost before the first new one.
    gap: bool,
    /// The new events' times, oldest first; they are the newest of the log.
    times: Vec<DateTime<Utc>>,
    /// An Alive last error event to keep, and before which new event.
    alive: Option<(DateTime<Utc>, usize)>,
}

/// A machine's new lines: the gap marker, its new events oldest first, the Alive where its
/// time puts it.
fn write_machine(days: &mut Days, machine: &Machine, plan: &Plan) -> Result<()> {
    let id = machine.id.as_str();
    let log = &machine.events.log;
    let count = plan.times.len();
    let alive = plan.alive.and_then(|(time, at)| {
        let e = machine.events.last_error_event.as_ref()?;
        Some((time, at, e))
    });
    if plan.gap {
        // The marker comes before every line that follows it, an older Alive too.
        let (time, text) = match alive {
            Some((time, 0, e)) => (time, &*e.time),
            _ => (plan.times[0], &*log[count - 1].time),
        };
        quoted::gap_line(days.line(), id, text);
        days.put(time)?;
    }
    for at in 0..=count {
        if let Some((time, _, e)) = alive.filter(|(_, before, _)| *before == at) {
            quoted::event_line(days.line(), id, &e.time, &e.event, &e.message);
            days.put(time)?;
        }
        if at < count {
            let e = &log[count - 1 - at];
            quoted::event_line(days.line(), id, &e.time, &e.event, &e.message);
            days.put(plan.times[at])?;
        }
    }
    Ok(())
}

/// The day files a poll appends to, each through one buffer.
struct Days {
    events: PathBuf,
    open: BTreeMap<NaiveDate, (String, BufWriter<File>)>,
    created: bool,
    /// The line being made.
    line: Vec<u8>,
}

impl Days {
    fn new(events: PathBuf) -> Days {
        Days {
            events,
            open: BTreeMap::new(),
            created: false,
            line: Vec::with_capacity(512),
        }
    }

    /// The next line to make, empty.
    fn line(&mut self) -> &mut Vec<u8> {
        self.line.clear();
        &mut self.line
    }

    /// Appends the line made to the file of its time's day.
    fn put(&mut self, time: DateTime<Utc>) -> Result<()> {
        let day = time.date_naive();
        if !self.open.contains_key(&day) {
            let name = days::name(day);
            let path = self.events.join(&name);
            self.created |= !path.exists();
            let file = OpenOptions::new()
                .append(true)
                .create(true)
                .open(&path)
                .with_context(|| format!("{}: cannot open", shown(&path)))?;
            // A poll may touch a file for each of many days: small buffers, not fresh
            // megabytes each.
            self.open
                .insert(day, (name, BufWriter::with_capacity(64 << 10, file)));
        }
        let (name, out) = self.open.get_mut(&day).expect("opened above");
        out.write_all(&self.line)
            .with_context(|| format!("{}: cannot append", escape::text(name)))
    }

    /// Makes every line durable; returns the files' new lengths.
    fn finish(self) -> Result<Lengths> {
        let mut lengths = Lengths::new();
        for (name, out) in self.open.into_values() {
            let path = self.events.join(&name);
            let file = out
                .into_inner()
                .map_err(|e| e.into_error())
                .with_context(|| format!("{}: cannot append", shown(&path)))?;
            file.sync_all()
                .with_context(|| format!("{}: cannot sync", shown(&path)))?;
            lengths.insert(name, file.metadata()?.len());
        }
        if self.created {
            sync_dir(&self.events)?;
        }
        Ok(lengths)
    }
}

fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .with_context(|| format!("{}: cannot sync", shown(dir)))
}

/// The event files, oldest day first.
fn day_files(events: &Path) -> Result<Vec<PathBuf>> {
    let files = days::list(events).with_context(|| format!("{}: cannot list", shown(events)))?;
    Ok(files.into_iter().map(|(_, path)| path).collect())
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
