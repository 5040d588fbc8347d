//! The window a view counts in, and the clock it counts back from: the newest event in the
//! input (one more pass) unless `--now` says otherwise.

use std::ops::AddAssign;

use anyhow::Result;

use super::inputs::Inputs;
use crate::aggregate::{Counting, Summary};
use crate::window::{Period, Shown, Window, WindowSpec};

/// The newest event in the input, machine by machine (one more pass over the input, for a
/// window counted back from the data's own clock).
#[derive(Default)]
struct Clock(Option<chrono::DateTime<chrono::Utc>>);

impl AddAssign for Clock {
    fn add_assign(&mut self, other: Clock) {
        self.0 = self.0.max(other.0);
    }
}

impl Inputs {
    /// The window a view counts in, and the `--now` it was counted back from. A window
    /// relative to the data's own clock needs the newest event first: one more pass.
    /// A window that ends before it begins is a usage error: a gate over it would pass on
    /// nothing.
    pub fn window(
        &self,
        spec: &WindowSpec,
    ) -> Result<(Window, Option<chrono::DateTime<chrono::Utc>>)> {
        let newest = if spec.needs_data_clock() {
            // Its problems are the counting pass's too, and told once, from that pass.
            let clock: Clock = self
                .fold(|clock: &mut Clock, merged| {
                    clock.0 = clock.0.max(merged.log.newest_event());
                })
                .value;
            clock.0
        } else {
            None
        };
        let now = spec.now(newest);
        let window = spec.resolve(now);
        if let (Some(since), Some(until)) = (window.since, window.until)
            && since >= until
        {
            anyhow::bail!(
                "the window is empty: --since {} is not before --until {}",
                crate::event::format_time(since),
                crate::event::format_time(until)
            );
        }
        Ok((window, now))
    }
}

/// What a view counts: the window (with one more pass first where it counts back from the
/// data's own clock), and the trend periods.
pub fn counted(
    inputs: &Inputs,
    spec: &WindowSpec,
    period: Option<Period>,
) -> Result<(Counting, Pending)> {
    let (window, now) = inputs.window(spec)?;
    Ok((
        Counting {
            window,
            period,
            breakdown: None,
        },
        Pending {
            window,
            now,
            spec: *spec,
        },
    ))
}

/// The window to show once the input was read: `--now` from the data's clock is the newest
/// event, known by then.
pub struct Pending {
    window: Window,
    now: Option<chrono::DateTime<chrono::Utc>>,
    spec: WindowSpec,
}

impl Pending {
    /// The window as output shows it.
    pub fn seen(&self, summary: &Summary) -> Shown {
        self.seen_at(summary.newest_event)
    }

    /// The window as output shows it, given the newest event read.
    pub fn seen_at(&self, newest: Option<chrono::DateTime<chrono::Utc>>) -> Shown {
        Shown {
            window: self.window,
            now: self.now.or_else(|| self.spec.now(newest)),
        }
    }
}
