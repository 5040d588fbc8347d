//! The JSON exports: metalctl's `machine logs -o json` (with its `Recent last error`
//! trailer), `machine describe -o json` and `machine list -o json`, metal-api's
//! `GET /v1/machine/{id}/event` response and event-table dump, and the v2 API's machines.
//! Arrays are read one element at a time.

use std::cell::Cell;
use std::io::BufRead;
use std::sync::Mutex;

use super::raw::{LogEvents, MachineParts, RawEvent, RawItem, convert_event};
use super::simd;
use super::{Batch, FileContext, Format, InputError, MachineLog, NotALog, Record};
use crate::event::Event;
use crate::input::into_time_order;
use crate::jsonsplit::{Position, SplitError, Splitter, element_lines_at, for_each_element_fast};
use crate::skim::skim;

/// Reads one JSON file; `forced` is the format the user named, if any.
pub(crate) fn read(
    reader: impl BufRead,
    ctx: &FileContext,
    forced: Option<Format>,
    sink: &mut dyn FnMut(Record),
) -> Result<(), NotALog> {
    let mut splitter = Splitter::new(reader);
    let result = match splitter.skip_whitespace() {
        Ok(Some(b'[')) => read_array(&mut splitter, ctx, forced, sink),
        Ok(Some(b'{')) => read_object(&mut splitter, ctx, forced, sink),
        Ok(Some(_)) => {
            return Err(NotALog(format!(
                "expected {} JSON, found something else",
                forced.map_or("metalctl", |f| f.name())
            )));
        }
        Ok(None) => {
            sink(Record::Error(InputError::at(
                &ctx.path,
                0,
                "the file is empty",
            )));
            return Ok(());
        }
        Err(err) => Err(err),
    };
    match result {
        Ok(outcome) => outcome,
        Err(err) => {
            sink(Record::Error(split_error(&ctx.path, err)));
            Ok(())
        }
    }
}

fn split_error(path: &str, err: SplitError) -> InputError {
    match err {
        SplitError::Io(err) => InputError::at(path, 0, format!("cannot read: {err}")),
        SplitError::Syntax {
            line,
            column,
            message,
        } => InputError {
            path: path.to_string(),
            line,
            column,
            message: format!("invalid JSON: {message}"),
        },
    }
}

/// Turns a serde error inside an element into one that names the line in the file.
fn element_error(path: &str, start: Position, err: &serde_json::Error, what: &str) -> InputError {
    let (line, column) = if err.line() <= 1 {
        (start.line, start.column + err.column().saturating_sub(1))
    } else {
        (start.line + err.line() - 1, err.column())
    };
    let detail = err.to_string();
    // serde appends its own position, which is relative to the element: drop it.
    let detail = match detail.rfind(" at line ") {
        Some(cut) => detail[..cut].to_string(),
        None => detail,
    };
    InputError {
        path: path.to_string(),
        line,
        column,
        message: format!("invalid {what}: {detail}"),
    }
}

/// The outcome of a read that got as far as the JSON structure allowed.
type Outcome = Result<(), NotALog>;

