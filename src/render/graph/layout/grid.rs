//! The fixed canvas: where each state's node sits, the sizes of nodes and label text, and how
//! an edge between two nodes runs (down the lifecycle, a loop, across, in a lane, along the
//! bottom).

use std::fmt::Write as _;

use crate::event::State;
use crate::graph::{EdgeKey, Source};

pub(crate) const WIDTH: f64 = 1000.0;
pub(crate) const NODE_W: f64 = 170.0;
pub(crate) const NODE_H: f64 = 44.0;
pub(crate) const ROW: f64 = 120.0;
pub(crate) const TOP: f64 = 100.0;
pub(crate) const CENTER: f64 = 500.0;
pub(crate) const LEFT: f64 = 130.0;
pub(crate) const RIGHT: f64 = 870.0;
/// Label text: 11 px monospace, so its width is known.
pub(crate) const CHAR_W: f64 = 6.7;
pub(crate) const LINE_H: f64 = 14.0;
pub(crate) const LANE_GAP: f64 = 13.0;

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

pub(crate) fn row_y(i: f64) -> f64 {
    TOP + i * ROW
}

/// Where a node sits.
pub(crate) fn center(from: Source) -> (f64, f64) {
    match from {
        Source::Any => (CENTER, row_y(8.0)),
        Source::State(state) => match state {
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

pub(crate) fn node_box(from: Source) -> LabelBox {
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
pub(crate) enum Side {
    Left,
    Right,
}

/// How an edge is drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Route {
    Down,
    Loop,
    Across,
    Lane(Side),
    Bottom,
}

pub(crate) fn route(key: &EdgeKey) -> Route {
    let to = Source::State(key.to);
    if key.from == to {
        return Route::Loop;
    }
    if key.from == Source::Any {
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

/// Where an edge leaves or enters a node: which side, for ports.
pub(crate) fn side_of(at: Source, other: Source, route: Route) -> char {
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

pub(crate) fn path(points: &[(f64, f64)]) -> String {
    let mut d = String::new();
    for (k, (x, y)) in points.iter().enumerate() {
        let _ = write!(d, "{}{x:.1},{y:.1} ", if k == 0 { 'M' } else { 'L' });
    }
    d.trim_end().to_string()
}
