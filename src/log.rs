//! A machine's log as the readers hand it to the replay: its events, oldest first, and what
//! the export recorded besides them. The vocabulary between input and replay: readers make
//! it, merging joins it, the replay and the audit read it.

use std::fmt;
use std::sync::Arc;

use chrono::{DateTime, Utc};

use crate::event::Event;

/// One machine's events as read from one input (or merged from several), oldest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachineLog {
    pub machine: String,
    /// The file (or `-`) the log came from; the first of them for a merged machine.
    pub source: String,
    /// Every file the log was assembled from, the first being `source`; an event's
    /// [`Event::source`] indexes this list.
    pub sources: Vec<String>,
    /// The line the machine starts on in its file.
    pub line: usize,
    pub format: Format,
    /// Whether the input was YAML (the format names the JSON shape it has).
    pub yaml: bool,
    /// Oldest first; equal times keep the order metal-api stored them in.
    pub events: Vec<Event>,
    /// The exported last error event, which may or may not be among `events`.
    pub last_error_event: Option<Event>,
    pub recorded: RecordedFlags,
    /// What a machine export says about the machine besides its events.
    pub machine_info: MachineInfo,
    /// Whether messages carry metal-api's recorded verdicts (true for every export).
    pub annotated: bool,
    /// Lines of pasted text around the rows that are no rows (prose, blank lines).
    pub skipped_lines: u64,
    /// Events (by index) that begin a record after a gap in the machine's other records:
    /// replayed as the oldest row of a log is.
    pub seams: Vec<usize>,
    /// The times of a raw stream's gap markers, oldest first: the machine's events before
    /// each were lost, so the first event at or after it begins at a seam.
    pub gaps: Vec<DateTime<Utc>>,
}

impl MachineLog {
    /// A log read from `source` with nothing recorded besides its events.
    pub fn new(machine: String, source: &str, line: usize, format: Format) -> MachineLog {
        MachineLog {
            machine,
            source: source.to_string(),
            sources: vec![source.to_string()],
            line,
            format,
            yaml: false,
            events: Vec::new(),
            last_error_event: None,
            recorded: RecordedFlags::default(),
            machine_info: MachineInfo::default(),
            annotated: true,
            skipped_lines: 0,
            seams: Vec::new(),
            gaps: Vec::new(),
        }
    }

    /// The time a record's flags describe the machine at: its newest event or its
    /// `last_event_time`, whichever is later.
    pub fn as_of(&self) -> Option<DateTime<Utc>> {
        let newest = self.events.last().map(|e| e.time);
        newest.max(self.recorded.last_event_time)
    }

    /// The time of the newest event read for the machine (the exported last error event
    /// included), or of the newest event metal-api received (its `last_event_time`, which
    /// may be an event it did not store) where that is later: the data's own clock.
    pub fn newest_event(&self) -> Option<DateTime<Utc>> {
        let last_error = self.last_error_event.as_ref().map(|e| e.time);
        self.events
            .last()
            .map(|e| e.time)
            .max(last_error)
            .max(self.recorded.last_event_time)
    }

    /// The machine as it was at `cut`: events after it left out, and what the export said
    /// of a later time forgotten (the replay works it out again from the events).
    pub fn as_it_was_at(&mut self, cut: DateTime<Utc>) {
        self.events.retain(|e| e.time <= cut);
        let kept = self.events.len();
        self.seams.retain(|&i| i < kept);
        self.gaps.retain(|&g| g <= cut);
        if self.last_error_event.as_ref().is_some_and(|e| e.time > cut) {
            self.last_error_event = None;
        }
        let later = |t: Option<DateTime<Utc>>| t.is_some_and(|t| t > cut);
        let r = &mut self.recorded;
        if later(r.last_event_time) {
            r.last_event_time = None;
        }
        for flag in [&mut r.crash_loop, &mut r.failed_machine_reclaim] {
            if flag.is_some_and(|f| later(f.as_of)) {
                *flag = None;
            }
        }
        if later(r.liveliness_as_of) {
            r.liveliness = None;
        }
        if later(self.machine_info.allocated_as_of) {
            self.machine_info.allocated = None;
        }
        // A BMC reported after `cut` is not known as it was then: its types go unjudged.
        let bmc = self.machine_info.bmc.as_deref();
        if bmc.is_some_and(|b| matches!(b.last_updated, BmcUpdated::At(t) if t > cut)) {
            self.machine_info.bmc = None;
        }
    }

    /// The shape the machine was read in: its format, and whether it came as YAML.
    pub fn shape(&self) -> Shape {
        Shape {
            format: self.format,
            yaml: self.yaml,
        }
    }
}

/// A format as read: JSON's shape, or the same shape written as YAML (`list-json`,
/// `list-yaml`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Shape {
    pub format: Format,
    pub yaml: bool,
}