fn read_array<R: BufRead>(
    splitter: &mut Splitter<R>,
    ctx: &FileContext,
    forced: Option<Format>,
    sink: &mut dyn FnMut(Record),
) -> Result<Outcome, SplitError> {
    // The first element that parses decides between an event array and an array of
    // machines, unless the user forced the format. Machines are handed on in batches of raw
    // elements, so that parsing them can run on every core while this thread reads on.
    let mut events_array = forced.map(|f| f == Format::LogsJson);
    let mut log_events = LogEvents::default();
    let mut pending = PendingEvents::default();
    // simd-json writes into what it parses: the element that decides the array's kind is
    // parsed from a copy.
    let mut scratch = Vec::new();
    let mut not_a_log = false;
    let ids_only = ctx.options.ids_only;
    let mut batch = ElementBatch::new(&ctx.path, forced, ids_only);
    // Set once the array is known to hold machines or events: it may then be cut at its
    // element lines (see `jsonsplit::indented_elements`).
    let fast = Cell::new(forced.is_some());
    let split = for_each_element_fast(splitter, &fast, |bytes, start| {
        if not_a_log {
            return Ok(());
        }
        if events_array == Some(false) {
            batch.push(bytes, start);
            if batch.is_full() {
                let fresh = ElementBatch::new(&ctx.path, forced, ids_only);
                let full = std::mem::replace(&mut batch, fresh);
                sink(Record::Batch(Batch::Json(full)));
            }
            return Ok(());
        }
        if events_array == Some(true) {
            pending.push(bytes, start);
            if pending.is_full() {
                pending.parse_into(&mut log_events, &ctx.path, sink);
            }
            return Ok(());
        }
        scratch.clear();
        scratch.extend_from_slice(bytes);
        let item = match simd::parse::<RawItem>(&mut scratch) {
            Ok(item) => item,
            Err(_) => match parse_element(bytes, start, &ctx.path, sink) {
                Some(item) => item,
                None => return Ok(()),
            },
        };
        // A bare machine object (an id, no events) is a machine without an event container.
        let kind = item.element_kind();
        let is_events = match events_array {
            Some(decided) => decided,
            None if kind.is_none() => {
                not_a_log = true;
                return Ok(());
            }
            None => *events_array.insert(kind == Some(Format::LogsJson)),
        };
        if is_events {
            log_events.push(item, &ctx.path, start.line, sink);
        } else {
            batch.format = kind.map(array_format);
            batch.push(bytes, start);
        }
        fast.set(true);
        Ok(())
    });
    pending.parse_into(&mut log_events, &ctx.path, sink);
    if let Err(err) = split {
        // What was read before the damage is still reported, then the damage is named.
        match events_array {
            Some(true) if !log_events.events.is_empty() => {
                sink(Record::Machine(events_log(ctx, log_events.events, None)))
            }
            Some(false) if !batch.is_empty() => sink(Record::Batch(Batch::Json(batch))),
            _ => {}
        }
        return Err(err);
    }
    if not_a_log {
        return Ok(Err(NotALog(
            "a JSON array whose elements are neither events nor machines".to_string(),
        )));
    }
    if events_array == Some(false) {
        if !batch.is_empty() {
            sink(Record::Batch(Batch::Json(batch)));
        }
        expect_end(splitter, ctx, sink)?;
        return Ok(Ok(()));
    }
    // An event array, or an empty array (a machine without events): metalctl's `Recent last
    // error` block may follow. An array whose every event was bad is no machine: its errors
    // say why.
    let last_error = read_trailer(splitter, ctx, sink)?;
    if log_events.is_a_machine(last_error.is_some()) {
        sink(Record::Machine(events_log(
            ctx,
            log_events.events,
            last_error,
        )));
    }
    Ok(Ok(()))
}

/// The machine of a `machine logs -o json` file.
fn events_log(ctx: &FileContext, mut events: Vec<Event>, last_error: Option<Event>) -> MachineLog {
    into_time_order(&mut events, true);
    let mut log = MachineLog::new(ctx.machine.clone(), &ctx.path, 1, Format::LogsJson);
    log.events = events;
    log.last_error_event = last_error;
    log
}

/// A machine object in an array is a `list-json` element, whatever its own shape says.
fn array_format(format: Format) -> Format {
    match format {
        Format::DescribeJson => Format::ListJson,
        other => other,
    }
}

/// The events of a `machine logs -o json` array after the first, held raw and parsed
/// together: one simd-json pass over them all costs far less than a serde_json parse of each.
#[derive(Default)]
struct PendingEvents {
    /// The elements joined into one JSON array, not closed yet.
    bytes: Vec<u8>,
    /// Each element's range in `bytes` and its start in the file.
    elements: Vec<(usize, usize, Position)>,
}

