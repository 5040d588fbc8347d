//! Where everything of the SVG graph goes, on a fixed layout of metal-api's states: the
//! provisioning lifecycle reads top to bottom down the middle, Planned Reboot to its left,
//! Crashing and Machine Reclaim to its right. Edges between neighbours in the lifecycle go
//! straight down; loops sit on a node's top left; every other edge runs in a lane of its own
//! beside the lifecycle. Edges of one event from several lifecycle states into one side state
//! share a lane, a bus, with one label that names each source. Every label is put where it
//! meets no other label, no node and no edge's end; an edge whose label finds no such place,
//! and the rarest unexpected edges of a busy fleet, are listed under the picture instead.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use super::shape::{drawn_states, node_name};
use crate::event::{EventKind, State};
use crate::graph::{EdgeKey, From, Kind};
use crate::render::report::GraphReport;

pub(super) const WIDTH: f64 = 1000.0;
const NODE_W: f64 = 170.0;
const NODE_H: f64 = 44.0;
const ROW: f64 = 120.0;
const TOP: f64 = 100.0;
const CENTER: f64 = 500.0;
const LEFT: f64 = 130.0;
const RIGHT: f64 = 870.0;
/// Label text: 11 px monospace, so its width is known.
pub(super) const CHAR_W: f64 = 6.7;
pub(super) const LINE_H: f64 = 14.0;
const LANE_GAP: f64 = 13.0;

/// A box on the canvas: the top-left corner, width and height.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LabelBox {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

impl LabelBox {
    /// Whether two boxes share any area.
    pub fn overlaps(&self, other: &LabelBox) -> bool {
        self.x < other.x + other.w
            && other.x < self.x + self.w
            && self.y < other.y + other.h
            && other.y < self.y + self.h
    }
}

fn row_y(i: f64) -> f64 {
    TOP + i * ROW
}

/// Where a node sits.
pub(super) fn center(from: From) -> (f64, f64) {
    match from {
        From::Any => (CENTER, row_y(8.0)),
        From::State(state) => match state {
            State::Initial | State::Alive => (CENTER, row_y(0.0)),
            State::PxeBooting => (CENTER, row_y(1.0)),
            State::Preparing => (CENTER, row_y(2.0)),
            State::Registering => (CENTER, row_y(3.0)),
            State::Waiting => (CENTER, row_y(4.0)),
            State::Installing => (CENTER, row_y(5.0)),
            State::BootingNewKernel => (CENTER, row_y(6.0)),
            State::PhonedHome => (CENTER, row_y(7.0)),
            State::PlannedReboot => (LEFT, row_y(7.0)),
            State::Crashing => (RIGHT, row_y(3.5)),
            State::MachineReclaim => (RIGHT, row_y(7.0)),
        },
    }
}

pub(super) fn node_box(from: From) -> LabelBox {
    let (x, y) = center(from);
    LabelBox {
        x: x - NODE_W / 2.0,
        y: y - NODE_H / 2.0,
        w: NODE_W,
        h: NODE_H,
    }
}

/// Which side of the lifecycle a lane runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Side {
    Left,
    Right,
}

/// How an edge is drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Route {
    Down,
    Loop,
    Across,
    Lane(Side),
    Bottom,
}

fn route(key: &EdgeKey) -> Route {
    let to = From::State(key.to);
    if key.from == to {
        return Route::Loop;
    }
    if key.from == From::Any {
        return Route::Bottom;
    }
    let (fx, fy) = center(key.from);
    let (tx, ty) = center(to);
    if fx == CENTER && tx == CENTER && (ty - fy - ROW).abs() < 1.0 {
        return Route::Down;
    }
    if (fy - ty).abs() < 1.0 && (fx - tx).abs() <= RIGHT - CENTER + 1.0 {
        return Route::Across;
    }
    match (fx, tx) {
        (a, b) if (a == LEFT && b == RIGHT) || (a == RIGHT && b == LEFT) => Route::Bottom,
        (a, b) if a == LEFT || b == LEFT => Route::Lane(Side::Left),
        (a, b) if a == RIGHT || b == RIGHT => Route::Lane(Side::Right),
        _ => Route::Lane(if ty > fy { Side::Right } else { Side::Left }),
    }
}

/// What gets drawn for one or more edges.
struct Shape {
    /// The edges drawn (one, or the members of a bus).
    members: Vec<usize>,
    route: Route,
    kind: Kind,
    lines: Vec<String>,
}

