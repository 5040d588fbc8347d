//! The graph as a standalone SVG document, drawn where [`super::layout`] puts everything.

use std::fmt::Write as _;
use std::io::{self, Write};

use super::layout::{CHAR_W, LINE_H, Layout, Placed, WIDTH, center, lay_out, node_box};
use super::shape::{drawn_states, node_name, node_note};
use crate::graph::{EdgeKind, Source};
use crate::render::escape;
use crate::render::reports::GraphReport;

/// (stroke, dash, marker, width) of an edge.
fn style(kind: EdgeKind, observed: bool) -> (&'static str, &'static str, &'static str, f64) {
    match (kind, observed) {
        (EdgeKind::Unexpected, _) => ("#d32f2f", "7 4", "bad", 2.2),
        (EdgeKind::Rule, true) => ("#c4c4c4", "3 3", "faint", 1.1),
        _ => ("#444444", "", "ok", 1.4),
    }
}

/// Writes the graph as a standalone SVG document.
pub fn svg(report: &GraphReport, out: &mut dyn Write) -> io::Result<()> {
    let g = report.graph;
    let Layout {
        placed,
        lowest,
        listed,
        ..
    } = lay_out(report);
    let legend_y = lowest + 36.0;
    let listing = listing_lines(&listed);
    let height = legend_y
        + 24.0
        + listing.len() as f64 * LINE_H
        + if listing.is_empty() { 0.0 } else { 10.0 };
    let mut s = String::new();
    let _ = writeln!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height:.0}" width="{WIDTH}" height="{height:.0}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">"##
    );
    s.push_str(concat!(
        "<defs>\n",
        r##"<marker id="ok" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#444444"/></marker>"##,
        "\n",
        r##"<marker id="bad" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#d32f2f"/></marker>"##,
        "\n",
        r##"<marker id="faint" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#c4c4c4"/></marker>"##,
        "\n</defs>\n",
        r##"<rect width="100%" height="100%" fill="#ffffff"/>"##,
        "\n"
    ));
    let title = if g.observed {
        format!(
            "fsmlog graph · rules {} · {}",
            report.rules,
            crate::render::sentence::amount(report.machines, "machine")
        )
    } else {
        format!("fsmlog graph · rules {}", report.rules)
    };
    let _ = writeln!(
        s,
        r##"<text x="20" y="32" font-size="16" font-weight="bold" fill="#222">{}</text>"##,
        escape::html(&title)
    );
    let mut order: Vec<&Placed> = placed.iter().collect();
    order.sort_by_key(|d| match d.kind {
        EdgeKind::Rule => 0,
        EdgeKind::Expected => 1,
        EdgeKind::Unexpected => 2,
    });
    for d in &order {
        let (stroke, dash, marker, width) = style(d.kind, g.observed);
        for (p, arrow) in d.paths.iter().zip(&d.arrows) {
            let end = if *arrow {
                format!(r#" marker-end="url(#{marker})""#)
            } else {
                String::new()
            };
            let _ = writeln!(
                s,
                r##"<path d="{p}" fill="none" stroke="{stroke}" stroke-width="{width}" stroke-dasharray="{dash}"{end}/>"##
            );
        }
    }
    for state in drawn_states() {
        node(&mut s, Source::State(state), node_note(g, state));
    }
    if g.edges.keys().any(|k| k.from == Source::Any) {
        node(&mut s, Source::Any, Some("a `*` row".to_string()));
    }
    for d in &order {
        let Some(b) = d.label else { continue };
        let (stroke, _, _, _) = style(d.kind, g.observed);
        let weight = if d.kind == EdgeKind::Unexpected {
            "bold"
        } else {
            "normal"
        };
        let _ = writeln!(
            s,
            r##"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="#ffffff" fill-opacity="0.92"/>"##,
            b.x, b.y, b.w, b.h
        );
        for (k, line) in d.lines.iter().enumerate() {
            let _ = writeln!(
                s,
                r##"<text x="{:.1}" y="{:.1}" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="11" font-weight="{weight}" fill="{stroke}" xml:space="preserve">{}</text>"##,
                b.x + 3.0,
                b.y + 12.0 + k as f64 * LINE_H,
                escape::html(line)
            );
        }
    }
    legend(&mut s, g.observed, legend_y);
    for (k, line) in listing.iter().enumerate() {
        let _ = writeln!(
            s,
            r##"<text x="20" y="{:.1}" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="11" fill="#333" xml:space="preserve">{}</text>"##,
            legend_y + 34.0 + k as f64 * LINE_H,
            escape::html(line)
        );
    }
    s.push_str("</svg>\n");
    out.write_all(s.as_bytes())
}

fn node(s: &mut String, from: Source, note: Option<String>) {
    let b = node_box(from);
    let (cx, cy) = center(from);
    let dashed = if from == Source::Any {
        r#" stroke-dasharray="4 3""#
    } else {
        ""
    };
    let _ = writeln!(
        s,
        r##"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" rx="8" fill="#f3f6fb" stroke="#33557a" stroke-width="1.5"{dashed}/>"##,
        b.x, b.y, b.w, b.h
    );
    let name_y = if note.is_some() { cy - 3.0 } else { cy + 5.0 };
    let _ = writeln!(
        s,
        r##"<text x="{cx:.1}" y="{name_y:.1}" text-anchor="middle" font-size="13" font-weight="bold" fill="#1b2b3a">{}</text>"##,
        escape::html(node_name(from))
    );
    if let Some(note) = note {
        let _ = writeln!(
            s,
            r##"<text x="{cx:.1}" y="{:.1}" text-anchor="middle" font-size="10.5" fill="#4a5a6a">{}</text>"##,
            cy + 13.0,
            escape::html(&note)
        );
    }
}

fn legend(s: &mut String, observed: bool, y: f64) {
    let items: &[(&str, &str, &str)] = if observed {
        &[
            ("#444444", "", "observed, expected"),
            ("#d32f2f", "7 4", "observed, unexpected (no rule)"),
            ("#c4c4c4", "3 3", "a rule nobody took"),
        ]
    } else {
        &[(
            "#444444",
            "",
            "a transition the rules allow; a loop: the machine stays",
        )]
    };
    let mut x = 20.0;
    for (stroke, dash, text) in items {
        let _ = writeln!(
            s,
            r##"<line x1="{x:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{stroke}" stroke-width="2" stroke-dasharray="{dash}"/><text x="{:.1}" y="{:.1}" font-size="12" fill="#333">{text}</text>"##,
            x + 30.0,
            x + 36.0,
            y + 4.0
        );
        x += 46.0 + text.len() as f64 * 6.6 + 20.0;
    }
}

/// The edges not drawn, under a heading, wrapped to the picture's width.
fn listing_lines(listed: &[String]) -> Vec<String> {
    if listed.is_empty() {
        return Vec::new();
    }
    let per_line = ((WIDTH - 40.0) / CHAR_W) as usize;
    let mut lines = vec![format!(
        "Not drawn, to keep the picture readable ({} edges; `fsmlog report` lists every pair):",
        listed.len()
    )];
    let mut line = String::new();
    for item in listed {
        let item = format!("{item};");
        if !line.is_empty() && line.chars().count() + 1 + item.chars().count() > per_line {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&item);
    }
    lines.push(line);
    lines
}
