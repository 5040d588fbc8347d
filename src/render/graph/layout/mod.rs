//! Where everything of the SVG graph goes, on a fixed layout of metal-api's states: the
//! provisioning lifecycle reads top to bottom down the middle, Planned Reboot to its left,
//! Crashing and Machine Reclaim to its right. Edges between neighbours in the lifecycle go
//! straight down; loops sit on a node's top left; every other edge runs in a lane of its own
//! beside the lifecycle. Edges of one event from several lifecycle states into one side state
//! share a lane, a bus, with one label that names each source. Every label is put where it
//! meets no other label, no node and no edge's end; an edge whose label finds no such place,
//! and the rarest unexpected edges of a busy fleet, are listed under the picture instead.

mod grid;
mod labels;
mod routes;

use std::collections::BTreeMap;

pub(crate) use grid::{CHAR_W, LINE_H, LabelBox, WIDTH, center, node_box};
use grid::{NODE_H, row_y};
use labels::candidates;
use routes::{Canvas, Drawn, Edge, lanes, ports, shapes};

use super::shape::{drawn_states, edge_lines, node_name};
use crate::event::EventKind;
use crate::graph::{EdgeKey, EdgeKind, Source};
use crate::render::reports::GraphReport;

/// A shape laid out.
pub(crate) struct Placed {
    pub paths: Vec<String>,
    /// Whether the path ends in an arrowhead (a bus's stubs do not).
    pub arrows: Vec<bool>,
    pub lines: Vec<String>,
    pub label: Option<LabelBox>,
    pub kind: EdgeKind,
}

/// A laid-out picture.
pub(crate) struct Layout {
    pub placed: Vec<Placed>,
    /// The lowest point anything is drawn at.
    pub lowest: f64,
    /// The edges not drawn, as lines of text.
    pub listed: Vec<String>,
}

/// The most unexpected shapes a picture draws; the rest are listed below it.
const MAX_UNEXPECTED: usize = 12;

/// Lays out every shape: ports, lanes, and a free place for each label.
pub(crate) fn lay_out(report: &GraphReport) -> Layout {
    let edges: Vec<(&EdgeKey, &BTreeMap<EventKind, u64>)> = report.graph.edges.iter().collect();
    let edges: &[Edge] = &edges;
    let shapes = shapes(report);
    let mut canvas = Canvas {
        edges,
        lane_of: lanes(&shapes, edges),
        port: ports(&shapes, edges),
        bottoms: 0,
        lowest: row_y(7.0) + NODE_H,
    };
    let mut placed: Vec<LabelBox> = drawn_states().map(|s| node_box(Source::State(s))).collect();
    if edges.iter().any(|(k, _)| k.from == Source::Any) {
        placed.push(node_box(Source::Any));
    }
    let weight = |s: usize| -> u64 {
        shapes[s]
            .members
            .iter()
            .map(|&i| edges[i].1.values().sum::<u64>())
            .sum()
    };
    // The busiest edges get the best places for their labels, unexpected ones first among
    // equals; faint ones (no label) last.
    let mut order: Vec<usize> = (0..shapes.len()).collect();
    order.sort_by_key(|&s| {
        (
            shapes[s].kind == EdgeKind::Rule,
            std::cmp::Reverse(weight(s)),
            shapes[s].kind != EdgeKind::Unexpected,
            s,
        )
    });
    // The unexpected shapes beyond the most frequent are listed below the picture instead:
    // a picture of every rare pair is one nobody can read.
    let mut unexpected: Vec<usize> = (0..shapes.len())
        .filter(|&s| shapes[s].kind == EdgeKind::Unexpected)
        .collect();
    unexpected.sort_by_key(|&s| (std::cmp::Reverse(weight(s)), s));
    let mut listed: Vec<usize> = unexpected.split_off(unexpected.len().min(MAX_UNEXPECTED));
    // Geometry first, so that every label can keep clear of every edge's ends.
    let mut drawn: Vec<Drawn> = Vec::new();
    for &s in &order {
        if listed.contains(&s) {
            continue;
        }
        match canvas.draw(s, &shapes[s]) {
            Some(d) => drawn.push(d),
            None => listed.push(s),
        }
    }
    let zones: Vec<LabelBox> = drawn.iter().flat_map(|d| d.zones.iter().copied()).collect();
    let mut lowest = canvas.lowest;
    let mut out = Vec::new();
    for d in drawn {
        let shape = &shapes[d.shape];
        let label = if shape.lines.is_empty() {
            None
        } else {
            let w = shape
                .lines
                .iter()
                .map(|l| l.chars().count())
                .max()
                .unwrap_or(0) as f64
                * CHAR_W
                + 6.0;
            let h = shape.lines.len() as f64 * LINE_H + 2.0;
            let options = candidates(shape.route, &d.points, w, h);
            let fits = |b: &LabelBox| b.x >= 0.0 && b.x + b.w <= WIDTH && b.y >= 44.0;
            let free = options.iter().find(|b| {
                fits(b)
                    && !placed.iter().any(|p| p.overlaps(b))
                    && !zones.iter().any(|z| z.overlaps(b))
            });
            // Where no place is free, the shape is listed below the picture, not drawn with
            // its label on top of another.
            let Some(&label) = free else {
                listed.push(d.shape);
                continue;
            };
            placed.push(label);
            lowest = lowest.max(label.y + label.h);
            Some(label)
        };
        out.push(Placed {
            paths: d.paths,
            arrows: d.arrows,
            lines: shape.lines.clone(),
            label,
            kind: shape.kind,
        });
    }
    listed.sort_by_key(|&s| (std::cmp::Reverse(weight(s)), s));
    let listed = listed
        .iter()
        .flat_map(|&s| shapes[s].members.iter())
        .map(|&i| {
            let (key, events) = edges[i];
            format!(
                "{} → {}: {}",
                node_name(key.from),
                key.to.name(),
                edge_lines(key, events).join(", ")
            )
        })
        .collect();
    Layout {
        placed: out,
        lowest,
        listed,
    }
}
