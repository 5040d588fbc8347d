//! Where each label goes: the places along its edge, best first, and the first that meets no
//! node, no other label and no edge's end.

use super::grid::{LINE_H, LabelBox, Route, Side};
use super::routes::ZONE;

/// The places a label may go, best first.
pub(super) fn candidates(route: Route, points: &[(f64, f64)], w: f64, h: f64) -> Vec<LabelBox> {
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
pub(super) fn spread(mid: f64, low: f64, high: f64) -> Vec<f64> {
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
