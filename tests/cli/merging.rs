//! One machine from many records: the same machines split across files any way, appended to
//! their own files, concatenated, exported twice, or a raw stream cut into parts, give the
//! same answer.
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::*;

// 4. The same machine twice in one file is one machine.

/// Splits each machine's table into an older and a newer day (overlapping by a few rows)
/// and joins them as `tail -n +1 day1/*.txt day2/*.txt` prints them: one file, every machine
/// twice.
fn two_days_in_one_file(dir: &Path) -> PathBuf {
    let mut day1 = String::new();
    let mut day2 = String::new();
    let mut files: Vec<_> = std::fs::read_dir(testdata(TEXT_DIR))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let name = arg(file.file_name().unwrap());
        let (log, trailer) = match text.find("Recent last error") {
            Some(at) => text.split_at(at),
            None => (text.as_str(), ""),
        };
        let mut lines = log.lines().filter(|l| !l.trim().is_empty());
        let header = lines.next().unwrap();
        let rows: Vec<&str> = lines.collect();
        // Newest first: the newer day holds the first rows, the older the last ones.
        let cut = rows.len() / 2;
        let newer = &rows[..(cut + 2).min(rows.len())];
        let older = &rows[cut.saturating_sub(2)..];
        day1.push_str(&format!(
            "==> day1/{name} <==\n{header}\n{}\n\n",
            older.join("\n")
        ));
        day2.push_str(&format!(
            "==> day2/{name} <==\n{header}\n{}\n\n{trailer}\n",
            newer.join("\n")
        ));
    }
    let joined = dir.join("both-days.txt");
    std::fs::write(&joined, format!("{day1}{day2}")).unwrap();
    joined
}

#[test]
fn three_records_merge_whatever_the_threads() {
    let list = std::fs::read(testdata(LIST)).unwrap();
    let logs = testdata("fleet-v0.42.2/logs-json");
    let text = testdata(TEXT_DIR);
    let run = |threads: &str| {
        let output = fsmlog()
            .args([
                "report",
                "-o",
                "json",
                "--threads",
                threads,
                "-",
                arg(&logs),
                arg(&text),
            ])
            .write_stdin(list.clone())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0));
        output.stdout
    };
    let one = run("1");
    let four = run("4");
    assert_eq!(one, four);
    let json: Value = serde_json::from_slice(&one).unwrap();
    assert_eq!(json["inputs"]["machines"], 12);
    assert_eq!(
        json["unexpected"],
        report_of(&[arg(&testdata(LIST))])["unexpected"]
    );
}

#[test]
fn two_days_concatenated_count_once() {
    let dir = tempfile::tempdir().unwrap();
    let joined = two_days_in_one_file(dir.path());
    let concatenated = report_of(&[arg(&joined)]);
    let original = report_of(&[arg(&testdata(TEXT_DIR))]);
    assert_eq!(concatenated["inputs"]["machines"], 12);
    assert_eq!(concatenated["inputs"]["merged_machines"], 12);
    assert_eq!(concatenated["unexpected"], original["unexpected"]);
}

#[test]
fn a_machine_listed_twice_is_one_machine() {
    let dir = tempfile::tempdir().unwrap();
    let list: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(testdata(LIST)).unwrap()).unwrap();
    let mut twice = list.clone();
    twice.push(list[3].clone());
    let doubled = dir.path().join("doubled.json");
    std::fs::write(&doubled, serde_json::to_string_pretty(&twice).unwrap()).unwrap();
    let out = report_of(&[arg(&doubled)]);
    let alone = report_of(&[arg(&testdata(LIST))]);
    assert_eq!(out["inputs"]["machines"], 12);
    assert_eq!(out["unexpected"], alone["unexpected"]);
}

