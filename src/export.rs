//! Writes machines in every input format: the inverse of [`crate::input`], for the fleet
//! generator (`examples/gen_fleet.rs`) and for round-trip tests of the readers.

use std::collections::VecDeque;
use std::io::{self, Write};

use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};

use crate::event::{EventKind, format_time};
use crate::replay::{Container, StoredEvent};

/// The layouts the exporter writes; each is read back by one of the input formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// `metalctl machine logs ID -o json`, with the `Recent last error` block when there is one.
    LogsJson,
    /// `metalctl machine describe ID -o json`.
    DescribeJson,
    /// `metalctl machine list -o json`.
    ListJson,
    /// metal-api's `GET /v1/machine/{id}/event`.
    EventApi,
    /// metal-api's event table dump.
    ContainerDump,
    /// The v2 API's machines.
    V2Json,
    /// Raw events, one a line, oldest first.
    Ndjson,
    /// `metalctl machine logs ID` as printed.
    Table,
    /// `metalctl machine logs ID -o markdown`.
    Markdown,
    /// Tables of several machines under `==> ID.txt <==` headers.
    ConcatTable,
    /// `metalctl machine list -o yaml`: sigs.k8s.io/yaml's block style.
    ListYaml,
}

impl Layout {
    /// Every layout.
    pub const ALL: [Layout; 11] = [
        Layout::LogsJson,
        Layout::DescribeJson,
        Layout::ListJson,
        Layout::EventApi,
        Layout::ContainerDump,
        Layout::V2Json,
        Layout::Ndjson,
        Layout::Table,
        Layout::Markdown,
        Layout::ConcatTable,
        Layout::ListYaml,
    ];

    /// The layout's name, as the generator's `--format` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Layout::LogsJson => "logs-json",
            Layout::DescribeJson => "describe-json",
            Layout::ListJson => "list-json",
            Layout::EventApi => "event-api",
            Layout::ContainerDump => "container-dump",
            Layout::V2Json => "v2-json",
            Layout::Ndjson => "ndjson",
            Layout::Table => "table",
            Layout::Markdown => "markdown",
            Layout::ConcatTable => "concat-table",
            Layout::ListYaml => "list-yaml",
        }
    }

    /// The layout a name names.
    pub fn from_name(name: &str) -> Option<Layout> {
        Layout::ALL.into_iter().find(|l| l.name() == name)
    }

    /// Whether the layout holds one machine per file (the others hold a fleet).
    pub fn one_machine_per_file(self) -> bool {
        matches!(
            self,
            Layout::LogsJson
                | Layout::DescribeJson
                | Layout::EventApi
                | Layout::Table
                | Layout::Markdown
        )
    }

    /// The file extension for this layout.
    pub fn extension(self) -> &'static str {
        match self {
            Layout::Ndjson => "ndjson",
            Layout::Table | Layout::ConcatTable => "txt",
            Layout::Markdown => "md",
            Layout::ListYaml => "yaml",
            _ => "json",
        }
    }
}

/// Writes machines one at a time in one layout.
pub struct Exporter<W: Write> {
    layout: Layout,
    out: W,
    written: usize,
}

impl<W: Write> Exporter<W> {
    /// Starts a file in `layout`.
    pub fn new(layout: Layout, out: W) -> Self {
        Exporter {
            layout,
            out,
            written: 0,
        }
    }

    /// Writes one machine's container.
    pub fn machine(&mut self, id: &str, c: &Container) -> io::Result<()> {
        self.machine_with(id, c, &Map::new())
    }

    /// Writes one machine's container, with `details` (hardware, allocation, …) beside its
    /// events in the layouts that hold whole machine objects (describe, list); the other
    /// layouts have no place for them.
    pub fn machine_with(
        &mut self,
        id: &str,
        c: &Container,
        details: &Map<String, Value>,
    ) -> io::Result<()> {
        let first = self.written == 0;
        self.written += 1;
        let out = &mut self.out;
        match self.layout {
            Layout::LogsJson => {
                write_pretty(out, &log_json(&c.events))?;
                if let Some(e) = &c.last_error_event {
                    write!(out, "\nRecent last error (1h0m0s ago):\n\n")?;
                    write_pretty(out, &event_json(e))?;
                }
                Ok(())
            }
            Layout::DescribeJson => write_pretty(out, &describe_json(id, c, details)),
            Layout::EventApi => write_pretty(out, &event_block(c)),
            Layout::ListJson => array_item_pretty(out, first, &describe_json(id, c, details)),
            Layout::ContainerDump => array_item(out, first, &container_json(id, c)),
            Layout::V2Json => array_item(out, first, &v2_json(id, c)),
            Layout::Ndjson => {
                for e in c.events.iter().rev() {
                    let line = json!({
                        "machine": id,
                        "time": format_time(e.time),
                        "event": e.event.name(),
                        "message": &*e.message,
                    });
                    serde_json::to_writer(&mut *out, &line)?;
                    out.write_all(b"\n")?;
                }
                Ok(())
            }
            Layout::Table => write_table(out, c, false),
            Layout::Markdown => write_table(out, c, true),
            Layout::ConcatTable => {
                if !first {
                    out.write_all(b"\n")?;
                }
                writeln!(out, "==> {id}.txt <==")?;
                write_table(out, c, false)
            }
            Layout::ListYaml => {
                if first {
                    out.write_all(b"---\n")?;
                }
                let mut text = String::new();
                yaml_item(&mut text, 0, &describe_json(id, c, details));
                out.write_all(text.as_bytes())
            }
        }
    }