/// A shape laid out.
pub(super) struct Placed {
    pub paths: Vec<String>,
    /// Whether the path ends in an arrowhead (a bus's stubs do not).
    pub arrows: Vec<bool>,
    pub lines: Vec<String>,
    pub label: Option<LabelBox>,
    pub kind: Kind,
}

/// The lines of a label: each event with its count where observed; a bus names its sources.
fn shape_lines(
    graph_observed: bool,
    members: &[(&EdgeKey, &BTreeMap<EventKind, u64>)],
) -> Vec<String> {
    let (key, events) = members[0];
    if key.kind == Kind::Rule && graph_observed {
        // A rule nobody took: faint, and unlabelled so that what happened stands out.
        return Vec::new();
    }
    let count = |events: &BTreeMap<EventKind, u64>| -> u64 { events.values().sum() };
    if members.len() == 1 {
        return events
            .iter()
            .map(|(event, n)| match key.kind {
                Kind::Rule => event.name().to_string(),
                _ => format!("{} ×{n}", event.name()),
            })
            .collect();
    }
    let names: Vec<&str> = events.keys().map(|e| e.name()).collect();
    let mut lines = vec![names.join(", ")];
    for (member, events) in members {
        let source = match member.from {
            From::State(state) => state.name(),
            From::Any => "any state",
        };
        lines.push(match key.kind {
            Kind::Rule => format!(" from {source}"),
            _ => format!(" from {source} ×{}", count(events)),
        });
    }
    lines
}

/// Groups edges into shapes: edges of the same events and kind from lifecycle states into
/// one side state share a bus.
fn shapes(report: &GraphReport) -> Vec<Shape> {
    let edges: Vec<(&EdgeKey, &BTreeMap<EventKind, u64>)> = report.graph.edges.iter().collect();
    let mut buses: BTreeMap<(Side, Kind, State, Vec<EventKind>), Vec<usize>> = BTreeMap::new();
    let mut singles = Vec::new();
    for (i, (key, events)) in edges.iter().enumerate() {
        let r = route(key);
        let into_side = center(From::State(key.to)).0 != CENTER;
        let from_center = matches!(key.from, From::State(_)) && center(key.from).0 == CENTER;
        match r {
            Route::Lane(side) if into_side && from_center => buses
                .entry((side, key.kind, key.to, events.keys().copied().collect()))
                .or_default()
                .push(i),
            _ => singles.push(i),
        }
    }
    let observed = report.graph.observed;
    let mut out: Vec<Shape> = singles
        .into_iter()
        .map(|i| Shape {
            members: vec![i],
            route: route(edges[i].0),
            kind: edges[i].0.kind,
            lines: shape_lines(observed, &[edges[i]]),
        })
        .collect();
    for ((side, kind, _, _), mut members) in buses {
        members.sort_by(|a, b| {
            center(edges[*a].0.from)
                .1
                .total_cmp(&center(edges[*b].0.from).1)
        });
        let chosen: Vec<_> = members.iter().map(|&i| edges[i]).collect();
        out.push(Shape {
            lines: shape_lines(observed, &chosen),
            members,
            route: Route::Lane(side),
            kind,
        });
    }
    out
}