#[test]
fn the_same_machines_split_any_way_give_the_same_table() {
    let dir = tempfile::tempdir().unwrap();
    let joined = two_days_in_one_file(dir.path());
    let list = testdata(LIST);
    let describe = testdata("fleet-v0.42.2/describe-json");
    // The bundled describe files were generated with racks of their own, not the list's: where
    // the machines are is compared within one export (tests/cli/places.rs), not here.
    let table = |json: &Value| {
        let mut pairs = json["unexpected"].clone();
        for pair in pairs.as_array_mut().unwrap() {
            pair.as_object_mut().unwrap().remove("where");
        }
        pairs
    };
    let reference = table(&report_of(&[arg(&list)]));
    let list_bytes = std::fs::read(&list).unwrap();
    for threads in ["1", "3"] {
        fn with<'a>(threads: &'a str, paths: &[&'a str]) -> Vec<&'a str> {
            let mut args = vec!["report", "-o", "json", "--threads", threads];
            args.extend_from_slice(paths);
            args
        }
        let (_, a, _) = run_json(&with(threads, &[arg(&describe)]));
        let (_, b, _) = run_json_stdin(&with(threads, &["-", arg(&describe)]), &list_bytes);
        let (_, c, _) = run_json(&with(threads, &[arg(&list), arg(&list)]));
        let (_, d, _) = run_json(&with(threads, &[arg(&joined), arg(&list)]));
        for (name, got) in [
            ("per machine", a),
            ("stdin and files", b),
            ("twice", c),
            ("two days", d),
        ] {
            // Tables print whole seconds: compare what they can carry.
            let mut got = table(&got);
            let mut want = reference.clone();
            for pairs in [&mut got, &mut want] {
                for pair in pairs.as_array_mut().unwrap() {
                    for key in ["first_seen", "last_seen"] {
                        let t = pair[key].as_str().unwrap()[..19].to_string();
                        pair[key] = Value::String(t);
                    }
                }
            }
            assert_eq!(got, want, "{name}, --threads {threads}");
        }
    }
}

// 6. Flags follow time.

#[test]
fn a_stale_flag_does_not_win_over_newer_events() {
    let dir = testdata("merging/stale-flag");
    let old = report_of(&[arg(&dir.join("m-reclaim.json"))]);
    assert_eq!(old["machines"]["failed_machine_reclaim"][0], "m-reclaim");
    let merged = report_of(&[arg(&dir)]);
    assert_eq!(merged["inputs"]["merged_machines"], 1);
    assert_eq!(
        merged["machines"]["failed_machine_reclaim"],
        serde_json::json!([]),
        "the newer table shows the machine PXE boot after the reclaim failed"
    );
}

fn json_of(rows: &[Value]) -> String {
    format!("{}\n", serde_json::to_string_pretty(rows).unwrap())
}

fn table_of(rows: &[Value]) -> String {
    let mut out = String::from("TIME                            EVENT               MESSAGE\n");
    for row in rows {
        let time: DateTime<Utc> = row["time"].as_str().unwrap().parse().unwrap();
        out.push_str(&format!(
            "{}   {:<18}  {}\n",
            time.format("%a, %d %b %Y %H:%M:%S UTC"),
            row["event"].as_str().unwrap(),
            row["message"].as_str().unwrap()
        ));
    }
    out
}

/// A machine's log rows, newest first, and what metalctl prints after them.
fn rows_of(file: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(file).unwrap();
    let mut stream = serde_json::Deserializer::from_str(&text).into_iter::<Value>();
    stream.next().unwrap().unwrap().as_array().unwrap().clone()
}

/// The `unexpected` table and `inputs.events` of a report over `paths`.
fn answer(paths: &[&Path], threads: Option<&str>) -> (Value, Value) {
    let mut args = vec!["report", "-o", "json"];
    if let Some(n) = threads {
        args.extend(["--threads", n]);
    }
    args.extend(paths.iter().map(arg));
    let (code, out, stderr) = run_json(&args);
    assert_eq!(code, 0, "{args:?}: {stderr}");
    (out["unexpected"].clone(), out["inputs"]["events"].clone())
}

// Item 1: a machine appended to its own file is one machine, as in two files.

#[test]
fn a_table_appended_to_itself_is_read_as_the_table_once() {
    // The seed machine has one pair, PXE Booting in Waiting, three times (README).
    for file in ["seed-twice.txt", "seed-logs-twice.json"] {
        let (code, out, stderr) = run_json(&[
            "report",
            "-o",
            "json",
            arg(&testdata(&format!("merging/appended/{file}"))),
        ]);
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(
            pairs(&out["unexpected"]),
            [("Waiting".into(), "PXE Booting".into(), 3, 1)],
            "{file}"
        );
        assert_eq!(
            out["inputs"]["events"], 20,
            "{file}: every row read is counted"
        );
        assert_eq!(
            out["inputs"]["duplicates"], 10,
            "{file}: the copy counted once"
        );
        assert_eq!(out["inputs"]["merged_machines"], 1, "{file}");
        assert_eq!(
            out["machines"]["crash_loop"],
            json!([file.split('.').next().unwrap()])
        );
    }
}

#[test]
fn two_days_appended_are_not_bridged() {
    // Day 1 ends Phoned Home; day 2's export begins at Waiting, days later: read as two files
    // are, the gap is kept and nothing is unexpected (a bridge made Phoned Home → Waiting).
    let dir = tempfile::tempdir().unwrap();
    for (file, cut) in [("two-days.txt", "TIME "), ("two-days-logs.json", "[")] {
        let whole = std::fs::read_to_string(testdata(&format!("merging/appended/{file}"))).unwrap();
        let second = whole[1..].find(cut).unwrap() + 1;
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        std::fs::write(a.join(file), &whole[..second]).unwrap();
        std::fs::write(b.join(file), &whole[second..]).unwrap();
        let reversed = dir.path().join(format!("reversed-{file}"));
        std::fs::write(
            &reversed,
            format!("{}{}", &whole[second..], &whole[..second]),
        )
        .unwrap();
        let appended = testdata(&format!("merging/appended/{file}"));
        let one = answer(&[&appended], None);
        assert_eq!(one.0, json!([]), "{file}");
        assert_eq!(one.1, 11, "{file}");
        let two = answer(&[&a.join(file), &b.join(file)], None);
        assert_eq!(one, two, "{file}");
        let mut expected_reversed = answer(&[&reversed], Some("1"));
        assert_eq!(one, expected_reversed, "{file}, the newer day first");
        expected_reversed = answer(&[&reversed], None);
        assert_eq!(one, expected_reversed, "{file}");
    }
}

#[test]
fn a_fleet_appended_any_way_gives_one_answer() {
    // Every machine of a fleet exported twice (day 1 the older rows, day 2 the newer ones;
    // overlapping and not), as tables and as JSON logs, appended in one file in either
    // order, in one array, or as two files: one answer, with one thread or many.
    let fleet = testdata("fleet-v0.42.2/logs-json");
    for overlap in [true, false] {
        for (ext, write) in [
            ("txt", table_of as fn(&[Value]) -> String),
            ("json", json_of),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let variant = |name: &str| {
                let d = dir.path().join(name);
                std::fs::create_dir_all(&d).unwrap();
                d
            };
            let (day1, day2, appended, newer_first, whole) = (
                variant("day1"),
                variant("day2"),
                variant("appended"),
                variant("newer-first"),
                variant("whole"),
            );
            let one_array = variant("one-array");
            for entry in std::fs::read_dir(&fleet).unwrap() {
                let file = entry.unwrap().path();
                let rows = rows_of(&file);
                let n = rows.len();
                // Newest first: the newer day is the front of the log.
                let (newer, older) = if overlap {
                    (&rows[..(2 * n).div_ceil(3)], &rows[n / 3..])
                } else {
                    (&rows[..n / 2], &rows[n / 2..])
                };
                let name = format!("{}.{ext}", arg(&file.file_stem().unwrap()));
                std::fs::write(day1.join(&name), write(older)).unwrap();
                std::fs::write(day2.join(&name), write(newer)).unwrap();
                std::fs::write(appended.join(&name), write(older) + &write(newer)).unwrap();
                std::fs::write(newer_first.join(&name), write(newer) + &write(older)).unwrap();
                std::fs::write(whole.join(&name), write(&rows)).unwrap();
                if ext == "json" {
                    let mut both = older.to_vec();
                    both.extend_from_slice(newer);
                    std::fs::write(one_array.join(&name), json_of(&both)).unwrap();
                }
            }
            for threads in [Some("1"), None] {
                let two = answer(&[&day1, &day2], threads);
                assert!(!two.0.as_array().unwrap().is_empty(), "the fleet has pairs");
                let mut variants = vec![&appended, &newer_first];
                if ext == "json" {
                    variants.push(&one_array);
                }
                for one in variants {
                    assert_eq!(answer(&[one], threads), two, "{one:?} overlap {overlap}");
                }
                if overlap {
                    assert_eq!(
                        answer(&[&whole], threads).0,
                        two.0,
                        "two overlapping exports are the whole log"
                    );
                }
            }
        }
    }
}

/// A report's unexpected pairs, its event count, and the exit code of `check` on the same.
type Answer = (Vec<(String, String, u64, u64)>, u64, i32);

fn write_lines(path: &Path, lines: &[&(String, String)]) {
    let text: String = lines.iter().map(|(_, l)| format!("{l}\n")).collect();
    std::fs::write(path, text).unwrap();
}

/// The answer of a report over `paths`.
fn stream_answer(paths: &[PathBuf]) -> Answer {
    let mut args = vec!["report", "-o", "json"];
    args.extend(paths.iter().map(arg));
    let (code, json, stderr) = run_json(&args);
    assert_eq!(code, 0, "{stderr}");
    let (check, _, _) = stdout_of(&[&["check"], &args[3..]].concat());
    (
        pairs(&json["unexpected"]),
        json["inputs"]["events"].as_u64().unwrap(),
        check,
    )
}

/// The bundled raw stream's lines, oldest first.
fn stream_lines() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(testdata("fleet-v0.42.2/ndjson/events.ndjson")).unwrap();
    let mut lines: Vec<(String, String)> = text
        .lines()
        .map(|line| {
            let v: Value = serde_json::from_str(line).unwrap();
            (v["time"].as_str().unwrap().to_string(), line.to_string())
        })
        .collect();
    lines.sort();
    lines
}

