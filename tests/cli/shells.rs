//! What shells and exports hand over, read once and whole: pipes, FIFOs, process
//! substitution, symlinks, standard input beside files, a file reached twice.
use std::io::Write;
use std::process::{Command as Process, Stdio};

use serde_json::Value;

use super::*;

/// Runs a bash command line with `$FSMLOG` set to the binary (for `<(…)` and pipes).
fn bash(script: &str) -> (i32, String, String) {
    let output = Process::new("bash")
        .args(["-c", script])
        .env("FSMLOG", assert_cmd::cargo::cargo_bin("fsmlog"))
        .current_dir(testdata(""))
        .output()
        .unwrap();
    (
        output.status.code().unwrap(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

// 1. Pipes are read once.

#[test]
fn process_substitutions_are_read_once() {
    let alone = report_of(&[arg(&testdata(LIST)), arg(&testdata(TEXT_DIR))]);
    let (code, out, err) = bash(&format!(
        "\"$FSMLOG\" report -o json <(cat {LIST}) <(tail -n +1 {TEXT_DIR}/*.txt)"
    ));
    assert_eq!(code, 0, "{err}");
    let piped: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(piped["inputs"]["machines"], 12);
    assert_eq!(piped["inputs"]["merged_machines"], 12);
    assert_eq!(piped["unexpected"], alone["unexpected"]);
    assert_eq!(piped["inputs"]["duplicates"], alone["inputs"]["duplicates"]);
}

#[test]
fn dev_stdin_beside_a_file_is_merged() {
    let list = std::fs::read(testdata(LIST)).unwrap();
    let text = testdata(TEXT_DIR);
    let (code, piped, stderr) =
        run_json_stdin(&["report", "-o", "json", "/dev/stdin", arg(&text)], &list);
    assert_eq!(code, 0, "{stderr}");
    let files = report_of(&[arg(&testdata(LIST)), arg(&text)]);
    assert_eq!(piped["inputs"]["machines"], 12);
    assert_eq!(piped["unexpected"], files["unexpected"]);
}

#[test]
fn a_fifo_is_read_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("export.fifo");
    let made = Process::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let list = std::fs::read(testdata(LIST)).unwrap();
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut f = std::fs::OpenOptions::new().write(true).open(fifo).unwrap();
            // A slow producer: a kilobyte at a time.
            for chunk in list.chunks(1024) {
                f.write_all(chunk).unwrap();
            }
        })
    };
    let text = testdata(TEXT_DIR);
    let (code, out, stderr) = run_json(&["report", "-o", "json", arg(&fifo), arg(&text)]);
    writer.join().unwrap();
    assert_eq!(code, 0, "{stderr}");
    let files = report_of(&[arg(&testdata(LIST)), arg(&text)]);
    assert_eq!(out["inputs"]["machines"], 12);
    assert_eq!(out["unexpected"], files["unexpected"]);
}

// 2. Symlinks are followed; nothing is skipped in silence; no gate passes on nothing.

#[test]
fn symlinks_in_a_directory_are_followed() {
    let dir = tempfile::tempdir().unwrap();
    let links = dir.path().join("exports");
    std::fs::create_dir(&links).unwrap();
    std::os::unix::fs::symlink(testdata(LIST), links.join("latest.json")).unwrap();
    std::os::unix::fs::symlink(testdata("fleet-v0.19.0/text"), links.join("older")).unwrap();
    let (code, out, stderr) = run_json(&["check", "-o", "json", arg(&links)]);
    assert_eq!(out["machines"], 24, "{stderr}");
    assert_eq!(
        code, 1,
        "the fleets hold unexpected pairs, so the gate fails: {stderr}"
    );
}

#[test]
fn a_symlink_loop_is_named_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("exports");
    std::fs::create_dir(&root).unwrap();
    std::fs::copy(testdata("seed-machine.txt"), root.join("seed.txt")).unwrap();
    std::os::unix::fs::symlink(&root, root.join("again")).unwrap();
    std::fs::write(root.join(".hidden.txt"), "not read").unwrap();
    let (code, out, stderr) = run_json(&["report", "-o", "json", arg(&root)]);
    assert_eq!(code, 2);
    assert_eq!(out["inputs"]["machines"], 1);
    assert!(
        stderr.contains("again: symlink loop, not followed"),
        "{stderr}"
    );
    assert!(stderr.contains("skipped"), "{stderr}");
    assert!(stderr.contains(".hidden.txt: hidden"), "{stderr}");
    let skipped = out["inputs"]["skipped"].as_array().unwrap();
    assert!(
        skipped
            .iter()
            .any(|s| s["path"].as_str().unwrap().ends_with(".hidden.txt"))
    );
}

// 3. Standard input is merged like any other input.

#[test]
fn stdin_beside_the_same_file_is_one_fleet() {
    let list = std::fs::read(testdata(LIST)).unwrap();
    let (code, both, stderr) =
        run_json_stdin(&["report", "-o", "json", "-", arg(&testdata(LIST))], &list);
    assert_eq!(code, 0, "{stderr}");
    let alone = report_of(&[arg(&testdata(LIST))]);
    assert_eq!(both["inputs"]["machines"], 12);
    assert_eq!(both["inputs"]["merged_machines"], 12);
    assert_eq!(both["unexpected"], alone["unexpected"]);
    assert_eq!(both["machines"], alone["machines"]);
}

