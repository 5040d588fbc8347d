//! How the edges run: edges grouped into shapes (one edge, or a bus of edges of one event
//! into a side state), lanes beside the lifecycle (the shortest nearest), ports spread along a
//! node's side, and each shape's paths with the points its label may go along.

use std::collections::{BTreeMap, HashMap};

use super::grid::{
    CENTER, LANE_GAP, LabelBox, NODE_H, NODE_W, Route, Side, WIDTH, center, node_box, path, route,
    row_y, side_of,
};
use crate::event::{EventKind, State};
use crate::graph::{EdgeKey, EdgeKind, Source};
use crate::render::reports::GraphReport;

/// An edge of the graph, with its events and counts.
pub(super) type Edge<'g> = (&'g EdgeKey, &'g BTreeMap<EventKind, u64>);

/// What gets drawn for one or more edges.
pub(super) struct Shape {
    /// The edges drawn (one, or the members of a bus).
    pub members: Vec<usize>,
    pub route: Route,
    pub kind: EdgeKind,
    pub lines: Vec<String>,
}

/// The lines of a label: each event with its count where observed; a bus names its sources.
pub(super) fn shape_lines(
    graph_observed: bool,
    members: &[(&EdgeKey, &BTreeMap<EventKind, u64>)],
) -> Vec<String> {
    let (key, events) = members[0];
    if key.kind == EdgeKind::Rule && graph_observed {
        // A rule nobody took: faint, and unlabelled so that what happened stands out.
        return Vec::new();
    }
    let count = |events: &BTreeMap<EventKind, u64>| -> u64 { events.values().sum() };
    if members.len() == 1 {
        return events
            .iter()
            .map(|(event, n)| match key.kind {
                EdgeKind::Rule => event.name().to_string(),
                _ => format!("{} ×{n}", event.name()),
            })
            .collect();
    }
    let names: Vec<&str> = events.keys().map(|e| e.name()).collect();
    let mut lines = vec![names.join(", ")];
    for (member, events) in members {
        let source = match member.from {
            Source::State(state) => state.name(),
            Source::Any => "any state",
        };
        lines.push(match key.kind {
            EdgeKind::Rule => format!(" from {source}"),
            _ => format!(" from {source} ×{}", count(events)),
        });
    }
    lines
}

/// Groups edges into shapes: edges of the same events and kind from lifecycle states into
/// one side state share a bus.
pub(super) fn shapes(report: &GraphReport) -> Vec<Shape> {
    let edges: Vec<Edge> = report.graph.edges.iter().collect();
    let mut buses: BTreeMap<(Side, EdgeKind, State, Vec<EventKind>), Vec<usize>> = BTreeMap::new();
    let mut singles = Vec::new();
    for (i, (key, events)) in edges.iter().enumerate() {
        let r = route(key);
        let into_side = center(Source::State(key.to)).0 != CENTER;
        let from_center = matches!(key.from, Source::State(_)) && center(key.from).0 == CENTER;
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

/// One end of a shape's member edge on a node's side: the shape, the member, and whether the
/// edge starts there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) struct Port {
    pub shape: usize,
    pub member: usize,
    pub start: bool,
}

/// A node's side: its centre and `L`, `R` or `B`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct NodeSide {
    x: i64,
    y: i64,
    side: char,
}

