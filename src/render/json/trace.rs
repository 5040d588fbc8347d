//! `replay -o json` and `-o ndjson`: machines streamed as they are replayed.

use std::io::{self, Write};

use serde::Serialize;

use super::safe;
use crate::event::{State, format_time as time};
use crate::render::reports::TraceRenderer;
use crate::replay::{Container, Step, StoredEvent, Trace};

#[derive(Serialize)]
struct MachineJson<'a> {
    machine: &'a str,
    /// The machine's id again, as metalctl's JSON names it (`--template '{{ .id }}'`).
    id: &'a str,
    source: &'a str,
    state: &'static str,
    container: ContainerJson<'a>,
    steps: Vec<StepJson<'a>>,
    /// The exported last error event where it is no row of the log: judged (and counted by
    /// `report`) but not replayed.
    last_error_outside_log: Option<StepJson<'a>>,
}

#[derive(Serialize)]
struct ContainerJson<'a> {
    id: &'a str,
    liveliness: &'a str,
    events: Vec<StoredJson<'a>>,
    last_event_time: Option<String>,
    last_error_event: Option<StoredJson<'a>>,
    crash_loop: bool,
    failed_machine_reclaim: bool,
}

#[derive(Serialize)]
struct StoredJson<'a> {
    time: String,
    event: &'static str,
    message: &'a str,
}

#[derive(Serialize)]
struct StepJson<'a> {
    time: String,
    event: &'static str,
    message: &'a str,
    from: &'static str,
    verdict: &'static str,
    to: &'static str,
    stored: bool,
    recorded_state: Option<&'static str>,
}

fn stored(e: &StoredEvent) -> StoredJson<'_> {
    StoredJson {
        time: time(e.time),
        event: e.event.name(),
        message: &e.message,
    }
}

fn container<'a>(machine: &'a str, c: &'a Container) -> ContainerJson<'a> {
    ContainerJson {
        id: machine,
        liveliness: c.liveliness.name(),
        events: c.events.iter().map(stored).collect(),
        last_event_time: c.last_event_time.map(time),
        last_error_event: c.last_error_event.as_ref().map(stored),
        crash_loop: c.crash_loop,
        failed_machine_reclaim: c.failed_machine_reclaim,
    }
}

fn step(s: &Step) -> StepJson<'_> {
    StepJson {
        time: time(s.time),
        event: s.event.name(),
        message: &s.message,
        from: s.from.name(),
        verdict: s.handling.name(),
        to: s.to.name(),
        stored: s.stored,
        recorded_state: s.recorded_state.map(State::name),
    }
}

fn machine(trace: &Trace) -> MachineJson<'_> {
    MachineJson {
        machine: &trace.machine,
        id: &trace.machine,
        source: &trace.source,
        state: trace.container.state().name(),
        container: container(&trace.machine, &trace.container),
        steps: trace.steps.iter().map(step).collect(),
        last_error_outside_log: trace.last_error_only.as_ref().map(step),
    }
}

/// `replay -o json` (one document, machines streamed into its array) or `-o ndjson`.
pub struct TraceJson {
    lines: bool,
    written: usize,
}

impl TraceJson {
    /// One JSON document: `{"rules": …, "machines": [ … ]}`.
    pub fn array() -> Self {
        TraceJson {
            lines: false,
            written: 0,
        }
    }

    /// One machine object per line.
    pub fn lines() -> Self {
        TraceJson {
            lines: true,
            written: 0,
        }
    }
}

impl TraceRenderer for TraceJson {
    fn begin(&mut self, rules: &str, out: &mut dyn Write) -> io::Result<()> {
        if !self.lines {
            out.write_all(b"{\"rules\":")?;
            safe::compact(out, rules)?;
            out.write_all(b",\"machines\":[")?;
        }
        Ok(())
    }

    fn machine(&mut self, trace: &Trace, out: &mut dyn Write) -> io::Result<()> {
        if !self.lines && self.written > 0 {
            out.write_all(b",")?;
        }
        if !self.lines {
            out.write_all(b"\n")?;
        }
        safe::compact(&mut *out, &machine(trace))?;
        if self.lines {
            out.write_all(b"\n")?;
        }
        self.written += 1;
        Ok(())
    }

    fn end(&mut self, out: &mut dyn Write) -> io::Result<()> {
        if !self.lines {
            out.write_all(b"\n]}\n")?;
        }
        Ok(())
    }
}
