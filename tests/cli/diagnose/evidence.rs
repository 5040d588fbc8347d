//! What each verdict rests on, read beside metal-api's and metal-hammer's code: the buffering
//! window measured from the container's last event time and decided once per event, the
//! reboot after Phoned Home named only on evidence, metal-hammer's autoreboot window, and the
//! newer release that already handles a pair.

use super::*;

/// A raw stream of `(machine, time, event)` lines.
fn stream(dir: &Path, name: &str, sent: &[(&str, &str, &str)]) -> PathBuf {
    let text: String = sent
        .iter()
        .map(|(m, t, e)| {
            json!({"machine_id": m, "time": t, "event": e, "message": "msg"}).to_string() + "\n"
        })
        .collect();
    write(dir, name, &text)
}

/// The pair `state`/`event` of a report.
fn pair<'a>(report: &'a Value, state: &str, event: &str) -> &'a Value {
    report["unexpected"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["state"] == state && p["event"] == event)
        .unwrap_or_else(|| panic!("{state}/{event} in {report}"))
}

fn report(rules: &str, input: &Path) -> Value {
    let (code, report, stderr) = run_json(&["report", "-o", "json", "--rules", rules, arg(input)]);
    assert_eq!(code, 0, "{stderr}");
    report
}

/// The four provisioning events of a boot into Waiting, from `h` hours and `m` minutes.
fn to_waiting(machine: &'static str, day: &str) -> Vec<(&'static str, String, &'static str)> {
    [
        ("00:00", "PXE Booting"),
        ("01:00", "Preparing"),
        ("02:00", "Registering"),
        ("03:00", "Waiting"),
    ]
    .iter()
    .map(|(at, e)| (machine, format!("{day}T00:{at}.000Z"), *e))
    .collect()
}

#[test]
fn the_bundled_631_pattern_is_one_swallow_for_phoned_home_with_the_defaults() {
    // The bundled raw stream recorded under v0.42.2 holds metal-api#630 twice: a machine
    // reclaimed whose old OS's buffered Phoned Home comes in PXE Booting, one in Waiting.
    // Replayed under v0.19.3 each pair has one machine, but it is one decision for Phoned
    // Home, resting on both.
    let raw = testdata("fleet-v0.42.2/ndjson");
    let report = report("metal-api-v0.19.3", &raw);
    for state in ["PXE Booting", "Waiting"] {
        let v = &pair(&report, state, "Phoned Home")["verdict"];
        assert_eq!(v["kind"], "swallow", "{v}");
        assert_eq!(v["action"], "swallow", "{v}");
        assert_eq!(v["machines"], 1);
        assert_eq!(v["precedent"], "metal-api#631");
        assert_eq!(
            v["precedent_url"],
            "https://github.com/metal-stack/metal-api/pull/631"
        );
        let evidence = v["evidence"].to_string();
        assert!(evidence.contains("2 machines in all"), "{evidence}");
        assert!(evidence.contains("less than 5 minutes"), "{evidence}");
    }
    // What `rules propose` writes: exactly v0.42.2's swallow for the two states seen.
    let proposed = proposal("metal-api-v0.19.3", &raw);
    assert_eq!(
        added_rows("metal-api-v0.19.3", &proposed),
        [
            json!({"event": "Phoned Home", "from": ["PXE Booting"], "to": "self"}),
            json!({"event": "Phoned Home", "from": ["Waiting"], "to": "self"})
        ],
        "{proposed}"
    );
    let description = proposed["description"].as_str().unwrap();
    assert!(description.contains("(×1 on 1 machine, "), "{description}");
    assert_eq!(proposed["buffered_phoned_home_seconds"], 300);
    // One machine alone is still no fleet decision.
    let (_, one, _) = run_json(&[
        "report",
        "-o",
        "json",
        "--rules",
        "metal-api-v0.19.3",
        "--min-machines",
        "3",
        arg(&raw),
    ]);
    let v = &pair(&one, "Waiting", "Phoned Home")["verdict"];
    assert_eq!(v["kind"], "undecided");
    assert!(
        v["evidence"][0]
            .as_str()
            .unwrap()
            .contains("2 machines; a swallow needs 3"),
        "{v}"
    );
}