#[test]
fn daily_files_of_a_raw_stream_answer_as_the_whole_stream() {
    let dir = tempfile::tempdir().unwrap();
    let line = |i: u32, day: u32, event: &str| {
        format!(
            "{{\"machine\":\"m1\",\"time\":\"2025-09-0{day}T00:0{i}:00Z\",\"event\":\"{event}\"}}\n"
        )
    };
    let day1: String = ["PXE Booting", "Preparing", "Registering", "Waiting"]
        .iter()
        .enumerate()
        .map(|(i, e)| line(i as u32, 1, e))
        .collect();
    let day2 = line(0, 2, "PXE Booting") + &line(1, 2, "Preparing");
    std::fs::write(dir.path().join("day1.ndjson"), &day1).unwrap();
    std::fs::write(dir.path().join("day2.ndjson"), &day2).unwrap();
    std::fs::write(dir.path().join("both.ndjson"), day1 + &day2).unwrap();
    let both = stream_answer(&[dir.path().join("both.ndjson")]);
    let days = stream_answer(&[
        dir.path().join("day1.ndjson"),
        dir.path().join("day2.ndjson"),
    ]);
    let waiting_pxe = ("Waiting".to_string(), "PXE Booting".to_string(), 1, 1);
    assert_eq!(both.0, vec![waiting_pxe]);
    assert_eq!(both.2, 1, "the gate fails on the whole stream");
    assert_eq!(days, both, "and on its two days");
}

