//! A progress bar on stderr for long runs: bytes read, rate and ETA. Shown only when stderr is
//! a terminal, not under CI, not with `--quiet`, and only once a run has taken a second.

use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long a run goes before the bar appears.
const DELAY: Duration = Duration::from_secs(1);
/// How often the bar reads the counter.
const TICK: Duration = Duration::from_millis(100);

/// A running progress display; [`Progress::finish`] removes it.
pub(crate) struct Progress {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

/// Whether a bar may be shown at all: on a terminal, outside CI.
pub(crate) fn wanted() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("CI").is_none()
}

impl Progress {
    /// Does nothing.
    pub fn none() -> Progress {
        Progress {
            stop: None,
            thread: None,
        }
    }

    /// Watches `counter` grow towards `total` bytes.
    pub fn start(counter: Arc<AtomicU64>, total: u64) -> Progress {
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            if !matches!(stopped.recv_timeout(DELAY), Err(RecvTimeoutError::Timeout)) {
                return;
            }
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {bar:40} {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} ETA {eta}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            loop {
                bar.set_position(counter.load(Ordering::Relaxed).min(total));
                match stopped.recv_timeout(TICK) {
                    Err(RecvTimeoutError::Timeout) => {}
                    _ => break,
                }
            }
            bar.finish_and_clear();
        });
        Progress {
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// Removes the bar (if it was ever shown) before the results are printed.
    pub fn finish(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
