//! At home in an operator's terminal: no raw control characters in any text output,
//! tables that fit the terminal, colour only where it belongs, pasted and old logs, YAML,
//! UTF-16, completions and the manual page.

use std::path::{Path, PathBuf};
use std::process::Command as Process;

use serde_json::Value;

use super::*;

/// The display width of a line (box drawing and ASCII are one column each).
fn width(line: &str) -> usize {
    line.chars().count()
}

/// A copy of the hostile fixture under a hostile file name, and a damaged file whose name
/// is hostile too (so that stderr names it).
fn hostile_inputs(dir: &Path) -> (PathBuf, PathBuf) {
    let good = dir.join("evil\u{1b}]0;pwned\u{7}\u{9b}.json");
    std::fs::copy(testdata("terminal/hostile.json"), &good).unwrap();
    let bad = dir.join("bad\u{1b}[2J\r.txt");
    std::fs::write(
        &bad,
        "Mon, 22 Aug 2022 06:32:44 UTC   Waiting   w\nnot a row \u{1b}]0;x\u{7}\n",
    )
    .unwrap();
    (good, bad)
}

const RAW: [&str; 5] = ["\u{1b}", "\u{7}", "\u{9b}", "\r", "\u{202e}"];

#[test]
fn no_control_character_reaches_stdout_or_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let (good, bad) = hostile_inputs(dir.path());
    for (command, formats) in [
        ("report", &["table", "markdown", "csv"][..]),
        ("replay", &["table", "csv"][..]),
        ("issues", &["table", "markdown", "csv"][..]),
    ] {
        for format in formats {
            let output = fsmlog()
                .args([command, "-o", format, arg(&good), arg(&bad)])
                .output()
                .unwrap();
            let stdout = String::from_utf8(output.stdout).unwrap();
            // CSV ends its records with CRLF, as RFC 4180 says; no other CR may appear.
            let stdout = if *format == "csv" {
                assert!(stdout.ends_with("\r\n"), "{stdout:?}");
                stdout.replace("\r\n", "\n")
            } else {
                stdout
            };
            let stderr = String::from_utf8(output.stderr).unwrap();
            for raw in RAW {
                assert!(
                    !stdout.contains(raw),
                    "{command} -o {format}: {raw:?} in stdout:\n{stdout}"
                );
                assert!(
                    !stderr.contains(raw),
                    "{command} -o {format}: {raw:?} in stderr:\n{stderr}"
                );
            }
            // The escaped text is there to see.
            assert!(stderr.contains("bad\\u{1b}[2J\\u{d}.txt:2"), "{stderr}");
            let shown = if *format == "markdown" {
                "\\\\u{1b}"
            } else {
                "\\u{1b}"
            };
            assert!(stdout.contains(shown), "{command} -o {format}:\n{stdout}");
            if command == "replay" {
                assert!(stdout.contains("]0;pwned\\u{7}"), "{stdout}");
            }
        }
    }
}

#[test]
fn markdown_and_csv_hold_markup_as_text() {
    let hostile = testdata("terminal/hostile.json");
    let (_, report, _) = run_json(&["report", "-o", "json", arg(&hostile)]);
    let id = report["unexpected"][0]["examples"][0]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        id.contains('\u{1b}'),
        "JSON keeps the id as it is, escaped by JSON itself"
    );
    let markdown = fsmlog()
        .args(["replay", "-o", "csv", arg(&hostile)])
        .output()
        .unwrap();
    let csv = String::from_utf8(markdown.stdout).unwrap();
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
    assert_eq!(
        rows.len(),
        2,
        "one row per step, a newline in a message does not split it"
    );
    assert!(rows[1][7].contains("<b>&amp; | `code`"), "{:?}", rows[1]);
}

