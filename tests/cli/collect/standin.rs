//! A metal-api stand-in on 127.0.0.1: `POST /v1/machine/ipmi/find` over a simulated fleet that
//! moves on, in metal-api's v1 `MachineIPMIResponse` shape (the 20 newest stored events, newest
//! first, with what a real answer carries besides: user data, SSH keys, the BMC's password),
//! and the last error event metal-api shows (an Alive it received in a state with no rule for
//! it is never stored, only shown there), checking metal-stack/security's HMAC (`mac.go`: type, RFC 3339 date no older than 15 s,
//! HMAC-SHA256 of date ‖ method ‖ salt) or a bearer token exactly, and failing on request.
//! It stops when dropped.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, TimeDelta, Utc};
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;

use fsmlog::sim::fleet;

/// metal-api's `RecentProvisioningEventsLimit`.
pub const WINDOW: usize = 20;

/// One stored event, as metal-api keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct Stored {
    pub time: String,
    pub event: String,
    pub message: String,
}

/// A machine of the simulated fleet: every event metal-api stored for it, oldest first.
#[derive(Debug, Clone)]
pub struct Machine {
    pub id: String,
    pub partition: String,
    pub stored: Vec<Stored>,
    /// Alive events metal-api received where no rule takes them (`fsm.go`: never stored, only
    /// made the last error event), each after how many stored events; at most one in a place.
    pub alive: Vec<(usize, Stored)>,
    /// metal-api's flags once every event is stored (shown from then on).
    pub crash_loop: bool,
    pub failed_machine_reclaim: bool,
}

/// What the stand-in does wrong, for the next requests.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fault {
    Status(u16),
    Slow(Duration),
    HalfBody,
    NotJson,
    Close,
}

/// How requests must be signed.
#[derive(Debug, Clone)]
pub enum Auth {
    Hmac { auth_type: String, key: String },
    Token(String),
}

struct State {
    fleet: Vec<Machine>,
    /// How many of its stored events each machine has shown so far.
    shown: usize,
    auth: Auth,
    faults: VecDeque<Fault>,
    /// Each request's path, body and whether it was let in.
    requests: Vec<(String, String, bool)>,
}

/// The running stand-in.
pub struct Standin {
    pub url: String,
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

fn time(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

/// `count` simulated machines (seeded) and one that sends two identical events in one
/// second, twice; `stored` events each.
pub fn simulated_fleet(count: u64, stored: usize) -> Vec<Machine> {
    let rules = fsmlog::Ruleset::resolve("metal-api").unwrap();
    let mut machines: Vec<Machine> = (0..count)
        .map(|index| {
            let sim = fleet::machine(38, index, stored, &rules);
            assert!(
                sim.container.events.len() < 100,
                "the container holds every event"
            );
            Machine {
                id: sim.id,
                partition: ["fra-equ01", "ams-ix02"][index as usize % 2].to_string(),
                stored: sim
                    .container
                    .events
                    .iter()
                    .rev()
                    .map(|e| Stored {
                        time: time(e.time),
                        event: e.event.name().to_string(),
                        message: e.message.to_string(),
                    })
                    .collect(),
                alive: Vec::new(),
                crash_loop: sim.container.crash_loop,
                failed_machine_reclaim: sim.container.failed_machine_reclaim,
            }
        })
        .collect();
    let start = DateTime::parse_from_rfc3339("2025-06-01T23:59:00Z")
        .unwrap()
        .with_timezone(&Utc);
    let cycle = [
        ("PXE Booting", "machine sent extended dhcp request"),
        ("PXE Booting", "machine sent extended dhcp request"),
        ("Preparing", "starting metal-hammer"),
        ("Registering", "start registering"),
        ("Waiting", "waiting for allocation"),
        ("Planned Reboot", "CYCLE"),
    ];
    let twin = (0..stored)
        .map(|i| {
            let (event, message) = cycle[i % cycle.len()];
            // The two PXE Booting of each cycle share their second.
            let second = (i / cycle.len() * cycle.len() + (i % cycle.len()).max(1)) as i64;
            Stored {
                time: time(start + TimeDelta::seconds(second * 7)),
                event: event.to_string(),
                message: message.to_string(),
            }
        })
        .collect();
    machines.push(Machine {
        id: "twin-pxe".to_string(),
        partition: "fra-equ01".to_string(),
        stored: twin,
        alive: Vec::new(),
        crash_loop: false,
        failed_machine_reclaim: false,
    });
    machines
}

/// A machine that provisions, phones home and reboots, `cycles` times, and each time receives
/// an Alive in Phoned Home and one in Planned Reboot, where metal-api has no rule for it.
pub fn alive_machine(cycles: usize) -> Machine {
    let start = DateTime::parse_from_rfc3339("2025-06-02T10:00:00Z")
        .unwrap()
        .with_timezone(&Utc);
    let cycle = [
        ("PXE Booting", "machine sent extended dhcp request"),
        ("Preparing", "starting metal-hammer"),
        ("Registering", "start registering"),
        ("Waiting", "waiting for allocation"),
        ("Installing", "start installation"),
        ("Booting New Kernel", "boot into distribution kernel"),
        ("Phoned Home", "phoned home"),
        ("Planned Reboot", "CYCLE"),
    ];
    let mut stored = Vec::new();
    let mut alive = Vec::new();
    let mut at = start;
    for _ in 0..cycles {
        for (event, message) in cycle {
            at += TimeDelta::seconds(40);
            stored.push(Stored {
                time: time(at),
                event: event.to_string(),
                message: message.to_string(),
            });
            let state = match event {
                "Phoned Home" => "phoned home",
                "Planned Reboot" => "planned reboot",
                _ => continue,
            };
            // metal-api stamps an event when it arrives, to the nanosecond.
            let arrived = at + TimeDelta::nanoseconds(17_000_000_123);
            alive.push((
                stored.len(),
                Stored {
                    time: time(arrived),
                    event: "Alive".to_string(),
                    message: format!("[unexpectedly received in state {state}]"),
                },
            ));
        }
    }
    Machine {
        id: "alive-unruled".to_string(),
        partition: "fra-equ01".to_string(),
        stored,
        alive,
        crash_loop: false,
        failed_machine_reclaim: false,
    }
}

/// Everything metal-api received of the fleet that it stored or showed, as fsmlog's raw
/// NDJSON, machine after machine: the stored events, and each Alive where it arrived.
pub fn whole_stream(fleet: &[Machine]) -> String {
    let mut out = String::new();
    let mut line = |id: &str, e: &Stored| {
        let line = json!({"machine": id, "time": e.time, "event": e.event, "message": e.message});
        out.push_str(&line.to_string());
        out.push('\n');
    };
    for m in fleet {
        for (i, e) in m.stored.iter().enumerate() {
            line(&m.id, e);
            for (_, alive) in m.alive.iter().filter(|(after, _)| *after == i + 1) {
                line(&m.id, alive);
            }
        }
    }
    out
}

impl Standin {
    /// Serves `fleet`, having shown `shown` events of each machine, to requests signed so.
    pub fn start(fleet: Vec<Machine>, shown: usize, auth: Auth) -> Standin {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(Mutex::new(State {
            fleet,
            shown,
            auth,
            faults: VecDeque::new(),
            requests: Vec::new(),
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let state = Arc::clone(&state);
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        return;
                    }
                    if let Ok(stream) = stream {
                        let state = Arc::clone(&state);
                        std::thread::spawn(move || serve(stream, &state));
                    }
                }
            })
        };
        Standin {
            url,
            state,
            stop,
            thread: Some(thread),
        }
    }

