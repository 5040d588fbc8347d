//! The live fleet fed a history poll by poll against `summarize` over the directory as each
//! poll left it.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use chrono::{SecondsFormat, TimeDelta};

use super::*;
use crate::fleet::{Inputs, Sources, summarize};
use crate::input::{InputOptions, Record, read_reader};

/// Every machine record of a file.
fn records(path: &Path) -> Vec<MachineLog> {
    let mut out = Vec::new();
    let bytes = fs::read(path).unwrap();
    let name = path.display().to_string();
    read_reader(&bytes[..], &name, &InputOptions::default(), &mut |r| {
        if let Record::Machine(log) = r {
            out.push(log);
        }
    });
    out
}

/// A history directory being written as a collector writes it, line by line.
struct History {
    dir: PathBuf,
    lines: BTreeMap<NaiveDate, usize>,
}

impl History {
    fn day_file(&self, day: NaiveDate) -> PathBuf {
        self.dir
            .join("events")
            .join(format!("{}.ndjson", day.format("%Y-%m-%d")))
    }

    /// Appends a line to its day file; the line number it got.
    fn append(&mut self, day: NaiveDate, line: &serde_json::Value) -> usize {
        let mut file = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.day_file(day))
            .unwrap();
        writeln!(file, "{line}").unwrap();
        let n = self.lines.entry(day).or_default();
        *n += 1;
        *n
    }

    fn event(&mut self, machine: &str, event: &Event) -> Event {
        let time = event.time.to_rfc3339_opts(SecondsFormat::AutoSi, true);
        let line = serde_json::json!({
            "machine": machine,
            "time": time,
            "event": event.name.as_str(),
            "message": &*event.message,
        });
        let at = self.append(event.time.date_naive(), &line);
        let mut written = event.clone();
        written.line = at;
        written.source = 0;
        written
    }

    fn gap(&mut self, machine: &str, time: DateTime<Utc>) {
        let line = serde_json::json!({
            "machine": machine,
            "time": time.to_rfc3339_opts(SecondsFormat::AutoSi, true),
            "gap": true,
        });
        self.append(time.date_naive(), &line);
    }
}

/// `machines.json`: the fleet's list export with every log emptied, as the collector keeps it.
fn write_machines(list: &Path, dir: &Path) {
    let mut machines: serde_json::Value = serde_json::from_slice(&fs::read(list).unwrap()).unwrap();
    for machine in machines.as_array_mut().unwrap() {
        machine["events"]["log"] = serde_json::json!([]);
    }
    fs::write(dir.join("machines.json"), machines.to_string()).unwrap();
}

fn summarized(dir: &Path, rules: &Ruleset, counting: &Counting) -> Summary {
    let sources = Sources {
        paths: vec![dir.to_path_buf()],
        threads: Some(1),
        ..Sources::default()
    };
    summarize(&Inputs::resolve(&sources).unwrap(), rules, counting).0
}

/// One fleet's raw stream and list written as a history: what is older than the cut before the
/// live fleet loads it, the rest poll by poll (every six hours), with a line read twice and a
/// gap now and then; the live summary equals `summarize` after each poll.
fn live_equals_summarize(fleet: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(fleet);
    let dir = std::env::temp_dir().join(format!("fsmlog-live-{fleet}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("events")).unwrap();
    write_machines(&root.join("list-json/machines.json"), &dir);
    let listed: BTreeMap<String, MachineLog> = records(&dir.join("machines.json"))
        .into_iter()
        .map(|log| (log.machine.clone(), log))
        .collect();
    let streams = records(&root.join("ndjson/events.ndjson"));
    let first = streams
        .iter()
        .filter_map(|l| l.events.first())
        .map(|e| e.time)
        .min()
        .unwrap();
    let last = streams
        .iter()
        .filter_map(|l| l.events.last())
        .map(|e| e.time)
        .max()
        .unwrap();
    let cut = first + (last - first) / 3;
    let mut history = History {
        dir: dir.clone(),
        lines: BTreeMap::new(),
    };
    // Every line in time order (machines by id among equal times), as polls append them.
    let mut all: Vec<(&str, usize, &Event)> = streams
        .iter()
        .flat_map(|l| {
            l.events
                .iter()
                .enumerate()
                .map(move |(i, e)| (l.machine.as_str(), i, e))
        })
        .collect();
    all.sort_by_key(|(m, i, e)| (e.time, *m, *i));
    let extra = |i: usize| i % 97 == 5;
    let gap = |i: usize| i % 29 == 7;
    let mut before = all.iter().enumerate().filter(|(_, (_, _, e))| e.time < cut);
    for (n, (machine, _, event)) in before.by_ref() {
        if gap(n) {
            history.gap(machine, event.time);
        }
        history.event(machine, event);
        if extra(n) {
            history.event(machine, event);
        }
    }
    let rules = Ruleset::resolve(if fleet.contains("0.19") {
        "metal-api-v0.19.0"
    } else {
        "metal-api-v0.42.2"
    })
    .unwrap();
    let counting = Counting::default();
    let sources = Sources {
        paths: vec![dir.clone()],
        threads: Some(1),
        ..Sources::default()
    };
    let inputs = Inputs::resolve(&sources).unwrap();
    let (mut live, _) = LiveFleet::load(&dir, &inputs, &rules, &counting);
    assert_eq!(
        live.summary(),
        summarized(&dir, &rules, &counting),
        "as loaded"
    );
    let rest: Vec<_> = all
        .iter()
        .enumerate()
        .filter(|(_, (_, _, e))| e.time >= cut)
        .collect();
    let mut poll = cut;
    let mut at = 0;
    let mut polls = 0;
    while at < rest.len() {
        poll += TimeDelta::hours(6);
        let mut new: BTreeMap<&str, Vec<Event>> = BTreeMap::new();
        while at < rest.len() && rest[at].1.2.time < poll {
            let (n, (machine, _, event)) = rest[at];
            if gap(n) {
                history.gap(machine, event.time);
                // The events before the marker are handed on first.
                let before = new.remove(machine).unwrap_or_default();
                live.advance(machine, &before, listed.get(*machine));
                live.gap(machine, event.time);
            }
            let written = history.event(machine, event);
            new.entry(machine).or_default().push(written.clone());
            if extra(n) {
                new.entry(machine)
                    .or_default()
                    .push(history.event(machine, event));
            }
            at += 1;
        }
        for (machine, facts) in &listed {
            let events = new.remove(machine.as_str()).unwrap_or_default();
            live.advance(machine, &events, Some(facts));
        }
        for (machine, events) in new {
            live.advance(machine, &events, None);
        }
        polls += 1;
        if polls % 5 == 0 || at == rest.len() {
            assert_eq!(
                live.summary(),
                summarized(&dir, &rules, &counting),
                "{fleet}, after the poll up to {poll}"
            );
        }
    }
    assert!(polls > 3, "{fleet}: the history was fed in several polls");
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_live_fleet_fed_poll_by_poll_summarizes_as_the_history_read_whole() {
    live_equals_summarize("fleet-v0.42.2");
    live_equals_summarize("fleet-v0.19.0");
}
