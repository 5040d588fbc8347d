//! Triage: `explain` says why each pair happens over the same occurrences `report`
//! counts, and `rules propose` closes the loop to a rule change that `diff` and CI check.

use serde_json::{Value, json};

use super::*;

const FORMATS: [&str; 9] = [
    "list-json",
    "describe-json",
    "logs-json",
    "event-api",
    "container-dump",
    "v2-json",
    "text",
    "concat-text",
    "ndjson",
];

#[test]
fn explain_counts_what_report_counts() {
    for fleet in FLEETS {
        for format in FORMATS {
            for rules in RULE_SETS {
                let input = testdata(&format!("{fleet}/{format}"));
                let (_, report, _) =
                    run_json(&["report", "-o", "json", "--rules", rules, arg(&input)]);
                let (code, explain, stderr) =
                    run_json(&["explain", "-o", "json", "--rules", rules, arg(&input)]);
                assert_eq!(code, 0, "{stderr}");
                assert_eq!(
                    explain["inputs"], report["inputs"],
                    "{fleet}/{format} {rules}"
                );
                let pairs = explain["pairs"].as_array().unwrap();
                let unexpected = report["unexpected"].as_array().unwrap();
                assert_eq!(pairs.len(), unexpected.len(), "{fleet}/{format} {rules}");
                for (p, u) in pairs.iter().zip(unexpected) {
                    for key in [
                        "state",
                        "event",
                        "count",
                        "machines",
                        "first_seen",
                        "last_seen",
                        "verdict",
                    ] {
                        assert_eq!(p[key], u[key], "{key} of {fleet}/{format} {rules}");
                    }
                    let days: u64 = p["by_day"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|d| d["count"].as_u64().unwrap())
                        .sum();
                    assert_eq!(days, p["count"].as_u64().unwrap());
                }
            }
        }
    }
}

