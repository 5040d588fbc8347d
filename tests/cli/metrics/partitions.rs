//! Files of several cuts in one textfile directory, read by a real node_exporter: each cut's
//! series are its own (a cut's label, `--label`), so node_exporter refuses none of them.

use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use super::*;

/// node_exporter, stopped when dropped.
struct NodeExporter {
    child: std::process::Child,
    port: u16,
}

impl Drop for NodeExporter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl NodeExporter {
    /// Starts node_exporter with only its textfile collector, on a free loopback port.
    fn start(textfiles: &Path) -> Option<NodeExporter> {
        let program = ["prometheus-node-exporter", "node_exporter"]
            .into_iter()
            .find(|p| on_path(p));
        if !have(
            "node_exporter (Debian's prometheus-node-exporter)",
            program.is_some(),
        ) {
            return None;
        }
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Process::new(program.unwrap())
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .arg("--collector.disable-defaults")
            .arg("--collector.textfile")
            .arg(format!(
                "--collector.textfile.directory={}",
                textfiles.display()
            ))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        Some(NodeExporter { child, port })
    }

    /// One scrape of `/metrics`, once the server answers (within ten seconds).
    fn scrape(&self) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.port)) {
                stream
                    .set_read_timeout(Some(Duration::from_secs(10)))
                    .unwrap();
                stream
                    .write_all(b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
                    .unwrap();
                let mut response = String::new();
                stream.read_to_string(&mut response).unwrap();
                return response;
            }
            assert!(Instant::now() < deadline, "node_exporter did not start");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

#[test]
fn files_of_two_partitions_share_node_exporters_textfile_directory() {
    let dir = tempfile::tempdir().unwrap();
    // The bundled fleet, and a copy of it in a second partition under other ids.
    let list: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(testdata(LIST)).unwrap()).unwrap();
    let mut both = list.clone();
    for m in &list {
        let mut copy = m.clone();
        copy["id"] = Value::String(format!("{}-b", m["id"].as_str().unwrap()));
        copy["partition"]["id"] = Value::String("fra-equ02".into());
        both.push(copy);
    }
    let fleet = write(
        dir.path(),
        "fleet.json",
        &serde_json::to_string_pretty(&both).unwrap(),
    );
    let textfiles = dir.path().join("textfiles");
    std::fs::create_dir(&textfiles).unwrap();
    for partition in ["fra-equ01", "fra-equ02"] {
        for command in ["report", "issues"] {
            let out = textfiles.join(format!("fsmlog-{command}-{partition}.prom"));
            let (code, _, stderr) = stdout_of(&[
                command,
                "-o",
                "openmetrics",
                "--partition",
                partition,
                "--label",
                "cluster=prod",
                "--out",
                arg(&out),
                arg(&fleet),
            ]);
            assert_eq!(code, 0, "{stderr}");
        }
    }
    // Each file's series carry its cut and the label asked for; a machine's own partition
    // stays its own in the allocation family.
    let text = std::fs::read_to_string(textfiles.join("fsmlog-report-fra-equ02.prom")).unwrap();
    let (samples, _) = parse(&text);
    assert_eq!(one(&samples, "fsmlog_machines"), 12.0);
    for s in &samples {
        assert_eq!(label(s, "partition"), "fra-equ02", "{s:?}");
        assert_eq!(label(s, "cluster"), "prod", "{s:?}");
    }
    let Some(exporter) = NodeExporter::start(&textfiles) else {
        return;
    };
    let scraped = exporter.scrape();
    assert!(scraped.starts_with("HTTP/1.0 200") || scraped.starts_with("HTTP/1.1 200"));
    assert!(
        scraped.contains("node_textfile_scrape_error 0"),
        "{scraped}"
    );
    for partition in ["fra-equ01", "fra-equ02"] {
        assert!(
            scraped.contains(&format!(
                "fsmlog_machines{{cluster=\"prod\",partition=\"{partition}\"}} 12"
            )),
            "{partition}: {scraped}"
        );
        let issues_info = format!(
            "metal_machine_issues_info{{cluster=\"prod\",description=\"the machine is not sending LLDP alive messages anymore\",issueid=\"liveliness-unknown\",partition=\"{partition}\""
        );
        assert!(scraped.contains(&issues_info), "{partition}: {scraped}");
    }
    drop(exporter);
}

#[test]
fn a_label_that_is_no_prometheus_name_is_refused() {
    let fleet = testdata(LIST);
    for bad in ["1st=a", "__name=a", "a-b=c", "nolabel"] {
        let (code, _, stderr) =
            stdout_of(&["report", "-o", "openmetrics", "--label", bad, arg(&fleet)]);
        assert_eq!(code, 2, "{bad}: {stderr}");
        assert!(stderr.contains("--label"), "{stderr}");
    }
    // A hostile value is escaped as every label value is.
    let (code, text, _) = stdout_of(&[
        "report",
        "-o",
        "openmetrics",
        "--label",
        "note=a\"b\\c\u{1b}",
        arg(&fleet),
    ]);
    assert_eq!(code, 0);
    assert!(text.contains(r#"note="a\"b\\c\\u{1b}""#), "{text}");
    promtool_accepts(&text, "a hostile --label");
}