#[test]
fn the_bundled_stream_split_by_time_or_shuffled_answers_as_the_whole() {
    let dir = tempfile::tempdir().unwrap();
    let lines = stream_lines();
    let whole = dir.path().join("whole.ndjson");
    write_lines(&whole, &lines.iter().collect::<Vec<_>>());
    let expected = stream_answer(std::slice::from_ref(&whole));
    assert!(expected.0.len() >= 2, "the stream has unexpected pairs");
    // Cuts by time just before each unexpected event (where a seam would hide it) and at
    // every tenth of the stream, each file given first and last.
    let (_, replayed, _) = stdout_of(&["replay", "-o", "ndjson", arg(&whole)]);
    let mut cuts: Vec<usize> = (1..10).map(|tenth| lines.len() * tenth / 10).collect();
    for machine in replayed.lines() {
        let machine: Value = serde_json::from_str(machine).unwrap();
        for step in machine["steps"].as_array().unwrap() {
            if step["verdict"] == "unexpected" {
                let time = step["time"].as_str().unwrap();
                cuts.push(lines.iter().position(|(t, _)| t.as_str() >= time).unwrap());
            }
        }
    }
    assert!(
        cuts.len() >= 9 + 8,
        "the stream's unexpected events are cut before"
    );
    for cut in cuts {
        let (a, b) = (dir.path().join("a.ndjson"), dir.path().join("b.ndjson"));
        write_lines(&a, &lines[..cut].iter().collect::<Vec<_>>());
        write_lines(&b, &lines[cut..].iter().collect::<Vec<_>>());
        assert_eq!(
            stream_answer(&[a.clone(), b.clone()]),
            expected,
            "cut at {cut}"
        );
        assert_eq!(
            stream_answer(&[b, a]),
            expected,
            "cut at {cut}, later file first"
        );
    }
    // Each line to one of three files by a fixed shuffle, the files in every order.
    let mut parts: [Vec<&(String, String)>; 3] = Default::default();
    for (i, line) in lines.iter().enumerate() {
        parts[(i * 7919 + i / 3) % 3].push(line);
    }
    let files: Vec<PathBuf> = (0..3)
        .map(|i| dir.path().join(format!("part{i}.ndjson")))
        .collect();
    for (file, part) in files.iter().zip(&parts) {
        write_lines(file, part);
    }
    for order in [[0, 1, 2], [2, 1, 0], [1, 2, 0]] {
        let given: Vec<PathBuf> = order.iter().map(|&i| files[i].clone()).collect();
        assert_eq!(stream_answer(&given), expected, "order {order:?}");
    }
}