#[test]
fn waiting_pxe_booting_explained_as_the_sample_logs_show_it() {
    // Worked out from fleet-v0.42.2/describe-json by hand: each PXE Booting recorded as
    // unexpected in Waiting, and the row just below it in `metalctl machine logs`.
    //   6e9f556d  2025-09-17T15:30:46.852Z  gap 63883.152 s
    //   339088e1  2025-09-17T20:46:06.655Z  gap 79059.061 s
    //   99a8d282  2025-09-17T12:50:53.814Z  gap 105814.057 s
    //   8adfc495  2025-09-19T04:35:47.662Z  gap 118201.292 s
    //   339088e1  2025-09-19T19:43:54.207Z  gap 168904.860 s
    //   99a8d282  2025-09-21T06:26:35.243Z  gap 322375.808 s
    //   a14d49be  2025-09-21T07:46:07.495Z  gap 356337.319 s
    //   2513f57b  2025-09-21T09:45:26.573Z  gap 448899.525 s
    // Each came after Preparing › Registering › Waiting; after it came Preparing ›
    // Registering › Waiting seven times and Preparing › Crashed › PXE Booting once.
    let input = testdata("fleet-v0.42.2/describe-json");
    let (_, out, _) = run_json(&[
        "explain",
        "-o",
        "json",
        "--pair",
        "waiting/pxe booting",
        arg(&input),
    ]);
    let pairs = out["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 1, "--pair keeps only the named pair");
    let p = &pairs[0];
    assert_eq!(p["count"], 8);
    assert_eq!(p["machines"], 6);
    assert_eq!(p["without_context"], 0);
    assert_eq!(
        p["gap_seconds"],
        json!({"n": 8, "min": 63883.152, "median": 118201.292, "p90": 448899.525, "max": 448899.525})
    );
    assert_eq!(
        p["before"],
        json!([{"events": ["Preparing", "Registering", "Waiting"], "count": 8, "share": 1.0}])
    );
    assert_eq!(
        p["after"],
        json!([
            {"events": ["Preparing", "Registering", "Waiting"], "count": 7, "share": 0.875},
            {"events": ["Preparing", "Crashed", "PXE Booting"], "count": 1, "share": 0.125}
        ])
    );
    assert_eq!(
        p["by_day"],
        json!([
            {"day": "2025-09-17", "count": 3},
            {"day": "2025-09-19", "count": 2},
            {"day": "2025-09-21", "count": 3}
        ])
    );
    let examples: Vec<(&str, &str)> = p["examples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["machine"].as_str().unwrap(), e["time"].as_str().unwrap()))
        .collect();
    // The five smallest ids, listed by their first occurrence.
    assert_eq!(
        examples,
        vec![
            (
                "99a8d282-516b-4273-b085-c3c262a2bba1",
                "2025-09-17T12:50:53.814Z"
            ),
            (
                "6e9f556d-0ed7-4c50-a33c-9ecfa11de3c8",
                "2025-09-17T15:30:46.852Z"
            ),
            (
                "339088e1-d909-4721-aece-5ec1cd84f9b5",
                "2025-09-17T20:46:06.655Z"
            ),
            (
                "8adfc495-5bdf-4b52-8051-90d0df563904",
                "2025-09-19T04:35:47.662Z"
            ),
            (
                "2513f57b-4054-4b51-93e8-0c67992d646d",
                "2025-09-21T09:45:26.573Z"
            ),
        ]
    );
    // A shorter context groups shorter sequences.
    let (_, one, _) = run_json(&[
        "explain",
        "-o",
        "json",
        "--pair",
        "Waiting/PXE Booting",
        "--context",
        "1",
        arg(&input),
    ]);
    assert_eq!(
        one["pairs"][0]["before"],
        json!([{"events": ["Waiting"], "count": 8, "share": 1.0}])
    );
    assert_eq!(one["pairs"][0]["gap_seconds"], p["gap_seconds"]);
}

#[test]
fn an_exported_last_error_outside_the_log_counts_without_context() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m-7.json");
    std::fs::write(
        &file,
        r#"[{"time": "2025-09-16T10:00:00Z", "event": "Waiting", "message": "waiting for allocation"}]

Recent last error (1m ago):

{"time": "2025-09-16T10:05:00Z", "event": "Alive", "message": "[unexpectedly received in state planned reboot]: alive"}
"#,
    )
    .unwrap();
    let (_, report, _) = run_json(&["report", "-o", "json", arg(&file)]);
    let (_, explain, _) = run_json(&["explain", "-o", "json", arg(&file)]);
    assert_eq!(report["unexpected"][0]["count"], 1);
    let p = &explain["pairs"][0];
    assert_eq!(
        (p["state"].as_str(), p["event"].as_str()),
        (Some("Planned Reboot"), Some("Alive"))
    );
    assert_eq!(p["count"], 1);
    assert_eq!(p["without_context"], 1);
    assert_eq!(p["gap_seconds"], Value::Null);
    assert_eq!(p["before"], json!([]));
    assert_eq!(p["by_day"], json!([{"day": "2025-09-16", "count": 1}]));
}

#[test]
fn explain_reads_as_a_triage_note() {
    let (code, out, _) = stdout_of(&["explain", arg(&testdata("seed-machine.txt"))]);
    assert_eq!(code, 0);
    assert!(
        out.contains("PXE Booting in Waiting: 3 occurrences on 1 machine"),
        "{out}"
    );
    assert!(out.contains("metalctl machine logs seed-machine"), "{out}");
    // Two of the three came after Preparing › Registering › Waiting, the third right after
    // the oldest row, a Waiting.
    assert!(
        out.contains("67%     2×  Preparing › Registering › Waiting"),
        "{out}"
    );
    assert!(out.contains("33%     1×  (end of the log)"), "{out}");
    let (_, csv, _) = stdout_of(&["explain", "-o", "csv", arg(&testdata("seed-machine.txt"))]);
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    assert_eq!(reader.records().count(), 1);
}

fn pair_key(p: &Value) -> (String, String) {
    (
        p["state"].as_str().unwrap().to_string(),
        p["event"].as_str().unwrap().to_string(),
    )
}

/// Pairs of a report JSON by their key.
fn by_key(report: &Value, list: &str) -> std::collections::BTreeMap<(String, String), Value> {
    report[list]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (pair_key(p), p.clone()))
        .collect()
}

