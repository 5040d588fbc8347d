//! Random raw streams read lean against the same files held whole: in time order and out of
//! it, split into day files or not, with gap markers, lines read twice, bad lines and a list
//! beside them.

use std::fs;
use std::path::{Path, PathBuf};

use chrono::{SecondsFormat, TimeDelta, TimeZone};

use super::*;
use crate::event::EventKind;
use crate::fleet::Sources;
use crate::fleet::summaries::careful;
use crate::window::Window;

struct Random(u64);

impl Random {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }

    fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }
}

fn time(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

/// Writes a random history into `dir`; whether its lines are in time order per machine.
fn write_history(r: &mut Random, dir: &Path) {
    let _ = fs::remove_dir_all(dir);
    fs::create_dir_all(dir.join("events")).unwrap();
    let start = Utc.with_ymd_and_hms(2025, 9, 1, 22, 0, 0).unwrap();
    let machines = 1 + r.below(6);
    let in_order = !r.one_in(3);
    let mut lines: Vec<(DateTime<Utc>, String)> = Vec::new();
    for m in 0..machines {
        let mut t = start + TimeDelta::minutes(r.below(60) as i64);
        for _ in 0..r.below(60) {
            t += match r.below(8) {
                0 => TimeDelta::hours(r.below(30) as i64),
                1 => TimeDelta::zero(),
                2 if !in_order => -TimeDelta::seconds(r.below(600) as i64),
                _ => TimeDelta::seconds(r.below(300) as i64),
            };
            let line = match r.below(30) {
                0 => format!(r#"{{"machine":"m{m}","time":"{}","gap":true}}"#, time(t)),
                1 => "{not json".to_string(),
                2 => format!(
                    r#"{{"machine":"m{m}","time":"{}","event":"Rebooting","message":"x"}}"#,
                    time(t)
                ),
                _ => {
                    let kind = EventKind::ALL[r.below(EventKind::ALL.len() as u64) as usize];
                    let message = if r.one_in(2) { "a" } else { "b" };
                    format!(
                        r#"{{"machine":"m{m}","time":"{}","event":"{}","message":"{message}"}}"#,
                        time(t),
                        kind.name()
                    )
                }
            };
            let twice = r.one_in(12);
            lines.push((t, line.clone()));
            if twice {
                lines.push((t, line));
            }
        }
    }
    // Interleaved as a collector appends them (by time), or as they came.
    if in_order || r.one_in(2) {
        lines.sort_by_key(|(t, _)| *t);
    }
    let by_day = r.one_in(3);
    let one_file = !by_day && r.one_in(2);
    for (n, (t, line)) in lines.iter().enumerate() {
        let name = if by_day {
            t.format("%Y-%m-%d").to_string()
        } else if one_file {
            "all".to_string()
        } else {
            format!("part-{}", n * 3 / lines.len().max(1))
        };
        let path = dir.join("events").join(format!("{name}.ndjson"));
        let mut text = fs::read_to_string(&path).unwrap_or_default();
        text.push_str(line);
        text.push('\n');
        fs::write(&path, text).unwrap();
    }
    if r.one_in(2) {
        let listed: Vec<u64> = (0..machines + 1).filter(|_| !r.one_in(3)).collect();
        let list: Vec<String> = listed
            .into_iter()
            .map(|m| {
                let last = start + TimeDelta::hours(r.below(40) as i64);
                format!(
                    r#"{{"id":"m{m}","partition":{{"id":"p{}"}},"events":{{"log":[],"last_event_time":"{}","crash_loop":{},"failed_machine_reclaim":{},"last_error_event":{{"event":"{}","time":"{}","message":"a"}}}}}}"#,
                    r.below(2),
                    time(last),
                    r.one_in(2),
                    r.one_in(2),
                    if r.one_in(2) { "Alive" } else { "Phoned Home" },
                    time(last - TimeDelta::minutes(r.below(600) as i64)),
                )
            })
            .collect();
        fs::write(dir.join("machines.json"), format!("[{}]", list.join(","))).unwrap();
    }
}

fn inputs(dir: &Path, threads: usize) -> Inputs {
    let sources = Sources {
        paths: vec![dir.to_path_buf()],
        threads: Some(threads),
        ..Sources::default()
    };
    Inputs::resolve(&sources).unwrap()
}

#[test]
fn random_streams_read_lean_answer_as_held_whole() {
    let dir: PathBuf = std::env::temp_dir().join(format!("fsmlog-lean-{}", std::process::id()));
    let mut r = Random(0x5851_f42d_4c95_7f2d);
    let rule_sets = [
        Ruleset::resolve("metal-api-v0.19.0").unwrap(),
        Ruleset::resolve("metal-api-v0.42.2").unwrap(),
    ];
    let mut lean_machines = 0;
    let mut lean_rounds = 0;
    for round in 0..150 {
        write_history(&mut r, &dir);
        let rules = &rule_sets[round % 2];
        let counting = Counting {
            window: if r.one_in(3) {
                Window {
                    since: Some(Utc.with_ymd_and_hms(2025, 9, 2, 0, 0, 0).unwrap()),
                    until: None,
                }
            } else {
                Window::default()
            },
            ..Counting::default()
        };
        // Declined where a machine fell back after part of it was counted.
        // One thread, or lines parsed on several.
        let threads = 1 + round % 3;
        let Some(lean) = summarize(&inputs(&dir, threads), rules, &counting) else {
            continue;
        };
        let whole = careful(&inputs(&dir, 1), rules, &counting);
        assert_eq!(lean.0, whole.0, "round {round}");
        assert_eq!(lean.1, whole.1, "round {round}");
        lean_machines += lean.0.machines;
        lean_rounds += 1;
    }
    assert!(
        lean_rounds > 100 && lean_machines > 300,
        "{lean_rounds} rounds read lean"
    );
    let _ = fs::remove_dir_all(&dir);
}