/// The places a label may go, best first.
fn candidates(route: Route, points: &[(f64, f64)], w: f64, h: f64) -> Vec<LabelBox> {
    let mut out = Vec::new();
    let at = |x: f64, y: f64| LabelBox { x, y, w, h };
    match route {
        Route::Down => {
            let (x, y0) = points[0];
            let y1 = points[1].1;
            for y in spread((y0 + y1) / 2.0 - h / 2.0, y0 + 2.0, y1 - 2.0 - h) {
                out.push(at(x + 8.0, y));
            }
        }
        Route::Loop => {
            // Beside the loop, away from the node's middle; further out where that is taken.
            let (x, y) = points[0];
            let left = points[1].0 < x;
            for dx in [0.0, 40.0, 80.0] {
                for dy in [0.0, -LINE_H, LINE_H * 0.5, -2.0 * LINE_H] {
                    let lx = if left {
                        x - 42.0 - w - dx
                    } else {
                        x + 42.0 + dx
                    };
                    out.push(at(lx, y - 34.0 + dy));
                }
            }
        }
        Route::Across | Route::Bottom => {
            let (a, b) = points
                .windows(2)
                .map(|p| (p[0], p[1]))
                .filter(|(a, b)| (a.1 - b.1).abs() < 0.5)
                .max_by(|x, y| (x.0.0 - x.1.0).abs().total_cmp(&(y.0.0 - y.1.0).abs()))
                .unwrap_or((points[0], points[1]));
            let (low, high) = (a.0.min(b.0), a.0.max(b.0));
            let mid = (low + high) / 2.0;
            for x in spread(mid - w / 2.0, low + 4.0, high - 4.0 - w) {
                for dy in [-h - ZONE - 1.0, ZONE + 1.0] {
                    out.push(at(x, a.1 + dy));
                }
            }
            if out.is_empty() {
                out.push(at(mid - w / 2.0, a.1 - h - ZONE - 1.0));
            }
        }
        Route::Lane(side) => {
            let lane = points[1].0;
            let ys: Vec<f64> = points.iter().map(|p| p.1).collect();
            let low = ys.iter().copied().fold(f64::MAX, f64::min);
            let high = ys.iter().copied().fold(f64::MIN, f64::max);
            // Outside the lane first; inside where the canvas ends (the outermost lanes).
            let (outside, inside) = (lane - 4.0 - w, lane + 4.0);
            let xs = match side {
                Side::Left => [outside, inside],
                Side::Right => [inside, outside],
            };
            for x in xs {
                for y in spread((low + high) / 2.0 - h / 2.0, low + 4.0, high - 4.0 - h) {
                    out.push(at(x, y));
                }
            }
            if out.is_empty() {
                out.push(at(xs[0], (low + high) / 2.0 - h / 2.0));
            }
        }
    }
    out
}

/// Positions from `mid` outwards in steps of half a line, within `[low, high]`.
fn spread(mid: f64, low: f64, high: f64) -> Vec<f64> {
    let mut out = Vec::new();
    if mid >= low && mid <= high {
        out.push(mid);
    }
    let mut step = LINE_H / 2.0;
    while mid - step >= low || mid + step <= high {
        if mid - step >= low && mid - step <= high {
            out.push(mid - step);
        }
        if mid + step <= high && mid + step >= low {
            out.push(mid + step);
        }
        step += LINE_H / 2.0;
    }
    out
}

fn path(points: &[(f64, f64)]) -> String {
    let mut d = String::new();
    for (k, (x, y)) in points.iter().enumerate() {
        let _ = write!(d, "{}{x:.1},{y:.1} ", if k == 0 { 'M' } else { 'L' });
    }
    d.trim_end().to_string()
}

/// Where an edge leaves or enters a node: which side, for ports.
fn side_of(at: From, other: From, route: Route) -> char {
    let x = center(at).0;
    match route {
        Route::Lane(Side::Left) if x == CENTER => 'L',
        Route::Lane(Side::Right) if x == CENTER => 'R',
        Route::Lane(_) if x == LEFT => 'R',
        Route::Lane(_) => 'L',
        Route::Across if center(other).0 > x => 'R',
        Route::Across => 'L',
        _ => 'B',
    }
}

/// A shape's edges drawn, before its label: the shape, its paths, which end in an arrowhead,
/// and the points its label is placed along.
type Geometry = (usize, Vec<String>, Vec<bool>, Vec<(f64, f64)>);

/// A node's side: its centre and `L`, `R` or `B`.
type NodeSide = (i64, i64, char);
/// An edge end on a node's side: the other end's height, the edge's id, whether it starts here.
type Attachment = (f64, usize, bool);