    /// The fleet moves on: each machine has now shown `shown` of its stored events.
    pub fn show(&self, shown: usize) {
        self.state.lock().unwrap().shown = shown;
    }

    /// The next requests fail so, one fault each.
    pub fn fail(&self, faults: &[Fault]) {
        self.state.lock().unwrap().faults.extend(faults);
    }

    /// Each request's (path, body, let in).
    pub fn requests(&self) -> Vec<(String, String, bool)> {
        self.state.lock().unwrap().requests.clone()
    }
}

impl Drop for Standin {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.url.trim_start_matches("http://"));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// security's `UserFromRequestData`, with metal-api's 15 s lifetime.
fn hmac_ok(auth_type: &str, key: &str, method: &str, headers: &[(String, String)]) -> bool {
    let get = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .unwrap_or("")
    };
    let parts: Vec<&str> = get("Authorization").split(' ').collect();
    if parts.len() != 2 || parts[0].trim() != auth_type {
        return false;
    }
    let Ok(date) = DateTime::parse_from_rfc3339(get("X-Date")) else {
        return false;
    };
    let date = date.with_timezone(&Utc);
    if Utc::now() - date > TimeDelta::seconds(15) {
        return false;
    }
    let mut mac = Hmac::<Sha256>::new_from_slice(key.as_bytes()).unwrap();
    mac.update(date.to_rfc3339_opts(SecondsFormat::Secs, true).as_bytes());
    mac.update(method.as_bytes());
    mac.update(get("X-Data-Salt").as_bytes());
    let want: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    parts[1].trim() == want
}

