//! `fsmlog collect` against the metal-api stand-in: the history it writes answers as the whole
//! stored stream, each event once, across polls, restarts and torn writes; gaps are marked
//! when polled rarely; faults write nothing and exit 2; secrets reach no file and no message.

mod alive;
pub(crate) mod standin;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};
use standin::{Auth, Fault, Machine, Standin, WINDOW, simulated_fleet, whole_stream};

use crate::fsmlog;

const KEY: &str = "hmac-key-that-must-stay-secret";

fn hmac() -> Auth {
    Auth::Hmac {
        auth_type: "Metal-Admin".to_string(),
        key: KEY.to_string(),
    }
}

/// `fsmlog ARGS…` in `home` (also its HOME), with no METALCTL_ variable or proxy but `vars`.
fn run_in(home: &Path, args: &[&str], vars: &[(&str, &str)]) -> Output {
    let mut cmd = fsmlog();
    cmd.current_dir(home).env("HOME", home).args(args);
    for (name, _) in std::env::vars() {
        if name.starts_with("METALCTL_") || name.to_ascii_lowercase().ends_with("_proxy") {
            cmd.env_remove(name);
        }
    }
    for (name, value) in vars {
        cmd.env(name, value);
    }
    cmd.output().unwrap()
}

fn collect_once(standin: &Standin, home: &Path, into: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "collect",
        "--once",
        "--api-url",
        &standin.url,
        "--into",
        into.to_str().unwrap(),
    ];
    args.extend(extra);
    run_in(home, &args, &[("METALCTL_HMAC", KEY)])
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Every line of the history's event files, by day.
fn history_lines(into: &Path) -> Vec<Value> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(into.join("events"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
        .iter()
        .flat_map(|f| {
            std::fs::read_to_string(f)
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect::<Vec<Value>>()
        })
        .collect()
}

/// Each machine's events in the history, in order, as (time, event, message).
fn events_of(lines: &[Value], id: &str) -> Vec<(String, String, String)> {
    lines
        .iter()
        .filter(|l| l["machine"] == id && l.get("gap").is_none())
        .map(|l| {
            (
                l["time"].as_str().unwrap().to_string(),
                l["event"].as_str().unwrap().to_string(),
                l["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn truth_of(m: &Machine) -> Vec<(String, String, String)> {
    m.stored
        .iter()
        .map(|e| (e.time.clone(), e.event.clone(), e.message.clone()))
        .collect()
}

/// `report -o json` of a path, without what says how it was read (files, formats, merges).
fn report(home: &Path, path: &Path) -> Value {
    let out = run_in(home, &["report", "-o", "json", path.to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let mut json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let inputs = json["inputs"].as_object_mut().unwrap();
    for key in ["files", "formats", "merged_machines"] {
        inputs.remove(key);
    }
    json
}

/// Polled every `step` events from where the fleet stands, until every event is shown.
fn poll_through(
    standin: &Standin,
    fleet: &[Machine],
    home: &Path,
    into: &Path,
    from: usize,
    step: usize,
) {
    let stored = fleet.iter().map(|m| m.stored.len()).max().unwrap();
    let mut shown = from + step;
    loop {
        standin.show(shown);
        let out = collect_once(standin, home, into, &[]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        if shown >= stored {
            return;
        }
        shown = (shown + step).min(stored);
    }
}

#[test]
fn polled_often_the_history_is_the_whole_stream_once() {
    let home = tempfile::tempdir().unwrap();
    let into = home.path().join("history");
    let fleet = simulated_fleet(12, 60);
    let standin = Standin::start(fleet.clone(), 0, hmac());
    poll_through(&standin, &fleet, home.path(), &into, 0, 7);
    let lines = history_lines(&into);
    for m in &fleet {
        assert_eq!(events_of(&lines, &m.id), truth_of(m), "machine {}", m.id);
    }
    assert!(lines.iter().all(|l| l.get("gap").is_none()), "no gap");
    let whole = home.path().join("whole.ndjson");
    std::fs::write(&whole, whole_stream(&fleet)).unwrap();
    let mut from_history = report(home.path(), &into);
    // Beside the events, machines.json says where each machine is: the one thing the whole
    // stream cannot say.
    let pairs = from_history["unexpected"].as_array_mut().unwrap();
    assert!(!pairs.is_empty());
    for pair in pairs {
        let place = pair.as_object_mut().unwrap().remove("where").unwrap();
        let machines: u64 = place["partition"]
            .as_object()
            .unwrap()
            .values()
            .map(|n| n.as_u64().unwrap())
            .sum();
        assert_eq!(machines, pair["machines"].as_u64().unwrap(), "{pair}");
    }
    assert_eq!(from_history, report(home.path(), &whole));
    assert!(
        from_history["inputs"]["events"].as_u64().unwrap() > 12 * 50,
        "{from_history}"
    );
    // The twin events of one second are each kept.
    let twin = events_of(&lines, "twin-pxe");
    assert_eq!(twin[0], twin[1]);
    // Every request was signed and let in.
    assert!(
        standin
            .requests()
            .iter()
            .all(|(_, body, ok)| *ok && body == "{}")
    );
}

#[test]
fn a_restart_after_a_torn_write_loses_and_doubles_nothing() {
    let home = tempfile::tempdir().unwrap();
    let into = home.path().join("history");
    let fleet = simulated_fleet(6, 40);
    let standin = Standin::start(fleet.clone(), 10, hmac());
    assert!(
        collect_once(&standin, home.path(), &into, &[])
            .status
            .success()
    );
    standin.show(18);
    assert!(
        collect_once(&standin, home.path(), &into, &[])
            .status
            .success()
    );
    // A kill in the middle of the next poll's write: its last line half written, and
    // machines.json never replaced.
    let machines = std::fs::read(into.join("machines.json")).unwrap();
    standin.show(25);
    assert!(
        collect_once(&standin, home.path(), &into, &[])
            .status
            .success()
    );
    std::fs::write(into.join("machines.json"), machines).unwrap();
    let mut days: Vec<PathBuf> = std::fs::read_dir(into.join("events"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    days.sort();
    let last = days.last().unwrap();
    let text = std::fs::read(last).unwrap();
    std::fs::write(last, &text[..text.len() - 25]).unwrap();
    // Run again with the same window: the torn line is repaired, said, and collected again.
    let out = collect_once(&standin, home.path(), &into, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("torn last line"), "{}", stderr(&out));
    poll_through(&standin, &fleet, home.path(), &into, 25, 12);
    let lines = history_lines(&into);
    for m in &fleet {
        assert_eq!(events_of(&lines, &m.id), truth_of(m), "machine {}", m.id);
    }
}

#[test]
fn polled_rarely_gaps_are_marked_before_the_window_that_follows_them() {
    let home = tempfile::tempdir().unwrap();
    let into = home.path().join("history");
    let fleet = simulated_fleet(4, 70);
    let standin = Standin::start(fleet.clone(), 0, hmac());
    // The first poll shows 25 events (the first 5 are never seen: the start of the history,
    // no gap); each next one 30 more, 10 more than a window holds.
    let mut shown = 25;
    let mut polls = 0;
    while shown <= 70 {
        standin.show(shown);
        let out = collect_once(&standin, home.path(), &into, &[]);
        assert!(out.status.success(), "{}", stderr(&out));
        if polls > 0 {
            assert!(stderr(&out).contains("poll more often"), "{}", stderr(&out));
        }
        polls += 1;
        shown += 30;
    }
    let lines = history_lines(&into);
    for m in &fleet {
        let mine: Vec<&Value> = lines
            .iter()
            .filter(|l| l["machine"] == m.id.as_str())
            .collect();
        let gaps: Vec<usize> = (0..mine.len())
            .filter(|&i| mine[i]["gap"] == true)
            .collect();
        assert_eq!(gaps.len(), 1, "one gap for {}: {mine:?}", m.id);
        // The marker's time is the oldest event of the window after it, the 35th stored.
        let gap = gaps[0];
        assert_eq!(mine[gap]["time"], mine[gap + 1]["time"]);
        assert_eq!(
            mine[gap + 1]["time"].as_str().unwrap(),
            m.stored[55 - WINDOW].time
        );
        // Before it the first window (events 5..25), after it 35..55: nothing invented.
        let truth = truth_of(m);
        let events = events_of(&lines, &m.id);
        assert_eq!(events[..20], truth[5..25]);
        assert_eq!(events[20..], truth[35..55]);
    }
}

/// A gapped history reports what a hand-made stream of the same kept events and markers, with
/// the same machines.json, does:
/// each machine's events 5..25, a seam, 35..55; never the whole stream's pairs across the lost
/// ten, and the gaps counted.
#[test]
fn a_gapped_history_is_reported_with_seams() {
    let home = tempfile::tempdir().unwrap();
    let into = home.path().join("history");
    let fleet = simulated_fleet(4, 70);
    let standin = Standin::start(fleet.clone(), 25, hmac());
    for shown in [25, 55] {
        standin.show(shown);
        let out = collect_once(&standin, home.path(), &into, &[]);
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let mut kept = String::new();
    for m in &fleet {
        let line = |e: &standin::Stored| {
            json!({"machine": m.id, "time": e.time, "event": e.event, "message": e.message})
                .to_string()
                + "\n"
        };
        m.stored[5..25].iter().for_each(|e| kept.push_str(&line(e)));
        kept.push_str(
            &(json!({"machine": m.id, "time": m.stored[35].time, "gap": true}).to_string() + "\n"),
        );
        m.stored[35..55]
            .iter()
            .for_each(|e| kept.push_str(&line(e)));
    }
    // Beside it what the polls showed of each machine: a last error event lost in the gap is
    // still judged, as an export's outside its log.
    let by_hand = home.path().join("by-hand");
    std::fs::create_dir(&by_hand).unwrap();
    std::fs::write(by_hand.join("kept.ndjson"), kept).unwrap();
    std::fs::copy(into.join("machines.json"), by_hand.join("machines.json")).unwrap();
    let from_history = report(home.path(), &into);
    let want = report(home.path(), &by_hand);
    assert_eq!(from_history, want);
    let machines = fleet.len() as u64;
    assert_eq!(from_history["inputs"]["gaps"], machines);
    assert_eq!(from_history["inputs"]["gap_machines"], machines);
    // And said on the summary line.
    let out = run_in(home.path(), &["report", into.to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(
        table.contains(&format!("{machines} gaps on {machines} machines")),
        "{table}"
    );
}

#[test]
fn faults_exit_2_and_write_nothing() {
    let home = tempfile::tempdir().unwrap();
    let standin = Standin::start(simulated_fleet(2, 10), 10, hmac());
    let cases: [(Fault, &[&str], &str); 6] = [
        (Fault::Status(500), &[], "500"),
        (Fault::Status(503), &[], "503"),
        (
            Fault::Slow(std::time::Duration::from_secs(3)),
            &["--timeout", "1s"],
            "cannot be read",
        ),
        (Fault::HalfBody, &[], "cut short"),
        (Fault::NotJson, &[], "not a JSON list of machines"),
        (Fault::Close, &[], "cannot be read"),
    ];
    for (i, (fault, extra, said)) in cases.iter().enumerate() {
        let into = home.path().join(format!("h{i}"));
        standin.fail(&[*fault]);
        let out = collect_once(&standin, home.path(), &into, extra);
        assert_eq!(out.status.code(), Some(2), "{fault:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(said), "{fault:?}: {}", stderr(&out));
        assert!(!into.exists(), "{fault:?}: nothing written");
    }
}

#[test]
fn a_wrong_key_a_wrong_type_and_a_token() {
    let home = tempfile::tempdir().unwrap();
    let into = home.path().join("history");
    let standin = Standin::start(simulated_fleet(2, 10), 10, hmac());
    let url = standin.url.clone();
    let base = [
        "collect",
        "--once",
        "--api-url",
        &url,
        "--into",
        into.to_str().unwrap(),
    ];
    let wrong_key = run_in(home.path(), &base, &[("METALCTL_HMAC", "not-the-key")]);
    let wrong_type = run_in(
        home.path(),
        &base,
        &[
            ("METALCTL_HMAC", KEY),
            ("METALCTL_HMAC_AUTH_TYPE", "Metal-View"),
        ],
    );
    for out in [&wrong_key, &wrong_type] {
        assert_eq!(out.status.code(), Some(2), "{}", stderr(out));
        assert!(stderr(out).contains("401"), "{}", stderr(out));
        assert!(!stderr(out).contains("not-the-key") && !stderr(out).contains(KEY));
    }
    assert!(!into.exists());
    let tokened = Standin::start(simulated_fleet(2, 10), 10, Auth::Token("tok-123".into()));
    let url = tokened.url.clone();
    let base = [
        "collect",
        "--once",
        "--api-url",
        &url,
        "--into",
        into.to_str().unwrap(),
    ];
    let out = run_in(home.path(), &base, &[("METALCTL_API_TOKEN", "tok-123")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = run_in(home.path(), &base, &[("METALCTL_API_TOKEN", "tok-wrong")]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(!stderr(&out).contains("tok-wrong"));
}

#[test]
fn a_metalctl_context_and_one_partition() {
    let home = tempfile::tempdir().unwrap();
    let into = home.path().join("history");
    let fleet = simulated_fleet(4, 10);
    let standin = Standin::start(fleet.clone(), 10, hmac());
    let config = format!(
        "current: other\ncontexts:\n  other:\n    url: http://127.0.0.1:1\n  lab:\n    url: {}/\n    hmac: {KEY}\n",
        standin.url
    );
    std::fs::create_dir(home.path().join(".metalctl")).unwrap();
    std::fs::write(home.path().join(".metalctl/config.yaml"), config).unwrap();
    let args = [
        "collect",
        "--once",
        "--context",
        "lab",
        "--partition",
        "ams-ix02",
        "--into",
        into.to_str().unwrap(),
    ];
    let out = run_in(home.path(), &args, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = history_lines(&into);
    for m in &fleet {
        let expected = if m.partition == "ams-ix02" { 10 } else { 0 };
        assert_eq!(events_of(&lines, &m.id).len(), expected, "{}", m.id);
    }
    assert_eq!(standin.requests()[0].1, r#"{"partition_id":"ams-ix02"}"#);
}

#[test]
fn no_secret_reaches_the_history_or_stderr() {
    let home = tempfile::tempdir().unwrap();
    let into = home.path().join("history");
    let standin = Standin::start(simulated_fleet(3, 30), 30, hmac());
    let out = collect_once(&standin, home.path(), &into, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let mut written = String::new();
    for entry in walk(&into) {
        written.push_str(&std::fs::read_to_string(entry).unwrap());
    }
    written.push_str(&stderr(&out));
    for secret in [
        KEY,
        "I2Nsb3VkLWNvbmZpZyBzZWNyZXQ=",
        "SECRETKEY",
        "ipmi-admin-user",
        "ipmi-secret-password",
        "cpu_cores",
    ] {
        assert!(!written.contains(secret), "{secret} was written");
    }
    let machines: Value =
        serde_json::from_str(&std::fs::read_to_string(into.join("machines.json")).unwrap())
            .unwrap();
    let first = &machines[0];
    assert_eq!(first["allocation"]["project"], "p-1");
    assert_eq!(first["ipmi"]["fru"]["board_mfg"], "Supermicro");
    assert_eq!(first["events"]["log"], Value::Array(vec![]));
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// The loop: failed polls are said and retried, never fatal; SIGTERM and SIGINT end it after
/// the write, with exit 0.
#[test]
fn the_loop_retries_faults_and_ends_cleanly_on_a_signal() {
    for signal in ["-TERM", "-INT"] {
        let home = tempfile::tempdir().unwrap();
        let into = home.path().join("history");
        // Fewer events than a window: the jump from 5 shown to all of them leaves no gap.
        let fleet = simulated_fleet(3, 15);
        let total: usize = fleet.iter().map(|m| m.stored.len()).sum();
        let standin = Standin::start(fleet.clone(), 5, hmac());
        standin.fail(&[Fault::Status(500), Fault::NotJson]);
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("fsmlog"))
            .args([
                "collect",
                "--interval",
                "300ms",
                "--api-url",
                &standin.url,
                "--into",
            ])
            .arg(&into)
            .current_dir(home.path())
            .env("HOME", home.path())
            .env("METALCTL_HMAC", KEY)
            .env_remove("http_proxy")
            .env_remove("HTTP_PROXY")
            .env_remove("ALL_PROXY")
            .env_remove("all_proxy")
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        // Two failures, then polls that write; the fleet moves on meanwhile.
        let mut wait_for = |done: &dyn Fn() -> bool, what: &str| {
            while !done() {
                if std::time::Instant::now() > deadline {
                    let _ = child.kill();
                    panic!("{what}");
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
        };
        wait_for(&|| into.join("machines.json").exists(), "nothing written");
        standin.show(100);
        wait_for(
            &|| into.join("events").exists() && history_lines(&into).len() >= total,
            "the loop stopped polling",
        );
        let killed = std::process::Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let out = child.wait_with_output().unwrap();
        let said = stderr(&out);
        assert_eq!(out.status.code(), Some(0), "{signal}: {said}");
        assert!(said.contains("the poll failed"), "{said}");
        assert!(said.contains("trying again in"), "{said}");
        assert!(said.contains("collect: stopped"), "{said}");
        assert!(!said.contains(KEY));
        let lines = history_lines(&into);
        for m in &fleet {
            assert_eq!(events_of(&lines, &m.id), truth_of(m), "machine {}", m.id);
        }
    }
}

/// TLS is never skipped: https to a server that speaks no TLS, or a CA that cannot be read,
/// exits 2 with nothing written.
#[test]
fn tls_failures_exit_2() {
    let home = tempfile::tempdir().unwrap();
    let into = home.path().join("history");
    let standin = Standin::start(simulated_fleet(1, 5), 5, hmac());
    let https = standin.url.replace("http://", "https://");
    let args = [
        "collect",
        "--once",
        "--api-url",
        &https,
        "--into",
        into.to_str().unwrap(),
    ];
    let out = run_in(home.path(), &args, &[("METALCTL_HMAC", KEY)]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("cannot be read"), "{}", stderr(&out));
    assert!(!into.exists());
    let config = home.path().join("ctx.yaml");
    // base64 of "hello": no PEM certificate in it.
    let ca = "aGVsbG8K";
    std::fs::write(
        &config,
        format!(
            "current: a\ncontexts:\n  a:\n    url: {https}\n    certificate_authority_data: {ca}\n"
        ),
    )
    .unwrap();
    let args = [
        "collect",
        "--once",
        "-c",
        config.to_str().unwrap(),
        "--into",
        into.to_str().unwrap(),
    ];
    let out = run_in(home.path(), &args, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("certificate"), "{}", stderr(&out));
    assert!(!into.exists());
}