#[test]
fn an_event_a_record_holds_twice_stays_twice_when_merged() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let table = write(
        d,
        "m.txt",
        "TIME  EVENT  MESSAGE\n\
         Tue, 16 Sep 2025 10:31:10 UTC   Crashed   [unexpectedly received in state crashing]: oops\n\
         Tue, 16 Sep 2025 10:31:10 UTC   Crashed   [unexpectedly received in state crashing]: oops\n\
         Tue, 16 Sep 2025 10:31:09 UTC   Crashed   oops\n\
         Tue, 16 Sep 2025 10:31:00 UTC   Preparing   starting metal-hammer\n",
    );
    let older = write(
        d,
        "m-older.txt",
        "Tue, 16 Sep 2025 09:00:00 UTC   PXE Booting   x\n",
    );
    let alone = run_json(&["report", "-o", "json", arg(&table)]).1;
    let merged = run_json(&[
        "report",
        "-o",
        "json",
        "--machine-id",
        "m",
        arg(&table),
        arg(&older),
    ])
    .1;
    assert_eq!(alone["unexpected"][0]["count"], 2);
    assert_eq!(merged["unexpected"][0]["count"], 2);
    assert_eq!(merged["inputs"]["duplicates"], 0);
}

#[test]
fn exports_that_do_not_overlap_join_without_a_false_pair() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Two exports of one machine, days apart: what happened between them is not in either.
    let day1 = write(
        d,
        "m-day1.txt",
        "Tue, 16 Sep 2025 10:02:00 UTC   Waiting       waiting for allocation\n\
         Tue, 16 Sep 2025 10:01:00 UTC   Registering   start registering\n",
    );
    let day2 = write(
        d,
        "m-day2.txt",
        "Thu, 18 Sep 2025 10:02:00 UTC   Waiting       waiting for allocation\n\
         Thu, 18 Sep 2025 10:01:00 UTC   Registering   start registering\n",
    );
    let out = run_json(&[
        "report",
        "-o",
        "json",
        "--machine-id",
        "m",
        arg(&day1),
        arg(&day2),
    ])
    .1;
    assert_eq!(out["inputs"]["merged_machines"], 1);
    assert_eq!(
        out["unexpected"],
        serde_json::json!([]),
        "no Registering in Waiting at the join"
    );
}