impl PendingEvents {
    fn push(&mut self, element: &[u8], start: Position) {
        self.bytes
            .push(if self.elements.is_empty() { b'[' } else { b',' });
        let begin = self.bytes.len();
        self.bytes.extend_from_slice(element);
        self.elements.push((begin, self.bytes.len(), start));
    }

    fn is_full(&self) -> bool {
        self.bytes.len() >= BATCH_BYTES
    }

    /// Parses the events held into `events`, in order; when any is bad, each is parsed on
    /// its own by serde_json, which names the line and what is wrong.
    fn parse_into(&mut self, events: &mut LogEvents, path: &str, sink: &mut dyn FnMut(Record)) {
        if self.elements.is_empty() {
            return;
        }
        self.bytes.push(b']');
        let (kept, bad) = (events.events.len(), events.bad);
        events.events.reserve(self.elements.len());
        // What pushing the events names is held back until the whole array has parsed.
        let mut held = Vec::new();
        let mut taken = 0;
        let mut scratch = self.bytes.clone();
        let each = |item: RawItem| {
            let line = self.elements.get(taken).map_or(0, |e| e.2.line);
            taken += 1;
            events.push(item, path, line, &mut |r| held.push(r));
        };
        let parsed = simd::parse_seed(&mut scratch, EachElement(each));
        if parsed.is_ok() && taken == self.elements.len() {
            held.into_iter().for_each(&mut *sink);
        } else {
            events.events.truncate(kept);
            events.bad = bad;
            for &(begin, end, start) in &self.elements {
                let bytes = &self.bytes[begin..end];
                if let Some(item) = parse_element(bytes, start, path, sink) {
                    events.push(item, path, start.line, sink);
                }
            }
        }
        self.bytes.clear();
        self.elements.clear();
    }
}

/// Hands each element of a JSON array to a closure as it is parsed, rather than collecting
/// them: an array of events is hundreds of bytes per element, a `RawItem` more.
struct EachElement<F>(F);

impl<'de, F: FnMut(RawItem<'de>)> serde::de::DeserializeSeed<'de> for EachElement<F> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, parser: D) -> Result<(), D::Error> {
        parser.deserialize_seq(self)
    }
}

impl<'de, F: FnMut(RawItem<'de>)> serde::de::Visitor<'de> for EachElement<F> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an array of events")
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        while let Some(item) = seq.next_element::<RawItem<'de>>()? {
            (self.0)(item);
        }
        Ok(())
    }
}

/// How many bytes of raw elements a batch collects before it is handed on.
const BATCH_BYTES: usize = 1 << 20;

/// Raw machine elements of one array, not parsed yet: the unit of parallel work for a large
/// export. [`ElementBatch::decode`] turns them into records.
#[derive(Debug)]
pub struct ElementBatch {
    path: String,
    forced: Option<Format>,
    /// Machines without their events (see [`InputOptions::ids_only`]).
    ids_only: bool,
    /// The format of the array's machines, as its first element showed.
    pub format: Option<Format>,
    /// Whether the elements were converted from YAML.
    pub yaml: bool,
    bytes: Vec<u8>,
    /// Each element's end in `bytes` and its start in the file.
    elements: Vec<(usize, Position)>,
}

/// Batch buffers decoded and given back, for the next batches: a fresh megabyte for every
/// batch would be fresh pages the kernel clears first.
static SPENT: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

/// A buffer given back by a decoded batch, or a new one.
fn spent_buffer() -> Vec<u8> {
    SPENT
        .lock()
        .ok()
        .and_then(|mut spent| spent.pop())
        .unwrap_or_default()
}

impl Drop for ElementBatch {
    fn drop(&mut self) {
        let mut bytes = std::mem::take(&mut self.bytes);
        if bytes.capacity() == 0 {
            return;
        }
        bytes.clear();
        if let Ok(mut spent) = SPENT.lock() {
            // As many as can be in flight at once; more would only hold memory.
            if spent.len() < 2 * rayon::current_num_threads().max(1) + 2 {
                spent.push(bytes);
            }
        }
    }
}

