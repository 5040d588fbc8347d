//! `--out`: a file replaced atomically and readable by a collector, links followed, pipes and
//! descriptors written straight, nothing written when nothing was read.
use std::path::Path;
use std::process::Command as Process;

use super::*;

/// Runs `fsmlog COMMAND -o openmetrics --out OUT INPUT`.
fn metrics_out(command: &str, out: &str, input: &str) -> (i32, String, String) {
    stdout_of(&[command, "-o", "openmetrics", "--out", out, input])
}

#[test]
fn nothing_read_writes_no_metrics_and_keeps_the_last_file() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let list = dir.path().join("machines.json");
    std::fs::write(&list, "[]\n").unwrap();
    let file = dir.path().join("fsmlog.prom");
    for command in ["report", "issues"] {
        for input in [&empty, &list] {
            std::fs::write(&file, "last good\n").unwrap();
            let (code, stdout, stderr) = metrics_out(command, arg(&file), arg(input));
            assert_eq!(code, 2, "{command}: {stderr}");
            assert_eq!(stdout, "");
            assert!(
                stderr.contains("no machine was read, so no metrics are written"),
                "{stderr}"
            );
            assert_eq!(std::fs::read_to_string(&file).unwrap(), "last good\n");
            // Asked for, the empty text is written: the families, no samples of machines.
            let (code, text, stderr) =
                stdout_of(&[command, "-o", "openmetrics", "--allow-empty", arg(input)]);
            assert_eq!(code, 0, "{command}: {stderr}");
            assert!(text.ends_with("# EOF\n"), "{text}");
            let (samples, _) = parse(&text);
            assert!(of(&samples, "metal_machine_issues").is_empty());
        }
    }
}

#[test]
fn out_writes_atomically_and_readable() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fsmlog.prom");
    let fleet = testdata("fleet-v0.42.2/list-json");
    for command in ["report", "check", "issues"] {
        let (code, stdout, stderr) = metrics_out(command, arg(&file), arg(&fleet));
        assert!(code == 0 || (command == "check" && code == 1), "{stderr}");
        assert_eq!(stdout, "");
        let written = std::fs::read_to_string(&file).unwrap();
        let (_, direct, _) = stdout_of(&[command, "-o", "openmetrics", arg(&fleet)]);
        assert_eq!(written, direct);
        // Nothing is left beside it.
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["fsmlog.prom"]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o644, "a collector running as another user reads it");
        }
    }
    // Where it cannot be written: exit 2 naming the file, and the old file unchanged.
    let before = std::fs::read_to_string(&file).unwrap();
    let missing = dir.path().join("no-such-dir/fsmlog.prom");
    let (code, _, stderr) = metrics_out("report", arg(&missing), arg(&fleet));
    assert_eq!(code, 2);
    assert!(stderr.contains("no-such-dir/fsmlog.prom"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
}

#[cfg(unix)]
#[test]
fn out_follows_links_and_writes_pipes_straight() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = testdata("fleet-v0.42.2/list-json");
    let (_, expected, _) = stdout_of(&["report", "-o", "openmetrics", arg(&fleet)]);
    // A link to the collector's file stays a link; the file it names is replaced.
    let real = dir.path().join("real.prom");
    std::fs::write(&real, "old\n").unwrap();
    let link = dir.path().join("link.prom");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let (code, _, stderr) = metrics_out("report", arg(&link), arg(&fleet));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read_to_string(&real).unwrap(), expected);
    // A named pipe is written, not replaced by a file.
    let fifo = dir.path().join("fifo");
    assert!(
        Process::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let (code, _, stderr) = metrics_out("report", arg(&fifo), arg(&fleet));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(reader.join().unwrap(), expected);
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    // /dev/stdout is the command's own standard output.
    let (code, stdout, stderr) = metrics_out("report", "/dev/stdout", arg(&fleet));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, expected);
    // /dev/stdout into a file the shell opened for `>>`: what was there stays.
    let log = dir.path().join("app.log");
    std::fs::write(&log, "previous line\n").unwrap();
    let appended = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    let status = Process::new(assert_cmd::cargo::cargo_bin("fsmlog"))
        .args([
            "report",
            "-o",
            "openmetrics",
            "--out",
            "/dev/stdout",
            arg(&fleet),
        ])
        .stdout(appended)
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        format!("previous line\n{expected}")
    );
    // A link to a file not there yet, relative, from another directory: the file is made
    // where the link points, readable by the collector whatever the umask.
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let dangling = sub.join("dangling.prom");
    std::os::unix::fs::symlink("../made.prom", &dangling).unwrap();
    let out = Process::new("sh")
        .arg("-c")
        .arg("umask 077; exec \"$0\" report -o openmetrics --out \"$1\" \"$2\"")
        .arg(assert_cmd::cargo::cargo_bin("fsmlog"))
        .arg(&dangling)
        .arg(&fleet)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let made = dir.path().join("made.prom");
    assert_eq!(std::fs::read_to_string(&made).unwrap(), expected);
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&made).unwrap().permissions().mode() & 0o777,
        0o644
    );
    assert!(
        std::fs::symlink_metadata(&dangling)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // A directory is an error naming it.
    let (code, _, stderr) = metrics_out("report", arg(dir.path()), arg(&fleet));
    assert_eq!(code, 2);
    assert!(
        stderr.contains(&format!("cannot write {}", dir.path().display())),
        "{stderr}"
    );
}