#[test]
fn the_loop_closes_on_a_generated_fleet() {
    // Under v0.19.0 the generated fleet shows every kind of verdict: one pair to accept
    // (v0.19.3's), one to swallow (v0.42.2's), a cascade of it, and problems elsewhere.
    let dir = tempfile::tempdir().unwrap();
    let fleet = generated_fleet_under("metal-api-v0.19.0", dir.path(), 300, 11, 60);
    let proposal = dir.path().join("proposal.json");
    let base = ["--rules", "metal-api-v0.19.0"];
    let (code, _, stderr) = stdout_of(
        &[
            &["rules", "propose", "-o", "json", "--out", arg(&proposal)][..],
            &base,
            &[arg(&fleet)],
        ]
        .concat(),
    );
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = stdout_of(&["rules", "lint", arg(&proposal)]);
    assert_eq!(code, 0, "{stderr}");
    let (_, before, _) = run_json(&[&["report", "-o", "json"][..], &base, &[arg(&fleet)]].concat());
    let (_, after, _) = run_json(&[
        "report",
        "-o",
        "json",
        "--rules",
        arg(&proposal),
        arg(&fleet),
    ]);
    let before = by_key(&before, "unexpected");
    let after = by_key(&after, "unexpected");
    let action = |p: &Value| p["verdict"]["action"].as_str().unwrap().to_string();
    let accepted: Vec<&(String, String)> = before
        .iter()
        .filter(|(_, p)| matches!(action(p).as_str(), "accept" | "swallow"))
        .map(|(k, _)| k)
        .collect();
    let key = |s: &str, e: &str| (s.to_string(), e.to_string());
    assert_eq!(
        accepted,
        [
            &key("Registering", "Installing"),
            &key("Waiting", "Phoned Home")
        ],
        "{before:#?}"
    );
    for a in &accepted {
        assert!(!after.contains_key(*a), "{a:?} is still unexpected");
    }
    // A cascade of an accepted root goes with it.
    let cascade = &before[&key("Phoned Home", "Installing")];
    assert_eq!(action(cascade), "fix-root");
    assert_eq!(cascade["roots"][0]["event"], "Phoned Home");
    assert!(!after.contains_key(&key("Phoned Home", "Installing")));
    // What the proposal leaves is still reported.
    for (k, p) in &before {
        if !accepted.contains(&k) && action(p) != "fix-root" {
            assert!(after.contains_key(k), "{k:?} vanished");
        }
    }
    let (code, diff, _) = run_json(&[
        "diff",
        "-o",
        "json",
        "--fail-on",
        "never",
        "--old",
        "metal-api-v0.19.0",
        "--new",
        arg(&proposal),
        arg(&fleet),
    ]);
    assert_eq!(code, 0);
    let newly_expected = by_key(&diff, "newly_expected");
    let newly_unexpected = by_key(&diff, "newly_unexpected");
    for a in &accepted {
        let (d, b) = (&newly_expected[*a], &before[*a]);
        assert_eq!(
            (&d["count"], &d["machines"]),
            (&b["count"], &b["machines"]),
            "{a:?}"
        );
    }
    // Every occurrence is accounted for: what diff says changed is what report counts.
    let total = |pairs: &std::collections::BTreeMap<(String, String), Value>| -> u64 {
        pairs.values().map(|p| p["count"].as_u64().unwrap()).sum()
    };
    assert_eq!(
        total(&after),
        total(&before) - total(&newly_expected) + total(&newly_unexpected)
    );
    for (k, p) in &newly_unexpected {
        let before_count = before.get(k).map_or(0, |b| b["count"].as_u64().unwrap());
        let gone = newly_expected
            .get(k)
            .map_or(0, |b| b["count"].as_u64().unwrap());
        assert_eq!(
            after[k]["count"].as_u64().unwrap(),
            before_count - gone + p["count"].as_u64().unwrap(),
            "{k:?}"
        );
    }
    // The table view prints the effect exactly as `fsmlog diff` does, under a warning when
    // the proposal moves occurrences to another pair.
    let (_, table, _) = stdout_of(&[&["rules", "propose"][..], &base, &[arg(&fleet)]].concat());
    let (_, diff_table, _) = stdout_of(&[
        "diff",
        "--old",
        "metal-api-v0.19.0",
        "--new",
        arg(&proposal),
        arg(&fleet),
    ]);
    let effect = table
        .split_once("Effect (as fsmlog diff prints it)\n")
        .unwrap_or_else(|| panic!("{table}"))
        .1;
    let warning = "warning: the proposal makes pairs newly unexpected";
    assert_eq!(
        effect.starts_with(warning),
        !newly_unexpected.is_empty(),
        "{effect}"
    );
    let effect = if effect.starts_with(warning) {
        effect.split_once('\n').unwrap().1
    } else {
        effect
    };
    assert_eq!(effect, diff_table);
}

