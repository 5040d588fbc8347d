//! The graph as Graphviz DOT (`fsmlog graph -o dot | dot -Tsvg`).

use std::io::{self, Write};

use super::shape::{drawn_states, edge_lines, leads_down, node_name, node_note};
use crate::graph::{EdgeKind, Source};
use crate::render::reports::GraphReport;

/// A DOT string literal; each line escaped, the lines joined by DOT's own `\n`.
fn quoted(text: &str) -> String {
    let mut out = String::from("\"");
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push_str("\\n");
        }
        for c in crate::render::escape::text(line).chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                c => out.push(c),
            }
        }
    }
    out.push('"');
    out
}

fn id(from: Source) -> String {
    quoted(node_name(from))
}

/// Writes the graph as DOT.
pub fn dot(report: &GraphReport, out: &mut dyn Write) -> io::Result<()> {
    let g = report.graph;
    writeln!(out, "digraph fsmlog {{")?;
    writeln!(
        out,
        "  graph [rankdir=TB, label={}, labelloc=t, fontname=\"Helvetica\"];",
        quoted(&format!("fsmlog graph · rules {}", report.rules))
    )?;
    writeln!(
        out,
        "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#f3f6fb\", color=\"#33557a\", fontname=\"Helvetica\"];"
    )?;
    writeln!(out, "  edge [fontname=\"Helvetica\", fontsize=10];")?;
    for state in drawn_states() {
        let label = match node_note(g, state) {
            Some(note) => format!("{}\n{note}", state.name()),
            None => state.name().to_string(),
        };
        writeln!(
            out,
            "  {} [label={}];",
            id(Source::State(state)),
            quoted(&label)
        )?;
    }
    if g.edges.keys().any(|k| k.from == Source::Any) {
        writeln!(
            out,
            "  {} [label=\"any state\", style=\"rounded,dashed\"];",
            id(Source::Any)
        )?;
    }
    for (key, events) in &g.edges {
        let label = edge_lines(key, events).join("\n");
        let style = match (key.kind, g.observed) {
            (EdgeKind::Unexpected, _) => {
                ", color=\"#d32f2f\", fontcolor=\"#d32f2f\", style=dashed, penwidth=2"
            }
            (EdgeKind::Rule, true) => ", color=\"#b8b8b8\", fontcolor=\"#999999\", style=dashed",
            _ => "",
        };
        let rank = if leads_down(key) {
            ""
        } else {
            ", constraint=false"
        };
        writeln!(
            out,
            "  {} -> {} [label={}{style}{rank}];",
            id(key.from),
            id(Source::State(key.to)),
            quoted(&label)
        )?;
    }
    writeln!(out, "}}")
}
