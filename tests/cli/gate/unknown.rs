//! A gate never passes on events it could not judge: an export whose every event is unknown
//! (names no release has, enum numbers of no event) is refused like one without events.

use super::*;

/// A v2 export of one machine whose events are `events` (JSON values: names or numbers).
fn v2_export(dir: &Path, events: &[&str]) -> PathBuf {
    let listed: Vec<String> = events
        .iter()
        .enumerate()
        .map(|(i, event)| {
            format!(
                r#"{{"time": "2025-09-24T10:0{}:00Z", "event": {event}, "message": "m"}}"#,
                9 - i
            )
        })
        .collect();
    write(
        dir,
        "machines.json",
        &format!(
            r#"[{{"uuid": "m1", "recentProvisioningEvents": {{"events": [{}]}}}}]"#,
            listed.join(", ")
        ),
    )
}

/// Every command that gates, with its arguments before the path.
const GATES: [&[&str]; 3] = [
    &["check", "-o", "json"],
    &[
        "diff",
        "--old",
        "metal-api-v0.19.0",
        "--new",
        "metal-api",
        "-o",
        "json",
    ],
    &["issues", "--fail-on", "minor", "-o", "json"],
];

#[test]
fn a_gate_refuses_an_input_whose_every_event_is_unknown() {
    let dir = tempfile::tempdir().unwrap();
    for events in [
        &["\"Bogus\"", "\"MACHINE_PROVISIONING_EVENT_TYPE_BOGUS\""][..],
        // The unset value, in lower case (names are read in any case).
        &["12", "0", "\"machine_provisioning_event_type_unspecified\""][..],
    ] {
        let export = v2_export(dir.path(), events);
        let (_, report, _) = run_json(&["report", "-o", "json", arg(&export)]);
        assert_eq!(report["inputs"]["events"], events.len() as u64);
        assert_eq!(report["inputs"]["replayed"], 0, "{report}");
        for gate in GATES {
            let mut args = gate.to_vec();
            args.push(arg(&export));
            let (code, _, stderr) = stdout_of(&args);
            assert_eq!(code, 2, "{gate:?} on {events:?}: {stderr}");
            assert!(
                stderr.contains(
                    "no event read is one of metal-api's (each is an unknown event), so there is nothing to gate on"
                ),
                "{gate:?}: {stderr}"
            );
            args.insert(1, "--allow-empty");
            let (code, _, stderr) = stdout_of(&args);
            assert_ne!(code, 2, "{gate:?} --allow-empty: {stderr}");
        }
        let (_, table, _) = stdout_of(&["check", arg(&export)]);
        assert!(
            table.starts_with("FAILED: no event read is one of metal-api's"),
            "{table}"
        );
    }
    // One event the replay judges among unknown ones is something to pass on.
    let export = v2_export(
        dir.path(),
        &[
            "\"Bogus\"",
            "\"MACHINE_PROVISIONING_EVENT_TYPE_PXE_BOOTING\"",
        ],
    );
    let (code, _, stderr) = stdout_of(&["check", arg(&export)]);
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn a_v2_exports_enum_numbers_are_its_events() {
    // `grpcurl` or protojson's `UseEnumNumbers`: 3 PXE Booting, 5 Preparing, 6 Registering,
    // 7 Waiting as metal-stack/api's MachineProvisioningEventType numbers them.
    let dir = tempfile::tempdir().unwrap();
    let export = v2_export(dir.path(), &["7", "6", "5", "3"]);
    let (code, report, stderr) = run_json(&["report", "-o", "json", arg(&export)]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(report["inputs"]["replayed"], 4, "{report}");
    assert_eq!(report["inputs"]["unknown_events"], serde_json::json!([]));
    let (code, _, stderr) = stdout_of(&["check", arg(&export)]);
    assert_eq!(code, 0, "{stderr}");
    let (code, replayed, _) = stdout_of(&["replay", "-o", "csv", arg(&export)]);
    assert_eq!(code, 0);
    let events: Vec<&str> = replayed
        .lines()
        .skip(1)
        .map(|line| line.split(',').nth(2).unwrap_or(""))
        .collect();
    assert_eq!(
        events,
        ["PXE Booting", "Preparing", "Registering", "Waiting"],
        "{replayed}"
    );
}

#[test]
fn a_gate_refuses_a_window_that_holds_no_event() {
    let seed = testdata("seed-machine.txt");
    // The seed's events are of 2022: a window after them holds nothing to gate on.
    for args in [
        vec!["check", "-o", "json", "--since", "2030-01-01"],
        vec!["check", "-o", "json", "--until", "2000-01-01"],
        vec![
            "diff",
            "-o",
            "json",
            "--old",
            "metal-api-v0.19.0",
            "--new",
            "metal-api-v0.42.2",
            "--since",
            "2030-01-01",
        ],
    ] {
        let mut all = args.clone();
        all.push(arg(&seed));
        let (code, _, stderr) = stdout_of(&all);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(
            stderr.contains("no event read falls in the window (--since, --until)"),
            "{stderr}"
        );
        all.push("--allow-empty");
        let (code, _, stderr) = stdout_of(&all);
        assert_eq!(code, 0, "{args:?} --allow-empty: {stderr}");
    }
    // A window that holds the events gates as before: the seed's pair fails a gate without a
    // baseline.
    let (code, _, stderr) = stdout_of(&["check", "--since", "2022-01-01", arg(&seed)]);
    assert_eq!(code, 1, "{stderr}");
}
