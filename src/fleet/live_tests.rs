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

/// Every line of the streams in time order (machines by id among equal times), as polls
/// append them, with its machine and its index in the machine's log.
fn in_time_order(streams: &[MachineLog]) -> Vec<(&str, usize, &Event)> {
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
    all
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
    let all = in_time_order(&streams);
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
    // Loaded in three parts (a thread each), against the summary read on one thread.
    let sources = Sources {
        paths: vec![dir.clone()],
        threads: Some(3),
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

/// Every machine's facts, as the fold adds them up.
#[derive(Default)]
struct AllFacts(Vec<crate::issues::MachineFacts>);

impl std::ops::AddAssign for AllFacts {
    fn add_assign(&mut self, other: AllFacts) {
        self.0.extend(other.0);
    }
}

/// `fleet_graph` over the directory, and the audit `issues DIR` makes of it at `now`.
fn graph_and_audit(
    dir: &Path,
    rules: &Ruleset,
    counting: &Counting,
    now: DateTime<Utc>,
) -> (crate::graph::Graph, Vec<crate::issues::Audited>) {
    let mut sources = Sources {
        paths: vec![dir.to_path_buf()],
        threads: Some(1),
        ..Sources::default()
    };
    let graph = crate::fleet::fleet_graph(&Inputs::resolve(&sources).unwrap(), rules, counting).0;
    sources.options.mode = crate::input::record::ReadMode::Audit;
    let folded = Inputs::resolve(&sources)
        .unwrap()
        .fold(|facts: &mut AllFacts, merged| {
            let trace = crate::replay::replay(&merged.log, rules);
            facts
                .0
                .push(crate::issues::MachineFacts::of(&merged.log, &trace));
        });
    (graph, audited(folded.value.0, now))
}

fn audited(
    mut facts: Vec<crate::issues::MachineFacts>,
    now: DateTime<Utc>,
) -> Vec<crate::issues::Audited> {
    facts.sort_by(|a, b| a.machine.cmp(&b.machine));
    let policy = crate::issues::Policy::for_metrics(now);
    crate::issues::audit(facts, &policy, &crate::issues::Filter::default(), true)
}

/// `machines.json` read as the audit reads it.
fn listed_for_audit(dir: &Path) -> std::collections::HashMap<String, MachineLog> {
    let options = InputOptions {
        mode: crate::input::record::ReadMode::Audit,
        ..InputOptions::default()
    };
    let path = dir.join("machines.json");
    let bytes = fs::read(&path).unwrap();
    let mut out = std::collections::HashMap::new();
    read_reader(
        &bytes[..],
        &path.display().to_string(),
        &options,
        &mut |r| {
            if let Record::Machine(log) = r {
                out.insert(log.machine.clone(), log);
            }
        },
    );
    out
}

/// The same history written poll by poll, but the live fleet fed only by following the day
/// files (`Follow`) and taking `machines.json` whole after each poll, as the watch is: its
/// summary, graph and audit equal `summarize`, `fleet_graph` and the audit over the
/// directory after every poll. Half the fleet is listed when the fleet is read, all of it
/// from the third poll on, and a flag of one machine changes in between.
fn followed_equals_read_whole(fleet: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(fleet);
    let dir = std::env::temp_dir().join(format!("fsmlog-follow-{fleet}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("events")).unwrap();
    let list: serde_json::Value =
        serde_json::from_slice(&fs::read(root.join("list-json/machines.json")).unwrap()).unwrap();
    let write_list = |count: usize, flag: bool| {
        let mut machines = list.clone();
        let all = machines.as_array_mut().unwrap();
        all.truncate(count);
        for machine in all.iter_mut() {
            machine["events"]["log"] = serde_json::json!([]);
        }
        if flag {
            all[0]["events"]["crash_loop"] = serde_json::json!(true);
        }
        fs::write(dir.join("machines.json"), machines.to_string()).unwrap();
    };
    let everyone = list.as_array().unwrap().len();
    write_list(everyone / 2, false);
    let streams = records(&root.join("ndjson/events.ndjson"));
    let all = in_time_order(&streams);
    let first = all[0].2.time;
    let last = all[all.len() - 1].2.time;
    let cut = first + (last - first) / 3;
    let mut history = History {
        dir: dir.clone(),
        lines: BTreeMap::new(),
    };
    let write = |history: &mut History, n: usize, machine: &str, event: &Event| {
        if n % 29 == 7 {
            history.gap(machine, event.time);
        }
        history.event(machine, event);
        if n % 97 == 5 {
            history.event(machine, event);
        }
    };
    let mut at = 0;
    while at < all.len() && all[at].2.time < cut {
        write(&mut history, at, all[at].0, all[at].2);
        at += 1;
    }
    let rules = Ruleset::resolve(if fleet.contains("0.19") {
        "metal-api-v0.19.0"
    } else {
        "metal-api-v0.42.2"
    })
    .unwrap();
    // By day, as the watch counts for its page's trends.
    let counting = Counting {
        period: Some(crate::window::Period::Day),
        ..Counting::default()
    };
    let mut follow = crate::fleet::Follow::start(&dir).unwrap();
    let inputs = Inputs::resolve(&Sources {
        paths: vec![dir.clone()],
        threads: Some(1),
        ..Sources::default()
    })
    .unwrap();
    let (mut live, _) = LiveFleet::load(&dir, &inputs, &rules, &counting);
    let now = last + TimeDelta::hours(2);
    let check = |live: &mut LiveFleet, when: &str| {
        live.list_all(&listed_for_audit(&dir));
        assert_eq!(
            live.summary(),
            summarized(&dir, &rules, &counting),
            "{fleet}, {when}: summary"
        );
        let (graph, judged) = graph_and_audit(&dir, &rules, &counting, now);
        assert_eq!(live.graph(), graph, "{fleet}, {when}: graph");
        assert_eq!(
            audited(live.audit_facts(), now),
            judged,
            "{fleet}, {when}: audit"
        );
    };
    check(&mut live, "as loaded");
    let mut poll = cut;
    let mut polls = 0;
    while at < all.len() {
        poll += TimeDelta::hours(6);
        while at < all.len() && all[at].2.time < poll {
            write(&mut history, at, all[at].0, all[at].2);
            at += 1;
        }
        polls += 1;
        match polls {
            2 => write_list(everyone / 2, true),
            3 => write_list(everyone, true),
            _ => {}
        }
        follow.appended(&mut live).unwrap();
        if polls <= 4 || polls % 5 == 0 || at == all.len() {
            check(&mut live, &format!("after the poll up to {poll}"));
        }
    }
    assert!(polls > 3, "{fleet}: the history was fed in several polls");
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_live_fleet_following_its_day_files_judges_as_the_history_read_whole() {
    followed_equals_read_whole("fleet-v0.42.2");
    followed_equals_read_whole("fleet-v0.19.0");
}

/// Lines the live fleet cannot take as `report` reads them are said, never judged: a line
/// older than one read before it, a day file that shrank, a line that is no event.
#[test]
fn lines_a_live_fleet_cannot_take_are_said() {
    let dir = std::env::temp_dir().join(format!("fsmlog-follow-odd-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("events")).unwrap();
    let day = dir.join("events/2026-01-02.ndjson");
    let line = |time: &str| {
        format!(
            "{{\"machine\":\"m1\",\"time\":\"{time}\",\"event\":\"Waiting\",\"message\":\"\"}}\n"
        )
    };
    fs::write(&day, line("2026-01-02T10:00:00Z")).unwrap();
    let rules = Ruleset::resolve("metal-api-v0.42.2").unwrap();
    let counting = Counting::default();
    let sources = Sources {
        paths: vec![dir.clone()],
        threads: Some(1),
        ..Sources::default()
    };
    let start = || {
        let follow = crate::fleet::Follow::start(&dir).unwrap();
        let inputs = Inputs::resolve(&sources).unwrap();
        (follow, LiveFleet::load(&dir, &inputs, &rules, &counting).0)
    };
    let append = |text: &str| {
        let mut file = fs::OpenOptions::new().append(true).open(&day).unwrap();
        file.write_all(text.as_bytes()).unwrap();
    };
    // In order, and a line still being written: taken, and waited for.
    let (mut follow, mut live) = start();
    append(&line("2026-01-02T11:00:00Z"));
    append("{\"machine\":\"m1\",\"ti");
    assert_eq!(follow.appended(&mut live).unwrap(), 1);
    append("me\":\"2026-01-02T12:00:00Z\",\"event\":\"Waiting\",\"message\":\"\"}\n");
    assert_eq!(follow.appended(&mut live).unwrap(), 1);
    assert_eq!(live.summary(), summarized(&dir, &rules, &counting));
    // Older than the newest read.
    append(&line("2026-01-02T09:00:00Z"));
    let why = follow.appended(&mut live).unwrap_err().0;
    assert!(why.contains("m1") && why.contains("older"), "{why}");
    // A file shorter than it was read (a torn line repaired).
    let (mut follow, mut live) = start();
    let bytes = fs::read(&day).unwrap();
    fs::write(&day, &bytes[..bytes.len() - 10]).unwrap();
    let why = follow.appended(&mut live).unwrap_err().0;
    assert!(why.contains("shorter"), "{why}");
    // A file that ended in a line cut short when it was read: what the read counted of it is
    // gone once the collector repairs it, whether or not lines came after.
    fs::write(
        &day,
        line("2026-01-02T10:00:00Z") + "{\"machine\":\"m1\",\"ti",
    )
    .unwrap();
    let (mut follow, mut live) = start();
    fs::write(&day, line("2026-01-02T10:00:00Z")).unwrap();
    let why = follow.appended(&mut live).unwrap_err().0;
    assert!(why.contains("cut short"), "{why}");
    // A line that is no event, said with its line in the file.
    fs::write(&day, line("2026-01-02T10:00:00Z")).unwrap();
    let (mut follow, mut live) = start();
    append("not json\n");
    let why = follow.appended(&mut live).unwrap_err().0;
    assert!(why.contains(":2:"), "{why}");
    let _ = fs::remove_dir_all(&dir);
}
