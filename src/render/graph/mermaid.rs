//! The graph as a Mermaid flowchart, which GitHub and GitLab render in a comment.

use std::io::{self, Write};

use super::shape::{drawn_states, edge_lines, leads_down, node_name, node_note};
use crate::event::State;
use crate::graph::{EdgeKind, Source};
use crate::render::reports::GraphReport;

fn id(from: Source) -> String {
    match from {
        Source::Any => "any".to_string(),
        Source::State(state) => format!("s{}", state.index()),
    }
}

/// Text inside a Mermaid label: its quotes and markup characters as entity codes.
fn text(text: &str) -> String {
    let mut out = String::new();
    for c in crate::render::escape::text(text).chars() {
        match c {
            '"' => out.push_str("#quot;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            '#' => out.push_str("#35;"),
            '|' => out.push_str("#124;"),
            c => out.push(c),
        }
    }
    out
}

/// Writes the graph as Mermaid.
pub fn mermaid(report: &GraphReport, out: &mut dyn Write) -> io::Result<()> {
    let g = report.graph;
    writeln!(out, "flowchart TB")?;
    let node_label = |state: State| match node_note(g, state) {
        Some(note) => format!("{}<br/>{}", text(state.name()), text(&note)),
        None => text(state.name()),
    };
    for state in drawn_states() {
        writeln!(
            out,
            "  {}[\"{}\"]",
            id(Source::State(state)),
            node_label(state)
        )?;
    }
    if g.edges.keys().any(|k| k.from == Source::Any) {
        writeln!(
            out,
            "  {}([\"{}\"])",
            id(Source::Any),
            node_name(Source::Any)
        )?;
    }
    let mut styles = Vec::new();
    // Edges down the lifecycle first: Mermaid ranks by the edges it meets first, so the
    // picture reads top to bottom.
    let mut edges: Vec<_> = g.edges.iter().collect();
    edges.sort_by_key(|(key, _)| !leads_down(key));
    for (n, (key, events)) in edges.into_iter().enumerate() {
        let label = edge_lines(key, events)
            .iter()
            .map(|l| text(l))
            .collect::<Vec<_>>()
            .join("<br/>");
        let arrow = match key.kind {
            EdgeKind::Unexpected => "-.->",
            _ => "-->",
        };
        writeln!(
            out,
            "  {} {arrow}|\"{label}\"| {}",
            id(key.from),
            id(Source::State(key.to))
        )?;
        match (key.kind, g.observed) {
            (EdgeKind::Unexpected, _) => styles.push(format!(
                "  linkStyle {n} stroke:#d32f2f,stroke-width:2px,color:#d32f2f"
            )),
            (EdgeKind::Rule, true) => {
                styles.push(format!("  linkStyle {n} stroke:#b8b8b8,color:#999999"))
            }
            _ => {}
        }
    }
    for style in styles {
        writeln!(out, "{style}")?;
    }
    Ok(())
}