impl ElementBatch {
    fn new(path: &str, forced: Option<Format>, ids_only: bool) -> ElementBatch {
        ElementBatch {
            path: path.to_string(),
            forced,
            ids_only,
            format: forced,
            yaml: false,
            // Allocated at the first element: a file of events never needs it.
            bytes: Vec::new(),
            elements: Vec::new(),
        }
    }

    fn push(&mut self, element: &[u8], start: Position) {
        if self.bytes.capacity() == 0 {
            self.bytes = spent_buffer();
            self.bytes.reserve(BATCH_BYTES + (BATCH_BYTES >> 2));
        }
        self.bytes.extend_from_slice(element);
        self.elements.push((self.bytes.len(), start));
    }

    fn is_full(&self) -> bool {
        self.bytes.len() >= BATCH_BYTES
    }

    /// Whether the batch holds no element.
    pub fn is_empty(&self) -> bool {
        self.elements.is_empty()
    }

    /// How many bytes of input the batch holds.
    pub fn len_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// Parses every element into a machine, or names what is wrong with it.
    pub fn decode(&self, sink: &mut dyn FnMut(Record)) {
        let mut begin = 0;
        // simd-json parses in place; the batch keeps the original for error positions.
        let mut scratch = Vec::new();
        let mut skimming = true;
        for &(end, start) in &self.elements {
            let bytes = &self.bytes[begin..end];
            begin = end;
            // Only what is read is parsed: a machine's hardware is most of its bytes. Where
            // skimming does not pay (the machines hold little else than events, or are not
            // pretty-printed) the batch's other machines are parsed whole.
            skimming = skimming
                && skim(bytes, RawItem::member, &mut scratch)
                && scratch.len() < bytes.len() / 5 * 4;
            if !skimming {
                scratch.clear();
                scratch.extend_from_slice(bytes);
            }
            let parsed = simd::parse::<RawItem>(&mut scratch);
            let item = match parsed {
                Ok(item) => item,
                // serde_json says precisely where and why; should it accept what simd-json
                // did not, its reading stands.
                Err(_) => match parse_element(bytes, start, &self.path, sink) {
                    Some(item) => item,
                    None => continue,
                },
            };
            match (item.into_machine(self.format), self.forced) {
                (Some(parts), Some(forced)) if array_format(parts.format) != forced => {
                    sink(Record::Error(InputError::at(
                        &self.path,
                        start.line,
                        format!(
                            "expected {forced} JSON, but this element is {}",
                            array_format(parts.format)
                        ),
                    )))
                }
                (Some(mut parts), _) => {
                    parts.format = array_format(parts.format);
                    if let Some(machine) = machine_from_parts(
                        parts,
                        bytes,
                        start,
                        &self.path,
                        None,
                        self.ids_only,
                        sink,
                    ) {
                        sink(Record::Machine(machine));
                    }
                }
                (None, _) => sink(Record::Error(InputError::at(
                    &self.path,
                    start.line,
                    "array element is not a machine (no `events`, `log` or `recentProvisioningEvents`)",
                ))),
            }
        }
    }
}

/// Parses one array element; a bad one is named and skipped (`None`).
fn parse_element<'a>(
    bytes: &'a [u8],
    start: Position,
    path: &str,
    sink: &mut dyn FnMut(Record),
) -> Option<RawItem<'a>> {
    match serde_json::from_slice(bytes) {
        Ok(item) => Some(item),
        Err(err) => {
            sink(Record::Error(element_error(
                path,
                start,
                &err,
                "array element",
            )));
            None
        }
    }
}