#[test]
fn out_under_dev_is_replaced_atomically_unless_it_names_a_descriptor() {
    let shm = Path::new("/dev/shm");
    if !shm.is_dir() {
        return;
    }
    let fleet = testdata("fleet-v0.42.2/list-json");
    let (_, expected, _) = stdout_of(&["report", "-o", "openmetrics", arg(&fleet)]);
    let dir = tempfile::tempdir_in(shm).unwrap();
    let prom = dir.path().join("x.prom");
    for round in 0..2 {
        let (code, _, err) = stdout_of(&[
            "report",
            "-o",
            "openmetrics",
            "--out",
            arg(&prom),
            arg(&fleet),
        ]);
        assert_eq!(code, 0, "round {round}: {err}");
        assert_eq!(
            std::fs::read_to_string(&prom).unwrap(),
            expected,
            "round {round}"
        );
    }
    // A device is written straight, and /dev/stderr, a descriptor, is appended to.
    let (code, _, err) = stdout_of(&["report", "-o", "csv", "--out", "/dev/null", arg(&fleet)]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = stdout_of(&["report", "-o", "csv", "--out", "/dev/stderr", arg(&fleet)]);
    assert_eq!(code, 0);
    assert!(out.is_empty() && err.starts_with("State,Event,"), "{err}");
}

#[test]
fn out_dash_is_standard_output_for_every_command_that_takes_out() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = testdata("fleet-v0.19.0/list-json");
    let go = write(dir.path(), "events.go", &events_go("metal-api-v0.19.0"));
    let commands: [&[&str]; 6] = [
        &["report", "-o", "csv"],
        &["check", "-o", "json"],
        &["issues", "-o", "openmetrics"],
        &[
            "rules",
            "propose",
            "--rules",
            "metal-api-v0.19.0",
            "-o",
            "json",
        ],
        &[
            "rules",
            "propose",
            "--rules",
            "metal-api-v0.19.0",
            "-o",
            "table",
        ],
        &["rules", "import-go", "--name", "x", arg(&go)],
    ];
    for command in commands {
        let with_input = |extra: &[&'static str]| {
            let mut args: Vec<&str> = command.to_vec();
            args.extend_from_slice(extra);
            if command[0] != "rules" || command[1] == "propose" {
                args.push(arg(&fleet));
            }
            let output = fsmlog()
                .current_dir(dir.path())
                .args(&args)
                .output()
                .unwrap();
            (
                output.status.code().unwrap(),
                String::from_utf8(output.stdout).unwrap(),
            )
        };
        let (code, plain) = with_input(&[]);
        let (dash_code, dashed) = with_input(&["--out", "-"]);
        assert!(!plain.is_empty(), "{command:?}");
        assert_eq!((dash_code, &dashed), (code, &plain), "{command:?}");
        assert!(
            !dir.path().join("-").exists(),
            "{command:?} wrote a file named -"
        );
    }
    // A file named `-` is still written where the path says so.
    let (code, out, err) = stdout_of(&[
        "report",
        "-o",
        "csv",
        "--out",
        arg(&dir.path().join("-")),
        arg(&fleet),
    ]);
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    assert!(
        std::fs::read_to_string(dir.path().join("-"))
            .unwrap()
            .starts_with("State,Event,")
    );
}
