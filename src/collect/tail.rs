//! What the history knows of each machine to align the next poll to — its newest stored
//! events and the newest Alive error it kept — and the tail file, where each poll leaves it so
//! that the next start reads no event file. Where that file is missing, cannot be read, or
//! does not match the event files (their lengths differ from the ones it names: a poll was
//! interrupted, or someone changed them), the event files are read instead, newest day first,
//! and only as far back as the machines asked about need.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::{self, File};
use std::io::{BufRead, BufReader, BufWriter, ErrorKind, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, anyhow};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use foldhash::fast::RandomState;
use serde::{Deserialize, Serialize};

use super::align::{Seen, Shown};
use super::quoted;
use super::shapes::WINDOW;
use crate::render::escape;

/// How many of a machine's newest stored events are kept: a window's overlap with the history
/// is at most a window long, and only the newest event is compared beyond it.
pub const KEEP: usize = WINDOW;

/// The file, hidden so that a reader of the directory passes over it (`input/source.rs`).
pub const NAME: &str = ".fsmlog-tail.json";
/// The file while it is written.
pub const TEMP: &str = ".fsmlog-tail.json.tmp";

/// The version the tail file is written in; another is read as no tail at all.
const VERSION: u32 = 1;

/// What the history holds of one machine, as far as the next poll needs it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Known {
    /// The newest stored events, oldest first, at most [`KEEP`].
    pub tail: Vec<Seen>,
    /// The time of the newest Alive error event kept.
    pub alive: Option<DateTime<Utc>>,
}

impl Known {
    /// Holds as many events as an alignment can look at.
    pub fn complete(&self) -> bool {
        self.tail.len() >= KEEP
    }

    /// Adds newer stored events, keeping the newest [`KEEP`].
    pub fn extend(&mut self, newer: &[Shown], names: &mut Interner) {
        let skip = newer.len().saturating_sub(KEEP);
        self.tail.extend(newer[skip..].iter().map(|e| Seen {
            time: e.time,
            event: names.get(e.event),
            message: names.get(e.message),
        }));
        let over = self.tail.len().saturating_sub(KEEP);
        self.tail.drain(..over);
    }

    /// Whether an Alive shown as the last error event at `time` is not yet in the history:
    /// newer than the last one kept, and not older than the events kept (an older one was
    /// shown, and kept, before them). The second test makes the answer the same whether the
    /// newest Alive kept was learnt from the tail file or is in a day file not read.
    pub fn alive_is_new(&self, time: DateTime<Utc>) -> bool {
        self.alive.is_none_or(|kept| time > kept)
            && self.tail.first().is_none_or(|oldest| time >= oldest.time)
    }
}

/// Event names and messages held once: a fleet's repeat.
#[derive(Debug, Default)]
pub struct Interner(HashSet<Arc<str>, RandomState>);

impl Interner {
    /// The one copy of `text`.
    pub fn get(&mut self, text: &str) -> Arc<str> {
        if let Some(held) = self.0.get(text) {
            return Arc::clone(held);
        }
        let held: Arc<str> = text.into();
        self.0.insert(Arc::clone(&held));
        held
    }
}

/// The day files' lengths by file name.
pub type Lengths = BTreeMap<String, u64>;

/// the tail file.
#[derive(Serialize, Deserialize)]
struct TailFile<T> {
    version: u32,
    /// The length of every day file when it was written.
    files: Lengths,
    machines: T,
}

/// A machine in the tail file: events as `[time, event, message]`, oldest first, times in
/// nanoseconds since 1970 (exact, and read without parsing a date).
#[derive(Serialize, Deserialize)]
struct TailMachine<'a> {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    alive: Option<i64>,
    #[serde(borrow)]
    events: Vec<(i64, Cow<'a, str>, Cow<'a, str>)>,
}

/// A time as the tail file writes it; `None` outside 1677–2262.
fn nanos(time: DateTime<Utc>) -> Option<i64> {
    time.timestamp_nanos_opt()
}