fn read_object<R: BufRead>(
    splitter: &mut Splitter<R>,
    ctx: &FileContext,
    forced: Option<Format>,
    sink: &mut dyn FnMut(Record),
) -> Result<Outcome, SplitError> {
    let mut bytes = Vec::new();
    let start = splitter.read_value(&mut bytes)?;
    // As in batches: simd-json on a copy, serde_json to explain a failure.
    let mut scratch = bytes.clone();
    let item = match simd::parse::<RawItem>(&mut scratch) {
        Ok(item) => item,
        Err(_) => match serde_json::from_slice(&bytes) {
            Ok(item) => item,
            Err(err) => {
                sink(Record::Error(element_error(&ctx.path, start, &err, "JSON")));
                return Ok(Ok(()));
            }
        },
    };
    let Some(parts) = item.into_machine(None) else {
        if forced.is_some() {
            sink(Record::Error(InputError::at(
                &ctx.path,
                start.line,
                "expected a machine object (with `events`, `log` or `recentProvisioningEvents`)",
            )));
            return Ok(Ok(()));
        }
        return Ok(Err(NotALog(
            "a JSON object with none of `events`, `log`, `recentProvisioningEvents`".to_string(),
        )));
    };
    if let Some(forced) = forced.filter(|f| *f != parts.format && *f != Format::ListJson) {
        sink(Record::Error(InputError::at(
            &ctx.path,
            start.line,
            format!("expected {forced} JSON, but the object is {}", parts.format),
        )));
        return Ok(Ok(()));
    }
    if let Some(machine) = machine_from_parts(
        parts,
        &bytes,
        start,
        &ctx.path,
        Some(&ctx.machine),
        ctx.options.ids_only,
        sink,
    ) {
        sink(Record::Machine(machine));
    }
    expect_end(splitter, ctx, sink)?;
    Ok(Ok(()))
}

/// Builds a machine from its parts (see [`MachineParts::build`]), finding a bad event's line
/// by scanning the element again.
fn machine_from_parts(
    parts: MachineParts,
    bytes: &[u8],
    start: Position,
    path: &str,
    file_machine: Option<&str>,
    ids_only: bool,
    sink: &mut dyn FnMut(Record),
) -> Option<MachineLog> {
    let log_path = parts.log_path;
    let mut event_lines: Option<Vec<usize>> = None;
    let mut line_of = |index: usize| -> usize {
        // Only a bad event needs its own line, so the element is scanned again only then.
        let lines = event_lines.get_or_insert_with(|| {
            element_lines_at(bytes, log_path)
                .unwrap_or_default()
                .into_iter()
                .map(|l| l + start.line - 1)
                .collect()
        });
        lines.get(index).copied().unwrap_or(start.line)
    };
    parts.build(path, start.line, file_machine, ids_only, &mut line_of, sink)
}

/// After a `machine logs -o json` array: metalctl's `Recent last error (… ago):` block.
fn read_trailer<R: BufRead>(
    splitter: &mut Splitter<R>,
    ctx: &FileContext,
    sink: &mut dyn FnMut(Record),
) -> Result<Option<Event>, SplitError> {
    if splitter.skip_whitespace()?.is_none() {
        return Ok(None);
    }
    let line = splitter.position().line;
    let mut text = Vec::new();
    splitter.read_line(&mut text)?;
    if !text.starts_with(b"Recent last error") {
        sink(Record::Error(InputError::at(
            &ctx.path,
            line,
            "unexpected text after the JSON array (expected `Recent last error (… ago):`)",
        )));
        return Ok(None);
    }
    let mut bytes = Vec::new();
    let start = splitter.read_value(&mut bytes)?;
    let event = match serde_json::from_slice::<RawEvent>(&bytes) {
        Ok(raw) => match convert_event(raw) {
            Ok(event) => Some(event.at_line(start.line)),
            Err(message) => {
                sink(Record::Error(InputError::at(
                    &ctx.path, start.line, message,
                )));
                None
            }
        },
        Err(err) => {
            sink(Record::Error(element_error(
                &ctx.path,
                start,
                &err,
                "last error event",
            )));
            None
        }
    };
    expect_end(splitter, ctx, sink)?;
    Ok(event)
}