fn serve(mut stream: TcpStream, state: &Mutex<State>) {
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut first = String::new();
    if reader.read_line(&mut first).unwrap_or(0) == 0 {
        return;
    }
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let length: usize = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
    let body = String::from_utf8_lossy(&body).into_owned();
    let mut words = first.split_whitespace();
    let method = words.next().unwrap_or("").to_string();
    let path = words.next().unwrap_or("").to_string();
    let mut state = state.lock().unwrap();
    let let_in = match &state.auth {
        Auth::Hmac { auth_type, key } => hmac_ok(auth_type, key, &method, &headers),
        Auth::Token(token) => headers.iter().any(|(k, v)| {
            k.eq_ignore_ascii_case("Authorization") && *v == format!("Bearer {token}")
        }),
    };
    state.requests.push((path.clone(), body.clone(), let_in));
    if method != "POST" || path != "/v1/machine/ipmi/find" {
        return respond(&mut stream, 404, &error(404, "not found"));
    }
    if !let_in {
        return respond(&mut stream, 401, &error(401, "unauthenticated"));
    }
    let query: Value = match serde_json::from_str(&body) {
        Ok(v) => v,
        Err(_) => return respond(&mut stream, 400, &error(400, "no JSON")),
    };
    let fault = state.faults.pop_front();
    let answer = answer(&state, query.get("partition_id").and_then(Value::as_str));
    drop(state);
    match fault {
        None => respond(&mut stream, 200, &answer),
        Some(Fault::Status(code)) => respond(&mut stream, code, &error(code, "injected")),
        Some(Fault::Slow(wait)) => {
            std::thread::sleep(wait);
            respond(&mut stream, 200, &answer)
        }
        Some(Fault::NotJson) => respond(&mut stream, 200, "<html>gateway says hello</html>"),
        Some(Fault::HalfBody) => {
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                answer.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&answer.as_bytes()[..answer.len() / 2]);
            let _ = stream.shutdown(Shutdown::Both);
        }
        Some(Fault::Close) => {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }
}

fn error(code: u16, message: &str) -> String {
    json!({"statuscode": code, "message": message}).to_string()
}

fn respond(stream: &mut TcpStream, code: u16, body: &str) {
    let head = format!(
        "HTTP/1.1 {code} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body.as_bytes());
    let _ = stream.flush();
}

/// The v1 answer: each machine with its 20 newest shown events, newest first.
fn answer(state: &State, partition: Option<&str>) -> String {
    let machines: Vec<Value> = state
        .fleet
        .iter()
        .filter(|m| partition.is_none_or(|p| p == m.partition))
        .map(|m| {
            let shown = &m.stored[..state.shown.min(m.stored.len())];
            let all = shown.len() == m.stored.len();
            // The newest event metal-api took as unexpected: a stored one it prefixed, or an
            // Alive received since.
            let stored_error = shown
                .iter()
                .rposition(|e| e.message.starts_with("[unexpectedly received in "));
            let alive_error = m.alive.iter().rfind(|(after, _)| *after <= shown.len());
            let last_error = match (stored_error, alive_error) {
                (Some(i), Some((after, alive))) if *after > i => Some(alive),
                (Some(i), _) => Some(&shown[i]),
                (None, Some((_, alive))) => Some(alive),
                (None, None) => None,
            }
            .map(|e| json!({"time": e.time, "event": e.event, "message": e.message}));
            // An Alive after the newest stored event moved the container's time.
            let last_event_time = match alive_error {
                Some((after, alive)) if *after == shown.len() => Some(alive.time.clone()),
                _ => shown.last().map(|e| e.time.clone()),
            };
            let log: Vec<Value> = shown
                .iter()
                .rev()
                .take(WINDOW)
                .map(|e| json!({"time": e.time, "event": e.event, "message": e.message}))
                .collect();
            json!({
                "id": m.id,
                "name": m.id,
                "partition": {"id": m.partition, "name": m.partition},
                "rackid": "rack-1",
                "size": {"id": "c1-xlarge-x86"},
                "hardware": {"cpu_cores": 8, "disks": [], "memory": 1, "nics": []},
                "bios": {"vendor": "x", "version": "1", "date": "x"},
                "allocation": {
                    "hostname": format!("host-{}", m.id),
                    "project": "p-1",
                    "role": "machine",
                    "image": {"id": "ubuntu-24.04"},
                    "user_data": "I2Nsb3VkLWNvbmZpZyBzZWNyZXQ=",
                    "ssh_pub_keys": ["ssh-ed25519 AAAAC3NzaSECRETKEY op@example"],
                    "networks": [],
                    "succeeded": true
                },
                "state": {"value": "", "description": "", "metal_hammer_version": ""},
                "ledstate": {"value": "", "description": ""},
                "liveliness": "Alive",
                "tags": [],
                "events": {
                    "log": log,
                    "last_event_time": last_event_time,
                    "last_error_event": last_error,
                    "crash_loop": all && m.crash_loop,
                    "failed_machine_reclaim": all && m.failed_machine_reclaim
                },
                "ipmi": {
                    "address": "10.0.0.1:623",
                    "mac": "aa:bb:cc:dd:ee:ff",
                    "user": "ipmi-admin-user",
                    "password": "ipmi-secret-password",
                    "interface": "lanplus",
                    "fru": {"board_mfg": "Supermicro"},
                    "bmcversion": "1.0",
                    "powerstate": "ON",
                    "last_updated": "2025-06-01T00:00:00Z"
                }
            })
        })
        .collect();
    Value::Array(machines).to_string()
}
