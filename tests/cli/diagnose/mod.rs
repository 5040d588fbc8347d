//! The diagnosis: a verdict for every unexpected pair, and `rules propose` that
//! follows the verdicts. metal-stack's own history is replayed on generated fleets: the one
//! pair metal-api accepted (Registering → Installing, v0.19.3), the one it swallowed
//! (buffered Phoned Home, v0.42.2), and the pairs that were problems elsewhere.

mod against_code;
mod evidence;
mod propose;

use std::path::{Path, PathBuf};

use fsmlog::sim::fleet::{Habits, machine_with};
use fsmlog::{Exporter, Layout, Ruleset, format_time};
use serde_json::{Value, json};

use super::*;

/// A fleet of `machines` recorded under `rules` with these habits: the list metalctl exports,
/// and the raw stream the machines sent.
fn fleet(dir: &Path, rules: &str, habits: &Habits, machines: u64) -> (PathBuf, PathBuf) {
    let ruleset = Ruleset::resolve(rules).unwrap();
    let list = dir.join("fleet.json");
    let stream = dir.join("fleet.ndjson");
    let mut exporter = Exporter::new(Layout::ListJson, Vec::new());
    let mut lines = String::new();
    for index in 0..machines {
        let m = machine_with(11, index, 60, &ruleset, habits);
        exporter.machine(&m.id, &m.container).unwrap();
        for e in &m.sent {
            lines.push_str(
                &json!({"machine_id": m.id, "time": format_time(e.time), "event": e.event.name(), "message": e.message})
                    .to_string(),
            );
            lines.push('\n');
        }
    }
    std::fs::write(&list, exporter.finish().unwrap()).unwrap();
    std::fs::write(&stream, lines).unwrap();
    (list, stream)
}

