//! The HTTP server `fsmlog watch` answers on (docs/watch.md, docs/decisions.md): std's
//! listener, httparse for the request head, and its own bounded threads, so that no client can
//! stall a scrape or the poll loop. One thread accepts connections and reads every request
//! head without blocking (a client that sends nothing, or a byte at a time, costs a slot among
//! a bounded number, never a thread, and is dropped after `head_time`); a complete head goes to
//! a fixed pool of workers through a bounded queue; a worker answers it with one response,
//! written at once where the socket takes it whole, else handed to one thread that writes
//! every slow client's answer without blocking, under a deadline (`send.rs`); then the
//! connection is closed. Only GET and HEAD are answered; a handler that panics answers 500.
//! Nothing here knows what is served.

mod head;
mod send;

use std::io::{self, ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub use head::Request;
use head::{Head, read_head};
use send::{Progress, Sending, send};

/// A handler's answer.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Arc<[u8]>,
}

impl Response {
    /// A plain-text answer.
    pub fn text(status: u16, text: &str) -> Response {
        Response {
            status,
            content_type: "text/plain; charset=utf-8",
            body: Arc::from(text.as_bytes()),
        }
    }
}

/// What answers the requests: `None` for a path it does not serve (404).
pub trait Handler: Send + Sync {
    fn respond(&self, request: &Request) -> Option<Response>;
}

/// How much the server takes on at once.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Threads that answer complete requests.
    pub workers: usize,
    /// Connections whose request head is still coming; past it, the oldest is dropped.
    pub pending: usize,
    /// The longest request head (request line and headers).
    pub head_bytes: usize,
    /// How long a client may take to send its request head.
    pub head_time: Duration,
    /// How long a client may take to read its response.
    pub write_time: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            workers: 4,
            pending: 128,
            head_bytes: 8 * 1024,
            head_time: Duration::from_secs(10),
            write_time: Duration::from_secs(10),
        }
    }
}

/// A running server; stopped (its threads joined) by [`Server::stop`] or when dropped.
pub struct Server {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

/// A complete request: its connection, and whether only the head is asked for (HEAD).
type Job = (TcpStream, Request, bool);

impl Server {
    /// Serves `listener` with `handler` on threads of its own.
    pub fn start(
        listener: TcpListener,
        handler: Arc<dyn Handler>,
        limits: Limits,
    ) -> io::Result<Server> {
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let (queue, jobs) = sync_channel::<Job>(limits.workers * 4);
        let jobs = Arc::new(Mutex::new(jobs));
        let (handoff, handed) = sync_channel::<Sending>(limits.pending.max(1));
        let mut threads = Vec::new();
        for n in 0..limits.workers.max(1) {
            let jobs = Arc::clone(&jobs);
            let handler = Arc::clone(&handler);
            let handoff = handoff.clone();
            threads.push(
                std::thread::Builder::new()
                    .name(format!("http-{n}"))
                    .spawn(move || work(&jobs, handler.as_ref(), &handoff, limits))?,
            );
        }
        // The workers hold the only senders: the writer ends once they are gone.
        drop(handoff);
        let flag = Arc::clone(&stop);
        threads.push(
            std::thread::Builder::new()
                .name("http-send".to_string())
                .spawn(move || send(&handed, &flag, limits.pending))?,
        );
        let flag = Arc::clone(&stop);
        threads.push(
            std::thread::Builder::new()
                .name("http-accept".to_string())
                .spawn(move || gather(&listener, &flag, &queue, limits))?,
        );
        Ok(Server {
            addr,
            stop,
            threads,
        })
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting, lets the workers finish what they write, and joins every thread.
    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // The accepting thread may be blocked in accept: a connection wakes it.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if !self.threads.is_empty() {
            self.halt();
        }
    }
}

/// A connection whose request head is still coming.
struct Pending {
    stream: TcpStream,
    head: Vec<u8>,
    since: Instant,
}