/// Lays out every shape: ports, lanes, and a free place for each label.
pub(super) fn lay_out(report: &GraphReport) -> Layout {
    let edges: Vec<(&EdgeKey, &BTreeMap<EventKind, u64>)> = report.graph.edges.iter().collect();
    let shapes = shapes(report);
    // Lanes: on each side, the shortest spans nearest the lifecycle.
    let span = |s: &Shape| {
        let ys: Vec<f64> = s
            .members
            .iter()
            .flat_map(|&i| {
                [
                    center(edges[i].0.from).1,
                    center(From::State(edges[i].0.to)).1,
                ]
            })
            .collect();
        ys.iter().copied().fold(f64::MIN, f64::max) - ys.iter().copied().fold(f64::MAX, f64::min)
    };
    let mut lane_of: HashMap<usize, usize> = HashMap::new();
    for side in [Side::Left, Side::Right] {
        let mut on_side: Vec<usize> = (0..shapes.len())
            .filter(|&s| shapes[s].route == Route::Lane(side))
            .collect();
        on_side.sort_by(|&a, &b| {
            span(&shapes[a])
                .total_cmp(&span(&shapes[b]))
                .then(a.cmp(&b))
        });
        for (k, s) in on_side.into_iter().enumerate() {
            lane_of.insert(s, k);
        }
    }
    // Ports: the edges meeting a node's side, spread along it by the other end's height. A
    // bus meets its target once.
    let mut at_side: BTreeMap<NodeSide, Vec<Attachment>> = BTreeMap::new();
    for (s, shape) in shapes.iter().enumerate() {
        if !matches!(shape.route, Route::Lane(_) | Route::Across) {
            continue;
        }
        for (m, &i) in shape.members.iter().enumerate() {
            let (key, _) = edges[i];
            let to = From::State(key.to);
            let mut ends = vec![(key.from, to, true)];
            if m == 0 || shape.members.len() == 1 {
                ends.push((to, key.from, false));
            }
            for (here, other, is_from) in ends {
                let (x, y) = center(here);
                let side = side_of(here, other, shape.route);
                // Across: both ends at one height, the source's.
                if shape.route == Route::Across && !is_from {
                    continue;
                }
                at_side
                    .entry((x as i64, y as i64, side))
                    .or_default()
                    .push((center(other).1, s * 64 + m, is_from));
            }
        }
    }
    let mut port: HashMap<(usize, bool), f64> = HashMap::new();
    for (_, mut list) in at_side {
        list.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let n = list.len();
        for (k, (_, id, is_from)) in list.into_iter().enumerate() {
            let offset = if n == 1 {
                0.0
            } else {
                -NODE_H / 2.0 + 7.0 + (NODE_H - 14.0) * k as f64 / (n - 1) as f64
            };
            port.insert((id, is_from), offset);
        }
    }
    let mut placed: Vec<LabelBox> = drawn_states().map(|s| node_box(From::State(s))).collect();
    if edges.iter().any(|(k, _)| k.from == From::Any) {
        placed.push(node_box(From::Any));
    }
    let mut out = Vec::new();
    let mut bottoms = 0;
    let mut lowest = row_y(7.0) + NODE_H;
    let weight = |s: &Shape| -> u64 {
        s.members
            .iter()
            .map(|&i| edges[i].1.values().sum::<u64>())
            .sum()
    };
    // The busiest edges get the best places for their labels, unexpected ones first among
    // equals; faint ones (no label) last.
    let mut order: Vec<usize> = (0..shapes.len()).collect();
    order.sort_by_key(|&s| {
        (
            shapes[s].kind == Kind::Rule,
            std::cmp::Reverse(weight(&shapes[s])),
            shapes[s].kind != Kind::Unexpected,
            s,
        )
    });
    let (half_w, half_h) = (NODE_W / 2.0, NODE_H / 2.0);
    // The unexpected shapes beyond the most frequent are listed below the picture instead:
    // a picture of every rare pair is one nobody can read.
    let mut unexpected: Vec<usize> = (0..shapes.len())
        .filter(|&s| shapes[s].kind == Kind::Unexpected)
        .collect();
    unexpected.sort_by_key(|&s| (std::cmp::Reverse(weight(&shapes[s])), s));
    let mut listed: Vec<usize> = unexpected.split_off(unexpected.len().min(MAX_UNEXPECTED));
    // Geometry first, so that every label can keep clear of every edge's ends.
    let mut geometry: Vec<Geometry> = Vec::new();
    let mut zones: Vec<LabelBox> = Vec::new();
    for &s in &order {
        if listed.contains(&s) {
            continue;
        }
        let shape = &shapes[s];
        let mut paths = Vec::new();
        let mut arrows = Vec::new();
        let mut all_points = Vec::new();
        let mut bus_points = Vec::new();
        match shape.route {
            Route::Down => {
                let (key, _) = edges[shape.members[0]];
                let (fx, fy) = center(key.from);
                let (_, ty) = center(From::State(key.to));
                all_points = vec![(fx, fy + half_h), (fx, ty - half_h)];
                paths.push(path(&all_points));
                arrows.push(true);
            }
            Route::Loop => {
                // An unexpected loop on the right of the node's top, so that it never hides
                // the expected one on the left.
                let (key, _) = edges[shape.members[0]];
                let (fx, fy) = center(key.from);
                let (x, d) = match shape.kind {
                    Kind::Unexpected => (fx + 20.0, 1.0),
                    _ => (fx - 20.0, -1.0),
                };
                let y = fy - half_h;
                all_points = vec![(x, y), (x + d * 34.0, y)];
                paths.push(format!(
                    "M{:.1},{:.1} C{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}",
                    x,
                    y,
                    x,
                    y - 34.0,
                    x + d * 34.0,
                    y - 34.0,
                    x + d * 34.0,
                    y
                ));
                arrows.push(true);
            }
            Route::Across => {
                let (key, _) = edges[shape.members[0]];
                let (fx, fy) = center(key.from);
                let (tx, _) = center(From::State(key.to));
                let dir = if tx > fx { 1.0 } else { -1.0 };
                let y = fy + port.get(&(s * 64, true)).copied().unwrap_or(0.0);
                all_points = vec![(fx + dir * half_w, y), (tx - dir * half_w, y)];
                paths.push(path(&all_points));
                arrows.push(true);
            }
            Route::Lane(side) => {
                let lane = match side {
                    Side::Left => CENTER - half_w - 16.0 - LANE_GAP * lane_of[&s] as f64,
                    Side::Right => CENTER + half_w + 16.0 + LANE_GAP * lane_of[&s] as f64,
                };
                let (first, _) = edges[shape.members[0]];
                let to = From::State(first.to);
                let (tx, ty) = center(to);
                let end_x = if tx < lane { tx + half_w } else { tx - half_w };
                let end_y = ty + port.get(&(s * 64, false)).copied().unwrap_or(0.0);
                let mut ys = vec![end_y];
                for (m, &i) in shape.members.iter().enumerate() {
                    let (key, _) = edges[i];
                    let (fx, fy) = center(key.from);
                    let start_x = if fx < lane { fx + half_w } else { fx - half_w };
                    let y = fy + port.get(&(s * 64 + m, true)).copied().unwrap_or(0.0);
                    ys.push(y);
                    if shape.members.len() == 1 {
                        all_points = vec![(start_x, y), (lane, y), (lane, end_y), (end_x, end_y)];
                        paths.push(path(&all_points));
                        arrows.push(true);
                    } else {
                        paths.push(path(&[(start_x, y), (lane, y)]));
                        arrows.push(false);
                        bus_points.push(vec![(start_x, y), (lane, y)]);
                    }
                }
                if shape.members.len() > 1 {
                    let low = ys.iter().copied().fold(f64::MAX, f64::min);
                    let high = ys.iter().copied().fold(f64::MIN, f64::max);
                    paths.push(path(&[(lane, low), (lane, high)]));
                    arrows.push(false);
                    paths.push(path(&[(lane, end_y), (end_x, end_y)]));
                    arrows.push(true);
                    bus_points.push(vec![(lane, end_y), (end_x, end_y)]);
                    all_points = vec![(lane, low), (lane, low), (lane, high)];
                }
                // A lane beyond the canvas, or through a side node, would mislead: the edge
                // is listed under the picture instead.
                let low = ys.iter().copied().fold(f64::MAX, f64::min);
                let high = ys.iter().copied().fold(f64::MIN, f64::max);
                let through = [State::PlannedReboot, State::Crashing, State::MachineReclaim]
                    .into_iter()
                    .map(|side| node_box(From::State(side)))
                    .any(|b| {
                        lane > b.x - 6.0 && lane < b.x + b.w + 6.0 && high > b.y && low < b.y + b.h
                    });
                if through || !(8.0..=WIDTH - 8.0).contains(&lane) {
                    listed.push(s);
                    continue;
                }
            }
            Route::Bottom => {
                let (key, _) = edges[shape.members[0]];
                let (fx, fy) = center(key.from);
                let (tx, ty) = center(From::State(key.to));
                let channel = row_y(8.0) + half_h + 24.0 + 16.0 * bottoms as f64;
                bottoms += 1;
                all_points = if key.from == From::Any {
                    let start = (if tx < fx { fx - half_w } else { fx + half_w }, fy);
                    vec![start, (tx, fy), (tx, ty + half_h)]
                } else {
                    let bottom_row = row_y(7.0);
                    let edge_x = |x: f64| if x > CENTER { WIDTH - 12.0 } else { 12.0 };
                    let outer = |x: f64| if x > CENTER { x + half_w } else { x - half_w };
                    let mut p = Vec::new();
                    if (fy - bottom_row).abs() < 1.0 {
                        p.extend([(fx, fy + half_h), (fx, channel)]);
                    } else {
                        p.extend([(outer(fx), fy), (edge_x(fx), fy), (edge_x(fx), channel)]);
                    }
                    if (ty - bottom_row).abs() < 1.0 {
                        p.extend([(tx, channel), (tx, ty + half_h)]);
                    } else {
                        p.extend([(edge_x(tx), channel), (edge_x(tx), ty), (outer(tx), ty)]);
                    }
                    p
                };
                lowest = lowest.max(channel).max(fy + half_h);
                paths.push(path(&all_points));
                arrows.push(true);
            }
        }
        if bus_points.is_empty() {
            zones.extend(end_zones(shape.route, &all_points));
        }
        for stub in &bus_points {
            zones.extend(end_zones(Route::Across, stub));
        }
        geometry.push((s, paths, arrows, all_points));
    }
    for (s, paths, arrows, all_points) in geometry {
        let shape = &shapes[s];
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
            let options = candidates(shape.route, &all_points, w, h);
            let fits = |b: &LabelBox| b.x >= 0.0 && b.x + b.w <= WIDTH && b.y >= 44.0;
            let free = options.iter().find(|b| {
                fits(b)
                    && !placed.iter().any(|p| p.overlaps(b))
                    && !zones.iter().any(|z| z.overlaps(b))
            });
            // Where no place is free, the shape is listed below the picture, not drawn with
            // its label on top of another.
            let Some(&label) = free else {
                listed.push(s);
                continue;
            };
            placed.push(label);
            lowest = lowest.max(label.y + label.h);
            Some(label)
        };
        out.push(Placed {
            paths,
            arrows,
            lines: shape.lines.clone(),
            label,
            kind: shape.kind,
        });
    }
    listed.sort_by_key(|&s| (std::cmp::Reverse(weight(&shapes[s])), s));
    let listed = listed
        .iter()
        .flat_map(|&s| shapes[s].members.iter())
        .map(|&i| {
            let (key, events) = edges[i];
            format!(
                "{} → {}: {}",
                node_name(key.from),
                key.to.name(),
                super::shape::edge_lines(key, events).join(", ")
            )
        })
        .collect();
    Layout {
        placed: out,
        lowest,
        listed,
    }
}

