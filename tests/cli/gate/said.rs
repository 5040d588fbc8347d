//! What a command says as it goes is said even when it fails later: a baseline written is
//! named, a forced `--pair` is warned about, whatever goes wrong after.

use super::*;

#[test]
fn a_written_baseline_is_named_though_the_output_then_fails() {
    let dir = tempfile::tempdir().unwrap();
    let new = dir.path().join("new.json");
    let out = dir.path().join("no-such-dir").join("gate.json");
    let fleet = testdata("fleet-v0.42.2/list-json");
    let (code, _, stderr) = stdout_of(&[
        "check",
        "--write-baseline",
        arg(&new),
        "-o",
        "json",
        "--out",
        arg(&out),
        arg(&fleet),
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(new.exists(), "the new baseline was written");
    let wrote = stderr.find("fsmlog: wrote 2 accepted pairs to");
    let failed = stderr.find("cannot create");
    assert!(wrote.is_some() && failed.is_some(), "{stderr}");
    assert!(wrote < failed, "said before the failure: {stderr}");
}

#[test]
fn a_forced_pair_is_warned_about_though_the_patch_then_fails() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = testdata("fleet-v0.42.2/list-json");
    let missing = dir.path().join("missing-events.go");
    let (code, _, stderr) = stdout_of(&[
        "rules",
        "propose",
        "--pair",
        "Preparing/Preparing",
        "-o",
        "go",
        "--go-file",
        arg(&missing),
        arg(&fleet),
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("warning: --pair Preparing/Preparing is accepted against its verdict"),
        "{stderr}"
    );
    assert!(stderr.contains("cannot read"), "{stderr}");
}
