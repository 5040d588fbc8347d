//! The server against handlers that panic or take long, and clients that send nothing.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use super::{Handler, Limits, Request, Response, Server};

struct Paths;

/// More than a socket's buffers hold (at most a few MiB each side): a client that does not
/// read leaves most of it unwritten.
static BIG: LazyLock<Arc<[u8]>> = LazyLock::new(|| Arc::from(vec![b'x'; 24 << 20]));

impl Handler for Paths {
    fn respond(&self, request: &Request) -> Option<Response> {
        match request.path.as_str() {
            "/ok" => Some(Response::text(200, "ok\n")),
            "/panic" => panic!("a handler's bug"),
            "/slow" => {
                std::thread::sleep(Duration::from_millis(400));
                Some(Response::text(200, "slow\n"))
            }
            "/big" => Some(Response {
                status: 200,
                content_type: "text/plain",
                body: Arc::clone(&BIG),
            }),
            _ => None,
        }
    }
}

fn serve(limits: Limits) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    Server::start(listener, Arc::new(Paths), limits).unwrap()
}

fn status(server: &Server, text: &str) -> u16 {
    let mut stream = TcpStream::connect(server.addr()).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream.write_all(text.as_bytes()).unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

fn get(server: &Server, path: &str) -> u16 {
    status(server, &format!("GET {path} HTTP/1.1\r\n\r\n"))
}

#[test]
fn a_panic_is_a_500_and_the_workers_go_on() {
    let server = serve(Limits {
        workers: 1,
        ..Limits::default()
    });
    for _ in 0..3 {
        assert_eq!(get(&server, "/panic"), 500);
        assert_eq!(get(&server, "/ok"), 200);
    }
    assert_eq!(get(&server, "/elsewhere"), 404);
    assert_eq!(status(&server, "DELETE /ok HTTP/1.1\r\n\r\n"), 405);
}

#[test]
fn a_silent_client_is_answered_408_and_stop_does_not_wait_for_it() {
    let server = serve(Limits {
        head_time: Duration::from_millis(300),
        ..Limits::default()
    });
    let started = Instant::now();
    let mut silent = TcpStream::connect(server.addr()).unwrap();
    silent
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut answer = String::new();
    let _ = silent.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer:?}");
    assert!(started.elapsed() < Duration::from_secs(3));
    let _others: Vec<TcpStream> = (0..10)
        .map(|_| TcpStream::connect(server.addr()).unwrap())
        .collect();
    let stopping = Instant::now();
    server.stop();
    assert!(stopping.elapsed() < Duration::from_secs(2));
}

#[test]
fn a_full_queue_is_answered_503_at_once() {
    let server = Arc::new(serve(Limits {
        workers: 1,
        ..Limits::default()
    }));
    // One worker, a queue of four: of twelve slow requests at once some must be turned away.
    let asked: Vec<_> = (0..12)
        .map(|_| {
            let server = Arc::clone(&server);
            std::thread::spawn(move || get(&server, "/slow"))
        })
        .collect();
    let statuses: Vec<u16> = asked.into_iter().map(|t| t.join().unwrap()).collect();
    assert!(statuses.contains(&503), "{statuses:?}");
    assert!(statuses.contains(&200), "{statuses:?}");
    assert!(
        statuses.iter().all(|s| *s == 200 || *s == 503),
        "{statuses:?}"
    );
}

#[test]
fn clients_that_read_slowly_hold_no_worker() {
    let server = serve(Limits {
        workers: 1,
        write_time: Duration::from_secs(3),
        ..Limits::default()
    });
    // More clients than workers ask for an answer bigger than the sockets hold, and do not
    // read it.
    let stalled: Vec<TcpStream> = (0..4)
        .map(|_| {
            let mut s = TcpStream::connect(server.addr()).unwrap();
            s.write_all(b"GET /big HTTP/1.1\r\n\r\n").unwrap();
            s
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    assert_eq!(get(&server, "/ok"), 200);
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    // One that reads after a pause gets all of it; one that never reads is cut at the
    // deadline.
    std::thread::sleep(Duration::from_millis(500));
    let mut late = stalled.into_iter();
    let mut reader = late.next().unwrap();
    reader
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut answer = Vec::new();
    reader.read_to_end(&mut answer).unwrap();
    let head = b"HTTP/1.1 200 OK\r\n";
    assert!(answer.starts_with(head));
    assert!(answer.ends_with(&BIG[BIG.len() - 100..]));
    let at = answer.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    assert_eq!(answer.len() - at, BIG.len());
    std::thread::sleep(Duration::from_secs(3));
    let mut never = late.next().unwrap();
    never
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut cut = Vec::new();
    let _ = never.read_to_end(&mut cut);
    assert!(cut.len() < BIG.len(), "{}", cut.len());
    let stopping = Instant::now();
    server.stop();
    assert!(stopping.elapsed() < Duration::from_secs(3));
}