#[test]
fn tables_fit_a_terminal_of_100_columns() {
    for args in [
        &["report", "fleet-v0.42.2/list-json"][..],
        &["report", "fleet-v0.19.0/text"][..],
        &[
            "replay",
            "fleet-v0.42.2/describe-json/2513f57b-4054-4b51-93e8-0c67992d646d.json",
        ][..],
        &[
            "diff",
            "--old",
            "metal-api-v0.19.0",
            "--new",
            "metal-api-v0.42.2",
            "fleet-v0.19.0/list-json",
        ][..],
        &[
            "issues",
            "--rules",
            "metal-api-v0.19.0",
            "fleet-v0.19.0/describe-json",
        ][..],
        &["explain", "fleet-v0.42.2/list-json"][..],
        &[
            "rules",
            "propose",
            "--rules",
            "metal-api-v0.19.0",
            "fleet-v0.19.0/list-json",
        ][..],
    ] {
        let shown = on_terminal(100, args, &[("NO_COLOR", "1")]);
        assert!(!shown.contains('\u{1b}'), "NO_COLOR: {shown}");
        for line in shown.lines() {
            assert!(
                width(line) <= 100,
                "{args:?}: {} columns: {line}",
                width(line)
            );
            // A long line breaks at a space, which it does not keep at its end.
            assert!(!line.ends_with(' '), "{args:?}: {line:?}");
        }
        let rows: Vec<&str> = shown.lines().filter(|l| l.starts_with('│')).collect();
        assert!(!rows.is_empty(), "{shown}");
        if args[0] == "rules" {
            // Every state and every target whole: no cell is blank in the matrix.
            assert!(
                rows.iter()
                    .all(|r| !r.contains("┆ ") || !r.contains("┆  ┆")),
                "{shown}"
            );
            continue;
        }
        for row in rows {
            let cells: Vec<&str> = row.trim_matches('│').split('┆').map(str::trim).collect();
            // Times, states, events and counts are never split: a continuation line of a
            // wrapped message leaves them empty, and a filled one holds a whole value.
            let first = cells[0];
            if args[0] == "replay" && !first.is_empty() && first != "Time" {
                assert_eq!(first.len(), 19, "a whole time: {row}");
            }
            if args[0] == "issues" && first != "Machine" {
                // A machine's id is shown once, on its first row; severities are whole.
                assert!(
                    ["", "minor", "major", "critical"].contains(&cells[2]),
                    "{row}"
                );
            }
            if args[0] == "report" && first != "State" && cells.len() >= 6 {
                assert!(!first.is_empty(), "a report row is one line: {row}");
                assert_eq!(cells[4].len(), 19, "a whole time: {row}");
            }
        }
    }
}

#[test]
fn ids_and_examples_shorten_on_a_terminal_only() {
    let shown = on_terminal(
        120,
        &["report", "fleet-v0.42.2/list-json"],
        &[("NO_COLOR", "1")],
    );
    assert!(shown.contains("2513f57b, 339088e1, +4"), "{shown}");
    assert!(shown.contains("2025-09-17 12:50:53"), "{shown}");
    assert!(!shown.contains("4054-4b51"), "{shown}");
    let wide = on_terminal(
        120,
        &["report", "--wide", "fleet-v0.42.2/list-json"],
        &[("NO_COLOR", "1")],
    );
    assert!(
        wide.contains("2513f57b-4054-4b51-93e8-0c67992d646d"),
        "{wide}"
    );
    let piped = fsmlog()
        .args(["report", arg(&testdata("fleet-v0.42.2/list-json"))])
        .output()
        .unwrap();
    let piped = String::from_utf8(piped.stdout).unwrap();
    assert!(piped.contains("2513f57b-4054-4b51-93e8-0c67992d646d"));
    assert!(piped.contains("2025-09-17T12:50:53.814Z"));
}

#[test]
fn colour_on_a_terminal_only() {
    let shown = on_terminal(120, &["report", "seed-machine.txt"], &[]);
    assert!(shown.contains("\u{1b}["), "a terminal gets colour: {shown}");
    let never = on_terminal(
        120,
        &["report", "--color", "never", "seed-machine.txt"],
        &[],
    );
    assert!(!never.contains('\u{1b}'), "{never}");
    let piped = fsmlog()
        .args(["report", arg(&testdata("seed-machine.txt"))])
        .output()
        .unwrap();
    assert!(!piped.stdout.contains(&0x1b));
    let forced = fsmlog()
        .args([
            "report",
            "--color",
            "always",
            arg(&testdata("seed-machine.txt")),
        ])
        .output()
        .unwrap();
    let forced = String::from_utf8(forced.stdout).unwrap();
    // The unexpected count in red.
    assert!(forced.contains("\u{1b}[38;5;9m     3 "), "{forced}");
}

// Pasted and older logs.

