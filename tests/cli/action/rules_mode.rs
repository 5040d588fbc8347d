//! The action in rules mode: a fix passes and is listed, a regression fails and is still
//! summarised, input errors exit 2.
use std::path::{Path, PathBuf};

use regex::Regex;
use serde_json::Value;

use super::*;

const EVENTS_GO: &str = "cmd/metal-api/internal/fsm/events.go";

fn registering_installing() -> Vec<(String, String)> {
    vec![("Registering".to_string(), "Installing".to_string())]
}

/// (state, event) of a diff's pair list.
fn pair_names(list: &Value) -> Vec<(String, String)> {
    pairs(list).into_iter().map(|p| (p.0, p.1)).collect()
}

/// A checkout whose origin/main holds `base`'s events.go and whose work tree `proposed`'s,
/// as actions/checkout with fetch-depth 0 leaves a pull request.
fn pull_request(runner: &Runner, base: &str, proposed: &str) {
    let repo = runner.workspace();
    let file = repo.join(EVENTS_GO);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, events_go(base)).unwrap();
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "base"]);
    git(&repo, &["update-ref", "refs/remotes/origin/main", "HEAD"]);
    git(&repo, &["checkout", "-q", "-b", "proposal"]);
    std::fs::write(&file, events_go(proposed)).unwrap();
    git(&repo, &["commit", "-q", "-am", "proposal"]);
}

#[test]
fn rules_mode_passes_a_fix_and_lists_it() {
    if !have("git", on_path("git")) {
        return;
    }
    let runner = Runner::new();
    pull_request(&runner, "metal-api-v0.19.0", "metal-api-v0.19.3");
    let fleet = fleet_path("fleet-v0.19.0/list-json");
    let step = runner.judge(
        &[
            ("mode", "rules"),
            ("fleet", &format!("{fleet}\n")),
            ("like", "metal-api-v0.19.0"),
        ],
        "main",
        &[],
    );
    let ctx = step.context();
    assert_eq!(step.code, 0, "{ctx}");
    assert_eq!(step.exit_code(), "0");
    assert_eq!(
        Path::new(&step.outputs["output-dir"])
            .canonicalize()
            .unwrap(),
        runner.temp().join("fsmlog").canonicalize().unwrap()
    );

    // The base came from origin/main, not from the work tree.
    let out = PathBuf::from(&step.outputs["output-dir"]);
    assert_eq!(
        read(&out.join("base-events.go")),
        events_go("metal-api-v0.19.0")
    );
    assert_eq!(step.json("base-rules")["name"], "base");
    assert_eq!(step.json("proposed-rules")["name"], "proposed");

    let markdown = step.file("markdown");
    for line in [
        "## fsmlog diff",
        "base → proposed · 1 file · 12 machines",
        "### Newly unexpected (regressions): 0 pairs",
        "### Newly expected (fixed, or hidden): 1 pair",
        "| Registering | Installing | 3 | 3 |",
    ] {
        assert!(markdown.contains(line), "{line}\n{markdown}");
    }
    assert!(step.summary.contains(&markdown), "{ctx}");
    let diff = step.json("json");
    assert_eq!(
        (&diff["old"], &diff["new"]),
        (&"base".into(), &"proposed".into())
    );
    assert_eq!(
        pair_names(&diff["newly_expected"]),
        registering_installing()
    );
    assert_eq!(diff["newly_unexpected"], serde_json::json!([]));
    // The markdown shows in the log with workflow commands off: it quotes the fleet.
    let stop = Regex::new(r"(?m)^::stop-commands::([0-9a-f]{32})$").unwrap();
    let token = &stop.captures(&step.stdout).expect(&ctx)[1];
    assert!(step.stdout.contains(&format!("\n::{token}::\n")), "{ctx}");
}

#[test]
fn rules_mode_fails_on_a_regression_and_still_summarises() {
    // The base as a file: no git needed.
    let runner = Runner::new();
    let go = runner.workspace().join(EVENTS_GO);
    std::fs::create_dir_all(go.parent().unwrap()).unwrap();
    std::fs::write(&go, events_go("metal-api-v0.19.0")).unwrap();
    std::fs::write(
        runner.workspace().join("base.go"),
        events_go("metal-api-v0.19.3"),
    )
    .unwrap();
    let fleet = fleet_path("fleet-v0.19.0/list-json");
    let inputs = [
        ("mode", "rules"),
        ("fleet", fleet.as_str()),
        ("base-file", "base.go"),
        ("output-dir", "out"),
    ];
    let step = runner.judge(&inputs, "", &[]);
    let ctx = step.context();
    assert_eq!(step.code, 1, "{ctx}");
    assert_eq!(step.exit_code(), "1");
    assert_eq!(
        Path::new(&step.outputs["output-dir"])
            .canonicalize()
            .unwrap(),
        runner.workspace().join("out").canonicalize().unwrap()
    );
    assert!(
        step.summary
            .contains("### Newly unexpected (regressions): 1 pair"),
        "{ctx}"
    );
    assert!(
        step.summary.contains("| Registering | Installing |"),
        "{ctx}"
    );
    let diff = step.json("json");
    assert_eq!(
        pair_names(&diff["newly_unexpected"]),
        registering_installing()
    );
    assert_eq!(step.summary, format!("{}\n", step.file("markdown")));

    // fail-on reaches diff.
    let never = runner.judge(
        &[inputs.as_slice(), &[("fail-on", "never")]].concat(),
        "",
        &[],
    );
    assert_eq!(never.code, 0, "{}", never.context());
    assert!(never.summary.contains("(regressions): 1 pair"));
    let bogus = runner.judge(
        &[inputs.as_slice(), &[("fail-on", "sometimes")]].concat(),
        "",
        &[],
    );
    assert_eq!(bogus.code, 2, "{}", bogus.context());
    assert_eq!(bogus.exit_code(), "2");
}

