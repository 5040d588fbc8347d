//! Pictures and time (issue 10): the graph (SVG, DOT, Mermaid) agrees with `report` and has
//! no overlapping labels; windows count exactly what happened in them; trends add up; the
//! HTML page loads in a real browser with every input string as text.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command as Process;

use regex::Regex;
use serde_json::{Value, json};

use super::*;

/// The boxes of the SVG's labels and nodes: x, y, width, height.
fn boxes(svg: &str) -> (Vec<[f64; 4]>, Vec<[f64; 4]>) {
    let rect = Regex::new(
        r#"<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)"([^>]*)/>"#,
    )
    .unwrap();
    let mut labels = Vec::new();
    let mut nodes = Vec::new();
    for c in rect.captures_iter(svg) {
        let b = [1, 2, 3, 4].map(|i| c[i].parse::<f64>().unwrap());
        if c[5].contains("rx=\"8\"") {
            nodes.push(b);
        } else if c[5].contains("fill-opacity") {
            labels.push(b);
        }
    }
    (labels, nodes)
}

fn overlap(a: &[f64; 4], b: &[f64; 4]) -> bool {
    a[0] < b[0] + b[2] && b[0] < a[0] + a[2] && a[1] < b[1] + b[3] && b[1] < a[1] + a[3]
}

fn graph(args: &[&str]) -> String {
    let mut all = vec!["graph"];
    all.extend_from_slice(args);
    let (code, out, stderr) = stdout_of(&all);
    assert_eq!(code, 0, "{stderr}");
    out
}

/// A noisy fleet: 200 machines that mostly provision properly, and send a random event one
/// time in twenty-five (seeded, so the picture is the same every run).
fn noisy_fleet(dir: &Path) -> PathBuf {
    const EVENTS: [&str; 11] = [
        "PXE Booting",
        "Preparing",
        "Registering",
        "Waiting",
        "Installing",
        "Booting New Kernel",
        "Phoned Home",
        "Planned Reboot",
        "Machine Reclaim",
        "Crashed",
        "Alive",
    ];
    let mut state: u64 = 7;
    let mut next = move |n: u64| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) % n
    };
    let mut out = String::new();
    for m in 0..200 {
        let mut t = 1_700_000_000 + m * 1000;
        for step in 0..30u64 {
            let event = if next(25) == 0 {
                EVENTS[next(11) as usize]
            } else {
                EVENTS[(step % 9) as usize]
            };
            t += 60 + next(600);
            out.push_str(&format!(
                "{{\"machine\": \"m{m:03}\", \"time\": \"{}\", \"event\": \"{event}\", \"message\": \"x\"}}\n",
                chrono::DateTime::from_timestamp(t as i64, 0).unwrap().to_rfc3339()
            ));
        }
    }
    let file = dir.join("noisy.ndjson");
    std::fs::write(&file, out).unwrap();
    file
}