#[test]
fn the_buffering_window_is_measured_from_the_last_event_time_alive_included() {
    // Every machine reaches Waiting at 00:03; all but m0 send Alive at 00:05. The Phoned Home
    // at 00:09 is 4 minutes after their last event but 6 after m0's stored one: late on the
    // others only, as swallowBufferedPhonedHome measures it. No earlier Phoned Home is needed
    // (a v1 export often keeps too few events to hold one).
    let dir = tempfile::tempdir().unwrap();
    let machines = ["m0", "m1", "m2", "m3"];
    let mut sent = Vec::new();
    for m in machines {
        sent.extend(to_waiting(m, "2025-09-01"));
        if m != "m0" {
            sent.push((m, "2025-09-01T00:05:00.000Z".to_string(), "Alive"));
        }
        sent.push((m, "2025-09-01T00:09:00.000Z".to_string(), "Phoned Home"));
        sent.push((m, "2025-09-01T00:10:00.000Z".to_string(), "Installing"));
    }
    let sent: Vec<(&str, &str, &str)> = sent.iter().map(|(m, t, e)| (*m, t.as_str(), *e)).collect();
    let raw = stream(dir.path(), "late.ndjson", &sent);
    let report = report("metal-api-v0.19.3", &raw);
    let late = pair(&report, "Waiting", "Phoned Home");
    assert_eq!(late["count"], 4);
    let v = &late["verdict"];
    assert_eq!(v["kind"], "swallow", "{v}");
    assert_eq!(v["machines"], 3, "m1 to m3, not m0: {v}");
    assert!(
        v["evidence"][1]
            .as_str()
            .unwrap()
            .starts_with("3 of 4 occurrences judged are late"),
        "{v}"
    );
}

#[test]
fn a_reboot_after_phoned_home_names_the_firmware_only_when_the_machine_came_back_from_disk() {
    let dir = tempfile::tempdir().unwrap();
    let installed = |m: &'static str| -> Vec<(&'static str, String, &'static str)> {
        let mut v = to_waiting(m, "2025-09-01");
        for (at, e) in [
            ("00:10:00", "Installing"),
            ("00:12:00", "Booting New Kernel"),
            ("00:13:00", "Phoned Home"),
            ("02:00:00", "PXE Booting"),
        ] {
            v.push((m, format!("2025-09-01T{at}.000Z"), e));
        }
        v
    };
    // metal-api#324's bullet row: nothing after the network boot. And one where metal-hammer
    // ran (Installing, Booting New Kernel) without its Preparing. Neither is evidence.
    let mut sent = installed("gone");
    sent.extend(installed("ran"));
    sent.push(("ran", "2025-09-01T02:05:00.000Z".into(), "Installing"));
    sent.push((
        "ran",
        "2025-09-01T02:07:00.000Z".into(),
        "Booting New Kernel",
    ));
    let s: Vec<(&str, &str, &str)> = sent.iter().map(|(m, t, e)| (*m, t.as_str(), *e)).collect();
    let raw = stream(dir.path(), "no-evidence.ndjson", &s);
    let judged = report("metal-api", &raw);
    let v = &pair(&judged, "Phoned Home", "PXE Booting")["verdict"];
    assert_eq!(v["kind"], "unannounced-reboot");
    assert_eq!(v["component"], Value::Null, "{v}");
    assert_eq!(v["precedent"], Value::Null, "{v}");
    assert!(
        v["evidence"][0]
            .as_str()
            .unwrap()
            .contains("look at each machine"),
        "{v}"
    );
    // Back on its disk: Phoned Home again without metal-hammer's events.
    let mut sent = installed("disk1");
    sent.extend(installed("disk2"));
    for m in ["disk1", "disk2"] {
        sent.push((m, "2025-09-01T02:03:00.000Z".into(), "Phoned Home"));
        sent.push((m, "2025-09-01T02:09:00.000Z".into(), "Phoned Home"));
    }
    let s: Vec<(&str, &str, &str)> = sent.iter().map(|(m, t, e)| (*m, t.as_str(), *e)).collect();
    let raw = stream(dir.path(), "disk.ndjson", &s);
    let judged = report("metal-api", &raw);
    let v = &pair(&judged, "Phoned Home", "PXE Booting")["verdict"];
    assert_eq!(v["component"], "firmware", "{v}");
    assert_eq!(v["precedent"], "metal-api#599");
}