/// The verdict kind of each unexpected pair `report` finds.
fn kinds(report: &Value) -> Vec<(String, String, String)> {
    report["unexpected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["state"].as_str().unwrap().to_string(),
                p["event"].as_str().unwrap().to_string(),
                p["verdict"]["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Asserts that `rules propose` on `input` (under the newest rules) is the base unchanged.
fn proposes_nothing(input: &Path) {
    let (code, proposed, stderr) = run_json(&["rules", "propose", "-o", "json", arg(input)]);
    assert_eq!(code, 0, "{stderr}");
    let (_, base, _) = run_json(&["rules", "export", "metal-api"]);
    assert_eq!(rows(&proposed), rows(&base), "nothing proposed");
}

fn rows(rule_file: &Value) -> Vec<Value> {
    rule_file["transitions"].as_array().unwrap().clone()
}

/// `rules propose --rules BASE -o json` on `input`: the proposal as a rule file.
fn proposal(base: &str, input: &Path) -> Value {
    let (code, proposed, stderr) = run_json(&[
        "rules",
        "propose",
        "--rules",
        base,
        "-o",
        "json",
        arg(input),
    ]);
    assert_eq!(code, 0, "{stderr}");
    proposed
}

/// The rows a proposal adds to its base, in order.
fn added_rows(base: &str, proposed: &Value) -> Vec<Value> {
    let (_, exported, _) = run_json(&["rules", "export", base]);
    rows(proposed)[rows(&exported).len()..].to_vec()
}

#[test]
fn skipping_waiting_under_v0_19_0_proposes_exactly_what_v0_19_3_added() {
    let dir = tempfile::tempdir().unwrap();
    let habits = Habits {
        skip_waiting: 0.3,
        ..Habits::none()
    };
    let (list, _) = fleet(dir.path(), "metal-api-v0.19.0", &habits, 30);
    let (_, report, _) = run_json(&[
        "report",
        "-o",
        "json",
        "--rules",
        "metal-api-v0.19.0",
        arg(&list),
    ]);
    assert_eq!(
        kinds(&report),
        [("Registering".into(), "Installing".into(), "accept".into())]
    );
    let verdict = &report["unexpected"][0]["verdict"];
    assert_eq!(verdict["precedent"], "metal-api#325");
    assert_eq!(verdict["component"], "fsm");
    let proposal = dir.path().join("proposal.json");
    let (code, _, stderr) = stdout_of(&[
        "rules",
        "propose",
        "--rules",
        "metal-api-v0.19.0",
        "-o",
        "json",
        "--out",
        arg(&proposal),
        arg(&list),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let proposed: Value =
        serde_json::from_str(&std::fs::read_to_string(&proposal).unwrap()).unwrap();
    let (_, base, _) = stdout_of(&["rules", "export", "metal-api-v0.19.0"]);
    let base: Value = serde_json::from_str(&base).unwrap();
    let added: Vec<Value> = rows(&proposed)[rows(&base).len()..].to_vec();
    assert_eq!(
        added,
        [json!({"event": "Installing", "from": ["Registering"], "to": "Installing"})]
    );
    assert_eq!(&rows(&proposed)[..rows(&base).len()], &rows(&base)[..]);
    // Its effect is v0.19.3's, event for event.
    let effect = |new: &str| {
        let (_, mut diff, _) = run_json(&[
            "diff",
            "--old",
            "metal-api-v0.19.0",
            "--new",
            new,
            "-o",
            "json",
            "--fail-on",
            "never",
            arg(&list),
        ]);
        diff.as_object_mut().unwrap().remove("new");
        diff
    };
    assert_eq!(effect(arg(&proposal)), effect("metal-api-v0.19.3"));
    assert!(
        !effect("metal-api-v0.19.3")["newly_expected"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}

#[test]
fn late_buffered_phoned_home_under_v0_19_3_is_swallowed_and_what_it_caused_are_cascades() {
    let dir = tempfile::tempdir().unwrap();
    let habits = Habits {
        late_phoned_home: 0.4,
        ..Habits::none()
    };
    let (list, stream) = fleet(dir.path(), "metal-api-v0.19.3", &habits, 30);
    for input in [&list, &stream] {
        let (_, report, _) = run_json(&[
            "report",
            "-o",
            "json",
            "--rules",
            "metal-api-v0.19.3",
            arg(input),
        ]);
        let pairs = report["unexpected"].as_array().unwrap();
        let late = pairs
            .iter()
            .find(|p| p["event"] == "Phoned Home")
            .unwrap_or_else(|| panic!("{report}"));
        assert_eq!(late["state"], "Waiting");
        assert_eq!(late["verdict"]["kind"], "swallow", "{}", late["verdict"]);
        assert_eq!(late["verdict"]["action"], "swallow");
        assert_eq!(late["verdict"]["precedent"], "metal-api#631");
        for caused in pairs.iter().filter(|p| p["state"] == "Phoned Home") {
            assert_eq!(caused["verdict"]["kind"], "cascade", "{caused}");
            assert_eq!(caused["cascades"], caused["count"], "{caused}");
            assert_eq!(
                caused["roots"],
                json!([{"state": "Waiting", "event": "Phoned Home", "count": caused["count"]}])
            );
        }
        assert!(
            pairs.iter().any(|p| p["state"] == "Phoned Home"),
            "{report}"
        );
        let proposed = proposal("metal-api-v0.19.3", input);
        assert_eq!(
            added_rows("metal-api-v0.19.3", &proposed),
            [json!({"event": "Phoned Home", "from": ["Waiting"], "to": "self"})]
        );
        assert_eq!(proposed["buffered_phoned_home_seconds"], 300);
    }
}

#[test]
fn problems_elsewhere_are_never_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let habits = Habits {
        reboot_in_waiting: 0.3,
        unannounced_reboot: 0.3,
        crash_loop: 0.3,
        alive_in_planned_reboot: 0.6,
        ..Habits::none()
    };
    for rules in RULE_SETS {
        let (list, stream) = fleet(dir.path(), rules, &habits, 25);
        for input in [&list, &stream] {
            let (_, report, _) = run_json(&["report", "-o", "json", "--rules", rules, arg(input)]);
            let found = kinds(&report);
            assert!(found.len() >= 3, "{rules}: {found:?}");
            for (state, event, kind) in &found {
                assert!(
                    !matches!(kind.as_str(), "accept" | "swallow"),
                    "{rules} {input:?}: {event} in {state} is {kind}"
                );
            }
            let (code, proposed, stderr) = run_json(&[
                "rules",
                "propose",
                "--rules",
                rules,
                "-o",
                "json",
                arg(input),
            ]);
            assert_eq!(code, 0, "{stderr}");
            let (_, base, _) = run_json(&["rules", "export", rules]);
            assert_eq!(rows(&proposed), rows(&base), "{rules}: nothing is accepted");
        }
        let (_, report, _) = run_json(&["report", "-o", "json", "--rules", rules, arg(&stream)]);
        let kinds = kinds(&report);
        let kind_of = |state: &str, event: &str| {
            kinds
                .iter()
                .find(|k| k.0 == state && k.1 == event)
                .map(|k| k.2.clone())
        };
        assert_eq!(
            kind_of("Waiting", "PXE Booting").as_deref(),
            Some("unannounced-reboot")
        );
        assert_eq!(
            kind_of("Preparing", "Preparing").as_deref(),
            Some("crash-loop")
        );
        assert_eq!(
            kind_of("Planned Reboot", "Alive").as_deref(),
            Some("liveness")
        );
    }
}

#[test]
fn the_seed_machine_is_an_unannounced_reboot_in_waiting_to_fix_in_metal_hammer() {
    let seed = testdata("seed-machine.txt");
    let (_, out, _) = stdout_of(&["explain", arg(&seed)]);
    assert!(
        out.contains("verdict: unannounced-reboot (the Planned Reboot did not arrive) — look at metal-hammer · 100% of the occurrences · 1 machine · as in metal-api#464"),
        "{out}"
    );
    let (_, json, _) = run_json(&["explain", "-o", "json", arg(&seed)]);
    let verdict = &json["pairs"][0]["verdict"];
    assert_eq!(verdict["kind"], "unannounced-reboot");
    assert_eq!(verdict["component"], "metal-hammer");
    assert_eq!(verdict["action"], "investigate");
    assert_eq!(verdict["share"], 1.0);
    assert_eq!(verdict["machines"], 1);
}

#[test]
fn the_default_proposal_on_the_bundled_fleet_accepts_nothing() {
    // Before the diagnosis, it accepted Preparing in Preparing (a crash loop) and PXE Booting
    // in Waiting, and cleared the crash-loop flag of 5 machines.
    let fleet = testdata("fleet-v0.42.2/list-json");
    proposes_nothing(&fleet);
    let (_, table, _) = stdout_of(&["rules", "propose", arg(&fleet)]);
    assert!(table.contains("Accepted: 0 pairs"), "{table}");
    assert!(table.contains("verdict: crash-loop"), "{table}");
}

#[test]
fn every_export_of_a_fleet_gets_the_same_verdicts() {
    // The exports hold what metal-api stored, however they are shaped; a raw stream holds more
    // (what metal-api swallowed) and is left out.
    for fleet in FLEETS {
        for rules in RULE_SETS {
            let of = |format: &str| {
                let input = testdata(&format!("{fleet}/{format}"));
                let (_, report, _) =
                    run_json(&["report", "-o", "json", "--rules", rules, arg(&input)]);
                report["unexpected"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| {
                        json!([
                            p["state"],
                            p["event"],
                            p["count"],
                            p["cascades"],
                            p["roots"],
                            p["verdict"]
                        ])
                    })
                    .collect::<Vec<_>>()
            };
            let want = of("list-json");
            assert!(!want.is_empty());
            for format in [
                "describe-json",
                "logs-json",
                "event-api",
                "container-dump",
                "v2-json",
                "text",
                "concat-text",
                "markdown",
            ] {
                assert_eq!(of(format), want, "{fleet}/{format} under {rules}");
            }
        }
    }
}

/// The pairs `report` finds under `rules`, each with its verdict kind and component and how
/// many of its occurrences are cascades.
fn judged(rules: &str, inputs: &[&Path]) -> Vec<Judged> {
    let mut args = vec!["report", "-o", "json", "--rules", rules];
    args.extend(inputs.iter().map(arg));
    let (_, report, _) = run_json(&args);
    report["unexpected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                format!(
                    "{}/{}",
                    p["state"].as_str().unwrap(),
                    p["event"].as_str().unwrap()
                ),
                p["verdict"]["kind"].as_str().unwrap().to_string(),
                p["cascades"].as_u64().unwrap(),
                p["verdict"]["component"].as_str().unwrap_or("").to_string(),
                p["verdict"]["precedent"].clone(),
            )
        })
        .collect()
}

type Judged = (String, String, u64, String, Value);

/// The pair named `state/event` among `pairs`.
fn find<'a>(pairs: &'a [Judged], name: &str) -> &'a Judged {
    pairs
        .iter()
        .find(|p| p.0 == name)
        .unwrap_or_else(|| panic!("{name} in {pairs:?}"))
}

#[test]
fn a_root_that_begins_the_log_still_carries_its_cascade() {
    // m1's log begins with the skipped Phoned Home in Preparing; m2's has the Preparing before
    // it. Both machines were left in Phoned Home, so both Registerings are its cascade.
    let first = testdata("diagnose/first-list.json");
    let pairs = judged("metal-api-v0.19.3", &[&first]);
    let registering = find(&pairs, "Phoned Home/Registering");
    assert_eq!(registering.1, "cascade");
    assert_eq!(registering.2, 2, "{pairs:?}");
}

#[test]
fn a_seam_between_two_files_invents_no_cascade() {
    // a.json holds the machine's older rows, b.json its newer ones: the pair at the seam is
    // judged as it is in b.json alone, never as a cascade of a root in a.json.
    let seam = testdata("diagnose/seam");
    let b = testdata("diagnose/seam/b.json");
    for rules in ["metal-api-v0.19.3", "metal-api"] {
        let both = judged(rules, &[&seam]);
        assert_eq!(both, judged(rules, &[&b]), "{rules}");
        let installing = find(&both, "PXE Booting/Installing");
        assert_ne!(installing.1, "cascade");
        assert_eq!(installing.2, 0);
    }
}

#[test]
fn a_left_out_root_carries_its_state_only_to_the_next_event_of_its_record() {
    // b.json holds only the root (Phoned Home in Waiting); c.json begins with Installing in
    // Planned Reboot, the machine's own record of where it stood then. Without the root the
    // Installing is still unexpected: it is no cascade of it.
    let dir = testdata("diagnose/seam2");
    let pairs = judged("metal-api-v0.19.0", &[&dir]);
    let installing = find(&pairs, "Planned Reboot/Installing");
    assert_eq!(installing.1, "undecided", "{pairs:?}");
    assert_eq!(installing.2, 0, "{pairs:?}");
}

#[test]
fn a_second_pxe_booting_after_phoned_home_is_still_metal_apis_reboot() {
    // Both machines phone home, then DHCP retries (two PXE Bootings) and a fresh Preparing:
    // the export and the raw stream must name the same component though the raw stream
    // holds the retry metal-api swallowed.
    for input in ["diagnose/ph2-list.json", "diagnose/ph2.ndjson"] {
        let pairs = judged("metal-api", &[&testdata(input)]);
        assert_eq!(pairs.len(), 1, "{input}: {pairs:?}");
        assert_eq!(pairs[0].0, "Phoned Home/PXE Booting");
        assert_eq!(pairs[0].1, "unannounced-reboot");
        assert_eq!(pairs[0].3, "metal-api", "{input}");
    }
}

#[test]
fn reboots_of_several_kinds_name_no_component() {
    // One machine went through reclaim (firmware), one rebooted with an Alive in between
    // (metal-api's own reboot): neither kind holds the share, so no component and no
    // precedent is named, and the sentence says why.
    let mixed = testdata("diagnose/ph-list.json");
    let pairs = judged("metal-api", &[&mixed]);
    let reboot = find(&pairs, "Phoned Home/PXE Booting");
    assert_eq!(reboot.1, "unannounced-reboot");
    assert_eq!(reboot.3, "");
    assert_eq!(reboot.4, Value::Null);
    let (_, out, _) = stdout_of(&["explain", arg(&mixed)]);
    assert!(out.contains("of several kinds"), "{out}");
    // Each machine has one of the kinds: the verdict is on both.
    let (_, json, _) = run_json(&["report", "-o", "json", arg(&mixed)]);
    assert_eq!(json["unexpected"][0]["verdict"]["machines"], 2, "{json}");
    assert!(out.contains("· 2 machines"), "{out}");
}