fn expect_end<R: BufRead>(
    splitter: &mut Splitter<R>,
    ctx: &FileContext,
    sink: &mut dyn FnMut(Record),
) -> Result<(), SplitError> {
    if splitter.skip_whitespace()?.is_some() {
        let position = splitter.position();
        sink(Record::Error(InputError {
            path: ctx.path.clone(),
            line: position.line,
            column: position.column,
            message: "unexpected content after the JSON document".to_string(),
        }));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{InputOptions, read_reader};
    use super::*;

    fn event(name: &str, message: &str, second: u32) -> String {
        format!(
            "{{\n        \"event\": \"{name}\",\n        \"message\": \"{message}\",\n        \"time\": \"2025-01-01T00:00:0{second}Z\"\n    }}"
        )
    }

    /// A `machine logs -o json` file as metalctl prints it: newest first, four-space indent.
    fn logs_file(events: &[String], trailer: bool) -> String {
        let mut text = format!("[\n    {}\n]\n", events.join(",\n    "));
        if trailer {
            text.push_str("\nRecent last error (1m ago):\n\n{\n    \"event\": \"PXE Booting\",\n    \"message\": \"[unexpectedly received in state waiting]: x\",\n    \"time\": \"2025-01-01T00:00:09Z\"\n}\n");
        }
        text
    }

    fn read(text: &str) -> (Vec<MachineLog>, Vec<InputError>) {
        let (mut machines, mut errors) = (Vec::new(), Vec::new());
        read_reader(
            text.as_bytes(),
            "m.json",
            &InputOptions::default(),
            &mut |record| match record {
                Record::Machine(log) => machines.push(log),
                Record::Error(err) => errors.push(err),
                _ => {}
            },
        );
        (machines, errors)
    }

    /// Each event as (name, line), oldest first.
    fn lines(log: &MachineLog) -> Vec<(String, usize)> {
        let named = |e: &Event| (e.name.as_str().to_string(), e.line);
        log.events.iter().map(named).collect()
    }

    #[test]
    fn an_indented_event_array_keeps_every_line_and_the_last_error_after_it() {
        let events = [
            event("Waiting", "w", 3),
            event("Registering", "r", 2),
            event("PXE Booting", "p", 1),
        ];
        let (machines, errors) = read(&logs_file(&events, true));
        assert!(errors.is_empty(), "{errors:?}");
        let [log] = &machines[..] else {
            panic!("one machine expected, got {}", machines.len())
        };
        // Elements open on lines 2, 7 and 12; `]` is line 17, the block's heading line 19 and
        // its object opens on line 21.
        let want = [("PXE Booting", 12), ("Registering", 7), ("Waiting", 2)];
        let want: Vec<_> = want.iter().map(|(n, l)| (n.to_string(), *l)).collect();
        assert_eq!(lines(log), want);
        let last = log
            .last_error_event
            .as_ref()
            .expect("the last error is read");
        assert_eq!((last.name.as_str(), last.line), ("PXE Booting", 21));
        // The same array on one line is cut byte by byte: the same events.
        let compact: String = logs_file(&events, true)
            .replace("\n    ", "")
            .replace("\n]", "]");
        let (again, errors) = read(&compact);
        assert!(errors.is_empty(), "{errors:?}");
        let names: Vec<_> = lines(&again[0]).into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["PXE Booting", "Registering", "Waiting"]);
    }

    /// A `machine list -o json` element with what metal-api sends besides the events.
    fn machine(id: &str, allocated: bool, nested_id: bool) -> serde_json::Value {
        // Large enough that skimming pays, so that the skim is what reads it.
        let disks: Vec<_> = (0..40)
            .map(|i| serde_json::json!({"name": format!("/dev/sd{i}"), "size": i}))
            .collect();
        let mut hardware = serde_json::json!({
            "nics": [{"name": "eth0", "neighbors": [{"mac": "aa:bb", "events": {"log": []}}]}],
            "disks": disks,
        });
        if nested_id {
            hardware["id"] = "inner".into();
        }
        serde_json::json!({
            "allocation": if allocated { serde_json::json!({"name": "a", "image": {"id": "x"}}) } else { serde_json::Value::Null },
            "bios": {"vendor": "AMI", "version": "3.0a"},
            "events": {
                "crash_loop": false,
                "last_event_time": "2025-01-01T00:00:02Z",
                "log": [
                    {"event": "Waiting", "message": "[unexpectedly received in state waiting]: w", "time": "2025-01-01T00:00:02Z"},
                    {"event": "PXE Booting", "message": "p", "time": "2025-01-01T00:00:01Z"}
                ]
            },
            "hardware": hardware,
            "id": id,
            "liveliness": "Alive",
            "tags": ["a \"quoted\" tag", "line\nbreak"],
        })
    }

    /// What a reader makes of each machine, without the lines (which depend on the layout).
    fn seen(text: &str) -> Vec<String> {
        let (machines, errors) = read(text);
        assert!(errors.is_empty(), "{errors:?}");
        let show = |m: &MachineLog| {
            let events: Vec<_> = m
                .events
                .iter()
                .map(|e| (e.time, e.name.clone(), e.message.clone(), e.recorded_state))
                .collect();
            format!(
                "{} {:?} {:?} {events:?}",
                m.machine, m.machine_info, m.recorded
            )
        };
        machines.iter().map(show).collect()
    }

    #[test]
    fn a_pretty_list_skimmed_reads_as_the_same_list_parsed_whole() {
        let list = serde_json::Value::Array(vec![
            machine("m-1", true, false),
            machine("m-2", false, false),
            machine("m-3", true, true),
        ]);
        let compact = serde_json::to_string(&list).unwrap();
        let whole = seen(&compact);
        assert_eq!(whole.len(), 3);
        assert!(
            whole[0].starts_with("m-1 MachineInfo { allocated: Some(true)"),
            "{}",
            whole[0]
        );
        assert!(
            whole[1].starts_with("m-2 MachineInfo { allocated: Some(false)"),
            "{}",
            whole[1]
        );
        // Two-space indent as serde and jq print, four as metalctl does.
        let pretty = serde_json::to_string_pretty(&list).unwrap();
        assert_eq!(seen(&pretty), whole);
        assert_eq!(seen(&pretty.replace("\n  ", "\n    ")), whole);
    }

    #[test]
    fn a_bad_event_among_good_ones_is_named_at_its_line_and_the_rest_is_read() {
        let bad = "{\n        \"event\": {\"not\": \"a name\"},\n        \"time\": \"2025-01-01T00:00:02Z\"\n    }".to_string();
        let untimed = "{\n        \"event\": \"Waiting\"\n    }".to_string();
        let events = [
            event("Phoned Home", "h", 5),
            event("Waiting", "w", 4),
            bad,
            untimed,
            event("PXE Booting", "p", 1),
        ];
        let (machines, errors) = read(&logs_file(&events, false));
        let found: Vec<_> = errors.iter().map(|e| e.line).collect();
        // The bad element opens on line 12 and its bad name stands on line 13; the event
        // without a time opens on line 16.
        assert_eq!(found, [13, 16], "{errors:?}");
        assert!(
            errors[0].message.starts_with("invalid array element"),
            "{errors:?}"
        );
        assert_eq!(errors[1].message, "event without `time`");
        let want = [("PXE Booting", 19), ("Waiting", 7), ("Phoned Home", 2)];
        let want: Vec<_> = want.iter().map(|(n, l)| (n.to_string(), *l)).collect();
        assert_eq!(lines(&machines[0]), want);
    }
}