#[test]
fn the_go_patch_applies_and_imports_as_the_json_proposal() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path();
    git(repo, &["init", "-q"]);
    let go = "cmd/metal-api/internal/fsm/events.go";
    std::fs::create_dir_all(repo.join("cmd/metal-api/internal/fsm")).unwrap();
    std::fs::write(repo.join(go), events_go("metal-api-v0.19.0")).unwrap();
    git(repo, &["add", "."]);
    git(repo, &["commit", "-qm", "events"]);
    let fleet = generated_fleet_under("metal-api-v0.19.0", repo, 200, 11, 60);
    let run = |args: &[&str]| {
        let output = fsmlog().current_dir(repo).args(args).output().unwrap();
        assert_eq!(
            output.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        output.stdout
    };
    // The verdicts accept Installing in Registering and swallow Phoned Home in Waiting, both
    // joined to entries; a pair forced by name, Preparing in Preparing, needs a new `self`
    // entry.
    let named = [
        "--rules",
        "metal-api-v0.19.0",
        "--pair",
        "Preparing/Preparing",
    ];
    let patch = run(&[
        &["rules", "propose", "-o", "go", "--go-file", go][..],
        &named,
        &[arg(&fleet)],
    ]
    .concat());
    std::fs::write(repo.join("fsm.patch"), &patch).unwrap();
    git(repo, &["apply", "--check", "fsm.patch"]);
    git(repo, &["apply", "fsm.patch"]);
    let json = run(&[
        &["rules", "propose", "-o", "json"][..],
        &named,
        &[arg(&fleet)],
    ]
    .concat());
    std::fs::write(repo.join("proposal.json"), &json).unwrap();
    run(&[
        "rules",
        "import-go",
        go,
        "--like",
        "metal-api-v0.19.0",
        "--out",
        "imported.json",
    ]);
    // The same transitions: the same matrix, whatever the row order. The settings line
    // differs by what events.go cannot hold: the buffering, which metal-api has in code from
    // v0.42.2 on, and which the proposal says on stderr.
    let shown = |file: &str| String::from_utf8(run(&["rules", "show", file])).unwrap();
    let matrix = |file: &str| {
        let out = shown(file);
        let lines: Vec<&str> = out.lines().skip(1).collect();
        lines[..lines.len() - 1].join("\n")
    };
    assert_eq!(matrix("imported.json"), matrix("proposal.json"));
    assert_ne!(
        matrix("imported.json"),
        matrix("metal-api-v0.19.0"),
        "the patch changed something"
    );
    assert!(shown("proposal.json").contains("buffered phoned home: 300 s"));
    assert!(shown("imported.json").contains("buffered phoned home: none"));
    let stderr = fsmlog()
        .current_dir(repo)
        .args(["rules", "propose", "-o", "go", "--go-file", go])
        .args(named)
        .arg(&fleet)
        .output()
        .unwrap()
        .stderr;
    let stderr = String::from_utf8(stderr).unwrap();
    assert!(
        stderr.contains("swallows buffered Phoned Home events for 300 s, which events.go cannot say: the patch does so only in metal-api v0.42.2 or later"),
        "{stderr}"
    );
    assert!(
        stderr.contains("--pair Preparing/Preparing is accepted against its verdict: crash-loop"),
        "the forced pair is warned about: {stderr}"
    );
    let text = String::from_utf8(patch).unwrap();
    assert!(
        text.starts_with(&format!("--- a/{go}\n+++ b/{go}\n")),
        "{text}"
    );
    // Only additions: states joined to the Installing and self entries, and one new entry.
    let added: Vec<&str> = text
        .lines()
        .skip(2)
        .filter(|l| l.starts_with('+') || l.starts_with('-'))
        .collect();
    assert!(added.iter().all(|l| l.starts_with('+')), "{text}");
    let joined = added
        .iter()
        .filter(|l| l.starts_with("+\t\t\t\tstates."))
        .count();
    assert!(joined >= 3, "{text}");
    assert!(
        added.contains(&"+\t\t\tDst: SelfTransitionState,"),
        "{text}"
    );
}

