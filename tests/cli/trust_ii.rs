//! Trust II (issue 17): what operators really paste and append is read once, and nothing from
//! input can fool a reader. One test (or a few) per numbered item of the issue, on the files in
//! `testdata/trust-ii/`; each failed before the fix.

use std::path::{Path, PathBuf};
use std::process::Command as Process;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::*;

fn trust(rel: &str) -> PathBuf {
    testdata("trust-ii").join(rel)
}

/// The `unexpected` table and `inputs.events` of a report over `paths`.
fn answer(paths: &[&Path], threads: Option<&str>) -> (Value, Value) {
    let mut args = vec!["report", "-o", "json"];
    if let Some(n) = threads {
        args.extend(["--threads", n]);
    }
    args.extend(paths.iter().map(|p| arg(p)));
    let (code, out, stderr) = run_json(&args);
    assert_eq!(code, 0, "{args:?}: {stderr}");
    (out["unexpected"].clone(), out["inputs"]["events"].clone())
}

// Item 1: a machine appended to its own file is one machine, as in two files.

#[test]
fn item_1_a_table_appended_to_itself_is_read_as_the_table_once() {
    // The seed machine has one pair, PXE Booting in Waiting, three times (README).
    for file in ["seed-twice.txt", "seed-logs-twice.json"] {
        let (code, out, stderr) = run_json(&[
            "report",
            "-o",
            "json",
            arg(&trust(&format!("appended/{file}"))),
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
fn item_1_two_days_appended_are_not_bridged() {
    // Day 1 ends Phoned Home; day 2's export begins at Waiting, days later: read as two files
    // are, the gap is kept and nothing is unexpected (a bridge made Phoned Home → Waiting).
    let dir = tempfile::tempdir().unwrap();
    for (file, cut) in [("two-days.txt", "TIME "), ("two-days-logs.json", "[")] {
        let whole = std::fs::read_to_string(trust(&format!("appended/{file}"))).unwrap();
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
        let appended = trust(&format!("appended/{file}"));
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

/// A machine's log rows, newest first, and what metalctl prints after them.
fn rows_of(file: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(file).unwrap();
    let mut stream = serde_json::Deserializer::from_str(&text).into_iter::<Value>();
    stream.next().unwrap().unwrap().as_array().unwrap().clone()
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

fn json_of(rows: &[Value]) -> String {
    format!("{}\n", serde_json::to_string_pretty(rows).unwrap())
}

#[test]
fn item_1_a_fleet_appended_any_way_gives_one_answer() {
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

// Item 2: `[]` is said, and no gate passes on it.

#[test]
fn item_2_an_empty_list_is_no_machine_and_no_gate_passes_on_it() {
    let dir = trust("empty-list");
    let (code, out, stderr) = run_json(&["check", "-o", "json", arg(&dir)]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(out["passed"], false);
    assert!(
        stderr.contains("fsmlog: note: ")
            && stderr.contains("machines.json:1: an empty array `[]`, read as a machine list that matched nothing: no machine"),
        "{stderr}"
    );
    assert!(stderr.contains("no machine was read"), "{stderr}");
    let (code, out, stderr) = run_json(&["issues", "-o", "json", "--all", arg(&dir)]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(out["machines"], json!([]), "no machine named `machines`");
    let (code, report, _) = run_json(&["report", "-o", "json", arg(&dir)]);
    assert_eq!(code, 0);
    assert_eq!(report["inputs"]["machines"], 0);
    assert_eq!(report["inputs"]["notes"][0]["line"], 1);
    let (code, _, _) = run_json(&["check", "-o", "json", "--allow-empty", arg(&dir)]);
    assert_eq!(code, 0);
}

#[test]
fn item_2_machines_without_a_single_event_give_a_gate_nothing_to_pass_on() {
    // A machine's empty log (named by its UUID) is a machine, but no gate passes on it.
    let empty = testdata("trust/no-events/00000000-0000-4000-8000-00000000e0e0.json");
    let (_, report, stderr) = run_json(&["report", "-o", "json", arg(&empty)]);
    assert_eq!(report["inputs"]["machines"], 1);
    assert!(
        stderr.contains(
            "read as the log of machine 00000000-0000-4000-8000-00000000e0e0 without events"
        ),
        "{stderr}"
    );
    for gate in [
        vec!["check", "-o", "json"],
        vec![
            "diff",
            "--old",
            "metal-api-v0.19.0",
            "--new",
            "metal-api",
            "-o",
            "json",
        ],
        vec!["issues", "--fail-on", "minor", "-o", "json"],
    ] {
        let mut args = gate.clone();
        args.push(arg(&empty));
        let (code, _, stderr) = run_json(&args);
        assert_eq!(code, 2, "{gate:?}: {stderr}");
        assert!(
            stderr.contains("no event was read, so there is nothing to gate on"),
            "{stderr}"
        );
        args.insert(1, "--allow-empty");
        let (code, _, stderr) = run_json(&args);
        assert_ne!(code, 2, "{gate:?} --allow-empty: {stderr}");
    }
}

// Item 3: numbered pasted rows are rows; a row behind other text is named.

#[test]
fn item_3_numbered_rows_are_read_and_a_buried_row_is_named() {
    let (code, out, stderr) = run_json(&["report", "-o", "json", arg(&trust("numbered.md"))]);
    assert_eq!(code, 2, "the buried row is an error: {stderr}");
    assert_eq!(out["inputs"]["machines"], 1);
    assert_eq!(
        out["inputs"]["events"], 5,
        "the rows behind `1. `, `3) `, `(4) `, `10. `"
    );
    // The oldest row was recorded in Waiting, so it counts; the newest arrives there.
    assert_eq!(
        pairs(&out["unexpected"]),
        [("Waiting".into(), "PXE Booting".into(), 2, 1)]
    );
    let errors = out["inputs"]["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0]["line"], 9);
    assert!(
        errors[0]["message"]
            .as_str()
            .unwrap()
            .contains("a row after other text (\"Step 6:\")"),
        "{errors:?}"
    );
}

// Item 4: every character that hides or reorders text is shown escaped.

/// Every character the fixture hides in ids, messages and event names.
const HIDDEN: [char; 33] = [
    '\u{ad}',
    '\u{34f}',
    '\u{61c}',
    '\u{115f}',
    '\u{1160}',
    '\u{180e}',
    '\u{200b}',
    '\u{200c}',
    '\u{200d}',
    '\u{200e}',
    '\u{200f}',
    '\u{2028}',
    '\u{2029}',
    '\u{202a}',
    '\u{202b}',
    '\u{202c}',
    '\u{202d}',
    '\u{202e}',
    '\u{2060}',
    '\u{2066}',
    '\u{2067}',
    '\u{2068}',
    '\u{2069}',
    '\u{3164}',
    '\u{feff}',
    '\u{ffa0}',
    '\u{e0001}',
    '\u{e0041}',
    '\u{e007f}',
    '\u{1b}',
    '\u{7f}',
    '\u{85}',
    '\u{9b}',
];

#[test]
fn item_4_no_output_shows_a_hidden_character_raw() {
    let fixture = trust("invisible.json");
    let fixture = arg(&fixture);
    let diff = ["diff", "--old", "metal-api-v0.19.0", "--new", "metal-api"];
    let runs: Vec<(Vec<&str>, &[&str])> = vec![
        (vec!["report"], &["table", "markdown", "csv", "html"]),
        (vec!["replay"], &["table", "csv"]),
        (vec!["explain"], &["table", "markdown", "csv"]),
        (vec!["issues"], &["table", "markdown", "csv"]),
        (vec!["graph"], &["svg", "dot", "mermaid"]),
        (vec!["check"], &["table", "markdown", "junit"]),
        (diff.to_vec(), &["table", "markdown"]),
    ];
    for (command, outputs) in runs {
        for output in outputs {
            let mut args = command.clone();
            args.extend(["-o", output, fixture]);
            let (_, stdout, stderr) = stdout_of(&args);
            for c in HIDDEN {
                assert!(!stdout.contains(c), "{args:?} shows U+{:04X} raw", c as u32);
                assert!(
                    !stderr.contains(c),
                    "{args:?} stderr shows U+{:04X} raw",
                    c as u32
                );
            }
            if command == ["report"] && *output == "table" {
                // Machines that differ by an invisible character are shown apart.
                assert!(
                    stdout.contains("crash loop (33): m-1\\u{1b}, m-1\\u{7f}, m-1\\u{85}"),
                    "{stdout}"
                );
                assert!(
                    stderr.contains("\\u{202e}"),
                    "stderr names the bad time: {stderr}"
                );
            }
        }
    }
    let shown = on_terminal(120, &["issues", "--all", fixture], &[("NO_COLOR", "1")]);
    for c in HIDDEN {
        assert!(
            !shown.contains(c),
            "the terminal shows U+{:04X} raw",
            c as u32
        );
    }
}

// Item 5: commands fsmlog prints are safe to paste.

#[test]
fn item_5_a_suggested_command_quotes_what_a_file_name_says() {
    let dir = trust("shell");
    let (_, out, _) = stdout_of(&["explain", arg(&dir)]);
    let line = out
        .lines()
        .find(|l| l.contains("metalctl machine logs"))
        .expect("a machine to look at");
    assert!(
        line.contains("metalctl machine logs '$(touch PWNED) it'\\''s'   # first at"),
        "{line}"
    );
    // Pasted into a shell, the quoted word is the id, and runs nothing.
    let work = tempfile::tempdir().unwrap();
    let command = line
        .trim()
        .replacen("metalctl machine logs", "printf %s", 1);
    let echoed = Process::new("sh")
        .args(["-c", &command])
        .current_dir(work.path())
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&echoed.stdout),
        "$(touch PWNED) it's"
    );
    assert!(!work.path().join("PWNED").exists());
    // A plain id stays as it is.
    let (_, seed, _) = stdout_of(&["explain", arg(&testdata("seed-machine.txt"))]);
    assert!(
        seed.contains("  metalctl machine logs seed-machine   # first at"),
        "{seed}"
    );
}

// Item 6: a stream of JSON documents is every document.

#[test]
fn item_6_concatenated_and_one_a_line_json_documents_are_every_machine() {
    let fleet = testdata("fleet-v0.42.2");
    let (_, whole, _) = run_json(&["report", "-o", "json", arg(&fleet.join("list-json"))]);
    let (code, lines, stderr) = run_json(&["report", "-o", "json", arg(&trust("list-lines.json"))]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(lines["inputs"]["machines"], 12);
    assert_eq!(lines["unexpected"], whole["unexpected"]);
    assert_eq!(lines["inputs"]["events"], whole["inputs"]["events"]);
    let describe = fleet.join("describe-json");
    let three: Vec<PathBuf> = ["043afe87", "2513f57b", "339088e1"]
        .iter()
        .map(|id| {
            std::fs::read_dir(&describe)
                .unwrap()
                .map(|e| e.unwrap().path())
                .find(|p| arg(&p.file_name().unwrap()).starts_with(id))
                .unwrap()
        })
        .collect();
    let mut args = vec!["report", "-o", "json"];
    args.extend(three.iter().map(|p| arg(p)));
    let (_, separate, _) = run_json(&args);
    let (code, stream, stderr) =
        run_json(&["report", "-o", "json", arg(&trust("describe-stream.json"))]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stream["inputs"]["machines"], 3);
    assert_eq!(stream["unexpected"], separate["unexpected"]);
    assert_eq!(stream["machines"], separate["machines"]);
}

// Item 7: YAML as other printers indent it, and in flow style.

#[test]
fn item_7_yaml_of_any_indent_and_flow_style_reads_as_the_list() {
    let (_, list, _) = run_json(&[
        "report",
        "-o",
        "json",
        arg(&testdata("fleet-v0.42.2/list-json")),
    ]);
    for yaml in ["yaml/indent-4/machines.yaml", "yaml/flow/machines.yaml"] {
        for forced in [None, Some("list-json")] {
            let mut args = vec!["report", "-o", "json"];
            if let Some(format) = forced {
                args.extend(["--format", format]);
            }
            let file = testdata(yaml);
            args.push(arg(&file));
            let (code, out, stderr) = run_json(&args);
            assert_eq!(code, 0, "{yaml} {forced:?}: {stderr}");
            assert_eq!(out["unexpected"], list["unexpected"], "{yaml}");
            assert_eq!(out["inputs"]["formats"]["list-yaml"], 1, "{yaml}");
        }
    }
    let (code, _, stderr) = stdout_of(&[
        "report",
        "--format",
        "logs-json",
        arg(&testdata("yaml/indent-4/machines.yaml")),
    ]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains(
            "expected logs-yaml (an event array), but this element is a machine (list-yaml)"
        ),
        "{stderr}"
    );
}

// Item 8: 80 columns.

#[test]
fn item_8_at_80_columns_no_word_is_split_and_asked_for_columns_stay() {
    let fleet = testdata("fleet-v0.42.2/list-json");
    let explain = on_terminal(80, &["explain", arg(&fleet)], &[("NO_COLOR", "1")]);
    for line in explain.lines() {
        assert!(line.chars().count() <= 80, "{line}");
    }
    for split in ["Preparin\n", "Machine\n", "Commonl\n", "Bootin\n"] {
        assert!(!explain.contains(split), "{explain}");
    }
    assert!(
        explain
            .contains("│ State     ┆ Event       ┆ Count ┆ Machines ┆ Gap median ┆ Gap p90 ┆ Days"),
        "{explain}"
    );
    assert!(
        explain.contains("(Commonly after, Commonly before left out to fit 80 columns"),
        "{explain}"
    );
    let by_day = on_terminal(
        80,
        &["report", "--by", "day", arg(&fleet)],
        &[("NO_COLOR", "1")],
    );
    assert!(by_day.contains("┆ Per day ┆ Verdict "), "{by_day}");
    for line in by_day.lines() {
        assert!(line.chars().count() <= 80, "{line}");
    }
    // The summary line breaks between its items only.
    for columns in [80, 100, 120] {
        let shown = on_terminal(columns, &["report", arg(&fleet)], &[("NO_COLOR", "1")]);
        let summary: Vec<&str> = shown.lines().take_while(|l| !l.is_empty()).collect();
        for (i, line) in summary.iter().enumerate() {
            assert!(line.chars().count() <= columns, "{line}");
            if i + 1 < summary.len() {
                assert!(line.ends_with(" ·"), "breaks after an item: {summary:?}");
            }
        }
        assert!(summary.concat().contains("0 input errors"), "{summary:?}");
    }
}

// Item 9: the smaller ones.

#[test]
fn item_9_a_pair_seen_only_as_a_last_error_says_so() {
    let file = trust("00000000-0000-4000-8000-00000000a1e5.json");
    let (_, out, _) = stdout_of(&["explain", arg(&file)]);
    assert!(
        out.contains("every occurrence is an exported last error event, not a row of the log"),
        "{out}"
    );
    assert!(!out.contains("of 0 occurrences in a log"), "{out}");
    assert!(
        !out.contains("no occurrence has a stored event before it"),
        "{out}"
    );
}

#[test]
fn item_9_the_html_page_breaks_long_words_instead_of_the_viewport() {
    let Some(browser) = chromium() else {
        have("Chromium", false);
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (_, html, _) = stdout_of(&["report", "-o", "html", arg(&trust("long-words.json"))]);
    // The page with a probe after it that writes into the DOM whether any table overflows.
    let probe = r#"<script>document.body.setAttribute("data-overflow", [].some.call(document.querySelectorAll(".scroll"), function (d) { return d.scrollWidth > d.clientWidth; }) || document.documentElement.scrollWidth > window.innerWidth);</script>"#;
    let page = dir.path().join("page.html");
    std::fs::write(&page, format!("{html}{probe}")).unwrap();
    let dom = Process::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--window-size=1000,900",
            "--virtual-time-budget=2000",
            "--dump-dom",
        ])
        .arg(format!(
            "--user-data-dir={}",
            dir.path().join("profile").display()
        ))
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert!(
        dom.contains(r#"data-overflow="false""#),
        "a table overflows: {dom}"
    );
    // Our own words never break inside: only text from input may.
    assert!(html.contains(r#"<span class="input">"#));
    assert!(html.contains(".input { overflow-wrap: anywhere; }"));
}

#[test]
fn item_9_csv_guards_a_field_once_at_its_start() {
    let dir = tempfile::tempdir().unwrap();
    let list = json!([
        {"id": "-2+3", "events": {"log": [
            {"time": "2022-08-22T06:36:15Z", "event": "PXE Booting", "message": "[unexpectedly received in state waiting]"},
            {"time": "2022-08-22T06:32:44Z", "event": "Waiting", "message": "w"}]}},
        {"id": "=cmd", "events": {"log": [
            {"time": "2022-08-22T06:36:15Z", "event": "PXE Booting", "message": "[unexpectedly received in state waiting]"},
            {"time": "2022-08-22T06:32:44Z", "event": "Waiting", "message": "w"}]}}
    ]);
    let file = dir.path().join("list.json");
    std::fs::write(&file, list.to_string()).unwrap();
    let (_, csv, _) = stdout_of(&["report", "-o", "csv", arg(&file)]);
    let row = csv.lines().nth(1).unwrap();
    assert!(row.ends_with(",'-2+3 =cmd,unannounced-reboot"), "{row}");
}

#[test]
fn item_9_a_rule_set_name_must_show_as_the_text_it_is() {
    let (code, _, stderr) = stdout_of(&["rules", "lint", arg(&trust("bad-name-rules.json"))]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains(":2: the name holds U+001B, a character that hides or reorders text"),
        "{stderr}"
    );
    let (code, _, stderr) = stdout_of(&[
        "report",
        "--rules",
        arg(&trust("bad-name-rules.json")),
        arg(&testdata("seed-machine.txt")),
    ]);
    assert_eq!(code, 2);
    assert!(!stderr.contains('\u{1b}'), "{stderr:?}");
}

#[test]
fn item_9_every_command_s_help_ends_with_examples() {
    for command in [
        vec!["man"],
        vec!["rules", "list"],
        vec!["rules", "show"],
        vec!["rules", "export"],
        vec!["rules", "lint"],
        vec!["rules", "import-go"],
        vec!["rules", "propose"],
    ] {
        let mut args = command.clone();
        args.push("--help");
        let (code, out, _) = stdout_of(&args);
        assert_eq!(code, 0);
        let examples = out
            .rfind("Examples:\n")
            .unwrap_or_else(|| panic!("{command:?}: {out}"));
        let first = out[examples..].lines().nth(1).unwrap();
        assert!(
            first.trim_start().starts_with("fsmlog "),
            "{command:?}: {first}"
        );
    }
}