/// Lanes: on each side, the shortest spans nearest the lifecycle.
pub(super) fn lanes(shapes: &[Shape], edges: &[Edge]) -> HashMap<usize, usize> {
    let span = |s: &Shape| {
        let ys: Vec<f64> = s
            .members
            .iter()
            .flat_map(|&i| {
                [
                    center(edges[i].0.from).1,
                    center(Source::State(edges[i].0.to)).1,
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
    lane_of
}

/// Ports: the edges meeting a node's side, spread along it by the other end's height (then by
/// shape and member); the offset of each from the side's middle. A bus meets its target once.
pub(super) fn ports(shapes: &[Shape], edges: &[Edge]) -> HashMap<Port, f64> {
    // Each end: the other end's height, and the port.
    let mut at_side: BTreeMap<NodeSide, Vec<(f64, Port)>> = BTreeMap::new();
    for (s, shape) in shapes.iter().enumerate() {
        if !matches!(shape.route, Route::Lane(_) | Route::Across) {
            continue;
        }
        for (m, &i) in shape.members.iter().enumerate() {
            let (key, _) = edges[i];
            let to = Source::State(key.to);
            let mut ends = vec![(key.from, to, true)];
            if m == 0 || shape.members.len() == 1 {
                ends.push((to, key.from, false));
            }
            for (here, other, start) in ends {
                let (x, y) = center(here);
                let side = side_of(here, other, shape.route);
                // Across: both ends at one height, the source's.
                if shape.route == Route::Across && !start {
                    continue;
                }
                let node_side = NodeSide {
                    x: x as i64,
                    y: y as i64,
                    side,
                };
                let port = Port {
                    shape: s,
                    member: m,
                    start,
                };
                at_side
                    .entry(node_side)
                    .or_default()
                    .push((center(other).1, port));
            }
        }
    }
    let mut offsets = HashMap::new();
    for (_, mut list) in at_side {
        list.sort_by(|a, b| {
            a.0.total_cmp(&b.0)
                .then((a.1.shape, a.1.member).cmp(&(b.1.shape, b.1.member)))
        });
        let n = list.len();
        for (k, (_, port)) in list.into_iter().enumerate() {
            let offset = if n == 1 {
                0.0
            } else {
                -NODE_H / 2.0 + 7.0 + (NODE_H - 14.0) * k as f64 / (n - 1) as f64
            };
            offsets.insert(port, offset);
        }
    }
    offsets
}

/// A shape's edges drawn, before its label.
pub(super) struct Drawn {
    pub shape: usize,
    pub paths: Vec<String>,
    /// Whether each path ends in an arrowhead (a bus's stubs do not).
    pub arrows: Vec<bool>,
    /// The points the label is placed along.
    pub points: Vec<(f64, f64)>,
    /// Where no label may go: around the edges' ends.
    pub zones: Vec<LabelBox>,
}

/// What drawing the shapes needs besides the shape: the edges, lanes, ports, and how many
/// edges run along the bottom so far.
pub(super) struct Canvas<'e> {
    pub edges: &'e [Edge<'e>],
    pub lane_of: HashMap<usize, usize>,
    pub port: HashMap<Port, f64>,
    pub bottoms: usize,
    /// The lowest point anything is drawn at.
    pub lowest: f64,
}

impl Canvas<'_> {
    fn offset(&self, shape: usize, member: usize, start: bool) -> f64 {
        self.port
            .get(&Port {
                shape,
                member,
                start,
            })
            .copied()
            .unwrap_or(0.0)
    }

    /// Draws shape `s`; `None` where drawing it would mislead (a lane beyond the canvas, or
    /// through a side node): it is listed under the picture instead.
    pub fn draw(&mut self, s: usize, shape: &Shape) -> Option<Drawn> {
        let edges = self.edges;
        let (half_w, half_h) = (NODE_W / 2.0, NODE_H / 2.0);
        let mut paths = Vec::new();
        let mut arrows = Vec::new();
        let mut all_points = Vec::new();
        let mut bus_points = Vec::new();
        match shape.route {
            Route::Down => {
                let (key, _) = edges[shape.members[0]];
                let (fx, fy) = center(key.from);
                let (_, ty) = center(Source::State(key.to));
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
                    EdgeKind::Unexpected => (fx + 20.0, 1.0),
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
                let (tx, _) = center(Source::State(key.to));
                let dir = if tx > fx { 1.0 } else { -1.0 };
                let y = fy + self.offset(s, 0, true);
                all_points = vec![(fx + dir * half_w, y), (tx - dir * half_w, y)];
                paths.push(path(&all_points));
                arrows.push(true);
            }
            Route::Lane(side) => {
                let lane = match side {
                    Side::Left => CENTER - half_w - 16.0 - LANE_GAP * self.lane_of[&s] as f64,
                    Side::Right => CENTER + half_w + 16.0 + LANE_GAP * self.lane_of[&s] as f64,
                };
                let (first, _) = edges[shape.members[0]];
                let to = Source::State(first.to);
                let (tx, ty) = center(to);
                let end_x = if tx < lane { tx + half_w } else { tx - half_w };
                let end_y = ty + self.offset(s, 0, false);
                let mut ys = vec![end_y];
                for (m, &i) in shape.members.iter().enumerate() {
                    let (key, _) = edges[i];
                    let (fx, fy) = center(key.from);
                    let start_x = if fx < lane { fx + half_w } else { fx - half_w };
                    let y = fy + self.offset(s, m, true);
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
                let low = ys.iter().copied().fold(f64::MAX, f64::min);
                let high = ys.iter().copied().fold(f64::MIN, f64::max);
                let through = [State::PlannedReboot, State::Crashing, State::MachineReclaim]
                    .into_iter()
                    .map(|side| node_box(Source::State(side)))
                    .any(|b| {
                        lane > b.x - 6.0 && lane < b.x + b.w + 6.0 && high > b.y && low < b.y + b.h
                    });
                if through || !(8.0..=WIDTH - 8.0).contains(&lane) {
                    return None;
                }
            }
            Route::Bottom => {
                let (key, _) = edges[shape.members[0]];
                let (fx, fy) = center(key.from);
                let (tx, ty) = center(Source::State(key.to));
                let channel = row_y(8.0) + half_h + 24.0 + 16.0 * self.bottoms as f64;
                self.bottoms += 1;
                all_points = if key.from == Source::Any {
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
                self.lowest = self.lowest.max(channel).max(fy + half_h);
                paths.push(path(&all_points));
                arrows.push(true);
            }
        }
        let mut zones = Vec::new();
        if bus_points.is_empty() {
            zones.extend(end_zones(shape.route, &all_points));
        }
        for stub in &bus_points {
            zones.extend(end_zones(Route::Across, stub));
        }
        Some(Drawn {
            shape: s,
            paths,
            arrows,
            points: all_points,
            zones,
        })
    }
}

/// How far around an edge's end no label goes.
pub(super) const ZONE: f64 = 5.0;

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
