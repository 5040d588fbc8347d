//! Answers that did not fit the socket at once, written by one thread for every client
//! without blocking: a client that reads slowly (a big `/metrics` over a slow link, or one
//! that never reads) holds a slot here until its deadline, never a worker, so it cannot
//! keep a scrape waiting.

use std::collections::VecDeque;
use std::io::{ErrorKind, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

/// One answer on its way: the head, then the body, from `sent` on.
pub struct Sending {
    pub stream: TcpStream,
    pub head: Vec<u8>,
    pub body: Arc<[u8]>,
    pub sent: usize,
    pub deadline: Instant,
}

/// What one attempt to write made of an answer.
#[derive(Debug, PartialEq, Eq)]
pub enum Progress {
    /// All of it written, the connection closed for writing.
    Done,
    /// Some written, more to come.
    Moved,
    /// The client's window is full: nothing written.
    Blocked,
    /// The connection failed.
    Failed,
}

impl Sending {
    /// Writes what the socket takes now, without waiting (the stream is non-blocking).
    pub fn advance(&mut self) -> Progress {
        let mut moved = false;
        loop {
            let piece = if self.sent < self.head.len() {
                &self.head[self.sent..]
            } else {
                &self.body[self.sent - self.head.len()..]
            };
            if piece.is_empty() {
                let _ = (&self.stream).flush();
                let _ = self.stream.shutdown(Shutdown::Write);
                return Progress::Done;
            }
            match (&self.stream).write(piece) {
                Ok(0) => return Progress::Failed,
                Ok(n) => {
                    self.sent += n;
                    moved = true;
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    return if moved {
                        Progress::Moved
                    } else {
                        Progress::Blocked
                    };
                }
                Err(_) => return Progress::Failed,
            }
        }
    }
}

/// How long answers under way may go on once the server stops.
const STOP_GRACE: Duration = Duration::from_secs(1);

/// Writes the answers handed over until every worker is gone and each is written, failed or
/// past its deadline; at most `slots` at once (past it, the oldest is dropped).
pub fn send(handed: &Receiver<Sending>, stop: &AtomicBool, slots: usize) {
    let mut sending: VecDeque<Sending> = VecDeque::new();
    let mut open = true;
    let mut stopped: Option<Instant> = None;
    loop {
        if sending.is_empty() {
            if !open {
                return;
            }
            // Nothing under way: wait for the next without spinning.
            match handed.recv() {
                Ok(s) => sending.push_back(s),
                Err(_) => return,
            }
        }
        loop {
            match handed.try_recv() {
                Ok(s) => {
                    if sending.len() >= slots.max(1) {
                        sending.pop_front();
                    }
                    sending.push_back(s);
                }
                Err(std::sync::mpsc::TryRecvError::Empty) => break,
                Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                    open = false;
                    break;
                }
            }
        }
        let now = Instant::now();
        if stop.load(Ordering::SeqCst) {
            let since = *stopped.get_or_insert(now);
            if now.duration_since(since) >= STOP_GRACE {
                return;
            }
        }
        let mut moved = false;
        sending.retain_mut(|s| match s.advance() {
            Progress::Done | Progress::Failed => false,
            Progress::Moved => {
                moved = true;
                now < s.deadline
            }
            Progress::Blocked => now < s.deadline,
        });
        if !moved && !sending.is_empty() {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}
