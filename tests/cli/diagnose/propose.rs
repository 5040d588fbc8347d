//! `rules propose` against its verdicts: a forced pair is warned about, a rule into its own
//! state is refused, and a Go patch applies and imports as the proposal.

use fsmlog::Ruleset;
use fsmlog::sim::fleet::Habits;
use serde_json::{Value, json};

use super::*;

#[test]
fn a_forced_self_pair_is_written_as_self_and_warned_about() {
    let fleet = testdata("fleet-v0.42.2/list-json");
    let (code, proposed, stderr) = run_json(&[
        "rules",
        "propose",
        "--pair",
        "Preparing/Preparing",
        "-o",
        "json",
        arg(&fleet),
    ]);
    assert_eq!(code, 0);
    assert!(
        stderr.contains(
            "warning: --pair Preparing/Preparing is accepted against its verdict: crash-loop"
        ),
        "{stderr}"
    );
    let added = rows(&proposed).last().unwrap().clone();
    assert_eq!(
        added,
        json!({"event": "Preparing", "from": ["Preparing"], "to": "self"})
    );
}

#[test]
fn a_forced_swallow_metal_api_cannot_run_is_warned_to_be_stored() {
    // Three machines with a late Phoned Home in Installing: metal-api swallows none there, so
    // the default leaves the pair out, and forcing it writes `self`, which stores the event.
    let fleet = testdata("diagnose/late-in-installing");
    proposes_nothing(&fleet);
    let (code, proposed, stderr) = run_json(&[
        "rules",
        "propose",
        "--pair",
        "Installing/Phoned Home",
        "-o",
        "json",
        arg(&fleet),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("metal-api stores it in Installing: accepted, not swallowed"),
        "{stderr}"
    );
    assert_eq!(
        rows(&proposed).last().unwrap(),
        &json!({"event": "Phoned Home", "from": ["Installing"], "to": "self"})
    );
    assert!(
        proposed["description"]
            .as_str()
            .unwrap()
            .contains("accepts Phoned Home in Installing"),
        "{proposed}"
    );
}

#[test]
fn a_rule_into_its_own_state_by_name_is_refused_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let (_, exported, _) = stdout_of(&["rules", "export", "metal-api"]);
    let mut file: Value = serde_json::from_str(&exported).unwrap();
    file["transitions"]
        .as_array_mut()
        .unwrap()
        .push(json!({"event": "Preparing", "from": ["Preparing"], "to": "Preparing"}));
    let text = serde_json::to_string_pretty(&file).unwrap();
    let line = 1 + text[..text.rfind("\"to\": \"Preparing\"").unwrap()]
        .rfind('{')
        .map(|i| text[..i].matches('\n').count())
        .unwrap();
    let rules = dir.path().join("self-by-name.json");
    std::fs::write(&rules, &text).unwrap();
    let (code, _, stderr) = stdout_of(&["rules", "lint", arg(&rules)]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains(&format!(
            "self-by-name.json:{line}: Preparing in Preparing leads Preparing to itself by name"
        )) && stderr.contains("write \"to\": \"self\""),
        "{stderr}"
    );
    let (code, _, stderr) = stdout_of(&[
        "report",
        "--rules",
        arg(&rules),
        arg(&testdata("seed-machine.txt")),
    ]);
    assert_eq!(code, 2, "{stderr}");
}