impl Shape {
    /// A shape read as JSON (or a format that has no YAML twin).
    pub fn of(format: Format) -> Shape {
        Shape {
            format,
            yaml: false,
        }
    }

    /// The name in output: `list-json`, or `list-yaml`.
    pub fn name(self) -> &'static str {
        self.format.name_in(self.yaml)
    }
}

/// A flag an export recorded, and the time it held at (see [`MachineLog::as_of`]): events
/// newer than that are replayed on top of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordedFlag {
    pub value: bool,
    pub as_of: Option<DateTime<Utc>>,
}

/// metal-api's liveliness of a machine (`Alive`, `Dead`, `Unknown`), as its container holds it
/// and an export says it; `Other` keeps a value metal-api does not set, as it was written.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Liveliness {
    Alive,
    Dead,
    Unknown,
    Other(Box<str>),
}

impl Liveliness {
    /// metal-api's spelling (the text as written for `Other`).
    pub fn name(&self) -> &str {
        match self {
            Liveliness::Alive => "Alive",
            Liveliness::Dead => "Dead",
            Liveliness::Unknown => "Unknown",
            Liveliness::Other(text) => text,
        }
    }
}

impl From<&str> for Liveliness {
    fn from(name: &str) -> Self {
        match name {
            "Alive" => Liveliness::Alive,
            "Dead" => Liveliness::Dead,
            "Unknown" => Liveliness::Unknown,
            other => Liveliness::Other(other.into()),
        }
    }
}

impl From<String> for Liveliness {
    fn from(name: String) -> Self {
        Liveliness::from(name.as_str())
    }
}

/// By name, as the text was ordered before it had a type (`--sort-by liveliness`).
impl Ord for Liveliness {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.name().cmp(other.name())
    }
}

impl PartialOrd for Liveliness {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// The container fields an export recorded besides the log.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordedFlags {
    pub last_event_time: Option<DateTime<Utc>>,
    pub crash_loop: Option<RecordedFlag>,
    pub failed_machine_reclaim: Option<RecordedFlag>,
    /// metal-api's liveliness as exported (`Alive`, `Dead`, `Unknown`), where it was.
    pub liveliness: Option<Liveliness>,
    /// The time the exported liveliness describes the machine at (its record's
    /// [`MachineLog::as_of`]).
    pub liveliness_as_of: Option<DateTime<Utc>>,
}

impl RecordedFlags {
    /// Nothing recorded (the default, usable in a `static`).
    pub const NONE: RecordedFlags = RecordedFlags {
        last_event_time: None,
        crash_loop: None,
        failed_machine_reclaim: None,
        liveliness: None,
        liveliness_as_of: None,
    };
}

/// What a machine export (describe, list, v2) says about a machine besides its events.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MachineInfo {
    /// Whether the machine is allocated: `None` where the input does not say.
    pub allocated: Option<bool>,
    /// The time `allocated` describes the machine at (its record's [`MachineLog::as_of`]).
    pub allocated_as_of: Option<DateTime<Utc>>,
    /// Whether the machine object came without any event container.
    pub no_event_container: bool,
    /// Where the machine is, and who has it, where the export says.
    pub place: Option<Arc<Place>>,
    /// Whether a v1 machine object (`metalctl machine list` or `describe`) was read of it.
    pub machine_object: bool,
    /// Whether a machine object said its partition (`partition`, `null` or one): what
    /// no-partition is judged by.
    pub says_partition: bool,
    /// The machine's BMC, where a `metalctl machine ipmi` export said (its `ipmi` object).
    pub bmc: Option<Arc<Bmc>>,
}

/// What metal-api's BMC issues read of a machine's `ipmi` object: never its user or password.
/// A member that is absent, `null` or no text is empty, as Go leaves a field it did not read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bmc {
    pub address: String,
    pub mac: String,
    pub last_updated: BmcUpdated,
}

/// When metal-hammer or metal-bmc last reported the BMC (`ipmi.last_updated`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum BmcUpdated {
    /// Absent, `null`, or Go's zero time (`0001-01-01T00:00:00Z`): never reported.
    #[default]
    Never,
    At(DateTime<Utc>),
    /// Text that is no time: the type that reads it is not judged.
    Unreadable,
}