#[test]
fn rules_mode_input_errors_exit_2() {
    if !have("git", on_path("git")) {
        return;
    }
    let runner = Runner::new();
    pull_request(&runner, "metal-api-v0.19.0", "metal-api-v0.19.3");
    let fleet = fleet_path("fleet-v0.19.0/list-json");

    // A fleet path that is not there: the rest is still reported.
    let both = format!("{fleet}\nno-such-export\n");
    let step = runner.judge(&[("mode", "rules"), ("fleet", &both)], "main", &[]);
    let ctx = step.context();
    assert_eq!(step.code, 2, "{ctx}");
    assert_eq!(step.exit_code(), "2");
    assert!(step.stderr.contains("no-such-export"), "{ctx}");
    assert!(step.summary.contains("## fsmlog diff"), "{ctx}");
    assert!(step.summary.contains("1 input error"), "{ctx}");

    // A path is a path, never shell: nothing runs, fsmlog is told of a file by that name.
    let hostile = "$(touch pwned)\n`touch pwned`";
    let step = runner.judge(&[("mode", "rules"), ("fleet", hostile)], "main", &[]);
    assert_eq!(step.code, 2, "{}", step.context());
    assert!(!runner.workspace().join("pwned").exists());
    assert!(step.stderr.contains("$(touch pwned)"), "{}", step.context());

    // A base branch the checkout lacks, with no remote to fetch it from.
    let step = runner.judge(&[("mode", "rules"), ("fleet", &fleet)], "release", &[]);
    let ctx = step.context();
    assert_eq!(step.code, 2, "{ctx}");
    assert!(step.stderr.contains("cannot fetch origin/release"), "{ctx}");
    assert!(
        step.stdout
            .contains("::error title=fsmlog::base-ref: cannot fetch"),
        "{ctx}"
    );
    assert!(
        step.summary.contains("<pre>base-ref: cannot fetch"),
        "{ctx}"
    );

    // Not a branch name; and no base at all (not a pull request).
    let step = runner.judge(&[("mode", "rules"), ("fleet", &fleet)], "a b", &[]);
    assert_eq!(step.code, 2, "{}", step.context());
    assert!(
        step.stderr.contains("is not a branch name"),
        "{}",
        step.context()
    );
    let step = runner.judge(&[("mode", "rules"), ("fleet", &fleet)], "", &[]);
    assert_eq!(step.code, 2, "{}", step.context());

    // Usage: a mode that is not one, a fleet of nothing, and HTML in a message stays text.
    let step = runner.judge(&[("mode", "<b>both</b>"), ("fleet", &fleet)], "main", &[]);
    assert_eq!(step.code, 2, "{}", step.context());
    assert_eq!(step.exit_code(), "2");
    assert!(step.summary.contains("&lt;b"), "{}", step.summary);
    assert!(!step.summary.contains("<b>"), "{}", step.summary);
    let step = runner.judge(&[("mode", "rules"), ("fleet", " \n\n")], "main", &[]);
    assert_eq!(step.code, 2, "{}", step.context());
    assert!(
        step.stderr.contains("fleet: no path given"),
        "{}",
        step.context()
    );

    // A proposed events.go that is not the FSM's table: nothing to diff, the summary says why.
    std::fs::write(runner.workspace().join(EVENTS_GO), "package fsm\n").unwrap();
    let step = runner.judge(&[("mode", "rules"), ("fleet", &fleet)], "main", &[]);
    let ctx = step.context();
    assert_eq!(step.code, 2, "{ctx}");
    assert!(
        step.summary
            .contains("The events.go files could not be imported as rule files (exit 2)"),
        "{ctx}"
    );
    assert!(!step.outputs.contains_key("json"), "{ctx}");
    let out = PathBuf::from(&step.outputs["output-dir"]);
    assert!(
        !out.join("diff.json").exists(),
        "an earlier run's file is gone: {ctx}"
    );
    assert!(
        step.file("markdown").contains("could not be imported"),
        "{ctx}"
    );
}