/// Accepts connections and reads their heads without blocking, handing complete GET and HEAD
/// requests to the workers and answering everything else at once.
fn gather(listener: &TcpListener, stop: &AtomicBool, queue: &SyncSender<Job>, limits: Limits) {
    let mut pending: std::collections::VecDeque<Pending> = Default::default();
    let mut chunk = [0u8; 2048];
    while !stop.load(Ordering::SeqCst) {
        // Blocks in accept while no head is coming: an idle server costs nothing.
        let _ = listener.set_nonblocking(!pending.is_empty());
        loop {
            match listener.accept() {
                Ok((stream, _)) => {
                    if stop.load(Ordering::SeqCst) {
                        return;
                    }
                    if stream.set_nonblocking(true).is_err() {
                        continue;
                    }
                    if pending.len() >= limits.pending {
                        // The oldest has had the longest to speak.
                        pending.pop_front();
                    }
                    pending.push_back(Pending {
                        stream,
                        head: Vec::new(),
                        since: Instant::now(),
                    });
                    let _ = listener.set_nonblocking(true);
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                // Out of descriptors, say: the pending heads first, and no spinning on it.
                Err(_) => {
                    std::thread::sleep(Duration::from_millis(50));
                    break;
                }
            }
        }
        let now = Instant::now();
        let mut heard = false;
        pending.retain_mut(|p| match p.stream.read(&mut chunk) {
            Ok(0) => false,
            Ok(n) => {
                heard = true;
                p.head.extend_from_slice(&chunk[..n]);
                match read_head(&p.head, limits.head_bytes) {
                    Head::Partial => true,
                    Head::Get(request, head_only) => {
                        hand(queue, &p.stream, request, head_only);
                        false
                    }
                    Head::Refused(status) => {
                        refuse(&p.stream, status);
                        false
                    }
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted => {
                if now.duration_since(p.since) < limits.head_time {
                    return true;
                }
                refuse(&p.stream, 408);
                false
            }
            Err(_) => false,
        });
        if !heard && !pending.is_empty() {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// A complete request to the workers; 503 when all are busy and the queue is full.
fn hand(queue: &SyncSender<Job>, stream: &TcpStream, request: Request, head_only: bool) {
    let Ok(stream) = stream.try_clone() else {
        return;
    };
    if let Err(TrySendError::Full((stream, ..))) = queue.try_send((stream, request, head_only)) {
        refuse(&stream, 503);
    }
}

/// A short answer written without waiting (it fits the socket's buffer), then closed.
fn refuse(mut stream: &TcpStream, status: u16) {
    let body = format!("{}\n", reason(status));
    let extra = if status == 405 {
        "Allow: GET, HEAD\r\n"
    } else {
        ""
    };
    let text = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n{extra}Connection: close\r\n\r\n{body}",
        reason(status),
        body.len()
    );
    let _ = stream.write_all(text.as_bytes());
    let _ = stream.shutdown(std::net::Shutdown::Both);
}

/// Answers the requests handed over until the queue closes.
fn work(
    jobs: &Mutex<Receiver<Job>>,
    handler: &dyn Handler,
    handoff: &SyncSender<Sending>,
    limits: Limits,
) {
    loop {
        let job = jobs.lock().unwrap_or_else(|e| e.into_inner()).recv();
        let Ok((stream, request, head_only)) = job else {
            return;
        };
        let answer = catch_unwind(AssertUnwindSafe(|| handler.respond(&request)))
            .unwrap_or_else(|_| Some(Response::text(500, "internal error\n")))
            .unwrap_or_else(|| Response::text(404, "not found\n"));
        write_response(stream, &answer, head_only, handoff, limits.write_time);
    }
}

/// Writes what of the response (without its body for HEAD) the socket takes now; the rest
/// goes to the writer, which gives up at the deadline, so that a client that reads slowly
/// never holds the worker. Where the writer has no slot left, the connection is dropped.
fn write_response(
    stream: TcpStream,
    response: &Response,
    head_only: bool,
    handoff: &SyncSender<Sending>,
    time: Duration,
) {
    if stream.set_nonblocking(true).is_err() {
        return;
    }
    let head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n",
        response.status,
        reason(response.status),
        response.content_type,
        response.body.len()
    );
    let mut sending = Sending {
        stream,
        head: head.into_bytes(),
        body: if head_only {
            Arc::from(&[][..])
        } else {
            Arc::clone(&response.body)
        },
        sent: 0,
        deadline: Instant::now() + time,
    };
    if matches!(sending.advance(), Progress::Moved | Progress::Blocked) {
        let _ = handoff.try_send(sending);
    }
}

/// The reason phrase of the statuses the server sends.
fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Unknown",
    }
}

#[cfg(test)]
mod tests;