fn shown(path: &Path) -> String {
    escape::text(&path.display().to_string()).into_owned()
}

/// Writes the tail file whole: a temporary file, synced, renamed over the old one (the caller
/// syncs the directory).
pub fn write(dir: &Path, files: &Lengths, known: &HashMap<String, Known>) -> Result<()> {
    let path = dir.join(NAME);
    let temp = dir.join(TEMP);
    let mut ids: Vec<&String> = known.keys().collect();
    ids.sort_unstable();
    let file = File::create(&temp).with_context(|| format!("{}: cannot create", shown(&temp)))?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let mut line = Vec::with_capacity(4096);
    let put = || -> Result<()> {
        write!(out, "{{\"version\":{VERSION},\"files\":")?;
        serde_json::to_writer(&mut out, files)?;
        out.write_all(b",\"machines\":{")?;
        for (i, id) in ids.into_iter().enumerate() {
            line.clear();
            if i > 0 {
                line.push(b',');
            }
            machine_line(&mut line, id, &known[id])?;
            out.write_all(&line)?;
        }
        out.write_all(b"}}\n")?;
        out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        Ok(())
    };
    put().with_context(|| format!("{}: cannot write", shown(&temp)))?;
    fs::rename(&temp, &path).with_context(|| format!("{}: cannot replace", shown(&path)))
}

/// A machine of the tail file, newline included, as serde writes `"ID":`[`TailMachine`].
fn machine_line(out: &mut Vec<u8>, id: &str, known: &Known) -> Result<()> {
    let outside = || anyhow!("machine {:?}: a time past 2262", escape::text(id));
    quoted::string(out, id);
    out.extend_from_slice(b":{");
    if let Some(alive) = known.alive {
        out.extend_from_slice(b"\"alive\":");
        quoted::number(out, nanos(alive).ok_or_else(outside)?);
        out.push(b',');
    }
    out.extend_from_slice(b"\"events\":[");
    for (i, e) in known.tail.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.push(b'[');
        quoted::number(out, nanos(e.time).ok_or_else(outside)?);
        out.push(b',');
        quoted::string(out, &e.event);
        out.push(b',');
        quoted::string(out, &e.message);
        out.push(b']');
    }
    out.extend_from_slice(b"]}\n");
    Ok(())
}

/// A reader of the tail file's bytes that may decline (`tail_direct::read`).
pub type Direct = fn(&[u8], &mut Interner) -> Option<Parsed>;

/// Reads the tail file where it matches `files`, by `direct` where it does not decline:
/// `Ok(None)` where it is missing, `Err` with what to say where it cannot be used.
pub fn read(
    dir: &Path,
    files: &Lengths,
    names: &mut Interner,
    direct: Direct,
) -> Result<Option<HashMap<String, Known>>, String> {
    let path = dir.join(NAME);
    let text = match fs::read(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: cannot be read ({e})", shown(&path))),
    };
    let unusable = |why: &str| format!("{}: {why}; the event files are read instead", shown(&path));
    // Read straight from its bytes; serde where that declines (and to say what is wrong).
    let tail = match direct(&text, names) {
        Some(tail) => tail,
        None => parse(&text, names).map_err(|line| {
            unusable(&format!("not the tail the collector writes (line {line})"))
        })?,
    };
    if tail.version != VERSION {
        return Err(unusable(&format!(
            "version {} is not {VERSION}",
            tail.version
        )));
    }
    if &tail.files != files {
        return Err(unusable(
            "does not match the event files (a poll was interrupted, or they were changed)",
        ));
    }
    Ok(Some(tail.machines))
}

/// A tail file read, its version not checked yet.
#[derive(Debug, PartialEq)]
pub struct Parsed {
    pub version: u32,
    pub files: Lengths,
    pub machines: HashMap<String, Known>,
}

/// A time as the tail file holds it.
pub fn time(nanos: i64) -> DateTime<Utc> {
    DateTime::<Utc>::from_timestamp_nanos(nanos)
}