/// The most unexpected shapes a picture draws; the rest are listed below it.
const MAX_UNEXPECTED: usize = 12;
/// How far around an edge's end no label goes.
const ZONE: f64 = 5.0;

/// A laid-out picture.
pub(super) struct Layout {
    pub placed: Vec<Placed>,
    /// The lowest point anything is drawn at.
    pub lowest: f64,
    /// The edges not drawn, as lines of text.
    pub listed: Vec<String>,
}

/// The boxes around a drawn edge's two ends (a loop: all of it), where no label may go.
fn end_zones(route: Route, points: &[(f64, f64)]) -> Vec<LabelBox> {
    if route == Route::Loop {
        let ((a, y), (b, _)) = (points[0], points[1]);
        return vec![LabelBox {
            x: a.min(b) - ZONE,
            y: y - 30.0,
            w: (a - b).abs() + 2.0 * ZONE,
            h: 30.0,
        }];
    }
    let n = points.len();
    if n < 2 {
        return Vec::new();
    }
    let zone = |(x, y): (f64, f64), (tx, ty): (f64, f64)| {
        // The first 22 px from the end towards the next point.
        let len = ((tx - x).powi(2) + (ty - y).powi(2)).sqrt().max(1.0);
        let reach = len.min(22.0);
        let (ex, ey) = (x + (tx - x) / len * reach, y + (ty - y) / len * reach);
        LabelBox {
            x: x.min(ex) - ZONE,
            y: y.min(ey) - ZONE,
            w: (x - ex).abs() + 2.0 * ZONE,
            h: (y - ey).abs() + 2.0 * ZONE,
        }
    };
    vec![
        zone(points[0], points[1]),
        zone(points[n - 1], points[n - 2]),
    ]
}