/// The arrow tips (the last point of every path with an arrowhead) and the starts of every
/// path, as the SVG draws them.
fn path_ends(svg: &str) -> Vec<(f64, f64)> {
    let paths = Regex::new(r#"<path d="M([\d.]+),([\d.]+) ((?:L[\d.]+,[\d.]+ ?)*)""#).unwrap();
    let point = Regex::new(r"L([\d.]+),([\d.]+)").unwrap();
    let mut ends = Vec::new();
    for c in paths.captures_iter(svg) {
        ends.push((c[1].parse().unwrap(), c[2].parse().unwrap()));
        if let Some(last) = point.captures_iter(&c[3]).last() {
            ends.push((last[1].parse().unwrap(), last[2].parse().unwrap()));
        }
    }
    ends
}

#[test]
fn graph_labels_never_overlap() {
    let dir = tempfile::tempdir().unwrap();
    let noisy = noisy_fleet(dir.path());
    let seed = testdata("seed-machine.txt");
    let both = [
        arg(&testdata("fleet-v0.19.0/list-json")).to_string(),
        arg(&testdata("fleet-v0.42.2/list-json")).to_string(),
    ];
    let cases: Vec<Vec<&str>> = vec![
        vec![],
        vec!["--rules", "metal-api-v0.19.0"],
        vec![arg(&seed)],
        vec![&both[0]],
        vec![&both[1]],
        vec![&both[0], &both[1]],
        vec!["--rules", "metal-api-v0.19.0", &both[0], &both[1]],
        vec![arg(&noisy)],
        vec!["--rules", "metal-api-v0.19.0", arg(&noisy)],
    ];
    for case in cases {
        let svg = graph(&case);
        let (labels, nodes) = boxes(&svg);
        assert!(nodes.len() >= 11, "{case:?}");
        // No label sits on an arrowhead or where an edge leaves its node.
        for (x, y) in path_ends(&svg) {
            for l in &labels {
                let near = [l[0] - 2.0, l[1] - 2.0, l[2] + 4.0, l[3] + 4.0];
                assert!(
                    !overlap(&near, &[x, y, 0.1, 0.1]),
                    "{case:?}: label {l:?} on an edge's end at {x},{y}"
                );
            }
        }
        for (i, a) in labels.iter().enumerate() {
            for b in &labels[i + 1..] {
                assert!(!overlap(a, b), "{case:?}: labels {a:?} and {b:?} overlap");
            }
            for n in &nodes {
                assert!(!overlap(a, n), "{case:?}: label {a:?} covers node {n:?}");
            }
            assert!(
                a[0] >= 0.0 && a[0] + a[2] <= 1000.0,
                "{case:?}: {a:?} off the canvas"
            );
        }
    }
    // Too many pairs for one picture: the rarest are listed under it, none is lost.
    let svg = graph(&[arg(&noisy)]);
    let (_, dot, _) = stdout_of(&["graph", "-o", "dot", arg(&noisy)]);
    let edges = dot.lines().filter(|l| l.contains(" -> ")).count();
    let drawn = Regex::new(r#"<path d="M"#).unwrap().find_iter(&svg).count();
    let listed = Regex::new(r"(?m)→ [^:]+: ")
        .unwrap()
        .find_iter(&svg)
        .count();
    assert!(listed > 0, "the noisy fleet lists some edges");
    assert!(
        svg.contains("Not drawn, to keep the picture readable"),
        "the list says why"
    );
    assert!(
        drawn + listed >= edges,
        "{drawn} drawn + {listed} listed < {edges} edges"
    );
}

#[test]
fn the_seeds_waiting_pxe_booting_edge_is_red_with_its_count() {
    let svg = graph(&[arg(&testdata("seed-machine.txt"))]);
    assert!(
        svg.contains(r##"stroke="#d32f2f""##),
        "an unexpected edge is drawn red"
    );
    assert!(svg.contains(r##"stroke-dasharray="7 4""##), "… and dashed");
    let label = Regex::new(r##"fill="#d32f2f"[^>]*>PXE Booting ×3<"##).unwrap();
    assert!(label.is_match(&svg), "{svg}");
}

/// The unexpected edges of a DOT graph: (from state, event) → count.
fn red_edges(dot: &str) -> BTreeMap<(String, String), u64> {
    let edge = Regex::new(r#""([^"]+)" -> "([^"]+)" \[label="([^"]*)"(.*)\];"#).unwrap();
    let mut pairs = BTreeMap::new();
    for c in edge.captures_iter(dot) {
        if !c[4].contains("#d32f2f") {
            continue;
        }
        for line in c[3].split("\\n") {
            let (event, n) = line.rsplit_once(" ×").unwrap();
            *pairs
                .entry((c[1].to_string(), event.to_string()))
                .or_default() += n.parse::<u64>().unwrap();
        }
    }
    pairs
}

#[test]
fn graph_edges_agree_with_report() {
    for fleet in FLEETS {
        for format in ["list-json", "text", "ndjson"] {
            let input = testdata(&format!("{fleet}/{format}"));
            for window in [
                &[][..],
                &["--since", "2025-09-18", "--until", "2025-09-21"][..],
            ] {
                let mut args = vec!["-o", "dot", arg(&input)];
                args.extend_from_slice(window);
                let dot = graph(&args);
                let mut report_args = vec!["report", "-o", "json", arg(&input)];
                report_args.extend_from_slice(window);
                let (_, report, _) = run_json(&report_args);
                assert_eq!(
                    red_edges(&dot),
                    counts(&report),
                    "{fleet}/{format} {window:?}"
                );
            }
        }
    }
}

#[test]
fn dot_renders_with_graphviz() {
    if !have("Graphviz (dot)", on_path("dot")) {
        return;
    }
    for args in [vec![], vec![arg(&testdata("fleet-v0.42.2/list-json"))]] {
        let mut all = vec!["-o", "dot"];
        all.extend(args);
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("g.dot");
        std::fs::write(&file, graph(&all)).unwrap();
        let out = Process::new("dot")
            .arg("-Tsvg")
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains("<svg"));
    }
}

#[test]
fn mermaid_parses() {
    let mermaid = tools().join("node_modules/mermaid");
    let jsdom = tools().join("node_modules/jsdom");
    if !have(
        "mermaid and jsdom (npm)",
        mermaid.exists() && jsdom.exists() && on_path("node"),
    ) {
        return;
    }
    let script = tools().join("check-mermaid.mjs");
    std::fs::write(
        &script,
        "import { JSDOM } from 'jsdom';\nimport { readFileSync } from 'fs';\nconst { window } = new JSDOM('');\nglobalThis.window = window; globalThis.document = window.document;\nconst { default: mermaid } = await import('mermaid');\nfor (const file of process.argv.slice(2)) {\n  const result = await mermaid.parse(readFileSync(file, 'utf8'));\n  console.log(file, result.diagramType);\n}\n",
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for (name, args) in [
        ("rules.mmd", vec![]),
        ("fleet.mmd", vec![arg(&testdata("fleet-v0.42.2/list-json"))]),
        ("seed.mmd", vec![arg(&testdata("seed-machine.txt"))]),
    ] {
        let mut all = vec!["-o", "mermaid"];
        all.extend(args);
        let file = dir.path().join(name);
        std::fs::write(&file, graph(&all)).unwrap();
        files.push(file);
    }
    let out = Process::new("node")
        .arg(&script)
        .args(&files)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout.matches("flowchart").count(), 3, "{stdout}");
}

// Time windows and trends.

/// The unexpected pairs of a replay, filtered by time by hand: (state, event) → count.
fn by_hand(replay: &Value, since: &str, until: &str) -> BTreeMap<(String, String), u64> {
    let mut pairs = BTreeMap::new();
    for machine in replay["machines"].as_array().unwrap() {
        let outside = machine["last_error_outside_log"]
            .as_object()
            .map(|_| &machine["last_error_outside_log"]);
        for step in machine["steps"].as_array().unwrap().iter().chain(outside) {
            let time = step["time"].as_str().unwrap();
            // RFC 3339 in UTC with `Z` compares as text where the whole seconds differ; the
            // bounds are whole seconds.
            let t = chrono::DateTime::parse_from_rfc3339(time).unwrap();
            let ok = (since.is_empty()
                || chrono::DateTime::parse_from_rfc3339(since).unwrap() <= t)
                && (until.is_empty() || t < chrono::DateTime::parse_from_rfc3339(until).unwrap());
            if step["verdict"] == "unexpected" && ok {
                let key = (
                    step["from"].as_str().unwrap().to_string(),
                    step["event"].as_str().unwrap().to_string(),
                );
                *pairs.entry(key).or_default() += 1;
            }
        }
    }
    pairs
}

/// (state, event) → count of a report's unexpected pairs.
fn counts(report: &Value) -> BTreeMap<(String, String), u64> {
    pairs(&report["unexpected"])
        .into_iter()
        .map(|(state, event, count, _)| ((state, event), count))
        .collect()
}

#[test]
fn windows_count_exactly_what_happened_in_them() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = generated_fleet(dir.path(), 150, 5, 40);
    let (_, replay, _) = run_json(&["replay", "-o", "json", arg(&fleet)]);
    let (_, all, _) = run_json(&["report", "-o", "json", arg(&fleet)]);
    assert_eq!(
        counts(&all),
        by_hand(&replay, "", ""),
        "the steps are what report counts"
    );
    let now = all["window"]["now"].as_str().unwrap().to_string();
    let newest = chrono::DateTime::parse_from_rfc3339(&now).unwrap();
    let days_ago = |d: i64| (newest - chrono::TimeDelta::days(d)).to_rfc3339();
    for (since, until, args) in [
        (days_ago(3), String::new(), vec!["--since", "3d"]),
        (String::new(), days_ago(5), vec!["--until", "120h"]),
        (
            days_ago(6),
            days_ago(2),
            vec!["--since", "6d", "--until", "48h"],
        ),
    ] {
        let mut all_args = vec!["report", "-o", "json", arg(&fleet)];
        all_args.extend_from_slice(&args);
        let (code, windowed, stderr) = run_json(&all_args);
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(
            counts(&windowed),
            by_hand(&replay, &since, &until),
            "{args:?}"
        );
        assert_eq!(windowed["window"]["now"], now.as_str());
        assert_eq!(
            windowed["inputs"], all["inputs"],
            "the input accounting is not windowed"
        );
        assert_eq!(
            windowed["machines"], all["machines"],
            "nor are the machines' flags"
        );
    }
    // An absolute window, and --now from the wall clock, a fixed time, explicitly.
    let (_, fixed, _) = run_json(&[
        "report",
        "-o",
        "json",
        "--since",
        "7d",
        "--now",
        &now,
        arg(&fleet),
    ]);
    assert_eq!(counts(&fixed), by_hand(&replay, &days_ago(7), ""));
    let (_, wall, _) = run_json(&[
        "report",
        "-o",
        "json",
        "--since",
        "1d",
        "--now",
        "now",
        arg(&fleet),
    ]);
    assert_eq!(
        wall["unexpected"],
        json!([]),
        "the generated fleet lies in the past"
    );
}

#[test]
fn trend_series_sum_to_the_counts() {
    for period in ["day", "week"] {
        let (code, report, _) = run_json(&[
            "report",
            "-o",
            "json",
            "--by",
            period,
            arg(&testdata("fleet-v0.42.2/list-json")),
        ]);
        assert_eq!(code, 0);
        for pair in report["unexpected"].as_array().unwrap() {
            let series = pair["series"].as_array().unwrap();
            let sum: u64 = series.iter().map(|p| p["count"].as_u64().unwrap()).sum();
            assert_eq!(sum, pair["count"].as_u64().unwrap());
            let periods: Vec<&str> = series
                .iter()
                .map(|p| p["period"].as_str().unwrap())
                .collect();
            let mut sorted = periods.clone();
            sorted.sort();
            assert_eq!(periods, sorted, "ascending");
            if period == "week" {
                assert!(
                    periods.iter().all(|p| p.starts_with("2025-W")),
                    "{periods:?}"
                );
            }
        }
    }
    let (_, plain, _) = run_json(&["report", "-o", "json", arg(&testdata("seed-machine.txt"))]);
    assert!(
        plain["unexpected"][0].get("series").is_none(),
        "only with --by"
    );
    let (_, table, _) = stdout_of(&["report", "--by", "day", arg(&testdata("seed-machine.txt"))]);
    assert!(table.contains("Per day"), "{table}");
}

/// The newest event of a list export, worked out from the file (its events, last error
/// events and last event times): the data's own clock.
fn newest_event(list: &Path) -> String {
    let machines: Value = serde_json::from_str(&std::fs::read_to_string(list).unwrap()).unwrap();
    let mut times: Vec<chrono::DateTime<chrono::FixedOffset>> = Vec::new();
    for m in machines.as_array().unwrap() {
        let events = &m["events"];
        if let Some(t) = events["last_event_time"].as_str() {
            times.push(chrono::DateTime::parse_from_rfc3339(t).unwrap());
        }
        for e in events["log"].as_array().unwrap().iter().chain(
            events["last_error_event"]
                .as_object()
                .map(|_| &events["last_error_event"]),
        ) {
            times.push(chrono::DateTime::parse_from_rfc3339(e["time"].as_str().unwrap()).unwrap());
        }
    }
    let newest = times.into_iter().max().unwrap().with_timezone(&chrono::Utc);
    newest.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)
}

#[test]
fn every_windowed_view_says_its_window() {
    let fleet = testdata("fleet-v0.42.2/list-json");
    let now = newest_event(&fleet.join("machines.json"));
    for command in [
        &["report"][..],
        &["explain"][..],
        &["check"][..],
        &[
            "diff",
            "--old",
            "metal-api",
            "--new",
            "metal-api-v0.19.0",
            "--fail-on",
            "never",
        ][..],
    ] {
        let mut args = command.to_vec();
        args.extend(["-o", "json", "--since", "2025-09-18", arg(&fleet)]);
        let (_, out, _) = run_json(&args);
        assert_eq!(
            out["window"]["since"], "2025-09-18T00:00:00Z",
            "{command:?}"
        );
        assert_eq!(out["window"]["until"], Value::Null);
        assert_eq!(out["window"]["now"], now.as_str(), "{command:?}");
    }
}

// The HTML page in a browser.

#[test]
fn the_html_page_loads_in_chromium_with_input_as_text() {
    let Some(browser) = chromium() else {
        have("Chromium", false);
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    let output = fsmlog()
        .args(["report", "-o", "html"])
        .arg(testdata("fleet-v0.42.2/list-json"))
        .arg(testdata("html"))
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(2),
        "the damaged row is an input error"
    );
    std::fs::write(&page, &output.stdout).unwrap();
    let html = String::from_utf8(output.stdout).unwrap();
    for external in ["http://", "https://", "src=\"", "<link"] {
        let found = html.replace("http://www.w3.org/2000/svg", "");
        assert!(
            !found.contains(external),
            "the page fetches nothing: {external}"
        );
    }
    let flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
    ];
    let profile = dir.path().join("profile");
    let url = format!("file://{}", page.display());
    let dom = Process::new(browser)
        .args(flags)
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(["--virtual-time-budget=3000", "--dump-dom", &url])
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&dom.stdout).to_string();
    // A row per pair in the first table.
    let (_, report, _) = run_json(&[
        "report",
        "-o",
        "json",
        arg(&testdata("fleet-v0.42.2/list-json")),
        arg(&testdata("html")),
    ]);
    let first_table = &dom[dom.find("<tbody>").unwrap()..dom.find("</tbody>").unwrap()];
    assert_eq!(
        first_table.matches("<tr>").count(),
        report["unexpected"].as_array().unwrap().len()
    );
    // The hostile strings are text: escaped in the DOM, never elements.
    assert!(
        dom.contains("&lt;script&gt;alert('message')&lt;/script&gt;"),
        "{dom}"
    );
    assert!(dom.contains("&lt;script&gt;alert('id')&lt;/script&gt;"));
    assert!(dom.contains("&lt;img src=x onerror=alert('event')&gt;"));
    assert_eq!(
        dom.matches("<script").count(),
        1,
        "only the page's own sorting script"
    );
    assert!(!dom.contains("<img"));
    // A screenshot to look at.
    let shot = tools().join("report-page.png");
    std::fs::create_dir_all(tools()).unwrap();
    let status = Process::new(browser)
        .args(flags)
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(["--window-size=1400,1800"])
        .arg(format!("--screenshot={}", shot.display()))
        .arg(&url)
        .output()
        .unwrap();
    assert!(status.status.success());
    assert!(std::fs::metadata(&shot).unwrap().len() > 10_000);
}

#[test]
fn a_busy_edge_beside_the_lifecycle_keeps_its_label() {
    // A thousand machines phone home and are reclaimed: the one edge, with a label of 21
    // characters, between Phoned Home and Machine Reclaim.
    let dir = tempfile::tempdir().unwrap();
    let mut lines = String::new();
    for m in 0..1000 {
        lines.push_str(&format!(
            "{{\"machine\":\"m{m}\",\"time\":\"2025-09-16T10:00:00Z\",\"event\":\"Phoned Home\"}}\n\
             {{\"machine\":\"m{m}\",\"time\":\"2025-09-16T10:01:00Z\",\"event\":\"Machine Reclaim\"}}\n"
        ));
    }
    let file = dir.path().join("reclaim.ndjson");
    std::fs::write(&file, lines).unwrap();
    let svg = graph(&["-o", "svg", arg(&file)]);
    assert!(svg.contains(">Machine Reclaim ×1000</text>"), "{svg}");
    assert!(!svg.contains("Not drawn"), "{svg}");
}

#[test]
fn an_unexpected_loop_does_not_hide_the_expected_one() {
    // In Preparing, Alive is expected (a loop) and Preparing is not (another loop).
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("loops.ndjson");
    std::fs::write(
        &file,
        "{\"machine\":\"m\",\"time\":\"2025-09-16T10:00:00Z\",\"event\":\"PXE Booting\"}\n\
         {\"machine\":\"m\",\"time\":\"2025-09-16T10:01:00Z\",\"event\":\"Preparing\"}\n\
         {\"machine\":\"m\",\"time\":\"2025-09-16T10:02:00Z\",\"event\":\"Alive\"}\n\
         {\"machine\":\"m\",\"time\":\"2025-09-16T10:03:00Z\",\"event\":\"Preparing\"}\n",
    )
    .unwrap();
    let svg = graph(&["-o", "svg", arg(&file)]);
    let loops =
        Regex::new(r#"<path d="(M[\d.]+,[\d.]+ C[^"]+)"[^>]*stroke="(#[0-9a-f]+)""#).unwrap();
    let drawn: Vec<(String, String)> = loops
        .captures_iter(&svg)
        .map(|c| (c[1].to_string(), c[2].to_string()))
        .collect();
    let red: Vec<&String> = drawn
        .iter()
        .filter(|(_, s)| s == "#d32f2f")
        .map(|(d, _)| d)
        .collect();
    let black: Vec<&String> = drawn
        .iter()
        .filter(|(_, s)| s == "#444444")
        .map(|(d, _)| d)
        .collect();
    assert_eq!(red.len(), 1, "{drawn:?}");
    assert!(!black.is_empty(), "{drawn:?}");
    assert!(
        black.iter().all(|b| *b != red[0]),
        "the loops share a path: {drawn:?}"
    );
}

#[test]
fn a_graph_of_a_folder_without_machines_is_no_picture() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, stderr) = stdout_of(&["graph", "-o", "svg", arg(dir.path())]);
    assert_eq!(code, 2);
    assert!(out.is_empty(), "{out}");
    assert!(stderr.contains("no machine was read"), "{stderr}");
}
