//! `fsmlog watch` against the metal-api stand-in: `/metrics` equals `report -o json` of the
//! history pair by pair, again after a restart; `/readyz` goes 503 → 200; faults leave it
//! serving; slow and malformed clients neither stall a scrape nor knock it over; no secret in
//! a log line or a response; SIGTERM and SIGINT end it with 0 within seconds.

mod hostile;
mod prometheus;
mod running;

use std::io::Write;
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::collect::standin::{Auth, Fault, Standin, simulated_fleet};
use crate::{have, on_path};
use running::{Metrics, Watch, request, start};

const KEY: &str = "hmac-key-that-must-stay-secret";
const TOKEN: &str = "bearer-token-that-must-stay-secret";

fn hmac() -> Auth {
    Auth::Hmac {
        auth_type: "Metal-Admin".to_string(),
        key: KEY.to_string(),
    }
}

/// `fsmlog watch` polling `standin` every `interval` into `home/history`, signed with the
/// tests' key, with `extra` flags.
fn signed(home: &Path, standin: &Standin, interval: &str, extra: &[&str]) -> Watch {
    let into = home.join("history");
    let mut args = vec!["--interval", interval, "--api-url", &standin.url, "--into"];
    args.push(into.to_str().unwrap());
    args.extend_from_slice(extra);
    start(home, &args, &[("METALCTL_HMAC", KEY)])
}

/// [`signed`], once `/readyz` answers 200.
fn ready(home: &Path, standin: &Standin, interval: &str, extra: &[&str]) -> Watch {
    let mut watch = signed(home, standin, interval, extra);
    watch.wait_for("readiness", Duration::from_secs(30), |w| {
        w.get("/readyz").0 == 200
    });
    watch
}

fn ok_polls(watch: &Watch) -> f64 {
    let (status, _, body) = watch.get("/metrics");
    if status != 200 {
        return 0.0;
    }
    Metrics::read(&body)
        .value("fsmlog_polls_total", &[("result", "ok")])
        .unwrap_or(0.0)
}

/// Waits for two more written polls: the newest then began after whatever changed before.
fn two_more_polls(watch: &mut Watch) {
    let seen = ok_polls(watch);
    watch.wait_for("two more polls", Duration::from_secs(30), |w| {
        ok_polls(w) >= seen + 2.0
    });
}

