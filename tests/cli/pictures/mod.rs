//! Pictures and time: the graph (SVG, DOT, Mermaid) agrees with `report` and has
//! no overlapping labels; windows count exactly what happened in them; trends add up; the
//! HTML page loads in a real browser with every input string as text.

mod windows;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command as Process;

use regex::Regex;
use serde_json::Value;

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

/// (state, event) → count of a report's unexpected pairs.
fn counts(report: &Value) -> BTreeMap<(String, String), u64> {
    pairs(&report["unexpected"])
        .into_iter()
        .map(|(state, event, count, _)| ((state, event), count))
        .collect()
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

#[test]
fn dot_labels_break_lines_as_dot_does() {
    let (code, dot, _) = stdout_of(&[
        "graph",
        "-o",
        "dot",
        arg(&testdata("fleet-v0.42.2/list-json")),
    ]);
    assert_eq!(code, 0);
    assert!(dot.contains(r#"[label="Waiting\n9 now"]"#), "{dot}");
    assert!(!dot.contains("u{a}"), "{dot}");
}

#[test]
fn a_graph_of_nothing_read_is_no_picture() {
    let (code, out, stderr) = stdout_of(&["graph", "-o", "svg", "/nonexistent/fleet"]);
    assert_eq!(code, 2);
    assert!(
        out.is_empty(),
        "no rule-set picture in place of the fleet's: {out}"
    );
    assert!(stderr.contains("/nonexistent/fleet"), "{stderr}");
}