#[test]
fn a_go_patch_of_a_self_pair_applies_and_imports_as_the_proposal() {
    if !have("git", on_path("git")) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("metal-api");
    let fsm = repo.join("cmd/metal-api/internal/fsm");
    std::fs::create_dir_all(&fsm).unwrap();
    std::fs::write(fsm.join("events.go"), events_go("metal-api-v0.19.3")).unwrap();
    git(&repo, &["init", "-q"]);
    let habits = Habits {
        late_phoned_home: 0.4,
        ..Habits::none()
    };
    let (list, _) = fleet(dir.path(), "metal-api-v0.19.3", &habits, 30);
    let go_file = "cmd/metal-api/internal/fsm/events.go";
    let patch = fsm.join("../../../../proposal.patch");
    let (code, out, stderr) = {
        let output = fsmlog()
            .current_dir(&repo)
            .args([
                "rules",
                "propose",
                "--rules",
                "metal-api-v0.19.3",
                "-o",
                "go",
                "--go-file",
                go_file,
            ])
            .arg(&list)
            .output()
            .unwrap();
        (
            output.status.code().unwrap(),
            String::from_utf8(output.stdout).unwrap(),
            String::from_utf8(output.stderr).unwrap(),
        )
    };
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("swallows buffered Phoned Home events for 300 s"),
        "{stderr}"
    );
    std::fs::write(&patch, &out).unwrap();
    git(&repo, &["apply", "--check", arg(&patch)]);
    git(&repo, &["apply", arg(&patch)]);
    let patched = std::fs::read_to_string(fsm.join("events.go")).unwrap();
    assert!(
        patched.contains("states.Waiting.String(),\n\t\t\t},\n\t\t\tDst: SelfTransitionState"),
        "{patched}"
    );
    let (code, imported, stderr) = stdout_of(&[
        "rules",
        "import-go",
        arg(&fsm.join("events.go")),
        "--like",
        "metal-api-v0.19.3",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let imported: Value = serde_json::from_str(&imported).unwrap();
    let proposal = proposal("metal-api-v0.19.3", &list);
    let transitions = |file: &Value| -> Ruleset {
        let mut file = file.clone();
        file["name"] = json!("x");
        file["description"] = json!("x");
        file["buffered_phoned_home_seconds"] = json!(null);
        Ruleset::from_json(&file.to_string()).unwrap()
    };
    let (a, b) = (transitions(&imported), transitions(&proposal));
    for state in fsmlog::State::ALL {
        for event in fsmlog::EventKind::ALL {
            assert_eq!(
                a.lookup(state, event),
                b.lookup(state, event),
                "{event} in {state}"
            );
        }
    }
}

#[test]
fn a_late_phoned_home_metal_api_stores_names_metal_core() {
    // metal-core sends Phoned Home (its `phone-home.go`); in Installing metal-api stores a
    // late one, so the one to look at is its sender, and nothing is proposed for it.
    let input = testdata("diagnose/late-in-installing");
    let (code, report, stderr) = run_json(&[
        "report",
        "--rules",
        "metal-api-v0.42.2",
        "-o",
        "json",
        arg(&input),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let pair = report["unexpected"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["state"] == "Installing" && p["event"] == "Phoned Home")
        .expect("the pair");
    assert_eq!(pair["verdict"]["action"], "investigate");
    assert_eq!(pair["verdict"]["component"], "metal-core");
    proposes_nothing(&input);
}

#[test]
fn a_lost_event_names_its_sender_and_is_never_proposed() {
    // Booting New Kernel never came on two machines: Phoned Home arrives in Installing and the
    // machine goes on. metal-hammer never skips that stage by design, so no rule hides it.
    let dir = tempfile::tempdir().unwrap();
    for n in 0..2 {
        let id = format!("00000000-0000-4000-8000-00000000000{n}");
        let events = [
            ("2025-09-01T00:00:00Z", "PXE Booting"),
            ("2025-09-01T00:01:00Z", "Preparing"),
            ("2025-09-01T00:02:00Z", "Registering"),
            ("2025-09-01T00:03:00Z", "Waiting"),
            ("2025-09-01T01:00:00Z", "Installing"),
            ("2025-09-01T01:02:00Z", "Phoned Home"),
            ("2025-09-02T01:05:00Z", "Planned Reboot"),
        ];
        let log: Vec<Value> = events
            .iter()
            .rev()
            .map(|(t, e)| json!({"time": t, "event": e, "message": ""}))
            .collect();
        write(
            dir.path(),
            &format!("{id}.json"),
            &Value::Array(log).to_string(),
        );
    }
    let (code, report, stderr) = run_json(&[
        "report",
        "--rules",
        "metal-api-v0.42.2",
        "-o",
        "json",
        arg(dir.path()),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let pair = &report["unexpected"][0];
    assert_eq!(
        (&pair["state"], &pair["event"]),
        (&json!("Installing"), &json!("Phoned Home"))
    );
    assert_eq!(pair["verdict"]["kind"], "lost-event", "{pair}");
    assert_eq!(pair["verdict"]["component"], "metal-hammer");
    assert!(
        pair["verdict"]["precedent"].is_null(),
        "no precedent: metal-api never accepted it"
    );
    proposes_nothing(dir.path());
}