#[test]
fn a_whitespace_collapsed_seed_reads_as_the_original() {
    let (_, original, _) = run_json(&["report", "-o", "json", arg(&testdata("seed-machine.txt"))]);
    let (code, pasted, stderr) = run_json(&[
        "report",
        "-o",
        "json",
        arg(&testdata("pasted/seed-machine.txt")),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(pasted, original);
}

#[test]
fn the_seeds_quoted_line_is_pxe_booting_unexpected_in_phoned_home() {
    let (_, out, _) = run_json(&[
        "replay",
        "-o",
        "json",
        arg(&testdata("pasted/seed-line.txt")),
    ]);
    let step = &out["machines"][0]["steps"][0];
    assert_eq!(step["event"], "PXE Booting");
    assert_eq!(step["from"], "Phoned Home");
    assert_eq!(step["verdict"], "unexpected");
    assert_eq!(step["message"], "machine sent extended dhcp request");
}

#[test]
fn prose_and_markers_around_pasted_rows_are_skipped_and_counted() {
    let (code, out, stderr) =
        run_json(&["report", "-o", "json", arg(&testdata("pasted/ticket.md"))]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(out["inputs"]["events"], 6);
    assert_eq!(out["inputs"]["skipped_lines"], 8);
    assert_eq!(out["unexpected"][0]["state"], "Waiting");
    assert_eq!(out["unexpected"][0]["count"], 2);
}

#[test]
fn tables_of_2020_with_rfc3339_times_pasted_or_not() {
    for file in [
        "pasted/metal-api-109.txt",
        "pasted/metal-api-109-pasted.txt",
    ] {
        let (code, out, stderr) = run_json(&["replay", "-o", "json", arg(&testdata(file))]);
        assert_eq!(code, 0, "{file}: {stderr}");
        let steps = out["machines"][0]["steps"].as_array().unwrap();
        assert_eq!(steps.len(), 5, "{file}");
        assert_eq!(steps[0]["time"], "2020-09-16T07:28:45.814Z");
        assert_eq!(steps[4]["event"], "Planned Reboot");
        assert!(steps.iter().all(|s| s["verdict"] == "expected"));
    }
}

#[test]
fn in_a_regular_table_a_line_that_is_no_row_stays_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m.txt");
    std::fs::write(
        &file,
        "TIME                            EVENT     MESSAGE\nMon, 22 Aug 2022 06:32:44 UTC   Waiting   w\nsomething else\n",
    )
    .unwrap();
    let output = fsmlog().args(["report", arg(&file)]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains("m.txt:3: expected a row starting with a time"),
        "{stderr}"
    );
}

#[test]
fn a_file_whose_only_row_failed_is_no_machine() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m.txt");
    std::fs::write(&file, "Mon, 22 Aug 2022 06:32:44 XYZ   Waiting   w\n").unwrap();
    let output = fsmlog().args(["replay", arg(&file)]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(!stdout.contains("machine m"), "{stdout}");
}

// YAML and UTF-16.

#[test]
fn every_yaml_shape_reads_as_its_json_twin() {
    let fleet = "fleet-v0.42.2";
    for (yaml, json, format) in [
        ("yaml/list", "list-json", "list-yaml"),
        ("yaml/describe", "describe-json", "describe-yaml"),
        ("yaml/v2", "v2-json", "v2-yaml"),
        (
            "yaml/container-dump",
            "container-dump",
            "container-dump-yaml",
        ),
        ("yaml/event-api", "event-api", "event-api-yaml"),
        ("yaml/logs", "logs-json", "logs-yaml"),
    ] {
        let (code, mut from_yaml, stderr) =
            run_json(&["report", "-o", "json", arg(&testdata(yaml))]);
        assert_eq!(code, 0, "{yaml}: {stderr}");
        let (_, mut from_json, _) = run_json(&[
            "report",
            "-o",
            "json",
            arg(&testdata(&format!("{fleet}/{json}"))),
        ]);
        assert!(
            from_yaml["inputs"]["formats"][format].as_u64().unwrap() > 0,
            "{yaml}"
        );
        for report in [&mut from_yaml, &mut from_json] {
            report["inputs"]["formats"] = Value::Null;
        }
        assert_eq!(from_yaml, from_json, "{yaml}");
    }
}

#[test]
fn a_yaml_stream_of_documents_is_one_machine_each() {
    let (_, out, _) = run_json(&[
        "report",
        "-o",
        "json",
        arg(&testdata("yaml/describe-stream.yaml")),
    ]);
    assert_eq!(out["inputs"]["machines"], 3);
}

#[test]
fn a_utf16_file_from_powershell_is_decoded() {
    let (code, out, stderr) = run_json(&[
        "report",
        "-o",
        "json",
        arg(&testdata("terminal/seed-powershell.txt")),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(out["unexpected"][0]["count"], 3);
    assert_eq!(out["inputs"]["events"], 10);
}

// Shell manners.

#[test]
fn bash_completion_loads() {
    let bin = assert_cmd::cargo::cargo_bin("fsmlog");
    let output = Process::new("bash")
        .args([
            "-c",
            &format!(
                "source <('{}' completions bash) && complete -p fsmlog",
                bin.display()
            ),
        ])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8(output.stdout).unwrap().contains("fsmlog"));
    for shell in ["zsh", "fish", "powershell", "elvish"] {
        fsmlog().args(["completions", shell]).assert().success();
    }
}

#[test]
fn the_manual_page_renders() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("fsmlog.1");
    let output = fsmlog().arg("man").output().unwrap();
    std::fs::write(&page, &output.stdout).unwrap();
    // One page: no reference to a page per command that does not exist, and the exit codes
    // CI relies on.
    let roff = String::from_utf8_lossy(&output.stdout).to_string();
    assert!(!roff.contains("(1)"), "a dangling page reference");
    assert!(roff.contains(".SH \"EXIT STATUS\""), "{roff}");
    assert!(roff.contains("(section FSMLOG RULES PROPOSE)"), "{roff}");
    // ASCII, so that plain groff needs no guess at the encoding; `×` as groff's escape.
    assert!(
        output.stdout.is_ascii(),
        "a character groff would have to guess"
    );
    assert!(roff.contains("state \\[u00D7] event"), "{roff}");
    let Ok(man) = Process::new("man")
        .arg("-l")
        .arg(&page)
        .env("MANWIDTH", "100")
        .output()
    else {
        crate::skipped("man (Debian's man-db)");
        return;
    };
    let text = String::from_utf8_lossy(&man.stdout);
    assert!(
        man.status.success(),
        "{}",
        String::from_utf8_lossy(&man.stderr)
    );
    for section in [
        "FSMLOG REPORT",
        "FSMLOG CHECK",
        "FSMLOG RULES LINT",
        "--allow-empty",
    ] {
        assert!(text.contains(section), "{section} missing from:\n{text}");
    }
}

#[test]
fn help_ends_with_examples() {
    for command in ["report", "replay", "diff", "check", "rules"] {
        let output = fsmlog().args([command, "--help"]).output().unwrap();
        let help = String::from_utf8(output.stdout).unwrap();
        let examples = help
            .split("Examples:")
            .nth(1)
            .unwrap_or_else(|| panic!("{help}"));
        assert!(examples.matches("fsmlog ").count() >= 2, "{help}");
    }
}

#[test]
fn the_version_names_the_commit_it_was_built_from() {
    let (code, out, _) = stdout_of(&["--version"]);
    assert_eq!(code, 0);
    assert!(
        out.starts_with(&format!("fsmlog {} (", env!("CARGO_PKG_VERSION"))),
        "{out}"
    );
    if !have("git", on_path("git")) {
        return;
    }
    let head = Process::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    if head.status.success() {
        let head = String::from_utf8(head.stdout).unwrap();
        assert!(out.contains(head.trim()), "{out} names {head}");
    }
}

// Item 8: 80 columns.

#[test]
fn at_80_columns_no_word_is_split_and_asked_for_columns_stay() {
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

#[test]
fn replay_on_a_terminal_shows_whole_ids() {
    let dir = tempfile::tempdir().unwrap();
    let log = testdata("fleet-v0.42.2/logs-json/2513f57b-4054-4b51-93e8-0c67992d646d.json");
    for id in [
        "2513f57b-4054-4b51-93e8-0c67992d646d",
        "2513f57b-4054-4b51-93e8-0c67992d646e",
    ] {
        std::fs::copy(&log, dir.path().join(format!("{id}.json"))).unwrap();
    }
    let bin = assert_cmd::cargo::cargo_bin("fsmlog");
    let command = format!("'{}' replay '{}'", bin.display(), dir.path().display());
    let output = Process::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env("COLUMNS", "120")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let shown = String::from_utf8(output.stdout).unwrap();
    assert!(
        shown.contains("machine 2513f57b-4054-4b51-93e8-0c67992d646d ·"),
        "{shown}"
    );
    assert!(
        shown.contains("machine 2513f57b-4054-4b51-93e8-0c67992d646e ·"),
        "{shown}"
    );
}