    /// Closes the file (the array of a fleet layout) and hands back the writer.
    pub fn finish(mut self) -> io::Result<W> {
        if matches!(
            self.layout,
            Layout::ListJson | Layout::ContainerDump | Layout::V2Json
        ) {
            if self.written == 0 {
                self.out.write_all(b"[")?;
            }
            self.out.write_all(b"\n]\n")?;
        }
        if self.layout == Layout::ListYaml && self.written == 0 {
            self.out.write_all(b"[]\n")?;
        }
        self.out.flush()?;
        Ok(self.out)
    }
}

/// JSON as metalctl prints it: indented by four spaces.
fn metalctl_json(value: &Value) -> io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut serializer = serde_json::Serializer::with_formatter(&mut buf, formatter);
    serde::Serialize::serialize(value, &mut serializer)?;
    Ok(buf)
}

fn write_pretty(out: &mut impl Write, value: &Value) -> io::Result<()> {
    out.write_all(&metalctl_json(value)?)?;
    out.write_all(b"\n")
}

/// One element of a top-level array, indented as metalctl indents it.
fn array_item_pretty(out: &mut impl Write, first: bool, value: &Value) -> io::Result<()> {
    out.write_all(if first { b"[\n    " } else { b",\n    " })?;
    let text = metalctl_json(value)?;
    for (i, line) in text.split(|&b| b == b'\n').enumerate() {
        if i > 0 {
            out.write_all(b"\n    ")?;
        }
        out.write_all(line)?;
    }
    Ok(())
}

/// One machine per line inside a JSON array, as database dumps and the v2 samples are.
fn array_item(out: &mut impl Write, first: bool, value: &Value) -> io::Result<()> {
    out.write_all(if first { b"[\n" } else { b",\n" })?;
    serde_json::to_writer(&mut *out, value)?;
    Ok(())
}

/// One item of a block sequence at `indent`, as sigs.k8s.io/yaml writes it (go-yaml v2):
/// keys sorted, a sequence in a mapping at its key's indent, empty collections as `[]` and
/// `{}`, strings quoted only where they would read as something else.
fn yaml_item(out: &mut String, indent: usize, value: &Value) {
    out.push_str(&" ".repeat(indent));
    out.push_str("- ");
    match value {
        Value::Object(map) if !map.is_empty() => yaml_mapping(out, indent + 2, map, true),
        Value::Array(items) if !items.is_empty() => {
            // go-yaml puts a nested sequence's first item on the dash's line.
            out.push('\n');
            for item in items {
                yaml_item(out, indent + 2, item);
            }
        }
        scalar => {
            out.push_str(&yaml_scalar(scalar));
            out.push('\n');
        }
    }
}

/// A mapping's keys at `indent`, the first on the current line when `inline` (after `- `).
fn yaml_mapping(out: &mut String, indent: usize, map: &Map<String, Value>, inline: bool) {
    for (i, (key, value)) in map.iter().enumerate() {
        if i > 0 || !inline {
            out.push_str(&" ".repeat(indent));
        }
        out.push_str(key);
        out.push(':');
        match value {
            Value::Object(inner) if !inner.is_empty() => {
                out.push('\n');
                yaml_mapping(out, indent + 2, inner, false);
            }
            Value::Array(items) if !items.is_empty() => {
                out.push('\n');
                for item in items {
                    yaml_item(out, indent, item);
                }
            }
            scalar => {
                out.push(' ');
                out.push_str(&yaml_scalar(scalar));
                out.push('\n');
            }
        }
    }
}