/// The tail file read by serde: the careful path, and the line it failed on.
pub fn parse(text: &[u8], names: &mut Interner) -> Result<Parsed, usize> {
    let tail: TailFile<HashMap<String, TailMachine>> =
        serde_json::from_slice(text).map_err(|e| e.line())?;
    let mut known = HashMap::with_capacity(tail.machines.len());
    for (id, machine) in tail.machines {
        let tail = machine
            .events
            .iter()
            .map(|(t, event, message)| Seen {
                time: time(*t),
                event: names.get(event),
                message: names.get(message),
            })
            .collect();
        let alive = machine.alive.map(time);
        known.insert(id, Known { tail, alive });
    }
    Ok(Parsed {
        version: tail.version,
        files: tail.files,
        machines: known,
    })
}

/// The day files not read yet, to learn from newest first.
#[derive(Debug, Default)]
pub struct Backlog {
    /// Oldest first: the next to read is the last.
    unread: Vec<PathBuf>,
}

/// A line of an event file, read back.
#[derive(Deserialize)]
struct ReadLine<'a> {
    #[serde(borrow)]
    machine: Cow<'a, str>,
    #[serde(borrow)]
    time: Cow<'a, str>,
    #[serde(default, borrow)]
    event: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    message: Cow<'a, str>,
    #[serde(default)]
    gap: bool,
}

impl Backlog {
    /// Every day file (oldest first) still to read.
    pub fn new(files: Vec<PathBuf>) -> Backlog {
        Backlog { unread: files }
    }

    /// Reads day files, newest first, until every machine `wanted` names is complete or
    /// every file has been read.
    pub fn learn(
        &mut self,
        known: &mut HashMap<String, Known>,
        names: &mut Interner,
        wanted: &mut dyn Iterator<Item = &str>,
    ) -> Result<()> {
        let mut missing: Vec<&str> = wanted
            .filter(|id| !known.get(*id).is_some_and(Known::complete))
            .collect();
        while !missing.is_empty()
            && let Some(file) = self.unread.pop()
        {
            learn_file(&file, known, names)?;
            missing.retain(|id| !known.get(*id).is_some_and(Known::complete));
        }
        Ok(())
    }

    /// Every file has been read: a machine not known is new.
    pub fn done(&self) -> bool {
        self.unread.is_empty()
    }
}

/// Puts what one day file holds before what newer files taught.
fn learn_file(path: &Path, known: &mut HashMap<String, Known>, names: &mut Interner) -> Result<()> {
    let file = File::open(path).with_context(|| format!("{}: cannot open", shown(path)))?;
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let mut here: HashMap<String, Known> = HashMap::new();
    let mut buf = Vec::new();
    let mut line_no = 0;
    loop {
        buf.clear();
        if reader
            .read_until(b'\n', &mut buf)
            .with_context(|| format!("{}: cannot read", shown(path)))?
            == 0
        {
            break;
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
        let time = DateTime::parse_from_rfc3339(&line.time)
            .map(|t| t.with_timezone(&Utc))
            .map_err(|_| bad("the time is not RFC 3339"))?;
        let event = line
            .event
            .ok_or_else(|| bad("a line with neither event nor gap"))?;
        let machine = here.entry(line.machine.into_owned()).or_default();
        // metal-api stores no Alive: an Alive line is a last error event the collector kept.
        if event == "Alive" {
            machine.alive = Some(machine.alive.map_or(time, |t| t.max(time)));
            continue;
        }
        let shown = Shown {
            time,
            event: &event,
            message: &line.message,
        };
        machine.extend(&[shown], names);
    }
    for (id, older) in here {
        let newer = known.entry(id).or_default();
        let room = KEEP.saturating_sub(newer.tail.len());
        if room > 0 {
            let from = older.tail.len().saturating_sub(room);
            newer.tail.splice(0..0, older.tail[from..].iter().cloned());
        }
        if newer.alive.is_none() {
            newer.alive = older.alive;
        }
    }
    Ok(())
}