/// `report -o json DIR`.
fn report(home: &Path, into: &Path) -> Value {
    let out = crate::fsmlog()
        .current_dir(home)
        .args(["report", "-o", "json"])
        .arg(into)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Every pair of the report, and every fleet count, as the metrics say them.
fn assert_metrics_are_the_report(metrics: &Metrics, report: &Value) {
    let transitions = metrics.by_pair("fsmlog_unexpected_transitions_total");
    let machines = metrics.by_pair("fsmlog_unexpected_machines");
    let cascades = metrics.by_pair("fsmlog_unexpected_cascades");
    let pairs = report["unexpected"].as_array().unwrap();
    assert!(
        !pairs.is_empty(),
        "the simulated fleet has unexpected pairs"
    );
    assert_eq!(transitions.len(), pairs.len());
    for p in pairs {
        let key = (
            p["state"].as_str().unwrap().to_string(),
            p["event"].as_str().unwrap().to_string(),
        );
        assert_eq!(transitions[&key], p["count"].as_f64().unwrap(), "{key:?}");
        assert_eq!(machines[&key], p["machines"].as_f64().unwrap(), "{key:?}");
        assert_eq!(cascades[&key], p["cascades"].as_f64().unwrap(), "{key:?}");
        let verdict = &p["verdict"];
        if verdict.is_object() {
            let labels = [
                ("state", key.0.as_str()),
                ("event", key.1.as_str()),
                ("kind", verdict["kind"].as_str().unwrap()),
                ("action", verdict["action"].as_str().unwrap()),
                ("component", verdict["component"].as_str().unwrap_or("")),
            ];
            assert_eq!(
                metrics.value("fsmlog_unexpected_verdict_info", &labels),
                Some(1.0),
                "{key:?}"
            );
        }
    }
    assert_eq!(
        metrics.samples["fsmlog_unexpected_verdict_info"].len(),
        pairs.iter().filter(|p| p["verdict"].is_object()).count()
    );
    let inputs = &report["inputs"];
    assert_eq!(
        metrics.value("fsmlog_machines", &[]),
        inputs["machines"].as_f64()
    );
    for (outcome, field) in [
        ("replayed", "replayed"),
        ("rejected", "rejected"),
        ("duplicate", "duplicates"),
    ] {
        assert_eq!(
            metrics.value("fsmlog_events_total", &[("outcome", outcome)]),
            inputs[field].as_f64(),
            "{outcome}"
        );
    }
}

/// Checks an exposition with promtool, where it is installed.
fn promtool_clean(text: &str) {
    if !have("promtool", on_path("promtool")) {
        return;
    }
    let mut child = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "promtool: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_metrics_are_the_report_pair_by_pair_and_again_after_a_restart() {
    let home = tempfile::tempdir().unwrap();
    let into = home.path().join("history");
    let fleet = simulated_fleet(6, 40);
    let total: usize = fleet.iter().map(|m| m.stored.len()).sum();
    let most = fleet.iter().map(|m| m.stored.len()).max().unwrap();
    let standin = Standin::start(fleet, 10, hmac());
    // The first poll hangs a while: alive, not ready.
    standin.fail(&[Fault::Slow(Duration::from_secs(2))]);
    let args = [
        "--interval",
        "300ms",
        "--api-url",
        &standin.url,
        "--into",
        into.to_str().unwrap(),
    ];
    let vars = [("METALCTL_HMAC", KEY)];
    let mut watch = start(home.path(), &args, &vars);
    assert_eq!(watch.get("/healthz").0, 200);
    assert_eq!(watch.get("/readyz").0, 503);
    watch.wait_for("readiness", Duration::from_secs(30), |w| {
        w.get("/readyz").0 == 200
    });
    // The fleet moves on, a window at a time (no gap), until every event is shown.
    for shown in (20..most + 10).step_by(10) {
        standin.show(shown);
        two_more_polls(&mut watch);
    }
    let (_, head, text) = watch.get("/metrics");
    assert!(
        head.contains("Content-Type: text/plain; version=0.0.4"),
        "{head}"
    );
    let metrics = Metrics::read(&text);
    let first = report(home.path(), &into);
    assert_metrics_are_the_report(&metrics, &first);
    assert_eq!(
        metrics.types["fsmlog_unexpected_transitions_total"],
        "counter"
    );
    assert_eq!(
        metrics.value("fsmlog_collected_events_total", &[]),
        Some(total as f64)
    );
    // fsmlog's own issue types for every machine; the exporter's only when asked.
    let issues = &metrics.samples["fsmlog_machine_issues"];
    assert_eq!(issues.len(), 2 * 7, "{issues:?}");
    assert!(!metrics.samples.contains_key("metal_machine_issues"));
    assert_eq!(
        metrics.value(
            "fsmlog_build_info",
            &[("version", env!("CARGO_PKG_VERSION"))]
        ),
        Some(1.0)
    );
    promtool_clean(&text);
    let (_, _, page) = watch.get("/");
    assert!(page.contains("<html"), "{page}");
    // SIGTERM: the poll under way finished, the server closed, exit 0 within seconds.
    let (code, took) = watch.signal("-TERM");
    assert_eq!(code, Some(0), "{}", watch.log().join("\n"));
    assert!(took < Duration::from_secs(5), "{took:?}");
    let log = watch.log();
    for line in &log {
        assert!(!line.contains(KEY), "{line}");
        assert!(line.starts_with("fsmlog: watch: "), "{line}");
    }
    assert!(
        log.iter().any(|l| l.contains(": poll written in ")),
        "{log:?}"
    );
    assert!(!text.contains(KEY) && !page.contains(KEY));
    drop(watch);

    // A restart reads the counters back from the history; nothing new is collected.
    let mut args = args.to_vec();
    args.push("--exporter-issues");
    let mut watch = start(home.path(), &args, &vars);
    watch.wait_for("readiness", Duration::from_secs(30), |w| {
        w.get("/readyz").0 == 200
    });
    let (_, _, text) = watch.get("/metrics");
    let metrics = Metrics::read(&text);
    assert_metrics_are_the_report(&metrics, &first);
    assert_eq!(
        metrics.value("fsmlog_collected_events_total", &[]),
        Some(0.0)
    );
    assert_eq!(metrics.samples["metal_machine_issues_info"].len(), 13);
    assert!(!metrics.samples["metal_machine_issues"].is_empty());
    promtool_clean(&text);
    let (code, took) = watch.signal("-INT");
    assert_eq!(code, Some(0));
    assert!(took < Duration::from_secs(5), "{took:?}");
}

#[test]
fn faults_leave_it_serving_and_are_counted_and_logged_as_json() {
    let home = tempfile::tempdir().unwrap();
    let into = home.path().join("history");
    let standin = Standin::start(simulated_fleet(3, 15), 5, Auth::Token(TOKEN.to_string()));
    standin.fail(&[
        Fault::Status(500),
        Fault::Slow(Duration::from_secs(3)),
        Fault::NotJson,
        Fault::Status(401),
        Fault::HalfBody,
    ]);
    let args = [
        "--interval",
        "300ms",
        "--timeout",
        "1s",
        "--log-format",
        "json",
        "--api-url",
        &standin.url,
        "--into",
        into.to_str().unwrap(),
    ];
    let mut watch = start(home.path(), &args, &[("METALCTL_API_TOKEN", TOKEN)]);
    let mut answers = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(40);
    loop {
        let (status, _, body) = watch.get("/healthz");
        assert_eq!(status, 200, "{body}");
        let (status, _, body) = watch.get("/metrics");
        if status == 200 {
            let m = Metrics::read(&body);
            let errors = m.value("fsmlog_polls_total", &[("result", "error")]);
            let ok = m.value("fsmlog_polls_total", &[("result", "ok")]);
            answers.push(body);
            if errors >= Some(5.0) && ok >= Some(1.0) {
                break;
            }
        }
        assert!(Instant::now() < deadline, "{}", watch.log().join("\n"));
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(watch.get("/readyz").0, 200);
    let log = watch.log();
    let lines: Vec<Value> = log
        .iter()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    for line in &lines {
        for field in ["time", "level", "event", "message"] {
            assert!(line[field].is_string(), "{line}");
        }
    }
    let polls = |result: &str| {
        lines
            .iter()
            .filter(|l| l["event"] == "poll" && l["result"] == result)
            .count()
    };
    assert!(polls("error") >= 5, "{log:?}");
    assert!(polls("ok") >= 1, "{log:?}");
    let errors: Vec<&str> = lines
        .iter()
        .filter(|l| l["result"] == "error")
        .map(|l| l["error"].as_str().unwrap())
        .collect();
    assert!(errors.iter().any(|e| e.contains("500")), "{errors:?}");
    assert!(errors.iter().any(|e| e.contains("401")), "{errors:?}");
    for text in log.iter().chain(&answers) {
        assert!(!text.contains(TOKEN), "{text}");
    }
    assert_eq!(watch.signal("-TERM").0, Some(0));
}

#[test]
fn slow_and_malformed_clients_neither_stall_a_scrape_nor_knock_it_over() {
    let home = tempfile::tempdir().unwrap();
    let standin = Standin::start(simulated_fleet(3, 15), 15, hmac());
    let mut watch = ready(home.path(), &standin, "1s", &[]);
    // More silent connections than the server keeps waiting, a request cut short.
    let silent: Vec<TcpStream> = (0..200)
        .map(|_| TcpStream::connect(&watch.addr).unwrap())
        .collect();
    let mut half = TcpStream::connect(&watch.addr).unwrap();
    half.write_all(b"GET /metr").unwrap();
    // A head far too long: refused (the server may close before all of it is sent).
    let mut huge = TcpStream::connect(&watch.addr).unwrap();
    huge.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let long = format!("GET / HTTP/1.1\r\nX-Long: {}\r\n\r\n", "a".repeat(100_000));
    let _ = huge.write_all(long.as_bytes());
    let mut answer = Vec::new();
    let _ = std::io::Read::read_to_end(&mut huge, &mut answer);
    assert!(
        String::from_utf8_lossy(&answer).starts_with("HTTP/1.1 431"),
        "{:?}",
        String::from_utf8_lossy(&answer)
    );
    let started = Instant::now();
    let (status, _, body) = watch.get("/metrics");
    assert_eq!(status, 200);
    assert!(body.contains("fsmlog_polls_total"));
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    let post = "POST /metrics HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}";
    let (status, head, _) = request(&watch.addr, post);
    assert_eq!(status, 405);
    assert!(head.contains("Allow: GET, HEAD"), "{head}");
    assert_eq!(request(&watch.addr, "\x01\x02 nonsense\r\n\r\n").0, 400);
    let (status, _, body) = request(&watch.addr, "HEAD /metrics HTTP/1.1\r\n\r\n");
    assert_eq!((status, body.as_str()), (200, ""));
    assert_eq!(watch.get("/nothing-here").0, 404);
    assert_eq!(watch.get("/explain?pair=Nowhere/Nothing").0, 400);
    assert_eq!(watch.get("/explain").0, 400);
    // An unexpected pair of the history is explained; one it lacks is not there.
    let metrics = watch.metrics();
    let pairs = metrics.by_pair("fsmlog_unexpected_transitions_total");
    let ((state, event), _) = pairs.iter().next().expect("an unexpected pair");
    let query = format!("{state}/{event}").replace(' ', "%20");
    let (status, head, text) = watch.get(&format!("/explain?pair={query}"));
    assert_eq!(status, 200, "{text}");
    assert!(head.contains("Content-Type: text/html"), "{head}");
    assert!(text.starts_with("<!DOCTYPE html>"), "{text}");
    assert!(
        text.contains(state.as_str()) && text.contains(event.as_str()),
        "{text}"
    );
    // The report's page links each pair to its explanation here, and the link works.
    let (status, _, page) = watch.get("/");
    assert_eq!(status, 200);
    let at = page
        .find("href=\"/explain?")
        .expect("a pair linked to /explain");
    let link = &page[at + 6..];
    let link = link[..link.find('"').unwrap()].replace("&amp;", "&");
    let (status, _, linked) = watch.get(&link);
    assert_eq!(status, 200, "{link}: {linked}");
    assert!(linked.starts_with("<!DOCTYPE html>"), "{link}");
    assert_eq!(watch.get("/explain?pair=Waiting/Waiting").0, 404);
    drop(silent);
    drop(half);
    assert_eq!(watch.get("/healthz").0, 200);
    assert_eq!(watch.signal("-TERM").0, Some(0));
}

#[test]
fn a_signal_during_a_poll_metal_api_does_not_answer_ends_it_within_seconds() {
    let home = tempfile::tempdir().unwrap();
    let into = home.path().join("history");
    let standin = Standin::start(simulated_fleet(2, 10), 10, hmac());
    // The second poll hangs far longer than the docs' few seconds (within --timeout).
    standin.fail(&[Fault::Status(500), Fault::Slow(Duration::from_secs(25))]);
    let mut watch = signed(home.path(), &standin, "200ms", &["--timeout", "60s"]);
    watch.wait_for("the hanging poll", Duration::from_secs(30), |_| {
        standin.requests().len() >= 2
    });
    std::thread::sleep(Duration::from_millis(300));
    let (code, took) = watch.signal("-TERM");
    assert_eq!(code, Some(0), "{}", watch.log().join("\n"));
    assert!(took < Duration::from_secs(5), "{took:?}");
    // Nothing of the unanswered poll was written.
    assert!(!into.join("machines.json").exists());
    let log = watch.log();
    assert!(
        log.iter()
            .any(|l| l.contains("stopped before metal-api answered")),
        "{log:?}"
    );
}

#[test]
fn a_password_in_the_url_is_refused_and_never_repeated() {
    let home = tempfile::tempdir().unwrap();
    let into = home.path().join("history");
    let out = crate::fsmlog()
        .current_dir(home.path())
        .env("HOME", home.path())
        .env("METALCTL_API_TOKEN", TOKEN)
        .args(["watch", "--listen", "127.0.0.1:0", "--api-url"])
        .arg("http://op:pa55word@127.0.0.1:9/metal")
        .arg("--into")
        .arg(&into)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(!stderr.contains("pa55word"), "{stderr}");
    assert!(stderr.contains("holds a user or password"), "{stderr}");
    // Said before it serves or reads anything.
    assert!(!stderr.contains("serving on"), "{stderr}");
    assert!(!into.exists(), "{stderr}");
}