#[test]
fn detection_does_not_depend_on_how_fast_a_pipe_delivers() {
    let stream = testdata("odd-exports/late-stream.ndjson");
    let (_, at_once, _) = run_json(&["report", "-o", "json", arg(&stream)]);
    assert_eq!(at_once["inputs"]["formats"]["ndjson"], 1);
    assert_eq!(at_once["inputs"]["events"], 5);
    // The same bytes, a line at a time with pauses in between.
    let mut child = Process::new(assert_cmd::cargo::cargo_bin("fsmlog"))
        .args(["report", "-o", "json", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for line in std::fs::read_to_string(&stream)
        .unwrap()
        .split_inclusive('\n')
    {
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.flush().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(30));
    }
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    let slow: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(slow["unexpected"], at_once["unexpected"]);
    assert_eq!(slow["inputs"]["events"], at_once["inputs"]["events"]);
    assert_eq!(slow["inputs"]["formats"]["ndjson"], 1);
}

#[test]
fn files_that_cannot_be_opened_are_not_counted() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("export.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let (code, out, stderr) = run_json(&[
        "report",
        "-o",
        "json",
        arg(&socket),
        arg(&testdata("seed-machine.txt")),
    ]);
    assert_eq!(code, 2);
    assert!(stderr.contains("export.sock: cannot open"), "{stderr}");
    assert_eq!(out["inputs"]["files"], 1);
}

// A file reached twice is read once, whichever way it is reached: a hard link and a symlink
// in the directory walked, the directory named twice, a file named beside its directory.
// Files found in a directory learn their identity as they are read, so this is also the
// pass that is made again once a file turns out to be one read already.

#[test]
fn a_file_reached_twice_is_read_once() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = dir.path().join("fleet");
    std::fs::create_dir(&fleet).unwrap();
    let logs = testdata("fleet-v0.42.2/logs-json");
    let mut names: Vec<_> = std::fs::read_dir(&logs)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    for name in &names {
        std::fs::copy(logs.join(name), fleet.join(name)).unwrap();
    }
    let once = report_of(&[arg(&fleet)]);
    assert_eq!(once["inputs"]["files"], names.len());
    let first = fleet.join(&names[0]);
    std::fs::hard_link(&first, fleet.join("zz-hard.json")).unwrap();
    std::os::unix::fs::symlink(&first, fleet.join("zz-soft.json")).unwrap();
    for paths in [
        vec![arg(&fleet)],
        vec![arg(&fleet), arg(&fleet)],
        vec![arg(&first), arg(&fleet)],
        vec![arg(&fleet), arg(&first)],
    ] {
        for command in [&["report", "-o", "json"][..], &["issues", "-o", "json"]] {
            let mut args = command.to_vec();
            args.extend(&paths);
            let (code, out, stderr) = run_json(&args);
            assert_eq!(code, 0, "{paths:?}: {stderr}");
            let inputs = &out["inputs"];
            assert_eq!(inputs["files"], names.len(), "{paths:?}");
            assert_eq!(inputs["machines"], once["inputs"]["machines"], "{paths:?}");
            let twice = inputs["skipped"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|s| {
                    s["reason"]
                        .as_str()
                        .unwrap()
                        .starts_with("the same file as ")
                })
                .count();
            // Both links, and every file of a directory named a second time.
            let expected = 2 + if paths.len() == 2 && paths[1] == paths[0] {
                names.len() + 2
            } else if paths.len() == 2 {
                1
            } else {
                0
            };
            assert_eq!(twice, expected, "{paths:?}: {stderr}");
        }
        let mut args = vec!["report", "-o", "json"];
        args.extend(&paths);
        let (_, out, _) = run_json(&args);
        assert_eq!(out["unexpected"], once["unexpected"], "{paths:?}");
    }
    // `replay` streams, so it learns every identity before it reads: the same machines.
    let output = fsmlog()
        .args(["replay", "-o", "ndjson", arg(&fleet), arg(&first)])
        .output()
        .unwrap();
    let alone = fsmlog()
        .args(["replay", "-o", "ndjson", arg(&fleet)])
        .output()
        .unwrap();
    assert_eq!(output.stdout, alone.stdout);
    assert!(String::from_utf8_lossy(&output.stderr).contains("the same file as"));
}

// Standard input named twice beside a directory (found by review): the pass that learns the
// directory's files' identities read both `-` at once, and each got part of the stream. What
// is known to be a repeat before reading is never read a second time.
#[test]
fn standard_input_named_twice_beside_a_directory_is_read_once() {
    let list = std::fs::read(testdata(LIST)).unwrap();
    let dir = testdata(TEXT_DIR);
    let text = report_of(&[arg(&testdata(LIST)), arg(&dir)]);
    for _ in 0..6 {
        for args in [
            vec!["report", "-o", "json", "-", arg(&dir), "-"],
            vec!["report", "-o", "json", "-", "/dev/stdin", arg(&dir)],
        ] {
            let (code, out, stderr) = run_json_stdin(&args, &list);
            assert_eq!(code, 0, "{args:?}: {stderr}");
            assert_eq!(out["inputs"]["errors"], serde_json::json!([]), "{args:?}");
            assert_eq!(out["inputs"]["machines"], text["inputs"]["machines"]);
            assert_eq!(
                out["inputs"]["events"], text["inputs"]["events"],
                "{args:?}"
            );
            assert!(stderr.contains("the same file as -"), "{stderr}");
        }
    }
}

#[test]
fn a_symlink_to_itself_is_named_a_loop() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("self");
    std::os::unix::fs::symlink(&link, &link).unwrap();
    let (_, _, stderr) = stdout_of(&["report", arg(&link)]);
    assert!(stderr.contains("self: symlink loop"), "{stderr}");
}
