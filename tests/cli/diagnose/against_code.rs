//! Verdicts read against metal-stack's code, on the small files of `testdata/against-code/`: the
//! firmware named only on a Phoned Home (a DHCP retry loop leaves an export's container as the
//! disk does), a lost Booting New Kernel on a machine that keeps phoning home, the newer
//! release's swallow told by the occurrences' timing, and the autoreboot with the POST after
//! it.

use super::*;

fn against_code(rel: &str) -> PathBuf {
    testdata("against-code").join(rel)
}

/// The verdict of `state`/`event` in `report -o json --rules RULES FILE`.
fn verdict_of(rules: &str, file: &str, state: &str, event: &str) -> Value {
    let (code, report, stderr) = run_json(&[
        "report",
        "-o",
        "json",
        "--rules",
        rules,
        arg(&against_code(file)),
    ]);
    assert_eq!(code, 0, "{stderr}");
    report["unexpected"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["state"] == state && p["event"] == event)
        .unwrap_or_else(|| panic!("{state}/{event} in {report}"))["verdict"]
        .clone()
}

fn line(verdict: &Value) -> &str {
    verdict["evidence"][0].as_str().unwrap()
}

#[test]
fn a_network_boot_after_phoned_home_names_no_component_on_a_last_event_time() {
    // v0.42.2 exports: the newest stored event is PXE Booting after Phoned Home, the last
    // event time ten minutes later, the machines alive. metal-api moves that time for a
    // repeated DHCP request as for a Phoned Home (pxe-booting.go), so it names neither.
    let v = verdict_of(
        "metal-api-v0.42.2",
        "retry-loop.json",
        "Phoned Home",
        "PXE Booting",
    );
    assert_eq!(v["kind"], "unannounced-reboot", "{v}");
    assert_eq!(v["component"], Value::Null, "{v}");
    assert_eq!(v["precedent"], Value::Null, "{v}");
    assert!(
        line(&v).starts_with("verdict: unannounced-reboot (after Phoned Home, nothing after it tells which) — look at each machine"),
        "{v}"
    );
    let evidence = v["evidence"].to_string();
    assert!(
        evidence.contains(
            "an export's last event time later than its newest stored PXE Booting does not"
        ),
        "{evidence}"
    );
    // The explain note says the same.
    let (code, table, stderr) = stdout_of(&[
        "explain",
        "--rules",
        "metal-api-v0.42.2",
        arg(&against_code("retry-loop.json")),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!table.contains("firmware"), "{table}");
    assert!(
        table.contains("nothing after the reboot tells its cause"),
        "{table}"
    );
}

#[test]
fn a_lost_booting_new_kernel_is_metal_hammers_while_the_machine_phones_home() {
    // Installing, then Phoned Home (Booting New Kernel never came), and a last event time
    // half an hour later: the later Phoned Home events metal-api took in and never stored.
    let v = verdict_of(
        "metal-api-v0.42.2",
        "lost-kexec.json",
        "Installing",
        "Phoned Home",
    );
    assert_eq!(
        (&v["kind"], &v["action"], &v["component"]),
        (
            &json!("lost-event"),
            &json!("investigate"),
            &json!("metal-hammer")
        ),
        "{v}"
    );
    assert!(
        line(&v).starts_with("verdict: lost-event — look at metal-hammer"),
        "{v}"
    );
    assert!(
        v["evidence"]
            .to_string()
            .contains("Booting New Kernel never came"),
        "{v}"
    );
}

#[test]
fn the_newer_release_swallows_a_late_phoned_home_only_within_five_minutes() {
    // Under v0.19.3, a Phoned Home in Waiting 6 minutes after Waiting: v0.42.2 stores it too
    // (WaitingState, later than swallowBufferedPhonedHomeThreshold), so no upgrade is told.
    let v = verdict_of(
        "metal-api-v0.19.3",
        "late-phoned-home.ndjson",
        "Waiting",
        "Phoned Home",
    );
    assert!(v.get("handled_by").is_none(), "{v}");
    assert!(!line(&v).contains("v0.42.2"), "{v}");
    // With one 4 minutes after Waiting beside it, v0.42.2 swallows that one.
    let v = verdict_of(
        "metal-api-v0.19.3",
        "four-and-six.ndjson",
        "Waiting",
        "Phoned Home",
    );
    assert_eq!(
        v["handled_by"],
        json!({"rules": "metal-api-v0.42.2", "how": "swallowed", "precedent": "metal-api#631", "occurrences": 1}),
        "{v}"
    );
    assert!(
        line(&v).ends_with(
            "metal-api v0.42.2 swallows 1 of these 2, those less than 5 minutes after the machine's last event (metal-api#631); for 1 it stores a Phoned Home that came 5 minutes or more after the machine's last event as it holds it, and the next event other than Phoned Home is then unexpected"
        ),
        "{v}"
    );
    // In PXE Booting v0.42.2 takes a later one's time only: it handles them all.
    let v = verdict_of(
        "metal-api-v0.19.3",
        "../fleet-v0.42.2/ndjson",
        "PXE Booting",
        "Phoned Home",
    );
    assert_eq!(v["handled_by"]["how"], "swallowed", "{v}");
    assert!(v["handled_by"].get("occurrences").is_none(), "{v}");
}

/// The unexpected pairs of `report -o json --rules RULES FILE`, as `State/Event`.
fn pairs_of(rules: &str, file: &str) -> Vec<String> {
    let (code, report, stderr) = run_json(&[
        "report",
        "-o",
        "json",
        "--rules",
        rules,
        arg(&against_code(file)),
    ]);
    assert_eq!(code, 0, "{stderr}");
    report["unexpected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            format!(
                "{}/{}",
                p["state"].as_str().unwrap(),
                p["event"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn the_newer_release_is_named_only_where_its_own_replay_swallows() {
    // Waiting, a Phoned Home 4 minutes later, another 8 minutes after Waiting, Installing.
    // v0.42.2 swallows the first, which does not move its last event time, so it stores the
    // second, and Installing is unexpected: no upgrade is promised.
    let file = "swallowed-then-stored.ndjson";
    let v = verdict_of("metal-api-v0.19.3", file, "Waiting", "Phoned Home");
    assert!(v.get("handled_by").is_none(), "{v}");
    assert!(!line(&v).contains("v0.42.2"), "{v}");
    assert_eq!(
        pairs_of("metal-api-v0.42.2", file),
        ["Phoned Home/Installing"]
    );
    // 4 min 59 s, exactly 5 minutes (a Planned Reboot after it), 6 minutes (nothing after
    // it): v0.42.2 swallows the first, stores the others, and finds nothing unexpected, so
    // nothing is said of a next event.
    let file = "stored-quietly.ndjson";
    let v = verdict_of("metal-api-v0.19.3", file, "Waiting", "Phoned Home");
    assert_eq!(v["handled_by"]["occurrences"], 1, "{v}");
    assert!(
        line(&v).ends_with(
            "metal-api v0.42.2 swallows 1 of these 3, those less than 5 minutes after the machine's last event (metal-api#631); for 2 it stores a Phoned Home that came 5 minutes or more after the machine's last event as it holds it"
        ),
        "{v}"
    );
    assert!(pairs_of("metal-api-v0.42.2", file).is_empty());
}

#[test]
fn booting_new_kernel_is_not_called_lost_where_it_came_or_an_alive_moved_the_time() {
    // Phoned Home twice in Installing, Booting New Kernel a minute later: it came.
    for rules in ["metal-api-v0.19.3", "metal-api-v0.42.2"] {
        let v = verdict_of(rules, "kexec-came.ndjson", "Installing", "Phoned Home");
        assert_ne!(v["kind"], "lost-event", "{v}");
        assert!(!v["evidence"].to_string().contains("never came"), "{v}");
    }
    // An export whose last event time is the unexpected Alive its last error event holds.
    let v = verdict_of(
        "metal-api-v0.42.2",
        "alive-moved.json",
        "Installing",
        "Phoned Home",
    );
    assert_ne!(v["kind"], "lost-event", "{v}");
    assert!(
        !v["evidence"].to_string().contains("kept phoning home"),
        "{v}"
    );
}

#[test]
fn a_buffered_phoned_home_after_a_network_boot_does_not_name_the_firmware() {
    // PXE Booting after Phoned Home, a Phoned Home 30 s later (v0.42.2 swallows it as
    // buffered), then Preparing and Registering: metal-hammer ran.
    let v = verdict_of(
        "metal-api-v0.42.2",
        "buffered-after-boot.ndjson",
        "Phoned Home",
        "PXE Booting",
    );
    assert_ne!(v["component"], "firmware", "{v}");
    assert!(!v["evidence"].to_string().contains("from its disk"), "{v}");
    assert!(
        line(&v).starts_with("verdict: unannounced-reboot (a reinstall without an event)"),
        "{v}"
    );
}

#[test]
fn a_reboot_in_waiting_after_48_hours_and_a_post_is_the_autoreboot() {
    // Preparing at 00:01; reboots at 30 h, at 48 h 90 s (the autoreboot's 48 h 10 s and a
    // POST of 80 s) and at 48 h 5 min 11 s.
    let v = verdict_of(
        "metal-api-v0.42.2",
        "autoreboot.ndjson",
        "Waiting",
        "PXE Booting",
    );
    assert_eq!(v["autoreboot"], json!({"inside": 2, "outside": 1}), "{v}");
    assert!(
        v["evidence"].to_string().contains(
            "2 came 24 h to 48 h 10 s after the machine's last Preparing (and 5 minutes more for the reboot and the firmware's POST)"
        ),
        "{v}"
    );
}