/// A `rules show` matrix: each state's row of cells, the state first.
fn matrix_cells(shown: &str) -> Vec<Vec<String>> {
    shown
        .lines()
        .filter(|l| l.starts_with("│ ") && !l.contains("state \\ event"))
        .map(|l| {
            l.trim_matches('│')
                .split('┆')
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

#[test]
fn the_go_patch_adds_only_what_the_file_lacks() {
    // metal-api's events.go since v0.42.2 (HEAD too) already accepts Installing in
    // Registering, which a fleet judged under v0.19.0 asks for: the patch must not add it a
    // second time, only Preparing in Preparing (forced by name), which the file lacks.
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path();
    git(repo, &["init", "-q"]);
    let go = "events.go";
    std::fs::write(repo.join(go), events_go("metal-api-v0.42.2")).unwrap();
    let fleet = generated_fleet_under("metal-api-v0.19.0", repo, 200, 11, 60);
    let named = [
        "--rules",
        "metal-api-v0.19.0",
        "--pair",
        "Preparing/Preparing",
    ];
    let propose = |extra: &[&str]| {
        let output = fsmlog()
            .current_dir(repo)
            .args(["rules", "propose"])
            .args(extra)
            .args(named)
            .arg(&fleet)
            .output()
            .unwrap();
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(output.status.code(), Some(0), "{stderr}");
        (String::from_utf8(output.stdout).unwrap(), stderr)
    };
    let (patch, stderr) = propose(&["-o", "go", "--go-file", go]);
    assert!(
        stderr.contains("note: events.go already accepts Installing in Registering, leading to Installing as proposed: not added again"),
        "{stderr}"
    );
    let added: Vec<&str> = patch.lines().filter(|l| l.starts_with('+')).collect();
    assert_eq!(
        added,
        [
            "+++ b/events.go",
            "+\t\t{",
            "+\t\t\tName: metal.ProvisioningEventPreparing.String(),",
            "+\t\t\tSrc: []string{",
            "+\t\t\t\tstates.Preparing.String(),",
            "+\t\t\t},",
            "+\t\t\tDst: SelfTransitionState,",
            "+\t\t},",
        ],
        "{patch}"
    );
    std::fs::write(repo.join("fsm.patch"), &patch).unwrap();
    git(repo, &["apply", "fsm.patch"]);
    let (json, _) = propose(&["-o", "json"]);
    std::fs::write(repo.join("proposal.json"), json).unwrap();
    let (code, _, stderr) = stdout_of(&[
        "rules",
        "import-go",
        arg(&repo.join(go)),
        "--out",
        arg(&repo.join("imported.json")),
    ]);
    assert_eq!(code, 0, "{stderr}");
    // The patched file holds its own table and every pair of the proposal, leading where the
    // proposal leads it: cell by cell, the file's where it has one, else the proposal's.
    let cells = |rules: &str| matrix_cells(&stdout_of(&["rules", "show", rules]).1);
    let file = cells("metal-api-v0.42.2");
    let proposal = cells(arg(&repo.join("proposal.json")));
    let imported = cells(arg(&repo.join("imported.json")));
    assert_eq!(file.len(), 12);
    for ((f, p), i) in file.iter().zip(&proposal).zip(&imported) {
        for ((f, p), i) in f.iter().zip(p).zip(i) {
            let want = if f == "—" { p } else { f };
            assert!(p == "—" || p == want, "{f} {p} {i}");
            assert_eq!(i, want, "{f} {p} {i}");
        }
    }
    assert_eq!(imported[4][5], "self", "Preparing in Preparing");
    // Proposed again against the patched file: it has every row, so there is nothing to patch.
    let (again, stderr) = propose(&["-o", "go", "--go-file", go]);
    assert_eq!(again, "");
    assert!(
        stderr.contains(
            "note: events.go already accepts every pair the proposal accepts: no patch to write"
        ),
        "{stderr}"
    );
}