/// Where a machine is in the fleet and who has it, as its machine object says: metalctl's
/// partition, rack and size, and its allocation's hostname, project, role and image.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Place {
    pub partition: Option<String>,
    pub rack: Option<String>,
    pub size: Option<String>,
    pub hostname: Option<String>,
    pub project: Option<String>,
    pub role: Option<String>,
    pub image: Option<String>,
    /// The machine's `state.value`: `LOCKED`, `RESERVED`, or empty for neither.
    pub state: Option<String>,
    /// The tags metal-metrics-exporter reads of an allocated machine: its cluster's id and
    /// the primary ASN it announces.
    pub cluster: Option<String>,
    pub primary_asn: Option<String>,
    /// The ASNs of the allocation's networks (`allocation.networks[].asn`), those that are
    /// not 0; an ASN that is no whole number below 2³² (metal-api holds a `uint32`) is left out.
    pub asns: Vec<u32>,
}

impl Place {
    /// Whether the export said anything of it. The ASNs alone say neither where the machine
    /// is nor who has it (a firewall says its role too), and only the audit reads them: a
    /// place is there or not whether they were read.
    pub fn is_empty(&self) -> bool {
        let Place {
            partition,
            rack,
            size,
            hostname,
            project,
            role,
            image,
            state,
            cluster,
            primary_asn,
            asns: _,
        } = self;
        [
            partition,
            rack,
            size,
            hostname,
            project,
            role,
            image,
            state,
            cluster,
            primary_asn,
        ]
        .iter()
        .all(|field| field.is_none())
    }

    /// The value of one of the dimensions a fleet is cut by.
    pub fn of(&self, dimension: Dimension) -> Option<&str> {
        match dimension {
            Dimension::Partition => self.partition.as_deref(),
            Dimension::Rack => self.rack.as_deref(),
            Dimension::Size => self.size.as_deref(),
        }
    }
}

/// The dimensions metalctl cuts a fleet by (`--partition`, `--rack`, `--size`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Dimension {
    Partition,
    Rack,
    Size,
}

impl Dimension {
    /// Every dimension, in output's order.
    pub const ALL: [Dimension; 3] = [Dimension::Partition, Dimension::Rack, Dimension::Size];

    /// The name in output and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Dimension::Partition => "partition",
            Dimension::Rack => "rack",
            Dimension::Size => "size",
        }
    }
}

/// The input formats fsmlog reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Format {
    /// `metalctl machine logs ID -o json` (an event array, maybe a `Recent last error` block).
    LogsJson,
    /// `metalctl machine describe ID -o json` (one machine object).
    DescribeJson,
    /// `metalctl machine list -o json` (an array of machine objects).
    ListJson,
    /// metal-api's `GET /v1/machine/{id}/event` response (`{log, last_error_event, …}`).
    EventApi,
    /// metal-api's stored containers, a dump of the event table (one object or an array).
    ContainerDump,
    /// The v2 API's machines (`uuid`, `recentProvisioningEvents`; camelCase or snake_case).
    V2Json,
    /// A raw event stream, one `{"machine", "time", "event", "message"}` a line, any order.
    Ndjson,
    /// The table `metalctl machine logs ID` prints (also `-o wide`, `-o markdown`).
    Table,
}

impl Format {
    /// The name used in `--format` and in JSON output.
    pub fn name(self) -> &'static str {
        self.name_in(false)
    }

    /// The name in output for this shape read from JSON or from YAML.
    pub fn name_in(self, yaml: bool) -> &'static str {
        match (self, yaml) {
            (Format::LogsJson, false) => "logs-json",
            (Format::LogsJson, true) => "logs-yaml",
            (Format::DescribeJson, false) => "describe-json",
            (Format::DescribeJson, true) => "describe-yaml",
            (Format::ListJson, false) => "list-json",
            (Format::ListJson, true) => "list-yaml",
            (Format::EventApi, false) => "event-api",
            (Format::EventApi, true) => "event-api-yaml",
            (Format::ContainerDump, false) => "container-dump",
            (Format::ContainerDump, true) => "container-dump-yaml",
            (Format::V2Json, false) => "v2-json",
            (Format::V2Json, true) => "v2-yaml",
            (Format::Ndjson, _) => "ndjson",
            (Format::Table, _) => "table",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::Liveliness;

    #[test]
    fn liveliness_keeps_its_text_and_orders_by_it() {
        for name in ["Alive", "Dead", "Unknown", "", "alive", "<b>x</b>"] {
            assert_eq!(Liveliness::from(name).name(), name);
        }
        assert_eq!(Liveliness::from("Dead"), Liveliness::Dead);
        assert_eq!(Liveliness::from("alive"), Liveliness::Other("alive".into()));
        // As `Option<String>` sorted before the type: "" < "Alive" < "Dead" < "Unknown" < "x".
        let mut sorted: Vec<Liveliness> = ["x", "Unknown", "", "Dead", "Alive"]
            .into_iter()
            .map(Liveliness::from)
            .collect();
        sorted.sort();
        let names: Vec<&str> = sorted.iter().map(Liveliness::name).collect();
        assert_eq!(names, ["", "Alive", "Dead", "Unknown", "x"]);
    }
}
