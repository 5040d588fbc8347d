//! A real Prometheus (Debian's `prometheus`, where installed) scraping `fsmlog watch` every
//! second while the stand-in's fleet moves: the series are there through its query API, and
//! the counter of collected events rises.

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::running::get;
use super::{hmac, ready};
use crate::collect::standin::{Standin, simulated_fleet};
use crate::{have, on_path};

/// Prometheus, killed when dropped.
struct Prometheus {
    child: Child,
    addr: String,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// Prometheus on 127.0.0.1, scraping `target` every second, its data under `dir`.
fn prometheus(dir: &Path, target: &str) -> Prometheus {
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: fsmlog\n    static_configs:\n      - targets: ['{target}']\n"
        ),
    )
    .unwrap();
    let addr = format!("127.0.0.1:{}", free_port());
    let child = std::process::Command::new("prometheus")
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("data").display()
        ))
        .arg(format!("--web.listen-address={addr}"))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("prometheus.log")).unwrap())
        .spawn()
        .unwrap();
    Prometheus { child, addr }
}

/// A query's URL-encoded form.
fn encoded(query: &str) -> String {
    query
        .bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'-' | b'.' => (b as char).to_string(),
            other => format!("%{other:02X}"),
        })
        .collect()
}

/// The values of an instant query's result, or none while Prometheus is not up yet.
fn query(prometheus: &Prometheus, expr: &str) -> Vec<f64> {
    let path = format!("/api/v1/query?query={}", encoded(expr));
    let Ok(stream) = std::net::TcpStream::connect(&prometheus.addr) else {
        return Vec::new();
    };
    drop(stream);
    let (status, _, body) = get(&prometheus.addr, &path);
    if status != 200 {
        return Vec::new();
    }
    let json: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
    json["data"]["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["value"][1].as_str().unwrap().parse().unwrap())
        .collect()
}

#[test]
fn a_real_prometheus_sees_the_series_and_the_counter_rise() {
    if !have("prometheus", on_path("prometheus")) {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let standin = Standin::start(simulated_fleet(6, 40), 10, hmac());
    let mut watch = ready(home.path(), &standin, "500ms", &[]);
    let prometheus = prometheus(home.path(), &watch.addr);
    let wait = |expr: &str, done: &dyn Fn(&[f64]) -> bool| -> Vec<f64> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let values = query(&prometheus, expr);
            if done(&values) {
                return values;
            }
            assert!(
                Instant::now() < deadline,
                "{expr}: {values:?}\n{}",
                std::fs::read_to_string(home.path().join("prometheus.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    };
    wait("up{job=\"fsmlog\"}", &|v| v == [1.0]);
    let before = wait("fsmlog_collected_events_total", &|v| v.len() == 1)[0];
    for series in [
        "count(fsmlog_unexpected_transitions_total)",
        "count(fsmlog_unexpected_verdict_info)",
        "fsmlog_machines",
        "count(fsmlog_machine_issues)",
        "fsmlog_polls_total{result=\"ok\"}",
        "fsmlog_last_good_poll_timestamp_seconds",
        "fsmlog_build_info",
    ] {
        wait(series, &|v| v.len() == 1 && v[0] > 0.0);
    }
    // The fleet moves on: the counter rises in Prometheus.
    for shown in [20, 30, 40] {
        standin.show(shown);
        std::thread::sleep(Duration::from_secs(1));
    }
    wait("fsmlog_collected_events_total", &|v| {
        v.len() == 1 && v[0] > before
    });
    wait("increase(fsmlog_collected_events_total[1m])", &|v| {
        v.len() == 1 && v[0] > 0.0
    });
    assert_eq!(watch.signal("-TERM").0, Some(0));
}