#[test]
fn reboots_in_waiting_are_told_apart_by_metal_hammers_autoreboot_window() {
    // Each machine reaches Waiting after Preparing at 00:01:00 and boots again: at 30 h (its
    // autoreboot), at 48 h 10 s and 5 minutes (the autoreboot's last moment and the POST
    // before the DHCP request), at 48 h 5 min 11 s and at 10 minutes (a crash or a power
    // cycle).
    let dir = tempfile::tempdir().unwrap();
    let mut sent = Vec::new();
    for (m, rebooted) in [
        ("in30h", "2025-09-02T06:01:00.000Z"),
        ("edge", "2025-09-03T00:06:10.000Z"),
        ("past", "2025-09-03T00:06:11.000Z"),
        ("soon", "2025-09-01T00:11:00.000Z"),
    ] {
        sent.extend(to_waiting(m, "2025-09-01"));
        sent.push((m, rebooted.to_string(), "PXE Booting"));
    }
    let s: Vec<(&str, &str, &str)> = sent.iter().map(|(m, t, e)| (*m, t.as_str(), *e)).collect();
    let raw = stream(dir.path(), "reboots.ndjson", &s);
    let judged = report("metal-api", &raw);
    let v = &pair(&judged, "Waiting", "PXE Booting")["verdict"];
    assert_eq!(v["autoreboot"], json!({"inside": 2, "outside": 2}), "{v}");
    let evidence = v["evidence"].to_string();
    assert!(evidence.contains("2 came 24 h to 48 h 10 s"), "{evidence}");
    assert!(evidence.contains("2 came sooner or later"), "{evidence}");
    // Other pairs carry no autoreboot.
    let seed = report("metal-api", &testdata("fleet-v0.42.2/list-json"));
    let crash = pair(&seed, "Preparing", "Preparing");
    assert!(crash["verdict"].get("autoreboot").is_none(), "{crash}");
}

#[test]
fn an_older_release_is_told_which_release_handles_the_pair() {
    let v0_19_0 = report("metal-api-v0.19.0", &testdata("fleet-v0.19.0/list-json"));
    let skipped = &pair(&v0_19_0, "Registering", "Installing")["verdict"];
    // The back-test's verdict stands on its own; the upgrade is told beside it.
    assert_eq!(skipped["kind"], "accept", "{skipped}");
    assert_eq!(
        skipped["handled_by"],
        json!({"rules": "metal-api-v0.19.3", "how": "expected", "precedent": "metal-api#325"})
    );
    assert!(
        skipped["evidence"][0]
            .as_str()
            .unwrap()
            .ends_with("metal-api v0.19.3 accepts this (metal-api#325): upgrade"),
        "{skipped}"
    );
    let v0_19_3 = report("metal-api-v0.19.3", &testdata("fleet-v0.42.2/ndjson"));
    assert_eq!(
        pair(&v0_19_3, "Waiting", "Phoned Home")["verdict"]["handled_by"],
        json!({"rules": "metal-api-v0.42.2", "how": "swallowed", "precedent": "metal-api#631"})
    );
    // Nobody handles a reboot in Waiting; and the newest release has nothing newer.
    assert!(
        pair(&v0_19_3, "Waiting", "PXE Booting")["verdict"]
            .get("handled_by")
            .is_none()
    );
    let newest = report("metal-api", &testdata("fleet-v0.42.2/list-json"));
    for p in newest["unexpected"].as_array().unwrap() {
        assert!(p["verdict"].get("handled_by").is_none(), "{p}");
    }
}

#[test]
fn the_notes_link_their_precedents_and_say_what_to_run_next_safely() {
    let seed = testdata("seed-machine.txt");
    let (_, markdown, _) = stdout_of(&["explain", "-o", "markdown", arg(&seed)]);
    assert!(
        markdown
            .contains("as in [metal-api#464](https://github.com/metal-stack/metal-api/issues/464)"),
        "{markdown}"
    );
    // The commands name the machine quoted for the shell, after `--` where the id would
    // read as an option; metal-core's switch command takes it as its option's value.
    let (_, text, _) = stdout_of(&["explain", "--machine-id=-u $(x)", arg(&seed)]);
    assert!(
        text.contains("next, to look at metal-hammer:\n  metalctl machine console --ipmi -- '-u $(x)'   # the serial console"),
        "{text}"
    );
    assert!(
        text.contains("  metalctl machine ipmi events -- '-u $(x)'   # "),
        "{text}"
    );
    let late = testdata("diagnose/late-in-installing");
    let (_, text, _) = stdout_of(&["explain", arg(&late)]);
    assert!(
        text.contains("  metalctl switch connected-machines --machine-id=00000000-0000-4000-8000-000000000000   # the machine's leaf switches"),
        "{text}"
    );
    // A verdict that names no component, or one with nothing to fix, suggests nothing.
    let (_, text, _) = stdout_of(&["explain", arg(&testdata("diagnose/ph-list.json"))]);
    assert!(!text.contains("next, to look at"), "{text}");
}
