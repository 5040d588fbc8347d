//! `fsmlog collect`: polls metal-api as metal-metrics-exporter does and keeps every stored
//! event once in a history directory every reading command reads (docs/history.md).
//! `source.rs` where to poll and how to sign in, `sign.rs` metal-stack's HMAC, `client.rs` one
//! poll, `answer.rs` its answer cut into machines, `shapes.rs` what of a polled machine is
//! kept, `align.rs` where a window continues the history, `history.rs` the directory written,
//! `tail.rs` what the next poll is aligned to, `tail_direct.rs` its file read
//! straight from its bytes, `quoted.rs` the lines of both written by hand.

mod align;
mod answer;
mod client;
mod history;
mod quoted;
mod shapes;
mod sign;
mod source;
mod tail;
mod tail_direct;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use anyhow::Result;
use chrono::{SecondsFormat, Utc};

pub use source::SourceOptions;

use crate::ending::say;
use crate::render::escape;
use client::Client;
pub use history::Appended;
use history::History;

/// What a collector does.
#[derive(Debug, Clone)]
pub struct Plan {
    pub source: SourceOptions,
    pub into: PathBuf,
    pub interval: Duration,
    pub timeout: Duration,
}

/// Whether the plan's source resolves (flags, variables, metalctl's config, the TLS
/// authority), without asking metal-api: a watch that cannot poll says so before it serves.
pub fn check_source(plan: &Plan) -> Result<()> {
    client(plan).map(drop)
}

/// The client for the plan's source, resolved from the options, the environment and
/// metalctl's config.
fn client(plan: &Plan) -> Result<Client> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let source = source::resolve(
        &plan.source,
        &|name| std::env::var(name).ok(),
        home.as_deref(),
        &cwd,
    )?;
    Client::new(source, plan.timeout)
}

fn open(plan: &Plan, observer: &mut dyn Observer) -> Result<History> {
    let (history, notes) = History::open(&plan.into)?;
    for note in notes {
        observer.said(&note);
    }
    Ok(history)
}

/// What became of one poll of the loop.
pub enum Polled<'a> {
    /// Polled and written, in this long.
    Written {
        appended: &'a Appended,
        took: Duration,
    },
    /// Polling or writing failed (`writing`), after this long.
    Failed {
        error: &'a anyhow::Error,
        writing: bool,
        took: Duration,
    },
}

/// Who hears what the loop has to say: `collect` says it on stderr, `watch` logs and judges.
pub trait Observer {
    /// After each poll.
    fn polled(&mut self, polled: Polled<'_>);
    /// Anything else: a torn line repaired, the wait before trying again, the stop.
    fn said(&mut self, line: &str);
}

/// `collect`'s own: each poll and each fault told on stderr.
struct Told {
    interval: Duration,
}

impl Observer for Told {
    fn polled(&mut self, polled: Polled<'_>) {
        match polled {
            Polled::Written { appended, .. } => tell(appended, self.interval),
            Polled::Failed {
                error,
                writing: true,
                ..
            } => say(&format!("collect: writing the history failed: {error:#}")),
            Polled::Failed { error, .. } => say(&format!("collect: the poll failed: {error:#}")),
        }
    }

