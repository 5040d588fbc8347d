//! A running `fsmlog watch` for the tests: started on a free port (read from its first log
//! line), its log lines gathered as they come, asked over plain HTTP, and killed when dropped.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The process and what it logged so far.
pub struct Watch {
    pub child: Child,
    pub addr: String,
    pub lines: Arc<Mutex<Vec<String>>>,
}

/// `fsmlog watch --listen 127.0.0.1:0 ARGS…` in `home`, with only `vars` of metalctl's
/// variables; waits for the line that names the address.
pub fn start(home: &Path, args: &[&str], vars: &[(&str, &str)]) -> Watch {
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("fsmlog"));
    cmd.arg("watch")
        .args(["--listen", "127.0.0.1:0"])
        .args(args)
        .current_dir(home)
        .env("HOME", home)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (name, _) in std::env::vars() {
        if name.starts_with("METALCTL_") || name.to_ascii_lowercase().ends_with("_proxy") {
            cmd.env_remove(name);
        }
    }
    for (name, value) in vars {
        cmd.env(name, value);
    }
    let mut child = cmd.spawn().unwrap();
    let stderr = child.stderr.take().unwrap();
    let lines = Arc::new(Mutex::new(Vec::new()));
    {
        let lines = Arc::clone(&lines);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { return };
                lines.lock().unwrap().push(line);
            }
        });
    }
    let mut watch = Watch {
        child,
        addr: String::new(),
        lines,
    };
    watch.wait_for("the address it serves on", Duration::from_secs(30), |w| {
        w.log().iter().any(|l| l.contains("serving on http://"))
    });
    let log = watch.log();
    let line = log
        .iter()
        .find(|l| l.contains("serving on http://"))
        .unwrap();
    let at = line.find("http://").unwrap() + "http://".len();
    watch.addr = line[at..]
        .split(|c: char| c == '"' || c.is_whitespace())
        .next()
        .unwrap()
        .to_string();
    watch
}

impl Watch {
    /// Every log line so far.
    pub fn log(&self) -> Vec<String> {
        self.lines.lock().unwrap().clone()
    }

    /// Waits until `done` holds, failing with `what` (and the log) after `limit`.
    pub fn wait_for(&mut self, what: &str, limit: Duration, done: impl Fn(&Watch) -> bool) {
        let deadline = Instant::now() + limit;
        while !done(self) {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "watch ended ({status}) before {what}:\n{}",
                    self.log().join("\n")
                );
            }
            if Instant::now() > deadline {
                panic!("no {what} within {limit:?}:\n{}", self.log().join("\n"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// `GET path`: (status, head, body).
    pub fn get(&self, path: &str) -> (u16, String, String) {
        get(&self.addr, path)
    }

    /// `/metrics`, read.
    pub fn metrics(&self) -> Metrics {
        let (status, _, body) = self.get("/metrics");
        assert_eq!(status, 200, "{body}");
        Metrics::read(&body)
    }

    /// Sends SIGTERM (or another signal) and waits: (exit code, how long it took).
    pub fn signal(&mut self, signal: &str) -> (Option<i32>, Duration) {
        let started = Instant::now();
        let sent = std::process::Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        let deadline = started + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return (status.code(), started.elapsed());
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("watch did not end on {signal}:\n{}", self.log().join("\n"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `GET path` from `addr`: (status, head, body).
pub fn get(addr: &str, path: &str) -> (u16, String, String) {
    request(
        addr,
        &format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"),
    )
}

/// Sends `text` to `addr` and reads the answer to its end: (status, head, body).
pub fn request(addr: &str, text: &str) -> (u16, String, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream.write_all(text.as_bytes()).unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status: {answer:?}"));
    (status, head.to_string(), body.to_string())
}

/// A sample's labels.
pub type Labels = BTreeMap<String, String>;

/// An exposition read: each family's samples, and each family's TYPE.
#[derive(Debug, Default)]
pub struct Metrics {
    pub samples: BTreeMap<String, Vec<(Labels, f64)>>,
    pub types: BTreeMap<String, String>,
}

impl Metrics {
    /// Reads the text format (label values with `\\`, `\"` and `\n` escapes).
    pub fn read(text: &str) -> Metrics {
        let mut metrics = Metrics::default();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                let (name, kind) = rest.split_once(' ').unwrap();
                metrics.types.insert(name.to_string(), kind.to_string());
                continue;
            }
            if line.starts_with('#') || line.is_empty() {
                continue;
            }
            let (name, rest) = match line.find('{') {
                Some(at) => (&line[..at], &line[at..]),
                None => line.split_at(line.find(' ').unwrap()),
            };
            let mut labels = Labels::new();
            let mut rest = rest;
            if let Some(inner) = rest.strip_prefix('{') {
                let mut chars = inner.char_indices();
                let mut key = String::new();
                loop {
                    let (i, c) = chars.next().unwrap();
                    match c {
                        '}' => {
                            rest = &inner[i + 1..];
                            break;
                        }
                        ',' => {}
                        '=' => {
                            assert_eq!(chars.next().unwrap().1, '"');
                            let mut value = String::new();
                            loop {
                                match chars.next().unwrap().1 {
                                    '\\' => match chars.next().unwrap().1 {
                                        'n' => value.push('\n'),
                                        other => value.push(other),
                                    },
                                    '"' => break,
                                    other => value.push(other),
                                }
                            }
                            labels.insert(std::mem::take(&mut key), value);
                        }
                        other => key.push(other),
                    }
                }
            }
            let value: f64 = rest.trim().parse().unwrap_or_else(|_| panic!("{line}"));
            metrics
                .samples
                .entry(name.to_string())
                .or_default()
                .push((labels, value));
        }
        metrics
    }

    /// The value of the sample of `name` with exactly these labels.
    pub fn value(&self, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        let want: Labels = labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        self.samples
            .get(name)?
            .iter()
            .find(|(l, _)| *l == want)
            .map(|(_, v)| *v)
    }

    /// A family's samples by (state, event).
    pub fn by_pair(&self, name: &str) -> BTreeMap<(String, String), f64> {
        self.samples
            .get(name)
            .into_iter()
            .flatten()
            .map(|(l, v)| ((l["state"].clone(), l["event"].clone()), *v))
            .collect()
    }
}
