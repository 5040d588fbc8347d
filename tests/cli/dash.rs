//! `-` is standard input wherever fsmlog reads a file, and standard output where it writes
//! one; standard input is one stream, so a second `-` is an error naming both readers.

use std::path::Path;

use super::*;

#[test]
fn every_file_option_reads_standard_input_as_dash() {
    let dir = tempfile::tempdir().unwrap();
    let seed = testdata("seed-machine.txt");
    let (_, rules, _) = stdout_of(&["rules", "export", "metal-api-v0.42.2"]);
    let stdin = |args: &[&str], input: &str| {
        let out = fsmlog()
            .args(args)
            .write_stdin(input.as_bytes())
            .output()
            .unwrap();
        (
            out.status.code().unwrap(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    // --rules -, and rules lint -.
    let (code, report, stderr) = stdin(
        &["report", "-o", "json", "--rules", "-", arg(&seed)],
        &rules,
    );
    assert_eq!(code, 0, "{stderr}");
    let (_, want, _) = stdout_of(&["report", "-o", "json", arg(&seed)]);
    assert_eq!(report, want);
    let (code, out, stderr) = stdin(&["rules", "lint", "-"], &rules);
    assert_eq!(
        (code, out.as_str()),
        (0, "-: ok (metal-api-v0.42.2)\n"),
        "{stderr}"
    );
    // --baseline -, and --write-baseline - where the report goes elsewhere.
    let report_file = dir.path().join("report.txt");
    let (code, baseline, stderr) = stdout_of(&[
        "check",
        "--write-baseline",
        "-",
        "--out",
        arg(&report_file),
        arg(&seed),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(baseline.contains("\"accepted\""), "{baseline}");
    assert!(!dir.path().join("-").exists() && !Path::new("-").exists());
    let (code, _, stderr) = stdin(&["check", "--baseline", "-", arg(&seed)], &baseline);
    assert_eq!(code, 0, "{stderr}");
    // rules import-go -.
    let go = events_go("metal-api-v0.42.2");
    let (code, imported, stderr) = stdin(&["rules", "import-go", "-"], &go);
    assert_eq!(code, 0, "{stderr}");
    let file = write(dir.path(), "events.go", &go);
    let (_, want, _) = stdout_of(&["rules", "import-go", "--name", "imported", arg(&file)]);
    assert_eq!(imported, want);
}

#[test]
fn a_second_dash_is_an_error_naming_who_read_standard_input() {
    let seed = testdata("seed-machine.txt");
    let (_, rules, _) = stdout_of(&["rules", "export", "metal-api-v0.42.2"]);
    let run = |args: &[&str]| {
        let out = fsmlog()
            .args(args)
            .write_stdin(rules.as_bytes())
            .output()
            .unwrap();
        (
            out.status.code().unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let (code, stderr) = run(&["report", "--rules", "-", "-"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr
            .contains("standard input (`-`) is read once, and it is read for a rule file already"),
        "{stderr}"
    );
    let (code, stderr) = run(&["diff", "--old", "-", "--new", "-", arg(&seed)]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("read once"), "{stderr}");
    // What a command reads before its inputs takes standard input first (as metalctl reads
    // flags before arguments): the baseline, the new rule set; then a `-` input is refused.
    let (code, stderr) = run(&["check", "--baseline", "-", "-"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.starts_with("fsmlog: baseline -:2: unknown field `name`"),
        "{stderr}"
    );
    let (code, stderr) = run(&["diff", "--old", "metal-api-v0.42.2", "--new", "-", "-"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("it is read for a rule file already"),
        "{stderr}"
    );
    // The report and the baseline cannot both be standard output.
    let (code, stderr) = run(&["check", "--write-baseline", "-", arg(&seed)]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("--write-baseline -: standard output carries check's report"),
        "{stderr}"
    );
}