    fn said(&mut self, line: &str) {
        say(&format!("collect: {line}"));
    }
}

fn tell(appended: &Appended, interval: Duration) {
    let now = Utc::now().to_rfc3339_opts(SecondsFormat::Secs, true);
    say(&format!(
        "collect: {now}: {} machines ({} new), {} new events, {} gaps",
        appended.machines,
        appended.new_machines,
        appended.events,
        appended.gaps.len()
    ));
    if !appended.gaps.is_empty() {
        let first = escape::text(&appended.gaps[0]).into_owned();
        say(&format!(
            "collect: {} machines (the first {first}) stored more events than a window holds \
             since the last poll: events may be lost, marked as gaps; poll more often than \
             every {}",
            appended.gaps.len(),
            humantime::format_duration(interval)
        ));
    }
}

/// One poll written: an error (nothing written) where metal-api cannot be read.
pub fn once(plan: &Plan) -> Result<()> {
    let client = client(plan)?;
    // Polled first: when metal-api cannot be read, not even the directory is made.
    let machines = client.poll()?;
    let mut history = open(
        plan,
        &mut Told {
            interval: plan.interval,
        },
    )?;
    tell(&history.append(machines)?, plan.interval);
    Ok(())
}

/// Polls metal-api on a thread of its own, so that a stop need not wait for an answer that
/// may take the whole timeout: `None` when `stop` was set first (the request is left to end
/// with the process; nothing of it is written).
fn poll_unless_stopped(
    client: &Arc<Client>,
    stop: &AtomicBool,
) -> Option<Result<Vec<shapes::Machine>>> {
    let (answer, answered) = channel();
    let asking = Arc::clone(client);
    let spawned = std::thread::Builder::new()
        .name("poll".to_string())
        .spawn(move || {
            let _ = answer.send(asking.poll());
        });
    if spawned.is_err() {
        return Some(client.poll());
    }
    loop {
        match answered.recv_timeout(Duration::from_millis(50)) {
            Ok(polled) => return Some(polled),
            Err(RecvTimeoutError::Disconnected) => {
                return Some(Err(anyhow::anyhow!("the poll ended without an answer")));
            }
            Err(RecvTimeoutError::Timeout) if stop.load(Ordering::SeqCst) => return None,
            Err(RecvTimeoutError::Timeout) => {}
        }
    }
}

/// Polls every interval until `stop` is set, finishing the poll under way. A poll that fails
/// is said and tried again after a back-off; only a history that cannot be opened ends it.
pub fn run(plan: &Plan, stop: &AtomicBool) -> Result<()> {
    let mut told = Told {
        interval: plan.interval,
    };
    run_observed(plan, stop, &mut told)
}

/// [`run`], each poll and each line handed to `observer`.
pub fn run_observed(plan: &Plan, stop: &AtomicBool, observer: &mut dyn Observer) -> Result<()> {
    let client = Arc::new(client(plan)?);
    let mut history = Some(open(plan, observer)?);
    let mut failures: u32 = 0;
    while !stop.load(Ordering::SeqCst) {
        let live = match history.as_mut() {
            Some(live) => live,
            None => history.insert(open(plan, observer)?),
        };
        let started = Instant::now();
        let Some(polled) = poll_unless_stopped(&client, stop) else {
            observer.said("stopped before metal-api answered: nothing of that poll is written");
            break;
        };
        match polled.map(|machines| live.append(machines)) {
            Ok(Ok(appended)) => {
                failures = 0;
                let took = started.elapsed();
                observer.polled(Polled::Written {
                    appended: &appended,
                    took,
                });
            }
            Ok(Err(error)) => {
                failures += 1;
                let took = started.elapsed();
                observer.polled(Polled::Failed {
                    error: &error,
                    writing: true,
                    took,
                });
                // What is on disk is learnt again (a torn line repaired) before the next poll.
                history = None;
            }
            Err(error) => {
                failures += 1;
                let took = started.elapsed();
                observer.polled(Polled::Failed {
                    error: &error,
                    writing: false,
                    took,
                });
            }
        }
        let wait = if failures == 0 {
            plan.interval
        } else {
            back_off(plan.interval, failures)
        };
        if failures > 0 {
            observer.said(&format!(
                "trying again in {}",
                humantime::format_duration(Duration::from_millis(wait.as_millis() as u64))
            ));
        }
        sleep(wait, stop);
    }
    observer.said("stopped");
    Ok(())
}

/// After `failures` failed polls in a row: a sixteenth of the interval, doubled each time, at
/// most the interval.
fn back_off(interval: Duration, failures: u32) -> Duration {
    let base = (interval / 16).max(Duration::from_millis(100));
    base.saturating_mul(1 << failures.saturating_sub(1).min(16))
        .min(interval)
}

/// Sleeps `wait`, waking early when `stop` is set.
fn sleep(wait: Duration, stop: &AtomicBool) {
    let until = Instant::now() + wait;
    while !stop.load(Ordering::SeqCst) {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        std::thread::sleep(left.min(Duration::from_millis(50)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_back_off_doubles_up_to_the_interval() {
        let interval = Duration::from_secs(80);
        let waits: Vec<u64> = (1..=6).map(|n| back_off(interval, n).as_secs()).collect();
        assert_eq!(waits, [5, 10, 20, 40, 80, 80]);
    }
}