/// A scalar: plain where it reads back as the same string, else single-quoted, or
/// double-quoted (JSON's escapes are YAML's) where it holds what single quotes cannot.
fn yaml_scalar(value: &Value) -> String {
    let text = match value {
        Value::String(text) => text,
        Value::Array(_) => return "[]".to_string(),
        Value::Object(_) => return "{}".to_string(),
        other => return other.to_string(),
    };
    let printable = text.bytes().all(|b| (0x20..0x7f).contains(&b));
    if !printable {
        return Value::String(text.clone()).to_string();
    }
    let first_plain = text
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphanumeric() || b"/._(".contains(&b));
    let other_type = matches!(
        text.to_ascii_lowercase().as_str(),
        "null" | "~" | "true" | "false" | "yes" | "no" | "on" | "off"
    ) || text.parse::<f64>().is_ok();
    let plain = first_plain
        && !other_type
        && !text.contains(": ")
        && !text.contains(" #")
        && !text.ends_with([':', ' ']);
    if plain {
        text.clone()
    } else {
        format!("'{}'", text.replace('\'', "''"))
    }
}

fn event_json(e: &StoredEvent) -> Value {
    json!({"event": e.event.name(), "message": &*e.message, "time": format_time(e.time)})
}

fn log_json(events: &VecDeque<StoredEvent>) -> Value {
    Value::Array(events.iter().map(event_json).collect())
}

fn time_json(t: Option<DateTime<Utc>>) -> Value {
    t.map_or(Value::Null, |t| Value::String(format_time(t)))
}

fn event_block(c: &Container) -> Value {
    json!({
        "log": log_json(&c.events),
        "last_event_time": time_json(c.last_event_time),
        "last_error_event": c.last_error_event.as_ref().map_or(Value::Null, event_json),
        "crash_loop": c.crash_loop,
        "failed_machine_reclaim": c.failed_machine_reclaim,
    })
}

fn describe_json(id: &str, c: &Container, details: &Map<String, Value>) -> Value {
    let mut m = details.clone();
    m.insert("id".into(), json!(id));
    m.insert("name".into(), json!(id));
    m.insert("liveliness".into(), json!(c.liveliness.name()));
    m.insert("events".into(), event_block(c));
    Value::Object(m)
}

fn container_json(id: &str, c: &Container) -> Value {
    json!({
        "id": id,
        "liveliness": c.liveliness.name(),
        "events": log_json(&c.events),
        "last_event_time": time_json(c.last_event_time),
        "last_error_event": c.last_error_event.as_ref().map_or(Value::Null, event_json),
        "crash_loop": c.crash_loop,
        "failed_machine_reclaim": c.failed_machine_reclaim,
    })
}

/// The v2 API's enum spelling of an event.
fn v2_event_name(kind: EventKind) -> String {
    format!(
        "MACHINE_PROVISIONING_EVENT_TYPE_{}",
        kind.name().to_ascii_uppercase().replace(' ', "_")
    )
}

fn v2_json(id: &str, c: &Container) -> Value {
    let event = |e: &StoredEvent| json!({"time": format_time(e.time), "event": v2_event_name(e.event), "message": &*e.message});
    let mut recent = json!({
        "events": c.events.iter().map(event).collect::<Vec<_>>(),
        "lastEventTime": time_json(c.last_event_time),
    });
    if let Some(e) = &c.last_error_event {
        recent["lastErrorEvent"] = event(e);
    }
    if c.failed_machine_reclaim {
        recent["state"] = json!("MACHINE_PROVISIONING_EVENT_STATE_FAILED_RECLAIM");
    } else if c.crash_loop {
        recent["state"] = json!("MACHINE_PROVISIONING_EVENT_STATE_CRASHLOOP");
    }
    json!({"uuid": id, "recentProvisioningEvents": recent})
}

fn rfc1123(t: DateTime<Utc>) -> String {
    t.format("%a, %d %b %Y %H:%M:%S UTC").to_string()
}

fn write_table(out: &mut impl Write, c: &Container, markdown: bool) -> io::Result<()> {
    let rows = c
        .events
        .iter()
        .map(|e| (rfc1123(e.time), e.event.name(), &e.message));
    if markdown {
        writeln!(out, "| TIME | EVENT | MESSAGE |")?;
        writeln!(out, "|------|-------|---------|")?;
        for (time, event, message) in rows {
            writeln!(
                out,
                "| {time} | {event} | {} |",
                message.replace('|', "\\|")
            )?;
        }
    } else {
        writeln!(out, "{:<31} {:<20} MESSAGE", "TIME", "EVENT")?;
        for (time, event, message) in rows {
            writeln!(out, "{time:<31} {event:<20} {message}")?;
        }
    }
    if let Some(e) = &c.last_error_event {
        writeln!(out, "\nRecent last error (1h0m0s ago):\n")?;
        if markdown {
            writeln!(
                out,
                "| {} | {} | {} |",
                rfc1123(e.time),
                e.event.name(),
                e.message.replace('|', "\\|")
            )?;
        } else {
            writeln!(
                out,
                "{:<31} {:<20} {}",
                rfc1123(e.time),
                e.event.name(),
                e.message
            )?;
        }
    }
    Ok(())
}
